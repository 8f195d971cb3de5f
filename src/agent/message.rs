//! Which incoming A2A Message is what: a skill request object to check, an
//! intermediate-exchange follow-up, a base A2A request, or something to refuse — and how
//! (draft: "Agent advertisement", "Domain-skill invocation", "describe_skill request",
//! "Skill input" and the intermediate-exchange table of the A2A mapping).
//!
//! The rules, in order:
//! - A Message *contains a skill request object* when any of its Data Parts holds an
//!   object whose string `skill` names a skill this agent advertises (describe_skill or a
//!   bundle skill). Such a Message is always checked, however many Parts it has: a
//!   request object is never passed on unchecked as a "base" request.
//! - Sent into an existing Task, a skill request object is refused at the binding, before
//!   the Task is touched: every invocation (and every describe_skill) is a Task of its own.
//!   A Message without one, sent into a schema-governed Task that is waiting for input or
//!   authorization, is that exchange's follow-up: the draft applies no schema to it
//!   ("the follow-up is not independently validated against input_schema"), so it is
//!   passed on, and only the Task's final result is checked. Into a governed Task that is
//!   not waiting, it is refused at the binding.
//! - Without activation of the extension (the `A2A-Extensions` header): in strict mode
//!   (the card says `required: true`) every new request is refused with A2A's
//!   `ExtensionSupportRequiredError`; otherwise a Message with no skill request object is
//!   a base request when the agent takes base requests, and anything else is rejected with
//!   a text saying how to activate the extension.
//! - With activation: a skill request object must be the data of the Message's single
//!   Data Part (the draft: "exactly one Data Part"), and is then checked by
//!   [`Bundle::check_message`]. A Message that is one Data Part holding an object with a
//!   string `skill` member is a skill request object too when that skill is not
//!   advertised: the caller activated the extension and sent the request form, so it is
//!   refused with `skill_not_advertised` (draft "Machine-readable error conditions"),
//!   never passed on as a base request. Any other Message without one is a base request
//!   when the agent takes them, and `input_invalid` otherwise.
//!
//! A refusal never repeats what the caller sent.

use crate::agent::Bundle;
use crate::interface::condition::{Condition, Detected, ErrorObject};
use crate::interface::DESCRIBE_SKILL;
use serde_json::Value;

use super::Request;

/// How the agent is configured to treat requests (the card's `required` flag and
/// whether base A2A requests are served).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// The extension is advertised `required: true`: a request that does not activate it
    /// is refused with `ExtensionSupportRequiredError`.
    pub require_extension: bool,
    /// Messages that contain no skill request object go to the domain executor as base
    /// A2A requests.
    pub base_requests: bool,
}

/// The Task a Message is sent into, as far as the rules need to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExistingTask<'a> {
    /// The skill the Task invokes, when it is a schema-governed invocation.
    pub skill_id: Option<&'a str>,
    /// The Task waits for input or authorization (`TASK_STATE_INPUT_REQUIRED`,
    /// `TASK_STATE_AUTH_REQUIRED`).
    pub interrupted: bool,
}

/// One Part of a Message: the data value of a Data Part, or any other kind of Part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Part<'a> {
    /// A Data Part, by its data value.
    Data(&'a Value),
    /// A Text, File or any other Part.
    Other,
}

/// What to do with a Message.
#[derive(Debug, Clone, PartialEq)]
pub enum Route<'a> {
    /// A checked skill request: answer describe_skill or invoke the skill.
    Request(Request<'a>),
    /// The follow-up of a governed Task's intermediate exchange: pass it on unchecked.
    FollowUp,
    /// A base A2A request (no skill request object): pass it on, no checks apply.
    Base,
}

/// Why a Message is refused, and through which mechanism.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Strict mode, extension not activated: A2A's `ExtensionSupportRequiredError`
    /// (JSON-RPC -32008), before any Task exists.
    ExtensionRequired,
    /// Not activated, no base requests served: a new Task is rejected with a text that
    /// says how to activate the extension.
    NotActivated,
    /// Refused through the binding's error mechanism, before any Task is created or
    /// touched (the error object goes in the error's data).
    Binding(ErrorObject),
    /// A new Task is rejected (or fails) with the draft's error object.
    Task(ErrorObject),
}

