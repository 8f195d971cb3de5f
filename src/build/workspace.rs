//! Workspaces: finding the skills on disk and reading their sources.
//!
//! This is the only module of the pipeline that touches the filesystem on the input
//! side. It turns a workspace directory into parsed manifests and strictly-read schema
//! values, each remembering the file it came from (for locations in findings) and its
//! source bytes (so a JSON pointer can be mapped back to line and column only when a
//! finding needs it).

use crate::build::manifest::{self, SchemaSource, SkillManifest, WorkspaceManifest};
use crate::finding::{Code, Finding, Location};
use crate::fs::source_file::SourceFile;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The workspace manifest's file name.
pub const WORKSPACE_FILE: &str = "skillbundle.yaml";
/// A skill manifest's file name.
pub const SKILL_FILE: &str = "skill.yaml";

/// A workspace on disk: its root, how to name its files in findings, and its manifest.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The directory as given (used to name files in findings, so they are clickable
    /// relative to where the user ran the tool).
    pub root: PathBuf,
    /// `skillbundle.yaml` as read.
    pub manifest: WorkspaceManifest,
    /// Skill directories, sorted.
    pub skill_dirs: Vec<PathBuf>,
}

impl Workspace {
    /// Open `root/skillbundle.yaml` and list the skill directories it selects.
    pub fn open(root: &Path) -> Result<Workspace, Vec<Finding>> {
        let path = root.join(WORKSPACE_FILE);
        if !path.is_file() {
            return Err(vec![Finding::at_file(
                Code::Io,
                format!(
                    "no {WORKSPACE_FILE} here: is {} a skillbundle workspace?",
                    root.display()
                ),
                &path,
            )
            .with_help("run `skillbundle init` to create one")]);
        }
        let manifest: WorkspaceManifest = manifest::read(&path, &path).map_err(|f| vec![f])?;
        let mut findings = Vec::new();
        let name_ok = |s: &str| crate::fs::sandbox::is_safe_name(s);
        if !name_ok(&manifest.bundle.name) {
            findings.push(Finding::at_file(
                Code::ManifestInvalid,
                format!(
                    "bundle.name {:?} cannot name an archive: use letters, digits, '.', '_' and '-', starting with a letter or digit",
                    manifest.bundle.name
                ),
                &path,
            ));
        }
        if !name_ok(&manifest.bundle.version) {
            findings.push(Finding::at_file(
                Code::VersionInvalid,
                format!(
                    "bundle.version {:?} cannot name an archive: use letters, digits, '.', '_' and '-' (for example \"0.1.0\")",
                    manifest.bundle.version
                ),
                &path,
            ));
        }
        let skill_dirs = match &manifest.skills {
            None => list_default_skills(root),
            Some(patterns) => {
                let mut dirs = Vec::new();
                for pattern in patterns {
                    match expand(root, pattern) {
                        Ok(found) => dirs.extend(found),
                        Err(Expanded::Nothing(msg)) => {
                            findings.push(Finding::at_file(Code::PathInvalid, msg, &path))
                        }
                        Err(Expanded::Misplaced(f)) => findings.extend(f),
                    }
                }
                dirs.sort();
                dirs.dedup();
                Ok(dirs)
            }
        };
        let skill_dirs = match skill_dirs {
            Ok(d) => d,
            Err(f) => {
                findings.extend(f);
                Vec::new()
            }
        };
        if let Some(over) = exceeds_size(root, manifest.limits.max_workspace_bytes) {
            findings.push(over);
        }
        if findings.is_empty() && skill_dirs.is_empty() {
            findings.push(Finding::at_file(
                Code::ManifestInvalid,
                "the workspace has no skills: expected skills/<dir>/skill.yaml",
                &path,
            ));
        }
        if findings.is_empty() {
            Ok(Workspace {
                root: root.to_path_buf(),
                manifest,
                skill_dirs,
            })
        } else {
            Err(findings)
        }
    }

    /// The bundle's archive file name, `<name>-<version>.tar.gz`.
    pub fn archive_name(&self) -> String {
        manifest::archive_file_name(&self.manifest.bundle.name, &self.manifest.bundle.version)
    }
}

