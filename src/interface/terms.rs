//! The draft's vocabulary for a skill's behaviour and its schemas' roles, shared by the
//! side that writes Skill Interface Documents and the sides that read them.
//!
//! Draft "Skill Interface Schema and Documents": a document declares its `interaction`
//! (the supported response modes, whether a task is cancellable) and its `authority`
//! (the default mode — `observe_only`, `recommend_only` or `execute` — and whether an
//! approval may be required), and carries one Schema Reference per role: skill input,
//! skill output, supporting record ("Skill input", "Skill output", "Supporting-record
//! schemas"). The manifest (`skill.yaml`), the ledger and the agent all read these
//! same types.

use serde::Deserialize;

/// The role a schema plays in a Skill Interface Document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The skill input.
    Input,
    /// The skill output.
    Output,
    /// A supporting record.
    Record,
}

impl Role {
    /// The wire name (`input`, `output`, `record`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::Record => "record",
        }
    }
}

/// A response mode a skill supports (the draft's `supported_response_modes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseMode {
    /// The result in the response to SendMessage.
    Sync,
    /// The result over SendStreamingMessage.
    Stream,
    /// The client polls GetTask for the result.
    Poll,
    /// The result is pushed to the client's notification endpoint.
    Push,
}

/// A document's `interaction`: how the skill's tasks may be driven.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    /// The response modes the skill supports.
    pub supported_response_modes: Vec<ResponseMode>,
    /// Whether a task of the skill may be canceled.
    pub cancellable: bool,
}

/// The advertised default posture, ordered from least to most powerful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DefaultMode {
    /// Observes only; changes nothing.
    ObserveOnly,
    /// Recommends actions; performs none.
    RecommendOnly,
    /// Performs actions.
    Execute,
}

/// A document's `authority`: what the skill may do by default.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Authority {
    /// The default posture.
    pub default_mode: DefaultMode,
    /// Whether an operation may wait for approval.
    pub approval_may_be_required: bool,
}
