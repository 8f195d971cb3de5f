//! What a schema-governed Task may publish, and when (draft: "Domain-skill invocation",
//! "Skill output", "Supporting-record schemas", the intermediate-exchange table, and
//! "Machine-readable error conditions").
//!
//! A [`TaskGuard`] stands between a domain executor and everything a client can see of
//! one Task (SendMessage, streaming, resubscription, GetTask, ListTasks all read what
//! passed it). It is fed the executor's events in order — Artifact updates (whole or
//! in chunks), status changes, a bare Message — and answers each with a [`Verdict`]:
//! hold it, release these Artifacts now, or fail the Task with the draft's error object.
//! The rules:
//! - The one **primary result Artifact** is named after the skill and has a single Data
//!   Part holding the skill result object `{"skill": <skill_id>, "result": <output>}`,
//!   whose `result` validates against output_schema. It is held until the completing
//!   status: only then can "exactly one" be decided. A second one fails the Task.
//! - Every other Artifact is a **supporting record**: its name is a declared record kind,
//!   its single Data Part validates against that kind's schema. Each record validates on
//!   its own, so a complete one — an update with `lastChunk` — is checked and released at
//!   once (the draft lets an agent stream complete records before the result and says
//!   early findings SHOULD be published so). An undeclared name fails the Task at once.
//!   Chunks (`append`) are assembled first, as [`task_rules::artifact_update`] reads
//!   them (an append continues a started Artifact of the same name); an incomplete
//!   record is never checked nor shown. An Artifact delivered whole (`lastChunk`), held
//!   or released, does not change afterwards.
//! - **Completion** requires every held record to be valid and exactly one valid primary
//!   result; otherwise nothing held is released and the Task fails with `output_invalid`.
//!   A Task that ends otherwise (failed, canceled, rejected) releases its valid complete
//!   records and never a result. A bare Message cannot carry a result: the Task fails.
//!   An executor that returns with its Task neither finished nor waiting for input has
//!   produced no result: the Task fails.
//! - **Limits**: at most [`Limits::max_records`] supporting records per Task and
//!   [`Limits::max_artifact_bytes`] of data per Artifact (its Data Parts as JSON);
//!   beyond either, the Task fails with `resource_limit_exceeded`.
//! - Once failed, the guard is finished: nothing more of the Task is published.
//!
//! What a whole Artifact, a completed Task's Artifacts and a final status may hold is
//! decided in [`crate::interface::task_rules`], the rule set the client's reading of a
//! final Task (`client::final_task`) applies too; this guard adds what only an
//! executor's event stream raises: when to hold and release, chunks, limits, and
//! Artifacts changed after they were published.

use crate::agent::Bundle;
use crate::interface::condition::{Condition, Detected, ErrorObject};
use crate::interface::task_rules::{self, ArtifactView, Fault, OutputSchemas, Started, Update};
use serde_json::Value;
use std::collections::HashMap;

pub use crate::interface::task_rules::{State, RESULT_OBJECT_RESULT, RESULT_OBJECT_SKILL};

/// The per-Task limits of the rule set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Supporting-record Artifacts per Task.
    pub max_records: usize,
    /// Bytes of one Artifact's data, measured as compact JSON over all its Data Parts
    /// (strings counted by their UTF-8 length, unescaped).
    pub max_artifact_bytes: usize,
}

impl Limits {
    /// 1,000 records per Task.
    pub const DEFAULT_MAX_RECORDS: usize = 1_000;
    /// 4 MiB per Artifact.
    pub const DEFAULT_MAX_ARTIFACT_BYTES: usize = 4 << 20;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_records: Self::DEFAULT_MAX_RECORDS,
            max_artifact_bytes: Self::DEFAULT_MAX_ARTIFACT_BYTES,
        }
    }
}

/// The answer to one event.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Publish nothing yet.
    Hold,
    /// Publish these Artifacts (by artifactId, whole, in this order) — then, for a
    /// status change, the status itself.
    Release(Vec<String>),
    /// Publish nothing more: the Task fails (`TASK_STATE_FAILED`) with this error object
    /// as its final status Message's single Data Part.
    Fail(ErrorObject),
}

#[derive(Debug)]
struct Held {
    name: String,
    /// The assembled Parts: the data of each Data Part, `None` for any other Part.
    parts: Vec<Option<Value>>,
    bytes: usize,
    /// A chunk with `lastChunk` arrived: the Artifact is whole.
    complete: bool,
}

/// The rule set for one Task of one schema-governed skill (see the module documentation).
#[derive(Debug)]
pub struct TaskGuard {
    skill_id: String,
    limits: Limits,
    /// Held Artifacts, by artifactId, and their arrival order.
    held: HashMap<String, Held>,
    order: Vec<String>,
    /// Artifacts already published (records released early, or found in the stored Task).
    published: HashMap<String, String>,
    records: usize,
    state: State,
    finished: bool,
}

impl Bundle {
    /// A guard for a new Task of `skill_id` (which the bundle must have).
    pub fn task_guard(&self, skill_id: &str, limits: Limits) -> Option<TaskGuard> {
        self.document(skill_id)?;
        Some(TaskGuard {
            skill_id: skill_id.to_string(),
            limits,
            held: HashMap::new(),
            order: Vec::new(),
            published: HashMap::new(),
            records: 0,
            state: State::Submitted,
            finished: false,
        })
    }
}

fn failure(code: Condition, message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(code, Detected::DuringProcessing, message)
}

/// The error object a guard fails its Task with for a broken requirement.
fn broken(fault: Fault) -> ErrorObject {
    fault.error(Detected::DuringProcessing)
}

/// One skill's output schemas as a loaded bundle holds them: what the shared rule set
/// ([`task_rules`]) checks a Task's Artifacts with.
struct SkillOutput<'b> {
    bundle: &'b Bundle,
    skill_id: &'b str,
}

