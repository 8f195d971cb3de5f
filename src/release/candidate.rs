//! What the release rules read of a skill the workspace would publish.
//!
//! Why a module of its own: the build checks a skill and then runs the release rules on
//! it ([`crate::build::pipeline`]); the rules must not reach back into the build's own
//! types. A candidate is a borrowed view of exactly what the rules read: the skill's
//! Skill Interface Document (its `skill_id`, `skill_version` and Schema References,
//! draft "Skill Interface Document"), each schema's manifest field and source file (for
//! the finding's location), and the manifest that sets the versions (draft, "Schema
//! Evolution and Compatibility": the version a publisher must step).

use crate::fs::source_file::SourceFile;
use crate::interface::{Document, SchemaReference};
use std::path::Path;

/// One skill as the release rules see it.
#[derive(Debug, Clone)]
pub struct Candidate<'a> {
    /// The skill's manifest (`skill.yaml`), where a version finding points.
    pub manifest_path: &'a Path,
    /// The interface the skill would publish.
    pub interface: &'a Document,
    /// Its schemas, in the order the manifest declares them.
    pub schemas: Vec<CandidateSchema<'a>>,
}

/// One schema of a [`Candidate`], with where it was authored.
#[derive(Debug, Clone)]
pub struct CandidateSchema<'a> {
    /// The Schema Reference the skill would publish.
    pub reference: &'a SchemaReference,
    /// The schema's source file, for the line of a breaking change.
    pub source: &'a SourceFile,
    /// The manifest field that declared it (`input`, `output`, `supporting_records[0]`).
    pub field: &'a str,
    /// That field's JSON Pointer in the manifest (`/input`, `/supporting_records/0`).
    pub pointer: &'a str,
}