/// The workspace `start` is in: `start` itself when it holds a `skillbundle.yaml`,
/// otherwise the nearest ancestor that does (as `start/..`, `start/../..`, so findings
/// keep naming files relative to where the tool runs). `None` when no ancestor has one.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    let mut candidate = start.to_path_buf();
    let levels = start.canonicalize().ok()?.ancestors().count();
    for _ in 0..levels {
        if candidate.join(WORKSPACE_FILE).is_file() {
            return Some(candidate);
        }
        candidate = if candidate == Path::new(".") {
            PathBuf::from("..")
        } else {
            candidate.join("..")
        };
    }
    None
}

/// The workspace's files, summed without following links and skipping build output
/// (`dist/`) and version-control folders, must stay within the configured bound.
fn exceeds_size(root: &Path, max: u64) -> Option<Finding> {
    let mut total: u64 = 0;
    let walk = walkdir::WalkDir::new(root).follow_links(false).into_iter();
    let skip = |e: &walkdir::DirEntry| {
        e.depth() == 1 && matches!(e.file_name().to_str(), Some("dist" | ".git"))
    };
    for entry in walk.filter_entry(|e| !skip(e)).flatten() {
        if entry.file_type().is_file() {
            total = total.saturating_add(entry.metadata().map_or(0, |m| m.len()));
            if total > max {
                return Some(
                    Finding::at_file(
                        Code::ResourceLimitExceeded,
                        "the workspace is larger than the configured size limit",
                        root,
                    )
                    .with_help("raise limits.max_workspace_bytes in skillbundle.yaml if this size is intended"),
                );
            }
        }
    }
    None
}

fn list_default_skills(root: &Path) -> Result<Vec<PathBuf>, Vec<Finding>> {
    let skills = root.join("skills");
    let entries = match std::fs::read_dir(&skills) {
        Ok(e) => e,
        Err(_) => return Ok(Vec::new()),
    };
    let mut dirs = Vec::new();
    let mut findings = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| {
            vec![Finding::at_file(
                Code::Io,
                format!("cannot list the skills directory: {e}"),
                &skills,
            )]
        })?;
        let path = entry.path();
        if path.join(SKILL_FILE).is_file() {
            dirs.push(path);
        } else if path.is_dir() {
            findings.extend(misplaced_manifest(&path));
        } else if let Some(found) = manifest_lookalike(&path) {
            findings.push(
                Finding::at_file(
                    Code::LayoutUnexpected,
                    format!("{found} directly in skills/ is one folder too shallow: each skill is a folder skills/<dir>/{SKILL_FILE}"),
                    &path,
                )
                .with_help(format!("move it to skills/<dir>/{SKILL_FILE}")),
            );
        }
    }
    if !findings.is_empty() {
        return Err(findings);
    }
    dirs.sort();
    Ok(dirs)
}

/// `Some(name)` when `path`'s file name looks like a skill manifest that is not named
/// exactly `skill.yaml`: another case, `.yml`, `.json`, or a near miss (`skil.yaml`).
/// `skill.yaml` itself is a lookalike too (for a file in the wrong place).
fn manifest_lookalike(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let lower = name.to_ascii_lowercase();
    let (stem, ext) = lower.rsplit_once('.')?;
    let manifest_ext = matches!(ext, "yaml" | "yml" | "json");
    (path.is_file() && manifest_ext && strsim::levenshtein(stem, "skill") <= 1)
        .then(|| name.to_owned())
}

