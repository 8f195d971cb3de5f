//! What a caller of the gateway may see of one upstream Task of a schema-governed skill:
//! the upstream's events and Tasks passed through the library's [`TaskGuard`], the one
//! rule set every executor applies (draft: "Skill output", "Supporting-record schemas",
//! "Machine-readable error conditions"; [`crate::agent::task`]).
//!
//! The upstream knows nothing of the bundle, so everything it sends is held to the
//! guard's verdicts: a complete supporting record is checked and shown at once, the
//! primary result is held until the completing status and shown only when the whole Task
//! conforms, and anything invalid turns the Task `TASK_STATE_FAILED` with the draft's
//! error object, nothing invalid shown. The same [`TaskView`] serves a stream (event by
//! event) and a whole Task (SendMessage, GetTask, ListTasks, CancelTask: its Artifacts and
//! status fed as events, in order), so every path shows the same Task. Chunks are
//! assembled as the guard reads them ([`TaskGuard::update_of`], the shared
//! [`task_rules::artifact_update`]), so what is shown is what the guard checked.

use crate::agent::task::{Limits, State, TaskGuard, Verdict};
use crate::agent::Bundle;
use crate::interface::condition::ErrorObject;
use crate::interface::task_rules::{self, Update};
use a2a_types::{
    Artifact, Message, Part, PartContent, Role, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use serde_json::Value;
use std::collections::HashMap;

/// The status text of a Task the upstream could not finish within the gateway's limits
/// (or answered outside A2A): fixed, nothing of the upstream's own words.
pub const UPSTREAM_FAILURE: &str = "the agent failed while processing this request";

/// One Task of one governed skill, as the gateway shows it.
#[derive(Debug)]
pub struct TaskView {
    guard: TaskGuard,
    task_id: String,
    context_id: String,
    /// Artifacts the guard holds, as the upstream sent them (chunks assembled).
    held: HashMap<String, Artifact>,
    /// Artifacts shown so far, in the order they were released.
    shown: Vec<Artifact>,
    /// The last status shown.
    status: Option<TaskStatus>,
}

/// The data of each Part (a Data Part's value, with integral numbers as integers), or
/// `None` for another kind of Part: what the guard reads.
pub fn part_data(parts: &[Part]) -> Vec<Option<Value>> {
    parts
        .iter()
        .map(|p| match &p.content {
            PartContent::Data(v) => Some(integral(v.clone())),
            _ => None,
        })
        .collect()
}

/// The data of each Part, borrowed (`None` for a Part that is not a Data Part): what
/// the shared rule set ([`task_rules`]) reads a status Message by.
pub fn data_of(parts: &[Part]) -> Vec<Option<&Value>> {
    parts
        .iter()
        .map(|p| match &p.content {
            PartContent::Data(v) => Some(v),
            _ => None,
        })
        .collect()
}

/// A JSON value with every number that is a whole double within ±(2^53−1) written as
/// an integer. The SDK reads Data Parts through protobuf's `Value`, which holds every
/// number as a double (`80` arrives as `80.0`); I-JSON makes no difference between the
/// two, and the upstream and the schemas see the integer the caller wrote.
pub fn integral(value: Value) -> Value {
    const MAX: f64 = 9_007_199_254_740_991.0;
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() <= MAX => Value::from(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(a) => Value::Array(a.into_iter().map(integral).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, integral(v))).collect()),
        other => other,
    }
}

/// An agent Message whose single Data Part is `error`, the draft's error object.
pub fn error_message(error: &ErrorObject, task_id: &str, context_id: &str) -> Message {
    let mut message = Message::new(Role::Agent, vec![Part::data(error.to_json())]);
    message.task_id = Some(task_id.to_string());
    message.context_id = Some(context_id.to_string());
    message.extensions = Some(vec![crate::card::a2a::EXTENSION_URI.to_string()]);
    message
}

