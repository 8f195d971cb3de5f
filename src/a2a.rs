//! A2A: the schema-interface extension advertisement and the AgentSkill entries.
//!
//! An agent conforming to the draft advertises `describe_skill` and every schema-governed
//! skill in its Agent Card, plus the extension in `capabilities.extensions` whose params
//! bind each skill_id to exactly one skill_version and interface_digest. The shapes come
//! from `a2a-lf`, the A2A project's own Rust types, so the fragment is an A2A 1.0 card
//! fragment by construction rather than by convention.

use crate::interface::DESCRIBE_SKILL;
use crate::manifest::CardFields;
use a2a_types::{AgentExtension, AgentSkill};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The extension URI defined by the draft.
pub const EXTENSION_URI: &str =
    "https://agentic-network-management.github.io/agent-schema-interfaces/extensions/schema-interface/v1";

/// The media type every v1.0 skill exchanges (a single Data Part).
pub const JSON_MEDIA_TYPE: &str = "application/json";

/// What the advertisement says about one skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advertised {
    pub skill_id: String,
    pub skill_version: String,
    pub interface_digest: String,
}

/// The extension entry for `capabilities.extensions`.
pub fn extension(skills: &[Advertised]) -> AgentExtension {
    let entries: Vec<Value> = skills
        .iter()
        .map(|s| {
            json!({
                "skill_id": s.skill_id,
                "skill_version": s.skill_version,
                "interface_digest": s.interface_digest,
            })
        })
        .collect();
    let mut params = HashMap::new();
    params.insert("interface_version".to_string(), json!("1.0"));
    params.insert("skills".to_string(), Value::Array(entries));
    AgentExtension {
        uri: EXTENSION_URI.to_string(),
        description: Some("Schema interfaces for advertised skills".to_string()),
        required: Some(false),
        params: Some(params),
    }
}

/// The AgentSkill entry for a domain skill.
pub fn agent_skill(skill_id: &str, card: &CardFields) -> AgentSkill {
    let modes = || Some(vec![JSON_MEDIA_TYPE.to_string()]);
    AgentSkill {
        id: skill_id.to_string(),
        name: card.name.clone(),
        description: card.description.clone(),
        tags: card.tags.clone(),
        examples: (!card.examples.is_empty()).then(|| card.examples.clone()),
        input_modes: card.input_modes.clone().or_else(modes),
        output_modes: card.output_modes.clone().or_else(modes),
        security_requirements: None,
    }
}

/// The AgentSkill entry for `describe_skill`, which every conforming agent advertises.
pub fn describe_skill() -> AgentSkill {
    AgentSkill {
        id: DESCRIBE_SKILL.to_string(),
        name: "Describe skill".to_string(),
        description: "Returns the Skill Interface Document and its interface_digest for an advertised skill_id (schema-interface extension, interface version 1.0).".to_string(),
        tags: vec!["schema-interface".to_string()],
        examples: Some(vec![
            r#"{"skill":"describe_skill","arguments":{"skill_id":"<advertised skill_id>"}}"#.to_string(),
        ]),
        input_modes: Some(vec![JSON_MEDIA_TYPE.to_string()]),
        output_modes: Some(vec![JSON_MEDIA_TYPE.to_string()]),
        security_requirements: None,
    }
}

/// The Agent Card fragment `{"capabilities":{"extensions":[…]},"skills":[…]}`, with
/// `describe_skill` first and the domain skills in the given order.
pub fn card_fragment(extension: &AgentExtension, skills: &[AgentSkill]) -> Value {
    let mut all = vec![describe_skill()];
    all.extend(skills.iter().cloned());
    json!({
        "capabilities": {"extensions": [extension]},
        "skills": all,
    })
}

/// A value with its object members sorted (by way of the JCS order), so the output does
/// not depend on hash-map iteration order (the extension's params are a HashMap).
fn sorted(value: &impl serde::Serialize) -> Value {
    let value = serde_json::to_value(value).expect("A2A types always serialize");
    serde_json::from_slice(&crate::digest::jcs(&value)).expect("JCS output is JSON")
}

