//! Bundles: the signed, reproducible archive a vendor publishes and an agent loads.
//!
//! Layout (DESIGN.md): `manifest.json` (the bundle manifest), `interfaces/<skill_id>.json`
//! (each Skill Interface Document as its JCS bytes, so `sha256sum` of the file equals its
//! interface_digest) and `a2a/agent-card-fragment.json`. The manifest lists every skill,
//! every Schema Reference's identity and digest, and the digest of every other file.

pub mod archive;
pub mod load;
pub mod sign;

pub use load::{Bundle, SignatureStatus, TrustedKeys};

use crate::digest::{jcs, Digest};
use crate::interface::Interface;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The bundle format this version writes.
pub const FORMAT: &str = "skillbundle/1";
/// Paths inside the archive.
pub const MANIFEST_PATH: &str = "manifest.json";
pub const CARD_FRAGMENT_PATH: &str = "a2a/agent-card-fragment.json";

/// The archive path of a skill's interface document.
pub fn interface_path(skill_id: &str) -> String {
    format!("interfaces/{skill_id}.json")
}

/// The name of this tool as recorded in manifests.
pub fn generator() -> String {
    format!("skillbundle {}", env!("CARGO_PKG_VERSION"))
}

/// Pretty JSON with members sorted (by way of the JCS order), so the bytes depend only
/// on the value — never on hash-map iteration order.
pub fn stable_pretty(value: &Value) -> Vec<u8> {
    let sorted: Value = serde_json::from_slice(&jcs(value)).expect("JCS output is valid JSON");
    let mut out = serde_json::to_vec_pretty(&sorted).expect("a Value always serializes");
    out.push(b'\n');
    out
}

/// Everything that goes into a bundle, in memory: path → bytes.
#[derive(Debug, Clone)]
pub struct Contents {
    pub files: BTreeMap<String, Vec<u8>>,
    /// The manifest without signatures (what signatures cover, as JCS).
    pub manifest: Value,
}

/// Assemble the bundle files for a set of interfaces and the card fragment.
pub fn contents(
    name: &str,
    version: &str,
    interface_schema_digest: &Digest,
    interfaces: &[&Interface],
    card_fragment: &Value,
) -> Contents {
    let mut files = BTreeMap::new();
    let mut skills = Vec::new();
    for interface in interfaces {
        let path = interface_path(&interface.skill_id);
        files.insert(path.clone(), interface.jcs.to_vec());
        skills.push(json!({
            "skill_id": interface.skill_id,
            "skill_version": interface.skill_version.to_string(),
            "interface_digest": interface.digest.as_str(),
            "file": path,
            "schemas": interface.schemas.iter().map(|s| s.summary()).collect::<Vec<_>>(),
        }));
    }
    let fragment = stable_pretty(card_fragment);
    let mut other = serde_json::Map::new();
    other.insert(
        CARD_FRAGMENT_PATH.to_string(),
        json!(Digest::of_bytes(&fragment).as_str()),
    );
    files.insert(CARD_FRAGMENT_PATH.to_string(), fragment);
    let manifest = json!({
        "format": FORMAT,
        "bundle": {"name": name, "version": version},
        "interface_version": crate::interface_schema::INTERFACE_VERSION,
        "skill_interface_schema": {"digest": interface_schema_digest.as_str()},
        "generator": generator(),
        "skills": skills,
        "files": other,
    });
    files.insert(MANIFEST_PATH.to_string(), stable_pretty(&manifest));
    Contents { files, manifest }
}

/// Write `files` as a `.tar.gz` at `dest` atomically: into a temporary file in the same
/// directory, flushed to disk, then renamed over `dest`. A failure at any point leaves
/// whatever was at `dest` before untouched and no temporary file behind.
pub fn write_atomically(
    dest: &Path,
    files: &BTreeMap<String, Vec<u8>>,
) -> std::io::Result<PathBuf> {
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".skillbundle-")
        .suffix(".partial")
        .tempfile_in(dir)?;
    {
        let out = std::io::BufWriter::new(tmp.as_file_mut());
        let mut out = archive::write(
            out,
            files.iter().map(|(k, v)| (k.as_str(), v.as_slice())),
            archive::source_date_epoch(),
        )?;
        out.flush()?;
    }
    tmp.as_file().sync_all()?;
    set_readable(tmp.as_file())?;
    tmp.persist(dest).map_err(|e| e.error)?;
    Ok(dest.to_path_buf())
}

#[cfg(unix)]
fn set_readable(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn set_readable(_: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

/// What `inspect` shows of a bundle: identity and every digest, no inline schemas.
pub fn summary(manifest: &Value) -> Value {
    let skills: Vec<Value> = manifest
        .get("skills")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|s| {
            json!({
                "skill_id": s.get("skill_id"),
                "skill_version": s.get("skill_version"),
                "interface_digest": s.get("interface_digest"),
                "schemas": s.get("schemas"),
            })
        })
        .collect();
    json!({"bundle": manifest.get("bundle"), "skills": skills})
}