/// An agent Message of one text Part.
pub fn text_message(text: &str, task_id: &str, context_id: &str) -> Message {
    let mut message = Message::new(Role::Agent, vec![Part::text(text)]);
    message.task_id = Some(task_id.to_string());
    message.context_id = Some(context_id.to_string());
    message
}

/// A status of `state` with `message`, stamped now.
pub fn status(state: TaskState, message: Option<Message>) -> TaskStatus {
    TaskStatus {
        state,
        message,
        timestamp: Some(chrono::Utc::now()),
    }
}

fn wire_state(state: &TaskState) -> &'static str {
    State::from_task_state(state).map_or("TASK_STATE_UNSPECIFIED", State::wire_name)
}

impl TaskView {
    /// A view of the Task `task_id` of `skill_id` (which `bundle` must have).
    pub fn new(
        bundle: &Bundle,
        skill_id: &str,
        limits: Limits,
        task_id: &str,
        context_id: &str,
    ) -> Option<TaskView> {
        Some(TaskView {
            guard: bundle.task_guard(skill_id, limits)?,
            task_id: task_id.to_string(),
            context_id: context_id.to_string(),
            held: HashMap::new(),
            shown: Vec::new(),
            status: None,
        })
    }

    /// The guard failed the Task or saw it end: nothing more is shown.
    pub fn is_finished(&self) -> bool {
        self.guard.is_finished()
    }

    /// The guard failed the Task, with this error object.
    fn failed(&mut self, error: ErrorObject, out: &mut Vec<StreamResponse>) {
        self.held.clear();
        let message = error_message(&error, &self.task_id, &self.context_id);
        self.push_status(status(TaskState::Failed, Some(message)), out);
    }

