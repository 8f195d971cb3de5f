//! The pipeline: workspace in, checked and digested interfaces out (and a bundle on build).
//!
//! Each skill goes through the same steps independently — read its manifest, read and
//! check its schemas, assemble and validate its document — so skills run in parallel and
//! a problem in one never hides problems in another. The checks that need every skill at
//! once (duplicate ids, one content per schema_uri + version) run after. `build` writes
//! nothing unless every check passed.

use crate::build::checked_skill::{CheckedSkill, LoadedSchema};
use crate::build::examples;
use crate::build::manifest::SchemaSource;
use crate::build::previous_bundle;
use crate::build::shared_schemas;
use crate::build::workspace::{self, SkillSource, Workspace};
use crate::bundle;
use crate::card::a2a;
use crate::finding::{self, Code, Finding, Location};
use crate::interface::binding::Binding;
use crate::interface::packaged_schema::InterfaceSchema;
use crate::interface::Role;
use crate::interface::{Document, SchemaReference, DESCRIBE_SKILL};
use crate::release::candidate::Candidate;
use crate::release::ledger::Ledger;
use crate::release::{diff, lock_update, rules};
use crate::schema::dialect::DEFAULT_DIALECT;
use crate::schema::{lint, validator};
use crate::wire::digest::Digest;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The result of checking a workspace.
#[derive(Debug)]
pub struct Checked {
    /// The workspace, when its manifest could be read.
    pub workspace: Option<Workspace>,
    /// Skills whose interface was assembled, sorted by skill_id. A skill whose only
    /// problem is a failing example is here (its interface is what it is); `ok()` tells
    /// whether anything failed.
    pub skills: Vec<CheckedSkill>,
    /// Skills whose interface could not be assembled: the skill_id when its manifest
    /// could be read, else `None` (one per skill directory).
    pub unassembled: Vec<Option<String>>,
    /// What the release rules read, for `build` to record (`None` when they did not run
    /// or could not read the lock).
    pub release: Option<lock_update::Release>,
    /// Every finding, sorted.
    pub findings: Vec<Finding>,
}

impl Checked {
    /// No finding fails the run (warnings alone do not).
    pub fn ok(&self) -> bool {
        !finding::any_error(&self.findings)
    }
}

/// Run every check on the workspace at `root`. Never writes anything.
pub fn check(root: &Path) -> Checked {
    check_with(root, &Progress::default(), &rules::Options::default())
}

/// Observes a run: called with (skills done, total skills) as each skill finishes its
/// own checks, from whichever thread checked it. The library never prints; the binary
/// turns this into a progress bar.
#[derive(Clone, Default)]
pub struct Progress(Option<std::sync::Arc<dyn Fn(usize, usize) + Send + Sync>>);

impl Progress {
    /// A progress observer calling `f(done, total)`.
    pub fn new(f: impl Fn(usize, usize) + Send + Sync + 'static) -> Self {
        Progress(Some(std::sync::Arc::new(f)))
    }

    fn report(&self, done: usize, total: usize) {
        if let Some(f) = &self.0 {
            f(done, total);
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(observed)"
        } else {
            "Progress(none)"
        })
    }
}

