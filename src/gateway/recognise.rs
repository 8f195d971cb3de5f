//! Whether a Task the gateway no longer remembers is governed, told from what the
//! upstream returns about it — so that a governed Task forgotten by the bounded
//! [`super::tasks::TaskIndex`] (or created before a restart) is still checked on
//! GetTask, ListTasks, CancelTask, SubscribeToTask and a follow-up, and never relayed
//! unchecked (draft "Domain-skill invocation": the same final Task and Artifact
//! requirements apply to task retrieval; "Skill output").
//!
//! The gateway forwards a Message as a skill invocation only when its Data Part is a
//! skill request object naming an advertised skill, so the upstream's history of a
//! governed Task holds that request; and whatever a caller could read as a governed
//! output carries the draft's marks: a primary result Artifact is named after the skill,
//! a supporting record after a record kind, a Message reporting a condition holds an
//! `{"error": …}` Data Part (read as every side reads it,
//! [`crate::interface::task_rules::reports_condition`]), and Messages about a request
//! object list the extension. A Task is:
//!
//! - [`Kind::Governed`] when its history has a user Message requesting an advertised
//!   skill, or else when an Artifact is named after an advertised skill: it is checked
//!   as that skill's Task;
//! - [`Kind::Base`] when its history is present and nothing in it bears a mark: it is
//!   relayed unchanged, as any base Task;
//! - [`Kind::Uncheckable`] otherwise — a mark without a skill the bundle still has (a
//!   skill removed by a reload, a record kind, an error object, the extension), or no
//!   history to tell by: it is shown [`withheld`], its state only, and takes no further
//!   Message. Refusing what can no longer be checked costs a base Task of an upstream
//!   that keeps no history its content, never the caller its guarantee.

use super::view;
use crate::agent::Bundle;
use crate::interface::task_rules;
use a2a_types::{Message, PartContent, Role, Task, TaskStatus};

/// What a Task is, as far as the upstream's answer tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A base A2A Task: relayed unchanged.
    Base,
    /// A Task of this governed skill (advertised by the bundle).
    Governed(String),
    /// Possibly governed, and not checkable with the bundle served: withheld.
    Uncheckable,
}

/// The status text of a Task the gateway can no longer check.
pub const UNCHECKABLE: &str =
    "this gateway can no longer check this task: its content is not shown";

fn lists_extension(extensions: Option<&Vec<String>>) -> bool {
    extensions
        .into_iter()
        .flatten()
        .any(|u| u == crate::card::a2a::EXTENSION_URI)
}

/// Whether `message` reports one of the draft's conditions (well placed or not).
fn reports_condition(message: &Message) -> bool {
    task_rules::reports_condition(&view::data_of(&message.parts))
}

/// Whether `name` is a supporting-record kind of any skill of `bundle`.
fn is_record_kind(bundle: &Bundle, name: &str) -> bool {
    bundle.skill_ids().any(|skill| {
        bundle
            .document(skill)
            .is_some_and(|d| d.record(name).is_some())
    })
}

/// What `task` is (see the module documentation). `task` should carry its whole
/// history: the upstream is asked without a history length.
pub fn recognise(bundle: &Bundle, task: &Task) -> Kind {
    let history = task.history.as_deref().unwrap_or_default();
    let mut marked = false;
    for message in history {
        marked |= lists_extension(message.extensions.as_ref());
        if message.role != Role::User {
            marked |= reports_condition(message);
            continue;
        }
        for part in &message.parts {
            if let PartContent::Data(v) = &part.content {
                if let Some(skill) = bundle.invoked_skill(v) {
                    return Kind::Governed(skill.to_string());
                }
                // A skill request object naming a skill the bundle no longer has, or
                // describe_skill (answered by the gateway, never forwarded).
                marked |= v.as_object().is_some_and(|o| o.contains_key("skill"));
            }
        }
    }
    for artifact in task.artifacts.iter().flatten() {
        if let Some(name) = artifact.name.as_deref() {
            if name != crate::interface::DESCRIBE_SKILL && bundle.document(name).is_some() {
                return Kind::Governed(name.to_string());
            }
            marked |= name == crate::interface::DESCRIBE_SKILL || is_record_kind(bundle, name);
        }
        marked |= lists_extension(artifact.extensions.as_ref());
    }
    if let Some(message) = &task.status.message {
        marked |= lists_extension(message.extensions.as_ref()) || reports_condition(message);
    }
    if marked || history.is_empty() {
        Kind::Uncheckable
    } else {
        Kind::Base
    }
}

/// `task` as shown when it cannot be checked: its ids and state, with a fixed text;
/// no Artifact, history, metadata or upstream words.
pub fn withheld(task: &Task) -> Task {
    Task {
        id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: TaskStatus {
            state: task.status.state.clone(),
            message: Some(view::text_message(UNCHECKABLE, &task.id, &task.context_id)),
            timestamp: task.status.timestamp,
        },
        artifacts: None,
        history: None,
        metadata: None,
    }
}

