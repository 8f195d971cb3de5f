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
