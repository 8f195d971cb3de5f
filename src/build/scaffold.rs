//! `init`: a new workspace that passes `check` and `build` the moment it is created.
//!
//! A vendor's first contact with the tool should be a green run they can then edit,
//! not a blank page and a format reference. The scaffold is one small but complete
//! skill — input, output and one supporting-record schema, a valid and an invalid
//! example for each, a pinned failure reason — and it never overwrites a file.

use crate::finding::Code;
use std::path::{Path, PathBuf};

/// Why a scaffold could not be written.
#[derive(Debug)]
#[non_exhaustive]
pub enum InitError {
    /// The skill id cannot name a skill directory or a bundle entry.
    BadSkillId(String),
    /// The skill id is `describe_skill`, which every agent advertises itself.
    ReservedSkillId,
    /// These files already exist; nothing was written.
    Exists(Vec<PathBuf>),
    /// A file or folder could not be written (which, and why).
    Io(PathBuf, std::io::Error),
}

impl std::fmt::Display for InitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InitError::BadSkillId(id) => write!(
                f,
                "{id:?} cannot be a skill_id here: use at most 64 letters, digits, '.', '_' and '-', starting with a letter or digit"
            ),
            InitError::ReservedSkillId => write!(
                f,
                "skill_id {:?} is reserved: every agent advertises it for interface retrieval; choose another",
                crate::interface::DESCRIBE_SKILL
            ),
            InitError::Exists(paths) => {
                write!(f, "refusing to overwrite existing files (nothing was written):")?;
                for p in paths {
                    write!(f, "\n  {}", p.display())?;
                }
                Ok(())
            }
            InitError::Io(path, e) => write!(f, "cannot write {}: {e}", path.display()),
        }
    }
}

/// The one mapping of a refused `init` to a finding code: a write that failed is `io`;
/// `describe_skill`, which every agent advertises itself, is `duplicate_skill`; a bad id
/// or files in the way are `path_invalid` (nothing was written).
impl From<&InitError> for Code {
    fn from(e: &InitError) -> Code {
        match e {
            InitError::Io(..) => Code::Io,
            InitError::ReservedSkillId => Code::DuplicateSkill,
            InitError::BadSkillId(_) | InitError::Exists(_) => Code::PathInvalid,
        }
    }
}

impl std::error::Error for InitError {}

/// The skill `init` writes when none is named.
pub const DEFAULT_SKILL: &str = "check_reachability";

