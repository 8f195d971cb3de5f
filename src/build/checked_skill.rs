//! A skill as its own checks leave it: what the pipeline produces, and what the release
//! rules ([`crate::release::rules`]) read through a [`Candidate`] view. The types live
//! apart from the pipeline so that the steps that make and read them need no more than
//! these; the release side never sees them (the build uses the release rules, not the
//! other way round).

use crate::build::workspace::SkillSource;
use crate::fs::source_file::SourceFile;
use crate::interface::{Document, SchemaReference};
use crate::release::candidate::{Candidate, CandidateSchema};

/// A schema as loaded for one role of one skill, checked.
///
/// Its validator (format asserted, retrieval impossible) is compiled once, used for every
/// example of the schema, and dropped when the skill's checks are done: compiled
/// validators are the largest thing a skill has in memory, and a workspace of thousands
/// of skills must not keep them all.
#[derive(Debug)]
pub struct LoadedSchema {
    /// The Schema Reference the document carries, inline schema included.
    pub reference: SchemaReference,
    /// The schema's source file, for locations.
    pub source: SourceFile,
    /// The manifest field that declared it (`input`, `output`, `supporting_records[0]`).
    pub field: String,
    /// That field's JSON Pointer in skill.yaml (`/input`, `/supporting_records/0`).
    pub pointer: String,
}

/// One skill whose interface was assembled and passed every per-skill check except,
/// perhaps, its examples (their findings are in [`crate::build::pipeline::Checked::findings`]).
#[derive(Debug)]
pub struct CheckedSkill {
    /// The skill's manifest as read.
    pub source: SkillSource,
    /// Its schemas, in the manifest's order (input, output, records).
    pub schemas: Vec<LoadedSchema>,
    /// The assembled Skill Interface Document.
    pub interface: Document,
}

impl CheckedSkill {
    /// What the release rules read of this skill.
    pub fn candidate(&self) -> Candidate<'_> {
        Candidate {
            manifest_path: &self.source.manifest_path,
            interface: &self.interface,
            schemas: self
                .schemas
                .iter()
                .map(|l| CandidateSchema {
                    reference: &l.reference,
                    source: &l.source,
                    field: &l.field,
                    pointer: &l.pointer,
                })
                .collect(),
        }
    }
}