/// `task` with at most the `length` most recent Messages of its history, as a caller's
/// `historyLength` asks (unset: all; 0: none).
pub fn trim_history(mut task: Task, length: Option<i32>) -> Task {
    if let Some(n) = length {
        let n = usize::try_from(n.max(0)).unwrap_or(0);
        if n == 0 {
            task.history = None;
        } else if let Some(history) = task.history.as_mut() {
            let drop = history.len().saturating_sub(n);
            history.drain(..drop);
        }
    }
    task
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_types::{Artifact, Part, TaskState};
    use serde_json::json;

    fn bundle() -> &'static Bundle {
        crate::agent::tests_support::example_bundle()
    }

    fn skill() -> String {
        bundle().skill_ids().next().unwrap().to_string()
    }

    fn task(history: Option<Vec<Message>>, artifacts: Vec<Artifact>) -> Task {
        Task {
            id: "t".into(),
            context_id: "c".into(),
            status: view::status(TaskState::Completed, None),
            artifacts: (!artifacts.is_empty()).then_some(artifacts),
            history,
            metadata: None,
        }
    }

    fn user(data: serde_json::Value) -> Message {
        Message::new(Role::User, vec![Part::data(data)])
    }

    fn artifact(name: &str) -> Artifact {
        Artifact {
            artifact_id: "a".into(),
            name: Some(name.into()),
            description: None,
            parts: vec![Part::data(json!({"x": 1}))],
            metadata: None,
            extensions: None,
        }
    }

    #[test]
    fn a_request_in_the_history_or_a_result_artifact_names_the_skill() {
        let s = skill();
        let t = task(
            Some(vec![user(json!({"skill": s, "arguments": {}}))]),
            vec![],
        );
        assert_eq!(recognise(bundle(), &t), Kind::Governed(s.clone()));
        let t = task(None, vec![artifact(&s)]);
        assert_eq!(recognise(bundle(), &t), Kind::Governed(s));
    }

    #[test]
    fn a_base_history_is_base_and_no_history_or_a_mark_is_uncheckable() {
        let base = user(json!({"question": "anything"}));
        let t = task(Some(vec![base.clone()]), vec![artifact("answer")]);
        assert_eq!(recognise(bundle(), &t), Kind::Base);
        let t = task(None, vec![artifact("answer")]);
        assert_eq!(recognise(bundle(), &t), Kind::Uncheckable);
        let t = task(
            Some(vec![user(json!({"skill": "gone", "arguments": {}}))]),
            vec![],
        );
        assert_eq!(recognise(bundle(), &t), Kind::Uncheckable);
        let mut marked = base.clone();
        marked.extensions = Some(vec![crate::card::a2a::EXTENSION_URI.to_string()]);
        let t = task(Some(vec![marked]), vec![]);
        assert_eq!(recognise(bundle(), &t), Kind::Uncheckable);
        let mut t = task(Some(vec![base]), vec![]);
        t.status.message = Some(Message::new(
            Role::Agent,
            vec![Part::data(json!({"error": {"code": "output_invalid"}}))],
        ));
        assert_eq!(recognise(bundle(), &t), Kind::Uncheckable);
        // An error object beside another Part reports a condition too (misplaced), as
        // the guard and the client read it; a text reason or other data does not.
        let status = |parts: Vec<Part>| Some(Message::new(Role::Agent, parts));
        t.status.message = status(vec![
            Part::text("failed"),
            Part::data(json!({"error": {"code": "output_invalid"}})),
        ]);
        assert_eq!(recognise(bundle(), &t), Kind::Uncheckable);
        for parts in [
            vec![Part::text("failed")],
            vec![Part::data(json!({"reason": 1}))],
        ] {
            t.status.message = status(parts);
            assert_eq!(recognise(bundle(), &t), Kind::Base);
        }
    }

    #[test]
    fn withheld_keeps_only_ids_and_state_and_history_is_trimmed_from_the_oldest() {
        let s = skill();
        let mut t = task(
            Some(vec![user(json!({"n": 1})), user(json!({"n": 2}))]),
            vec![artifact(&s)],
        );
        t.metadata = Some(Default::default());
        let w = withheld(&t);
        assert!(w.artifacts.is_none() && w.history.is_none() && w.metadata.is_none());
        assert_eq!(w.status.state, TaskState::Completed);
        let kept = trim_history(t.clone(), Some(1));
        assert_eq!(kept.history.as_ref().unwrap().len(), 1);
        assert_eq!(
            kept.history.unwrap()[0].parts[0].content,
            PartContent::Data(json!({"n": 2}))
        );
        assert!(trim_history(t.clone(), Some(0)).history.is_none());
        assert_eq!(trim_history(t, None).history.unwrap().len(), 2);
    }
}
