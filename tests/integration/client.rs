//! The draft's client-agent behaviour, one test per MUST the client functions implement
//! ("Client-agent behavior", "Machine-readable error conditions", "Composition of
//! consecutive skills", "Operational Considerations"). Every condition is local: no
//! remote task exists, so none has a task state.

use serde_json::{json, Value};
use skillbundle::client::interface_cache::InterfaceCache;
use skillbundle::client::{self, Composition, VerifiedInterface};
use skillbundle::interface::binding::Binding;
use skillbundle::interface::condition::{Condition, ErrorObject};
use skillbundle::wire::digest::Digest;

const RESPONSE: &str = include_str!("../vectors/describe_skill/evaluate_resource_condition.json");
const CARD: &str = include_str!("../cmd/fixtures/client/card.json");
const ERC: &str = "evaluate_resource_condition";

fn response() -> Value {
    skillbundle::wire::json::parse(RESPONSE.as_bytes()).unwrap()
}

fn card() -> Value {
    skillbundle::wire::json::parse(CARD.as_bytes()).unwrap()
}

fn verified() -> VerifiedInterface {
    let card = client::read_card(&card()).unwrap();
    client::verify_describe_response(card.select(ERC).unwrap(), &response()).unwrap()
}

fn local(e: ErrorObject) -> Condition {
    assert_eq!(
        e.task_state(),
        None,
        "a client condition has no task state: {e}"
    );
    e.code()
}

/// Change the returned document, then re-digest it (and the schema's digest) so that
/// only the rule under test can refuse it.
fn with_input_schema(schema: Value) -> (Binding, Value) {
    let mut r = response();
    let reference = &mut r["result"]["interface"]["input_schema"];
    reference["digest"] = json!(Digest::of_value(&schema).to_string());
    reference["resolution"]["schema"] = schema;
    let digest = Digest::of_value(&r["result"]["interface"]);
    r["result"]["interface_digest"] = json!(digest);
    let advertised = Binding {
        skill_id: ERC.into(),
        skill_version: "1.0".parse().unwrap(),
        interface_digest: digest,
    };
    (advertised, r)
}

#[test]
fn a_returned_schema_that_breaks_inline_governance_is_interface_invalid() {
    for (why, schema) in [
        (
            "external $ref",
            json!({"$ref": "https://example.com/schema.json"}),
        ),
        ("dangling $ref", json!({"$ref": "#/$defs/missing"})),
        (
            "another dialect",
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
        ),
        (
            "an embedded resource in another dialect",
            json!({"$defs": {"x": {"$id": "urn:x", "$schema": "http://json-schema.org/draft-07/schema#"}}}),
        ),
        ("not a valid schema", json!({"type": "objekt"})),
        (
            "an unknown format",
            json!({"type": "string", "format": "no-such-format"}),
        ),
    ] {
        let (advertised, r) = with_input_schema(schema);
        let e = client::verify_describe_response(&advertised, &r).unwrap_err();
        assert_eq!(local(e.clone()), Condition::InterfaceInvalid, "{why}: {e}");
        assert!(
            e.message().contains("/input_schema/resolution/schema"),
            "{why}: {e}"
        );
    }
    // The same document with a governed schema is accepted.
    let (advertised, r) = with_input_schema(json!({"type": "object"}));
    client::verify_describe_response(&advertised, &r).unwrap();
}

#[test]
fn another_interface_version_is_unsupported_in_the_card_and_the_document() {
    let mut c = card();
    c["capabilities"]["extensions"][0]["params"]["interface_version"] = json!("1.1");
    assert_eq!(
        local(client::read_card(&c).unwrap_err()),
        Condition::UnsupportedInterfaceVersion
    );
    let mut r = response();
    r["result"]["interface"]["interface_version"] = json!("2.0");
    let digest = Digest::of_value(&r["result"]["interface"]);
    r["result"]["interface_digest"] = json!(digest);
    let adv = Binding {
        skill_id: ERC.into(),
        skill_version: "1.0".parse().unwrap(),
        interface_digest: digest,
    };
    assert_eq!(
        local(client::verify_describe_response(&adv, &r).unwrap_err()),
        Condition::UnsupportedInterfaceVersion
    );
    // A missing version is a malformed document, not another version.
    let mut c = card();
    c["capabilities"]["extensions"][0]["params"]
        .as_object_mut()
        .unwrap()
        .remove("interface_version");
    assert_eq!(
        local(client::read_card(&c).unwrap_err()),
        Condition::InterfaceInvalid
    );
}

