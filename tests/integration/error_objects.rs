//! The draft's error objects as a caller sees them: the right condition for each kind of
//! bad request, and messages that never repeat what the caller sent (member names and
//! values appear only as JSON Pointers in `details`).

use crate::common;

use common::*;
use serde_json::{json, Value};
use skillbundle::interface::condition::{Condition, ErrorObject};

const ERC_ID: &str = "evaluate_resource_condition";
const DIGEST: &str = "sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d";
const SECRET: &str = "api_token=s3cr3t-XYZ";

fn request() -> Value {
    json!({
        "skill": ERC_ID,
        "skill_version": "1.0",
        "interface_digest": DIGEST,
        "arguments": {
            "resource_id": "network-resource-123",
            "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"}
        }
    })
}

/// The message never contains the secret-looking text, wherever the caller put it.
fn assert_not_echoed(e: &ErrorObject) {
    for secret in [SECRET, "s3cr3t"] {
        assert!(!e.message().contains(secret), "message echoes: {e}");
    }
}

#[test]
fn messages_never_echo_caller_member_names_or_values() {
    let bundle = example_bundle();
    // An unexpected member with a secret-looking name, at the top of the arguments and
    // nested: input_invalid, the name only in details (as a pointer, where it is).
    let mut extra = request();
    extra["arguments"][SECRET] = json!("s3cr3t-value");
    let e = bundle.check_request(&extra).unwrap_err();
    assert_eq!(e.code(), Condition::InputInvalid);
    assert_not_echoed(&e);
    assert_eq!(e.details()[0].instance_path, "");
    assert_eq!(
        e.details()[0].keyword.as_deref(),
        Some("additionalProperties")
    );
    assert_eq!(
        e.message(),
        "the arguments do not conform to the input_schema of evaluate_resource_condition 1.0: the value at details[0].instance_path fails `additionalProperties` (schema location /additionalProperties)"
    );
    let mut nested = request();
    nested["arguments"]["condition"][SECRET] = json!(1);
    let e = bundle.check_request(&nested).unwrap_err();
    assert_not_echoed(&e);
    assert_eq!(e.details()[0].instance_path, "/condition");

    // A wrong value: the message names the keyword and schema location, not the value.
    let mut wrong = request();
    wrong["arguments"]["condition"]["operator"] = json!(SECRET);
    let e = bundle.check_request(&wrong).unwrap_err();
    assert_not_echoed(&e);
    assert!(e.message().contains("`enum`"), "{e}");

    // An unadvertised skill, a stale version or digest, a describe_skill target.
    let mut unknown = request();
    unknown["skill"] = json!(SECRET);
    let e = bundle.check_request(&unknown).unwrap_err();
    assert_eq!(e.code(), Condition::SkillNotAdvertised);
    assert_not_echoed(&e);
    let mut stale = request();
    stale["skill_version"] = json!(SECRET);
    stale["interface_digest"] = json!(SECRET);
    let e = bundle.check_request(&stale).unwrap_err();
    assert_eq!(e.code(), Condition::InterfaceMismatch);
    assert_not_echoed(&e);
    assert!(e.message().contains(DIGEST), "names the active digest: {e}");
    let describe = json!({"skill": "describe_skill", "arguments": {"skill_id": SECRET}});
    let e = bundle.check_request(&describe).unwrap_err();
    assert_eq!(e.code(), Condition::SkillNotAdvertised);
    assert_not_echoed(&e);
    let e = bundle.check_record(ERC_ID, SECRET, &json!({})).unwrap_err();
    assert_eq!(e.code(), Condition::OutputInvalid);
    assert_not_echoed(&e);
    // Extra top-level members of the request object.
    let mut top = request();
    top[SECRET] = json!(true);
    let e = bundle.check_request(&top).unwrap_err();
    assert_not_echoed(&e);
}

#[test]
fn each_malformed_request_has_the_drafts_code() {
    let bundle = example_bundle();
    let code = |v: &Value| bundle.check_request(v).unwrap_err();
    // Not an object, or no skill to name: the request is not accepted as input
    // (input_invalid, rejected); it names no skill, so it cannot be skill_not_advertised.
    for bad in [
        json!([1]),
        json!("describe_skill"),
        json!(null),
        json!({}),
        json!({"skill": 7}),
    ] {
        let e = code(&bad);
        assert_eq!(e.code(), Condition::InputInvalid, "{bad}");
        assert_eq!(e.task_state(), Some(a2a_types::TaskState::Rejected));
    }
    // The draft fixes the request object's members: any other one is input_invalid.
    let mut extra = request();
    extra["metadata"] = json!({});
    assert_eq!(code(&extra).code(), Condition::InputInvalid);
    assert_eq!(
        code(&extra).message(),
        "the skill request object has a member other than skill, skill_version, interface_digest and arguments"
    );
    // A stale request is interface_mismatch whatever else is wrong with it.
    let mut stale = extra.clone();
    stale["skill_version"] = json!("0.9");
    assert_eq!(code(&stale).code(), Condition::InterfaceMismatch);
    // describe_skill carries no version: input_invalid, at the top or in the arguments.
    for bad in [
        json!({"skill": "describe_skill", "skill_version": "1.0", "arguments": {"skill_id": ERC_ID}}),
        json!({"skill": "describe_skill", "interface_digest": DIGEST, "arguments": {"skill_id": ERC_ID}}),
        json!({"skill": "describe_skill", "arguments": {"skill_id": ERC_ID, "skill_version": "1.0"}}),
    ] {
        assert_eq!(code(&bad).code(), Condition::InputInvalid, "{bad}");
    }
    // describe_skill of describe_skill: advertised, but it has no interface document.
    let itself = json!({"skill": "describe_skill", "arguments": {"skill_id": "describe_skill"}});
    let e = code(&itself);
    assert_eq!(e.code(), Condition::InputInvalid);
    assert_eq!(e.details()[0].instance_path, "/skill_id");
    assert_eq!(
        bundle.describe_skill("describe_skill").unwrap_err().code(),
        Condition::InputInvalid
    );
    // A domain request without arguments.
    let mut none = request();
    none.as_object_mut().unwrap().remove("arguments");
    assert_eq!(code(&none).code(), Condition::InputInvalid);
}

#[test]
fn the_cli_prints_the_same_objects() {
    let ws = workspace();
    assert_eq!(run(&["build", "."], ws.path()).status, 0);
    let bundle = "dist/example-network-skills-0.1.0.tar.gz";
    let out = run(
        &[
            "describe",
            bundle,
            "describe_skill",
            "--allow-unsigned",
            "--format",
            "json",
        ],
        ws.path(),
    );
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "input_invalid");
    write(&ws.path().join("req.json"), "[]");
    let out = run(
        &[
            "validate",
            bundle,
            "--allow-unsigned",
            "--request",
            "req.json",
            "--format",
            "json",
        ],
        ws.path(),
    );
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "input_invalid");
}
