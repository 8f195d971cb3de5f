//! `skillbundle inspect`: list what a bundle holds, without trusting anyone's key.

use super::{fail, Signature};
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::agent::inventory::{self, SkillListing};
use skillbundle::agent::{Bundle, TrustedKeys};
use skillbundle::bundle::manifest::BundleName;
use skillbundle::finding::Finding;
use std::path::PathBuf;
use std::process::ExitCode;

/// Show the skills, versions and digests in a bundle.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle inspect example-skills/dist/example-network-skills-0.1.0.tar.gz\n  skillbundle inspect --format json bundle.tar.gz | jq '.skills[].interface_digest'\n\nThe bundle is checked as `verify` checks it, except that signatures are not: use `verify --trust` to know who vouches for it."
)]
pub struct Args {
    /// The bundle (.tar.gz).
    bundle: PathBuf,
}

/// `inspect --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    bundle: &'a BundleName,
    signature: Signature,
    skills: &'a [SkillListing],
    findings: &'a [Finding],
}

pub fn run(format: Format, args: Args) -> ExitCode {
    // Every check `verify` runs, but no key is trusted, so signatures are reported, not
    // checked: listing a bundle vouches for nothing.
    let bundle = match Bundle::open_path(&args.bundle, &TrustedKeys::allow_unsigned()) {
        Ok(b) => b,
        Err(findings) => return fail(format, &findings),
    };
    let listed = inventory::of(&bundle);
    let doc = Report {
        ok: true,
        bundle: &listed.bundle,
        signature: bundle.signature().into(),
        skills: &listed.skills,
        findings: &[],
    };
    render::report(format, &[], &doc, || {
        let mut lines = vec![format!("{} {}", listed.bundle.name, listed.bundle.version)];
        for s in &listed.skills {
            lines.push(super::skill_line(&s.binding));
            for r in &s.schemas {
                let role = match &r.kind {
                    Some(k) => format!("record {k}"),
                    None => r.role.to_string(),
                };
                lines.push(format!(
                    "    {role}: {} {} {}",
                    r.schema_uri, r.version, r.digest
                ));
            }
        }
        lines
    })
}