impl Bundle {
    /// Whether `data` is a skill request object for a skill this agent advertises
    /// (describe_skill or one of the bundle's skills), and which.
    pub fn requested_skill<'a>(&self, data: &'a Value) -> Option<&'a str> {
        let skill = data.as_object()?.get("skill")?.as_str()?;
        (skill == DESCRIBE_SKILL || self.document(skill).is_some()).then_some(skill)
    }

    /// Decide what a Message is (see the module documentation for the rules).
    /// `metadata` is the Message's metadata (routing hints), `activated` whether the
    /// request activated the extension, `task` the Task it is sent into, if any.
    pub fn route_message<'a>(
        &'a self,
        parts: &[Part<'a>],
        metadata: Option<&Value>,
        activated: bool,
        task: Option<ExistingTask<'_>>,
        policy: Policy,
    ) -> Result<Route<'a>, Refusal> {
        let carries_request = parts
            .iter()
            .any(|p| matches!(p, Part::Data(v) if self.requested_skill(v).is_some()));
        let binding = |message: &str| {
            Err(Refusal::Binding(ErrorObject::new(
                Condition::InputInvalid,
                Detected::BeforeAcceptance,
                message,
            )))
        };
        if let Some(task) = task {
            if carries_request {
                return binding(
                    "a skill request object starts a Task of its own: send it without a taskId, not into an existing Task",
                );
            }
            return match (task.skill_id, task.interrupted) {
                (Some(_), true) => Ok(Route::FollowUp),
                (Some(_), false) => binding(
                    "this Task is a skill invocation that is not waiting for input or authorization: it takes no further Message",
                ),
                (None, _) if policy.base_requests => Ok(Route::Base),
                (None, _) => binding("this agent takes no base A2A requests"),
            };
        }
        if !activated {
            if policy.require_extension {
                return Err(Refusal::ExtensionRequired);
            }
            if policy.base_requests && !carries_request {
                return Ok(Route::Base);
            }
            return Err(Refusal::NotActivated);
        }
        // Activated, one Data Part in the request form: a request for a skill this agent
        // may not advertise, checked (skill_not_advertised) rather than passed on.
        let request_form = matches!(
            parts,
            [Part::Data(Value::Object(o))] if o.get("skill").is_some_and(Value::is_string)
        );
        if !carries_request && !request_form {
            if policy.base_requests {
                return Ok(Route::Base);
            }
            // Checked as a request, so that the refusal says what is missing.
            let data = match parts {
                [Part::Data(v)] => *v,
                _ => return Err(Refusal::Task(single_data_part())),
            };
            return match self.check_message(data, metadata) {
                Ok(request) => Ok(Route::Request(request)),
                Err(e) => Err(Refusal::Task(e)),
            };
        }
        let [Part::Data(data)] = parts else {
            return Err(Refusal::Task(single_data_part()));
        };
        self.check_message(data, metadata)
            .map(Route::Request)
            .map_err(Refusal::Task)
    }
}

