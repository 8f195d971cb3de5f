//! Issuing a release statement for a bundle just built (`build --sign-key K --expires D`).
//!
//! The statement's format, its signing and its check are the bundle format's
//! ([`crate::bundle::release_statement`]); issuing one is the vendor's act and needs more:
//! the bundle is opened under the signers' own keys first ([`crate::agent::Bundle`]), so
//! a statement is only ever issued for a bundle its signers signed. That opening is why
//! this lives on the authoring side: the format module must not need the agent.
//! (Draft, "Security Considerations": a publisher's signed, expiring statement that a
//! bundle is current.)

use crate::agent::Bundle;
use crate::bundle::{self, archive::ReadLimits, release_statement};
use crate::crypto::keys::{SigningKeyPair, TrustedKeys};
use crate::finding::{Code, Finding};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Issue a statement for the bundle file at `bundle_path`, valid from `issued_at` for
/// `lifetime`, and write it beside the bundle ([`release_statement::file_beside`], atomically). The bundle
/// must open under the signers' own keys: a statement is only ever issued for a bundle
/// its signers signed. Returns the statement's path.
pub fn write_beside(
    bundle_path: &Path,
    keys: &[SigningKeyPair],
    issued_at: u64,
    lifetime: Duration,
) -> Result<PathBuf, Vec<Finding>> {
    let limit = ReadLimits::default().max_total_bytes;
    let bytes = bundle::read_file(bundle_path, limit).map_err(|f| vec![f])?;
    let signers = TrustedKeys::new(keys.iter().map(SigningKeyPair::public_key).collect());
    let bundle = Bundle::open(&bytes, &signers)?;
    let digest = release_statement::file_digest(&bytes);
    let subject = release_statement::Subject {
        name: bundle.name(),
        version: bundle.version(),
        digest: &digest,
    };
    let statement = release_statement::issue(subject, issued_at, lifetime, keys);
    let path = release_statement::file_beside(bundle_path);
    crate::fs::atomic_file::replace(&path, ".release-", |f| {
        std::io::Write::write_all(f, &statement)
    })
    .map_err(|e| {
        vec![Finding::at_file(
            Code::Io,
            format!("cannot write the release statement: {e}"),
            &path,
        )]
    })?;
    Ok(path)
}
