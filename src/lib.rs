//! skillbundle: the release pipeline for schema-governed A2A skills.
//!
//! A vendor keeps one YAML manifest and a few JSON Schemas per skill; this library reads
//! them strictly, checks them, assembles and digests one Skill Interface Document per
//! skill (draft "schema interfaces", interface version 1.0) and writes a reproducible
//! bundle. It never prints: every check returns [`finding::Finding`]s, and the
//! `skillbundle` binary decides how to show them.
//!
//! The agent side is in the same crate: [`bundle::Bundle::open`] verifies and loads a
//! bundle, [`agent`] serves it (Agent Card entries, describe_skill, invocation checks
//! returning the draft's [`condition::ErrorObject`]s), and [`client`] has what a client
//! agent checks on a describe_skill response and before composing two skills. Over the
//! wire (feature `client`), [`call`] runs the draft's client procedure against a live
//! agent and [`probe`] checks an agent's conformance; both read Tasks with
//! [`final_task`] and name the requirement broken by its [`clause::Clause`].

// Findings travel on cold error paths only; boxing them would cost clarity, not speed.
#![allow(clippy::result_large_err)]

pub mod a2a;
pub mod agent;
pub mod agent_card;
pub mod atomic_file;
pub mod bundle;
#[cfg(feature = "client")]
pub mod call;
pub mod card_signature;
pub mod checked_skill;
pub mod clause;
pub mod client;
pub mod compat;
pub mod condition;
#[cfg(feature = "oci")]
pub mod credentials;
pub mod delegation;
pub mod digest;
#[cfg(feature = "oci")]
pub mod distribution;
pub mod evolution;
pub mod examples;
#[cfg(feature = "oci")]
pub mod fetch;
pub mod final_task;
pub mod finding;
#[cfg(feature = "gateway")]
pub mod gateway;
pub mod init;
pub mod interface;
pub mod interface_cache;
pub mod interface_schema;
pub mod inventory;
pub mod json;
pub mod jws;
pub mod keys;
pub mod ledger;
pub mod manifest;
pub mod operator_file;
pub mod pipeline;
pub mod pointer;
#[cfg(feature = "client")]
pub mod probe;
#[cfg(feature = "python")]
pub mod python;
#[cfg(feature = "oci")]
pub mod referrers;
#[cfg(feature = "oci")]
pub mod registry;
pub mod release;
pub mod release_files;
pub mod schema;
pub mod schema_bytes;
pub mod shared_schemas;
#[cfg(feature = "client")]
pub mod transport;
pub mod version;
pub mod workspace;
pub mod yaml;
