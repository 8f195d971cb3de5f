//! Signed checksums of release files: the document a release of skillbundle itself (its
//! binaries and wheels, `.github/workflows/release.yml`) ships beside its files, so that
//! a user checks a download against a key they trust, with `skillbundle verify-files`,
//! and not only against a checksum fetched from the same place as the file.
//!
//! The document is JSON: `{"format": "skillbundle-files/1", "files": [{"name",
//! "digest"}], "signatures": [...]}`, files sorted by name, each `digest` the file's
//! `sha256:` digest. The signatures are the same detached-payload JWS as a bundle
//! manifest's ([`crate::crypto::jws`], README "The bundle"): Ed25519 over the RFC 8785
//! (JCS) bytes of the document without its `signatures` member.

use crate::crypto::jws::{self, JwsError, JwsSignature};
use crate::crypto::keys::{PublicKey, SigningKeyPair};
use crate::finding::{Code, Finding};
use crate::wire::digest::{jcs, Digest};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The document's `format`.
pub const FORMAT: &str = "skillbundle-files/1";

/// At most this many bytes of a release file or of the document are read.
pub const MAX_RELEASE_FILE_BYTES: u64 = 1 << 30;

/// One file a document vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// The file's name: one path component, the file sitting beside the document.
    pub name: String,
    /// Its `sha256:` digest.
    pub digest: String,
}

/// The signed document.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// [`FORMAT`].
    pub format: String,
    /// The files, sorted by name.
    pub files: Vec<FileEntry>,
    /// The detached-payload JWS signatures over the document without this member.
    #[serde(default)]
    pub signatures: Vec<JwsSignature>,
}

impl Document {
    /// The detached JWS payload: the JCS bytes of the document without `signatures`.
    fn payload(&self) -> Vec<u8> {
        let mut value = serde_json::to_value(self).expect("a document always serializes");
        if let serde_json::Value::Object(map) = &mut value {
            map.remove("signatures");
        }
        jcs(&value)
    }
}

/// A name that can only name a file beside the document.
fn plain_name(name: &str) -> bool {
    let mut parts = Path::new(name).components();
    matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(c)), None) if c == std::ffi::OsStr::new(name)
    ) && !name.contains(['/', '\\'])
}

/// Why [`sign`] refused its list of files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignError {
    /// A name is not one file name (a path, `..`, an empty name).
    #[error("a release file is named by its file name alone")]
    NotAFileName,
    /// Two files have the same name.
    #[error("two release files have the same name")]
    DuplicateName,
}

/// Both refusals are about the names the caller gave: `path_invalid`.
impl From<&SignError> for Code {
    fn from(e: &SignError) -> Code {
        match e {
            SignError::NotAFileName | SignError::DuplicateName => Code::PathInvalid,
        }
    }
}

/// The document for `files` (name and content), signed with every key. A name that is
/// not a single file name, or a name given twice, is refused.
pub fn sign(files: &[(String, Vec<u8>)], keys: &[SigningKeyPair]) -> Result<Document, SignError> {
    let mut entries: Vec<FileEntry> = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        if !plain_name(name) {
            return Err(SignError::NotAFileName);
        }
        entries.push(FileEntry {
            name: name.clone(),
            digest: Digest::of_bytes(bytes).to_string(),
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    if entries.windows(2).any(|w| w[0].name == w[1].name) {
        return Err(SignError::DuplicateName);
    }
    let mut document = Document {
        format: FORMAT.into(),
        files: entries,
        signatures: Vec::new(),
    };
    let payload = document.payload();
    document.signatures = keys.iter().map(|k| jws::sign(&payload, k)).collect();
    Ok(document)
}

/// What a verified document vouches for.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The files the document lists, each checked against its digest.
    pub files: Vec<FileEntry>,
    /// The `kid`s of the trusted keys whose signatures verified.
    pub signed_by: Vec<String>,
}

/// Check the document at `path`: signed by a trusted key, and every file it lists, read
/// from the document's folder, has the digest it records. Every problem is a finding.
pub fn verify(path: &Path, trusted: &[PublicKey]) -> Result<Verified, Vec<Finding>> {
    let at = |code, message: String| Finding::at_file(code, message, path);
    let bytes = crate::fs::operator_file::read(path, MAX_RELEASE_FILE_BYTES)
        .map_err(|e| vec![at(Code::Io, format!("cannot read the document: {e}"))])?;
    let value = crate::wire::json::parse(&bytes).map_err(|e| vec![e.into_finding(path)])?;
    let document: Document = serde_json::from_value(value).map_err(|e| {
        vec![at(
            Code::BundleInvalid,
            format!("not a signed file list: {e}"),
        )]
    })?;
    if document.format != FORMAT {
        return Err(vec![at(
            Code::BundleInvalid,
            format!("not a signed file list: format is not {FORMAT:?}"),
        )]);
    }
    let signed_by = jws::verify_signatures(&document.payload(), &document.signatures, trusted)
        .map_err(|e| {
            let message = match e {
                JwsError::NoSignatures => "the file list has no signatures".into(),
                _ => e.to_string(),
            };
            vec![at(Code::from(&e), message)]
        })?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut findings = Vec::new();
    for entry in &document.files {
        if !plain_name(&entry.name) {
            findings.push(at(
                Code::PathInvalid,
                "a listed file is not named by its file name alone".into(),
            ));
            continue;
        }
        let file = dir.join(&entry.name);
        match crate::fs::operator_file::read(&file, MAX_RELEASE_FILE_BYTES) {
            Ok(bytes) if Digest::of_bytes(&bytes).to_string() == entry.digest => {}
            Ok(bytes) => findings.push(Finding::at_file(
                Code::DigestMismatch,
                format!(
                    "the file's digest is {}, but the signed list records {}",
                    Digest::of_bytes(&bytes),
                    entry.digest
                ),
                &file,
            )),
            Err(e) => findings.push(Finding::at_file(
                Code::Io,
                format!("cannot read a listed file: {e}"),
                &file,
            )),
        }
    }
    if findings.is_empty() {
        Ok(Verified {
            files: document.files,
            signed_by: signed_by.into_iter().map(|v| v.0).collect(),
        })
    } else {
        Err(findings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_file_names() {
        for good in ["skillbundle-x86_64-unknown-linux-musl", "a.whl", ".x"] {
            assert!(plain_name(good), "{good}");
        }
        for bad in ["", ".", "..", "a/b", "../a", "/a", "a\\b"] {
            assert!(!plain_name(bad), "{bad:?}");
        }
    }
}
