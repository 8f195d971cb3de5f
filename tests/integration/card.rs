//! `card --base`: the base is validated exactly as A2A 1.0 defines AgentCard, with a
//! precise message per problem, and signatures are never left stale.

use serde_json::{json, Value};
use skillbundle::card::a2a::{self, CardError};
use skillbundle::card::agent_card;
use skillbundle::interface::binding::Binding;
use skillbundle::wire::pointer::Problem;

fn base() -> Value {
    json!({
        "name": "Network agent",
        "description": "Answers network questions.",
        "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [{"id": "ping", "name": "Ping", "description": "Replies.", "tags": ["ops"]}]
    })
}

fn merge(card: &Value) -> Result<Value, CardError> {
    let ext = a2a::extension(&[Binding {
        skill_id: "describe_skill".into(),
        skill_version: "1.0".parse().unwrap(),
        interface_digest: format!("sha256:{}", "0".repeat(64)).parse().unwrap(),
    }]);
    a2a::merge_card(card, &ext, &[a2a::describe_skill()])
}

/// The problems with `card`, as (pointer, message).
fn problems(card: &Value) -> Vec<(String, String)> {
    match merge(card) {
        Err(CardError::NotACard(p)) => p
            .into_iter()
            .map(|Problem { pointer, message }| (pointer, message))
            .collect(),
        other => panic!("expected NotACard, got {other:?}"),
    }
}

fn one(pointer: &str, message: &str) -> Vec<(String, String)> {
    vec![(pointer.to_string(), message.to_string())]
}

#[test]
fn members_the_sdk_refuses_are_refused_with_a_message_each() {
    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = base();
        f(&mut c);
        problems(&c)
    };
    assert_eq!(
        with(&|c| c["supportsExtendedAgentCard"] = json!(true)),
        one("/supportsExtendedAgentCard", "`supportsExtendedAgentCard` is not a member of an A2A 1.0 AgentCard; A2A 1.0 spells it capabilities.extendedAgentCard")
    );
    assert_eq!(
        with(&|c| c["capabilities"]["supportsExtendedAgentCard"] = json!(true)),
        one("/capabilities/supportsExtendedAgentCard", "`supportsExtendedAgentCard` is not a member of an A2A 1.0 AgentCapabilities; A2A 1.0 spells it capabilities.extendedAgentCard")
    );
    assert_eq!(
        with(&|c| c["supportsAuthenticatedExtendedCard"] = json!(true)),
        one("/supportsAuthenticatedExtendedCard", "`supportsAuthenticatedExtendedCard` is not a member of an A2A 1.0 AgentCard; it is A2A 0.3's: A2A 1.0 has capabilities.extendedAgentCard")
    );
    assert_eq!(
        with(&|c| c["x-vendor"] = json!({})),
        one("/x-vendor", "`x-vendor` is not a member of an A2A 1.0 AgentCard; A2A 1.0 has no extension members: put extension data in capabilities.extensions[].params")
    );
    assert_eq!(
        with(&|c| c["default_input_modes"] = json!(["text/plain"])),
        one("/default_input_modes", "`default_input_modes` and `defaultInputModes` are two spellings of one AgentCard field; keep one")
    );
    assert_eq!(
        with(&|c| c["capabilities"]["streaming"] = json!("yes")),
        one(
            "/capabilities/streaming",
            "AgentCapabilities.streaming must be true or false"
        )
    );
}

#[test]
fn missing_required_members_are_named() {
    for member in ["description", "defaultInputModes", "defaultOutputModes"] {
        let mut c = base();
        c.as_object_mut().unwrap().remove(member);
        assert_eq!(
            problems(&c),
            one("", &format!("AgentCard requires `{member}`")),
            "{member}"
        );
    }
    let mut c = base();
    c["skills"][0]["tags"] = json!([]);
    assert_eq!(
        problems(&c),
        one("/skills/0", "AgentSkill requires `tags` to be non-empty")
    );
    let mut c = base();
    c["skills"][0].as_object_mut().unwrap().remove("tags");
    assert_eq!(problems(&c), one("/skills/0", "AgentSkill requires `tags`"));
}

