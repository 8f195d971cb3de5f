//! The first pass over a bundle archive, before anything in it is authenticated.
//!
//! Why a module of its own: an agent loading a bundle ([`crate::agent::load`]), `inspect`,
//! a registry referrer's check and `pull`'s choice of a destination all start from the
//! same unauthenticated read: the canonical archive form ([`crate::bundle::archive`]),
//! only the names the bundle layout allows, every entry hashed and dropped except
//! `manifest.json`, whose size is bounded from its tar header and whose text is parsed
//! as I-JSON (draft, "Security Considerations": a consumer bounds what unauthenticated
//! input can make it spend). It belongs to the format, not to any one reader of it.

use crate::bundle::archive::{self, ReadLimits};
use crate::bundle::{is_layout_path, MANIFEST_PATH};
use crate::finding::{Code, Finding, Location};
use serde_json::Value;

/// Nesting allowed in the bundle's flat files: manifest.json and the card fragment.
pub const MAX_FLAT_FILE_DEPTH: usize = 16;
/// The largest `manifest.json` read, decided from its tar header before a byte of it is
/// decompressed. A manifest lists about 1.2 KB and 25 values per skill (measured on
/// generated bundles: 1,219,778 bytes and 25,016 values for 1,000 skills), so 16 MiB is
/// room for some 13,000 skills; the 10,000-skill benchmark bundle needs 12 MB. (1 MiB,
/// the first cap, refused every bundle of more than about 850 skills.)
pub const MAX_BUNDLE_MANIFEST_BYTES: u64 = 16 << 20;
/// The most values `manifest.json` may hold (every member value and array element),
/// counted while parsing: room for 12,000 skills, and a bound on what the tree of an
/// unauthenticated manifest costs whatever its text (`[]` is two bytes and a `Value`).
pub const MAX_BUNDLE_MANIFEST_VALUES: usize = 300_000;

/// The first pass over a bundle archive: the canonical form checked, only names the
/// bundle layout allows, every entry hashed and dropped except `manifest.json`, whose
/// size is checked from its header (at most [`MAX_BUNDLE_MANIFEST_BYTES`]) before it is read;
/// then the manifest parsed as I-JSON with bounded nesting. Nothing else is kept, so
/// what an unauthenticated archive can make a reader spend is bounded by the manifest.
pub fn read_manifest_and_digests(
    bytes: &[u8],
    limits: ReadLimits,
) -> Result<(Value, Vec<archive::Entry>), Vec<Finding>> {
    let mut manifest_bytes = None;
    let entries = archive::scan(bytes, limits, |path, size| {
        if !is_layout_path(path) {
            return Err(archive::ArchiveError::invalid(
                "an entry has a name the bundle layout does not allow (manifest.json, a2a/agent-card-fragment.json, interfaces/<skill_id>.json)",
            ));
        }
        if path != MANIFEST_PATH {
            return Ok(archive::Disposition::Hash);
        }
        if size > MAX_BUNDLE_MANIFEST_BYTES {
            return Err(archive::ArchiveError::limit(
                "manifest.json is larger than the limit allows (refused from its header, before it was read)",
            ));
        }
        Ok(archive::Disposition::Keep)
    })
    .map_err(|e| vec![Finding::from(e)])?;
    let entries: Vec<archive::Entry> = entries
        .into_iter()
        .map(|mut e| {
            if e.path == MANIFEST_PATH {
                manifest_bytes = e.data.take();
            }
            e
        })
        .collect();
    let Some(manifest_bytes) = manifest_bytes else {
        return Err(vec![Finding::new(
            Code::BundleInvalid,
            "the archive has no manifest.json",
            Location::default(),
        )]);
    };
    let manifest = crate::wire::json::parse_with_limits(
        &manifest_bytes,
        MAX_FLAT_FILE_DEPTH,
        MAX_BUNDLE_MANIFEST_VALUES,
    )
    .map_err(|e| {
        vec![Finding::new(
            Code::limit_or(e.limit, Code::BundleInvalid),
            format!("manifest.json is not valid I-JSON: {}", e.message),
            Location::file(MANIFEST_PATH).with_position(e.line, e.column),
        )]
    })?;
    Ok((manifest, entries))
}

/// Read a bundle's `manifest.json` without authenticating it, as `inspect` shows it: the
/// archive must have the canonical form and the manifest must be I-JSON; no other entry
/// is kept and no signature is checked.
pub fn read_manifest(bytes: &[u8], limits: ReadLimits) -> Result<Value, Vec<Finding>> {
    read_manifest_and_digests(bytes, limits).map(|(manifest, _)| manifest)
}
