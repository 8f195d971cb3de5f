//! Which A2A operations a schema-governed skill's `interaction` declaration allows on its
//! Tasks, and the A2A error for one it does not (draft "Skill Interface Schema and
//! Documents": a document's `interaction` carries `supported_response_modes` — `sync`,
//! `stream`, `poll`, `push` — and `cancellable`; "Interaction declarations reflect the
//! agent implementation"). One decision, [`check`], that every binding asks: the Python
//! executor (`skillbundle.a2a`) and the gateway (`skillbundle serve`) refuse the same
//! requests with the same errors, before the domain code or the upstream is reached.
//!
//! The draft names the modes but defines no per-request test, so the reading below is
//! deliberately conservative: a request is refused only when the document says plainly
//! that the skill cannot serve it, and every interpretation under which it could be
//! served is allowed. The draft's own words for the modes are in "Supporting-record
//! schemas": "synchronous completion, streaming updates, or task retrieval and
//! polling"; push is A2A's push notifications. Mapped onto A2A 1.0's operations:
//!
//! - **sync** is a blocking `SendMessage` (`configuration.returnImmediately` false or
//!   absent): A2A makes the server wait until the Task ends or is interrupted and answer
//!   it in the reply. A request that asks for nothing in particular is therefore a sync
//!   request — A2A's default is to block — and needs `sync`.
//! - **stream** is `SendStreamingMessage` and `SubscribeToTask` (both deliver the Task's
//!   updates as a stream); each needs `stream`.
//! - **poll** and **push**: a `SendMessage` with `returnImmediately: true` answers at once
//!   and leaves the caller to learn the outcome later, by polling `GetTask`, by push
//!   notifications, or by subscribing to the Task's stream. Which one it will use is not
//!   in the request, so it needs *any one* of `poll`, `push` or `stream`; it is refused
//!   only when the skill declares none of them (a `[sync]`-only skill).
//! - A push-notification config — in a send's `configuration.taskPushNotificationConfig`
//!   or set with `CreateTaskPushNotificationConfig` — asks the agent to push the Task's
//!   updates, and needs `push`, besides whatever the send needs.
//! - `cancellable: false` refuses `CancelTask`, whatever state the Task is in.
//! - Never refused: `GetTask` and `ListTasks` (retrieving a Task is not only polling: a
//!   caller of a sync skill reads the Task it was answered, and the draft applies "the
//!   same final Task and Artifact requirements" to retrieval whatever the mode), reading
//!   or deleting a push config (they start nothing), describe_skill and base A2A requests
//!   (no Skill Interface Document applies), and a follow-up's own content (it is judged
//!   by its operation like any send: a streaming follow-up of a skill without `stream` is
//!   refused).
//!
//! The errors are A2A 1.0's, through the binding, before any Task is created or touched:
//! `TaskNotCancelableError` (JSON-RPC -32002) for a cancel, `UnsupportedOperationError`
//! (-32004) for a mode the skill does not declare; on HTTP+JSON both are 400
//! `FAILED_PRECONDITION` with the same reason (`TASK_NOT_CANCELABLE`,
//! `UNSUPPORTED_OPERATION`). The draft defines no condition for either, so no draft error
//! object is attached. A message names the skill and what its document declares (the
//! bundle's text, published by describe_skill), never anything the caller sent.

use crate::agent::Bundle;
use crate::interface::{Interaction, ResponseMode};

/// An A2A 1.0 operation on a Task of a schema-governed skill, with the parts of its
/// request that select a response mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `SendMessage` (`message:send`): `return_immediately` is the request's
    /// `configuration.returnImmediately` (absent is false), `push_config` whether its
    /// configuration carries a `taskPushNotificationConfig`.
    SendMessage {
        /// `configuration.returnImmediately` (absent is false).
        return_immediately: bool,
        /// Whether the configuration carries a `taskPushNotificationConfig`.
        push_config: bool,
    },
    /// `SendStreamingMessage` (`message:stream`).
    SendStreamingMessage {
        /// Whether the configuration carries a `taskPushNotificationConfig`.
        push_config: bool,
    },
    /// `SubscribeToTask` (`tasks/{id}:subscribe`).
    SubscribeToTask,
    /// `CreateTaskPushNotificationConfig`.
    CreateTaskPushNotificationConfig,
    /// `CancelTask` (`tasks/{id}:cancel`).
    CancelTask,
}