/// A card name for a skill id: `check_reachability` → "Check reachability".
fn card_name(skill_id: &str) -> String {
    let words = skill_id.replace(['_', '-', '.'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => skill_id.to_string(),
    }
}

/// The files of a new workspace with one skill, as (relative path, contents).
pub fn scaffold(skill_id: &str, bundle_name: &str) -> Vec<(PathBuf, String)> {
    let skill = format!("skills/{skill_id}");
    let kind = "check-observation";
    let uri = |role: &str| format!("urn:example:{skill_id}:{role}");
    let files: Vec<(String, String)> = vec![
        (
            ".gitignore".into(),
            "# bundles written by `skillbundle build`\ndist/\n# signing keys (`skillbundle keygen`): never commit a private key\n*.key\n".into(),
        ),
        (
            "skillbundle.yaml".into(),
            format!(
                "# The bundle this workspace builds: dist/{bundle_name}-0.1.0.tar.gz\nbundle: {{name: {bundle_name}, version: \"0.1.0\"}}\n"
            ),
        ),
        (
            format!("{skill}/skill.yaml"),
            format!(
                r#"# One skill: its A2A card entry, its three schemas and how it behaves.
# Versions are quoted MAJOR.MINOR strings. Change a schema => give it a new version.
skill_id: {skill_id}
skill_version: "1.0"
card:
  name: {card_name}
  description: {card_description}
  tags: [network, assurance]
  examples: ["Is 192.0.2.10 reachable within 500 ms?"]
input:  {{file: schemas/input.json,  schema_uri: "{input}",  version: "1.0"}}
output: {{file: schemas/output.json, schema_uri: "{output}", version: "1.0"}}
supporting_records:
  - {{kind: {kind}, file: schemas/{kind}.json, schema_uri: "{record}", version: "1.0"}}
interaction: {{supported_response_modes: [sync], cancellable: false}}
authority: {{default_mode: observe_only, approval_may_be_required: false}}
"#,
                card_name = card_name(skill_id),
                card_description = if skill_id == DEFAULT_SKILL {
                    "Checks whether a target host answers within a timeout.".to_string()
                } else {
                    format!(
                        "{} (say what it does in one sentence for the agent's clients; its schemas start as a reachability check to edit)",
                        card_name(skill_id)
                    )
                },
                input = uri("input"),
                output = uri("output"),
                record = uri(kind),
            ),
        ),
        (
            format!("{skill}/schemas/input.json"),
            r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "target": { "type": "string", "format": "ipv4" },
    "timeout_ms": { "type": "integer", "minimum": 1, "maximum": 60000 }
  },
  "required": ["target"],
  "additionalProperties": false
}
"#
            .into(),
        ),
        (
            format!("{skill}/schemas/output.json"),
            r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "reachable": { "type": "boolean" },
    "rtt_ms": { "type": "number", "minimum": 0 },
    "supporting_record_refs": { "type": "array", "items": { "type": "string" } }
  },
  "required": ["reachable", "supporting_record_refs"],
  "additionalProperties": false
}
"#
            .into(),
        ),
        (
            format!("{skill}/schemas/{kind}.json"),
            r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "record_id": { "type": "string", "minLength": 1 },
    "target": { "type": "string", "format": "ipv4" },
    "sent_at": { "type": "string", "format": "date-time" },
    "answered": { "type": "boolean" }
  },
  "required": ["record_id", "target", "sent_at", "answered"],
  "additionalProperties": false
}
"#
            .into(),
        ),
        (
            format!("{skill}/examples/input/valid/with-timeout.json"),
            "{\"target\": \"192.0.2.10\", \"timeout_ms\": 500}\n".into(),
        ),
        (
            format!("{skill}/examples/input/invalid/not-an-address.json"),
            "{\"target\": \"192.0.2.300\"}\n".into(),
        ),
        (
            format!("{skill}/examples/input/invalid/not-an-address.expect.yaml"),
            "# Why this example must fail: the format check on /target, nothing else.\nkeyword: format\ninstance_path: /target\n".into(),
        ),
        (
            format!("{skill}/examples/output/valid/reachable.json"),
            "{\"reachable\": true, \"rtt_ms\": 1.5, \"supporting_record_refs\": [\"probe-1\"]}\n".into(),
        ),
        (
            format!("{skill}/examples/output/invalid/missing-refs.json"),
            "{\"reachable\": false}\n".into(),
        ),
        (
            format!("{skill}/examples/records/{kind}/valid/probe-1.json"),
            "{\"record_id\": \"probe-1\", \"target\": \"192.0.2.10\", \"sent_at\": \"2026-08-11T12:00:01Z\", \"answered\": true}\n".into(),
        ),
        (
            format!("{skill}/examples/records/{kind}/invalid/no-timestamp.json"),
            "{\"record_id\": \"probe-1\", \"target\": \"192.0.2.10\", \"answered\": true}\n".into(),
        ),
    ];
    files
        .into_iter()
        .map(|(p, c)| (PathBuf::from(p), c))
        .collect()
}

/// Write a new workspace into `dir` (created if missing). Refuses, writing nothing, when
/// any of the files already exists. Returns the files written.
pub fn write(dir: &Path, skill_id: &str) -> Result<Vec<PathBuf>, InitError> {
    write_files(dir, skill_id, false)
}

/// Add one skill (`skills/<skill_id>/…`, its card named for it) to the existing
/// workspace `dir`, leaving every other file alone. Refuses, writing nothing, when any
/// of the skill's files already exists.
pub fn add_skill(dir: &Path, skill_id: &str) -> Result<Vec<PathBuf>, InitError> {
    write_files(dir, skill_id, true)
}

fn write_files(dir: &Path, skill_id: &str, skill_only: bool) -> Result<Vec<PathBuf>, InitError> {
    if skill_id == crate::interface::DESCRIBE_SKILL {
        return Err(InitError::ReservedSkillId);
    }
    if !crate::fs::sandbox::is_safe_name(skill_id) || skill_id.len() > 64 {
        return Err(InitError::BadSkillId(skill_id.to_string()));
    }
    let name = dir
        .canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| crate::fs::sandbox::is_safe_name(n))
        .unwrap_or_else(|| "my-skills".to_string());
    let files: Vec<(PathBuf, String)> = scaffold(skill_id, &name)
        .into_iter()
        .filter(|(p, _)| !skill_only || p.starts_with("skills"))
        .collect();
    let existing: Vec<PathBuf> = files
        .iter()
        .map(|(p, _)| dir.join(p))
        .filter(|p| p.exists() || p.symlink_metadata().is_ok())
        .collect();
    if !existing.is_empty() {
        return Err(InitError::Exists(existing));
    }
    let mut written = Vec::new();
    for (rel, contents) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| InitError::Io(parent.to_path_buf(), e))?;
        }
        // create_new: a file that appeared since the check above is never overwritten.
        let result = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, contents.as_bytes()));
        result.map_err(|e| InitError::Io(path.clone(), e))?;
        written.push(path);
    }
    Ok(written)
}
