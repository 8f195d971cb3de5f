//! Names and paths that stay inside a directory: the one check for every name a
//! manifest or a bundle puts into a path, and for every file a manifest names.
//!
//! Draft "Security Considerations", Arbitrary retrieval: following arbitrary locations
//! exposes an implementation to reading what it should not; a bundle names only files
//! its builder could have written, and a workspace's manifests only files inside it.

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

/// Resolve `relative` (as written in a manifest in `base_dir`) to a real file inside
/// `root`. `..` components and absolute paths are refused outright; symlinks are
/// followed and must still land inside the workspace.
pub fn resolve_inside(root: &Path, base_dir: &Path, relative: &str) -> Result<PathBuf, String> {
    let rel = Path::new(relative);
    if relative.is_empty() {
        return Err("the path is empty".into());
    }
    for c in rel.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "{relative:?} uses `..`; paths must stay inside the workspace"
                ))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "{relative:?} is absolute; write a path relative to the skill directory"
                ))
            }
        }
    }
    let joined = base_dir.join(rel);
    let real = joined
        .canonicalize()
        .map_err(|e| format!("{relative:?} cannot be opened: {e}"))?;
    let real_root = root
        .canonicalize()
        .map_err(|e| format!("the workspace cannot be opened: {e}"))?;
    if !real.starts_with(&real_root) {
        return Err(format!(
            "{relative:?} resolves (through a symbolic link) to {}, outside the workspace",
            real.display()
        ));
    }
    if !real.is_file() {
        return Err(format!("{relative:?} is not a regular file"));
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
            .contains(".."));
        assert!(resolve_inside(root, &base, "/etc/passwd")
            .unwrap_err()
            .contains("absolute"));
        #[cfg(unix)]
        {
            let outside = tempfile::NamedTempFile::new().unwrap();
            std::os::unix::fs::symlink(outside.path(), base.join("link.json")).unwrap();
            assert!(resolve_inside(root, &base, "link.json")
                .unwrap_err()
                .contains("outside the workspace"));
        }
    }
}
