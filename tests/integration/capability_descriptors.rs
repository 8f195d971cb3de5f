//! The A2A capability-descriptors proposal (Option A) in this project's extension params,
//! and its routing hints honoured by the agent's request check.

use crate::common;

use common::*;
use serde_json::{json, Value};
use skillbundle::card::a2a::{self, EXTENSION_URI};
use skillbundle::interface::condition::Condition;

const ERC_ID: &str = "evaluate_resource_condition";
const DIGEST: &str = "sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d";

fn base() -> Value {
    json!({
        "name": "Network agent", "description": "Answers network questions.", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {}, "defaultInputModes": ["application/json"], "defaultOutputModes": ["application/json"],
        "skills": []
    })
}

fn request() -> Value {
    json!({
        "skill": ERC_ID, "skill_version": "1.0", "interface_digest": DIGEST,
        "arguments": {"resource_id": "r", "condition": {"metric": "m", "operator": "gte", "threshold": 80, "unit": "percent"}}
    })
}

#[test]
fn the_merged_card_carries_one_descriptor_per_skill_in_the_extension_params() {
    let bundle = example_bundle();
    let card = a2a::merge_card(&base(), bundle.extension(), bundle.agent_skills()).unwrap();
    let ext = &card["capabilities"]["extensions"][0];
    assert_eq!(ext["uri"], EXTENSION_URI);
    let entry = ext["params"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["skill_id"] == ERC_ID)
        .unwrap();
    assert_eq!(
        entry["interfaces"],
        json!([{
            "id": "evaluate_resource_condition@1.0",
            "kind": "schema_interface",
            "description": format!("Skill Interface Document {DIGEST} of evaluate_resource_condition 1.0: call describe_skill for the schemas"),
            "inputSchemaRef": "describe_skill?skill_id=evaluate_resource_condition#/result/interface/input_schema",
            "outputSchemaRef": "describe_skill?skill_id=evaluate_resource_condition#/result/interface/output_schema",
            "visibility": "public"
        }])
    );
    // Not as AgentSkill members, which the strict A2A 1.0 parse refuses.
    for skill in card["skills"].as_array().unwrap() {
        assert!(skill.get("interfaces").is_none());
    }
    assert_eq!(skillbundle::card::agent_card::check(&card), vec![]);
    // A client reads the card as before.
    let read = skillbundle::client::read_card(&card).unwrap();
    assert!(read.select(ERC_ID).is_ok());
}

#[test]
fn routing_hints_are_honoured_and_never_contradict_the_request() {
    let bundle = example_bundle();
    let r = request();
    let check = |metadata: Value| bundle.check_message(&r, Some(&metadata));
    // Consistent hints, or none: the request is checked as usual.
    assert!(bundle.check_message(&r, None).is_ok());
    assert!(check(json!({})).is_ok());
    assert!(
        check(json!({"skill_id": ERC_ID, "interface_id": "evaluate_resource_condition@1.0"}))
            .is_ok()
    );
    // A skill_id hint naming another skill contradicts the request.
    let e = check(json!({"skill_id": "trace_network_path"})).unwrap_err();
    assert_eq!(e.code(), Condition::InterfaceMismatch);
    assert_eq!(e.task_state(), Some(a2a_types::TaskState::Rejected));
    // An interface_id of another (advertised) skill, or of another version.
    let other = bundle
        .advertised()
        .into_iter()
        .find(|a| a.skill_id != ERC_ID)
        .unwrap();
    let e =
        check(json!({"interface_id": a2a::interface_id(&other.skill_id, &other.skill_version.to_string())}))
            .unwrap_err();
    assert_eq!(e.code(), Condition::InterfaceMismatch);
    // An unknown interface_id is rejected; its value is not repeated.
    let e = check(json!({"interface_id": "evaluate_resource_condition@9.9-s3cr3t"})).unwrap_err();
    assert_eq!(e.code(), Condition::SkillNotAdvertised);
    assert!(!e.message().contains("s3cr3t"));
    // A hint that is not a string.
    assert_eq!(
        check(json!({"skill_id": 7})).unwrap_err().code(),
        Condition::InputInvalid
    );
}
