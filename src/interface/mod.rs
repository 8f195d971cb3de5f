//! Skill Interface Documents: assembly, the rules no schema can express, and the digest.
//!
//! The draft has the agent "assemble and validate before advertisement": combine the
//! domain schemas with the standard structure, validate against the trusted Skill
//! Interface Schema, then compute the interface_digest over the JCS bytes of the whole
//! document. The same checks ([`Document::check`] on what was assembled,
//! [`Document::read`] on what was received) run at build time and again when an agent
//! loads a bundle, so a document is never trusted just because a file says so.

pub mod binding;
pub mod condition;
pub mod packaged_schema;
pub mod task_rules;
pub mod terms;

pub use terms::{Authority, DefaultMode, Interaction, ResponseMode, Role};

use crate::interface::binding::Binding;
use crate::interface::packaged_schema::{InterfaceSchema, INTERFACE_VERSION};
use crate::wire::digest::{write_jcs, Digest};
use crate::wire::pointer::Problem;
use crate::wire::schema_bytes::SchemaBytes;
use crate::wire::version::Version;
use serde_json::{json, Value};

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
    /// The schema's role: input, output or supporting record.
    pub role: Role,
    /// The supporting-record kind, for [`Role::Record`].
    pub kind: Option<String>,
    /// The schema's identity URI.
    pub schema_uri: String,
    /// The schema's version, MAJOR.MINOR.
    pub version: Version,
    /// The JSON Schema dialect (meta-schema URI).
    pub dialect: String,
    /// SHA-256 of the inline schema's JCS bytes.
    pub digest: Digest,
    /// The inline schema's canonical (JCS) bytes; `digest` is their SHA-256.
    pub jcs: SchemaBytes,
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
        let jcs = crate::wire::digest::jcs(schema);
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
        jcs: SchemaBytes,
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
        parse_canonical(&self.jcs.bytes())
    }

    /// Append this reference's JCS bytes, as it appears in a Skill Interface Document,
    /// with the schema's canonical bytes spliced in instead of canonicalizing it again.
    /// Members in RFC 8785 order: dialect, digest, resolution {schema, type}, schema_uri,
    /// version.
    fn write_jcs(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"dialect\":");
        write_jcs(&json!(self.dialect), out);
        out.extend_from_slice(b",\"digest\":");
        write_jcs(&json!(self.digest.as_str()), out);
        out.extend_from_slice(b",\"resolution\":{\"schema\":");
        out.extend_from_slice(&self.jcs.bytes());
        out.extend_from_slice(b",\"type\":\"inline\"},\"schema_uri\":");
        write_jcs(&json!(self.schema_uri), out);
        out.extend_from_slice(b",\"version\":");
        write_jcs(&json!(self.version.to_string()), out);
        out.push(b'}');
    }
}

/// Parse bytes this crate canonicalized itself: valid I-JSON by construction.
pub(crate) fn parse_canonical(bytes: &[u8]) -> Value {
    crate::wire::json::parse_with_depth(bytes, usize::MAX)
        .expect("canonical bytes written by this crate parse")
}

/// A Skill Interface Document, typed: the one type the builder writes ([`crate::build::manifest::SkillManifest::assemble`],
/// [`Document::write_jcs`]) and every reader reads ([`Document::read`]: bundle loading,
/// the client's describe_skill check, the ledger, the inventory) — so the document's
/// structure is spelled here and nowhere else.
///
/// No tree and no copy of the whole document is kept: each inline schema is held as its
/// JCS bytes (in [`SchemaReference::jcs`]), and the document's own JCS bytes — exactly the
/// bundle's `interfaces/<skill_id>.json`, and what `digest` covers — are written from the
/// fields when wanted, splicing those bytes in. At 10,000 skills, trees of the documents
/// took more memory than everything else an agent holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The skill's id.
    pub skill_id: String,
    /// The skill's version.
    pub skill_version: Version,
    /// The response modes and cancellability the skill supports.
    pub interaction: Interaction,
    /// The default mode and whether approval may be required.
    pub authority: Authority,
    /// Input, output, then the records (each with its kind) in document order.
    schemas: Vec<SchemaReference>,
    /// Whether the document has a `supporting_record_schemas` member. The Skill
    /// Interface Schema makes it optional, and absent differs from `[]` in the bytes, so
    /// in the digest; documents this crate assembles always have it.
    records_member: bool,
    /// The interface_digest: SHA-256 of the document's JCS bytes.
    pub digest: Digest,
}

impl Document {
    /// The skill binding this document is served under: its skill_id, skill_version and
    /// interface_digest.
    pub fn binding(&self) -> Binding {
        Binding {
            skill_id: self.skill_id.clone(),
            skill_version: self.skill_version,
            interface_digest: self.digest.clone(),
        }
    }

