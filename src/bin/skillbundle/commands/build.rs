//! `skillbundle build`: check a workspace, write its bundle and record the release in
//! the lock.

use super::{count, progress, signing_key, skill_lines};
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::build::pipeline;
use skillbundle::bundle;
use skillbundle::crypto::keys::SigningKeyPair;
use skillbundle::finding::Finding;
use skillbundle::interface::binding::Binding;
use skillbundle::release::rules;
use skillbundle::wire::version::Version;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Check a workspace and write its bundle.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle build example-skills\n  skillbundle build . --out /tmp/release\n  skillbundle build . --sign-key keys/release.key\n  skillbundle build . --sign-key keys/old.key --sign-key keys/new.key   (key rotation)\n  skillbundle build . --locked                       in CI: the committed lock must already record this release\n  skillbundle build . --previous dist/old.tar.gz     also check against a published bundle\n\nSigned bundles stay reproducible: Ed25519 signatures are deterministic.\n\nNothing is written unless every check passes; the bundle is written to a temporary file and renamed into place, so an earlier bundle at the same path is never damaged. New schema and skill versions are then recorded in skillbundle.lock (append-only).\n\nA bundle's name and version identify a release: an existing bundle of the same name and version is\nreplaced only by the same content (the same bytes, or signed anew), never by other content without\n--force (release_immutable), and a signed one never by an unsigned build (signature_downgrade). A\n`dist` link that leads out of the workspace is refused (path_invalid) unless --out names it."
)]
pub struct Args {
    /// The workspace directory (holds skillbundle.yaml; searched for upward from here).
    #[arg(default_value = ".")]
    workspace: PathBuf,
    /// Where to write `<name>-<version>.tar.gz` [default: WORKSPACE/dist].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Sign manifest.json with this Ed25519 private key (PKCS#8 PEM). Repeat the flag
    /// to sign with several keys, e.g. the old and the new one during a rotation.
    #[arg(long = "sign-key", value_name = "FILE", value_parser = signing_key)]
    sign_key: Vec<SigningKeyPair>,
    /// Fail with lock_outdated, writing nothing, if skillbundle.lock would change.
    #[arg(long)]
    locked: bool,
    /// A previously published bundle: its versions are checked like the lock's.
    #[arg(long, value_name = "BUNDLE")]
    previous: Option<PathBuf>,
    /// Also write a signed release statement valid for this long (e.g. 30d) beside the
    /// bundle, NAME-VERSION.release.json: agents with --max-age refuse a release whose
    /// statement is stale, so a frozen or replaying registry is found out. Building again
    /// re-issues it (the bundle itself stays byte-identical). Needs --sign-key.
    #[arg(long, value_name = "DURATION", value_parser = super::duration, requires = "sign_key")]
    expires: Option<std::time::Duration>,
    /// Replace an existing bundle of the same name and version that has other content
    /// (only for one that was never published; a signed one is never replaced by an
    /// unsigned build).
    #[arg(long)]
    force: bool,
}

/// `build --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    bundle: Option<&'a Path>,
    /// The release statement written beside the bundle (`--expires`).
    #[serde(skip_serializing_if = "Option::is_none")]
    release: Option<&'a Path>,
    lock: Option<LockReport<'a>>,
    signed_by: &'a [String],
    skills: Vec<Binding>,
    findings: &'a [Finding],
}

/// What the build recorded in skillbundle.lock.
#[derive(Serialize)]
struct LockReport<'a> {
    path: &'a Path,
    updated: bool,
    added_schemas: Vec<AddedSchema<'a>>,
    added_skills: Vec<AddedSkill<'a>>,
}

#[derive(Serialize)]
struct AddedSchema<'a> {
    schema_uri: &'a str,
    version: Version,
}

#[derive(Serialize)]
struct AddedSkill<'a> {
    skill_id: &'a str,
    skill_version: Version,
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let ledger = rules::Options {
        previous: args.previous,
        locked: args.locked,
    };
    let workspace =
        skillbundle::build::workspace::find_root(&args.workspace).unwrap_or(args.workspace);
    let destination = bundle::destination::Permission {
        out_named: args.out.is_some(),
        force: args.force,
    };
    build(
        format,
        &workspace,
        args.out,
        args.sign_key,
        args.expires,
        ledger,
        destination,
    )
}

fn build(
    format: Format,
    workspace: &Path,
    out: Option<PathBuf>,
    sign_keys: Vec<SigningKeyPair>,
    expires: Option<std::time::Duration>,
    ledger: rules::Options,
    destination: bundle::destination::Permission,
) -> ExitCode {
    let out = out.unwrap_or_else(|| workspace.join("dist"));
    let release_keys = sign_keys.clone();
    let signed_by: Vec<String> = sign_keys
        .iter()
        .map(|k| k.public_key().kid().to_string())
        .collect();
    let (observer, bar) = progress(format);
    let options = pipeline::BuildOptions {
        sign_keys,
        progress: observer,
        evolution: ledger,
        destination,
    };
    let built = pipeline::build(workspace, &out, &options);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let checked = &built.checked;
    // The release statement, beside a bundle that was written: real time, never
    // SOURCE_DATE_EPOCH (it says when the release was current, not what it contains).
    let mut release = None;
    if let (Some(lifetime), Some(path)) = (expires, built.bundle.as_deref()) {
        let issued = skillbundle::bundle::release_statement::now();
        match skillbundle::build::release_statement::write_beside(
            path,
            &release_keys,
            issued,
            lifetime,
        ) {
            Ok(written) => release = Some(written),
            Err(findings) => {
                return super::fail_with(
                    format,
                    &findings,
                    "the bundle was written, the release statement was not",
                )
            }
        }
    }
    let lock = built.lock.as_ref().map(|l| LockReport {
        path: &l.path,
        updated: l.changed && checked.ok(),
        added_schemas: l
            .added_schemas
            .iter()
            .map(|(u, v)| AddedSchema {
                schema_uri: u,
                version: *v,
            })
            .collect(),
        added_skills: l
            .added_skills
            .iter()
            .map(|(s, v)| AddedSkill {
                skill_id: s,
                skill_version: *v,
            })
            .collect(),
    });
    let doc = Report {
        ok: checked.ok() && built.bundle.is_some(),
        bundle: built.bundle.as_deref(),
        release: release.as_deref(),
        lock,
        signed_by: &signed_by,
        skills: skill_lines(checked),
        findings: &checked.findings,
    };
    render::report(format, &checked.findings, &doc, || {
        let mut lines = vec![format!(
            "built {} ({}, {})",
            built.bundle.as_deref().unwrap_or(Path::new("?")).display(),
            count(checked.skills.len()),
            if signed_by.is_empty() {
                "unsigned".to_string()
            } else {
                format!("signed by {}", signed_by.join(", "))
            }
        )];
        if let Some(path) = doc.release {
            lines.push(format!("wrote the release statement {}", path.display()));
        }
        lines.extend(doc.skills.iter().map(super::skill_line));
        if let Some(l) = &built.lock {
            let n = l.added_schemas.len() + l.added_skills.len();
            lines.push(if l.changed {
                format!(
                    "recorded {n} new entr{} in {}",
                    if n == 1 { "y" } else { "ies" },
                    l.path.display()
                )
            } else {
                format!("{} is up to date", l.path.display())
            });
        }
        lines
    })
}