    fn push_status(&mut self, status: TaskStatus, out: &mut Vec<StreamResponse>) {
        self.status = Some(status.clone());
        out.push(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status,
            metadata: None,
        }));
    }

    /// Do what the guard answered: release Artifacts (whole), or fail the Task.
    fn apply(&mut self, verdict: Verdict, out: &mut Vec<StreamResponse>) -> bool {
        match verdict {
            Verdict::Hold => true,
            Verdict::Fail(error) => {
                self.failed(error, out);
                false
            }
            Verdict::Release(ids) => {
                for id in ids {
                    if let Some(artifact) = self.held.remove(&id) {
                        self.shown.push(artifact.clone());
                        out.push(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                            task_id: self.task_id.clone(),
                            context_id: self.context_id.clone(),
                            artifact,
                            append: Some(false),
                            last_chunk: Some(true),
                            metadata: None,
                        }));
                    }
                }
                true
            }
        }
    }

    /// An Artifact update from the upstream: what may be shown of it now.
    pub fn artifact(
        &mut self,
        bundle: &Bundle,
        artifact: &Artifact,
        append: bool,
        last_chunk: bool,
        out: &mut Vec<StreamResponse>,
    ) {
        if self.guard.is_finished() {
            return;
        }
        let name = artifact.name.as_deref().unwrap_or_default();
        // Assembled as the guard reads the update (one reading of chunks); one it
        // refuses fails the Task, and nothing held is shown.
        match (
            self.guard.update_of(&artifact.artifact_id, name, append),
            self.held.get_mut(&artifact.artifact_id),
        ) {
            (Ok(Update::Append), Some(held)) => held.parts.extend(artifact.parts.iter().cloned()),
            (Ok(_), _) => {
                self.held
                    .insert(artifact.artifact_id.clone(), artifact.clone());
            }
            (Err(_), _) => {}
        }
        let verdict = self.guard.artifact(
            bundle,
            &artifact.artifact_id,
            name,
            part_data(&artifact.parts),
            append,
            last_chunk,
        );
        self.apply(verdict, out);
    }

    /// A status from the upstream: the Artifacts it releases, then the status itself
    /// (or the failure the guard turns it into).
    pub fn status(&mut self, bundle: &Bundle, status: &TaskStatus, out: &mut Vec<StreamResponse>) {
        self.status_of(status, out, |guard, state, parts| {
            Some(guard.status_with_message(bundle, state, parts))
        });
    }

    /// A status the guard reads with `read` (its wire state and its Message's Parts'
    /// data): the Artifacts it releases, then the status as the caller may see it, or
    /// the failure the guard turns it into; nothing when `read` says it is no change.
    fn status_of(
        &mut self,
        status: &TaskStatus,
        out: &mut Vec<StreamResponse>,
        read: impl FnOnce(&mut TaskGuard, &str, &[Option<Value>]) -> Option<Verdict>,
    ) {
        if self.guard.is_finished() {
            return;
        }
        let parts = status
            .message
            .as_ref()
            .map(|m| part_data(&m.parts))
            .unwrap_or_default();
        let Some(verdict) = read(&mut self.guard, wire_state(&status.state), &parts) else {
            return;
        };
        if self.apply(verdict, out) {
            let shown = self.without_upstream_words(status);
            self.push_status(shown, out);
        }
    }

    /// A failed status as the caller may see it: one that reports a condition
    /// ([`task_rules::reports_condition`]; the guard has checked that it carries the
    /// draft's error object, placed as the draft says) stays; anything else in the
    /// upstream's message (an SDK's "Agent execution error: …" with an exception's text,
    /// a stack trace) is the upstream's own words about its failure and becomes the
    /// fixed text.
    fn without_upstream_words(&self, upstream: &TaskStatus) -> TaskStatus {
        let mut shown = upstream.clone();
        if shown.state != TaskState::Failed {
            return shown;
        }
        let reports = shown
            .message
            .as_ref()
            .is_some_and(|m| task_rules::reports_condition(&data_of(&m.parts)));
        if !reports {
            shown.message = Some(text_message(
                UPSTREAM_FAILURE,
                &self.task_id,
                &self.context_id,
            ));
        }
        shown
    }

    /// A bare Message from the upstream: a skill invocation must end in a Task with a
    /// result Artifact, so the Task fails.
    pub fn message(&mut self, bundle: &Bundle, out: &mut Vec<StreamResponse>) {
        let verdict = self.guard.message(bundle);
        self.apply(verdict, out);
    }

    /// A whole Task event: its Artifacts, each complete, then its status, unless it is
    /// the Task as created ([`TaskGuard::task_status`]). An Artifact
    /// already delivered whole (shown, or held whole until completion) is restated by
    /// the snapshot, not updated: it does not change ([`task_rules::artifact_update`]).
    pub fn task(&mut self, bundle: &Bundle, task: &Task, out: &mut Vec<StreamResponse>) {
        for artifact in task.artifacts.iter().flatten() {
            if self.guard.is_whole(&artifact.artifact_id) {
                continue;
            }
            self.artifact(bundle, artifact, false, true, out);
        }
        // The Task as created (SUBMITTED, or no state) is no status change
        // (`TaskGuard::task_status`, as the executor reads a whole Task).
        self.status_of(&task.status, out, |guard, state, parts| {
            guard.task_status(bundle, state, parts)
        });
    }

    /// The upstream's stream ended, or the exchange failed: a Task neither ended nor
    /// waiting for the caller fails, with `verdict`'s error or the fixed text.
    pub fn ended(&mut self, error: Option<ErrorObject>, out: &mut Vec<StreamResponse>) {
        if self.guard.is_finished() {
            return;
        }
        match error {
            Some(error) => {
                self.guard.abort();
                self.failed(error, out);
            }
            None => {
                let verdict = self.guard.returned();
                if matches!(verdict, Verdict::Hold) {
                    return;
                }
                self.guard.abort();
                self.held.clear();
                let message = text_message(UPSTREAM_FAILURE, &self.task_id, &self.context_id);
                self.push_status(status(TaskState::Failed, Some(message)), out);
            }
        }
    }

    /// The upstream failed (unreachable, too slow, too large, not A2A): the Task fails
    /// with the fixed text; nothing held is shown.
    pub fn upstream_failed(&mut self, out: &mut Vec<StreamResponse>) {
        if self.guard.is_finished() {
            return;
        }
        self.guard.abort();
        self.held.clear();
        let message = text_message(UPSTREAM_FAILURE, &self.task_id, &self.context_id);
        self.push_status(status(TaskState::Failed, Some(message)), out);
    }

    /// The Task as shown: what was released, and the last status shown (`upstream`'s
    /// own fields otherwise: ids, history, metadata).
    pub fn shown_task(&self, upstream: &Task) -> Task {
        let mut task = upstream.clone();
        task.artifacts = (!self.shown.is_empty()).then(|| self.shown.clone());
        if let Some(status) = &self.status {
            task.status = status.clone();
        } else {
            task.status.message = None;
        }
        if task.status.state == TaskState::Failed {
            // SDKs move a status's message into the history when the next status comes:
            // the upstream's words about its failure would be read there instead.
            if let Some(history) = task.history.as_mut() {
                history.retain(|m| m.role != Role::Agent);
            }
        }
        task
    }
}