fn single_data_part() -> ErrorObject {
    ErrorObject::new(
        Condition::InputInvalid,
        Detected::BeforeAcceptance,
        "a skill request Message carries exactly one Part, a Data Part whose data is the skill request object",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tests_support::example_bundle;
    use serde_json::json;

    const SKILL: &str = "evaluate_resource_condition";

    fn request(b: &Bundle) -> Value {
        let doc = b.document(SKILL).unwrap();
        json!({
            "skill": SKILL,
            "skill_version": doc.skill_version.to_string(),
            "interface_digest": doc.digest.as_str(),
            "arguments": {"resource_id": "r-1", "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"}},
        })
    }

    const OPEN: Policy = Policy {
        require_extension: false,
        base_requests: true,
    };

    #[test]
    fn a_request_object_beside_another_part_is_checked_not_passed_on() {
        let b = example_bundle();
        let req = request(b);
        let text = json!("hello");
        for parts in [
            vec![Part::Data(&req), Part::Other],
            vec![Part::Other, Part::Data(&req)],
            vec![Part::Data(&text), Part::Data(&req)],
        ] {
            let routed = b.route_message(&parts, None, true, None, OPEN);
            let Err(Refusal::Task(e)) = routed else {
                panic!("{routed:?}")
            };
            assert_eq!(e.code(), Condition::InputInvalid);
            // Not activated: still not a base request.
            assert_eq!(
                b.route_message(&parts, None, false, None, OPEN),
                Err(Refusal::NotActivated)
            );
        }
        assert!(matches!(
            b.route_message(&[Part::Data(&req)], None, true, None, OPEN),
            Ok(Route::Request(Request::Invoke { .. }))
        ));
    }

    #[test]
    fn plain_messages_are_base_requests_only_when_served() {
        let b = example_bundle();
        let other = json!({"skill": "not-advertised", "x": 1});
        let closed = Policy::default();
        for activated in [true, false] {
            assert_eq!(
                b.route_message(&[Part::Other], None, activated, None, OPEN),
                Ok(Route::Base)
            );
        }
        // The request form for an unadvertised skill: a base request only when the
        // extension is not activated.
        assert_eq!(
            b.route_message(&[Part::Data(&other)], None, false, None, OPEN),
            Ok(Route::Base)
        );
        let Err(Refusal::Task(e)) = b.route_message(&[Part::Data(&other)], None, true, None, OPEN)
        else {
            panic!()
        };
        assert_eq!(e.code(), Condition::SkillNotAdvertised);
        let text = json!({"note": "hello"});
        assert_eq!(
            b.route_message(&[Part::Data(&text)], None, true, None, OPEN),
            Ok(Route::Base)
        );
        assert_eq!(
            b.route_message(&[Part::Other], None, false, None, closed),
            Err(Refusal::NotActivated)
        );
        let Err(Refusal::Task(e)) =
            b.route_message(&[Part::Data(&other)], None, true, None, closed)
        else {
            panic!()
        };
        assert_eq!(e.code(), Condition::SkillNotAdvertised);
    }

    #[test]
    fn strict_mode_refuses_without_activation_at_the_binding() {
        let b = example_bundle();
        let req = request(b);
        let strict = Policy {
            require_extension: true,
            base_requests: true,
        };
        for parts in [vec![Part::Other], vec![Part::Data(&req)]] {
            assert_eq!(
                b.route_message(&parts, None, false, None, strict),
                Err(Refusal::ExtensionRequired)
            );
        }
        assert_eq!(
            b.route_message(&[Part::Other], None, true, None, strict),
            Ok(Route::Base)
        );
    }

    #[test]
    fn follow_ups_pass_unchecked_only_into_a_waiting_governed_task() {
        let b = example_bundle();
        let partial = json!({"credential_ref": "vault:abc"});
        let waiting = ExistingTask {
            skill_id: Some(SKILL),
            interrupted: true,
        };
        for parts in [vec![Part::Data(&partial)], vec![Part::Other, Part::Other]] {
            for activated in [true, false] {
                assert_eq!(
                    b.route_message(&parts, None, activated, Some(waiting), Policy::default()),
                    Ok(Route::FollowUp)
                );
            }
        }
        let running = ExistingTask {
            interrupted: false,
            ..waiting
        };
        assert!(matches!(
            b.route_message(&[Part::Data(&partial)], None, true, Some(running), OPEN),
            Err(Refusal::Binding(_))
        ));
    }

    #[test]
    fn a_request_object_into_an_existing_task_is_refused_at_the_binding() {
        let b = example_bundle();
        let describe = json!({"skill": "describe_skill", "arguments": {"skill_id": SKILL}});
        let req = request(b);
        for task in [
            ExistingTask {
                skill_id: Some(SKILL),
                interrupted: true,
            },
            ExistingTask {
                skill_id: None,
                interrupted: false,
            },
        ] {
            for data in [&describe, &req] {
                let Err(Refusal::Binding(e)) =
                    b.route_message(&[Part::Data(data)], None, true, Some(task), OPEN)
                else {
                    panic!()
                };
                assert_eq!(e.code(), Condition::InputInvalid);
                assert!(!e.message().contains(SKILL));
            }
        }
    }
}