    /// A document of these parts; the digest is computed over the bytes they make.
    /// `schemas` holds one input and one output reference and any number of records, in
    /// any order of roles (records keep theirs). `None` without an input or an output.
    pub fn new(
        skill_id: String,
        skill_version: Version,
        interaction: Interaction,
        authority: Authority,
        schemas: Vec<SchemaReference>,
        records_member: bool,
    ) -> Option<Self> {
        let take = |role| schemas.iter().find(|s| s.role == role).cloned();
        let mut ordered = vec![take(Role::Input)?, take(Role::Output)?];
        ordered.extend(schemas.into_iter().filter(|s| s.role == Role::Record));
        let mut document = Document {
            skill_id,
            skill_version,
            interaction,
            authority,
            schemas: ordered,
            records_member,
            digest: Digest::of_bytes(b""),
        };
        document.digest = Digest::of_bytes(&document.jcs());
        Some(document)
    }

    /// The input Schema Reference.
    pub fn input(&self) -> &SchemaReference {
        &self.schemas[0]
    }

    /// The output Schema Reference.
    pub fn output(&self) -> &SchemaReference {
        &self.schemas[1]
    }

    /// The supporting-record Schema References, in document order.
    pub fn records(&self) -> &[SchemaReference] {
        &self.schemas[2..]
    }

    /// The Schema Reference of the supporting-record kind `kind`.
    pub fn record(&self, kind: &str) -> Option<&SchemaReference> {
        self.records()
            .iter()
            .find(|r| r.kind.as_deref() == Some(kind))
    }

    /// Input, output, then the records: every Schema Reference in document order.
    pub fn schemas(&self) -> &[SchemaReference] {
        &self.schemas
    }

    /// The same document holding its schemas packed ([`SchemaBytes::packed`]): what a
    /// loaded bundle keeps.
    pub fn packed(mut self) -> Document {
        for s in &mut self.schemas {
            s.jcs = s.jcs.packed();
        }
        self
    }

    /// The JSON Pointer of the `index`th Schema Reference (input, output, then the
    /// records) in a document's value.
    pub fn reference_pointer(index: usize) -> String {
        match index {
            0 => "/input_schema".into(),
            1 => "/output_schema".into(),
            i => format!("/supporting_record_schemas/{}/schema_reference", i - 2),
        }
    }

    /// Each Schema Reference with its pointer and its inline schema as found in `value`,
    /// the value this document was [`read`](Document::read) from (governance walks the
    /// tree; the document keeps only the bytes).
    pub fn inline_schemas<'d, 'v>(
        &'d self,
        value: &'v Value,
    ) -> impl Iterator<Item = (&'d SchemaReference, String, &'v Value)> {
        self.schemas.iter().enumerate().map(move |(i, reference)| {
            let pointer = Document::reference_pointer(i);
            let inline = value
                .pointer(&format!("{pointer}/resolution/schema"))
                .unwrap_or(&Value::Null);
            (reference, pointer, inline)
        })
    }