/// Why a folder that should be a skill has no `skill.yaml`: a manifest under another
/// name (did you mean `skill.yaml`?), or a manifest one folder too deep. Nothing for a
/// folder with neither (shared schemas may live under `skills/`).
fn misplaced_manifest(dir: &Path) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut children: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    children.sort();
    for child in &children {
        if let Some(name) = manifest_lookalike(child) {
            findings.push(
                Finding::at_file(
                    Code::LayoutUnexpected,
                    format!("{name} is not read: a skill's manifest is named {SKILL_FILE}; did you mean {SKILL_FILE}?"),
                    child,
                )
                .with_help(format!("rename it to {SKILL_FILE}")),
            );
        }
    }
    if !findings.is_empty() {
        return findings;
    }
    for child in children.iter().filter(|c| c.is_dir()) {
        let inner = child.join(SKILL_FILE);
        let found = if inner.is_file() {
            Some(inner)
        } else {
            std::fs::read_dir(child).ok().and_then(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .find(|p| manifest_lookalike(p).is_some())
            })
        };
        if let Some(found) = found {
            findings.push(
                Finding::at_file(
                    Code::LayoutUnexpected,
                    format!(
                        "this skill manifest is one folder too deep and is not read: did you mean {}?",
                        dir.join(SKILL_FILE).display()
                    ),
                    &found,
                )
                .with_help(format!(
                    "move the skill's files up into {}, or select the folder in skillbundle.yaml's `skills:`",
                    dir.display()
                )),
            );
        }
    }
    findings
}

/// Expand one `skills:` entry: a relative directory path whose segments may use `*`.
fn expand(root: &Path, pattern: &str) -> Result<Vec<PathBuf>, Expanded> {
    let p = Path::new(pattern);
    if p.is_absolute()
        || p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(Expanded::Nothing(format!(
            "skills entry {pattern:?} must be a relative path inside the workspace"
        )));
    }
    let mut current = vec![root.to_path_buf()];
    for segment in pattern.split('/').filter(|s| !s.is_empty() && *s != ".") {
        let mut next = Vec::new();
        for dir in &current {
            if segment.contains('*') || segment.contains('?') {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if glob_match(segment, &name) && entry.path().is_dir() {
                        next.push(entry.path());
                    }
                }
            } else {
                next.push(dir.join(segment));
            }
        }
        current = next;
    }
    let (found, without): (Vec<PathBuf>, Vec<PathBuf>) = current
        .into_iter()
        .partition(|d| d.join(SKILL_FILE).is_file());
    let misplaced: Vec<Finding> = without.iter().flat_map(|d| misplaced_manifest(d)).collect();
    if !misplaced.is_empty() {
        return Err(Expanded::Misplaced(misplaced));
    }
    if found.is_empty() {
        return Err(Expanded::Nothing(format!(
            "skills entry {pattern:?} matches no directory with a {SKILL_FILE}"
        )));
    }
    Ok(found)
}

/// Why a `skills:` entry selects no skill.
enum Expanded {
    /// A path entry that is not relative and inside the workspace, or matches nothing.
    Nothing(String),
    /// Folders it matches hold a manifest under another name or one folder too deep.
    Misplaced(Vec<Finding>),
}

/// `*` matches any run of characters, `?` one character.
fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Read a JSON (or YAML-authored) value under the I-JSON rules.
///
/// `max_bytes` bounds the file size before it is read into memory; `max_depth` bounds
/// nesting.
pub fn read_value(
    real: &Path,
    display: &Path,
    max_bytes: u64,
    max_depth: usize,
) -> Result<(Value, SourceFile), Finding> {
    use std::io::Read;
    let cannot_read =
        |e: std::io::Error| Finding::at_file(Code::Io, format!("cannot read: {e}"), display);
    // One open, then the size from the open file: a path is resolved once per file
    // (a workspace of 10,000 skills has about 200,000 of them).
    let mut file = std::fs::File::open(real).map_err(cannot_read)?;
    let meta = file.metadata().map_err(cannot_read)?;
    if meta.len() > max_bytes {
        return Err(Finding::at_file(
            Code::ResourceLimitExceeded,
            "the file is larger than the configured size limit",
            display,
        )
        .with_help("raise limits.max_schema_bytes / max_example_bytes in skillbundle.yaml if this size is intended"));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes).map_err(cannot_read)?;
    let yaml = matches!(
        real.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    );
    let value = if yaml {
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            Finding::at_file(
                Code::JsonInvalid,
                "the YAML file is not UTF-8 text",
                display,
            )
        })?;
        crate::wire::yaml::to_json(text, max_depth)
            .map_err(|e| manifest::yaml_finding(e, display, Code::JsonInvalid))?
    } else {
        crate::wire::json::parse_with_depth(&bytes, max_depth)
            .map_err(|e| e.into_finding(display))?
    };
    Ok((value, SourceFile::new(display, real, bytes, yaml)))
}