impl OutputSchemas for SkillOutput<'_> {
    fn skill_id(&self) -> &str {
        self.skill_id
    }

    fn record_kinds(&self) -> Vec<&str> {
        self.bundle
            .document(self.skill_id)
            .map(|d| {
                d.records()
                    .iter()
                    .filter_map(|r| r.kind.as_deref())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn check_result(&self, result: &Value) -> Result<(), ErrorObject> {
        self.bundle.check_result(self.skill_id, result)
    }

    fn check_record(&self, kind: &str, record: &Value) -> Result<(), ErrorObject> {
        self.bundle.check_record(self.skill_id, kind, record)
    }
}

impl Held {
    /// The data of each assembled Part, as the rule set reads Parts.
    fn parts(&self) -> Vec<Option<&Value>> {
        self.parts.iter().map(Option::as_ref).collect()
    }
}

/// Compact-JSON length of a value, without writing it.
fn json_len(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => s.len() + 2,
        Value::Array(a) => 2 + a.iter().map(json_len).sum::<usize>() + a.len().saturating_sub(1),
        Value::Object(o) => {
            2 + o
                .iter()
                .map(|(k, v)| k.len() + 3 + json_len(v))
                .sum::<usize>()
                + o.len().saturating_sub(1)
        }
    }
}

impl TaskGuard {
    /// The skill this Task invokes.
    pub fn skill_id(&self) -> &str {
        &self.skill_id
    }

    /// The name of the Task's primary result Artifact: the skill identifier (draft:
    /// "Domain-skill invocation").
    pub fn result_artifact_name(&self) -> &str {
        &self.skill_id
    }

    /// The skill result object `{"skill": <skill_id>, "result": <output>}`: the data of
    /// the primary result Artifact's single Data Part.
    pub fn result_object(&self, output: Value) -> Value {
        task_rules::result_object(&self.skill_id, output)
    }

    fn schemas<'b>(&'b self, bundle: &'b Bundle) -> SkillOutput<'b> {
        SkillOutput {
            bundle,
            skill_id: &self.skill_id,
        }
    }

    /// The guard failed the Task, or saw it end: nothing more is published.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The last state the guard let through.
    pub fn state(&self) -> State {
        self.state
    }

    /// An Artifact the stored Task already shows (a guard rebuilt for a follow-up after
    /// its first guard was lost): it counts as published.
    pub fn adopt(&mut self, artifact_id: &str, name: &str) {
        if name != self.skill_id && !self.published.contains_key(artifact_id) {
            self.records += 1;
        }
        self.published
            .insert(artifact_id.to_string(), name.to_string());
    }

    /// The Task's current state, when rebuilt from a stored Task.
    pub fn set_state(&mut self, state: State) {
        self.state = state;
    }

    fn fail(&mut self, error: ErrorObject) -> Verdict {
        self.finished = true;
        self.held.clear();
        self.order.clear();
        Verdict::Fail(error)
    }

    /// The Artifact of `artifact_id` this Task delivered so far, if any: one published
    /// (released, or adopted from the stored Task) is whole; one held is whole once a
    /// chunk with `lastChunk` arrived.
    fn started(&self, artifact_id: &str) -> Option<Started<'_>> {
        if let Some(name) = self.published.get(artifact_id) {
            return Some(Started {
                name,
                complete: true,
            });
        }
        self.held.get(artifact_id).map(|h| Started {
            name: &h.name,
            complete: h.complete,
        })
    }

    /// How an Artifact update of `artifact_id` named `name` (`""` for none) applies to
    /// what this Task delivered so far ([`task_rules::artifact_update`]): what
    /// [`TaskGuard::artifact`] does with it, for a caller that assembles the updates it
    /// passes on (the gateway) to assemble them alike. A fault is what `artifact` fails
    /// the Task for.
    pub fn update_of(&self, artifact_id: &str, name: &str, append: bool) -> Result<Update, Fault> {
        task_rules::artifact_update(self.started(artifact_id), Some(name), append)
    }

    /// Whether the Artifact of `artifact_id` was delivered whole (a chunk with
    /// `lastChunk`, or published): no update may change it.
    pub fn is_whole(&self, artifact_id: &str) -> bool {
        self.started(artifact_id).is_some_and(|s| s.complete)
    }

    /// An Artifact update: `parts` are its Parts (the data of each Data Part, `None` for
    /// another kind), `append` and `last_chunk` the A2A update flags.
    pub fn artifact(
        &mut self,
        bundle: &Bundle,
        artifact_id: &str,
        name: &str,
        parts: Vec<Option<Value>>,
        append: bool,
        last_chunk: bool,
    ) -> Verdict {
        if self.finished {
            return Verdict::Hold;
        }
        let update = match self.update_of(artifact_id, name, append) {
            Ok(update) => update,
            Err(fault) => return self.fail(broken(fault)),
        };
        let bytes: usize = parts.iter().flatten().map(json_len).sum();
        let primary = name == self.skill_id;
        match self.held.get_mut(artifact_id) {
            Some(held) if update == Update::Append => {
                held.parts.extend(parts);
                held.bytes += bytes;
                held.complete = last_chunk;
            }
            existing => {
                if existing.is_none() && !primary {
                    // A new record Artifact: its kind must be declared, whatever follows.
                    let schemas = SkillOutput {
                        bundle,
                        skill_id: &self.skill_id,
                    };
                    if let Err(fault) = task_rules::artifact_role(&schemas, Some(name)) {
                        return self.fail(broken(fault));
                    }
                    self.records += 1;
                    if self.records > self.limits.max_records {
                        let max = self.limits.max_records;
                        return self.fail(failure(
                            Condition::ResourceLimitExceeded,
                            format!("the Task publishes more than {max} supporting records, this agent's limit"),
                        ));
                    }
                }
                if existing.is_none() {
                    self.order.push(artifact_id.to_string());
                }
                self.held.insert(
                    artifact_id.to_string(),
                    Held {
                        name: name.to_string(),
                        parts,
                        bytes,
                        complete: last_chunk,
                    },
                );
            }
        }
        let held = &self.held[artifact_id];
        if held.bytes > self.limits.max_artifact_bytes {
            let max = self.limits.max_artifact_bytes;
            return self.fail(failure(
                Condition::ResourceLimitExceeded,
                format!("an Artifact holds more than {max} bytes of data, this agent's limit"),
            ));
        }
        if held.name == self.skill_id || !held.complete {
            return Verdict::Hold;
        }
        // A complete record: checked and released on its own.
        if let Err(e) = self.check_held(bundle, artifact_id) {
            return self.fail(e);
        }
        let held = self.held.remove(artifact_id).expect("checked above");
        self.order.retain(|id| id != artifact_id);
        self.published.insert(artifact_id.to_string(), held.name);
        Verdict::Release(vec![artifact_id.to_string()])
    }

    /// The shared rule set on one held Artifact, whole.
    fn check_held(&self, bundle: &Bundle, artifact_id: &str) -> Result<(), ErrorObject> {
        let held = &self.held[artifact_id];
        task_rules::check_artifact(&self.schemas(bundle), Some(&held.name), &held.parts())
            .map(drop)
            .map_err(broken)
    }

    /// A status change to `state` (its wire name; an unknown name is treated as working).
    /// Completion checks everything held; a Task that ends otherwise releases only its
    /// complete records that validate, and never a result.
    pub fn status(&mut self, bundle: &Bundle, state: &str) -> Verdict {
        if self.finished {
            return Verdict::Hold;
        }
        let state = State::from_wire(state).unwrap_or(State::Working);
        let release = match state {
            State::Completed => {
                // Everything the Task holds: what was published (checked then), and what
                // is held, in arrival order.
                let mut artifacts: Vec<ArtifactView> = self
                    .published
                    .values()
                    .map(|name| ArtifactView {
                        name: Some(name),
                        parts: None,
                    })
                    .collect();
                artifacts.extend(self.order.iter().map(|id| ArtifactView {
                    name: Some(&self.held[id].name),
                    parts: Some(self.held[id].parts()),
                }));
                let checked = task_rules::completed_artifacts(&self.schemas(bundle), &artifacts);
                if let Err(fault) = checked {
                    return self.fail(broken(fault));
                }
                std::mem::take(&mut self.order)
            }
            State::Failed | State::Canceled | State::Rejected => {
                let order = std::mem::take(&mut self.order);
                order
                    .into_iter()
                    .filter(|id| {
                        let h = &self.held[id];
                        h.complete && h.name != self.skill_id && self.check_held(bundle, id).is_ok()
                    })
                    .collect()
            }
            State::InputRequired | State::AuthRequired | State::Submitted | State::Working => {
                self.state = state;
                return Verdict::Release(Vec::new());
            }
        };
        for id in &release {
            if let Some(h) = self.held.remove(id) {
                self.published.insert(id.clone(), h.name);
            }
        }
        self.held.clear();
        self.state = state;
        self.finished = true;
        Verdict::Release(release)
    }

    /// A status change to `state` whose status Message has `parts` (the data of each
    /// Data Part, `None` for another kind). A Task that fails or is rejected and reports
    /// an error object (a Data Part with an `error` member) must report the draft's: one
    /// Data Part `{"error": {"code", "message"?, "details"?}}` whose condition leads to
    /// this state (`constraint_rejected` rejects, `output_invalid` fails, ...). Otherwise
    /// the Task fails with `output_invalid` instead. Then as [`TaskGuard::status`].
    pub fn status_with_message(
        &mut self,
        bundle: &Bundle,
        state: &str,
        parts: &[Option<Value>],
    ) -> Verdict {
        if self.finished {
            return Verdict::Hold;
        }
        if let Some(state) = State::from_wire(state) {
            let parts: Vec<Option<&Value>> = parts.iter().map(Option::as_ref).collect();
            if let Err(fault) = task_rules::status_error(state, &parts) {
                return self.fail(broken(fault));
            }
        }
        self.status(bundle, state)
    }

    /// The status of a whole `Task` the executor publishes (A2A 1.0 lets an executor
    /// publish the Task object itself, not only updates to it): the Task as it stands.
    /// `TASK_STATE_SUBMITTED`, or no state at all (`TASK_STATE_UNSPECIFIED`), is the Task
    /// as it was created, not a status change: `None`, nothing to publish and the
    /// guard's state unchanged. Any other state is a status update, as
    /// [`TaskGuard::status_with_message`] decides it. (Its Artifacts are updates each,
    /// given to [`TaskGuard::artifact`] first.)
    pub fn task_status(
        &mut self,
        bundle: &Bundle,
        state: &str,
        parts: &[Option<Value>],
    ) -> Option<Verdict> {
        if state == task_rules::UNSPECIFIED_STATE
            || State::from_wire(state) == Some(State::Submitted)
        {
            return None;
        }
        Some(self.status_with_message(bundle, state, parts))
    }

    /// The executor answered with a bare Message: a skill invocation must end in a Task
    /// with a result Artifact, so the Task fails.
    pub fn message(&mut self, bundle: &Bundle) -> Verdict {
        if self.finished {
            return Verdict::Hold;
        }
        let error = bundle
            .check_result_object(&self.skill_id, None)
            .expect_err("no result object is never a valid result");
        self.fail(error)
    }

    /// The executor returned. A Task neither ended nor waiting for the caller has no
    /// result and never will: it fails.
    pub fn returned(&mut self) -> Verdict {
        if self.finished || self.state.is_interrupted() {
            return Verdict::Hold;
        }
        self.fail(failure(
            Condition::OutputInvalid,
            "the skill's processing ended without completing the Task: no result was produced",
        ))
    }

    /// The Task fails for a reason of the agent's own (an exception in the domain code):
    /// nothing more is published. The caller writes its fixed failure status.
    pub fn abort(&mut self) {
        self.finished = true;
        self.held.clear();
        self.order.clear();
    }

    /// The domain code published, past the executor's checks (an SDK's own publishing
    /// helpers), a value the SDK's message types refused to hold for its nesting; `why`
    /// says what it holds (e.g. "values nested deeper than N levels"). The draft's
    /// condition for a value no Data Part can carry is `resource_limit_exceeded`: the
    /// Task fails with it, and nothing more is published. [`Verdict::Hold`] when the Task
    /// had already ended.
    pub fn uncarried(&mut self, why: &str) -> Verdict {
        if self.finished {
            return Verdict::Hold;
        }
        self.abort();
        Verdict::Fail(ErrorObject::not_ijson(
            Condition::OutputInvalid,
            Detected::DuringProcessing,
            true,
            format!("a value the agent published cannot be carried by a Data Part: it holds {why}"),
            None,
        ))
    }
}

