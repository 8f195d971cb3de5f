//! The draft's machine-readable error conditions and the error object that carries them.
//!
//! When an agent refuses a request or cannot complete it, the draft fixes both *what* it
//! says — one Data Part `{"error":{"code","message","details"?}}` whose `code` is one of a
//! closed list of conditions — and *which task state* the A2A Task then reaches:
//! `TASK_STATE_REJECTED` when a request is understood but not accepted
//! (`interface_mismatch`, `input_invalid`, `constraint_rejected`, `authorization_failed`),
//! `TASK_STATE_FAILED` when an accepted operation cannot complete (`output_invalid`, a
//! describe_skill that cannot produce a valid interface), and for
//! `resource_limit_exceeded` whichever of the two matches *when* the limit was hit. A
//! client that detects a condition locally reports it locally: no remote task exists, so
//! there is no task state at all.
//!
//! So an [`ErrorObject`] records where it was detected ([`Detected`]) next to the code,
//! and [`ErrorObject::task_state`] answers the task-state question from both. The
//! detection stage is not part of the wire object.

use a2a_types::TaskState;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// A machine-readable condition the draft requires implementations to distinguish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Condition {
    /// The requested skill_id is not advertised by the agent.
    SkillNotAdvertised,
    /// The advertised or returned Skill Interface version is not supported (client side).
    UnsupportedInterfaceVersion,
    /// The interface is advertised but cannot currently be returned.
    InterfaceUnavailable,
    /// A Skill Interface Document or an embedded schema is defective.
    InterfaceInvalid,
    /// An invocation's skill_version or interface_digest is not the active document's.
    InterfaceMismatch,
    /// The domain input does not validate against input_schema.
    InputInvalid,
    /// The produced domain output (or a supporting record) does not validate.
    OutputInvalid,
    /// A structurally valid constraint cannot be honoured or enforced.
    ConstraintRejected,
    /// Authentication, authorization or a required approval does not permit the request.
    AuthorizationFailed,
    /// Processing would exceed an implementation resource limit.
    ResourceLimitExceeded,
}

impl Condition {
    /// Every condition, in the draft's order.
    pub const ALL: &'static [Condition] = &[
        Condition::SkillNotAdvertised,
        Condition::UnsupportedInterfaceVersion,
        Condition::InterfaceUnavailable,
        Condition::InterfaceInvalid,
        Condition::InterfaceMismatch,
        Condition::InputInvalid,
        Condition::OutputInvalid,
        Condition::ConstraintRejected,
        Condition::AuthorizationFailed,
        Condition::ResourceLimitExceeded,
    ];

    /// The wire name, e.g. `interface_mismatch`.
    pub fn as_str(self) -> &'static str {
        match self {
            Condition::SkillNotAdvertised => "skill_not_advertised",
            Condition::UnsupportedInterfaceVersion => "unsupported_interface_version",
            Condition::InterfaceUnavailable => "interface_unavailable",
            Condition::InterfaceInvalid => "interface_invalid",
            Condition::InterfaceMismatch => "interface_mismatch",
            Condition::InputInvalid => "input_invalid",
            Condition::OutputInvalid => "output_invalid",
            Condition::ConstraintRejected => "constraint_rejected",
            Condition::AuthorizationFailed => "authorization_failed",
            Condition::ResourceLimitExceeded => "resource_limit_exceeded",
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a condition was detected, which decides the task state it leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Detected {
    /// By a client, before any remote task exists: reported locally, no task state.
    Client,
    /// By the agent while deciding whether to accept a request (request checks).
    BeforeAcceptance,
    /// By the agent after accepting, while processing (results, records, describe_skill).
    DuringProcessing,
}

/// One entry of an error's `details` array (draft: for input_invalid and output_invalid).
///
/// `instance_path` is required by the draft; the rest is diagnostic. `expected` and
/// `actual` are only ever filled from the schema (which the caller can read through
/// describe_skill anyway) and from the JSON *type* of the instance — never from an
/// instance value, which might be something the caller may not see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detail {
    /// JSON Pointer to the invalid field, relative to the validated value.
    pub instance_path: String,
    /// JSON Pointer to the failing keyword in the schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_path: Option<String>,
    /// The failing keyword (`type`, `required`, `enum`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    /// What the schema expected, when the keyword names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// What the instance held, when safe to show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
}

/// The body of the draft's error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The machine-readable condition.
    pub code: Condition,
    /// A message for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Per-location details (for `input_invalid`, `output_invalid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Vec<Detail>>,
}

/// The draft's error object, `{"error":{"code","message","details"?}}`: serialize it as
/// the data value of the Task's final status Message (or of the binding's error).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error body.
    pub error: ErrorBody,
    /// Where it was detected; not part of the wire object.
    #[serde(skip, default = "client")]
    pub detected: Detected,
}

fn client() -> Detected {
    Detected::Client
}

impl ErrorObject {
    /// An error with a message and no details.
    pub fn new(code: Condition, detected: Detected, message: impl Into<String>) -> Self {
        ErrorObject {
            error: ErrorBody {
                code,
                message: Some(message.into()),
                details: None,
            },
            detected,
        }
    }

