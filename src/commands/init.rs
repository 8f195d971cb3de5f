//! `skillbundle init`: a new workspace with one complete skill.

use super::fail;
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::finding::{Code, Finding, Location};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Create a new workspace with one complete skill that passes `check` and `build`.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle init my-skills\n  skillbundle init . --skill check_reachability\n\nExisting files are never overwritten: if any file of the scaffold exists, nothing is written\n(path_invalid, exit status 1)."
)]
pub struct Args {
    /// The directory to create the workspace in (created if missing).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// The skill_id of the first skill.
    #[arg(long, default_value = "check_reachability")]
    skill: String,
}

/// `init --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    written: &'a [PathBuf],
    findings: &'a [Finding],
}

pub fn run(format: Format, args: Args) -> ExitCode {
    init(format, &args.dir, &args.skill)
}

fn init(format: Format, dir: &Path, skill: &str) -> ExitCode {
    match skillbundle::init::write(dir, skill) {
        Ok(written) => {
            let doc = Report {
                ok: true,
                written: &written,
                findings: &[],
            };
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
            fail(
                format,
                &[Finding::new(code, e.to_string(), Location::file(dir))],
            )
        }
    }
}
