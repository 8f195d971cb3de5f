//! skillbundle: the release pipeline for schema-governed A2A skills.
//!
//! A vendor keeps one YAML manifest and a few JSON Schemas per skill; this library reads
//! them strictly, checks them, assembles and digests one Skill Interface Document per
//! skill (draft "schema interfaces", interface version 1.0) and writes a reproducible
//! bundle. It never prints: every check returns [`finding::Finding`]s, and the
//! `skillbundle` binary decides how to show them.

// Findings travel on cold error paths only; boxing them would cost clarity, not speed.
#![allow(clippy::result_large_err)]

pub mod a2a;
pub mod bundle;
pub mod compat;
pub mod digest;
pub mod evolution;
pub mod finding;
pub mod interface;
pub mod interface_schema;
pub mod json;
pub mod jws;
pub mod keys;
pub mod ledger;
pub mod manifest;
pub mod pipeline;
pub mod pointer;
pub mod version;
pub mod workspace;
pub mod yaml;
