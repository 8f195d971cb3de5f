//! The `skillbundle` command: parses flags, calls the library, renders findings.
//!
//! Everything that decides anything lives in the library; this file only turns its data
//! into text (human or JSON) and exit statuses: 0 all good, 1 the input failed a check,
//! 2 usage or I/O error.

mod render;

use clap::{Parser, Subcommand};
use render::Format;
use serde_json::{json, Value};
use skillbundle::finding::{Code, Finding, Location};
use skillbundle::{bundle, pipeline};
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
    after_help = "Examples:\n  skillbundle build example-skills          check, then write example-skills/dist/<name>-<version>.tar.gz\n  skillbundle check example-skills          run every check, write nothing\n  skillbundle inspect dist/bundle.tar.gz    list skills, versions and digests of a bundle\n  skillbundle digest schemas/input.json     print a schema's sha256: digest\n\nExit status: 0 all good, 1 the input failed a check, 2 usage or I/O error."
)]
struct Cli {
    /// Output format: `human` for people; `json` for one machine-readable document on
    /// stdout; `github` for GitHub Actions annotations on the pull request's lines; `sarif`
    /// (2.1.0) for code scanning.
    #[arg(long, value_enum, default_value_t = Format::Human, global = true)]
    format: Format,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a new workspace with one complete skill that passes `check` and `build`.
    #[command(
        after_help = "Examples:\n  skillbundle init my-skills\n  skillbundle init . --skill check_reachability\n\nExisting files are never overwritten: if any file of the scaffold exists, nothing is written."
    )]
    Init {
        /// The directory to create the workspace in (created if missing).
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// The skill_id of the first skill.
        #[arg(long, default_value = "check_reachability")]
        skill: String,
    },
    /// Check a workspace and write its bundle.
    #[command(
        after_help = "Examples:\n  skillbundle build example-skills\n  skillbundle build . --out /tmp/release\n\nNothing is written unless every check passes; the bundle is written to a temporary file and renamed into place, so an earlier bundle at the same path is never damaged."
    )]
    Build {
        /// The workspace directory (holds skillbundle.yaml).
        #[arg(default_value = ".")]
        workspace: PathBuf,
        /// Where to write `<name>-<version>.tar.gz` [default: WORKSPACE/dist].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run every check `build` runs, and write nothing.
    #[command(after_help = "Example:\n  skillbundle check example-skills")]
    Check {
        /// The workspace directory (holds skillbundle.yaml).
        #[arg(default_value = ".")]
        workspace: PathBuf,
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
    let format = cli.format;
    match cli.command {
        Command::Init { dir, skill } => init(format, &dir, &skill),
        Command::Build { workspace, out } => build(format, &workspace, out),
        Command::Check { workspace } => check(format, &workspace),
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

fn check(format: Format, workspace: &Path) -> ExitCode {
    let checked = pipeline::check(workspace);
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

fn build(format: Format, workspace: &Path, out: Option<PathBuf>) -> ExitCode {
    let out = out.unwrap_or_else(|| workspace.join("dist"));
    let built = pipeline::build(workspace, &out);
    let checked = &built.checked;
    let doc = json!({
        "ok": checked.ok() && built.bundle.is_some(),
        "bundle": built.bundle,
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
        lines
    })
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
        Format::Human | Format::Github | Format::Sarif => {
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

fn init(format: Format, dir: &Path, skill: &str) -> ExitCode {
    match skillbundle::init::write(dir, skill) {
        Ok(written) => {
            let doc = json!({"ok": true, "written": written});
            render::report(format, &[], &doc, || {
                let mut lines = vec![format!(
                    "created a workspace in {} with skill {skill}:",
                    dir.display()
                )];
                lines.extend(written.iter().map(|p| format!("  {}", p.display())));
                lines.push(format!(
                    "next: skillbundle check {0} && skillbundle build {0}",
                    dir.display()
                ));
                lines
            })
        }
        Err(e) => {
            let code = match e {
                skillbundle::init::InitError::Io(..) => Code::Io,
                _ => Code::PathInvalid,
            };
            let f = vec![Finding::new(code, e.to_string(), Location::file(dir))];
            render::report(format, &f, &json!({"ok": false, "findings": f}), Vec::new)
        }
    }
}
