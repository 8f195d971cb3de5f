//! A2A: the schema-interface extension advertisement and the AgentSkill entries.
//!
//! An agent conforming to the draft advertises `describe_skill` and every schema-governed
//! skill in its Agent Card, plus the extension in `capabilities.extensions` whose params
//! bind each skill_id to exactly one skill_version and interface_digest. The shapes come
//! from `a2a-lf`, the A2A project's own Rust types, so the fragment is an A2A 1.0 card
//! fragment by construction rather than by convention.

use crate::finding::Code;
use crate::interface::binding::Binding;
use crate::interface::DESCRIBE_SKILL;
use crate::wire::pointer::Problem;
use a2a_types::{AgentExtension, AgentSkill};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The A2A AgentSkill fields a vendor writes for a skill.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardFields {
    /// The AgentSkill's `name`.
    pub name: String,
    /// The AgentSkill's `description`.
    pub description: String,
    /// The AgentSkill's `tags`.
    #[serde(default)]
    pub tags: Vec<String>,
    /// The AgentSkill's `examples`: sample prompts.
    #[serde(default)]
    pub examples: Vec<String>,
    /// The AgentSkill's `inputModes` (media types), when it overrides the card's.
    #[serde(default)]
    pub input_modes: Option<Vec<String>>,
    /// The AgentSkill's `outputModes` (media types), when it overrides the card's.
    #[serde(default)]
    pub output_modes: Option<Vec<String>>,
    /// The AgentSkill's `securityRequirements`: each entry maps security scheme names
    /// (declared in the Agent Card's `securitySchemes`) to the scopes required, e.g.
    /// `[{oauth: ["network:read"]}]`; any one entry suffices.
    #[serde(default)]
    pub security_requirements: Option<Vec<std::collections::BTreeMap<String, Vec<String>>>>,
}

/// The extension URI defined by the draft.
pub const EXTENSION_URI: &str =
    "https://agentic-network-management.github.io/agent-schema-interfaces/extensions/schema-interface/v1";

/// The media type every v1.0 skill exchanges (a single Data Part).
pub const JSON_MEDIA_TYPE: &str = "application/json";

