//! Checks on the domain schemas a skill delivers inline.
//!
//! The draft makes a Skill Interface Document invalid when one of its inline schemas is
//! not a valid draft 2020-12 schema, selects another dialect, refers to anything outside
//! itself, or exceeds a resource limit — and it requires `format` to be asserted when
//! instances are validated. Each concern is one module here; every check takes a
//! `&serde_json::Value` and returns [`Finding`](crate::finding::Finding)s whose location
//! carries only a JSON Pointer into that value, for the caller to map to file, line and
//! column.

pub mod pointer;

/// The JSON Schema dialect interface version 1.0 supports (its meta-schema URI).
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";
