//! The client side: accepting a describe_skill response, and deciding direct composition.
//!
//! A client agent must not take a remote agent's word for its interface. After calling
//! describe_skill it verifies (draft "Client-agent behavior", steps 4–6) that the
//! returned interface_digest is the one the Agent Card advertised, that the digest it
//! computes over the returned document equals both, that the document is valid against
//! its own trusted copy of the v1.0 Skill Interface Schema and identifies the selected
//! skill and version, and that every embedded schema matches its declared digest. A
//! structurally valid document for another skill, version or digest is refused.
//!
//! When one skill's output feeds another skill's input, direct composition is allowed
//! only on an exact match of the two Schema References' schema_uri, version, dialect and
//! digest — never on similarity of shape ("Composition of consecutive skills").
//!
//! Before any of that, the client reads the Agent Card ([`read_card`]): the extension
//! and its `interface_version` (another version is `unsupported_interface_version`),
//! and the skills it binds; a skill the card does not advertise — or a card without
//! `describe_skill` — is `skill_not_advertised`, and no request is built for it
//! ([`CardAdvertisement::describe_request`]). A verified interface then checks the
//! outgoing arguments and builds the request object ([`VerifiedInterface::request`]),
//! and checks what comes back ([`VerifiedInterface::check_result_object`],
//! [`VerifiedInterface::check_record`]: `output_invalid`, locally). In direct
//! composition, [`transfer`] validates the value handed from one skill's output to the
//! next skill's input. Caching verified interfaces is [`crate::client::interface_cache`]'s job.
//!
//! Every inline schema of a returned document is governed exactly as a bundle's are
//! when an agent loads it ([`govern`]: limits, dialect, reference closure, meta-schema):
//! an external or dangling `$ref`, another dialect or an invalid schema makes the
//! document `interface_invalid`, as the draft requires of a client.
//!
//! Problems are reported as local [`ErrorObject`]s ([`Detected::Client`]): no remote task
//! exists, so they have no task state.

#[cfg(feature = "client")]
pub mod call;
pub mod clause;
pub mod delegation;
pub mod final_task;
pub mod interface_cache;
#[cfg(feature = "client")]
pub mod probe;
#[cfg(feature = "client")]
pub mod transport;

use crate::card::a2a::EXTENSION_URI;
use crate::finding::{Code, Finding};
use crate::interface::binding::Binding;
use crate::interface::condition::{Condition, Detected, ErrorObject};
use crate::interface::packaged_schema::{InterfaceSchema, INTERFACE_VERSION};
use crate::interface::{Document, DESCRIBE_SKILL};
use crate::schema::validator::{Governed, Validator};
use crate::wire::digest::Digest;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A Skill Interface Document the client verified and may use, with its schemas
/// compiled (format asserted, nothing ever fetched).
#[derive(Clone)]
pub struct VerifiedInterface {
    /// The skill_id, skill_version and interface_digest the Agent Card advertised, the
    /// agent returned, and the client recomputed.
    pub binding: Binding,
    /// The complete document as returned.
    pub document: Value,
    validators: Arc<Validators>,
}

struct Validators {
    input: Governed,
    output: Governed,
    records: BTreeMap<String, Governed>,
}

impl std::fmt::Debug for VerifiedInterface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedInterface")
            .field("binding", &self.binding)
            .finish_non_exhaustive()
    }
}

/// Two verified interfaces are equal when their documents are (the validators are
/// compiled from them).
impl PartialEq for VerifiedInterface {
    fn eq(&self, other: &Self) -> bool {
        self.binding == other.binding && self.document == other.document
    }
}

impl VerifiedInterface {
    /// What the Agent Card advertised for this interface.
    pub fn advertised(&self) -> &Binding {
        &self.binding
    }

    /// Validate the outgoing `arguments` against input_schema (step 7) and build the
    /// skill request object that carries the selected version and digest (step 8): the
    /// data value of the request Message's single Data Part. `input_invalid` (local)
    /// when they do not conform: nothing may be sent.
    pub fn request(&self, arguments: Value) -> Result<Value, ErrorObject> {
        self.check_arguments(&arguments)?;
        Ok(json!({
            "skill": self.binding.skill_id,
            "skill_version": self.binding.skill_version,
            "interface_digest": self.binding.interface_digest.as_str(),
            "arguments": arguments,
        }))
    }