    /// Attach `details` (omitted from the wire object when empty).
    pub fn with_details(mut self, details: Vec<Detail>) -> Self {
        self.error.details = (!details.is_empty()).then_some(details);
        self
    }

    /// Data that is not I-JSON, met where the condition `code` applies (draft: I-JSON
    /// for every JSON value of the mapping): `resource_limit_exceeded` instead when it
    /// is nested beyond the limit ("Resource limits"). `what` names the data, `why` says
    /// what is wrong without the value; `pointer` is where, put in `details` when given
    /// (never the value itself).
    pub fn not_ijson(
        code: Condition,
        detected: Detected,
        too_deep: bool,
        message: String,
        pointer: Option<String>,
    ) -> Self {
        let code = if too_deep {
            Condition::ResourceLimitExceeded
        } else {
            code
        };
        let error = ErrorObject::new(code, detected, message);
        match pointer {
            Some(instance_path) => error.with_details(vec![Detail {
                instance_path,
                schema_path: None,
                keyword: None,
                expected: None,
                actual: None,
            }]),
            None => error,
        }
    }

    /// The condition.
    pub fn code(&self) -> Condition {
        self.error.code
    }

    /// The message, empty when none.
    pub fn message(&self) -> &str {
        self.error.message.as_deref().unwrap_or_default()
    }

    /// The details, empty when none.
    pub fn details(&self) -> &[Detail] {
        self.error.details.as_deref().unwrap_or_default()
    }

    /// The wire object as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("an error object always serializes")
    }

    /// The state the remote A2A Task must reach, or `None` for a condition detected by a
    /// client (no remote task exists; report it locally).
    pub fn task_state(&self) -> Option<TaskState> {
        use Condition::*;
        let rejected = match (self.detected, self.error.code) {
            (Detected::Client, _) => return None,
            (
                _,
                InterfaceMismatch
                | InputInvalid
                | ConstraintRejected
                | AuthorizationFailed
                | SkillNotAdvertised
                | UnsupportedInterfaceVersion,
            ) => true,
            (_, OutputInvalid | InterfaceInvalid | InterfaceUnavailable) => false,
            (detected, ResourceLimitExceeded) => detected == Detected::BeforeAcceptance,
        };
        Some(if rejected {
            TaskState::Rejected
        } else {
            TaskState::Failed
        })
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.error.code)?;
        if let Some(m) = &self.error.message {
            write!(f, ": {m}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ErrorObject {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_shape_is_the_drafts() {
        let e = ErrorObject::new(
            Condition::InterfaceInvalid,
            Detected::DuringProcessing,
            "The selected interface document is invalid",
        );
        assert_eq!(
            e.to_json(),
            json!({"error": {"code": "interface_invalid", "message": "The selected interface document is invalid"}})
        );
        let e = ErrorObject::new(
            Condition::InputInvalid,
            Detected::BeforeAcceptance,
            "The threshold must be numeric",
        )
        .with_details(vec![Detail {
            instance_path: "/threshold".into(),
            schema_path: Some("/properties/threshold/type".into()),
            keyword: Some("type".into()),
            expected: Some(json!("number")),
            actual: Some(json!("string")),
        }]);
        assert_eq!(
            e.to_json(),
            json!({"error": {"code": "input_invalid", "message": "The threshold must be numeric", "details": [
                {"instance_path": "/threshold", "schema_path": "/properties/threshold/type", "keyword": "type", "expected": "number", "actual": "string"}
            ]}})
        );
        let back: ErrorObject = serde_json::from_value(e.to_json()).unwrap();
        assert_eq!(back.error, e.error);
        for c in Condition::ALL {
            assert_eq!(json!(c), json!(c.as_str()));
        }
    }

    #[test]
    fn task_states_follow_the_draft() {
        let state = |code, detected| ErrorObject::new(code, detected, "").task_state();
        for code in [
            Condition::InterfaceMismatch,
            Condition::InputInvalid,
            Condition::ConstraintRejected,
            Condition::AuthorizationFailed,
        ] {
            assert_eq!(
                state(code, Detected::BeforeAcceptance),
                Some(TaskState::Rejected)
            );
        }
        assert_eq!(
            state(Condition::OutputInvalid, Detected::DuringProcessing),
            Some(TaskState::Failed)
        );
        assert_eq!(
            state(Condition::InterfaceInvalid, Detected::DuringProcessing),
            Some(TaskState::Failed)
        );
        assert_eq!(
            state(Condition::ResourceLimitExceeded, Detected::BeforeAcceptance),
            Some(TaskState::Rejected)
        );
        assert_eq!(
            state(Condition::ResourceLimitExceeded, Detected::DuringProcessing),
            Some(TaskState::Failed)
        );
        // Local client conditions never become a remote task's state.
        for code in Condition::ALL {
            assert_eq!(state(*code, Detected::Client), None);
        }
    }
}
