//! `skillbundle diff`: every change between two workspaces or bundles, and the version
//! steps it needs.

use super::fail;
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::build::pipeline;
use skillbundle::finding::Finding;
use skillbundle::release::diff::{self as release_diff, SkillReport};
use std::path::PathBuf;
use std::process::ExitCode;

/// Show every change between two workspaces or bundles, and the version steps they need.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle diff releases/net-skills-1.4.0.tar.gz .\n  skillbundle diff old-checkout/ new-checkout/ --format json | jq '.skills[] | select(.satisfied | not)'\n\nEach OLD and NEW is a workspace directory or a bundle (.tar.gz). Input schemas may only widen (accept more); output and record schemas may only narrow. A change the rules cannot decide counts as breaking. A workspace with failing skills is compared as far as it can be: their problems are shown as warnings and a skill whose interface could not be assembled is `not_compared`. Exit status 0 when the comparison ran, whatever it found."
)]
pub struct Args {
    /// The earlier workspace or bundle.
    old: PathBuf,
    /// The later workspace or bundle.
    new: PathBuf,
}

/// `diff --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    satisfied: bool,
    skills: &'a [SkillReport],
    findings: &'a [Finding],
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let (a, b) = (pipeline::snapshot(&args.old), pipeline::snapshot(&args.new));
    let (a, b) = match (a, b) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            let mut findings: Vec<Finding> = Vec::new();
            findings.extend(a.err().unwrap_or_default());
            findings.extend(b.err().unwrap_or_default());
            return fail(format, &findings);
        }
    };
    let d = release_diff::diff(&a, &b);
    // What kept skills out of the comparison is reported, as warnings: the comparison ran.
    let mut findings = a.findings;
    findings.extend(b.findings);
    let doc = Report {
        ok: true,
        satisfied: d.satisfied(),
        skills: &d.skills,
        findings: &findings,
    };
    render::report(format, &findings, &doc, || render::diff_lines(&d))
}
