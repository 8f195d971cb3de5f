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
    /// The skill_id of the first skill [default: check_reachability]. Inside an
    /// existing workspace (DIR holds skillbundle.yaml), adds this skill to it.
    #[arg(long)]
    skill: Option<String>,
}

/// `init --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    written: &'a [PathBuf],
    findings: &'a [Finding],
}

pub fn run(format: Format, args: Args) -> ExitCode {
    init(format, &args.dir, args.skill.as_deref())
}

fn init(format: Format, dir: &Path, skill: Option<&str>) -> ExitCode {
    let add = skill.is_some() && dir.join("skillbundle.yaml").is_file();
    let skill = skill.unwrap_or(skillbundle::build::scaffold::DEFAULT_SKILL);
    let result = if add {
        skillbundle::build::scaffold::add_skill(dir, skill)
    } else {
        skillbundle::build::scaffold::write(dir, skill)
    };
    match result {
        Ok(written) => {
            let doc = Report {
                ok: true,
                written: &written,
                findings: &[],
            };
            render::report(format, &[], &doc, || {
                let mut lines = vec![if add {
                    format!("added skill {skill} to the workspace in {}:", dir.display())
                } else {
                    format!(
                        "created a workspace in {} with skill {skill}:",
                        dir.display()
                    )
                }];
                lines.extend(written.iter().map(|p| format!("  {}", p.display())));
                lines.push(format!(
                    "next: skillbundle check {0} && skillbundle build {0}",
                    dir.display()
                ));
                lines
            })
        }
        Err(e) => fail(
            format,
            &[Finding::new(
                Code::from(&e),
                e.to_string(),
                Location::file(dir),
            )],
        ),
    }
}