/// The extension entry for `capabilities.extensions`.
pub fn extension(skills: &[Binding]) -> AgentExtension {
    let entries: Vec<Value> = skills.iter().map(Binding::to_json).collect();
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

/// The capability-descriptor `id` of a skill's interface (the A2A capability-descriptors
/// proposal, Option A): `<skill_id>@<skill_version>`, so a routing hint names one
/// version of one skill.
pub fn interface_id(skill_id: &str, skill_version: &str) -> String {
    format!("{skill_id}@{skill_version}")
}

/// The proposal's Option A descriptor of an advertised skill's interface:
/// `{id, kind, description, inputSchemaRef, outputSchemaRef, visibility}`, with the
/// schema refs pointing into the describe_skill result for the skill
/// (`describe_skill?skill_id=<id>#/result/interface/input_schema`).
pub fn descriptor(skill: &Binding) -> Value {
    let reference = |role: &str| {
        format!(
            "{DESCRIBE_SKILL}?skill_id={}#/result/interface/{role}",
            skill.skill_id
        )
    };
    json!({
        "id": interface_id(&skill.skill_id, &skill.skill_version.to_string()),
        "kind": "schema_interface",
        "description": format!(
            "Skill Interface Document {} of {} {}: call describe_skill for the schemas",
            skill.interface_digest, skill.skill_id, skill.skill_version
        ),
        "inputSchemaRef": reference("input_schema"),
        "outputSchemaRef": reference("output_schema"),
        "visibility": "public",
    })
}

/// The extension with the proposal's descriptors: each entry of `params.skills` gains
/// `interfaces: [descriptor]`. They live in this project's extension params, not as new
/// AgentSkill members, which A2A 1.0's strict parse refuses; clients that do not know
/// them ignore them (the draft requires only skill_id, skill_version and
/// interface_digest in an entry).
pub fn with_descriptors(extension: &AgentExtension) -> AgentExtension {
    let mut extension = extension.clone();
    if let Some(Value::Array(entries)) = extension.params.as_mut().and_then(|p| p.get_mut("skills"))
    {
        for entry in entries.iter_mut() {
            // The entries are this crate's own (from [`extension`]), so each reads back
            // as a binding.
            if let Ok(binding) = Binding::deserialize(&*entry) {
                entry["interfaces"] = json!([descriptor(&binding)]);
            }
        }
    }
    extension
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
        security_requirements: card.security_requirements.as_ref().map(|list| {
            list.iter()
                .map(|r| r.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .collect()
        }),
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
    let mut fragment = json!({
        "capabilities": {"extensions": [extension]},
        "skills": all,
    });
    // A security requirement is a hash map in a2a-lf: sort its members so that the
    // fragment (and so the bundle) is the same bytes on every build.
    for skill in fragment["skills"].as_array_mut().into_iter().flatten() {
        if let Some(requirements) = skill.get_mut("securityRequirements") {
            *requirements = sorted(requirements);
        }
    }
    fragment
}

/// A value with its object members sorted (by way of the JCS order), so the output does
/// not depend on hash-map iteration order (the extension's params are a HashMap).
fn sorted(value: &impl serde::Serialize) -> Value {
    let value = serde_json::to_value(value).expect("A2A types always serialize");
    serde_json::from_slice(&crate::wire::digest::jcs(&value)).expect("JCS output is JSON")
}

/// Why a base Agent Card cannot take a bundle's fragment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CardError {
    /// The base is not an A2A 1.0 AgentCard: every problem, with its JSON Pointer.
    #[error("the base Agent Card is not an A2A 1.0 AgentCard: {}", describe_problems(.0))]
    NotACard(Vec<Problem>),
    /// The base card already advertises the schema-interface extension.
    #[error("the base Agent Card already lists the extension {EXTENSION_URI}; remove it, the bundle provides it")]
    DuplicateExtension,
    /// The base card carries signatures, which the merge would leave stale.
    #[error("the base Agent Card carries signatures over its own content, which the merge changes: they would no longer verify; pass --sign-key to drop them and sign the merged card, or remove them")]
    StaleSignatures,
    /// A base entry for a bundle skill sets a member to another value than the bundle.
    #[error("the base Agent Card's entry for skill {skill:?} sets `{member}` to another value than the bundle; the bundle's entry decides it (the base entry may only add members the bundle's leaves unset, such as securityRequirements)")]
    SkillConflict {
        /// The skill's id.
        skill: String,
        /// The AgentSkill member that differs.
        member: String,
    },
    /// The merged card does not deserialize as an A2A 1.0 AgentCard.
    #[error("the merged card is not an A2A 1.0 AgentCard: {0}")]
    NotAnAgentCard(String),
}

/// The one mapping of a refused merge to a finding code: a skill the base card already
/// has under another definition is `duplicate_skill`; anything else about the base card
/// is `card_invalid`.
impl From<&CardError> for Code {
    fn from(e: &CardError) -> Code {
        match e {
            CardError::SkillConflict { .. } => Code::DuplicateSkill,
            _ => Code::CardInvalid,
        }
    }
}

/// Each problem as "message (at pointer)", joined by "; ": how a card's problems read in one line.
pub fn describe_problems(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| {
            format!(
                "{} (at {})",
                p.message,
                if p.pointer.is_empty() {
                    "/"
                } else {
                    &p.pointer
                }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Merge an extension and AgentSkill entries into a base A2A 1.0 AgentCard (JSON).
///
/// The base is first checked exactly as A2A 1.0 defines AgentCard
/// ([`crate::card::agent_card::check`]: every problem is reported, with its pointer) and read
/// in camelCase spelling (a card written with the proto's snake_case names is accepted
/// and printed in camelCase). A base carrying `signatures` is refused: the merge changes
/// the content they cover (drop them first to re-sign, as `card --sign-key` does). Then
/// the extension is appended to `capabilities.extensions` (a base that already has it is
/// refused) and the skills to `skills`. A base entry whose `id` is one of the bundle's
/// skills is merged into the bundle's entry, which takes its place at the end: members
/// the bundle's entry leaves unset (such as `securityRequirements`) come from the base,
/// and a member both set to different values is refused. The result is checked again and
/// deserialized as an [`a2a_types::AgentCard`].
pub fn merge_card(
    base: &Value,
    extension: &AgentExtension,
    skills: &[AgentSkill],
) -> Result<Value, CardError> {
    let problems = crate::card::agent_card::check(base);
    if !problems.is_empty() {
        return Err(CardError::NotACard(problems));
    }
    let mut card = crate::card::agent_card::normalize(base);
    let obj = card
        .as_object_mut()
        .expect("a checked AgentCard is an object");
    if obj
        .get("signatures")
        .and_then(Value::as_array)
        .is_some_and(|s| !s.is_empty())
    {
        return Err(CardError::StaleSignatures);
    }
    obj.remove("signatures");
    let capabilities = obj
        .entry("capabilities")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .expect("a checked AgentCard's capabilities are an object");
    let extensions = capabilities
        .entry("extensions")
        .or_insert_with(|| json!([]));
    if extensions.is_null() {
        *extensions = json!([]);
    }
    let extensions = extensions
        .as_array_mut()
        .expect("a checked card's extensions are an array");
    if extensions.iter().any(|e| e["uri"] == EXTENSION_URI) {
        return Err(CardError::DuplicateExtension);
    }
    extensions.push(sorted(&with_descriptors(extension)));
    let list = obj.entry("skills").or_insert_with(|| json!([]));
    if list.is_null() {
        *list = json!([]);
    }
    let list = list
        .as_array_mut()
        .expect("a checked AgentCard's skills are an array");
    for skill in skills {
        let mut entry = sorted(skill);
        if let Some(i) = list.iter().position(|s| s["id"] == entry["id"]) {
            let base_entry = list.remove(i);
            let merged = entry.as_object_mut().expect("an AgentSkill is an object");
            for (member, value) in base_entry.as_object().into_iter().flatten() {
                match merged.get(member) {
                    None => {
                        merged.insert(member.clone(), value.clone());
                    }
                    Some(ours) if ours == value => {}
                    Some(_) => {
                        return Err(CardError::SkillConflict {
                            skill: skill.id.clone(),
                            member: member.clone(),
                        })
                    }
                }
            }
            entry = sorted(&entry);
        }
        list.push(entry);
    }
    let problems = crate::card::agent_card::check(&card);
    if !problems.is_empty() {
        return Err(CardError::NotAnAgentCard(describe_problems(&problems)));
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
        let ext = extension(&[Binding {
            skill_id: "s".into(),
            skill_version: "1.0".parse().unwrap(),
            interface_digest: format!("sha256:{}", "0".repeat(64)).parse().unwrap(),
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
        // A base entry for a bundle skill merges; a conflicting member is refused.
        let mut with_skill = base();
        with_skill["skills"] = json!([describe_skill()]);
        assert!(merge_card(&with_skill, &ext, &skills).is_ok());
        with_skill["skills"][0]["name"] = json!("Other name");
        assert_eq!(
            merge_card(&with_skill, &ext, &skills),
            Err(CardError::SkillConflict {
                skill: DESCRIBE_SKILL.into(),
                member: "name".into()
            })
        );
        assert!(matches!(
            merge_card(&json!([]), &ext, &skills),
            Err(CardError::NotACard(_))
        ));
        assert!(matches!(
            merge_card(&json!({"name": "x"}), &ext, &skills),
            Err(CardError::NotACard(_))
        ));
    }
}