/// [`check`], reporting progress, with options for the release-ledger rules
/// (`--previous`).
pub fn check_with(root: &Path, progress: &Progress, options: &rules::Options) -> Checked {
    // The lock is read before the skills, so that each schema it records is held once:
    // a checked skill takes the lock's bytes for a schema the lock records with the same
    // digest (measured at 10,000 skills with large schemas: 511 MB of heap peak when the
    // workspace's copies were dropped only after every skill was checked).
    let lock = Ledger::load(root);
    let mut checked = check_skills(root, progress, lock.as_ref().ok().map(|l| &l.ledger));
    if checked.workspace.is_some() {
        // Release ledger (skillbundle.lock, --previous): see crate::release::rules.
        let previous = match (&lock, &options.previous) {
            (Ok(_), Some(path)) => Some((path.as_path(), previous_bundle::read_bundle(path))),
            _ => None,
        };
        let candidates: Vec<Candidate<'_>> =
            checked.skills.iter().map(CheckedSkill::candidate).collect();
        let (findings, release) = rules::check(lock, previous, &candidates);
        checked.findings.extend(findings);
        checked.release = release;
        // Judged once everything else passes: a skill that failed may have failed for
        // its id (a reserved or duplicate one, an unreadable manifest), and one cause is
        // reported once, not again as a removal.
        if let (Some(ws), Some(release), false) = (
            &checked.workspace,
            &checked.release,
            finding::any_error(&checked.findings),
        ) {
            let present: std::collections::BTreeSet<&str> = checked
                .skills
                .iter()
                .map(|s| s.interface.skill_id.as_str())
                .chain(checked.unassembled.iter().flatten().map(String::as_str))
                .collect();
            let removed = rules::removed_skills(
                release,
                &present,
                &ws.manifest.removed_skills,
                &ws.root.join(workspace::WORKSPACE_FILE),
            );
            checked.findings.extend(removed);
        }
        finding::sort(&mut checked.findings);
        checked.findings.dedup();
    }
    checked
}

/// What a workspace or bundle publishes, for `diff`: a directory is checked as a
/// workspace as it is (without the release rules, which `diff` reports itself), a file
/// is read as a bundle. A workspace with failing skills is compared as far as it can be
/// (see [`diff::Snapshot`]); only a workspace that cannot be opened, or a bundle
/// that cannot be read, is an error.
pub fn snapshot(path: &Path) -> Result<diff::Snapshot, Vec<Finding>> {
    if !path.is_dir() {
        return previous_bundle::read_bundle(path).map(|ledger| diff::Snapshot {
            ledger,
            ..diff::Snapshot::default()
        });
    }
    let checked = check_skills(path, &Progress::default(), None);
    if checked.workspace.is_none() {
        return Err(checked.findings);
    }
    Ok(diff::Snapshot {
        ledger: rules::workspace_ledger(checked.skills.iter().map(|s| &s.interface)),
        findings: checked
            .findings
            .into_iter()
            .map(|mut f| {
                f.severity = finding::Severity::Warning;
                f
            })
            .collect(),
        uncompared: checked.unassembled.iter().flatten().cloned().collect(),
        unreadable_skill: checked.unassembled.iter().any(Option::is_none),
    })
}

/// Every check but the release rules: each skill's own, then those across skills.
/// A schema the lock records (`recorded`) is held as the lock's bytes, not twice.
fn check_skills(root: &Path, progress: &Progress, recorded: Option<&Ledger>) -> Checked {
    let workspace = match Workspace::open(root) {
        Ok(w) => w,
        Err(findings) => {
            return Checked {
                workspace: None,
                skills: Vec::new(),
                unassembled: Vec::new(),
                release: None,
                findings,
            }
        }
    };
    let schema = match InterfaceSchema::packaged() {
        Ok(s) => s,
        Err(e) => {
            return Checked {
                workspace: Some(workspace),
                skills: Vec::new(),
                unassembled: Vec::new(),
                release: None,
                findings: vec![Finding::from(&e)],
            }
        }
    };
    let total = workspace.skill_dirs.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    progress.report(0, total);
    // One regex cache for the whole run: skills repeat the same patterns.
    let patterns = validator::PatternCache::new();
    let results: Vec<(SkillOutcome, Vec<Finding>)> = workspace
        .skill_dirs
        .par_iter()
        .map(|dir| {
            let result = check_skill(&workspace, schema, &patterns, recorded, dir);
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress.report(n, total);
            result
        })
        .collect();
    let mut findings = Vec::new();
    let mut skills = Vec::new();
    let mut unassembled = Vec::new();
    for (skill, f) in results {
        findings.extend(f);
        match skill {
            Ok(skill) => skills.push(skill),
            Err(id) => unassembled.push(id),
        }
    }
    unassembled.sort();
    findings.extend(cross_skill(&skills));
    skills.sort_by(|a, b| a.interface.skill_id.cmp(&b.interface.skill_id));
    finding::sort(&mut findings);
    // A shared schema embedded by several skills reports its problems once.
    findings.dedup();
    Checked {
        workspace: Some(workspace),
        skills,
        unassembled,
        release: None,
        findings,
    }
}

