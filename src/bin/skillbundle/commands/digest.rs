//! `skillbundle digest`: the schema digest a Schema Reference must carry, per file.

use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::finding::Finding;
use skillbundle::wire::digest::Digest;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Print the schema digest (sha256 of the JCS bytes) of each JSON file.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  skillbundle digest skills/*/schemas/*.json\n\nThe digest is what a Schema Reference's `digest` member must carry for that schema."
)]
pub struct Args {
    /// JSON files (YAML files are converted under the same rules).
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// `digest --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    digests: Vec<FileDigest<'a>>,
    findings: &'a [Finding],
}

#[derive(Serialize)]
struct FileDigest<'a> {
    file: &'a Path,
    digest: Digest,
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let mut findings = Vec::new();
    let mut digests = Vec::new();
    for file in &args.files {
        match skillbundle::build::workspace::read_value(
            file,
            file,
            u64::MAX,
            skillbundle::wire::json::DEFAULT_MAX_DEPTH,
        ) {
            Ok((value, _)) => digests.push(FileDigest {
                file,
                digest: Digest::of_value(&value),
            }),
            Err(f) => findings.push(f),
        }
    }
    let doc = Report {
        ok: findings.is_empty(),
        digests,
        findings: &findings,
    };
    render::report(format, &findings, &doc, || {
        doc.digests
            .iter()
            .map(|d| format!("{}  {}", d.digest, d.file.display()))
            .collect()
    })
}