impl Operation {
    /// The A2A 1.0 method name (the JSON-RPC method).
    pub fn method(self) -> &'static str {
        match self {
            Operation::SendMessage { .. } => "SendMessage",
            Operation::SendStreamingMessage { .. } => "SendStreamingMessage",
            Operation::SubscribeToTask => "SubscribeToTask",
            Operation::CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig",
            Operation::CancelTask => "CancelTask",
        }
    }

    /// Whether the operation is a send whose configuration carries a push-notification
    /// config.
    pub fn push_config(self) -> bool {
        matches!(
            self,
            Operation::SendMessage {
                push_config: true,
                ..
            } | Operation::SendStreamingMessage { push_config: true }
        )
    }

    /// The operation named by its A2A 1.0 method name, with the send's configuration
    /// flags (ignored by the other operations); `None` for any other name.
    pub fn from_method(method: &str, return_immediately: bool, push_config: bool) -> Option<Self> {
        Some(match method {
            "SendMessage" => Operation::SendMessage {
                return_immediately,
                push_config,
            },
            "SendStreamingMessage" => Operation::SendStreamingMessage { push_config },
            "SubscribeToTask" => Operation::SubscribeToTask,
            "CreateTaskPushNotificationConfig" => Operation::CreateTaskPushNotificationConfig,
            "CancelTask" => Operation::CancelTask,
            _ => return None,
        })
    }

    /// The response modes the operation needs: each entry is satisfied by any one of its
    /// modes, and every entry must be (see the module documentation).
    fn needs(self) -> &'static [&'static [ResponseMode]] {
        use ResponseMode::{Poll, Push, Stream, Sync};
        match self {
            Operation::SendMessage {
                return_immediately: false,
                push_config: false,
            } => &[&[Sync]],
            Operation::SendMessage {
                return_immediately: false,
                push_config: true,
            } => &[&[Sync], &[Push]],
            Operation::SendMessage {
                return_immediately: true,
                push_config: false,
            } => &[&[Poll, Push, Stream]],
            Operation::SendMessage {
                return_immediately: true,
                push_config: true,
            } => &[&[Push]],
            Operation::SendStreamingMessage { push_config: false } => &[&[Stream]],
            Operation::SendStreamingMessage { push_config: true } => &[&[Stream], &[Push]],
            Operation::SubscribeToTask => &[&[Stream]],
            Operation::CreateTaskPushNotificationConfig => &[&[Push]],
            Operation::CancelTask => &[],
        }
    }
}

/// Which A2A error refuses an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// `TaskNotCancelableError` (JSON-RPC -32002, HTTP 400 `TASK_NOT_CANCELABLE`).
    TaskNotCancelable,
    /// `UnsupportedOperationError` (JSON-RPC -32004, HTTP 400 `UNSUPPORTED_OPERATION`).
    UnsupportedOperation,
}

impl RefusalKind {
    /// The A2A 1.0 error code (JSON-RPC).
    pub fn code(self) -> i32 {
        match self {
            RefusalKind::TaskNotCancelable => a2a_types::error_code::TASK_NOT_CANCELABLE,
            RefusalKind::UnsupportedOperation => a2a_types::error_code::UNSUPPORTED_OPERATION,
        }
    }

    /// A stable name: `task_not_cancelable` or `unsupported_operation`.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalKind::TaskNotCancelable => "task_not_cancelable",
            RefusalKind::UnsupportedOperation => "unsupported_operation",
        }
    }
}

/// An operation a skill's `interaction` does not allow: the A2A error and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Which A2A error refuses the operation.
    pub kind: RefusalKind,
    /// The error's message (names the skill's `interaction`, never request text).
    pub message: String,
}

