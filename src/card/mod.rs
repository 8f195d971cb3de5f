//! The A2A Agent Card: the schema-interface extension and AgentSkill entries an agent
//! advertises, the A2A 1.0 card's strict shape and protobuf-JSON form, and signed cards.
//!
//! Draft "A2A Mapping for Interface Version 1.0", Agent advertisement: an agent MUST
//! advertise describe_skill and each schema-governed skill in its Agent Card, and bind
//! each skill_id to one skill_version and interface_digest in the extension's params.

pub mod a2a;
pub mod agent_card;
pub mod signature;