#[test]
fn nothing_is_sent_for_a_skill_the_card_does_not_advertise() {
    let read = client::read_card(&card()).unwrap();
    assert_eq!(read.interface_version, "1.0");
    assert_eq!(
        read.describe_request(ERC).unwrap(),
        json!({"skill": "describe_skill", "arguments": {"skill_id": ERC}})
    );
    assert_eq!(
        local(read.describe_request("reboot_everything").unwrap_err()),
        Condition::SkillNotAdvertised
    );
    // Without describe_skill in the card, no skill can be used under the procedure.
    let mut c = card();
    c["skills"].as_array_mut().unwrap().remove(0);
    let read = client::read_card(&c).unwrap();
    assert_eq!(
        local(read.select(ERC).unwrap_err()),
        Condition::SkillNotAdvertised
    );
    // Without the extension, the agent offers no schema-governed skill.
    let mut c = card();
    c["capabilities"] = json!({});
    assert_eq!(
        local(client::read_card(&c).unwrap_err()),
        Condition::SkillNotAdvertised
    );
}

#[test]
fn a_malformed_advertisement_is_interface_invalid() {
    let params = |f: &dyn Fn(&mut Value)| {
        let mut c = card();
        f(&mut c["capabilities"]["extensions"][0]["params"]);
        local(client::read_card(&c).unwrap_err())
    };
    assert_eq!(
        params(&|p| p["skills"] = json!({})),
        Condition::InterfaceInvalid
    );
    assert_eq!(
        params(&|p| p["skills"][0]["skill_version"] = json!("1.01")),
        Condition::InterfaceInvalid
    );
    assert_eq!(
        params(&|p| p["skills"][0]["interface_digest"] = json!("sha256:ABC")),
        Condition::InterfaceInvalid
    );
    assert_eq!(
        params(&|p| {
            let first = p["skills"][0].clone();
            p["skills"].as_array_mut().unwrap().push(first);
        }),
        Condition::InterfaceInvalid
    );
    assert_eq!(
        params(&|p| p["skills"][0]["skill_id"] = json!("not_in_the_card")),
        Condition::InterfaceInvalid
    );
}

#[test]
fn outgoing_arguments_are_checked_and_the_request_carries_the_binding() {
    let v = verified();
    let arguments = json!({"resource_id": "r", "condition": {"metric": "m", "operator": "gte", "threshold": 80, "unit": "percent"}});
    let request = v.request(arguments.clone()).unwrap();
    assert_eq!(
        request,
        json!({
            "skill": ERC, "skill_version": "1.0",
            "interface_digest": "sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d",
            "arguments": arguments,
        })
    );
    let e = v.request(json!({"resource_id": "r"})).unwrap_err();
    assert_eq!(local(e.clone()), Condition::InputInvalid);
    assert_eq!(e.details()[0].keyword.as_deref(), Some("required"));
}

#[test]
fn received_results_and_records_are_validated_locally() {
    let v = verified();
    let result = json!({"result": "condition_not_met", "observed_value": 42, "unit": "percent", "supporting_record_refs": ["observation-7"]});
    v.check_result_object(&json!({"skill": ERC, "result": result}))
        .unwrap();
    let mut outside = result.clone();
    outside["result"] = json!("maybe");
    assert_eq!(
        local(v.check_result(&outside).unwrap_err()),
        Condition::OutputInvalid
    );
    assert_eq!(
        local(
            v.check_result_object(&json!({"skill": "other", "result": result}))
                .unwrap_err()
        ),
        Condition::OutputInvalid
    );
    let record = json!({"record_id": "observation-7", "resource_id": "r", "metric": "m", "value": 42, "unit": "percent", "observed_at": "2026-08-11T12:00:01Z"});
    v.check_record("resource-observation", &record).unwrap();
    let mut late = record.clone();
    late["observed_at"] = json!("yesterday");
    assert_eq!(
        local(v.check_record("resource-observation", &late).unwrap_err()),
        Condition::OutputInvalid
    );
    assert_eq!(
        local(v.check_record("other-kind", &record).unwrap_err()),
        Condition::OutputInvalid
    );
}

