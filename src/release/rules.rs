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
//! Skill-level rules ([`crate::release::skill_diff`]): a skill needs a new MAJOR when any of its schemas
//! changed incompatibly or took a MAJOR step, a record kind or a response mode was
//! removed, `cancellable` went from true to false, `default_mode` became more powerful
//! (observe_only < recommend_only < execute), or `approval_may_be_required` went from false
//! to true; any other interface change needs at least a MINOR step.
//!
//! The same comparison powers `skillbundle diff` ([`crate::release::diff`]); the lock
//! update `build` writes is [`crate::release::lock_update`]; version arithmetic is
//! [`crate::release::step`].

use crate::finding::{Code, Finding, Location};
use crate::fs::source_file::SourceFile;
use crate::interface::{Document, Role};
use crate::release::candidate::{Candidate, CandidateSchema};
use crate::release::compat::{Change, Direction};
use crate::release::ledger::{Conflict, Ledger, LockFile, SchemaEntry, SchemaKey, SchemaUse};
use crate::release::lock_update::Release;
use crate::release::skill_diff::{compare_entries, describe, show_pointer, skill_diff};
use crate::release::step::{major_step_from, suggest, version_problem, Step};
use crate::wire::version::Version;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// How `check` and `build` use the release ledger.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A previously published bundle to check against, in addition to the lock.
    pub previous: Option<PathBuf>,
    /// `build --locked`: fail with `lock_outdated` instead of updating the lock.
    pub locked: bool,
}

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

/// Where in skill.yaml a version finding points: the value at `pointer`
/// (`/skill_version`, `/input/version`, `/supporting_records/0/version`), placed by the
/// YAML parser ([`crate::wire::yaml::locate`]), whatever the style the manifest is
/// written in (block or flow, comments, quoting).
fn manifest_location(manifest: &Path, pointer: &str) -> Location {
    let loc = Location::file(manifest);
    let Ok(text) = std::fs::read_to_string(manifest) else {
        return loc;
    };
    match crate::wire::yaml::locate(&text, pointer) {
        Some((line, column)) => loc.with_position(line, column),
        None => loc,
    }
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
                    manifest_location(manifest, &format!("{}/version", loaded.pointer)),
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
        let at = || manifest_location(manifest, "/skill_version");
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The position of a version comes from the parser: the value of the field asked
    /// for, not the first line that mentions the URI (a comment, another field) or a
    /// `version:` a few lines on.
    #[test]
    fn a_manifest_location_is_the_value_the_parser_places() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("skill.yaml");
        let text = "\
# urn:x:in schema_uri is the input; version: see below
skill_id: s
skill_version: \"1.2\"
input:  {file: in.json, schema_uri: \"urn:x:in\", version: \"1.0\"}
output:
  version: \"2.0\"
  schema_uri: \"urn:x:in\"
  file: out.json
supporting_records:
  - {kind: k, file: r.json,
     schema_uri: \"urn:x:r\", version: \"1.0\"}
";
        std::fs::write(&manifest, text).unwrap();
        let at = |pointer: &str| {
            let loc = manifest_location(&manifest, pointer);
            (loc.line, loc.column)
        };
        assert_eq!(at("/skill_version"), (Some(3), Some(16)));
        assert_eq!(at("/input/version"), (Some(4), Some(58)));
        assert_eq!(at("/output/version"), (Some(6), Some(12)));
        assert_eq!(at("/supporting_records/0/version"), (Some(11), Some(38)));
        // Nothing there: the file alone.
        assert_eq!(at("/supporting_records/1/version"), (None, None));
    }
}
