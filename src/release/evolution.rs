//! Release rules: what a new build may publish, given what was published before.
//!
//! The draft: "Schema publishers MUST treat a published schema version and digest as
//! immutable. A changed schema receives a new version and digest", a change that is not
//! backward compatible "increments MAJOR and resets MINOR to zero", and a
//! backward-compatible one "increments MINOR". This module turns that into a gate. The
//! baseline is the ledger ([`crate::release::ledger`], `skillbundle.lock`), optionally joined by a
//! previous bundle (`--previous`); against it, every schema and skill the workspace
//! would publish is checked:
//!
//! - a recorded (schema_uri, version) or (skill_id, skill_version) whose content changed
//!   is `immutability_violation`, naming both digests and the version to use instead;
//! - a new version must be higher: within a recorded MAJOR line, higher than every
//!   recorded MINOR; otherwise a new MAJOR above every recorded one, with MINOR 0
//!   (`version_not_increased`);
//! - a MINOR step whose change is breaking — by the structural comparison of
//!   [`crate::release::compat`] for schemas, by the skill-level rules below for skills — is
//!   `incompatible_change`, one finding per breaking rule and pointer.
//!
//! Skill-level rules ([`skill_diff`]): a skill needs a new MAJOR when any of its schemas
//! changed incompatibly or took a MAJOR step, a record kind or a response mode was
//! removed, `cancellable` went from true to false, `default_mode` became more powerful
//! (observe_only < recommend_only < execute), or `approval_may_be_required` went from false
//! to true; any other interface change needs at least a MINOR step.
//!
//! The same comparison powers `skillbundle diff`, which reports every change between two
//! workspaces or bundles with the smallest version step each schema and skill needs.

use crate::finding::{Code, Finding, Location};
use crate::fs::source_file::SourceFile;
use crate::interface::{Document, Role};
use crate::release::candidate::{Candidate, CandidateSchema};
use crate::release::compat::{self, Change, Comparison, Direction};
use crate::release::ledger::{
    Conflict, Ledger, LockFile, SchemaEntry, SchemaKey, SchemaUse, SkillEntry, SkillKey,
};
use crate::wire::digest::Digest;
use crate::wire::version::Version;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// How `check` and `build` use the release ledger.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A previously published bundle to check against, in addition to the lock.
    pub previous: Option<PathBuf>,
    /// `build --locked`: fail with `lock_outdated` instead of updating the lock.
    pub locked: bool,
}

/// A version step, ordered: none < minor < major.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    None,
    Minor,
    Major,
}

