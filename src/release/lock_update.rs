//! The lock update `build` writes: every schema and skill version the workspace publishes
//! recorded in `skillbundle.lock`, existing entries untouched (draft, "Schema Evolution and
//! Compatibility": a published version and digest are immutable, so the lock only grows),
//! and the `lock_outdated` finding of `build --locked`.

use crate::finding::{Code, Finding};
use crate::release::ledger::{Conflict, Ledger, LockFile, SchemaKey, SkillKey};
use std::path::PathBuf;

/// What the release rules read, kept for `build` to record: the lock as found on disk
/// and the ledger the workspace would publish. [`lock_update`] takes it, so a build
/// reads the lock and computes the workspace's ledger once.
#[derive(Debug, Clone)]
pub struct Release {
    pub(crate) lock: LockFile,
    pub(crate) current: Ledger,
}

/// What `build` would record in the lock.
#[derive(Debug, Clone)]
pub struct LockUpdate {
    /// The lock file.
    pub path: PathBuf,
    /// The lock's new content (written with [`crate::release::ledger::write_atomically`]).
    pub ledger: Ledger,
    /// The schema versions the build adds.
    pub added_schemas: Vec<SchemaKey>,
    /// The skill versions the build adds.
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
