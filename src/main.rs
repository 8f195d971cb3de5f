//! The `skillbundle` command: parses flags, calls the library, renders findings.
//!
//! Everything that decides anything lives in the library; this file only turns its data
//! into text (human or JSON) and exit statuses: 0 all good, 1 the input failed a check,
//! 2 usage or I/O error.

mod render;

use clap::{Parser, Subcommand, ValueEnum};
use render::Format;
use serde_json::{json, Value};
use skillbundle::finding::{Code, Finding, Location};
use skillbundle::{bundle, evolution, pipeline};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "skillbundle",
    version,
    about = "Release pipeline for schema-governed A2A skills",
    long_about = "skillbundle reads per-skill YAML manifests and JSON Schemas, checks them strictly, \
assembles one Skill Interface Document per skill (draft \"schema interfaces\", interface version 1.0), \
digests it with RFC 8785 (JCS) + SHA-256, and writes a reproducible bundle that agents load at start-up.",
    after_help = "Examples:\n  skillbundle build example-skills          check, then write example-skills/dist/<name>-<version>.tar.gz\n  skillbundle build --locked .              what CI runs: fail if skillbundle.lock would change\n  skillbundle check example-skills          run every check, write nothing\n  skillbundle diff old.tar.gz .             every change since a release, and the version steps it needs\n  skillbundle inspect dist/bundle.tar.gz    list skills, versions and digests of a bundle\n  skillbundle digest schemas/input.json     print a schema's sha256: digest\n\nExit status: 0 all good, 1 the input failed a check, 2 usage or I/O error."
)]
struct Cli {
    /// Output format: `human` for people, `json` for one machine-readable document on stdout.
    #[arg(long, value_enum, default_value_t = FormatArg::Human, global = true)]
    format: FormatArg,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Human,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Check a workspace and write its bundle.
    #[command(
        after_help = "Examples:\n  skillbundle build example-skills\n  skillbundle build . --out /tmp/release\n  skillbundle build . --locked                       in CI: the committed lock must already record this release\n  skillbundle build . --previous dist/old.tar.gz     also check against a published bundle\n\nNothing is written unless every check passes; the bundle is written to a temporary file and renamed into place, so an earlier bundle at the same path is never damaged. New schema and skill versions are then recorded in skillbundle.lock (append-only)."
    )]
    Build {
        /// The workspace directory (holds skillbundle.yaml).
        #[arg(default_value = ".")]
        workspace: PathBuf,
        /// Where to write `<name>-<version>.tar.gz` [default: WORKSPACE/dist].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Fail with lock_outdated, writing nothing, if skillbundle.lock would change.
        #[arg(long)]
        locked: bool,
        /// A previously published bundle: its versions are checked like the lock's.
        #[arg(long, value_name = "BUNDLE")]
        previous: Option<PathBuf>,
    },
    /// Run every check `build` runs, and write nothing.
    #[command(
        after_help = "Examples:\n  skillbundle check example-skills\n  skillbundle check . --previous releases/net-skills-1.4.0.tar.gz\n\nThe release rules compare the workspace with skillbundle.lock (and the --previous bundle): a published version never changes, new versions are higher, and a breaking change needs a MAJOR step."
    )]
    Check {
        /// The workspace directory (holds skillbundle.yaml).
        #[arg(default_value = ".")]
        workspace: PathBuf,
        /// A previously published bundle: its versions are checked like the lock's.
        #[arg(long, value_name = "BUNDLE")]
        previous: Option<PathBuf>,
    },
    /// Show every change between two workspaces or bundles, and the version steps they need.
    #[command(
        after_help = "Examples:\n  skillbundle diff releases/net-skills-1.4.0.tar.gz .\n  skillbundle diff old-checkout/ new-checkout/ --format json | jq '.skills[] | select(.satisfied | not)'\n\nEach OLD and NEW is a workspace directory or a bundle (.tar.gz). Input schemas may only widen (accept more); output and record schemas may only narrow. A change the rules cannot decide counts as breaking. Exit status 0 when the comparison ran, whatever it found."
    )]
    Diff {
        /// The earlier workspace or bundle.
        old: PathBuf,
        /// The later workspace or bundle.
        new: PathBuf,
    },
    /// Show the skills, versions and digests in a bundle.
    #[command(
        after_help = "Examples:\n  skillbundle inspect example-skills/dist/example-network-skills-0.1.0.tar.gz\n  skillbundle inspect --format json bundle.tar.gz | jq '.skills[].interface_digest'"
    )]
    Inspect {
        /// The bundle (.tar.gz).
        bundle: PathBuf,
    },
    /// Print the schema digest (sha256 of the JCS bytes) of each JSON file.
    #[command(
        after_help = "Example:\n  skillbundle digest skills/*/schemas/*.json\n\nThe digest is what a Schema Reference's `digest` member must carry for that schema."
    )]
    Digest {
        /// JSON files (YAML files are converted under the same rules).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let format = match cli.format {
        FormatArg::Human => Format::Human,
        FormatArg::Json => Format::Json,
    };
    match cli.command {
        Command::Build {
            workspace,
            out,
            locked,
            previous,
        } => {
            let options = evolution::Options {
                previous,
                locked,
                ignore_ledger: false,
            };
            build(format, &workspace, out, &options)
        }
        Command::Check {
            workspace,
            previous,
        } => {
            let options = evolution::Options {
                previous,
                ..evolution::Options::default()
            };
            check(format, &workspace, &options)
        }
        Command::Diff { old, new } => diff(format, &old, &new),
        Command::Inspect { bundle } => inspect(format, &bundle),
        Command::Digest { files } => digest(format, &files),
    }
}