#[test]
fn the_transferred_value_is_validated_in_direct_composition() {
    // A downstream skill whose input schema is the upstream output schema.
    let upstream = verified();
    let mut r = response();
    let output = r["result"]["interface"]["output_schema"].clone();
    r["result"]["interface"]["input_schema"] = output;
    r["result"]["interface"]["skill_id"] = json!("act_on_condition");
    let digest = Digest::of_value(&r["result"]["interface"]);
    r["result"]["interface_digest"] = json!(digest);
    let adv = Binding {
        skill_id: "act_on_condition".into(),
        skill_version: "1.0".parse().unwrap(),
        interface_digest: digest,
    };
    let downstream = client::verify_describe_response(&adv, &r).unwrap();
    let good = json!({"result": "condition_met", "observed_value": 90, "unit": "percent", "supporting_record_refs": ["o"]});
    assert_eq!(
        client::transfer(&upstream, &good, &downstream).unwrap(),
        Composition::Direct
    );
    let bad = json!({"result": "condition_met"});
    assert_eq!(
        local(client::transfer(&upstream, &bad, &downstream).unwrap_err()),
        Condition::InputInvalid
    );
    // Upstream output and the upstream skill's own input do not match: not direct, and
    // the value is not validated against anything.
    assert!(matches!(
        client::transfer(&upstream, &bad, &upstream).unwrap(),
        Composition::NotDirect { .. }
    ));
}

#[test]
fn the_cache_is_bound_to_agent_skill_version_and_digest() {
    let v = verified();
    let agent = "https://agent.example.com/.well-known/agent-card.json";
    let mut cache = InterfaceCache::new(2);
    let advertised = v.advertised().clone();
    assert!(cache.get(agent, &advertised).is_none());
    cache.insert(agent, v.clone());
    assert_eq!(cache.get(agent, &advertised), Some(v.clone()));
    // Another agent, version or digest misses.
    assert!(cache
        .get("https://other.example.com/card", &advertised)
        .is_none());
    let mut other = advertised.clone();
    other.skill_version = "1.1".parse().unwrap();
    assert!(cache.get(agent, &other).is_none());
    let mut other = advertised.clone();
    other.interface_digest = format!("sha256:{}", "0".repeat(64)).parse().unwrap();
    assert!(cache.get(agent, &other).is_none());
    // A newly read card with a changed digest invalidates the entry.
    let mut c = card();
    c["capabilities"]["extensions"][0]["params"]["skills"][0]["interface_digest"] =
        json!(format!("sha256:{}", "1".repeat(64)));
    let changed = client::read_card(&c).unwrap();
    assert_eq!(cache.refresh("https://other.example.com/card", &changed), 0);
    assert_eq!(cache.refresh(agent, &changed), 1);
    assert!(cache.is_empty());
    // Bounded: the least recently used entry goes first.
    cache.insert("a", v.clone());
    cache.insert("b", v.clone());
    assert!(cache.get("a", &advertised).is_some());
    cache.insert("c", v.clone());
    assert_eq!(cache.len(), 2);
    assert!(cache.get("b", &advertised).is_none());
    assert!(cache.get("a", &advertised).is_some());
}

#[test]
fn a_card_advertises_the_extension_once_and_binds_each_skill_once() {
    let ext = card()["capabilities"]["extensions"][0].clone();
    let with_second = |second: Value| {
        let mut c = card();
        let list = c["capabilities"]["extensions"].as_array_mut().unwrap();
        list.insert(0, json!({"uri": "https://example.com/other-extension"}));
        list.push(second);
        c
    };
    let mut other_digest = ext.clone();
    other_digest["params"]["skills"][0]["interface_digest"] =
        json!(format!("sha256:{}", "0".repeat(64)));
    let mut empty = ext.clone();
    empty["params"]["skills"] = json!([]);
    let mut other_version = ext.clone();
    other_version["params"]["interface_version"] = json!("1.1");
    for (why, second) in [
        ("the same skill bound to another digest", other_digest),
        ("an identical second entry", ext.clone()),
        ("a second entry binding nothing", empty),
        ("a second entry of another interface_version", other_version),
    ] {
        let e = client::read_card(&with_second(second)).unwrap_err();
        assert_eq!(local(e.clone()), Condition::InterfaceInvalid, "{why}: {e}");
        assert!(
            e.message().contains("capabilities.extensions[2]"),
            "{why}: {e}"
        );
    }
    // One entry binding a skill twice, to any version or digest.
    let mut c = card();
    let mut again = ext["params"]["skills"][0].clone();
    again["skill_version"] = json!("1.1");
    c["capabilities"]["extensions"][0]["params"]["skills"]
        .as_array_mut()
        .unwrap()
        .push(again);
    assert_eq!(
        local(client::read_card(&c).unwrap_err()),
        Condition::InterfaceInvalid
    );
    // Other extensions beside the one are fine.
    client::read_card(&with_second(json!({"uri": "https://example.com/x"}))).unwrap();
}
