//! skillbundle: the release pipeline for schema-governed A2A skills.
//!
//! A vendor keeps one YAML manifest and a few JSON Schemas per skill; this library reads
//! them strictly, checks them, assembles and digests one Skill Interface Document per
//! skill (draft "schema interfaces", interface version 1.0) and writes a reproducible
//! bundle. It never prints: every check returns [`finding::Finding`]s, and the
//! `skillbundle` binary decides how to show them.
//!
//! The agent side is in the same crate: [`agent::Bundle::open`] verifies and loads a
//! bundle, [`agent`] serves it (Agent Card entries, describe_skill, invocation checks
//! returning the draft's [`interface::condition::ErrorObject`]s), and [`client`] has what
//! a client agent checks on a describe_skill response and before composing two skills.
//! Over the wire (feature `client`), `client::call` runs the draft's client procedure
//! against a live agent and `client::probe` checks an agent's conformance; both read
//! Tasks with [`client::final_task`] and name the requirement broken by its
//! [`client::clause::Clause`].
//!
//! The folders follow the draft's concepts and sides: [`wire`] (the byte forms), [`fs`],
//! [`schema`], [`interface`] (the vocabulary both sides share), [`crypto`], [`card`],
//! [`bundle`] (the format), [`agent`], [`client`], `registry` (feature `oci`), [`build`]
//! and [`release`] (the authoring side), `gateway` (feature `gateway`: a validating A2A
//! gateway in front of an agent), and `python` (feature `python`).

// Findings travel on cold error paths only; boxing them would cost clarity, not speed.
#![allow(clippy::result_large_err)]
// The library never prints: findings are data, and the binary renders them.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod build;
pub mod bundle;
pub mod card;
pub mod client;
pub mod crypto;
pub mod finding;
pub mod fs;
#[cfg(feature = "gateway")]
pub mod gateway;
pub mod interface;
#[cfg(feature = "python")]
pub mod python;
#[cfg(feature = "oci")]
pub mod registry;
pub mod release;
pub mod schema;
pub mod wire;