    /// Validate a domain input against input_schema (`input_invalid`, local).
    pub fn check_arguments(&self, arguments: &Value) -> Result<(), ErrorObject> {
        crate::agent::validate(
            &self.validators.input,
            arguments,
            Condition::InputInvalid,
            Detected::Client,
            || {
                format!(
                    "the arguments do not conform to the input_schema of {} {}",
                    self.binding.skill_id, self.binding.skill_version
                )
            },
        )
    }

    /// Validate a received domain output (the skill result object's `result`) against
    /// output_schema (step 10). `output_invalid` (local) means the output is unusable,
    /// whatever state the remote task reached.
    pub fn check_result(&self, result: &Value) -> Result<(), ErrorObject> {
        crate::agent::validate(
            &self.validators.output,
            result,
            Condition::OutputInvalid,
            Detected::Client,
            || {
                format!(
                    "the result does not conform to the output_schema of {} {}",
                    self.binding.skill_id, self.binding.skill_version
                )
            },
        )
    }

    /// Check the data of the primary result Artifact's Data Part, the skill result
    /// object `{"skill": <skill_id>, "result": …}`: its `skill` must be this skill and
    /// its `result` must conform to output_schema; otherwise `output_invalid` (local).
    pub fn check_result_object(&self, object: &Value) -> Result<(), ErrorObject> {
        crate::interface::task_rules::check_result_object(self, object)
            .map(drop)
            .map_err(|fault| fault.error(Detected::Client))
    }

    /// Validate a received supporting record of `kind` (the Artifact's name) against
    /// the schema the document declares for that kind. An undeclared kind or a
    /// nonconforming record is `output_invalid` (local).
    pub fn check_record(&self, kind: &str, record: &Value) -> Result<(), ErrorObject> {
        let Some(validator) = self.validators.records.get(kind) else {
            let kinds = self.validators.records.keys().map(String::as_str).collect();
            let fault =
                crate::interface::task_rules::undeclared_kind(&self.binding.skill_id, kinds);
            return Err(fault.error(Detected::Client));
        };
        crate::agent::validate(
            validator,
            record,
            Condition::OutputInvalid,
            Detected::Client,
            || {
                format!(
                    "the record does not conform to the schema {} declares for its kind",
                    self.binding.skill_id
                )
            },
        )
    }

    /// The input Schema Reference.
    pub fn input_schema(&self) -> &Value {
        &self.document["input_schema"]
    }

    /// The output Schema Reference.
    pub fn output_schema(&self) -> &Value {
        &self.document["output_schema"]
    }

    /// The Schema Reference of a supporting-record kind.
    pub fn record_schema(&self, kind: &str) -> Option<&Value> {
        self.document["supporting_record_schemas"]
            .as_array()?
            .iter()
            .find(|r| r["kind"] == kind)
            .map(|r| &r["schema_reference"])
    }
}

fn invalid(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(Condition::InterfaceInvalid, Detected::Client, message)
}

