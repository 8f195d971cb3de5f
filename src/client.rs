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
//! Problems are reported as local [`ErrorObject`]s ([`Detected::Client`]): no remote task
//! exists, so they have no task state.

use crate::a2a::Advertised;
use crate::condition::{Condition, Detected, ErrorObject};
use crate::digest::Digest;
use crate::interface::{self, DESCRIBE_SKILL};
use crate::interface_schema::{InterfaceSchema, INTERFACE_VERSION};
use serde_json::Value;

/// A Skill Interface Document the client verified and may use.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedInterface {
    pub skill_id: String,
    pub skill_version: String,
    pub interface_digest: Digest,
    /// The complete document as returned.
    pub document: Value,
}

impl VerifiedInterface {
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
/// selected skill. Read the response with [`crate::json::parse`]: a reader that rounds
/// large integers would change the digest.
///
/// Errors: `unsupported_interface_version` when the document is not interface version
/// 1.0; `interface_invalid` for anything else (malformed response, a digest that differs
/// from the advertised one or from the recomputed one, a document invalid against the
/// Skill Interface Schema, another skill or version, an embedded schema whose digest does
/// not match).
pub fn verify_describe_response(
    advertised: &Advertised,
    response: &Value,
) -> Result<VerifiedInterface, ErrorObject> {
    if let Err(pointer) = crate::json::check_numbers(response) {
        return Err(invalid(format!(
            "the response has a number outside the I-JSON range at {pointer}"
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
    if returned != advertised.interface_digest {
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
    match document.get("interface_version").and_then(Value::as_str) {
        Some(INTERFACE_VERSION) => {}
        other => {
            return Err(ErrorObject::new(
                Condition::UnsupportedInterfaceVersion,
                Detected::Client,
                format!(
                "the document uses interface_version {}; this client supports {INTERFACE_VERSION}",
                other.map_or("(none)".to_string(), |v| format!("{v:?}"))
            ),
            ))
        }
    }
    let schema = InterfaceSchema::packaged().map_err(invalid)?;
    // check_document also performs step 6: every inline schema against its digest.
    let problems = interface::check_document(schema, document);
    if let Some(first) = problems.first() {
        return Err(invalid(format!(
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
        )));
    }
    let field = |k: &str| document.get(k).and_then(Value::as_str).unwrap_or_default();
    if field("skill_id") != advertised.skill_id
        || field("skill_version") != advertised.skill_version
    {
        return Err(invalid(format!(
            "the returned document describes {} {}, but {} {} was selected",
            field("skill_id"),
            field("skill_version"),
            advertised.skill_id,
            advertised.skill_version
        )));
    }
    Ok(VerifiedInterface {
        skill_id: advertised.skill_id.clone(),
        skill_version: advertised.skill_version.clone(),
        interface_digest: computed,
        document: document.clone(),
    })
}

/// The direct-composition decision for an upstream output and a downstream input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Composition {
    /// schema_uri, version, dialect and digest all match: validate the instance against
    /// the downstream input schema, then delegate.
    Direct,
    /// These fields differ: direct composition is not allowed (an out-of-band
    /// transformation may produce a new input, which is then validated as any input).
    NotDirect { mismatched: Vec<&'static str> },
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
    if version.parse::<crate::version::Version>().is_err() {
        return Err(invalid(format!(
            "the {which} Schema Reference's version {version:?} is not MAJOR.MINOR"
        )));
    }
    let declared: Digest = text("digest")
        .unwrap_or_default()
        .parse()
        .map_err(|e: String| invalid(format!("the {which} Schema Reference: {e}")))?;
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
        include_str!("../tests/vectors/describe_skill/evaluate_resource_condition.json");

    fn response() -> Value {
        crate::json::parse(RESPONSE.as_bytes()).unwrap()
    }

    fn advertised() -> Advertised {
        Advertised {
            skill_id: "evaluate_resource_condition".into(),
            skill_version: "1.0".into(),
            interface_digest:
                "sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d".into(),
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
        assert_eq!(verified.skill_id, "evaluate_resource_condition");
        assert_eq!(
            verified.interface_digest.as_str(),
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
        adv.interface_digest = format!("sha256:{}", "0".repeat(64));
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
            let digest = Digest::of_value(&r["result"]["interface"]).to_string();
            r["result"]["interface_digest"] = json!(digest);
            let mut adv = advertised();
            adv.interface_digest = digest;
            let e = verify_describe_response(&adv, &r).unwrap_err();
            assert_eq!(e.code(), Condition::InterfaceInvalid, "{field}");
            assert!(e.message().contains("was selected"), "{e}");
        }
    }

    /// Re-digest a modified document so only the rule under test can refuse it.
    fn redigested(mut r: Value) -> (Advertised, Value) {
        let digest = Digest::of_value(&r["result"]["interface"]).to_string();
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
