//! Where a build may write its bundle, and what it may replace there.
//!
//! A bundle's name and version identify a release, as a schema's URI and version
//! identify a schema: once published, its bytes are what agents verified and pinned. So
//! a build never silently replaces a bundle of the same name and version that has other
//! content (`release_immutable`, unless `--force` says the old one was never published),
//! never replaces a signed bundle with an unsigned one (`signature_downgrade`: an
//! agent that trusts the vendor's key would refuse what replaced it), and never writes
//! through a `dist` symbolic link that leads out of the workspace unless the operator
//! named that directory with `--out` (`path_invalid`: a committed link must not send a
//! build's output elsewhere on a CI machine).
//!
//! Replacing a bundle with the same release signed differently is allowed: the content
//! the signatures cover (the manifest without `signatures`, which digests every other
//! file) is unchanged, so it is the same release; only dropping every signature is not.

use super::archive::ReadLimits;
use super::sign::{signing_payload, SIGNATURES};
use crate::finding::{Code, Finding};
use serde_json::Value;
use std::path::Path;

/// What the operator said about the output.
#[derive(Debug, Clone, Copy, Default)]
pub struct Permission {
    /// The output directory was named with `--out` (so a link there is intended).
    pub out_named: bool,
    /// `--force`: an existing bundle of the same name and version may be replaced by
    /// other content (never a signed one by an unsigned one).
    pub force: bool,
}

/// Check that the bundle whose manifest is `manifest` (signatures aside), signed or not,
/// may be written to `dest` in `out_dir`, a build of the workspace at `root`. `signed`
/// is `None` when it is not known (`check`, which takes no keys): a signature downgrade
/// is then not judged.
pub fn check(
    root: &Path,
    out_dir: &Path,
    dest: &Path,
    manifest: &Value,
    signed: Option<bool>,
    permission: Permission,
) -> Result<(), Finding> {
    if !permission.out_named {
        check_inside(root, out_dir)?;
    }
    let existing = match std::fs::symlink_metadata(dest) {
        Ok(meta) if meta.is_file() => dest,
        Ok(_) => {
            return Err(Finding::at_file(
                Code::PathInvalid,
                "the bundle's path exists and is not a regular file; nothing was written",
                dest,
            ))
        }
        Err(_) => return Ok(()),
    };
    let limits = ReadLimits::default();
    let old = crate::fs::operator_file::read(existing, limits.max_total_bytes)
        .ok()
        .and_then(|bytes| crate::bundle::first_pass::read_manifest(&bytes, limits).ok());
    if let Some(old) = &old {
        let old_signed = old
            .get(SIGNATURES)
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty());
        if old_signed && signed == Some(false) {
            return Err(Finding::at_file(
                Code::SignatureDowngrade,
                "a signed bundle of this name and version is already here, and this build is unsigned: \
                 an unsigned bundle never replaces a signed one. Sign this build with --sign-key, or \
                 write it elsewhere with --out",
                dest,
            ));
        }
        if signing_payload(old) == signing_payload(manifest) {
            return Ok(());
        }
    }
    if permission.force {
        return Ok(());
    }
    Err(Finding::at_file(
        Code::ReleaseImmutable,
        "a bundle of this name and version is already here with other content: a release, once \
         published, never changes. Raise `bundle.version` in skillbundle.yaml, or pass --force if \
         the existing bundle was never published",
        dest,
    ))
}

/// The default output directory must resolve inside the workspace.
fn check_inside(root: &Path, out_dir: &Path) -> Result<(), Finding> {
    // A directory that does not exist yet is created below the workspace; one that does
    // is resolved with every link followed.
    let Ok(out) = std::fs::canonicalize(out_dir) else {
        return Ok(());
    };
    let inside = std::fs::canonicalize(root).is_ok_and(|root| out.starts_with(root));
    if inside {
        Ok(())
    } else {
        Err(Finding::at_file(
            Code::PathInvalid,
            "the output directory leads outside the workspace (through a symbolic link); \
             nothing was written. Name the directory with --out if that is where the bundle belongs",
            out_dir,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[cfg(unix)]
    #[test]
    fn a_default_output_linked_outside_is_refused_unless_named() {
        let ws = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let dist = ws.path().join("dist");
        std::os::unix::fs::symlink(elsewhere.path(), &dist).unwrap();
        let dest = dist.join("b-1.0.tar.gz");
        let m = json!({});
        let run = |out_named| {
            check(
                ws.path(),
                &dist,
                &dest,
                &m,
                Some(false),
                Permission {
                    out_named,
                    force: false,
                },
            )
            .map_err(|f| f.code)
        };
        assert_eq!(run(false), Err(Code::PathInvalid));
        assert_eq!(run(true), Ok(()));
    }
}