/// Verify a describe_skill result object (`{"skill":"describe_skill","result":
/// {"interface_digest","interface"}}`) against what the Agent Card advertised for the
/// selected skill. Read the response with [`crate::wire::json::parse`]: a reader that rounds
/// large integers would change the digest.
///
/// Errors: `unsupported_interface_version` when the document is not interface version
/// 1.0; `interface_invalid` for anything else (malformed response, a digest that differs
/// from the advertised one or from the recomputed one, a document invalid against the
/// Skill Interface Schema, another skill or version, an embedded schema whose digest does
/// not match).
pub fn verify_describe_response(
    advertised: &Binding,
    response: &Value,
) -> Result<VerifiedInterface, ErrorObject> {
    if let Err(e) = crate::wire::json::check_numbers(response) {
        return Err(invalid(format!(
            "the response has a number outside the I-JSON range at {}",
            e.pointer
        )));
    }
    if response.get("skill").and_then(Value::as_str) != Some(DESCRIBE_SKILL) {
        return Err(invalid(
            "not a describe_skill result object: \"skill\" is not \"describe_skill\"",
        ));
    }
    let result = response
        .get("result")
        .ok_or_else(|| invalid("the describe_skill result object has no \"result\""))?;
    let returned = result
        .get("interface_digest")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("the describe_skill result has no string interface_digest"))?;
    let document = result
        .get("interface")
        .filter(|d| d.is_object())
        .ok_or_else(|| invalid("the describe_skill result has no interface document object"))?;

    // Step 4: returned digest == advertised, recomputed digest == both.
    if returned != advertised.interface_digest.as_str() {
        return Err(invalid(format!(
            "describe_skill returned interface_digest {returned}, but the Agent Card advertises {} for {}",
            advertised.interface_digest, advertised.skill_id
        )));
    }
    let computed = Digest::of_value(document);
    if computed.as_str() != returned {
        return Err(invalid(format!(
            "the returned document's digest is {computed}, not the advertised and returned {returned}"
        )));
    }

    // Step 5: interface version, schema validity, identity.
    match document.get("interface_version") {
        Some(Value::String(v)) if v == INTERFACE_VERSION => {}
        Some(Value::String(_)) => {
            return Err(unsupported(
                "the returned document's interface_version is not one this client supports (1.0)",
            ))
        }
        _ => {
            return Err(invalid(
                "the returned document has no string interface_version",
            ))
        }
    }
    let schema = InterfaceSchema::packaged().map_err(|e| invalid(e.to_string()))?;
    // Reading the document also performs step 6: every inline schema against its digest.
    let typed = Document::read(schema, document).map_err(|problems| {
        let first = &problems[0];
        invalid(format!(
            "the returned document is invalid at {}: {}{}",
            if first.pointer.is_empty() {
                "/"
            } else {
                &first.pointer
            },
            first.message,
            if problems.len() > 1 {
                format!(" ({} problems in all)", problems.len())
            } else {
                String::new()
            }
        ))
    })?;
    if typed.skill_id != advertised.skill_id || typed.skill_version != advertised.skill_version {
        return Err(invalid(format!(
            "the returned document describes {} {}, but {} {} was selected",
            typed.skill_id, typed.skill_version, advertised.skill_id, advertised.skill_version
        )));
    }
    // The draft's "Deliver schemas inline": the loader's governance, on every schema;
    // each validator is compiled when first used, as an agent's are.
    let limits = crate::schema::limits::Limits::default();
    let patterns = crate::schema::validator::PatternCache::new();
    let mut governed = Vec::new();
    for (reference, pointer, inline) in typed.inline_schemas(document) {
        let schema = crate::schema::govern_lazily(
            inline,
            reference.jcs.clone(),
            &reference.dialect,
            &limits,
            &patterns,
        )
        .map_err(|f| governance_error(&pointer, &first_finding(f)))?;
        governed.push(schema);
    }
    // A read document has an input and an output reference, then its records.
    let mut governed = governed.into_iter();
    let (Some(input), Some(output)) = (governed.next(), governed.next()) else {
        return Err(invalid(
            "the returned document lacks an input or output schema",
        ));
    };
    let records = typed
        .records()
        .iter()
        .map(|r| r.kind.clone().unwrap_or_default())
        .zip(governed)
        .collect();
    Ok(VerifiedInterface {
        binding: Binding {
            skill_id: advertised.skill_id.clone(),
            skill_version: advertised.skill_version,
            interface_digest: computed,
        },
        document: document.clone(),
        validators: Arc::new(Validators {
            input,
            output,
            records,
        }),
    })
}

fn unsupported(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(
        Condition::UnsupportedInterfaceVersion,
        Detected::Client,
        message,
    )
}

/// Govern one inline schema as an agent governs a bundle's (and `build` a workspace's),
/// through the project's one governance function [`crate::schema::govern`]: resource
/// limits, dialect, inline-reference closure (no external or dangling `$ref`), then the
/// meta-schema and compilation with `format` asserted and retrieval impossible. The
/// first problem is returned as a finding whose pointer is into `schema`.
pub fn govern(schema: &Value, dialect: &str) -> Result<Validator, Finding> {
    let limits = crate::schema::limits::Limits::default();
    let patterns = crate::schema::validator::PatternCache::new();
    crate::schema::govern(schema, dialect, &limits, &patterns).map_err(first_finding)
}

