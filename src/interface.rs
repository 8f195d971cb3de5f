//! Skill Interface Documents: assembly, the rules no schema can express, and the digest.
//!
//! The draft has the agent "assemble and validate before advertisement": combine the
//! domain schemas with the standard structure, validate against the trusted Skill
//! Interface Schema, then compute the interface_digest over the JCS bytes of the whole
//! document. The same [`check_document`] runs at build time and again when an agent
//! loads a bundle, so a document is never trusted just because a file says so.

use crate::digest::{write_jcs, Digest};
use crate::interface_schema::{InterfaceSchema, INTERFACE_VERSION};
use crate::manifest::SkillManifest;
use crate::version::Version;
use crate::workspace::Role;
use serde_json::{json, Value};
use std::sync::Arc;

/// The skill id the draft reserves for interface retrieval.
pub const DESCRIBE_SKILL: &str = "describe_skill";

/// A Schema Reference: identity, integrity and inline content of one domain schema.
///
/// The inline schema is kept as its RFC 8785 (JCS) bytes — what `digest` covers and what
/// the document embeds — rather than as a `serde_json::Value` tree: a tree costs several
/// times the bytes, and a build of thousands of skills must not hold them all at once.
/// [`SchemaReference::schema`] parses the bytes back when a tree is needed.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaReference {
    pub role: Role,
    /// The supporting-record kind, for [`Role::Record`].
    pub kind: Option<String>,
    pub schema_uri: String,
    pub version: Version,
    pub dialect: String,
    pub digest: Digest,
    /// The inline schema's canonical (JCS) bytes; `digest` is their SHA-256.
    pub jcs: Arc<[u8]>,
}

impl SchemaReference {
    /// Build a reference, canonicalizing the schema once and computing the digest over
    /// those bytes.
    pub fn new(
        role: Role,
        kind: Option<String>,
        schema_uri: String,
        version: Version,
        dialect: String,
        schema: &Value,
    ) -> Self {
        let jcs = crate::digest::jcs(schema);
        let digest = Digest::of_bytes(&jcs);
        Self::from_canonical(role, kind, schema_uri, version, dialect, digest, jcs.into())
    }

    /// A reference whose schema is already canonical: `jcs` (RFC 8785 bytes written by
    /// this crate, or checked against `digest` by whoever read them) is shared, not
    /// copied, and not canonicalized again.
    pub fn from_canonical(
        role: Role,
        kind: Option<String>,
        schema_uri: String,
        version: Version,
        dialect: String,
        digest: Digest,
        jcs: Arc<[u8]>,
    ) -> Self {
        SchemaReference {
            role,
            kind,
            schema_uri,
            version,
            dialect,
            digest,
            jcs,
        }
    }

    /// The inline schema as a value (parsed from its canonical bytes).
    pub fn schema(&self) -> Value {
        parse_canonical(&self.jcs)
    }

    /// The Schema Reference object as it appears in a Skill Interface Document.
    pub fn to_json(&self) -> Value {
        json!({
            "schema_uri": self.schema_uri,
            "version": self.version.to_string(),
            "dialect": self.dialect,
            "digest": self.digest.as_str(),
            "resolution": {"type": "inline", "schema": self.schema()},
        })
    }

    /// Append this reference's JCS bytes: [`Self::to_json`] canonicalized, with the
    /// schema's canonical bytes spliced in instead of canonicalizing the schema again.
    /// Members in RFC 8785 order: dialect, digest, resolution {schema, type}, schema_uri,
    /// version.
    fn write_jcs(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"dialect\":");
        write_jcs(&json!(self.dialect), out);
        out.extend_from_slice(b",\"digest\":");
        write_jcs(&json!(self.digest.as_str()), out);
        out.extend_from_slice(b",\"resolution\":{\"schema\":");
        out.extend_from_slice(&self.jcs);
        out.extend_from_slice(b",\"type\":\"inline\"},\"schema_uri\":");
        write_jcs(&json!(self.schema_uri), out);
        out.extend_from_slice(b",\"version\":");
        write_jcs(&json!(self.version.to_string()), out);
        out.push(b'}');
    }
}

/// Parse bytes this crate canonicalized itself: valid I-JSON by construction.
pub(crate) fn parse_canonical(bytes: &[u8]) -> Value {
    crate::json::parse_with_depth(bytes, usize::MAX)
        .expect("canonical bytes written by this crate parse")
}

/// An assembled, digested Skill Interface Document.
///
/// The document is kept as its JCS bytes — exactly the bundle's
/// `interfaces/<skill_id>.json`, and what `digest` covers; [`Interface::document`] parses
/// it when a tree is needed.
#[derive(Debug, Clone)]
pub struct Interface {
    pub skill_id: String,
    pub skill_version: Version,
    /// Input, output, then records in manifest order.
    pub schemas: Vec<SchemaReference>,
    /// The document's canonical (JCS) bytes.
    pub jcs: Arc<[u8]>,
    pub digest: Digest,
}