/// One skill's checks: assembled, or not (with its skill_id when its manifest was read).
type SkillOutcome = Result<CheckedSkill, Option<String>>;

fn check_skill(
    ws: &Workspace,
    schema: &InterfaceSchema,
    patterns: &validator::PatternCache,
    recorded: Option<&Ledger>,
    dir: &Path,
) -> (SkillOutcome, Vec<Finding>) {
    let skill = match workspace::read_skill(&ws.root, dir) {
        Ok(s) => s,
        Err(f) => return (Err(None), vec![f]),
    };
    let unassembled = || Err(Some(skill.manifest.skill_id.clone()));
    let m = &skill.manifest;
    let at_manifest = || Location::file(&skill.manifest_path);
    let mut findings = workspace::unknown_folders(&skill);
    if m.skill_id == DESCRIBE_SKILL {
        findings.push(Finding::new(
            Code::DuplicateSkill,
            format!("skill_id {DESCRIBE_SKILL:?} is reserved: every agent advertises it for interface retrieval"),
            at_manifest(),
        ).with_help("choose another skill_id"));
    } else if !crate::fs::sandbox::is_safe_name(&m.skill_id) || m.skill_id.len() > 64 {
        findings.push(Finding::new(
            Code::ManifestInvalid,
            format!(
                "skill_id {:?} cannot name a bundle file: use at most 64 letters, digits, '.', '_' and '-', starting with a letter or digit",
                m.skill_id
            ),
            at_manifest(),
        ));
    }
    let mut kinds = std::collections::HashSet::new();
    for (i, rec) in m.supporting_records.iter().enumerate() {
        if rec.kind.is_empty() {
            findings.push(Finding::new(
                Code::ManifestInvalid,
                format!("supporting_records[{i}].kind is empty"),
                at_manifest(),
            ));
        } else if rec.kind == m.skill_id {
            findings.push(Finding::new(
                Code::ManifestInvalid,
                format!("supporting_records[{i}].kind {:?} equals the skill_id: a record Artifact would be confused with the primary result", rec.kind),
                at_manifest(),
            ).with_help("give the record kind its own name, such as \"<skill>-observation\""));
        } else if !kinds.insert(rec.kind.as_str()) {
            findings.push(Finding::new(
                Code::ManifestInvalid,
                format!("supporting_records[{i}].kind {:?} is declared twice; kinds must be unique within a skill", rec.kind),
                at_manifest(),
            ));
        }
    }

    // Each schema's role, kind, source, the manifest field that declares it, and that
    // field's JSON Pointer in skill.yaml.
    type Declared = (Role, Option<String>, SchemaSource, String, String);
    let mut sources: Vec<Declared> = vec![
        (
            Role::Input,
            None,
            m.input.clone(),
            "input".into(),
            "/input".into(),
        ),
        (
            Role::Output,
            None,
            m.output.clone(),
            "output".into(),
            "/output".into(),
        ),
    ];
    for (i, rec) in m.supporting_records.iter().enumerate() {
        sources.push((
            Role::Record,
            Some(rec.kind.clone()),
            rec.source(),
            format!("supporting_records[{i}]"),
            format!("/supporting_records/{i}"),
        ));
    }
    let mut loaded = Vec::new();
    let mut validators = Vec::new();
    for (role, kind, source, field, pointer) in sources {
        match load_schema(
            ws,
            &skill,
            patterns,
            role,
            kind,
            &source,
            &field,
            pointer,
            &mut findings,
        ) {
            Ok((mut l, v)) => {
                if let Some(ledger) = recorded {
                    ledger.share(&mut l.reference);
                }
                loaded.push(l);
                validators.push(v);
            }
            Err(mut f) => findings.append(&mut f),
        }
    }
    if finding::any_error(&findings) {
        return (unassembled(), findings);
    }
    // An example's failure fails the run but not the interface, which `diff` and the
    // release rules still compare.
    let mut example_findings = run_examples(ws, &skill, &loaded, &validators);
    drop(validators);

    let references = loaded.iter().map(|l| l.reference.clone()).collect();
    let Some(interface) = m.assemble(references) else {
        // Unreachable: without an error, the input and output schemas were loaded.
        findings.push(Finding::new(
            Code::InterfaceInvalid,
            "the skill has no input or output schema to assemble",
            at_manifest(),
        ));
        return (unassembled(), findings);
    };
    for problem in interface.check(schema) {
        findings.push(Finding::new(
            Code::InterfaceInvalid,
            format!(
                "the assembled Skill Interface Document is invalid at {}: {}",
                if problem.pointer.is_empty() {
                    "/"
                } else {
                    &problem.pointer
                },
                problem.message
            ),
            at_manifest(),
        ));
    }
    if finding::any_error(&findings) {
        findings.append(&mut example_findings);
        return (unassembled(), findings);
    }
    findings.append(&mut example_findings);
    let mut schemas = loaded;
    for s in &mut schemas {
        s.source.release();
    }
    (
        Ok(CheckedSkill {
            source: skill,
            schemas,
            interface,
        }),
        findings,
    )
}