    /// Append the document's JCS bytes, each inline schema's canonical bytes spliced in
    /// (none is canonicalized again). Members in RFC 8785 order (all ASCII names):
    /// authority, input_schema, interaction, interface_version, output_schema, skill_id,
    /// skill_version, supporting_record_schemas — the same bytes as canonicalizing the
    /// document's tree, which a test checks.
    pub fn write_jcs(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"authority\":");
        write_jcs(
            &json!({
                "default_mode": self.authority.default_mode,
                "approval_may_be_required": self.authority.approval_may_be_required,
            }),
            out,
        );
        out.extend_from_slice(b",\"input_schema\":");
        self.input().write_jcs(out);
        out.extend_from_slice(b",\"interaction\":");
        write_jcs(
            &json!({
                "supported_response_modes": self.interaction.supported_response_modes,
                "cancellable": self.interaction.cancellable,
            }),
            out,
        );
        out.extend_from_slice(b",\"interface_version\":");
        write_jcs(&json!(INTERFACE_VERSION), out);
        out.extend_from_slice(b",\"output_schema\":");
        self.output().write_jcs(out);
        out.extend_from_slice(b",\"skill_id\":");
        write_jcs(&json!(self.skill_id), out);
        out.extend_from_slice(b",\"skill_version\":");
        write_jcs(&json!(self.skill_version.to_string()), out);
        if self.records_member {
            out.extend_from_slice(b",\"supporting_record_schemas\":[");
            for (i, s) in self.records().iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"kind\":");
                write_jcs(&json!(s.kind), out);
                out.extend_from_slice(b",\"schema_reference\":");
                s.write_jcs(out);
                out.push(b'}');
            }
            out.push(b']');
        }
        out.push(b'}');
    }

    /// The document's JCS bytes: the bundle's `interfaces/<skill_id>.json`.
    pub fn jcs(&self) -> Vec<u8> {
        let size: usize = self.schemas.iter().map(|s| s.jcs.len() + 256).sum();
        let mut out = Vec::with_capacity(size + 512);
        self.write_jcs(&mut out);
        out
    }

    /// The document as a value (parsed from its JCS bytes).
    pub fn to_value(&self) -> Value {
        parse_canonical(&self.jcs())
    }

    /// Read a document: validated against the Skill Interface Schema and the rules no
    /// schema can express (record kinds unique and different from skill_id,
    /// `describe_skill` reserved, a version that fits), and every inline schema's digest
    /// recomputed and compared with the declared one. One canonicalization gives the
    /// interface digest and every inline schema's bytes (JCS is compositional: a
    /// member's bytes are its own canonical bytes), so no schema is canonicalized twice.
    pub fn read(schema: &InterfaceSchema, document: &Value) -> Result<Self, Vec<Problem>> {
        let problems = check_structure(schema, document);
        if !problems.is_empty() {
            return Err(problems);
        }
        // The structure is valid: every member below exists with its type.
        let mut problems = Vec::new();
        let text = |v: &Value, key: &str| {
            v.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let version = |text: &str, pointer: String, problems: &mut Vec<Problem>| {
            let parsed = text.parse::<Version>().ok();
            if parsed.is_none() {
                problems.push(Problem {
                    pointer,
                    message: "the version's numbers are too large for this reader".into(),
                });
            }
            parsed
        };
        let records = document.get("supporting_record_schemas");
        let record_kinds = records
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|record| (Role::Record, Some(text(record, "kind"))));
        let refs: Vec<(Role, Option<String>, String, &Value)> =
            [(Role::Input, None), (Role::Output, None)]
                .into_iter()
                .chain(record_kinds)
                .enumerate()
                .map(|(i, (role, kind))| {
                    let pointer = Document::reference_pointer(i);
                    let reference = document.pointer(&pointer).unwrap_or(&Value::Null);
                    (role, kind, pointer, reference)
                })
                .collect();
        let inlines: Vec<&Value> = refs.iter().map(|r| &r.3["resolution"]["schema"]).collect();
        let (bytes, spans) = crate::wire::digest::jcs_marking(document, &inlines);
        let mut schemas = Vec::new();
        for ((role, kind, pointer, reference), span) in refs.into_iter().zip(spans) {
            let canonical: SchemaBytes = match span {
                Some(span) => bytes[span].into(),
                None => crate::wire::digest::jcs(&reference["resolution"]["schema"]).into(),
            };
            let actual = Digest::of_bytes(&canonical.bytes());
            let declared = text(reference, "digest");
            if declared != actual.as_str() {
                problems.push(Problem {
                    pointer: format!("{pointer}/digest"),
                    message: format!(
                        "declared digest {declared} does not match the inline schema's digest {actual}"
                    ),
                });
            }
            let at = format!("{pointer}/version");
            let Some(v) = version(&text(reference, "version"), at, &mut problems) else {
                continue;
            };
            schemas.push(SchemaReference::from_canonical(
                role,
                kind,
                text(reference, "schema_uri"),
                v,
                text(reference, "dialect"),
                actual,
                canonical,
            ));
        }
        let skill_version = version(
            &text(document, "skill_version"),
            "/skill_version".into(),
            &mut problems,
        );
        let interaction = serde_json::from_value(document["interaction"].clone());
        let authority = serde_json::from_value(document["authority"].clone());
        match (skill_version, interaction, authority) {
            (Some(skill_version), Ok(interaction), Ok(authority)) if problems.is_empty() => {
                Ok(Document {
                    skill_id: text(document, "skill_id"),
                    skill_version,
                    interaction,
                    authority,
                    schemas,
                    records_member: records.is_some(),
                    digest: Digest::of_bytes(&bytes),
                })
            }
            _ => {
                if problems.is_empty() {
                    problems.push(Problem {
                        pointer: String::new(),
                        message: "the document's interaction or authority cannot be read".into(),
                    });
                }
                Err(problems)
            }
        }
    }

    /// The Skill Interface Schema and the rules no schema can express, on a document this
    /// process assembled (its inline digests were computed from the very bytes it embeds).
    pub fn check(&self, schema: &InterfaceSchema) -> Vec<Problem> {
        check_structure(schema, &self.to_value())
    }
}

/// The Skill Interface Schema and the kind and skill_id rules.
fn check_structure(schema: &InterfaceSchema, document: &Value) -> Vec<Problem> {
    let mut problems: Vec<Problem> = schema
        .validate(document)
        .into_iter()
        .map(|v| Problem {
            pointer: v.instance_path,
            message: format!(
                "does not conform to the Skill Interface Schema ({} at {}): {}",
                v.keyword, v.schema_path, v.message
            ),
        })
        .collect();
    let skill_id = document.get("skill_id").and_then(Value::as_str);
    if skill_id == Some(DESCRIBE_SKILL) {
        problems.push(Problem {
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
            problems.push(Problem {
                pointer: pointer.clone(),
                message: format!(
                    "supporting-record kind {kind:?} equals the skill_id; a record Artifact would be confused with the primary result"
                ),
            });
        }
        if !seen.insert(kind) {
            problems.push(Problem {
                pointer,
                message: format!("supporting-record kind {kind:?} is declared more than once"),
            });
        }
    }
    problems
}
