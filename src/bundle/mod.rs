//! Bundles: the signed, reproducible archive a vendor publishes and an agent loads.
//!
//! Layout (README, "The bundle"): `manifest.json` (the bundle manifest), `interfaces/<skill_id>.json`
//! (each Skill Interface Document as its JCS bytes, so `sha256sum` of the file equals its
//! interface_digest) and `a2a/agent-card-fragment.json`. The manifest lists every skill,
//! every Schema Reference's identity and digest, and the digest of every other file.

pub mod archive;
pub mod destination;
pub mod first_pass;
pub mod manifest;
pub mod release_statement;
pub mod sign;

use crate::finding::{Code, Finding};
use crate::interface::Document;
use crate::wire::digest::{jcs, Digest};
pub use manifest::interface_path;
use manifest::{BundleName, InterfaceSchemaRef, Manifest, ManifestSkill};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bundle format this version writes.
pub const FORMAT: &str = "skillbundle/1";
/// Paths inside the archive.
pub const MANIFEST_PATH: &str = "manifest.json";
/// The Agent Card fragment: the bundle's AgentSkill entries and extension declaration.
pub const CARD_FRAGMENT_PATH: &str = "a2a/agent-card-fragment.json";

/// Whether `path` is a name the bundle layout allows inside the archive: the manifest,
/// the card fragment, or an interface document named like a skill_id that can become a
/// file name. The loader refuses any other entry before reading its data.
pub fn is_layout_path(path: &str) -> bool {
    if path == MANIFEST_PATH || path == CARD_FRAGMENT_PATH {
        return true;
    }
    path.strip_prefix("interfaces/")
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(crate::fs::sandbox::is_safe_name)
}

/// The name of this tool as recorded in manifests.
pub fn generator() -> String {
    format!("skillbundle {}", env!("CARGO_PKG_VERSION"))
}

/// Pretty JSON with members sorted (by way of the JCS order), so the bytes depend only
/// on the value — never on hash-map iteration order.
///
/// The bytes are those of `serde_json::to_vec_pretty` of the value read back from its
/// JCS bytes, plus a newline; they are written directly, without building that second
/// tree (for a manifest of 10,000 skills, tens of megabytes): members in JCS order,
/// strings escaped as both JCS and serde_json escape them, and numbers as serde_json
/// prints the number their JCS text reads as. A property test checks the equivalence.
pub fn stable_pretty(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    write_pretty(value, 0, &mut out);
    out.push(b'\n');
    out
}

fn write_pretty(value: &Value, depth: usize, out: &mut Vec<u8>) {
    let indent = |depth: usize, out: &mut Vec<u8>| out.resize(out.len() + 2 * depth, b' ');
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.extend_from_slice(b"[\n");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b",\n");
                }
                indent(depth + 1, out);
                write_pretty(item, depth + 1, out);
            }
            out.push(b'\n');
            indent(depth, out);
            out.push(b']');
        }
        Value::Object(map) if !map.is_empty() => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by(|a, b| crate::wire::digest::utf16_cmp(a.0, b.0));
            out.extend_from_slice(b"{\n");
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b",\n");
                }
                indent(depth + 1, out);
                crate::wire::digest::write_string(key, out);
                out.extend_from_slice(b": ");
                write_pretty(item, depth + 1, out);
            }
            out.push(b'\n');
            indent(depth, out);
            out.push(b'}');
        }
        Value::Number(_) => {
            let read_back: Value =
                serde_json::from_slice(&jcs(value)).expect("JCS output is valid JSON");
            serde_json::to_writer(&mut *out, &read_back).expect("a Value always serializes");
        }
        // null, booleans, strings, [] and {}: the same text in both.
        other => crate::wire::digest::write_jcs(other, out),
    }
}

/// Everything that goes into a bundle: path → content.
#[derive(Debug, Clone)]
pub struct Contents<'a> {
    /// Archive path → content, in path order.
    pub files: BTreeMap<String, Body<'a>>,
    /// The manifest without signatures (what signatures cover, as JCS).
    pub manifest: Value,
}

/// A bundle file's content: bytes, or an interface document, whose file is its
/// [`Document::jcs`] written only when the file is. A document holds its schemas' bytes,
/// not its own; holding every document's bytes as well held each schema twice (some
/// 200 MB more for 10,000 skills with large schemas).
#[derive(Debug, Clone, PartialEq)]
pub enum Body<'a> {
    /// A file's bytes as they are.
    Bytes(Arc<[u8]>),
    /// An interface document, written as its JCS bytes.
    Document(&'a Document),
}

impl Body<'_> {
    /// The file's bytes (a document's are written out here, each time).
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            Body::Bytes(b) => std::borrow::Cow::Borrowed(b),
            Body::Document(d) => std::borrow::Cow::Owned(d.jcs()),
        }
    }
}

impl archive::Content for &Body<'_> {
    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        Body::bytes(self)
    }
}

