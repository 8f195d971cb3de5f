//! What a loaded bundle holds, as data: each skill's version, interface digest and
//! Schema References (role, record kind, schema_uri, version, dialect, digest).
//!
//! The draft's agent serves one Skill Interface Document per skill; operators and tools
//! (`skillbundle inspect`) want the list of what those documents pin without reading
//! them. It is read from the documents [`Bundle::open`] verified, not from the
//! manifest's claims, so what is listed is what an agent would serve.

use crate::bundle::manifest::{BundleName, ManifestSchema};
use crate::bundle::Bundle;
use crate::digest::Digest;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The contents of a loaded bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Inventory {
    pub bundle: BundleName,
    /// In manifest order.
    pub skills: Vec<SkillListing>,
}

/// One skill of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillListing {
    pub skill_id: String,
    pub skill_version: String,
    pub interface_digest: String,
    /// Input, output, then each supporting record in document order: the same identity
    /// the manifest lists for each, read here from the document itself.
    pub schemas: Vec<ManifestSchema>,
}

// The members of a Skill Interface Document this listing reads; the document was
// validated against the Skill Interface Schema when the bundle was opened.
#[derive(Deserialize)]
struct References {
    input_schema: Reference,
    output_schema: Reference,
    #[serde(default)]
    supporting_record_schemas: Vec<RecordReference>,
}

#[derive(Deserialize)]
struct Reference {
    schema_uri: String,
    version: String,
    dialect: String,
    digest: Digest,
}

#[derive(Deserialize)]
struct RecordReference {
    kind: String,
    schema_reference: Reference,
}

impl Reference {
    fn listing(self, role: &str, kind: Option<String>) -> ManifestSchema {
        ManifestSchema {
            role: role.to_string(),
            kind,
            schema_uri: self.schema_uri,
            version: self.version,
            dialect: self.dialect,
            digest: self.digest,
        }
    }
}

/// The schemas `document` references, in document order.
fn schemas(document: &Value) -> Vec<ManifestSchema> {
    // A loaded document always has this shape (`Bundle::open` refuses any other).
    let Ok(refs) = References::deserialize(document) else {
        return Vec::new();
    };
    let mut out = vec![
        refs.input_schema.listing("input", None),
        refs.output_schema.listing("output", None),
    ];
    out.extend(
        refs.supporting_record_schemas
            .into_iter()
            .map(|r| r.schema_reference.listing("record", Some(r.kind))),
    );
    out
}

/// What `bundle` holds.
pub fn of(bundle: &Bundle) -> Inventory {
    let skills = bundle
        .advertised()
        .into_iter()
        .map(|a| SkillListing {
            schemas: bundle
                .interface(&a.skill_id)
                .map(schemas)
                .unwrap_or_default(),
            skill_id: a.skill_id,
            skill_version: a.skill_version,
            interface_digest: a.interface_digest,
        })
        .collect();
    Inventory {
        bundle: BundleName {
            name: bundle.name().to_string(),
            version: bundle.version().to_string(),
        },
        skills,
    }
}
