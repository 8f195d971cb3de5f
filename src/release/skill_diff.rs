//! Skill-level comparison: what changed between two recorded versions of a skill, and the
//! smallest version step each change needs.
//!
//! The draft ("Schema Evolution and Compatibility") asks a MAJOR step for a change that
//! is not backward compatible. For a skill, that is: any of its schemas changed
//! incompatibly (by the structural comparison of [`crate::release::compat`]) or took a
//! MAJOR step, a record kind or a response mode was removed, `cancellable` went from true
//! to false, `default_mode` became more powerful (observe_only < recommend_only <
//! execute), or `approval_may_be_required` went from false to true; any other interface
//! change needs at least a MINOR step. Shared by the release rules and `diff`.

use crate::interface::Role;
use crate::release::compat::{self, Change, Comparison, Direction};
use crate::release::ledger::{Ledger, SchemaEntry, SchemaUse, SkillEntry};
use crate::release::step::Step;
use crate::wire::digest::Digest;
use crate::wire::version::Version;
use serde::Serialize;

/// A schema's identity as used by a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaIdent {
    /// The schema's identity URI.
    pub schema_uri: String,
    /// Its version.
    pub version: Version,
    /// Its JSON Schema dialect.
    pub dialect: String,
    /// Its digest.
    pub digest: Digest,
}

/// How one role's schema changed between two versions of a skill.
#[derive(Debug, Clone, Serialize)]
pub struct SchemaDiff {
    /// The role.
    pub role: Role,
    /// The supporting-record kind, for a record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The schema the old version used, if any.
    pub old: Option<SchemaIdent>,
    /// The schema the new version uses, if any.
    pub new: Option<SchemaIdent>,
    /// Every structural change, each with its direction and verdict for this role.
    pub changes: Vec<Classified>,
    /// Whether any change breaks consumers of a schema in this role.
    pub breaking: bool,
    /// The smallest version step the schema needs.
    pub required: Step,
    /// The step its version took (`None`: a different schema_uri, or a lower version).
    pub actual: Option<Step>,
    /// Whether the version step suffices (always true for a new schema_uri).
    pub satisfied: bool,
}

impl SchemaDiff {
    /// `input`, `output` or `record <kind>`.
    pub fn label(&self) -> String {
        match &self.kind {
            Some(k) => format!("record {k}"),
            None => self.role.as_str().to_string(),
        }
    }
}

/// A structural change and whether it breaks consumers of the schema's role.
#[derive(Debug, Clone, Serialize)]
pub struct Classified {
    /// The change.
    #[serde(flatten)]
    pub change: Change,
    /// Whether it breaks consumers of the schema in its role.
    pub breaking: bool,
}

/// A skill-level change and the step it needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillChange {
    /// What changed, in words.
    pub what: String,
    /// The version step it needs.
    pub required: Step,
}

/// How a skill changed between two versions.
#[derive(Debug, Clone, Serialize)]
pub struct SkillDiff {
    /// The skill's id.
    pub skill_id: String,
    /// The version compared from.
    pub old_version: Version,
    /// The version compared to.
    pub new_version: Version,
    /// The schemas whose identity or content changed.
    pub schemas: Vec<SchemaDiff>,
    /// Every interface change and the step it needs.
    pub changes: Vec<SkillChange>,
    /// The smallest step the skill_version needs.
    pub required: Step,
}

fn ident(u: &SchemaUse, ledger: &Ledger) -> SchemaIdent {
    SchemaIdent {
        schema_uri: u.schema_uri.clone(),
        version: u.version,
        dialect: ledger
            .schema(&u.schema_uri, u.version)
            .map(|s| s.dialect.clone())
            .unwrap_or_default(),
        digest: u.digest.clone(),
    }
}