impl From<Vec<u8>> for Body<'_> {
    fn from(bytes: Vec<u8>) -> Self {
        Body::Bytes(bytes.into())
    }
}

/// Assemble the bundle files for a set of interfaces and the card fragment.
pub fn contents<'a>(
    name: &str,
    version: &str,
    interface_schema_digest: &Digest,
    interfaces: &[&'a Document],
    card_fragment: &Value,
) -> Contents<'a> {
    let mut files = BTreeMap::new();
    let mut skills = Vec::new();
    for &interface in interfaces {
        let skill = ManifestSkill::of(interface);
        files.insert(skill.file.clone(), Body::Document(interface));
        skills.push(skill);
    }
    let fragment = stable_pretty(card_fragment);
    let other = BTreeMap::from([(CARD_FRAGMENT_PATH.to_string(), Digest::of_bytes(&fragment))]);
    files.insert(CARD_FRAGMENT_PATH.to_string(), fragment.into());
    let manifest = Manifest {
        format: FORMAT.to_string(),
        bundle: BundleName {
            name: name.to_string(),
            version: version.to_string(),
        },
        interface_version: crate::interface::packaged_schema::INTERFACE_VERSION.to_string(),
        skill_interface_schema: InterfaceSchemaRef {
            digest: interface_schema_digest.clone(),
        },
        generator: generator(),
        skills,
        files: other,
        signatures: None,
    };
    let manifest = serde_json::to_value(&manifest).expect("a manifest always serializes");
    files.insert(MANIFEST_PATH.to_string(), stable_pretty(&manifest).into());
    Contents { files, manifest }
}

/// Read a bundle file into memory (see [`crate::fs::operator_file`]): anything but a
/// regular file (`/dev/zero`, a FIFO) is `path_invalid` before a byte is read, one
/// larger than `max_bytes` is `resource_limit_exceeded`.
pub fn read_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>, Finding> {
    use crate::fs::operator_file::{read, ReadError};
    read(path, max_bytes).map_err(|e| {
        let message = match &e {
            ReadError::NotRegular => {
                "not a regular file: a bundle is read from a file, never from a device or a pipe"
                    .to_string()
            }
            ReadError::TooLarge => "the bundle file is larger than the size limit".to_string(),
            ReadError::Io(e) => format!("cannot read the bundle: {e}"),
        };
        Finding::at_file(Code::from(&e), message, path)
    })
}

/// Write `files` as a `.tar.gz` at `dest` atomically: into a temporary file in the same
/// directory, flushed to disk, then renamed over `dest`. A failure at any point leaves
/// whatever was at `dest` before untouched and no temporary file behind.
pub fn write_atomically(dest: &Path, files: &BTreeMap<String, Body>) -> std::io::Result<PathBuf> {
    if let Some(dir) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
        remove_stale_temporaries(dir);
    }
    crate::fs::atomic_file::replace(dest, TEMP_PREFIX, |file| {
        let out = std::io::BufWriter::new(file);
        let mut out = archive::write(
            out,
            files.iter().map(|(k, v)| (k.as_str(), v)),
            archive::source_date_epoch(),
        )?;
        out.flush()
    })?;
    Ok(dest.to_path_buf())
}

/// Temporary bundle files are named `.skillbundle-*.partial` (the lock's too:
/// `.skillbundle-lock-*.partial`): never the final name, so a build that is killed (no
/// destructor runs) can leave one behind but never a partial file at the bundle's path.
const TEMP_PREFIX: &str = ".skillbundle-";

/// Remove the temporary bundle and lock files left in `dir` by killed builds (those
/// whose writer is gone: [`crate::fs::atomic_file::remove_stale`]).
pub fn remove_stale_temporaries(dir: &Path) {
    crate::fs::atomic_file::remove_stale(dir, TEMP_PREFIX);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The definition stable_pretty replaced: pretty-print the value read back from JCS.
    fn via_jcs(value: &Value) -> Vec<u8> {
        let sorted: Value = serde_json::from_slice(&jcs(value)).unwrap();
        let mut out = serde_json::to_vec_pretty(&sorted).unwrap();
        out.push(b'\n');
        out
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|i| json!(i)),
            any::<u64>().prop_map(|u| json!(u)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            "[\\x00-\\x1f\"\\\\/a\u{e9}\u{2028}\u{1f600}]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-c\u{ff61}\u{1f600}]{0,3}", inner), 0..5)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn stable_pretty_is_pretty_json_of_the_jcs_value(value in any_value()) {
            prop_assert_eq!(
                String::from_utf8(stable_pretty(&value)).unwrap(),
                String::from_utf8(via_jcs(&value)).unwrap()
            );
        }
    }

    #[test]
    fn stable_pretty_examples() {
        let v = json!({"b": [], "a": {"y": [1, 1.5e-7, 1e21], "x": {}}, "c": "\u{1}"});
        assert_eq!(stable_pretty(&v), via_jcs(&v));
        assert_eq!(stable_pretty(&json!(1.0)), b"1\n");
    }
}