fn first_finding(findings: Vec<Finding>) -> Finding {
    findings.into_iter().next().unwrap_or_else(|| {
        Finding::new(
            Code::SchemaInvalid,
            "the schema does not compile",
            Default::default(),
        )
    })
}

/// A governance finding on the schema of the Schema Reference at `pointer`:
/// `resource_limit_exceeded` for a limit, `interface_invalid` for anything else.
fn governance_error(pointer: &str, finding: &Finding) -> ErrorObject {
    let at = finding.location.pointer.as_deref().unwrap_or("");
    let message = format!(
        "the inline schema at {pointer}/resolution/schema{at} is not acceptable ({}): {}",
        finding.code, finding.message
    );
    let code = if finding.code == Code::ResourceLimitExceeded {
        Condition::ResourceLimitExceeded
    } else {
        Condition::InterfaceInvalid
    };
    ErrorObject::new(code, Detected::Client, message)
}

/// What an Agent Card advertises through the schema-interface extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardAdvertisement {
    /// The extension's `params.interface_version` (always 1.0 once read).
    pub interface_version: String,
    /// One binding per skill_id, in the card's order.
    pub skills: Vec<Binding>,
    /// Whether the card's `skills` include `describe_skill`.
    pub describe_skill: bool,
    /// Whether the card marks the extension `required: true` (the agent refuses a
    /// request that does not activate it).
    pub extension_required: bool,
}

/// Read the schema-interface advertisement of an Agent Card (step 1).
///
/// Errors: `skill_not_advertised` when the card has no schema-interface extension (the
/// agent does not offer the procedure, so no skill is advertised under it);
/// `unsupported_interface_version` when the extension's `interface_version` is a version
/// other than 1.0; `interface_invalid` when the card lists the extension more than once
/// (each entry could bind a skill_id again), or the advertisement is malformed — params
/// without a string `interface_version` or a `skills` array, an entry without string
/// `skill_id`, canonical `skill_version` and `sha256:` `interface_digest`, a skill_id
/// bound twice (version 1.0 permits one binding per skill_id), or bound to no AgentSkill
/// of the same card.
pub fn read_card(card: &Value) -> Result<CardAdvertisement, ErrorObject> {
    let mut entries = card
        .pointer("/capabilities/extensions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, e)| e["uri"] == EXTENSION_URI);
    let (_, extension) = entries.next().ok_or_else(|| {
        ErrorObject::new(
            Condition::SkillNotAdvertised,
            Detected::Client,
            "the Agent Card does not advertise the schema-interface extension: the agent offers no schema-governed skill",
        )
    })?;
    // A second entry could bind a skill_id again, to another version or digest; a
    // client reading only the first would select a binding the agent may not serve.
    if let Some((second, _)) = entries.next() {
        return Err(invalid(format!(
            "capabilities.extensions[{second}] advertises the schema-interface extension a second time; version 1.0 permits one advertisement, with exactly one binding per skill_id, in an Agent Card"
        )));
    }
    let params = &extension["params"];
    match params.get("interface_version") {
        Some(Value::String(v)) if v == INTERFACE_VERSION => {}
        Some(Value::String(_)) => {
            return Err(unsupported(
                "the Agent Card advertises an interface_version this client does not support (1.0)",
            ))
        }
        _ => {
            return Err(invalid(
                "the extension's params have no string interface_version",
            ))
        }
    }
    let entries = params["skills"]
        .as_array()
        .ok_or_else(|| invalid("the extension's params have no skills array"))?;
    let card_skills: Vec<&str> = card["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["id"].as_str())
        .collect();
    let mut skills: Vec<Binding> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let text = |k: &str| entry.get(k).and_then(Value::as_str);
        let (Some(id), Some(version), Some(digest)) = (
            text("skill_id"),
            text("skill_version"),
            text("interface_digest"),
        ) else {
            return Err(invalid(format!(
                "the extension's skills[{i}] lacks a string skill_id, skill_version or interface_digest"
            )));
        };
        let Ok(version) = version.parse::<crate::wire::version::Version>() else {
            return Err(invalid(format!(
                "the extension's skills[{i}].skill_version is not a canonical MAJOR.MINOR version"
            )));
        };
        let Ok(digest) = digest.parse::<Digest>() else {
            return Err(invalid(format!(
                "the extension's skills[{i}].interface_digest is not sha256: and 64 lowercase hex digits"
            )));
        };
        if skills.iter().any(|s| s.skill_id == id) {
            return Err(invalid(format!(
                "the extension's skills[{i}] binds a skill_id a second time; version 1.0 permits one binding per skill_id"
            )));
        }
        if !card_skills.contains(&id) {
            return Err(invalid(format!(
                "the extension's skills[{i}] binds a skill_id that is not an AgentSkill of the same card"
            )));
        }
        skills.push(Binding {
            skill_id: id.to_string(),
            skill_version: version,
            interface_digest: digest,
        });
    }
    Ok(CardAdvertisement {
        interface_version: INTERFACE_VERSION.to_string(),
        skills,
        describe_skill: card_skills.contains(&DESCRIBE_SKILL),
        extension_required: extension.get("required") == Some(&Value::Bool(true)),
    })
}

impl CardAdvertisement {
    /// Select a skill (step 2): both describe_skill and the skill must be advertised,
    /// otherwise `skill_not_advertised` — detected before anything is sent.
    pub fn select(&self, skill_id: &str) -> Result<&Binding, ErrorObject> {
        let not = |m: &str| ErrorObject::new(Condition::SkillNotAdvertised, Detected::Client, m);
        if !self.describe_skill {
            return Err(not(
                "the Agent Card does not advertise describe_skill: the schema-interface procedure is not available",
            ));
        }
        self.skills
            .iter()
            .find(|s| s.skill_id == skill_id)
            .ok_or_else(|| not("the Agent Card does not advertise the selected skill under the schema-interface extension"))
    }

    /// The describe_skill request object for `skill_id` (step 3), built only when the
    /// card advertises it: `{"skill":"describe_skill","arguments":{"skill_id"}}`.
    pub fn describe_request(&self, skill_id: &str) -> Result<Value, ErrorObject> {
        let selected = self.select(skill_id)?;
        Ok(json!({"skill": DESCRIBE_SKILL, "arguments": {"skill_id": selected.skill_id}}))
    }
}

/// The direct-composition decision for an upstream output and a downstream input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Composition {
    /// schema_uri, version, dialect and digest all match: validate the instance against
    /// the downstream input schema, then delegate.
    Direct,
    /// These fields differ: direct composition is not allowed (an out-of-band
    /// transformation may produce a new input, which is then validated as any input).
    NotDirect {
        /// The Schema Reference fields that differ.
        mismatched: Vec<&'static str>,
    },
}