impl Step {
    /// The step from `old` to `new`; `None` (the Option) when `new` is lower.
    pub fn between(old: Version, new: Version) -> Option<Step> {
        if new.major > old.major {
            Some(Step::Major)
        } else if new.major == old.major && new.minor > old.minor {
            Some(Step::Minor)
        } else if new == old {
            Some(Step::None)
        } else {
            None
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Step::None => "none",
            Step::Minor => "MINOR",
            Step::Major => "MAJOR",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The skill_version a breaking interface change needs: `current` itself when it is
/// unpublished and already a MAJOR step above every recorded version (`X.0` with X above
/// each recorded MAJOR), else the next MAJOR version above everything recorded.
fn major_step_from(recorded: &[Version], current: Version) -> Version {
    let already = current.minor == 0 && recorded.iter().all(|v| v.major < current.major);
    if already {
        current
    } else {
        suggest(recorded, current, Step::Major)
    }
}

/// The smallest version that takes `step` from `current`, above everything recorded.
pub fn suggest(recorded: &[Version], current: Version, step: Step) -> Version {
    match step {
        Step::None => current,
        Step::Minor => {
            let top = recorded
                .iter()
                .filter(|v| v.major == current.major)
                .map(|v| v.minor)
                .chain([current.minor])
                .max()
                .unwrap_or(current.minor);
            Version::new(current.major, top + 1)
        }
        Step::Major => {
            let top = recorded
                .iter()
                .map(|v| v.major)
                .chain([current.major])
                .max()
                .unwrap_or(current.major);
            Version::new(top + 1, 0)
        }
    }
}

/// Why `new` (not yet recorded) is not an allowed next version, given the recorded ones.
pub fn version_problem(recorded: &[Version], new: Version) -> Option<String> {
    if recorded.is_empty() || recorded.contains(&new) {
        return None;
    }
    let line_top = recorded
        .iter()
        .filter(|v| v.major == new.major)
        .map(|v| v.minor)
        .max();
    if let Some(top) = line_top {
        if new.minor <= top {
            return Some(format!(
                "{new} is not higher than {}.{top}, the highest recorded in the {}.x line; use {}",
                new.major,
                new.major,
                Version::new(new.major, top + 1)
            ));
        }
        return None;
    }
    let max_major = recorded.iter().map(|v| v.major).max().unwrap_or(0);
    if new.major < max_major {
        return Some(format!(
            "{new} starts a MAJOR line below the highest recorded one ({max_major}.x); a new MAJOR version must be higher: use {}",
            Version::new(max_major + 1, 0)
        ));
    }
    if new.minor != 0 {
        return Some(format!(
            "{new} starts a new MAJOR line, which begins at MINOR 0: use {}",
            Version::new(new.major, 0)
        ));
    }
    None
}

// ---------------------------------------------------------------------------------------
// Skill-level comparison (shared by the rules and `diff`).

/// A schema's identity as used by a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaIdent {
    pub schema_uri: String,
    pub version: Version,
    pub dialect: String,
    pub digest: Digest,
}

/// How one role's schema changed between two versions of a skill.
#[derive(Debug, Clone, Serialize)]
pub struct SchemaDiff {
    pub role: Role,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub old: Option<SchemaIdent>,
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
    #[serde(flatten)]
    pub change: Change,
    pub breaking: bool,
}

/// A skill-level change and the step it needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillChange {
    pub what: String,
    pub required: Step,
}

/// How a skill changed between two versions.
#[derive(Debug, Clone, Serialize)]
pub struct SkillDiff {
    pub skill_id: String,
    pub old_version: Version,
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

fn describe(d: &SkillDiff, at_least: Step) -> String {
    let list: Vec<&str> = d
        .changes
        .iter()
        .filter(|c| c.required >= at_least)
        .map(|c| c.what.as_str())
        .collect();
    list.join("; ")
}

// ---------------------------------------------------------------------------------------
// The rules, run by `check` and `build`.

/// The ledger entries a set of checked skills' interfaces would publish.
pub fn workspace_ledger<'a>(interfaces: impl IntoIterator<Item = &'a Document>) -> Ledger {
    let mut ledger = Ledger::default();
    for interface in interfaces {
        // Two contents for one identity are reported as schema_conflict by the
        // pipeline; the first one stands here.
        let _ = ledger.add_document(interface);
    }
    ledger
}

/// What the release rules read, kept for `build` to record: the lock as found on disk
/// and the ledger the workspace would publish. [`lock_update`] takes it, so a build
/// reads the lock and computes the workspace's ledger once.
#[derive(Debug, Clone)]
pub struct Release {
    lock: LockFile,
    current: Ledger,
}

/// Run the release rules for the checked skills of a workspace against its lock, as
/// [`Ledger::load`] read it, joined by the ledger of a previous bundle (`--previous`: its
/// path and what reading it gave). The [`Release`] is `None` when the lock or the
/// previous bundle could not be read (the findings say why).
pub fn check(
    lock: Result<LockFile, Vec<Finding>>,
    previous: Option<(&Path, Result<Ledger, Vec<Finding>>)>,
    skills: &[Candidate<'_>],
) -> (Vec<Finding>, Option<Release>) {
    let lock = match lock {
        Ok(l) => l,
        Err(f) => return (f, None),
    };
    let current = workspace_ledger(skills.iter().map(|s| s.interface));
    let mut findings = Vec::new();
    let merged;
    let baseline = match previous {
        None => &lock.ledger,
        Some((path, read)) => match read {
            Ok(previous) => {
                let mut baseline = lock.ledger.clone();
                merge(&mut baseline, previous, path, &mut findings);
                merged = baseline;
                &merged
            }
            Err(f) => return (f, None),
        },
    };
    findings.extend(schema_rules(baseline, skills));
    findings.extend(skill_rules(baseline, &current, skills));
    (findings, Some(Release { lock, current }))
}

/// Skills the lock records that the workspace no longer has (`present` holds every
/// skill_id the workspace's manifests name, assembled or not): each is `skill_removed`
/// unless the workspace manifest states the removal (`removed_skills`), since a removed
/// skill breaks every caller. A stated removal of a skill that is still there, or that
/// the lock never recorded, is `manifest_invalid`.
pub fn removed_skills(
    release: &Release,
    present: &BTreeSet<&str>,
    stated: &[String],
    manifest: &Path,
) -> Vec<Finding> {
    let mut recorded: BTreeMap<&str, Version> = BTreeMap::new();
    for (id, version) in release.lock.ledger.skills.keys() {
        let highest = recorded.entry(id.as_str()).or_insert(*version);
        *highest = (*highest).max(*version);
    }
    let mut findings = Vec::new();
    for (id, version) in &recorded {
        if !present.contains(id) && !stated.iter().any(|s| s == id) {
            findings.push(
                Finding::at_file(
                    Code::SkillRemoved,
                    format!(
                        "skill {id:?}, recorded in skillbundle.lock up to version {version}, is missing from the workspace"
                    ),
                    manifest,
                )
                .with_help(format!(
                    "if its skill.yaml moved or was renamed, put it back; to remove the skill on purpose (a breaking change for its callers), add it to `removed_skills: [{id}]` in skillbundle.yaml"
                )),
            );
        }
    }
    for id in stated {
        let why = if present.contains(id.as_str()) {
            "the workspace still has it"
        } else if !recorded.contains_key(id.as_str()) {
            "skillbundle.lock does not record it"
        } else {
            continue;
        };
        findings.push(
            Finding::at_file(
                Code::ManifestInvalid,
                format!("removed_skills lists {id:?}, but {why}"),
                manifest,
            )
            .with_help("list only skills the lock records and the workspace no longer has"),
        );
    }
    findings
}

/// Join a previous bundle's entries into the baseline; a conflict with the lock is an
/// immutability violation (one of them was published with other content).
fn merge(baseline: &mut Ledger, previous: Ledger, path: &Path, findings: &mut Vec<Finding>) {
    let report = |c: Conflict, findings: &mut Vec<Finding>| {
        findings.push(
            Finding::at_file(
                Code::ImmutabilityViolation,
                format!(
                    "the previous bundle publishes {} with digest {}, but skillbundle.lock records it with digest {}",
                    c.what, c.offered, c.recorded
                ),
                path,
            )
            .with_help("one version was published twice with different content; find out which one clients have, and give the other a new version"),
        );
    };
    for (_, s) in previous.schemas {
        if let Err(c) = baseline.add_schema(s) {
            report(c, findings);
        }
    }
    for (_, s) in previous.skills {
        if let Err(c) = baseline.add_skill(s) {
            report(c, findings);
        }
    }
}

/// What an input / output schema must keep doing.
fn role_contract(role: Role) -> &'static str {
    match role {
        Role::Input => "an input schema must accept every instance the old version accepted",
        Role::Output => "an output schema must accept nothing the old version rejected",
        Role::Record => "a record schema must accept nothing the old version rejected",
    }
}

/// A location in a schema file for `pointer`, or for its nearest existing ancestor.
fn locate_nearest(source: &SourceFile, pointer: &str) -> Location {
    let mut p = pointer.to_string();
    loop {
        let loc = source.locate(&p);
        if loc.line.is_some() || p.is_empty() || source.yaml {
            return source.locate(&if source.yaml { pointer.to_string() } else { p });
        }
        match p.rfind('/') {
            Some(i) => p.truncate(i),
            None => p.clear(),
        }
    }
}

/// The location of a manifest line: `skill_version:`, or the line declaring a schema.
fn manifest_location(manifest: &Path, needle: ManifestLine<'_>) -> Location {
    let mut loc = Location::file(manifest);
    let Ok(text) = std::fs::read_to_string(manifest) else {
        return loc;
    };
    let lines: Vec<&str> = text.lines().collect();
    let found = match needle {
        ManifestLine::SkillVersion => lines
            .iter()
            .position(|l| l.starts_with("skill_version:"))
            .map(|i| (i, 0)),
        ManifestLine::Schema(uri) => lines
            .iter()
            .position(|l| l.contains(uri) && l.contains("schema_uri"))
            .map(|i| {
                // The version is on the same line (flow style) or just below.
                let j = (i..lines.len().min(i + 4))
                    .find(|&j| lines[j].contains("version:"))
                    .unwrap_or(i);
                let col = lines[j].find("version:").unwrap_or(0);
                (j, col)
            }),
    };
    if let Some((line, col)) = found {
        loc = loc.with_position(line + 1, col + 1);
    }
    loc
}

enum ManifestLine<'a> {
    SkillVersion,
    Schema(&'a str),
}

/// Whether the workspace reuses a schema_uri that, in `baseline`, only other skills
/// published: `Some("<skill_id> <role>")` naming the first such use.
fn reused_from(
    baseline: &Ledger,
    uri: &str,
    uses: &[(&Candidate<'_>, &CandidateSchema<'_>)],
) -> Option<String> {
    let recorded: Vec<(&str, &SchemaUse)> = baseline
        .skills
        .values()
        .flat_map(|e| e.schemas.iter().map(move |u| (e.skill_id.as_str(), u)))
        .filter(|(_, u)| u.schema_uri == uri)
        .collect();
    let ours = |id: &str| uses.iter().any(|(s, _)| s.interface.skill_id == id);
    if recorded.iter().any(|(id, _)| ours(id)) {
        return None;
    }
    recorded
        .first()
        .map(|(id, u)| format!("{id} {}", u.label()))
}

/// Schema rules: immutability, version order, and compatibility within a MAJOR line.
fn schema_rules(baseline: &Ledger, skills: &[Candidate<'_>]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut groups: BTreeMap<SchemaKey, Vec<(&Candidate<'_>, &CandidateSchema<'_>)>> =
        BTreeMap::new();
    for s in skills {
        for l in &s.schemas {
            let r = &l.reference;
            groups
                .entry((r.schema_uri.clone(), r.version))
                .or_default()
                .push((s, l));
        }
    }
    for ((uri, version), uses) in groups {
        let (skill, loaded) = uses[0];
        let cur = &loaded.reference;
        let roles: BTreeSet<Role> = uses.iter().map(|(_, l)| l.reference.role).collect();
        let role = *roles.iter().next().unwrap_or(&Role::Input);
        let breaks = |c: &Change| roles.iter().any(|r| c.breaks(*r));
        let field = loaded.field;
        let manifest = skill.manifest_path;
        let recorded = baseline.schema_versions(&uri);
        let current_entry = SchemaEntry {
            schema_uri: uri.clone(),
            version,
            dialect: cur.dialect.clone(),
            digest: cur.digest.clone(),
            jcs: cur.jcs.clone(),
        };
        let skill_id = &skill.interface.skill_id;
        let skill_version = skill.interface.skill_version;
        let skill_recorded = baseline.skill(skill_id, skill_version).is_some();
        let skill_hint = |step: Step| {
            if skill_recorded {
                format!(
                    ", and skill_version to \"{}\"",
                    suggest(&baseline.skill_versions(skill_id), skill_version, step)
                )
            } else {
                String::new()
            }
        };
        if let Some(rec) = baseline.schema(&uri, version) {
            if rec.digest == cur.digest && rec.dialect == cur.dialect {
                continue;
            }
            let comparison = compare_entries(Some(rec), Some(&current_entry));
            let first_breaking = comparison.changes.iter().find(|c| breaks(c));
            let step = if first_breaking.is_some() {
                Step::Major
            } else {
                Step::Minor
            };
            let next = suggest(&recorded, version, step);
            let pointer = first_breaking
                .or_else(|| {
                    comparison
                        .changes
                        .iter()
                        .find(|c| c.direction != Direction::None)
                })
                .or(comparison.changes.first())
                .map(|c| c.new_pointer.clone())
                .unwrap_or_default();
            let why = match first_breaking {
                Some(c) => format!(
                    " (a MAJOR step: the change is breaking — {}: {}, at {})",
                    c.rule,
                    c.why,
                    show_pointer(&c.new_pointer)
                ),
                None => " (a MINOR step: the change is backward compatible)".into(),
            };
            let dialect_note = if rec.dialect != cur.dialect {
                format!(", and dialect {} (was {})", cur.dialect, rec.dialect)
            } else {
                String::new()
            };
            findings.push(
                Finding::new(
                    Code::ImmutabilityViolation,
                    format!(
                        "{uri} version {version} is recorded in skillbundle.lock with digest {}, but this schema now has digest {}{dialect_note}; a published schema version never changes",
                        rec.digest, cur.digest
                    ),
                    locate_nearest(loaded.source, &pointer),
                )
                .with_help(match reused_from(baseline, &uri, &uses) {
                    // Another skill's schema_uri, reused: most likely a copy that should
                    // have been renamed, so the new URI comes first.
                    Some(owner) => format!(
                        "{uri} is the {owner} schema in skillbundle.lock: if this is another schema, give it a schema_uri of its own in {}; if it revises that one, set {field}.version to \"{next}\"{why}",
                        manifest.display(),
                    ),
                    None => format!(
                        "publish the change as a new version: in {}, set {field}.version to \"{next}\"{}{why}",
                        manifest.display(),
                        skill_hint(step)
                    ),
                }),
            );
            continue;
        }
        if let Some(problem) = version_problem(&recorded, version) {
            findings.push(
                Finding::new(
                    Code::VersionNotIncreased,
                    format!("{field}.version of {uri}: {problem}"),
                    manifest_location(manifest, ManifestLine::Schema(&uri)),
                )
                .with_help(format!(
                    "recorded versions of {uri}: {}",
                    list_versions(&recorded)
                )),
            );
            continue;
        }
        let predecessor = recorded
            .iter()
            .filter(|v| v.major == version.major && **v < version)
            .max();
        let Some(pred) = predecessor.and_then(|v| baseline.schema(&uri, *v)) else {
            continue;
        };
        let comparison = compare_entries(Some(pred), Some(&current_entry));
        let next = suggest(&recorded, version, Step::Major);
        let skill_major = major_step_from(&baseline.skill_versions(skill_id), skill_version);
        for c in comparison.changes.iter().filter(|c| breaks(c)) {
            let role_of = if roles.len() > 1 {
                "a schema used as input and as output"
            } else {
                match role {
                    Role::Input => "an input schema",
                    Role::Output => "an output schema",
                    Role::Record => "a record schema",
                }
            };
            findings.push(
                Finding::new(
                    Code::IncompatibleChange,
                    format!(
                        "{field} schema {uri} {} → {version} is a MINOR step, but this change is breaking for {role_of} ({}): {} (rule {}, {}; old schema at {})",
                        pred.version,
                        if roles.len() > 1 {
                            "it must accept exactly what the old version accepted".to_string()
                        } else {
                            role_contract(role).to_string()
                        },
                        c.why,
                        c.rule,
                        c.direction,
                        show_pointer(&c.old_pointer),
                    ),
                    locate_nearest(loaded.source, &c.new_pointer),
                )
                .with_help(format!(
                    "make the change backward compatible, or publish it as a MAJOR version: in {}, set {field}.version to \"{next}\" and skill_version to \"{skill_major}\"",
                    manifest.display()
                )),
            );
        }
    }
    findings
}

fn show_pointer(p: &str) -> &str {
    if p.is_empty() {
        "the root"
    } else {
        p
    }
}

fn list_versions(v: &[Version]) -> String {
    v.iter()
        .map(Version::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Skill rules: immutability, version order, and the skill-level MAJOR rules.
fn skill_rules(baseline: &Ledger, current: &Ledger, skills: &[Candidate<'_>]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for s in skills {
        let id = &s.interface.skill_id;
        let version = s.interface.skill_version;
        let Some(cur) = current.skill(id, version) else {
            continue;
        };
        if cur.interface_digest != s.interface.digest {
            // Another skill with the same id stands in `current`: duplicate_skill.
            continue;
        }
        let recorded = baseline.skill_versions(id);
        let manifest = s.manifest_path;
        let at = || manifest_location(manifest, ManifestLine::SkillVersion);
        if let Some(rec) = baseline.skill(id, version) {
            if rec.interface_digest == cur.interface_digest {
                continue;
            }
            let d = skill_diff(rec, baseline, cur, current);
            let step = d.required.max(Step::Minor);
            let next = suggest(&recorded, version, step);
            findings.push(
                Finding::new(
                    Code::ImmutabilityViolation,
                    format!(
                        "skill {id} version {version} is recorded in skillbundle.lock with interface_digest {}, but its interface now has digest {} ({}); a published skill version never changes",
                        rec.interface_digest,
                        cur.interface_digest,
                        describe(&d, Step::None)
                    ),
                    at(),
                )
                .with_help(if step == Step::Major {
                    format!(
                        "set skill_version to \"{next}\": a MAJOR step, because {}",
                        describe(&d, Step::Major)
                    )
                } else {
                    format!("set skill_version to \"{next}\" (a MINOR step: the interface change is backward compatible)")
                }),
            );
            continue;
        }
        if let Some(problem) = version_problem(&recorded, version) {
            findings.push(
                Finding::new(
                    Code::VersionNotIncreased,
                    format!("skill_version of {id}: {problem}"),
                    at(),
                )
                .with_help(format!(
                    "recorded versions of skill {id}: {}",
                    list_versions(&recorded)
                )),
            );
            continue;
        }
        let predecessor = recorded
            .iter()
            .filter(|v| v.major == version.major && **v < version)
            .max();
        let Some(pred) = predecessor.and_then(|v| baseline.skill(id, *v)) else {
            continue;
        };
        let d = skill_diff(pred, baseline, cur, current);
        if d.required == Step::Major {
            findings.push(
                Finding::new(
                    Code::IncompatibleChange,
                    format!(
                        "skill {id} {} → {version} is a MINOR step, but its interface changed incompatibly: {}",
                        pred.skill_version,
                        describe(&d, Step::Major)
                    ),
                    at(),
                )
                .with_help(format!(
                    "set skill_version to \"{}\" (a MAJOR step), or keep the interface backward compatible",
                    suggest(&recorded, version, Step::Major)
                )),
            );
        }
    }
    findings
}

// ---------------------------------------------------------------------------------------
// The lock update written by `build`.

/// What `build` would record in the lock.
#[derive(Debug, Clone)]
pub struct LockUpdate {
    pub path: PathBuf,
    /// The lock's new content (written with [`crate::release::ledger::write_atomically`]).
    pub ledger: Ledger,
    pub added_schemas: Vec<SchemaKey>,
    pub added_skills: Vec<SkillKey>,
    /// Whether writing `ledger` would change the file (or create it).
    pub changed: bool,
}

/// The lock with every schema and skill version the workspace publishes recorded:
/// existing entries untouched, new ones added.
pub fn lock_update(release: Release) -> Result<LockUpdate, Vec<Finding>> {
    let Release { lock, current } = release;
    let mut ledger = lock.ledger;
    let mut added_schemas = Vec::new();
    let mut added_skills = Vec::new();
    let mut findings = Vec::new();
    let conflict = |c: Conflict| {
        Finding::at_file(
            Code::ImmutabilityViolation,
            format!(
                "{} is recorded with digest {}; refusing to record {}",
                c.what, c.recorded, c.offered
            ),
            &lock.path,
        )
    };
    for (key, entry) in current.schemas {
        match ledger.add_schema(entry) {
            Ok(true) => added_schemas.push(key),
            Ok(false) => {}
            Err(c) => findings.push(conflict(c)),
        }
    }
    for (key, entry) in current.skills {
        match ledger.add_skill(entry) {
            Ok(true) => added_skills.push(key),
            Ok(false) => {}
            Err(c) => findings.push(conflict(c)),
        }
    }
    if !findings.is_empty() {
        return Err(findings);
    }
    let changed = lock.content != Some(ledger.digest());
    Ok(LockUpdate {
        path: lock.path,
        ledger,
        added_schemas,
        added_skills,
        changed,
    })
}

/// The `lock_outdated` finding for `build --locked`.
pub fn outdated(update: &LockUpdate) -> Finding {
    let mut what: Vec<String> = update
        .added_schemas
        .iter()
        .map(|(u, v)| format!("schema {u} {v}"))
        .chain(
            update
                .added_skills
                .iter()
                .map(|(s, v)| format!("skill {s} {v}")),
        )
        .collect();
    let message = if what.is_empty() {
        "skillbundle.lock is not in the form skillbundle writes (was it edited or reformatted?)"
            .to_string()
    } else {
        let n = what.len();
        what.truncate(8);
        format!(
            "skillbundle.lock would change: {n} new entr{} ({}{})",
            if n == 1 { "y" } else { "ies" },
            what.join(", "),
            if n > 8 { ", …" } else { "" }
        )
    };
    Finding::at_file(Code::LockOutdated, message, &update.path).with_help(
        "run `skillbundle build` without --locked and commit the updated skillbundle.lock",
    )
}

// ---------------------------------------------------------------------------------------
// `skillbundle diff`.

/// What a workspace or bundle publishes, for `diff`.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
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
    pub skill_id: String,
    /// `added`, `removed`, `changed`, `unchanged`, or `not_compared` (a side could not
    /// assemble its interface: see the snapshot's findings).
    pub status: &'static str,
    pub old_version: Option<Version>,
    pub new_version: Option<Version>,
    /// The smallest step the skill_version needs.
    pub required: Step,
    /// The step the skill_version took (`None`: it went down, or the skill is new/gone).
    pub actual: Option<Step>,
    pub satisfied: bool,
    /// The version to use when the step does not suffice.
    pub suggested: Option<Version>,
    pub changes: Vec<SkillChange>,
    pub schemas: Vec<SchemaDiff>,
}

/// Every change between two snapshots, per skill.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn new_versions_must_be_higher() {
        let recorded = [v("1.0"), v("1.1"), v("2.0")];
        assert_eq!(version_problem(&recorded, v("1.2")), None);
        assert!(version_problem(&recorded, v("1.1")).is_none()); // recorded: immutability decides
        assert!(version_problem(&[v("1.0"), v("1.2")], v("1.1"))
            .unwrap()
            .contains("use 1.3"));
        assert_eq!(version_problem(&recorded, v("3.0")), None);
        assert!(version_problem(&recorded, v("3.1"))
            .unwrap()
            .contains("use 3.0"));
        assert!(version_problem(&[v("2.0")], v("1.0"))
            .unwrap()
            .contains("use 3.0"));
        assert_eq!(version_problem(&[], v("4.7")), None);
    }

    #[test]
    fn suggestions_clear_every_recorded_version() {
        let recorded = [v("1.0"), v("1.3"), v("2.0")];
        assert_eq!(suggest(&recorded, v("1.0"), Step::Minor), v("1.4"));
        assert_eq!(suggest(&recorded, v("1.0"), Step::Major), v("3.0"));
        assert_eq!(suggest(&[], v("1.0"), Step::Major), v("2.0"));
        assert_eq!(Step::between(v("1.9"), v("1.10")), Some(Step::Minor));
        assert_eq!(Step::between(v("1.9"), v("2.0")), Some(Step::Major));
        assert_eq!(Step::between(v("2.0"), v("1.9")), None);
    }
}
