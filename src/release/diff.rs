//! `skillbundle diff`: every change between two workspaces or bundles, per skill, with the
//! smallest version step each schema and skill needs (draft, "Schema Evolution and
//! Compatibility") and whether the step taken suffices.

use crate::finding::Finding;
use crate::release::ledger::{Ledger, SkillEntry};
use crate::release::skill_diff::{skill_diff, SchemaDiff, SkillChange};
use crate::release::step::{suggest, Step};
use crate::wire::version::Version;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a workspace or bundle publishes, for `diff`.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// What it publishes.
    pub ledger: Ledger,
    /// Problems of a workspace that did not stop the comparison (a failing example, a
    /// skill whose interface could not be assembled), as warnings.
    pub findings: Vec<Finding>,
    /// Skills of a workspace whose interface could not be assembled: not compared.
    pub uncompared: BTreeSet<String>,
    /// A skill directory whose manifest could not even be read: which skill it holds is
    /// unknown, so no skill can be called added or removed on its account.
    pub unreadable_skill: bool,
}

/// One skill in a diff.
#[derive(Debug, Clone, Serialize)]
pub struct SkillReport {
    /// The skill's id.
    pub skill_id: String,
    /// `added`, `removed`, `changed`, `unchanged`, or `not_compared` (a side could not
    /// assemble its interface: see the snapshot's findings).
    pub status: &'static str,
    /// Its version on the old side, if there.
    pub old_version: Option<Version>,
    /// Its version on the new side, if there.
    pub new_version: Option<Version>,
    /// The smallest step the skill_version needs.
    pub required: Step,
    /// The step the skill_version took (`None`: it went down, or the skill is new/gone).
    pub actual: Option<Step>,
    /// Whether the step taken suffices.
    pub satisfied: bool,
    /// The version to use when the step does not suffice.
    pub suggested: Option<Version>,
    /// The skill-level changes, each with the step it needs.
    pub changes: Vec<SkillChange>,
    /// How each role's schema changed.
    pub schemas: Vec<SchemaDiff>,
}

/// Every change between two snapshots, per skill.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    /// One report per skill of either side, by skill_id.
    pub skills: Vec<SkillReport>,
}

impl Diff {
    /// Whether every version step suffices.
    pub fn satisfied(&self) -> bool {
        self.skills
            .iter()
            .all(|s| s.satisfied && s.schemas.iter().all(|d| d.satisfied))
    }
}

/// Compare two snapshots, skill by skill (each holds one version per skill_id; the
/// highest is taken if there are several). A skill that one side could not assemble is
/// `not_compared`, and so is one that would be `added` or `removed` when the other side
/// has a skill directory it could not read.
pub fn diff(old: &Snapshot, new: &Snapshot) -> Diff {
    let latest = |l: &Ledger| -> BTreeMap<String, SkillEntry> {
        let mut m: BTreeMap<String, SkillEntry> = BTreeMap::new();
        for s in l.skills.values() {
            m.insert(s.skill_id.clone(), s.clone());
        }
        m
    };
    let (olds, news) = (latest(&old.ledger), latest(&new.ledger));
    let ids: BTreeSet<&String> = olds
        .keys()
        .chain(news.keys())
        .chain(&old.uncompared)
        .chain(&new.uncompared)
        .collect();
    let mut skills = Vec::new();
    for id in ids {
        let (o, n) = (olds.get(id), news.get(id));
        let not_compared = old.uncompared.contains(id)
            || new.uncompared.contains(id)
            || (n.is_none() && new.unreadable_skill)
            || (o.is_none() && old.unreadable_skill);
        if not_compared {
            skills.push(SkillReport {
                skill_id: id.clone(),
                status: "not_compared",
                old_version: o.map(|o| o.skill_version),
                new_version: n.map(|n| n.skill_version),
                required: Step::None,
                actual: None,
                satisfied: false,
                suggested: None,
                changes: Vec::new(),
                schemas: Vec::new(),
            });
            continue;
        }
        let (old, new) = (&old.ledger, &new.ledger);
        let report = match (o, n) {
            (Some(o), Some(n)) => {
                let d = skill_diff(o, old, n, new);
                let actual = Step::between(o.skill_version, n.skill_version);
                let unchanged = o.interface_digest == n.interface_digest;
                let satisfied = actual.is_some_and(|a| a >= d.required);
                SkillReport {
                    skill_id: id.clone(),
                    status: if unchanged { "unchanged" } else { "changed" },
                    old_version: Some(o.skill_version),
                    new_version: Some(n.skill_version),
                    required: d.required,
                    actual,
                    satisfied,
                    suggested: (!satisfied)
                        .then(|| suggest(&[o.skill_version], o.skill_version, d.required)),
                    changes: d.changes,
                    schemas: d.schemas,
                }
            }
            (None, Some(n)) => SkillReport {
                skill_id: id.clone(),
                status: "added",
                old_version: None,
                new_version: Some(n.skill_version),
                required: Step::None,
                actual: None,
                satisfied: true,
                suggested: None,
                changes: Vec::new(),
                schemas: Vec::new(),
            },
            (Some(o), None) => SkillReport {
                skill_id: id.clone(),
                status: "removed",
                old_version: Some(o.skill_version),
                new_version: None,
                required: Step::None,
                actual: None,
                satisfied: true,
                suggested: None,
                changes: Vec::new(),
                schemas: Vec::new(),
            },
            (None, None) => continue,
        };
        skills.push(report);
    }
    Diff { skills }
}