/// An agent with no skills of its own may leave `skills` out, as the SDK's protobuf JSON
/// does for an empty list: the merge adds the bundle's.
#[test]
fn a_base_card_without_skills_of_its_own_merges() {
    for skills in [None, Some(json!([]))] {
        let mut c = base();
        match skills {
            None => {
                c.as_object_mut().unwrap().remove("skills");
            }
            Some(empty) => c["skills"] = empty,
        }
        let merged = merge(&c).unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<&str> = merged["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["describe_skill"]);
    }
}

#[test]
fn an_all_snake_case_card_is_read_and_printed_in_camel_case() {
    let snake = json!({
        "name": "Network agent",
        "description": "Answers network questions.",
        "version": "1.0.0",
        "supported_interfaces": [{"url": "https://agent.example.com/a2a", "protocol_binding": "JSONRPC", "protocol_version": "1.0"}],
        "capabilities": {"streaming": true, "push_notifications": false},
        "default_input_modes": ["application/json"],
        "default_output_modes": ["application/json"],
        "skills": [{"id": "ping", "name": "Ping", "description": "Replies.", "tags": ["ops"], "input_modes": ["text/plain"]}]
    });
    let merged = merge(&snake).unwrap();
    assert_eq!(
        merged["supportedInterfaces"][0]["protocolBinding"],
        "JSONRPC"
    );
    assert_eq!(merged["capabilities"]["pushNotifications"], false);
    assert_eq!(merged["skills"][0]["inputModes"], json!(["text/plain"]));
    assert!(merged.get("supported_interfaces").is_none());
    assert_eq!(agent_card::check(&merged), vec![]);
}

#[test]
fn signatures_are_never_left_stale() {
    let mut c = base();
    c["signatures"] = json!([{"protected": "e30", "signature": "AA"}]);
    let e = merge(&c).unwrap_err();
    assert_eq!(e, CardError::StaleSignatures);
    assert!(e.to_string().contains("--sign-key"), "{e}");
}

#[test]
fn a_base_entry_for_a_bundle_skill_adds_security_requirements() {
    let mut c = base();
    let requirement = json!([{"schemes": {"oauth": {"list": ["network:read"]}}}]);
    c["skills"] = json!([{"id": "describe_skill", "name": "Describe skill", "description": a2a::describe_skill().description, "tags": ["schema-interface"], "securityRequirements": requirement}]);
    let merged = merge(&c).unwrap();
    let skills = merged["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0]["securityRequirements"], requirement);
    // A conflicting member is refused, naming it.
    c["skills"][0]["name"] = json!("Another name");
    let e = merge(&c).unwrap_err();
    assert_eq!(
        e,
        CardError::SkillConflict {
            skill: "describe_skill".into(),
            member: "name".into()
        }
    );
}

#[test]
fn skill_yaml_declares_security_requirements() {
    let ws = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("example-skills");
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(&src).unwrap();
        if rel.starts_with("dist") {
            continue;
        }
        let to = ws.path().join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
    let manifest = ws
        .path()
        .join("skills/evaluate_resource_condition/skill.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap().replace(
        "card:\n",
        "card:\n  security_requirements: [{oauth: [\"network:read\", \"network:observe\"], mtls: []}]\n",
    );
    std::fs::write(&manifest, text).unwrap();
    let bin = env!("CARGO_BIN_EXE_skillbundle");
    let built = std::process::Command::new(bin)
        .args(["build", "."])
        .current_dir(ws.path())
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = std::process::Command::new(bin)
        .args([
            "card",
            "dist/example-network-skills-0.1.0.tar.gz",
            "--allow-unsigned",
        ])
        .current_dir(ws.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fragment: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skill = fragment["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "evaluate_resource_condition")
        .unwrap();
    assert_eq!(
        skill["securityRequirements"],
        json!([{"schemes": {"mtls": {"list": []}, "oauth": {"list": ["network:read", "network:observe"]}}}])
    );
}