/// The verdict for an Artifact whose data is not I-JSON (`why`, at `pointer` within the
/// offending Part's data): the Task fails with `output_invalid`
/// (`resource_limit_exceeded` when nested too deep).
pub fn output_not_ijson(pointer: String, why: &str, too_deep: bool) -> Verdict {
    Verdict::Fail(ErrorObject::not_ijson(
        Condition::OutputInvalid,
        Detected::DuringProcessing,
        too_deep,
        format!("an Artifact's data is not I-JSON: it holds {why}"),
        Some(pointer),
    ))
}

impl Bundle {
    /// Check the data of a primary result Artifact's single Data Part (`None` when the
    /// Artifact has no single Data Part, or there is none): the skill result object
    /// `{"skill": skill_id, "result": <output>}` whose `result` validates against
    /// output_schema. Any failure is `output_invalid`.
    pub fn check_result_object(
        &self,
        skill_id: &str,
        data: Option<&Value>,
    ) -> Result<(), ErrorObject> {
        let schemas = SkillOutput {
            bundle: self,
            skill_id,
        };
        match data {
            Some(object) => task_rules::check_result_object(&schemas, object).map(drop),
            None => task_rules::primary_count(skill_id, 0),
        }
        .map_err(broken)
    }

    /// The domain skill a Task invokes, from the data of its first Message's Data Part:
    /// the advertised skill its skill request object names, unless that is
    /// describe_skill (a describe_skill Task invokes no schema-governed skill).
    pub fn invoked_skill<'a>(&self, data: &'a Value) -> Option<&'a str> {
        self.requested_skill(data)
            .filter(|skill| *skill != crate::interface::DESCRIBE_SKILL)
    }

    /// A domain refusal the draft defines for a request the domain logic will not carry
    /// out: `constraint_rejected` or `authorization_failed` (`TASK_STATE_REJECTED`), or
    /// `resource_limit_exceeded` met while processing (`TASK_STATE_FAILED`). Any other
    /// condition is not the domain code's to report: `None`.
    pub fn domain_refusal(&self, code: Condition, message: &str) -> Option<ErrorObject> {
        let detected = match code {
            Condition::ConstraintRejected | Condition::AuthorizationFailed => {
                Detected::BeforeAcceptance
            }
            Condition::ResourceLimitExceeded => Detected::DuringProcessing,
            _ => return None,
        };
        Some(ErrorObject::new(code, detected, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tests_support::example_bundle;
    use serde_json::json;

    const SKILL: &str = "evaluate_resource_condition";
    const KIND: &str = "resource-observation";

    fn result(r: &str) -> Value {
        json!({"skill": SKILL, "result": {"result": r, "observed_value": 42, "unit": "percent", "supporting_record_refs": ["o-1"]}})
    }

    fn record() -> Value {
        json!({"record_id": "o-1", "resource_id": "r", "metric": "utilization", "value": 42, "unit": "percent", "observed_at": "2026-08-11T12:00:01Z"})
    }

    fn guard() -> TaskGuard {
        example_bundle()
            .task_guard(SKILL, Limits::default())
            .unwrap()
    }

    fn code(v: Verdict) -> Condition {
        match v {
            Verdict::Fail(e) => e.code(),
            other => panic!("not a failure: {other:?}"),
        }
    }

    #[test]
    fn a_valid_task_releases_its_result_with_the_completion() {
        let b = example_bundle();
        let mut g = guard();
        assert_eq!(
            g.artifact(
                b,
                "r-1",
                SKILL,
                vec![Some(result("condition_met"))],
                false,
                false
            ),
            Verdict::Hold
        );
        assert_eq!(
            g.status(b, "TASK_STATE_COMPLETED"),
            Verdict::Release(vec!["r-1".into()])
        );
        assert!(g.is_finished());
    }

    /// A value the SDK could not hold fails the Task with resource_limit_exceeded, drops
    /// what was held, and counts once: after the Task ended nothing more is decided.
    #[test]
    fn an_uncarried_value_fails_the_task_with_resource_limit_exceeded_once() {
        let b = example_bundle();
        let mut g = guard();
        let held = vec![Some(result("condition_met"))];
        assert_eq!(
            g.artifact(b, "r-1", SKILL, held, false, false),
            Verdict::Hold
        );
        let Verdict::Fail(error) = g.uncarried("values nested deeper than 32 levels") else {
            panic!("not a failure");
        };
        assert_eq!(error.code(), Condition::ResourceLimitExceeded);
        assert!(error.message().contains("deeper than 32 levels"));
        assert!(g.is_finished());
        assert_eq!(g.status(b, "TASK_STATE_COMPLETED"), Verdict::Hold);
        assert_eq!(
            g.uncarried("values nested deeper than 32 levels"),
            Verdict::Hold
        );
    }

    /// A whole Task published as created changes no status; in any other state its
    /// status is an update like any other, checked alike.
    #[test]
    fn a_whole_tasks_status_is_an_update_unless_it_is_the_task_as_created() {
        let b = example_bundle();
        let mut g = guard();
        assert_eq!(
            g.status(b, "TASK_STATE_INPUT_REQUIRED"),
            Verdict::Release(vec![])
        );
        for created in ["TASK_STATE_SUBMITTED", task_rules::UNSPECIFIED_STATE] {
            assert_eq!(g.task_status(b, created, &[]), None);
            assert!(g.state().is_interrupted(), "{created} left the state alone");
        }
        assert_eq!(
            g.task_status(b, "TASK_STATE_WORKING", &[]),
            Some(Verdict::Release(vec![]))
        );
        assert!(!g.state().is_interrupted());
        // A completion without a result fails the Task, whichever way it is published.
        assert_eq!(
            g.task_status(b, "TASK_STATE_COMPLETED", &[]).map(code),
            Some(Condition::OutputInvalid)
        );
    }

    #[test]
    fn complete_records_are_released_at_once() {
        let b = example_bundle();
        let mut g = guard();
        assert_eq!(
            g.artifact(b, "o-1", KIND, vec![Some(record())], false, true),
            Verdict::Release(vec!["o-1".into()])
        );
        // Without lastChunk a record may still grow: held.
        assert_eq!(
            g.artifact(b, "o-2", KIND, vec![Some(record())], false, false),
            Verdict::Hold
        );
        g.artifact(
            b,
            "r-1",
            SKILL,
            vec![Some(result("condition_met"))],
            false,
            true,
        );
        assert_eq!(
            g.status(b, "TASK_STATE_COMPLETED"),
            Verdict::Release(vec!["o-2".into(), "r-1".into()])
        );
    }

    #[test]
    fn every_kind_of_bad_output_fails_the_task() {
        let b = example_bundle();
        // Two primary results, both valid.
        let mut g = guard();
        g.artifact(
            b,
            "a",
            SKILL,
            vec![Some(result("condition_met"))],
            false,
            true,
        );
        g.artifact(
            b,
            "b",
            SKILL,
            vec![Some(result("condition_not_met"))],
            false,
            true,
        );
        assert_eq!(
            code(g.status(b, "TASK_STATE_COMPLETED")),
            Condition::OutputInvalid
        );
        // A result out of the enum.
        let mut g = guard();
        g.artifact(b, "a", SKILL, vec![Some(result("maybe"))], false, true);
        let Verdict::Fail(e) = g.status(b, "TASK_STATE_COMPLETED") else {
            panic!()
        };
        assert_eq!(e.details()[0].instance_path, "/result");
        // No result at all.
        assert_eq!(
            code(guard().status(b, "TASK_STATE_COMPLETED")),
            Condition::OutputInvalid
        );
        // An undeclared kind, at once.
        assert_eq!(
            code(guard().artifact(b, "x", "diary", vec![Some(json!({}))], false, false)),
            Condition::OutputInvalid
        );
        // An invalid record, at once when complete.
        assert_eq!(
            code(guard().artifact(b, "x", KIND, vec![Some(json!({}))], false, true)),
            Condition::OutputInvalid
        );
        // A result with a text Part beside its Data Part.
        let mut g = guard();
        g.artifact(
            b,
            "a",
            SKILL,
            vec![Some(result("condition_met")), None],
            false,
            true,
        );
        assert_eq!(
            code(g.status(b, "TASK_STATE_COMPLETED")),
            Condition::OutputInvalid
        );
        // A bare Message, and a return without an end.
        assert_eq!(code(guard().message(b)), Condition::OutputInvalid);
        let mut g = guard();
        g.status(b, "TASK_STATE_WORKING");
        assert_eq!(code(g.returned()), Condition::OutputInvalid);
        // A released record changed afterwards.
        let mut g = guard();
        g.artifact(b, "o", KIND, vec![Some(record())], false, true);
        assert_eq!(
            code(g.artifact(b, "o", KIND, vec![Some(record())], true, true)),
            Condition::OutputInvalid
        );
    }

    #[test]
    fn chunks_are_assembled_before_the_check() {
        let b = example_bundle();
        let mut g = guard();
        // The result's Data Part arrives in the second chunk: the first alone is not checked.
        assert_eq!(
            g.artifact(b, "r", SKILL, vec![], false, false),
            Verdict::Hold
        );
        assert_eq!(
            g.artifact(
                b,
                "r",
                SKILL,
                vec![Some(result("condition_met"))],
                true,
                true
            ),
            Verdict::Hold
        );
        assert_eq!(
            g.status(b, "TASK_STATE_COMPLETED"),
            Verdict::Release(vec!["r".into()])
        );
        // Appending a second Data Part makes it invalid.
        let mut g = guard();
        g.artifact(
            b,
            "r",
            SKILL,
            vec![Some(result("condition_met"))],
            false,
            false,
        );
        g.artifact(
            b,
            "r",
            SKILL,
            vec![Some(result("condition_met"))],
            true,
            true,
        );
        assert_eq!(
            code(g.status(b, "TASK_STATE_COMPLETED")),
            Condition::OutputInvalid
        );
    }

    /// A result delivered whole (`lastChunk`) is held until completion, but no update
    /// changes it meanwhile: neither a chunk appended nor a replacement; a record
    /// delivered whole is released and the same holds. Until then a replacement is
    /// allowed.
    #[test]
    fn an_artifact_delivered_whole_does_not_change_afterwards() {
        let b = example_bundle();
        let met = || vec![Some(result("condition_met"))];
        let whole = "an Artifact update changes an Artifact already delivered whole (lastChunk)";
        for append in [false, true] {
            let mut g = guard();
            assert_eq!(g.artifact(b, "r", SKILL, met(), false, true), Verdict::Hold);
            assert!(g.is_whole("r"));
            let Verdict::Fail(e) = g.artifact(b, "r", "", met(), append, true) else {
                panic!("{append}")
            };
            assert_eq!((e.code(), e.message()), (Condition::OutputInvalid, whole));
            let mut g = guard();
            g.artifact(b, "o", KIND, vec![Some(record())], false, true);
            assert!(g.is_whole("o"));
            let Verdict::Fail(e) = g.artifact(b, "o", KIND, vec![], append, false) else {
                panic!("{append}")
            };
            assert_eq!(e.message(), whole);
        }
        let mut g = guard();
        g.artifact(b, "r", SKILL, vec![Some(result("maybe"))], false, false);
        assert!(!g.is_whole("r"));
        assert_eq!(g.update_of("r", SKILL, false), Ok(Update::Replace));
        g.artifact(b, "r", SKILL, met(), false, true);
        assert_eq!(
            g.status(b, "TASK_STATE_COMPLETED"),
            Verdict::Release(vec!["r".into()])
        );
    }

    #[test]
    fn interrupted_tasks_keep_what_they_hold_and_failed_ones_publish_no_result() {
        let b = example_bundle();
        let mut g = guard();
        g.artifact(
            b,
            "r",
            SKILL,
            vec![Some(result("condition_met"))],
            false,
            true,
        );
        assert_eq!(
            g.status(b, "TASK_STATE_INPUT_REQUIRED"),
            Verdict::Release(vec![])
        );
        assert!(g.returned() == Verdict::Hold && !g.is_finished());
        g.artifact(b, "o", KIND, vec![Some(record())], false, false);
        g.artifact(
            b,
            "bad",
            KIND,
            vec![Some(json!({"record_id": 1}))],
            false,
            false,
        );
        assert_eq!(g.status(b, "TASK_STATE_FAILED"), Verdict::Release(vec![]));
        let mut g = guard();
        g.artifact(
            b,
            "r",
            SKILL,
            vec![Some(result("condition_met"))],
            false,
            true,
        );
        assert_eq!(
            g.artifact(b, "o", KIND, vec![Some(record())], false, false),
            Verdict::Hold
        );
        // The last chunk completes the record: released then, alone.
        assert_eq!(
            g.artifact(b, "o", KIND, vec![], true, true),
            Verdict::Release(vec!["o".into()])
        );
        // Canceled: the held result is never published.
        assert_eq!(g.status(b, "TASK_STATE_CANCELED"), Verdict::Release(vec![]));
        assert!(g.is_finished());
    }

    #[test]
    fn limits_fail_the_task_with_resource_limit_exceeded() {
        let b = example_bundle();
        let mut g = b
            .task_guard(
                SKILL,
                Limits {
                    max_records: 2,
                    max_artifact_bytes: 1 << 20,
                },
            )
            .unwrap();
        for i in 0..2 {
            assert!(matches!(
                g.artifact(b, &format!("o{i}"), KIND, vec![Some(record())], false, true),
                Verdict::Release(_)
            ));
        }
        let Verdict::Fail(e) = g.artifact(b, "o3", KIND, vec![Some(record())], false, true) else {
            panic!()
        };
        assert_eq!(e.code(), Condition::ResourceLimitExceeded);
        assert_eq!(e.task_state(), Some(a2a_types::TaskState::Failed));
        let mut g = b
            .task_guard(
                SKILL,
                Limits {
                    max_records: 2,
                    max_artifact_bytes: 64,
                },
            )
            .unwrap();
        g.artifact(
            b,
            "r",
            SKILL,
            vec![Some(json!("x".repeat(40)))],
            false,
            false,
        );
        assert_eq!(
            code(g.artifact(
                b,
                "r",
                SKILL,
                vec![Some(json!("x".repeat(40)))],
                true,
                false
            )),
            Condition::ResourceLimitExceeded
        );
    }

    #[test]
    fn error_objects_in_a_final_status_are_the_drafts() {
        let b = example_bundle();
        let refused = json!({"error": {"code": "constraint_rejected", "message": "no"}});
        let fine = |state: &str, parts: Vec<Option<Value>>| {
            let mut g = guard();
            matches!(g.status_with_message(b, state, &parts), Verdict::Release(_))
        };
        assert!(fine("TASK_STATE_REJECTED", vec![Some(refused.clone())]));
        assert!(fine("TASK_STATE_FAILED", vec![None])); // a text reason: no condition reported
        assert!(fine(
            "TASK_STATE_FAILED",
            vec![Some(json!({"error": {"code": "output_invalid"}}))]
        ));
        // The wrong state for the condition, a second Part, an unknown code, extra members.
        assert!(!fine("TASK_STATE_FAILED", vec![Some(refused.clone())]));
        assert!(!fine(
            "TASK_STATE_REJECTED",
            vec![Some(refused.clone()), None]
        ));
        assert!(!fine(
            "TASK_STATE_REJECTED",
            vec![Some(json!({"error": {"code": "nope"}}))]
        ));
        assert!(!fine(
            "TASK_STATE_REJECTED",
            vec![Some(
                json!({"error": {"code": "constraint_rejected"}, "x": 1})
            )]
        ));
    }

    #[test]
    fn json_len_is_the_compact_length() {
        let v = json!({"a": [1, 2.5, null, true, false, "x\u{e9}"], "b": {}});
        assert_eq!(json_len(&v), serde_json::to_string(&v).unwrap().len());
    }

    #[test]
    fn domain_refusals_are_the_drafts() {
        let b = example_bundle();
        let e = b
            .domain_refusal(Condition::ConstraintRejected, "no")
            .unwrap();
        assert_eq!(e.task_state(), Some(a2a_types::TaskState::Rejected));
        let e = b
            .domain_refusal(Condition::AuthorizationFailed, "no")
            .unwrap();
        assert_eq!(e.task_state(), Some(a2a_types::TaskState::Rejected));
        assert!(b.domain_refusal(Condition::OutputInvalid, "no").is_none());
    }

    #[test]
    fn the_result_object_is_what_the_result_check_accepts() {
        let b = example_bundle();
        let g = guard();
        let output = result("condition_met")["result"].clone();
        let object = g.result_object(output);
        assert_eq!(object, result("condition_met"));
        assert_eq!(g.result_artifact_name(), SKILL);
        assert_eq!(b.check_result_object(SKILL, Some(&object)), Ok(()));
    }

    #[test]
    fn a_task_invokes_the_domain_skill_its_request_names() {
        let b = example_bundle();
        let request = json!({"skill": SKILL, "skill_version": "1.0", "interface_digest": "sha256:00", "arguments": {}});
        assert_eq!(b.invoked_skill(&request), Some(SKILL));
        let describe = json!({"skill": "describe_skill", "arguments": {"skill_id": SKILL}});
        assert_eq!(b.invoked_skill(&describe), None);
        assert_eq!(b.invoked_skill(&json!({"skill": "nope"})), None);
        assert_eq!(b.invoked_skill(&json!([1])), None);
    }

    /// One Artifact of a generated Task: its name and each Part (`None`: a text Part).
    type Generated = (String, Vec<Option<Value>>);

    fn generated_artifact() -> impl proptest::strategy::Strategy<Value = Generated> {
        use proptest::prelude::*;
        // Weighted towards what a well-behaved executor publishes, so that both
        // answers (released and failed) are met often.
        let name = prop_oneof![
            3 => Just(SKILL.to_string()),
            3 => Just(KIND.to_string()),
            1 => Just("diary".to_string()),
            1 => Just(String::new()),
        ];
        let part = prop_oneof![
            1 => Just(None),
            4 => Just(Some(result("condition_met"))),
            1 => Just(Some(result("maybe"))),
            1 => Just(Some(json!({"skill": "other", "result": {}}))),
            4 => Just(Some(record())),
            1 => Just(Some(json!({"record_id": 1}))),
        ];
        let parts = prop_oneof![
            4 => proptest::collection::vec(part.clone(), 1..=1),
            1 => proptest::collection::vec(part, 0..3),
        ];
        (name, parts)
    }

    /// The executor's guard and the client's reading of the final Task decide the same
    /// requirements (`interface::task_rules`): a completion the guard releases is a Task
    /// the client accepts, and one it fails is one the client refuses, with the same
    /// condition — and, when the guard decides at completion on a rule of the set (not
    /// a schema's), the same message. Both answers are met among the generated Tasks.
    #[test]
    fn the_guard_and_the_client_agree_on_every_artifact_set() {
        use proptest::prelude::*;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let b = example_bundle();
        let binding = b.document(SKILL).unwrap().binding();
        let verified =
            crate::client::verify_describe_response(&binding, &b.describe_skill(SKILL).unwrap())
                .unwrap();
        let (released, failed) = (AtomicUsize::new(0), AtomicUsize::new(0));
        // Any set of Artifacts, or a well-behaved one (its records, the result among them).
        let well_behaved = (0..4usize, 0..4usize).prop_map(|(records, at)| {
            let mut set: Vec<Generated> = (0..records)
                .map(|_| (KIND.to_string(), vec![Some(record())]))
                .collect();
            let result = (SKILL.to_string(), vec![Some(result("condition_met"))]);
            set.insert(at.min(records), result);
            set
        });
        let sets = prop_oneof![
            proptest::collection::vec(generated_artifact(), 0..5),
            well_behaved,
        ];
        let tasks = (sets, proptest::collection::vec(any::<bool>(), 5));
        let mut runner = proptest::test_runner::TestRunner::default();
        let outcome = runner.run(&tasks, |(artifacts, last_chunks)| {
            let mut g = guard();
            let mut early = None;
            for (i, (name, parts)) in artifacts.iter().enumerate() {
                let id = format!("a{i}");
                let v = g.artifact(b, &id, name, parts.clone(), false, last_chunks[i]);
                if let Verdict::Fail(e) = v {
                    early = Some(e);
                    break;
                }
            }
            let guard_says = match early.clone() {
                Some(e) => Err(e),
                None => match g.status(b, "TASK_STATE_COMPLETED") {
                    Verdict::Release(_) => Ok(()),
                    Verdict::Fail(e) => Err(e),
                    Verdict::Hold => panic!("a completion is decided"),
                },
            };
            let artifacts: Vec<Value> = artifacts
                .iter()
                .enumerate()
                .map(|(i, (name, parts))| {
                    let parts: Vec<Value> = parts
                        .iter()
                        .map(|p| match p {
                            Some(data) => json!({"data": data}),
                            None => json!({"text": "x"}),
                        })
                        .collect();
                    json!({"artifactId": format!("a{i}"), "name": name, "parts": parts})
                })
                .collect();
            let task = json!({"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": artifacts});
            match (guard_says, crate::client::final_task::skill_result(&task, &verified)) {
                (Ok(()), Ok(crate::client::final_task::Ending::Completed(_))) => {
                    released.fetch_add(1, Ordering::Relaxed);
                }
                (Err(e), Err(v)) => {
                    failed.fetch_add(1, Ordering::Relaxed);
                    prop_assert_eq!(Some(e.code()), v.condition);
                    // The rule set's own words (a schema's failure is worded by each
                        // side's validator, and carries details).
                    if early.is_none() && e.details().is_empty() {
                        prop_assert_eq!(e.message(), v.message.as_str());
                    }
                }
                (g, c) => prop_assert!(false, "guard {g:?}, client {c:?}"),
            }
            Ok(())
        });
        outcome.unwrap();
        let (released, failed) = (released.into_inner(), failed.into_inner());
        assert!(
            released > 0 && failed > 0,
            "released {released}, failed {failed}"
        );
    }

    /// The guard and the client read a rejected or failed Task's final status the same
    /// way (`task_rules::status_error`): every status Message of up to two Parts drawn
    /// from text, well-formed error objects of each state, malformed ones and other
    /// data, in each refusal state. A status the guard lets end the Task is one the
    /// client reads as a refusal (with the same condition, or none); one the guard fails
    /// is one the client reports as a violation of the error object's placement.
    #[test]
    fn the_guard_and_the_client_agree_on_every_refusal_status() {
        use crate::client::final_task::{skill_result, Ending};
        let b = example_bundle();
        let binding = b.document(SKILL).unwrap().binding();
        let verified =
            crate::client::verify_describe_response(&binding, &b.describe_skill(SKILL).unwrap())
                .unwrap();
        let pool: Vec<Option<Value>> = vec![
            None,
            Some(json!({"error": {"code": "constraint_rejected", "message": "no"}})),
            Some(json!({"error": {"code": "output_invalid"}})),
            Some(json!({"error": {"code": "resource_limit_exceeded"}})),
            Some(json!({"error": {"code": "nope"}})),
            Some(json!({"error": {"code": "input_invalid"}, "x": 1})),
            Some(json!({"reason": "x"})),
        ];
        let mut lists: Vec<Vec<Option<Value>>> = vec![vec![]];
        for a in &pool {
            lists.push(vec![a.clone()]);
            for b in &pool {
                lists.push(vec![a.clone(), b.clone()]);
            }
        }
        let (mut ended, mut failed, mut without) = (0, 0, 0);
        for state in ["TASK_STATE_FAILED", "TASK_STATE_REJECTED"] {
            for parts in &lists {
                let mut g = guard();
                let verdict = g.status_with_message(b, state, parts);
                let mut status = json!({"state": state});
                if !parts.is_empty() {
                    let wire: Vec<Value> = parts
                        .iter()
                        .map(|p| match p {
                            Some(data) => json!({"data": data}),
                            None => {
                                json!({"text": "the agent failed while processing this request"})
                            }
                        })
                        .collect();
                    status["message"] = json!({"role": "ROLE_AGENT", "parts": wire});
                }
                let task = json!({"id": "t", "status": status});
                match (verdict, skill_result(&task, &verified)) {
                    (Verdict::Release(_), Ok(Ending::Refused(r))) => {
                        ended += 1;
                        without += usize::from(r.error.is_none());
                        let reported = parts
                            .iter()
                            .flatten()
                            .find_map(|d| d["error"]["code"].as_str());
                        assert_eq!(
                            r.condition().map(|c| c.to_string()).as_deref(),
                            reported,
                            "{task}"
                        );
                    }
                    (Verdict::Fail(e), Err(v)) => {
                        failed += 1;
                        assert_eq!(e.code(), Condition::OutputInvalid, "{task}");
                        assert!(
                            matches!(
                                v.clause,
                                crate::client::clause::Clause::ErrorObject
                                    | crate::client::clause::Clause::ErrorState
                            ),
                            "{task}: {v:?}"
                        );
                        assert_eq!(e.message(), v.message, "{task}");
                    }
                    (g, c) => panic!("{task}: guard {g:?}, client {c:?}"),
                }
            }
        }
        assert!(
            ended > 0 && failed > 0 && without > 0,
            "{ended} {failed} {without}"
        );
    }

    /// The guard and the client's stream assembly read Artifact chunks alike
    /// (`task_rules::artifact_update`): fed the same updates, one breaks the rule at the
    /// event where the other does, in the same words; and when neither does, the
    /// completion the guard decides is the one the client reads from the assembled Task.
    /// `lastChunk` varies freely: an Artifact delivered whole does not change after, on
    /// either side. A record whose name the guard refuses at its first chunk, or which
    /// it checks and refuses when whole (content rules the client decides on the
    /// assembled Task), ends the comparison.
    #[test]
    fn the_guard_and_the_stream_assembly_agree_on_every_chunk_sequence() {
        use crate::client::clause::Clause;
        use crate::client::final_task::{skill_result, task_of, Assembly, Ending};
        use proptest::prelude::*;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let b = example_bundle();
        let binding = b.document(SKILL).unwrap().binding();
        let verified =
            crate::client::verify_describe_response(&binding, &b.describe_skill(SKILL).unwrap())
                .unwrap();
        let chunk_words = [
            task_rules::artifact_update(None, None, true),
            task_rules::artifact_update(
                Some(Started {
                    name: "a",
                    complete: false,
                }),
                Some("b"),
                true,
            ),
            task_rules::artifact_update(
                Some(Started {
                    name: "a",
                    complete: true,
                }),
                None,
                false,
            ),
        ]
        .map(|r| r.unwrap_err().message);
        let name = prop_oneof![
            Just(Some(SKILL)),
            Just(Some(KIND)),
            Just(None),
            Just(Some("other")),
        ];
        let part = prop_oneof![
            Just(None),
            Just(Some(result("condition_met"))),
            Just(Some(record())),
        ];
        let event = (
            0..2usize,
            name,
            proptest::collection::vec(part, 0..3),
            any::<bool>(),
            any::<bool>(),
        );
        // Any sequence, or a well-behaved one: the result in two chunks, the second
        // without a name and maybe the last, and maybe a record, maybe whole.
        let well_behaved = (any::<bool>(), 0..2usize, any::<bool>(), any::<bool>()).prop_map(
            |(with_record, id, result_whole, record_whole)| {
                let mut events = vec![
                    (id, Some(SKILL), vec![], false, false),
                    (
                        id,
                        None,
                        vec![Some(result("condition_met"))],
                        true,
                        result_whole,
                    ),
                ];
                if with_record {
                    events.push((
                        1 - id,
                        Some(KIND),
                        vec![Some(record())],
                        false,
                        record_whole,
                    ));
                }
                events
            },
        );
        // An Artifact delivered whole, then changed: random sequences reach that rule too
        // rarely for every run to see it.
        let changed_after_whole = (0..2usize, any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(id, is_record, append, last_chunk)| {
                let (name, part) = match is_record {
                    true => (KIND, record()),
                    false => (SKILL, result("condition_met")),
                };
                vec![
                    (id, Some(name), vec![Some(part.clone())], false, true),
                    (id, None, vec![Some(part)], append, last_chunk),
                ]
            });
        let sequences = prop_oneof![
            proptest::collection::vec(event, 0..6),
            well_behaved,
            changed_after_whole
        ];
        let counts: [AtomicUsize; 5] = Default::default();
        let mut runner = proptest::test_runner::TestRunner::default();
        let outcome = runner.run(&sequences, |events| {
            let mut g = guard();
            let mut a = Assembly::new();
            a.apply(&json!({"task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}}))
                .unwrap();
            for (id, name, parts, append, last_chunk) in &events {
                let id = format!("a{id}");
                let verdict = g.artifact(
                    b,
                    &id,
                    name.unwrap_or(""),
                    parts.clone(),
                    *append,
                    *last_chunk,
                );
                let wire: Vec<Value> = parts
                    .iter()
                    .map(|p| match p {
                        Some(data) => json!({"data": data}),
                        None => json!({"text": "x"}),
                    })
                    .collect();
                let mut artifact = json!({"artifactId": id, "parts": wire});
                if let Some(name) = name {
                    artifact["name"] = json!(name);
                }
                let update = json!({"artifactUpdate": {"taskId": "t", "append": append,
                    "lastChunk": last_chunk, "artifact": artifact}});
                match (verdict, a.apply(&update)) {
                    (Verdict::Hold | Verdict::Release(_), Ok(())) => {}
                    (Verdict::Fail(e), Err(v)) => {
                        counts[0].fetch_add(1, Ordering::Relaxed);
                        if v.message == chunk_words[2] {
                            counts[4].fetch_add(1, Ordering::Relaxed);
                        }
                        prop_assert!(chunk_words.contains(&v.message), "{:?}", v);
                        prop_assert_eq!(e.message(), v.message.as_str());
                        prop_assert_eq!(Some(e.code()), v.condition);
                        prop_assert_eq!(v.clause, Clause::Transport);
                        return Ok(());
                    }
                    (Verdict::Fail(e), Ok(())) => {
                        prop_assert!(!chunk_words.iter().any(|w| w == e.message()), "{e:?}");
                        counts[1].fetch_add(1, Ordering::Relaxed);
                        return Ok(());
                    }
                    (g, c) => prop_assert!(false, "guard {g:?}, client {c:?}"),
                }
            }
            let guard_says = g.status(b, "TASK_STATE_COMPLETED");
            a.apply(&json!({"statusUpdate": {"taskId": "t",
                "status": {"state": "TASK_STATE_COMPLETED"}}}))
                .unwrap();
            let response = a.finish();
            let task = task_of(&response, Clause::PrimaryResult).unwrap();
            match (guard_says, skill_result(task, &verified)) {
                (Verdict::Release(_), Ok(Ending::Completed(_))) => {
                    counts[2].fetch_add(1, Ordering::Relaxed);
                }
                (Verdict::Fail(e), Err(v)) => {
                    counts[3].fetch_add(1, Ordering::Relaxed);
                    prop_assert_eq!(Some(e.code()), v.condition);
                    if e.details().is_empty() {
                        prop_assert_eq!(e.message(), v.message.as_str());
                    }
                }
                (g, c) => prop_assert!(false, "guard {g:?}, client {c:?}"),
            }
            Ok(())
        });
        outcome.unwrap();
        let counts = counts.map(AtomicUsize::into_inner);
        assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
    }
}