/// Hand a value from one skill's output to the next skill's input (direct composition):
/// the two Schema References must match exactly ([`can_compose`]), and the value must
/// then validate against the downstream input schema before it is delegated. Returns
/// the decision; on [`Composition::Direct`] the value was validated (`input_invalid`,
/// local, when it does not conform), on [`Composition::NotDirect`] it was not, and it
/// must not be delegated under this framework without an out-of-band transformation.
pub fn transfer(
    upstream: &VerifiedInterface,
    value: &Value,
    downstream: &VerifiedInterface,
) -> Result<Composition, ErrorObject> {
    let decision = can_compose(upstream.output_schema(), downstream.input_schema())?;
    if decision == Composition::Direct {
        downstream.check_arguments(value)?;
    }
    Ok(decision)
}

/// Decide direct composition of two Schema References by the exact-match rule
/// (schema_uri, version, dialect, digest). Both must be well-formed inline Schema
/// References whose embedded schema matches its declared digest; otherwise
/// `interface_invalid`.
pub fn can_compose(
    upstream_output: &Value,
    downstream_input: &Value,
) -> Result<Composition, ErrorObject> {
    check_reference("upstream output", upstream_output)?;
    check_reference("downstream input", downstream_input)?;
    let mismatched: Vec<&'static str> = ["schema_uri", "version", "dialect", "digest"]
        .into_iter()
        .filter(|k| upstream_output[*k] != downstream_input[*k])
        .collect();
    Ok(if mismatched.is_empty() {
        Composition::Direct
    } else {
        Composition::NotDirect { mismatched }
    })
}

