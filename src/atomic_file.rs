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

/// Replace the file `file_name` in `dir` (see [`replace`]), where `file_name` comes from
/// something other than the operator — a bundle's name, say. It must be exactly one
/// normal path component (no separator, no `..`, not absolute), and the directory the
/// file lands in must be `dir` itself once links are resolved; otherwise nothing is
/// written and the error is [`io::ErrorKind::InvalidInput`]. Returns the path written.
pub fn replace_in(
    dir: &Path,
    file_name: &str,
    prefix: &str,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<std::path::PathBuf> {
    let outside = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the file name is not a single file name component inside the output directory",
        )
    };
    let mut components = Path::new(file_name).components();
    let single = matches!(
        (components.next(), components.next()),
        (Some(std::path::Component::Normal(c)), None) if c == std::ffi::OsStr::new(file_name)
    );
    if !single || file_name.contains(['/', '\\']) {
        return Err(outside());
    }
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    std::fs::create_dir_all(dir)?;
    let dest = dir.join(file_name);
    let landed = dest.parent().map(std::fs::canonicalize).transpose()?;
    if landed != Some(std::fs::canonicalize(dir)?) {
        return Err(outside());
    }
    replace(&dest, prefix, write)?;
    Ok(dest)
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

    #[test]
    fn a_foreign_file_name_lands_in_the_directory_or_nowhere() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let written = replace_in(&out, "n-1.0.tar.gz", ".t-", |f| f.write_all(b"x")).unwrap();
        assert_eq!(written, out.join("n-1.0.tar.gz"));
        for bad in ["../x", "..", ".", "/etc/x", "a/b", "a\\b", ""] {
            let err = replace_in(&out, bad, ".t-", |f| f.write_all(b"x")).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        }
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["out"]);
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    }
}