/// Read one role's schema, run the per-schema checks on it and compile its validator.
/// The lint's warnings go to `warnings`; its errors fail the schema like any other.
#[allow(clippy::too_many_arguments)]
fn load_schema(
    ws: &Workspace,
    skill: &SkillSource,
    patterns: &validator::PatternCache,
    role: Role,
    kind: Option<String>,
    source: &SchemaSource,
    field: &str,
    pointer: String,
    warnings: &mut Vec<Finding>,
) -> Result<(LoadedSchema, validator::Validator), Vec<Finding>> {
    let (real, display) =
        workspace::resolve_schema_path(ws, skill, source, field).map_err(|f| vec![f])?;
    let limits = &ws.manifest.limits;
    let (mut value, file) =
        workspace::read_value(&real, &display, limits.max_schema_bytes, limits.max_depth)
            .map_err(|f| vec![f])?;
    // Shared schemas (file `$ref`s inside the workspace) are embedded before any check,
    // so every check and the digest see the inline result.
    let shared = shared_schemas::embed(&mut value, &file, &real, &ws.root, limits)?;
    let dialect = source
        .dialect
        .clone()
        .unwrap_or_else(|| DEFAULT_DIALECT.to_string());
    // Limits, dialect, closure, then compilation: the one governance path
    // (`schema::govern`) every schema takes, from a workspace or from a bundle.
    let locate = |findings: Vec<Finding>| -> Vec<Finding> {
        findings
            .into_iter()
            .map(|mut f| {
                let pointer = f.location.pointer.take();
                f.location = match pointer {
                    Some(p) => shared.locate(&p).unwrap_or_else(|| file.locate(&p)),
                    None => Location::file(&skill.manifest_path),
                };
                f
            })
            .collect()
    };
    let validator = crate::schema::govern(&value, &dialect, limits, patterns).map_err(locate)?;
    // The strict lint (authoring only: an agent loading a bundle does not apply it).
    let linted = locate(lint::check(&value, &ws.manifest.lint));
    if finding::any_error(&linted) {
        return Err(linted);
    }
    warnings.extend(linted);
    let reference = SchemaReference::new(
        role,
        kind,
        source.schema_uri.clone(),
        source.version,
        dialect,
        &value,
    );
    Ok((
        LoadedSchema {
            reference,
            source: file,
            field: field.to_string(),
            pointer,
        },
        validator,
    ))
}

/// Run every example of a skill against its compiled schemas.
/// `validators[i]` is the compiled `loaded[i]`.
fn run_examples(
    ws: &Workspace,
    skill: &SkillSource,
    loaded: &[LoadedSchema],
    validators: &[validator::Validator],
) -> Vec<Finding> {
    let kinds: Vec<&str> = loaded
        .iter()
        .filter_map(|l| l.reference.kind.as_deref())
        .collect();
    let (found, mut findings) = examples::discover(&skill.dir, &kinds);
    if found.is_empty() && ws.manifest.require_examples {
        findings.push(
            Finding::at_file(
                Code::FixtureFailed,
                "the skill has no examples, and skillbundle.yaml sets require_examples: true",
                &skill.dir.join("examples"),
            )
            .with_help("add at least one example, such as examples/input/valid/<name>.json"),
        );
    }
    let limits = &ws.manifest.limits;
    for example in &found {
        let schema = loaded
            .iter()
            .position(|l| l.reference.role == example.role && l.reference.kind == example.kind);
        if let Some(i) = schema {
            findings.extend(examples::run(
                &ws.root,
                example,
                &validators[i],
                limits.max_example_bytes,
                limits.max_depth,
            ));
        }
    }
    findings
}