fn mode_name(mode: ResponseMode) -> &'static str {
    match mode {
        ResponseMode::Sync => "sync",
        ResponseMode::Stream => "stream",
        ResponseMode::Poll => "poll",
        ResponseMode::Push => "push",
    }
}

/// Whether `interaction` (of skill `skill_id`) allows `operation`; the refusal otherwise
/// (the rules are the module documentation's).
pub fn check(
    skill_id: &str,
    interaction: &Interaction,
    operation: Operation,
) -> Result<(), Refused> {
    if operation == Operation::CancelTask {
        if interaction.cancellable {
            return Ok(());
        }
        return Err(Refused {
            kind: RefusalKind::TaskNotCancelable,
            message: format!(
                "a Task of {skill_id} cannot be canceled: its Skill Interface Document declares cancellable false"
            ),
        });
    }
    let declared = &interaction.supported_response_modes;
    let Some(missing) = operation
        .needs()
        .iter()
        .find(|any| !any.iter().any(|m| declared.contains(m)))
    else {
        return Ok(());
    };
    let needed = match missing {
        [one] => format!("the response mode {}", mode_name(*one)),
        many => format!(
            "one of the response modes {}",
            many.iter()
                .map(|m| mode_name(*m))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let modes = declared
        .iter()
        .map(|m| mode_name(*m))
        .collect::<Vec<_>>()
        .join(", ");
    Err(Refused {
        kind: RefusalKind::UnsupportedOperation,
        message: format!(
            "{skill_id} does not support this {} request: it needs {needed}, and the skill's Skill Interface Document declares supported_response_modes [{modes}]",
            operation.method()
        ),
    })
}

impl Bundle {
    /// Whether a Task of `skill_id` may take `operation` ([`check`] against the skill's
    /// active document). Anything that is not a bundle skill — describe_skill, a base A2A
    /// Task (`None`) — has no `interaction` to obey: always allowed.
    pub fn check_operation(
        &self,
        skill_id: Option<&str>,
        operation: Operation,
    ) -> Result<(), Refused> {
        match skill_id.and_then(|s| self.document(s)) {
            Some(document) => check(&document.skill_id, &document.interaction, operation),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tests_support::example_bundle;
    use proptest::prelude::*;
    use ResponseMode::{Poll, Push, Stream, Sync};

    fn interaction(modes: &[ResponseMode], cancellable: bool) -> Interaction {
        Interaction {
            supported_response_modes: modes.to_vec(),
            cancellable,
        }
    }

    fn kind(modes: &[ResponseMode], cancellable: bool, op: Operation) -> Option<RefusalKind> {
        check("s", &interaction(modes, cancellable), op)
            .err()
            .map(|r| r.kind)
    }

    const BLOCKING: Operation = Operation::SendMessage {
        return_immediately: false,
        push_config: false,
    };
    const RETURN_AT_ONCE: Operation = Operation::SendMessage {
        return_immediately: true,
        push_config: false,
    };
    const STREAM: Operation = Operation::SendStreamingMessage { push_config: false };

    #[test]
    fn a_request_that_asks_for_nothing_in_particular_is_a_blocking_one() {
        let unsupported = Some(RefusalKind::UnsupportedOperation);
        assert_eq!(kind(&[Sync], false, BLOCKING), None);
        assert_eq!(kind(&[Stream, Poll, Push], true, BLOCKING), unsupported);
        let refused = check("s", &interaction(&[Stream, Push], true), BLOCKING).unwrap_err();
        assert_eq!(
            refused.message,
            "s does not support this SendMessage request: it needs the response mode sync, and the skill's Skill Interface Document declares supported_response_modes [stream, push]"
        );
    }

    #[test]
    fn returning_at_once_needs_some_way_to_learn_the_outcome() {
        for later in [Poll, Push, Stream] {
            assert_eq!(kind(&[later], true, RETURN_AT_ONCE), None, "{later:?}");
        }
        let refused = check("s", &interaction(&[Sync], true), RETURN_AT_ONCE).unwrap_err();
        assert_eq!(refused.kind, RefusalKind::UnsupportedOperation);
        assert!(refused
            .message
            .contains("one of the response modes poll, push, stream"));
    }

    #[test]
    fn streams_and_push_need_their_modes_and_cancel_needs_cancellable() {
        let unsupported = Some(RefusalKind::UnsupportedOperation);
        assert_eq!(kind(&[Sync, Push], false, STREAM), unsupported);
        assert_eq!(
            kind(&[Sync, Push], false, Operation::SubscribeToTask),
            unsupported
        );
        assert_eq!(kind(&[Stream], false, STREAM), None);
        let streamed_push = Operation::SendStreamingMessage { push_config: true };
        assert_eq!(kind(&[Stream], false, streamed_push), unsupported);
        assert_eq!(kind(&[Stream, Push], false, streamed_push), None);
        assert_eq!(
            kind(&[Sync], true, Operation::CreateTaskPushNotificationConfig),
            unsupported
        );
        assert_eq!(
            kind(&[Sync, Stream, Poll, Push], false, Operation::CancelTask),
            Some(RefusalKind::TaskNotCancelable)
        );
        assert_eq!(kind(&[Sync], true, Operation::CancelTask), None);
        assert_eq!(RefusalKind::TaskNotCancelable.code(), -32002);
        assert_eq!(RefusalKind::UnsupportedOperation.code(), -32004);
    }

    #[test]
    fn the_example_skills_exercise_both_values_and_other_tasks_obey_nothing() {
        let b = example_bundle();
        // manage_interface_config: [sync, push], not cancellable.
        let mic = Some("manage_interface_config");
        assert!(b.check_operation(mic, Operation::CancelTask).is_err());
        assert!(b.check_operation(mic, STREAM).is_err());
        assert!(b.check_operation(mic, BLOCKING).is_ok());
        // evaluate_resource_condition: [sync, stream], cancellable.
        let erc = Some("evaluate_resource_condition");
        assert!(b.check_operation(erc, Operation::CancelTask).is_ok());
        assert!(b.check_operation(erc, STREAM).is_ok());
        assert!(b.check_operation(erc, RETURN_AT_ONCE).is_ok());
        for other in [None, Some("describe_skill"), Some("not-a-skill")] {
            assert!(b.check_operation(other, Operation::CancelTask).is_ok());
            assert!(b.check_operation(other, STREAM).is_ok());
        }
    }

    fn any_mode() -> impl Strategy<Value = ResponseMode> {
        prop_oneof![Just(Sync), Just(Stream), Just(Poll), Just(Push)]
    }

    fn any_operation() -> impl Strategy<Value = Operation> {
        (0u8..5, any::<bool>(), any::<bool>()).prop_map(|(which, a, b)| match which {
            0 => Operation::SendMessage {
                return_immediately: a,
                push_config: b,
            },
            1 => Operation::SendStreamingMessage { push_config: b },
            2 => Operation::SubscribeToTask,
            3 => Operation::CreateTaskPushNotificationConfig,
            _ => Operation::CancelTask,
        })
    }

    proptest! {
        /// Declaring more never refuses more: a skill that declares every mode and is
        /// cancellable takes every operation, and adding a mode to a document never
        /// turns an allowed operation into a refused one. A refusal never repeats
        /// anything but the skill id and the declared modes.
        #[test]
        fn declaring_more_never_refuses_more(
            modes in proptest::collection::vec(any_mode(), 1..4),
            extra in any_mode(),
            cancellable in any::<bool>(),
            op in any_operation(),
        ) {
            let all = interaction(&[Sync, Stream, Poll, Push], true);
            prop_assert!(check("s", &all, op).is_ok());
            let base = interaction(&modes, cancellable);
            let mut more = modes.clone();
            more.push(extra);
            let wider = interaction(&more, cancellable);
            if check("s", &base, op).is_ok() {
                prop_assert!(check("s", &wider, op).is_ok());
            }
            let back = Operation::from_method(
                op.method(),
                matches!(op, Operation::SendMessage { return_immediately: true, .. }),
                matches!(op, Operation::SendMessage { push_config: true, .. } | Operation::SendStreamingMessage { push_config: true }),
            );
            prop_assert_eq!(back, Some(op));
        }
    }
}
