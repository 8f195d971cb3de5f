//! Atomic file replacement: a file skillbundle writes is either the old one or the
//! complete new one, never a half-written mix.
//!
//! Bundles and the lock file are what a vendor publishes and commits; a build that fails,
//! is killed or races another must not damage them. Every such write goes here: into a
//! temporary file in the same directory (so the final rename cannot cross file systems),
//! flushed to disk, made world-readable like any release artifact, then renamed over the
//! destination. A killed process can leave a temporary file behind — always under a
//! `*.partial` name, never at the destination.

use std::fs::File;
use std::io;
use std::path::Path;

/// The suffix of every temporary file.
pub const TEMP_SUFFIX: &str = ".partial";

/// Replace `dest` with what `write` puts into a fresh file. The temporary file is named
/// `<prefix>*.partial` in `dest`'s directory (created if missing).
pub fn replace(
    dest: &Path,
    prefix: &str,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(prefix)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(dir)?;
    write(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.persist(dest).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("skillbundle.lock");
        replace(&dest, ".t-", |f| f.write_all(b"old")).unwrap();
        let failed = replace(&dest, ".t-", |f| {
            f.write_all(b"half of the new")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read(&dest).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        replace(&dest, ".t-", |f| f.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"new");
    }
}
