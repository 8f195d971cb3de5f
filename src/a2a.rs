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
