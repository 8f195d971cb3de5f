//! Names and paths that stay inside a directory: the one check for every name a
//! manifest or a bundle puts into a path, and for every file a manifest names.
//!
//! Draft "Security Considerations", Arbitrary retrieval: following arbitrary locations
//! exposes an implementation to reading what it should not; a bundle names only files
//! its builder could have written, and a workspace's manifests only files inside it.

use crate::finding::Code;
use std::path::{Component, Path, PathBuf};

/// Names that end up in archive paths and file names: a conservative character set,
/// so no manifest value can steer a bundle entry outside its folder. The builder applies
/// it to `bundle.name` and `bundle.version` ([`crate::build::workspace`]), and loading a bundle
/// applies the same function to what its manifest says ([`crate::agent::Bundle::open`]):
/// a bundle names only files the builder could have written.
pub fn is_safe_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        && s.as_bytes()[0].is_ascii_alphanumeric()
}

/// Why a path written in a manifest was refused by [`resolve_inside`]. Each names the
/// path as written (the workspace's own text, not a peer's) and what to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum PathRefused {
    /// The path is empty.
    Empty,
    /// It uses `..`.
    ParentDir(String),
    /// It is absolute.
    Absolute(String),
    /// It cannot be opened.
    CannotOpen(String, std::io::Error),
    /// The workspace itself cannot be opened.
    WorkspaceUnopenable(std::io::Error),
    /// It resolves, through a symbolic link, to this real path outside the workspace.
    Outside(String, PathBuf),
    /// It is not a regular file.
    NotAFile(String),
}

impl std::fmt::Display for PathRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathRefused::Empty => f.write_str("the path is empty"),
            PathRefused::ParentDir(p) => {
                write!(f, "{p:?} uses `..`; paths must stay inside the workspace")
            }
            PathRefused::Absolute(p) => write!(
                f,
                "{p:?} is absolute; write a path relative to the skill directory"
            ),
            PathRefused::CannotOpen(p, e) => write!(f, "{p:?} cannot be opened: {e}"),
            PathRefused::WorkspaceUnopenable(e) => {
                write!(f, "the workspace cannot be opened: {e}")
            }
            PathRefused::Outside(p, real) => write!(
                f,
                "{p:?} resolves (through a symbolic link) to {}, outside the workspace",
                real.display()
            ),
            PathRefused::NotAFile(p) => write!(f, "{p:?} is not a regular file"),
        }
    }
}

impl std::error::Error for PathRefused {}

/// The one mapping of a refused path to a finding code: `path_invalid`, whatever the
/// reason (the caller says which file and field wrote it).
impl From<&PathRefused> for Code {
    fn from(_: &PathRefused) -> Code {
        Code::PathInvalid
    }
}

/// Resolve `relative` (as written in a manifest in `base_dir`) to a real file inside
/// `root`. `..` components and absolute paths are refused outright; symlinks are
/// followed and must still land inside the workspace.
pub fn resolve_inside(
    root: &Path,
    base_dir: &Path,
    relative: &str,
) -> Result<PathBuf, PathRefused> {
    let rel = Path::new(relative);
    if relative.is_empty() {
        return Err(PathRefused::Empty);
    }
    for c in rel.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err(PathRefused::ParentDir(relative.to_string())),
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathRefused::Absolute(relative.to_string()))
            }
        }
    }
    let joined = base_dir.join(rel);
    let real = joined
        .canonicalize()
        .map_err(|e| PathRefused::CannotOpen(relative.to_string(), e))?;
    let real_root = root
        .canonicalize()
        .map_err(PathRefused::WorkspaceUnopenable)?;
    if !real.starts_with(&real_root) {
        return Err(PathRefused::Outside(relative.to_string(), real));
    }
    if !real.is_file() {
        return Err(PathRefused::NotAFile(relative.to_string()));
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_names() {
        assert!(is_safe_name("evaluate_resource_condition"));
        assert!(is_safe_name("net-skills.v2"));
        assert!(!is_safe_name("../x"));
        assert!(!is_safe_name(".hidden"));
        assert!(!is_safe_name("a/b"));
        assert!(!is_safe_name(""));
    }

    #[test]
    fn paths_stay_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("skills/a")).unwrap();
        std::fs::write(root.join("skills/a/s.json"), "{}").unwrap();
        let base = root.join("skills/a");
        assert!(resolve_inside(root, &base, "s.json").is_ok());
        assert!(resolve_inside(root, &base, "../a/s.json")
            .unwrap_err()
            .to_string()
            .contains(".."));
        assert!(resolve_inside(root, &base, "/etc/passwd")
            .unwrap_err()
            .to_string()
            .contains("absolute"));
        #[cfg(unix)]
        {
            let outside = tempfile::NamedTempFile::new().unwrap();
            std::os::unix::fs::symlink(outside.path(), base.join("link.json")).unwrap();
            assert!(resolve_inside(root, &base, "link.json")
                .unwrap_err()
                .to_string()
                .contains("outside the workspace"));
        }
    }
}
