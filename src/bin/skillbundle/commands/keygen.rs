//! `skillbundle keygen`: an Ed25519 key pair to sign bundles with.

use super::fail;
use crate::render::{self, Format};
use serde::Serialize;
use skillbundle::crypto::keys::SigningKeyPair;
use skillbundle::finding::{Code, Finding};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Generate an Ed25519 signing key pair.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle keygen --out keys/release          writes keys/release.key and keys/release.jwk.json\n  skillbundle keygen --out keys/release --pem    also writes keys/release.pub.pem\n\nThe private key (PREFIX.key, PKCS#8 PEM that OpenSSL reads, mode 0600) signs bundles: keep it secret.\nThe public JWK (PREFIX.jwk.json, kid = RFC 7638 thumbprint) is what agents trust with --trust.\nExisting files are never replaced without --force: a refusal is path_invalid, exit status 1."
)]
pub struct Args {
    /// Path prefix of the files to write.
    #[arg(long, value_name = "PREFIX")]
    out: PathBuf,
    /// Also write the public key as SPKI PEM (PREFIX.pub.pem).
    #[arg(long)]
    pem: bool,
    /// Replace existing key files.
    #[arg(long)]
    force: bool,
}

/// `keygen --format json`.
#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    kid: &'a str,
    files: &'a [PathBuf],
    findings: &'a [Finding],
}

pub fn run(format: Format, args: Args) -> ExitCode {
    keygen(format, &args.out, args.pem, args.force)
}

fn keygen(format: Format, prefix: &Path, pem: bool, force: bool) -> ExitCode {
    if let Some(dir) = prefix.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Err(e) = std::fs::create_dir_all(dir) {
            let f = Finding::at_file(Code::Io, format!("cannot create the directory: {e}"), dir);
            return fail(format, &[f]);
        }
    }
    let written = SigningKeyPair::generate().and_then(|key| {
        let files = skillbundle::crypto::keys::write_key_files(prefix, &key, pem, force)?;
        Ok((key.public_key(), files))
    });
    let (public, files) = match written {
        Ok(w) => w,
        Err(e) => {
            let f = Finding::at_file(Code::from(&e), e.to_string(), prefix);
            return fail(format, &[f]);
        }
    };
    let doc = Report {
        ok: true,
        kid: public.kid(),
        files: &files,
        findings: &[],
    };
    render::report(format, &[], &doc, || {
        let mut lines = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let what = match i {
                0 => "private key: keep it secret; sign with `build --sign-key`",
                1 => "public key (JWK): give it to agents for `--trust`",
                _ => "public key (SPKI PEM)",
            };
            lines.push(format!("wrote {}  ({what})", f.display()));
        }
        lines.push(format!("kid {}", public.kid()));
        lines
    })
}