/// A whole upstream Task of `skill_id`, as the gateway shows it (see the module
/// documentation); `None` when `bundle` no longer has the skill (a reload removed it):
/// the Task cannot be checked.
pub fn guard_task(bundle: &Bundle, skill_id: &str, limits: Limits, task: &Task) -> Option<Task> {
    let mut view = TaskView::new(bundle, skill_id, limits, &task.id, &task.context_id)?;
    let mut out = Vec::new();
    view.task(bundle, task, &mut out);
    Some(view.shown_task(task))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What a caller sees of an upstream's failed status: the draft's error object when
    /// it reports a condition as the draft says; the fixed text for a failure that
    /// reports none (the upstream's own words); and for a misplaced error object, the
    /// guard's failure (`output_invalid`), never the upstream's Parts.
    #[test]
    fn a_failed_status_shows_its_condition_or_the_fixed_text() {
        let bundle = crate::agent::tests_support::example_bundle();
        let skill = bundle.skill_ids().next().unwrap().to_string();
        let shown = |parts: Vec<Part>| {
            let mut view = TaskView::new(bundle, &skill, Limits::default(), "t", "c").unwrap();
            let mut out = Vec::new();
            let upstream = status(TaskState::Failed, Some(Message::new(Role::Agent, parts)));
            view.status(bundle, &upstream, &mut out);
            let Some(StreamResponse::StatusUpdate(last)) = out.pop() else {
                panic!("no status shown")
            };
            assert_eq!(last.status.state, TaskState::Failed);
            last.status.message.unwrap().parts
        };
        let error = json!({"error": {"code": "output_invalid", "message": "m"}});
        assert_eq!(
            shown(vec![Part::data(error.clone())]),
            vec![Part::data(error.clone())]
        );
        for words in [
            vec![Part::text("Agent execution error: /secret/path")],
            vec![Part::data(json!({"trace": "secret"}))],
        ] {
            assert_eq!(shown(words), vec![Part::text(UPSTREAM_FAILURE)]);
        }
        let misplaced = shown(vec![Part::data(error), Part::text("secret")]);
        let [Part {
            content: PartContent::Data(data),
            ..
        }] = misplaced.as_slice()
        else {
            panic!("{misplaced:?}")
        };
        assert_eq!(data["error"]["code"], "output_invalid");
        assert!(!data.to_string().contains("secret"));
    }

    const SKILL: &str = "evaluate_resource_condition";

    fn chunk(id: &str, name: Option<&str>, parts: Vec<Part>) -> Artifact {
        Artifact {
            artifact_id: id.into(),
            name: name.map(Into::into),
            description: None,
            parts,
            metadata: None,
            extensions: None,
        }
    }

    fn result_part() -> Part {
        Part::data(json!({"skill": SKILL, "result": {"result": "condition_met",
            "observed_value": 42, "unit": "percent", "supporting_record_refs": ["o-1"]}}))
    }

    /// The view assembles chunks as the guard reads them (`TaskGuard::update_of`): a
    /// name-less append continues the started result under its name, and is shown whole
    /// at completion; a Task snapshot restating the result delivered whole leaves it as
    /// it was; an update of it after its lastChunk fails the Task, nothing shown.
    #[test]
    fn chunks_are_assembled_as_the_guard_reads_them() {
        let bundle = crate::agent::tests_support::example_bundle();
        let completed = status(TaskState::Completed, None);
        let shown_after = |updates: &[(Artifact, bool, bool)], snapshot: Option<Task>| {
            let mut view = TaskView::new(bundle, SKILL, Limits::default(), "t", "c").unwrap();
            let mut out = Vec::new();
            for (artifact, append, last) in updates {
                view.artifact(bundle, artifact, *append, *last, &mut out);
            }
            if let Some(task) = snapshot {
                view.task(bundle, &task, &mut out);
            }
            view.status(bundle, &completed, &mut out);
            // What was shown: the Artifacts, and the last status.
            let mut artifacts = Vec::new();
            let mut last = None;
            for event in out {
                match event {
                    StreamResponse::ArtifactUpdate(e) => artifacts.push(e.artifact),
                    StreamResponse::StatusUpdate(e) => last = Some(e.status),
                    other => panic!("{other:?}"),
                }
            }
            (artifacts, last.unwrap())
        };
        let first = (chunk("r", Some(SKILL), vec![]), false, false);
        let last = (chunk("r", None, vec![result_part()]), true, true);
        let whole = chunk("r", Some(SKILL), vec![result_part()]);
        let restated = Task {
            id: "t".into(),
            context_id: "c".into(),
            status: status(TaskState::Working, None),
            artifacts: Some(vec![chunk("r", Some(SKILL), vec![Part::text("other")])]),
            history: None,
            metadata: None,
        };
        for snapshot in [None, Some(restated)] {
            let (artifacts, end) = shown_after(&[first.clone(), last.clone()], snapshot);
            assert_eq!(artifacts, vec![whole.clone()]);
            assert_eq!(end.state, TaskState::Completed);
        }
        for after in [
            (chunk("r", None, vec![Part::text("more")]), true, true),
            (whole.clone(), false, true),
        ] {
            let (artifacts, end) = shown_after(&[first.clone(), last.clone(), after], None);
            assert_eq!((artifacts, &end.state), (vec![], &TaskState::Failed));
            let parts = &end.message.as_ref().unwrap().parts;
            let [Part {
                content: PartContent::Data(data),
                ..
            }] = parts.as_slice()
            else {
                panic!("{parts:?}")
            };
            assert_eq!(
                data["error"]["message"],
                "an Artifact update changes an Artifact already delivered whole (lastChunk)"
            );
        }
    }

    /// A whole Task at SUBMITTED (or with no state) is the Task as created, no status
    /// change: nothing is shown for it and a Task waiting for input still waits; in any
    /// other state its status is shown as an update.
    #[test]
    fn a_snapshot_of_the_task_as_created_changes_no_status() {
        let bundle = crate::agent::tests_support::example_bundle();
        let snapshot = |state| Task {
            id: "t".into(),
            context_id: "c".into(),
            status: status(state, None),
            artifacts: None,
            history: None,
            metadata: None,
        };
        let mut view = TaskView::new(bundle, SKILL, Limits::default(), "t", "c").unwrap();
        let mut out = Vec::new();
        view.status(bundle, &status(TaskState::InputRequired, None), &mut out);
        assert_eq!(out.len(), 1);
        for created in [TaskState::Submitted, TaskState::Unspecified] {
            view.task(bundle, &snapshot(created), &mut out);
            assert_eq!(out.len(), 1, "{out:?}");
            assert!(view.guard.state().is_interrupted());
        }
        view.task(bundle, &snapshot(TaskState::Working), &mut out);
        let Some(StreamResponse::StatusUpdate(shown)) = out.last() else {
            panic!("{out:?}")
        };
        assert_eq!(shown.status.state, TaskState::Working);
        assert!(!view.guard.state().is_interrupted());
    }
}