/// A well-formed v1.0 inline Schema Reference whose schema matches its digest.
fn check_reference(which: &str, reference: &Value) -> Result<(), ErrorObject> {
    let text = |k: &str| reference.get(k).and_then(Value::as_str);
    for k in ["schema_uri", "version", "dialect", "digest"] {
        if text(k).is_none_or(str::is_empty) {
            return Err(invalid(format!("the {which} Schema Reference has no {k}")));
        }
    }
    let version = text("version").unwrap_or_default();
    if version.parse::<crate::wire::version::Version>().is_err() {
        return Err(invalid(format!(
            "the {which} Schema Reference's version {version:?} is not MAJOR.MINOR"
        )));
    }
    let declared: Digest = text("digest").unwrap_or_default().parse().map_err(
        |e: crate::wire::digest::NotADigest| invalid(format!("the {which} Schema Reference: {e}")),
    )?;
    if reference
        .pointer("/resolution/type")
        .and_then(Value::as_str)
        != Some("inline")
    {
        return Err(invalid(format!(
            "the {which} Schema Reference is not resolved inline (interface version 1.0 carries every schema inline)"
        )));
    }
    let schema = reference
        .pointer("/resolution/schema")
        .filter(|s| s.is_object() || s.is_boolean())
        .ok_or_else(|| invalid(format!("the {which} Schema Reference has no inline schema")))?;
    let actual = Digest::of_value(schema);
    if actual != declared {
        return Err(invalid(format!(
            "the {which} Schema Reference declares digest {declared}, but its inline schema's digest is {actual}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const RESPONSE: &str =
        include_str!("../../tests/vectors/describe_skill/evaluate_resource_condition.json");

    fn response() -> Value {
        crate::wire::json::parse(RESPONSE.as_bytes()).unwrap()
    }

    fn advertised() -> Binding {
        Binding {
            skill_id: "evaluate_resource_condition".into(),
            skill_version: "1.0".parse().unwrap(),
            interface_digest:
                "sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d"
                    .parse()
                    .unwrap(),
        }
    }

    fn code(r: Result<VerifiedInterface, ErrorObject>) -> Condition {
        let e = r.unwrap_err();
        assert_eq!(e.task_state(), None, "client errors have no task state");
        e.code()
    }

    #[test]
    fn accepts_the_drafts_worked_example() {
        let verified = verify_describe_response(&advertised(), &response()).unwrap();
        assert_eq!(verified.binding.skill_id, "evaluate_resource_condition");
        assert_eq!(
            verified.binding.interface_digest,
            advertised().interface_digest
        );
        assert_eq!(
            verified.input_schema()["schema_uri"],
            "urn:example:resource-condition:input:1.0"
        );
        assert!(verified.record_schema("resource-observation").is_some());
        assert!(verified.record_schema("other").is_none());
    }

    #[test]
    fn refuses_a_digest_other_than_the_advertised_one() {
        let mut adv = advertised();
        adv.interface_digest = format!("sha256:{}", "0".repeat(64)).parse().unwrap();
        assert_eq!(
            code(verify_describe_response(&adv, &response())),
            Condition::InterfaceInvalid
        );
    }

    #[test]
    fn refuses_a_document_that_does_not_match_its_digest() {
        // Returned and advertised digests agree, but the document was changed.
        let mut r = response();
        r["result"]["interface"]["authority"]["default_mode"] = json!("execute");
        let e = verify_describe_response(&advertised(), &r).unwrap_err();
        assert_eq!(e.code(), Condition::InterfaceInvalid);
        assert!(e.message().contains("digest"), "{e}");
    }

    #[test]
    fn refuses_another_skill_or_version() {
        for (field, value) in [("skill_id", "other_skill"), ("skill_version", "1.1")] {
            let mut r = response();
            r["result"]["interface"][field] = json!(value);
            let digest = Digest::of_value(&r["result"]["interface"]);
            r["result"]["interface_digest"] = json!(digest);
            let mut adv = advertised();
            adv.interface_digest = digest;
            let e = verify_describe_response(&adv, &r).unwrap_err();
            assert_eq!(e.code(), Condition::InterfaceInvalid, "{field}");
            assert!(e.message().contains("was selected"), "{e}");
        }
    }

    /// Re-digest a modified document so only the rule under test can refuse it.
    fn redigested(mut r: Value) -> (Binding, Value) {
        let digest = Digest::of_value(&r["result"]["interface"]);
        r["result"]["interface_digest"] = json!(digest);
        let mut adv = advertised();
        adv.interface_digest = digest;
        (adv, r)
    }

    #[test]
    fn refuses_other_interface_versions() {
        let mut r = response();
        r["result"]["interface"]["interface_version"] = json!("2.0");
        let (adv, r) = redigested(r);
        assert_eq!(
            code(verify_describe_response(&adv, &r)),
            Condition::UnsupportedInterfaceVersion
        );
    }

    #[test]
    fn refuses_an_embedded_schema_that_does_not_match_its_digest() {
        let mut r = response();
        r["result"]["interface"]["output_schema"]["resolution"]["schema"]["properties"]["unit"] =
            json!({"type": "number"});
        let (adv, r) = redigested(r);
        let e = verify_describe_response(&adv, &r).unwrap_err();
        assert_eq!(e.code(), Condition::InterfaceInvalid);
        assert!(e.message().contains("/output_schema/digest"), "{e}");
    }

    #[test]
    fn refuses_documents_invalid_against_the_skill_interface_schema() {
        let mut r = response();
        r["result"]["interface"]["authority"]["default_mode"] = json!("anything_goes");
        let (adv, r) = redigested(r);
        let e = verify_describe_response(&adv, &r).unwrap_err();
        assert_eq!(e.code(), Condition::InterfaceInvalid);
        assert!(e.message().contains("/authority/default_mode"), "{e}");
    }

    #[test]
    fn refuses_malformed_responses() {
        for bad in [
            json!({}),
            json!({"skill": "evaluate_resource_condition", "result": {}}),
            json!({"skill": "describe_skill"}),
            json!({"skill": "describe_skill", "result": {"interface": {}}}),
            json!({"skill": "describe_skill", "result": {"interface_digest": advertised().interface_digest}}),
            json!({"skill": "describe_skill", "result": {"interface_digest": advertised().interface_digest, "interface": "{}"}}),
        ] {
            assert_eq!(
                code(verify_describe_response(&advertised(), &bad)),
                Condition::InterfaceInvalid,
                "{bad}"
            );
        }
    }

    fn reference() -> Value {
        response()["result"]["interface"]["output_schema"].clone()
    }

    #[test]
    fn composes_only_on_an_exact_match() {
        assert_eq!(
            can_compose(&reference(), &reference()).unwrap(),
            Composition::Direct
        );
        // Same schema content under another identity: not direct.
        let mut other = reference();
        other["schema_uri"] = json!("urn:example:other:1.0");
        other["version"] = json!("1.1");
        assert_eq!(
            can_compose(&reference(), &other).unwrap(),
            Composition::NotDirect {
                mismatched: vec!["schema_uri", "version"]
            }
        );
        let mut other = reference();
        other["dialect"] = json!("https://json-schema.org/draft/2019-09/schema");
        assert_eq!(
            can_compose(&reference(), &other).unwrap(),
            Composition::NotDirect {
                mismatched: vec!["dialect"]
            }
        );
        // A structurally similar schema with a different digest: not direct.
        let mut other = reference();
        other["resolution"]["schema"]["description"] = json!("same shape, other meaning");
        other["digest"] = json!(Digest::of_value(&other["resolution"]["schema"]).to_string());
        assert_eq!(
            can_compose(&reference(), &other).unwrap(),
            Composition::NotDirect {
                mismatched: vec!["digest"]
            }
        );
    }

    #[test]
    fn composition_verifies_inline_digests() {
        let mut tampered = reference();
        tampered["resolution"]["schema"]["required"] = json!([]);
        let e = can_compose(&reference(), &tampered).unwrap_err();
        assert_eq!(e.code(), Condition::InterfaceInvalid);
        assert_eq!(e.task_state(), None);
        assert!(e.message().contains("downstream input"), "{e}");
        for bad in [
            json!({}),
            json!({"schema_uri": "u", "version": "1.0", "dialect": "d", "digest": "sha256:x"}),
            {
                let mut r = reference();
                r["resolution"]["type"] = json!("uri");
                r
            },
            {
                let mut r = reference();
                r["version"] = json!("1.01");
                r
            },
        ] {
            assert_eq!(
                can_compose(&bad, &reference()).unwrap_err().code(),
                Condition::InterfaceInvalid,
                "{bad}"
            );
        }
    }
}
