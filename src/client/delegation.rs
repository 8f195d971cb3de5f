//! Delegation hops: correlating an upstream task with the downstream task it creates.
//!
//! Draft "Design Principles", Preserve task identity across delegation hops: when an
//! agent handling an upstream A2A Task invokes another agent, the downstream invocation
//! creates a distinct Task at the receiving agent; the delegating component MUST NOT
//! reuse the upstream task identifier as the downstream one, MUST NOT assume task
//! identifiers are globally unique (each is scoped to the agent that issued it), and
//! records the relationship in *separately named metadata*. "Operational
//! Considerations" asks for diagnostics per hop: both agent identities, both task ids,
//! the skill and version, the interface digest and the terminal state.
//!
//! So the downstream request never carries a `taskId` (the receiving agent issues a new
//! one), the correlation travels in the request Message's `metadata` under its own name
//! ([`METADATA_KEY`]), always qualified by the upstream agent's identity, and after the
//! call a [`Hop`] records both sides for audit.

use crate::interface::binding::Binding;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The Message `metadata` member that carries the correlation: named for this purpose,
/// so neither protocol task identifier is overloaded.
pub const METADATA_KEY: &str = "skillbundle/delegation";

/// The upstream side of a hop: the task on whose behalf a call is made, qualified by
/// the agent (endpoint or card URL) that issued its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upstream {
    /// The agent (endpoint or card URL) that issued the task id.
    pub agent: String,
    /// The upstream task's id.
    pub task_id: String,
    /// The upstream task's context id, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
}

impl Upstream {
    /// The correlation for task `task_id` issued by `agent`, without a context id.
    pub fn new(agent: impl Into<String>, task_id: impl Into<String>) -> Self {
        Upstream {
            agent: agent.into(),
            task_id: task_id.into(),
            context_id: None,
        }
    }

    /// The metadata value: `{"upstream_agent", "upstream_task_id", "upstream_context_id"?}`.
    pub fn metadata(&self) -> Value {
        let mut value = json!({"upstream_agent": self.agent, "upstream_task_id": self.task_id});
        if let Some(c) = &self.context_id {
            value["upstream_context_id"] = json!(c);
        }
        value
    }

    /// Set the correlation on an outgoing A2A Message (JSON form): its `metadata` gets
    /// [`METADATA_KEY`], and any `taskId` or `contextId` is removed — the downstream
    /// task is a new task of the receiving agent, never the upstream one.
    pub fn annotate(&self, message: &mut Value) {
        if let Some(m) = message.as_object_mut() {
            m.remove("taskId");
            m.remove("contextId");
            let metadata = m.entry("metadata").or_insert_with(|| json!({}));
            if !metadata.is_object() {
                *metadata = json!({});
            }
            metadata[METADATA_KEY] = self.metadata();
        }
    }

    /// The correlation a receiving agent finds on a request Message, if any.
    pub fn from_message(message: &Value) -> Option<Upstream> {
        let m = message.pointer("/metadata")?.get(METADATA_KEY)?;
        Some(Upstream {
            agent: m.get("upstream_agent")?.as_str()?.to_string(),
            task_id: m.get("upstream_task_id")?.as_str()?.to_string(),
            context_id: m
                .get("upstream_context_id")
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }
}

/// One delegation hop, for diagnostics and audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// The agent that issued the upstream task.
    pub upstream_agent: String,
    /// The upstream task's id.
    pub upstream_task_id: String,
    /// The agent called.
    pub downstream_agent: String,
    /// The task it issued for the call.
    pub downstream_task_id: String,
    /// The downstream skill's binding: `skill_id`, `skill_version`, `interface_digest`.
    #[serde(flatten)]
    pub binding: Binding,
    /// The downstream task's terminal (or last observed) state.
    pub terminal_state: String,
}

impl Hop {
    /// Record a hop; `None` when the downstream task id is the upstream one at the
    /// same agent (the one case in which the two ids would be confused).
    pub fn record(
        upstream: &Upstream,
        downstream_agent: &str,
        downstream_task_id: &str,
        binding: &Binding,
        terminal_state: &str,
    ) -> Option<Hop> {
        if upstream.agent == downstream_agent && upstream.task_id == downstream_task_id {
            return None;
        }
        Some(Hop {
            upstream_agent: upstream.agent.clone(),
            upstream_task_id: upstream.task_id.clone(),
            downstream_agent: downstream_agent.to_string(),
            downstream_task_id: downstream_task_id.to_string(),
            binding: binding.clone(),
            terminal_state: terminal_state.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_correlation_is_separate_metadata_and_no_task_id_is_carried() {
        let up = Upstream {
            agent: "http://a".into(),
            task_id: "t-1".into(),
            context_id: Some("c-1".into()),
        };
        let mut message =
            json!({"messageId": "m", "taskId": "t-1", "contextId": "c-1", "parts": []});
        up.annotate(&mut message);
        assert!(message.get("taskId").is_none() && message.get("contextId").is_none());
        assert_eq!(message["metadata"][METADATA_KEY]["upstream_task_id"], "t-1");
        assert_eq!(Upstream::from_message(&message), Some(up.clone()));
        let binding = Binding {
            skill_id: "s".into(),
            skill_version: "1.0".parse().unwrap(),
            interface_digest: crate::wire::digest::Digest::of_bytes(b"x"),
        };
        assert!(Hop::record(&up, "http://a", "t-1", &binding, "TASK_STATE_COMPLETED").is_none());
        // The same id at another agent is another task.
        let hop = Hop::record(&up, "http://b", "t-1", &binding, "TASK_STATE_COMPLETED").unwrap();
        assert_eq!(hop.downstream_agent, "http://b");
    }
}