/// A skill's manifest as read, with where it lives.
#[derive(Debug, Clone)]
pub struct SkillSource {
    /// The skill's folder.
    pub dir: PathBuf,
    /// Its `skill.yaml`, as findings name it.
    pub manifest_path: PathBuf,
    /// The manifest as read.
    pub manifest: SkillManifest,
}

/// Read `dir/skill.yaml`, which must resolve inside the workspace at `root`: a skill
/// directory or manifest that is a symbolic link to elsewhere is refused, not read.
pub fn read_skill(root: &Path, dir: &Path) -> Result<SkillSource, Finding> {
    let path = dir.join(SKILL_FILE);
    let real = crate::fs::sandbox::resolve_inside(root, dir, SKILL_FILE)
        .map_err(|e| Finding::at_file(Code::from(&e), e.to_string(), &path))?;
    let manifest: SkillManifest = manifest::read(&real, &path)?;
    Ok(SkillSource {
        dir: dir.to_path_buf(),
        manifest_path: path,
        manifest,
    })
}

/// The folder of a skill that holds its examples (crate::build::examples).
pub const EXAMPLES_DIR: &str = "examples";

/// Folders in a skill that nothing reads although they look meant to be read: a near
/// miss of `examples/` (did you mean `examples/`?), or a folder laid out like examples
/// (`input/`, `output/`, `records/`, `valid/`, `invalid/` inside). A folder on the path
/// of a schema file the manifest names is known; any other folder (shared definitions a
/// `$ref` reaches, notes) is left alone.
pub fn unknown_folders(skill: &SkillSource) -> Vec<Finding> {
    let m = &skill.manifest;
    let known: Vec<&str> = std::iter::once(&m.input.file)
        .chain(std::iter::once(&m.output.file))
        .chain(m.supporting_records.iter().map(|r| &r.file))
        .filter_map(|file| file.split('/').find(|c| !c.is_empty() && *c != "."))
        .collect();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&skill.dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    let mut findings = Vec::new();
    for dir in dirs {
        let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name == EXAMPLES_DIR || name.starts_with('.') || known.contains(&name) {
            continue;
        }
        let near = strsim::levenshtein(&name.to_lowercase(), EXAMPLES_DIR) <= 3;
        let shaped = ["input", "output", "records", "valid", "invalid"]
            .iter()
            .any(|d| dir.join(d).is_dir());
        if near || shaped {
            findings.push(
                Finding::at_file(
                    Code::LayoutUnexpected,
                    format!(
                        "folder {name}/ is not read{}: a skill's examples live in {EXAMPLES_DIR}/; did you mean {EXAMPLES_DIR}/?",
                        if shaped { ", although it is laid out like examples" } else { "" }
                    ),
                    &dir,
                )
                .with_help(format!("rename it to {EXAMPLES_DIR}/, or move it out of the skill")),
            );
        }
    }
    findings
}

/// Resolve a manifest's `file:` for a schema, reporting a path finding on the manifest.
pub fn resolve_schema_path(
    workspace: &Workspace,
    skill: &SkillSource,
    source: &SchemaSource,
    field: &str,
) -> Result<(PathBuf, PathBuf), Finding> {
    let real = crate::fs::sandbox::resolve_inside(&workspace.root, &skill.dir, &source.file)
        .map_err(|e| {
            Finding::new(
                Code::from(&e),
                format!("{field}.file: {e}"),
                Location::file(&skill.manifest_path),
            )
        })?;
    Ok((real, skill.dir.join(&source.file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*", "anything"));
        assert!(glob_match("net-*", "net-a"));
        assert!(!glob_match("net-*", "xnet-a"));
        assert!(glob_match("a?c", "abc"));
        assert!(glob_match("*x*", "abxcd"));
        assert!(!glob_match("*x*", "abcd"));
    }
}
