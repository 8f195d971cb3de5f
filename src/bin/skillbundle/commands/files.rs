//! `skillbundle sign-files` and `skillbundle verify-files`: signed checksums of release
//! files (skillbundle's own binaries and wheels are released with them; see
//! `skillbundle::crypto::release_files`).

use super::{fail, signing_key, KeySet};
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::crypto::keys::SigningKeyPair;
use skillbundle::crypto::release_files::{self, FileEntry};
use skillbundle::finding::{Code, Finding};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Write a signed list of files with their SHA-256 digests.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  skillbundle sign-files --sign-key keys/release.key --out dist/SHA256SUMS.jws.json dist/skillbundle-*\n\nThe files are listed by file name: keep the list beside them. `skillbundle verify-files` checks\nthe list against trusted keys and every file against its digest."
)]
pub struct SignArgs {
    /// The files to list (each by its file name).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Sign with this Ed25519 private key (PKCS#8 PEM). Repeatable.
    #[arg(long = "sign-key", value_name = "FILE", required = true, value_parser = signing_key)]
    sign_key: Vec<SigningKeyPair>,
    /// Where to write the signed list (JSON).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// Check a signed file list and every file it names.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  skillbundle verify-files SHA256SUMS.jws.json --trust skillbundle-release.jwk.json\n\nThe files are read from the list's folder. Any failure (signature_invalid, untrusted_key,\ndigest_mismatch, an unreadable file) exits with status 1 or 2."
)]
pub struct VerifyArgs {
    /// The signed list (from `sign-files`).
    list: PathBuf,
    /// A public key trusted to sign the list: a JWK, an SPKI PEM file, or a JWK Set.
    /// Repeatable.
    #[arg(long = "trust", value_name = "KEY", required = true, value_parser = super::key_set)]
    trust: Vec<KeySet>,
}

/// `sign-files` / `verify-files --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    list: &'a Path,
    files: &'a [FileEntry],
    signed_by: &'a [String],
    findings: &'a [Finding],
}

pub fn run_sign(format: Format, args: SignArgs) -> ExitCode {
    let mut files = Vec::new();
    let mut findings = Vec::new();
    for path in &args.files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        match (name, std::fs::read(path)) {
            (Some(name), Ok(bytes)) => files.push((name, bytes)),
            (None, _) => {
                findings.push(Finding::at_file(Code::PathInvalid, "not a file name", path))
            }
            (_, Err(e)) => findings.push(Finding::at_file(
                Code::Io,
                format!("cannot read: {e}"),
                path,
            )),
        }
    }
    if !findings.is_empty() {
        return fail(format, &findings);
    }
    let document = match release_files::sign(&files, &args.sign_key) {
        Ok(d) => d,
        Err(e) => {
            return fail(
                format,
                &[Finding::at_file(Code::from(&e), e.to_string(), &args.out)],
            )
        }
    };
    let mut text = serde_json::to_vec_pretty(&document).expect("a document serializes");
    text.push(b'\n');
    if let Err(e) = skillbundle::fs::atomic_file::replace(&args.out, ".skillbundle-files-", |f| {
        std::io::Write::write_all(f, &text)
    }) {
        return fail(
            format,
            &[Finding::at_file(
                Code::Io,
                format!("cannot write: {e}"),
                &args.out,
            )],
        );
    }
    let signed_by: Vec<String> = args
        .sign_key
        .iter()
        .map(|k| k.public_key().kid().to_string())
        .collect();
    report(format, "signed", &args.out, &document.files, &signed_by)
}

pub fn run_verify(format: Format, args: VerifyArgs) -> ExitCode {
    let trusted: Vec<_> = args.trust.iter().flat_map(|s| s.0.clone()).collect();
    match release_files::verify(&args.list, &trusted) {
        Ok(verified) => report(
            format,
            "verified",
            &args.list,
            &verified.files,
            &verified.signed_by,
        ),
        Err(findings) => fail(format, &findings),
    }
}

fn report(
    format: Format,
    what: &str,
    list: &Path,
    files: &[FileEntry],
    signed_by: &[String],
) -> ExitCode {
    let doc = Report {
        ok: true,
        list,
        files,
        signed_by,
        findings: &[],
    };
    render::report(format, &[], &doc, || {
        let mut lines = vec![format!(
            "{what} {} ({} file{}), signed by {}",
            list.display(),
            files.len(),
            if files.len() == 1 { "" } else { "s" },
            signed_by.join(", ")
        )];
        lines.extend(files.iter().map(|f| format!("  {}  {}", f.digest, f.name)));
        lines
    })
}
