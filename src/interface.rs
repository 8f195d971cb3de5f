//! Skill Interface Documents: assembly, the rules no schema can express, and the digest.
//!
//! The draft has the agent "assemble and validate before advertisement": combine the
//! domain schemas with the standard structure, validate against the trusted Skill
//! Interface Schema, then compute the interface_digest over the JCS bytes of the whole
//! document. The same [`check_document`] runs at build time and again when an agent
//! loads a bundle, so a document is never trusted just because a file says so.

use crate::digest::Digest;
use crate::interface_schema::{InterfaceSchema, INTERFACE_VERSION};
use crate::manifest::SkillManifest;
use crate::version::Version;
use crate::workspace::Role;
use serde_json::{json, Value};

/// The skill id the draft reserves for interface retrieval.
pub const DESCRIBE_SKILL: &str = "describe_skill";

/// A Schema Reference: identity, integrity and inline content of one domain schema.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaReference {
    pub role: Role,
    /// The supporting-record kind, for [`Role::Record`].
    pub kind: Option<String>,
    pub schema_uri: String,
    pub version: Version,
    pub dialect: String,
    pub digest: Digest,
    pub schema: Value,
}

impl SchemaReference {
    /// Build a reference, computing the digest over the schema's JCS bytes.
    pub fn new(
        role: Role,
        kind: Option<String>,
        schema_uri: String,
        version: Version,
        dialect: String,
        schema: Value,
    ) -> Self {
        let digest = Digest::of_value(&schema);
        SchemaReference {
            role,
            kind,
            schema_uri,
            version,
            dialect,
            digest,
            schema,
        }
    }

    /// The Schema Reference object as it appears in a Skill Interface Document.
    pub fn to_json(&self) -> Value {
        json!({
            "schema_uri": self.schema_uri,
            "version": self.version.to_string(),
            "dialect": self.dialect,
            "digest": self.digest.as_str(),
            "resolution": {"type": "inline", "schema": self.schema},
        })
    }

    /// The identity summary (no inline schema) used in bundle manifests and `inspect`.
    pub fn summary(&self) -> Value {
        let mut v = json!({"role": self.role.as_str()});
        if let Some(kind) = &self.kind {
            v["kind"] = json!(kind);
        }
        v["schema_uri"] = json!(self.schema_uri);
        v["version"] = json!(self.version.to_string());
        v["dialect"] = json!(self.dialect);
        v["digest"] = json!(self.digest.as_str());
        v
    }
}

/// An assembled, digested Skill Interface Document.
#[derive(Debug, Clone)]
pub struct Interface {
    pub skill_id: String,
    pub skill_version: Version,
    /// Input, output, then records in manifest order.
    pub schemas: Vec<SchemaReference>,
    pub document: Value,
    pub digest: Digest,
}

/// Assemble the document for one skill from its manifest and its schema references
/// (input, output, then the records in manifest order).
pub fn assemble(manifest: &SkillManifest, schemas: Vec<SchemaReference>) -> Interface {
    let find = |role| {
        schemas
            .iter()
            .find(|s| s.role == role)
            .map(SchemaReference::to_json)
    };
    let records: Vec<Value> = schemas
        .iter()
        .filter(|s| s.role == Role::Record)
        .map(|s| json!({"kind": s.kind, "schema_reference": s.to_json()}))
        .collect();
    let document = json!({
        "interface_version": INTERFACE_VERSION,
        "skill_id": manifest.skill_id,
        "skill_version": manifest.skill_version.to_string(),
        "input_schema": find(Role::Input),
        "output_schema": find(Role::Output),
        "supporting_record_schemas": records,
        "interaction": {
            "supported_response_modes": manifest.interaction.supported_response_modes,
            "cancellable": manifest.interaction.cancellable,
        },
        "authority": {
            "default_mode": manifest.authority.default_mode,
            "approval_may_be_required": manifest.authority.approval_may_be_required,
        },
    });
    let digest = Digest::of_value(&document);
    Interface {
        skill_id: manifest.skill_id.clone(),
        skill_version: manifest.skill_version,
        schemas,
        document,
        digest,
    }
}

/// One way a document is invalid: a JSON pointer into the document and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentProblem {
    pub pointer: String,
    pub message: String,
}

/// Validate a document against the Skill Interface Schema and the rules no schema can
/// express: record kinds unique and different from skill_id, `describe_skill` reserved,
/// and every inline schema matching its declared digest.
pub fn check_document(schema: &InterfaceSchema, document: &Value) -> Vec<DocumentProblem> {
    let mut problems: Vec<DocumentProblem> = schema
        .validate(document)
        .into_iter()
        .map(|v| DocumentProblem {
            pointer: v.instance_path,
            message: format!(
                "does not conform to the Skill Interface Schema ({} at {}): {}",
                v.keyword, v.schema_path, v.message
            ),
        })
        .collect();
    let skill_id = document.get("skill_id").and_then(Value::as_str);
    if skill_id == Some(DESCRIBE_SKILL) {
        problems.push(DocumentProblem {
            pointer: "/skill_id".into(),
            message: format!("skill_id {DESCRIBE_SKILL:?} is reserved for interface retrieval"),
        });
    }
    let mut seen = std::collections::HashSet::new();
    let records = document
        .get("supporting_record_schemas")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, record) in records.iter().enumerate() {
        let Some(kind) = record.get("kind").and_then(Value::as_str) else {
            continue;
        };
        let pointer = format!("/supporting_record_schemas/{i}/kind");
        if Some(kind) == skill_id {
            problems.push(DocumentProblem {
                pointer: pointer.clone(),
                message: format!(
                    "supporting-record kind {kind:?} equals the skill_id; a record Artifact would be confused with the primary result"
                ),
            });
        }
        if !seen.insert(kind) {
            problems.push(DocumentProblem {
                pointer,
                message: format!("supporting-record kind {kind:?} is declared more than once"),
            });
        }
    }
    for (pointer, reference) in schema_references(document) {
        let declared = reference.get("digest").and_then(Value::as_str);
        let Some(inline) = reference.pointer("/resolution/schema") else {
            continue;
        };
        let actual = Digest::of_value(inline);
        if declared.is_some_and(|d| d != actual.as_str()) {
            problems.push(DocumentProblem {
                pointer: format!("{pointer}/digest"),
                message: format!(
                    "declared digest {} does not match the inline schema's digest {actual}",
                    declared.unwrap_or_default()
                ),
            });
        }
    }
    problems
}

/// Every Schema Reference in a document with its pointer: input, output, then records.
pub fn schema_references(document: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for key in ["input_schema", "output_schema"] {
        if let Some(r) = document.get(key) {
            out.push((format!("/{key}"), r));
        }
    }
    if let Some(records) = document
        .get("supporting_record_schemas")
        .and_then(Value::as_array)
    {
        for (i, rec) in records.iter().enumerate() {
            if let Some(r) = rec.get("schema_reference") {
                out.push((
                    format!("/supporting_record_schemas/{i}/schema_reference"),
                    r,
                ));
            }
        }
    }
    out
}
