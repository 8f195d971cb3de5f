//! A skill as its own checks leave it: what the pipeline produces and the release rules
//! ([`crate::release::evolution`]) read. The types live apart from both so that neither module
//! needs the other's internals: the pipeline runs the release rules, and the rules only
//! read what the pipeline made.

use crate::build::workspace::{SkillSource, SourceFile};
use crate::interface::{Document, SchemaReference};

/// A schema as loaded for one role of one skill, checked.
///
/// Its validator (format asserted, retrieval impossible) is compiled once, used for every
/// example of the schema, and dropped when the skill's checks are done: compiled
/// validators are the largest thing a skill has in memory, and a workspace of thousands
/// of skills must not keep them all.
#[derive(Debug)]
pub struct LoadedSchema {
    pub reference: SchemaReference,
    pub source: SourceFile,
    /// The manifest field that declared it (`input`, `output`, `supporting_records[0]`).
    pub field: String,
}

/// One skill whose interface was assembled and passed every per-skill check except,
/// perhaps, its examples (their findings are in [`crate::build::pipeline::Checked::findings`]).
#[derive(Debug)]
pub struct CheckedSkill {
    pub source: SkillSource,
    pub schemas: Vec<LoadedSchema>,
    pub interface: Document,
}