impl Interface {
    /// The document as a value (parsed from its canonical bytes).
    pub fn document(&self) -> Value {
        parse_canonical(&self.jcs)
    }
}

/// Assemble the document for one skill from its manifest and its schema references
/// (input, output, then the records in manifest order).
///
/// The document is written directly as JCS, splicing in each schema's canonical bytes, so
/// no inline schema is canonicalized twice. Members in RFC 8785 order (all ASCII names):
/// authority, input_schema, interaction, interface_version, output_schema, skill_id,
/// skill_version, supporting_record_schemas — the same bytes as canonicalizing the
/// document tree, which a test checks.
pub fn assemble(manifest: &SkillManifest, schemas: Vec<SchemaReference>) -> Interface {
    let size: usize = schemas.iter().map(|s| s.jcs.len() + 256).sum();
    let mut out = Vec::with_capacity(size + 512);
    let reference = |role, out: &mut Vec<u8>| match schemas.iter().find(|s| s.role == role) {
        Some(s) => s.write_jcs(out),
        None => out.extend_from_slice(b"null"),
    };
    out.extend_from_slice(b"{\"authority\":");
    write_jcs(
        &json!({
            "default_mode": manifest.authority.default_mode,
            "approval_may_be_required": manifest.authority.approval_may_be_required,
        }),
        &mut out,
    );
    out.extend_from_slice(b",\"input_schema\":");
    reference(Role::Input, &mut out);
    out.extend_from_slice(b",\"interaction\":");
    write_jcs(
        &json!({
            "supported_response_modes": manifest.interaction.supported_response_modes,
            "cancellable": manifest.interaction.cancellable,
        }),
        &mut out,
    );
    out.extend_from_slice(b",\"interface_version\":");
    write_jcs(&json!(INTERFACE_VERSION), &mut out);
    out.extend_from_slice(b",\"output_schema\":");
    reference(Role::Output, &mut out);
    out.extend_from_slice(b",\"skill_id\":");
    write_jcs(&json!(manifest.skill_id), &mut out);
    out.extend_from_slice(b",\"skill_version\":");
    write_jcs(&json!(manifest.skill_version.to_string()), &mut out);
    out.extend_from_slice(b",\"supporting_record_schemas\":[");
    for (i, s) in schemas
        .iter()
        .filter(|s| s.role == Role::Record)
        .enumerate()
    {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"kind\":");
        write_jcs(&json!(s.kind), &mut out);
        out.extend_from_slice(b",\"schema_reference\":");
        s.write_jcs(&mut out);
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
    let digest = Digest::of_bytes(&out);
    Interface {
        skill_id: manifest.skill_id.clone(),
        skill_version: manifest.skill_version,
        schemas,
        jcs: out.into(),
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
    let mut problems = check_structure(schema, document);
    problems.extend(check_inline_digests(document));
    problems
}

/// [`check_document`] for a document this process has just [`assemble`]d: the same
/// checks except recomputing the inline-schema digests, which `assemble` took from the
/// very bytes it embedded (canonicalizing every schema again would only repeat work).
pub fn check_assembled(schema: &InterfaceSchema, interface: &Interface) -> Vec<DocumentProblem> {
    check_structure(schema, &interface.document())
}

/// The Skill Interface Schema and the kind and skill_id rules.
fn check_structure(schema: &InterfaceSchema, document: &Value) -> Vec<DocumentProblem> {
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
    problems
}

/// The digest of `document` and [`check_document`]'s problems, canonicalizing the
/// document once: each inline schema's digest is taken over its own span of the
/// document's JCS bytes (the same bytes as canonicalizing it alone), instead of
/// canonicalizing every inline schema a second time. For loading bundles.
pub fn digest_and_check(
    schema: &InterfaceSchema,
    document: &Value,
) -> (Digest, Vec<DocumentProblem>) {
    let inlines: Vec<&Value> = schema_references(document)
        .into_iter()
        .filter_map(|(_, r)| r.pointer("/resolution/schema"))
        .collect();
    let (bytes, spans) = crate::digest::jcs_marking(document, &inlines);
    let mut problems = check_structure(schema, document);
    problems.extend(inline_digest_problems(document, |inline| {
        let span = inlines
            .iter()
            .position(|v| std::ptr::eq(*v, inline))
            .and_then(|i| spans[i].clone());
        match span {
            Some(span) => Digest::of_bytes(&bytes[span]),
            None => Digest::of_value(inline),
        }
    }));
    (Digest::of_bytes(&bytes), problems)
}

/// Every inline schema's digest, recomputed and compared with the declared one.
fn check_inline_digests(document: &Value) -> Vec<DocumentProblem> {
    inline_digest_problems(document, Digest::of_value)
}

fn inline_digest_problems(
    document: &Value,
    digest_of: impl Fn(&Value) -> Digest,
) -> Vec<DocumentProblem> {
    let mut problems = Vec::new();
    for (pointer, reference) in schema_references(document) {
        let declared = reference.get("digest").and_then(Value::as_str);
        let Some(inline) = reference.pointer("/resolution/schema") else {
            continue;
        };
        let actual = digest_of(inline);
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