/// Checks across skills: unique skill ids, and one content per schema_uri + version.
fn cross_skill(skills: &[CheckedSkill]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut ids: BTreeMap<&str, &CheckedSkill> = BTreeMap::new();
    for skill in skills {
        let id = skill.interface.skill_id.as_str();
        if let Some(first) = ids.get(id) {
            findings.push(
                Finding::new(
                    Code::DuplicateSkill,
                    format!(
                        "skill_id {id:?} is already declared by {}; an Agent Card advertises one version per skill_id",
                        first.source.manifest_path.display()
                    ),
                    Location::file(&skill.source.manifest_path),
                )
                .with_help("to serve two incompatible versions at once, give the new one a distinct skill_id"),
            );
        } else {
            ids.insert(id, skill);
        }
    }
    let mut by_identity: BTreeMap<(&str, String), &LoadedSchema> = BTreeMap::new();
    let mut ordered: Vec<&LoadedSchema> = skills.iter().flat_map(|s| &s.schemas).collect();
    ordered.sort_by(|a, b| a.source.display.cmp(&b.source.display));
    for loaded in ordered {
        let r = &loaded.reference;
        let key = (r.schema_uri.as_str(), r.version.to_string());
        match by_identity.get(&key) {
            Some(first)
                if first.reference.digest != r.digest || first.reference.dialect != r.dialect =>
            {
                findings.push(
                    Finding::new(
                        Code::SchemaConflict,
                        format!(
                            "schema_uri {:?} version {} has different content here ({}) than in {} ({})",
                            r.schema_uri,
                            r.version,
                            r.digest,
                            first.source.display.display(),
                            first.reference.digest
                        ),
                        Location::file(&loaded.source.display),
                    )
                    .with_help(format!(
                        "a schema_uri + version names exactly one schema: if this is another schema than the one in {}, give it a schema_uri of its own; if it revises that one, give it a new version",
                        first.source.display.display()
                    )),
                );
            }
            Some(_) => {}
            None => {
                by_identity.insert(key, loaded);
            }
        }
    }
    findings
}

/// The extension advertisement and AgentSkill entries for checked skills.
pub fn card_fragment(skills: &[CheckedSkill]) -> serde_json::Value {
    let advertised: Vec<Binding> = skills.iter().map(|s| s.interface.binding()).collect();
    let entries: Vec<a2a_types::AgentSkill> = skills
        .iter()
        .map(|s| a2a::agent_skill(&s.interface.skill_id, &s.source.manifest.card))
        .collect();
    a2a::card_fragment(&a2a::extension(&advertised), &entries)
}

/// The outcome of a build.
#[derive(Debug)]
pub struct Built {
    /// What checking the workspace found.
    pub checked: Checked,
    /// The bundle written, when every check passed.
    pub bundle: Option<PathBuf>,
    /// The lock update computed after the checks passed (written when `changed`, unless
    /// `--locked`).
    pub lock: Option<lock_update::LockUpdate>,
}

/// What `build` does besides checking and writing.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Sign manifest.json with each of these keys (several for key rotation).
    pub sign_keys: Vec<crate::crypto::keys::SigningKeyPair>,
    /// Observes the per-skill checks.
    pub progress: Progress,
    /// The release-ledger options (`--locked`, `--previous`).
    pub evolution: rules::Options,
    /// What an existing bundle at the destination may be replaced by.
    pub destination: bundle::destination::Permission,
}