/// Why a base Agent Card cannot take a bundle's fragment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardError {
    /// The base is not a JSON object, or a member the merge extends has the wrong type.
    #[error("the base Agent Card is not usable: {0}")]
    NotACard(String),
    /// The base card already advertises the schema-interface extension.
    #[error("the base Agent Card already lists the extension {EXTENSION_URI}; remove it, the bundle provides it")]
    DuplicateExtension,
    /// A skill id would appear twice.
    #[error("skill id {0:?} would appear twice in the Agent Card")]
    DuplicateSkill(String),
    /// The merged card does not deserialize as an A2A 1.0 AgentCard.
    #[error("the merged card is not an A2A 1.0 AgentCard: {0}")]
    NotAnAgentCard(String),
}

/// Merge an extension and AgentSkill entries into a base A2A 1.0 AgentCard (JSON): the
/// extension is appended to `capabilities.extensions` and the skills to `skills`
/// (both created when absent). The base's other members are kept as they are. Refuses
/// a base that already carries the extension or any of the skill ids, and checks the
/// result by deserializing it as an [`a2a_types::AgentCard`].
pub fn merge_card(
    base: &Value,
    extension: &AgentExtension,
    skills: &[AgentSkill],
) -> Result<Value, CardError> {
    let mut card = base.clone();
    let obj = card
        .as_object_mut()
        .ok_or_else(|| CardError::NotACard("it is not a JSON object".into()))?;
    let capabilities = obj
        .entry("capabilities")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| CardError::NotACard("\"capabilities\" is not an object".into()))?;
    let extensions = capabilities
        .entry("extensions")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| CardError::NotACard("\"capabilities.extensions\" is not an array".into()))?;
    if extensions.iter().any(|e| e["uri"] == EXTENSION_URI) {
        return Err(CardError::DuplicateExtension);
    }
    extensions.push(sorted(extension));
    let list = obj
        .entry("skills")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| CardError::NotACard("\"skills\" is not an array".into()))?;
    for skill in skills {
        list.push(sorted(skill));
    }
    let mut seen = std::collections::HashSet::new();
    for skill in list.iter() {
        let id = skill.get("id").and_then(Value::as_str).unwrap_or_default();
        if !seen.insert(id) {
            return Err(CardError::DuplicateSkill(id.to_string()));
        }
    }
    serde_json::from_value::<a2a_types::AgentCard>(card.clone())
        .map_err(|e| CardError::NotAnAgentCard(e.to_string()))?;
    Ok(card)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Value {
        json!({
            "name": "Network agent",
            "description": "Answers network questions.",
            "version": "1.0.0",
            "supportedInterfaces": [{"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": true},
            "defaultInputModes": ["application/json"],
            "defaultOutputModes": ["application/json"],
            "skills": [],
        })
    }

    fn parts() -> (AgentExtension, Vec<AgentSkill>) {
        let ext = extension(&[Advertised {
            skill_id: "s".into(),
            skill_version: "1.0".into(),
            interface_digest: format!("sha256:{}", "0".repeat(64)),
        }]);
        (ext, vec![describe_skill()])
    }

    #[test]
    fn merges_into_a_base_card() {
        let (ext, skills) = parts();
        let merged = merge_card(&base(), &ext, &skills).unwrap();
        assert_eq!(merged["capabilities"]["streaming"], true);
        assert_eq!(
            merged["capabilities"]["extensions"][0]["uri"],
            EXTENSION_URI
        );
        assert_eq!(merged["skills"][0]["id"], DESCRIBE_SKILL);
        let card: a2a_types::AgentCard = serde_json::from_value(merged).unwrap();
        assert_eq!(card.skills.len(), 1);
    }

    #[test]
    fn refuses_conflicts_and_non_cards() {
        let (ext, skills) = parts();
        let twice = merge_card(&base(), &ext, &skills).unwrap();
        assert_eq!(
            merge_card(&twice, &ext, &[]),
            Err(CardError::DuplicateExtension)
        );
        let mut with_skill = base();
        with_skill["skills"] = json!([describe_skill()]);
        assert_eq!(
            merge_card(&with_skill, &ext, &skills),
            Err(CardError::DuplicateSkill(DESCRIBE_SKILL.into()))
        );
        assert!(matches!(
            merge_card(&json!([]), &ext, &skills),
            Err(CardError::NotACard(_))
        ));
        assert!(matches!(
            merge_card(&json!({"name": "x"}), &ext, &skills),
            Err(CardError::NotAnAgentCard(_))
        ));
    }
}