fn skills_json(checked: &pipeline::Checked) -> Vec<Value> {
    checked
        .skills
        .iter()
        .map(|s| {
            json!({
                "skill_id": s.interface.skill_id,
                "skill_version": s.interface.skill_version.to_string(),
                "interface_digest": s.interface.digest.as_str(),
            })
        })
        .collect()
}

fn check(format: Format, workspace: &Path, options: &evolution::Options) -> ExitCode {
    let checked = pipeline::check_with(workspace, options);
    let doc =
        json!({"ok": checked.ok(), "skills": skills_json(&checked), "findings": checked.findings});
    render::report(format, &checked.findings, &doc, || {
        let mut lines: Vec<String> = checked
            .skills
            .iter()
            .map(|s| {
                format!(
                    "  {} {} {}",
                    s.interface.skill_id, s.interface.skill_version, s.interface.digest
                )
            })
            .collect();
        lines.insert(
            0,
            format!("checked {} skills: all checks passed", checked.skills.len()),
        );
        lines
    })
}

fn build(
    format: Format,
    workspace: &Path,
    out: Option<PathBuf>,
    options: &evolution::Options,
) -> ExitCode {
    let out = out.unwrap_or_else(|| workspace.join("dist"));
    let built = pipeline::build_with(workspace, &out, options);
    let checked = &built.checked;
    let lock = built.lock.as_ref().map(|l| {
        json!({
            "path": l.path,
            "updated": l.changed && checked.ok(),
            "added_schemas": l.added_schemas.iter().map(|(u, v)| json!({"schema_uri": u, "version": v})).collect::<Vec<_>>(),
            "added_skills": l.added_skills.iter().map(|(s, v)| json!({"skill_id": s, "skill_version": v})).collect::<Vec<_>>(),
        })
    });
    let doc = json!({
        "ok": checked.ok() && built.bundle.is_some(),
        "bundle": built.bundle,
        "lock": lock,
        "skills": skills_json(checked),
        "findings": checked.findings,
    });
    render::report(format, &checked.findings, &doc, || {
        let mut lines = vec![format!(
            "built {} ({} skills)",
            built.bundle.as_deref().unwrap_or(Path::new("?")).display(),
            checked.skills.len()
        )];
        lines.extend(checked.skills.iter().map(|s| {
            format!(
                "  {} {} {}",
                s.interface.skill_id, s.interface.skill_version, s.interface.digest
            )
        }));
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

fn diff(format: Format, old: &Path, new: &Path) -> ExitCode {
    let (a, b) = (evolution::snapshot(old), evolution::snapshot(new));
    let (a, b) = match (a, b) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            let mut findings: Vec<Finding> = Vec::new();
            findings.extend(a.err().unwrap_or_default());
            findings.extend(b.err().unwrap_or_default());
            return render::report(
                format,
                &findings,
                &json!({"ok": false, "findings": findings}),
                Vec::new,
            );
        }
    };
    let d = evolution::diff(&a, &b);
    let doc = json!({
        "ok": true,
        "satisfied": d.satisfied(),
        "skills": d.skills,
        "findings": [],
    });
    render::report(format, &[], &doc, || render::diff_lines(&d))
}

fn inspect(format: Format, path: &Path) -> ExitCode {
    let fail = |code, msg: String| {
        let f = vec![Finding::new(code, msg, Location::file(path))];
        render::report(format, &f, &json!({"ok": false, "findings": f}), Vec::new)
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return fail(Code::Io, format!("cannot read the bundle: {e}")),
    };
    let files = match bundle::archive::read(&bytes, bundle::archive::ReadLimits::default()) {
        Ok(f) => f,
        Err(e) => {
            let code = if e.limit {
                Code::ResourceLimitExceeded
            } else {
                Code::BundleInvalid
            };
            return fail(code, e.message);
        }
    };
    let Some(manifest_bytes) = files.get(bundle::MANIFEST_PATH) else {
        return fail(
            Code::BundleInvalid,
            "the archive has no manifest.json".into(),
        );
    };
    let manifest = match skillbundle::json::parse(manifest_bytes) {
        Ok(m) => m,
        Err(e) => return fail(Code::BundleInvalid, format!("manifest.json: {e}")),
    };
    let summary = bundle::summary(&manifest);
    match format {
        Format::Json => render::print_json(&summary),
        Format::Human => {
            let b = &summary["bundle"];
            println!(
                "{} {}",
                b["name"].as_str().unwrap_or("?"),
                b["version"].as_str().unwrap_or("?")
            );
            for s in summary["skills"].as_array().into_iter().flatten() {
                println!(
                    "  {} {} {}",
                    s["skill_id"].as_str().unwrap_or("?"),
                    s["skill_version"].as_str().unwrap_or("?"),
                    s["interface_digest"].as_str().unwrap_or("?")
                );
                for r in s["schemas"].as_array().into_iter().flatten() {
                    let role = match r["kind"].as_str() {
                        Some(k) => format!("record {k}"),
                        None => r["role"].as_str().unwrap_or("?").to_string(),
                    };
                    println!(
                        "    {role}: {} {} {}",
                        r["schema_uri"].as_str().unwrap_or("?"),
                        r["version"].as_str().unwrap_or("?"),
                        r["digest"].as_str().unwrap_or("?")
                    );
                }
            }
        }
    }
    ExitCode::SUCCESS
}

fn digest(format: Format, files: &[PathBuf]) -> ExitCode {
    let mut findings = Vec::new();
    let mut digests = Vec::new();
    for file in files {
        match skillbundle::workspace::read_value(
            file,
            file,
            u64::MAX,
            skillbundle::json::DEFAULT_MAX_DEPTH,
        ) {
            Ok((value, _)) => digests.push((file, skillbundle::digest::Digest::of_value(&value))),
            Err(f) => findings.push(f),
        }
    }
    let doc = json!({
        "ok": findings.is_empty(),
        "digests": digests.iter().map(|(f, d)| json!({"file": f, "digest": d})).collect::<Vec<_>>(),
        "findings": findings,
    });
    render::report(format, &findings, &doc, || {
        digests
            .iter()
            .map(|(f, d)| format!("{d}  {}", f.display()))
            .collect()
    })
}