/// What `build` would refuse about writing the bundle of a checked workspace (every
/// check passed) into `out_dir` (`release_immutable`, `path_invalid`), so that `check`
/// passes only what `build` accepts. A signature downgrade is not judged: `check` takes
/// no keys.
pub fn destination_findings(
    checked: &Checked,
    out_dir: &Path,
    permission: bundle::destination::Permission,
) -> Vec<Finding> {
    let Some(ws) = checked.workspace.as_ref().filter(|_| checked.ok()) else {
        return Vec::new();
    };
    let Ok(schema) = InterfaceSchema::packaged() else {
        return Vec::new();
    };
    let interfaces: Vec<&Document> = checked.skills.iter().map(|s| &s.interface).collect();
    let contents = bundle::contents(
        &ws.manifest.bundle.name,
        &ws.manifest.bundle.version,
        schema.digest(),
        &interfaces,
        &card_fragment(&checked.skills),
    );
    let dest = out_dir.join(ws.archive_name());
    bundle::destination::check(
        &ws.root,
        out_dir,
        &dest,
        &contents.manifest,
        None,
        permission,
    )
    .err()
    .into_iter()
    .collect()
}

/// Check the workspace and, when every check passes, write the bundle into `out_dir`.
/// The lock is updated only after the bundle is written; with `locked`, a lock that
/// would change fails the build before anything is written.
pub fn build(root: &Path, out_dir: &Path, options: &BuildOptions) -> Built {
    // What an earlier, killed build left: lock temporaries beside the lock, bundle
    // temporaries in the output directory.
    bundle::remove_stale_temporaries(root);
    bundle::remove_stale_temporaries(out_dir);
    let mut checked = check_with(root, &options.progress, &options.evolution);
    if !checked.ok() {
        return Built {
            checked,
            bundle: None,
            lock: None,
        };
    }
    let ws = checked
        .workspace
        .as_ref()
        .expect("a checked workspace was opened");
    // check() already verified the packaged schema; this only reads its digest.
    let schema_digest: Digest = match InterfaceSchema::packaged() {
        Ok(s) => s.digest().clone(),
        Err(e) => {
            checked.findings.push(Finding::from(&e));
            return Built {
                checked,
                bundle: None,
                lock: None,
            };
        }
    };
    let release = checked
        .release
        .take()
        .expect("the release rules ran: every check passed");
    let lock = match lock_update::lock_update(release) {
        Ok(u) => u,
        Err(f) => {
            checked.findings.extend(f);
            return Built {
                checked,
                bundle: None,
                lock: None,
            };
        }
    };
    if options.evolution.locked && lock.changed {
        checked.findings.push(lock_update::outdated(&lock));
        return Built {
            checked,
            bundle: None,
            lock: Some(lock),
        };
    }
    let interfaces: Vec<&Document> = checked.skills.iter().map(|s| &s.interface).collect();
    let mut contents = bundle::contents(
        &ws.manifest.bundle.name,
        &ws.manifest.bundle.version,
        &schema_digest,
        &interfaces,
        &card_fragment(&checked.skills),
    );
    bundle::sign::sign(&mut contents, &options.sign_keys);
    let dest = out_dir.join(ws.archive_name());
    let signed = !options.sign_keys.is_empty();
    if let Err(f) = bundle::destination::check(
        root,
        out_dir,
        &dest,
        &contents.manifest,
        Some(signed),
        options.destination,
    ) {
        checked.findings.push(f);
        return Built {
            checked,
            bundle: None,
            lock: Some(lock),
        };
    }
    let path = match bundle::write_atomically(&dest, &contents.files) {
        Ok(path) => path,
        Err(e) => {
            checked.findings.push(Finding::at_file(
                Code::Io,
                format!("cannot write the bundle: {e}"),
                &dest,
            ));
            return Built {
                checked,
                bundle: None,
                lock: Some(lock),
            };
        }
    };
    if lock.changed {
        if let Err(e) = crate::release::ledger::write_atomically(&lock.path, &lock.ledger) {
            checked.findings.push(Finding::at_file(
                Code::Io,
                format!("the bundle was written, but the lock file could not be: {e}"),
                &lock.path,
            ));
        }
    }
    Built {
        checked,
        bundle: Some(path),
        lock: Some(lock),
    }
}
