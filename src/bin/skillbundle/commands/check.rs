//! `skillbundle check`: every check `build` runs, writing nothing.

use super::{count, progress, skill_lines};
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::build::pipeline;
use skillbundle::bundle::destination::Permission;
use skillbundle::finding::Finding;
use skillbundle::interface::binding::Binding;
use skillbundle::release::ledger::LOCK_FILE;
use skillbundle::release::rules;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Run every check `build` runs, and write nothing.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle check example-skills\n  skillbundle check . --previous releases/net-skills-1.4.0.tar.gz\n\nThe release rules compare the workspace with skillbundle.lock (and the --previous bundle): a published version never changes, new versions are higher, and a breaking change needs a MAJOR step."
)]
pub struct Args {
    /// The workspace directory (holds skillbundle.yaml; searched for upward from here).
    #[arg(default_value = ".")]
    workspace: PathBuf,
    /// A previously published bundle: its versions are checked like the lock's.
    #[arg(long, value_name = "BUNDLE")]
    previous: Option<PathBuf>,
    /// Where `build` would write the bundle (default: WORKSPACE/dist): a bundle already
    /// there is judged as `build` judges it (`release_immutable`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Judge the destination as `build --force` would.
    #[arg(long)]
    force: bool,
}

/// `check --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    warnings: Vec<String>,
    skills: Vec<Binding>,
    findings: &'a [Finding],
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let ledger = rules::Options {
        previous: args.previous,
        ..rules::Options::default()
    };
    let workspace =
        skillbundle::build::workspace::find_root(&args.workspace).unwrap_or(args.workspace);
    let destination = Permission {
        out_named: args.out.is_some(),
        force: args.force,
    };
    let out = args.out.unwrap_or_else(|| workspace.join("dist"));
    check(format, &workspace, &ledger, &out, destination)
}

fn check(
    format: Format,
    workspace: &Path,
    ledger: &rules::Options,
    out: &Path,
    destination: Permission,
) -> ExitCode {
    let (observer, bar) = progress(format);
    let mut checked = pipeline::check_with(workspace, &observer, ledger);
    let refused = pipeline::destination_findings(&checked, out, destination);
    checked.findings.extend(refused);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let warnings: Vec<String> = checked
        .workspace
        .as_ref()
        .filter(|w| !w.root.join(LOCK_FILE).exists() && ledger.previous.is_none())
        .map(|_| {
            format!(
                "there is no {LOCK_FILE}, so the release rules had no baseline: published versions were not compared (`skillbundle build` writes it; commit it)"
            )
        })
        .into_iter()
        .collect();
    for w in &warnings {
        render::warn(format, w);
    }
    let doc = Report {
        ok: checked.ok(),
        warnings,
        skills: skill_lines(&checked),
        findings: &checked.findings,
    };
    render::report(format, &checked.findings, &doc, || {
        let mut lines = vec![format!(
            "checked {}: all checks passed",
            count(checked.skills.len())
        )];
        lines.extend(doc.skills.iter().map(super::skill_line));
        lines
    })
}
