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
    Input,
    Output,
    Record,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::Record => "record",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseMode {
    Sync,
    Stream,
    Poll,
    Push,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    pub supported_response_modes: Vec<ResponseMode>,
    pub cancellable: bool,
}

/// The advertised default posture, ordered from least to most powerful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DefaultMode {
    ObserveOnly,
    RecommendOnly,
    Execute,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Authority {
    pub default_mode: DefaultMode,
    pub approval_may_be_required: bool,
}