/// Compare two recorded schemas: the structural changes, plus an undecided change when
/// the dialect moved or a schema is missing.
pub fn compare_entries(old: Option<&SchemaEntry>, new: Option<&SchemaEntry>) -> Comparison {
    match (old, new) {
        (Some(o), Some(n)) => {
            let mut c = compat::compare(&o.schema(), &n.schema());
            if o.dialect != n.dialect {
                c.changes.insert(
                    0,
                    Change {
                        rule: "dialect-changed",
                        direction: Direction::Undecided,
                        old_pointer: String::new(),
                        new_pointer: String::new(),
                        why: format!("the dialect changed from {} to {}", o.dialect, n.dialect),
                    },
                );
            }
            c
        }
        _ => Comparison {
            changes: vec![Change {
                rule: "ref-unresolved",
                direction: Direction::Undecided,
                old_pointer: String::new(),
                new_pointer: String::new(),
                why: "the schema's content is not available to compare".into(),
            }],
        },
    }
}

/// Compare two versions of a skill: every change and the step each needs.
pub fn skill_diff(old: &SkillEntry, old_l: &Ledger, new: &SkillEntry, new_l: &Ledger) -> SkillDiff {
    let mut schemas = Vec::new();
    let mut changes = Vec::new();
    let key = |u: &SchemaUse| (u.role, u.kind.clone());
    for nu in &new.schemas {
        let label = nu.label();
        match old.schemas.iter().find(|ou| key(ou) == key(nu)) {
            None => {
                changes.push(SkillChange {
                    what: format!(
                        "supporting-record kind {:?} added",
                        nu.kind.as_deref().unwrap_or("")
                    ),
                    required: Step::Minor,
                });
                schemas.push(SchemaDiff {
                    role: nu.role,
                    kind: nu.kind.clone(),
                    old: None,
                    new: Some(ident(nu, new_l)),
                    changes: Vec::new(),
                    breaking: false,
                    required: Step::None,
                    actual: None,
                    satisfied: true,
                });
            }
            Some(ou) => {
                let (oi, ni) = (ident(ou, old_l), ident(nu, new_l));
                if oi == ni {
                    continue;
                }
                let same_uri = oi.schema_uri == ni.schema_uri;
                let actual = if same_uri {
                    Step::between(oi.version, ni.version)
                } else {
                    None
                };
                let major_step = actual == Some(Step::Major);
                let same_content = oi.digest == ni.digest && oi.dialect == ni.dialect;
                let comparison = if same_content {
                    Comparison::default()
                } else {
                    compare_entries(
                        old_l.schema(&ou.schema_uri, ou.version),
                        new_l.schema(&nu.schema_uri, nu.version),
                    )
                };
                let breaking = comparison.is_breaking(nu.role);
                let required = if same_content {
                    Step::None
                } else if breaking {
                    Step::Major
                } else {
                    Step::Minor
                };
                let satisfied = !same_uri || actual.is_some_and(|a| a >= required);
                if breaking {
                    let first: Vec<String> = comparison
                        .breaking(nu.role)
                        .take(3)
                        .map(|c| format!("{} at {}", c.rule, show_pointer(&c.new_pointer)))
                        .collect();
                    changes.push(SkillChange {
                        what: format!(
                            "the {label} schema changed incompatibly ({}{})",
                            first.join(", "),
                            if comparison.breaking(nu.role).count() > 3 {
                                ", …"
                            } else {
                                ""
                            }
                        ),
                        required: Step::Major,
                    });
                } else if major_step {
                    changes.push(SkillChange {
                        what: format!(
                            "the {label} schema took a MAJOR step ({} → {})",
                            oi.version, ni.version
                        ),
                        required: Step::Major,
                    });
                } else if same_content {
                    changes.push(SkillChange {
                        what: format!(
                            "the {label} schema is now {} {} (was {} {}), same content",
                            ni.schema_uri, ni.version, oi.schema_uri, oi.version
                        ),
                        required: Step::Minor,
                    });
                } else {
                    changes.push(SkillChange {
                        what: format!("the {label} schema changed compatibly"),
                        required: Step::Minor,
                    });
                }
                let role = nu.role;
                schemas.push(SchemaDiff {
                    role,
                    kind: nu.kind.clone(),
                    old: Some(oi),
                    new: Some(ni),
                    changes: comparison
                        .changes
                        .into_iter()
                        .map(|change| Classified {
                            breaking: change.breaks(role),
                            change,
                        })
                        .collect(),
                    breaking,
                    required,
                    actual,
                    satisfied,
                });
            }
        }
    }
    for ou in &old.schemas {
        if !new.schemas.iter().any(|nu| key(nu) == key(ou)) {
            changes.push(SkillChange {
                what: format!(
                    "supporting-record kind {:?} removed",
                    ou.kind.as_deref().unwrap_or("")
                ),
                required: Step::Major,
            });
            schemas.push(SchemaDiff {
                role: ou.role,
                kind: ou.kind.clone(),
                old: Some(ident(ou, old_l)),
                new: None,
                changes: Vec::new(),
                breaking: true,
                required: Step::None,
                actual: None,
                satisfied: true,
            });
        }
    }
    for mode in &old.supported_response_modes {
        if !new.supported_response_modes.contains(mode) {
            changes.push(SkillChange {
                what: format!("response mode {} removed", mode_name(mode)),
                required: Step::Major,
            });
        }
    }
    for mode in &new.supported_response_modes {
        if !old.supported_response_modes.contains(mode) {
            changes.push(SkillChange {
                what: format!("response mode {} added", mode_name(mode)),
                required: Step::Minor,
            });
        }
    }
    if old.cancellable != new.cancellable {
        changes.push(SkillChange {
            what: format!(
                "cancellable went from {} to {}",
                old.cancellable, new.cancellable
            ),
            required: if old.cancellable {
                Step::Major
            } else {
                Step::Minor
            },
        });
    }
    if old.default_mode != new.default_mode {
        let name = |m| {
            serde_json::to_value(m)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        changes.push(SkillChange {
            what: format!(
                "default_mode went from {} to {}{}",
                name(old.default_mode),
                name(new.default_mode),
                if new.default_mode > old.default_mode {
                    " (more powerful)"
                } else {
                    ""
                }
            ),
            required: if new.default_mode > old.default_mode {
                Step::Major
            } else {
                Step::Minor
            },
        });
    }
    if old.approval_may_be_required != new.approval_may_be_required {
        changes.push(SkillChange {
            what: format!(
                "approval_may_be_required went from {} to {}",
                old.approval_may_be_required, new.approval_may_be_required
            ),
            required: if new.approval_may_be_required {
                Step::Major
            } else {
                Step::Minor
            },
        });
    }
    if old.interface_version != new.interface_version {
        changes.push(SkillChange {
            what: format!(
                "interface_version went from {} to {}",
                old.interface_version, new.interface_version
            ),
            required: Step::Major,
        });
    }
    // Anything else that moves the digest (for example a record kind's position).
    let same_apart_from_version = {
        let mut a = old.clone();
        a.skill_version = new.skill_version;
        a.interface_digest = new.interface_digest.clone();
        a == *new
    };
    if changes.is_empty() && !same_apart_from_version {
        changes.push(SkillChange {
            what: "the interface document changed".into(),
            required: Step::Minor,
        });
    }
    let required = changes
        .iter()
        .map(|c| c.required)
        .max()
        .unwrap_or(Step::None);
    SkillDiff {
        skill_id: new.skill_id.clone(),
        old_version: old.skill_version,
        new_version: new.skill_version,
        schemas,
        changes,
        required,
    }
}

fn mode_name(m: &crate::interface::ResponseMode) -> String {
    serde_json::to_value(m)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The skill-level changes that need at least `at_least`, joined with `; `.
pub fn describe(d: &SkillDiff, at_least: Step) -> String {
    let list: Vec<&str> = d
        .changes
        .iter()
        .filter(|c| c.required >= at_least)
        .map(|c| c.what.as_str())
        .collect();
    list.join("; ")
}

/// A JSON pointer as a finding shows it: the empty pointer is "the root".
pub fn show_pointer(p: &str) -> &str {
    if p.is_empty() {
        "the root"
    } else {
        p
    }
}
