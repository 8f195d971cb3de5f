//! `manifest.json`, the bundle manifest: one type, written by [`super::contents`] and
//! read by [`crate::agent::load`], so the two cannot drift apart.
//!
//! The manifest names the bundle, the Skill Interface Schema and the generator, lists
//! every skill with its interface document's path and digest and the identity of each
//! Schema Reference (no inline schemas), gives the digest of every other file, and
//! carries the signatures over its own JCS bytes without `signatures`. A reader refuses
//! any member it does not know (`deny_unknown_fields`): an unknown member could change
//! what the bundle means.

use crate::crypto::jws::JwsSignature;
use crate::interface::binding::Binding;
use crate::interface::{Document, SchemaReference};
use crate::wire::digest::Digest;
use crate::wire::version::Version;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The archive path of a skill's interface document.
pub fn interface_path(skill_id: &str) -> String {
    format!("interfaces/{skill_id}.json")
}

/// The whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// [`super::FORMAT`].
    pub format: String,
    /// The bundle's name and version.
    pub bundle: BundleName,
    /// The draft's interface version every document of the bundle follows.
    pub interface_version: String,
    /// The packaged Skill Interface Schema the documents were validated against.
    pub skill_interface_schema: InterfaceSchemaRef,
    /// The tool and version that wrote the bundle.
    pub generator: String,
    /// In skill_id order.
    pub skills: Vec<ManifestSkill>,
    /// The digest of every file that is neither the manifest nor an interface document.
    pub files: BTreeMap<String, Digest>,
    /// Absent in an unsigned bundle (and in what the signatures cover).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signatures: Option<Vec<JwsSignature>>,
}

/// The bundle's name and version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleName {
    /// The bundle's name (`skillbundle.yaml` `name`).
    pub name: String,
    /// The bundle's release version.
    pub version: String,
}

/// The packaged Skill Interface Schema the documents were validated against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfaceSchemaRef {
    /// The schema's JCS digest.
    pub digest: Digest,
}

/// One skill: its binding, its document's path, and its Schema References.
///
/// The binding's three members are spelled out rather than a flattened
/// [`Binding`]: serde cannot combine `flatten` with `deny_unknown_fields`, and a manifest
/// member nobody reads must be refused. [`ManifestSkill::binding`] gives the one type;
/// the version is typed, so a malformed one is refused with the manifest's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestSkill {
    /// The skill's id (binding).
    pub skill_id: String,
    /// The skill's version (binding).
    pub skill_version: Version,
    /// The digest of the skill's interface document (binding).
    pub interface_digest: Digest,
    /// `interfaces/<skill_id>.json`.
    pub file: String,
    /// Input, output, then each supporting record in document order.
    pub schemas: Vec<ManifestSchema>,
}

/// The identity of one Schema Reference, without its inline schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestSchema {
    /// `input`, `output` or `record`.
    pub role: String,
    /// The supporting-record kind, for `record`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The Schema Reference's `schema_uri`.
    pub schema_uri: String,
    /// Its `version`, MAJOR.MINOR.
    pub version: String,
    /// Its `dialect` (the JSON Schema meta-schema URI).
    pub dialect: String,
    /// The digest of its inline schema.
    pub digest: Digest,
}

impl ManifestSkill {
    /// The skill binding this entry lists.
    pub fn binding(&self) -> Binding {
        Binding {
            skill_id: self.skill_id.clone(),
            skill_version: self.skill_version,
            interface_digest: self.interface_digest.clone(),
        }
    }

    /// The entry for an assembled interface.
    pub fn of(interface: &Document) -> Self {
        ManifestSkill {
            skill_id: interface.skill_id.clone(),
            skill_version: interface.skill_version,
            interface_digest: interface.digest.clone(),
            file: interface_path(&interface.skill_id),
            schemas: interface.schemas().iter().map(ManifestSchema::of).collect(),
        }
    }
}

impl ManifestSchema {
    /// Every member, for comparing a listed reference with a document's.
    pub fn identity(&self) -> [Option<&str>; 6] {
        [
            Some(self.role.as_str()),
            self.kind.as_deref(),
            Some(self.schema_uri.as_str()),
            Some(self.version.as_str()),
            Some(self.dialect.as_str()),
            Some(self.digest.as_str()),
        ]
    }

    /// The identity of a Schema Reference.
    pub fn of(reference: &SchemaReference) -> Self {
        ManifestSchema {
            role: reference.role.as_str().to_string(),
            kind: reference.kind.clone(),
            schema_uri: reference.schema_uri.clone(),
            version: reference.version.to_string(),
            dialect: reference.dialect.clone(),
            digest: reference.digest.clone(),
        }
    }
}
