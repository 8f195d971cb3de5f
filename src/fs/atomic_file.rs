//! Atomic file replacement: a file skillbundle writes is either the old one or the
//! complete new one, never a half-written mix.
//!
//! Bundles and the lock file are what a vendor publishes and commits; a build that fails,
//! is killed or races another must not damage them. Every such write goes here: into a
//! temporary file in the same directory (so the final rename cannot cross file systems),
//! flushed to disk, made world-readable like any release artifact, then renamed over the
//! destination. A killed process can leave a temporary file behind — always under a
//! `*.partial` name, never at the destination.
//!
//! Nothing is left for long: the files being written are registered, so an interrupted
//! process removes them ([`remove_in_progress`], which the binary calls on SIGINT and
//! SIGTERM), and the writer holds an exclusive `flock` on each (Unix), so a later run
//! tells a file whose writer died (by SIGKILL, a crash, a power cut) from one still
//! being written and removes only the former ([`remove_stale`]).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary files this process is writing now.
static IN_PROGRESS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary file's entry in [`IN_PROGRESS`], removed when the write ends either way.
struct Registered(PathBuf);

impl Registered {
    fn new(path: &Path) -> Registered {
        in_progress().push(path.to_path_buf());
        Registered(path.to_path_buf())
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut paths = in_progress();
        if let Some(i) = paths.iter().position(|p| *p == self.0) {
            paths.swap_remove(i);
        }
    }
}

fn in_progress() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remove every temporary file this process is writing now, for a process about to end
/// without running destructors (the binary's SIGINT/SIGTERM handler). The destinations
/// are untouched: each still holds the old file or the complete new one.
pub fn remove_in_progress() {
    remove_registered(|_| true);
}

fn remove_registered(which: impl Fn(&Path) -> bool) {
    for path in in_progress().iter().filter(|p| which(p)) {
        let _ = std::fs::remove_file(path);
    }
}

/// Remove the temporary files named `<prefix>*.partial` in `dir` whose writer is gone:
/// on Unix, those no process holds the writer's lock on (a file still being written,
/// by this or another run, stays); elsewhere, those not written to for an hour. Failures
/// are ignored: this is housekeeping.
pub fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = name.starts_with(prefix) && name.ends_with(TEMP_SUFFIX);
        if ours && entry.file_type().is_ok_and(|t| t.is_file()) && abandoned(&entry.path()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
fn abandoned(path: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    // SAFETY: a valid open descriptor; the lock goes with it when `file` is dropped.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

#[cfg(not(unix))]
fn abandoned(path: &Path) -> bool {
    const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|modified| std::time::SystemTime::now().duration_since(modified).ok())
        .is_some_and(|age| age >= STALE_AFTER)
}

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
    let _registered = Registered::new(tmp.path());
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // Held until the file is closed: a later run's remove_stale leaves it alone.
        // SAFETY: a valid open descriptor.
        unsafe { libc::flock(tmp.as_file().as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    }
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

    fn partials(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(TEMP_SUFFIX))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_interrupted_write_removes_its_temporary_and_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("skillbundle.lock");
        replace(&dest, ".t-", |f| f.write_all(b"old")).unwrap();
        let _ = replace(&dest, ".t-", |f| {
            f.write_all(b"half of the new")?;
            assert_eq!(partials(dir.path()).len(), 1);
            // What the binary's signal handler does (remove_in_progress), limited to
            // this test's directory: the other tests write in parallel.
            remove_registered(|p| p.starts_with(dir.path()));
            assert!(partials(dir.path()).is_empty());
            Err(io::Error::other("interrupted"))
        });
        assert_eq!(std::fs::read(&dest).unwrap(), b"old");
        assert!(!in_progress().iter().any(|p| p.starts_with(dir.path())));
    }

    #[cfg(unix)]
    #[test]
    fn stale_temporaries_go_and_those_being_written_stay() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join(".t-left-by-a-killed-run.partial");
        std::fs::write(&stale, b"half").unwrap();
        let other = dir.path().join(".other-left.partial");
        std::fs::write(&other, b"not ours").unwrap();
        let dest = dir.path().join("out");
        replace(&dest, ".t-", |f| {
            // A second run cleaning up while this one writes.
            remove_stale(dir.path(), ".t-");
            assert_eq!(partials(dir.path()).len(), 2, "{:?}", partials(dir.path()));
            f.write_all(b"new")
        })
        .unwrap();
        assert!(!stale.exists());
        assert!(other.exists());
        assert_eq!(partials(dir.path()), [".other-left.partial"]);
    }
}
