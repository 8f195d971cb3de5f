//! The A2A Tasks a client receives, read as the draft's A2A mapping says they must be.
//!
//! A client may not take a completed Task at its word. Draft "A2A Mapping for Interface
//! Version 1.0": a describe_skill task completes with exactly one Artifact, named
//! `describe_skill`, with exactly one Data Part ("describe_skill response"); a domain
//! skill completes with exactly one primary result Artifact named after the skill whose
//! single Data Part is `{"skill","result"}` valid against output_schema, every other
//! Artifact being a supporting record named after a declared kind (never the skill_id)
//! and valid against that kind's schema ("Domain-skill invocation"); a Task that reports
//! one of the draft's conditions ends `TASK_STATE_REJECTED` or `TASK_STATE_FAILED` —
//! which one the condition decides — with one Data Part `{"error":{"code",...}}` whose
//! code is one of the listed conditions ("Machine-readable error conditions"), while one
//! rejected or failed for another reason reports none and breaks nothing. The same
//! requirements hold whether the Task
//! arrived whole, by polling, or as a stream of updates, so [`Assembly`] first rebuilds
//! the final Task from streamed events (artifactId, append, lastChunk as A2A defines).
//!
//! Pure functions of JSON values (the A2A 1.0 JSON form): the wire client
//! (`client::call`), the conformance probe (`client::probe`) and the Python client share
//! them. The requirements on a domain skill's Task — its Artifacts, its error object and
//! its state — are decided in [`crate::interface::task_rules`], the rule set the agent's
//! guard applies too, with [`VerifiedInterface`]'s schemas; this module reads the Task
//! and turns a broken rule into a [`Violation`] naming its [`Clause`], a JSON pointer
//! into the Task, and a bounded excerpt of what the agent sent.

use crate::client::clause::Clause;
use crate::client::VerifiedInterface;
use crate::interface::condition::{Condition, ErrorObject};
use crate::interface::task_rules::{self, ArtifactView, Fault, OutputSchemas, State, Update};
use crate::interface::DESCRIBE_SKILL;
use a2a_types::TaskState;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// How much of what an agent sent a report quotes, at most (bytes of compact JSON).
pub const EVIDENCE_BYTES: usize = 400;

/// A requirement the agent broke.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// The draft requirement.
    pub clause: Clause,
    /// The condition the client reports locally for it (`interface_invalid` for a
    /// defective interface, `output_invalid` for unusable output), when the draft names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<Condition>,
    /// Where, as a JSON Pointer into the value the evidence quotes (a Task, a card).
    pub pointer: String,
    /// What is wrong, in the client's words (no value the agent sent).
    pub message: String,
    /// A bounded excerpt of what the agent sent at `pointer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

impl Violation {
    /// A violation of `clause` at `pointer`, without evidence.
    pub fn new(clause: Clause, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Violation {
            clause,
            condition: None,
            pointer: pointer.into(),
            message: message.into(),
            evidence: None,
        }
    }

    /// The local condition the client reports.
    pub fn with_condition(mut self, condition: Condition) -> Self {
        self.condition = Some(condition);
        self
    }

    /// Quote (a bounded excerpt of) `value`.
    pub fn with_evidence(mut self, value: &Value) -> Self {
        self.evidence = Some(excerpt(value));
        self
    }

    /// From an error object the library's checks returned (its code is the condition).
    pub fn from_error(clause: Clause, pointer: impl Into<String>, error: &ErrorObject) -> Self {
        let mut pointer = pointer.into();
        if let Some(detail) = error.details().first() {
            pointer.push_str(&detail.instance_path);
        }
        Violation::new(clause, pointer, error.message()).with_condition(error.code())
    }

    /// A broken requirement of the shared rule set, found in `checked` (the value the
    /// fault's pointer is relative to), which sits at `at` in the Task. The pointer goes
    /// on into the checked value when the fault has details; the evidence quotes what
    /// is at the fault's pointer (or the nearest member above it that exists).
    pub fn from_fault(fault: Fault, at: &str, checked: &Value) -> Self {
        let mut quoted = fault.pointer.as_str();
        let evidence = loop {
            if let Some(v) = checked.pointer(quoted) {
                break v;
            }
            quoted = &quoted[..quoted.rfind('/').unwrap_or(0)];
        };
        let mut pointer = format!("{at}{}", fault.pointer);
        if let Some(detail) = fault.details.first() {
            pointer.push_str(&detail.instance_path);
        }
        Violation {
            clause: Clause::of(fault.requirement),
            condition: fault.condition,
            pointer,
            message: fault.message,
            evidence: None,
        }
        .with_evidence(evidence)
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} [{}]", self.message, self.clause)
    }
}

/// Compact JSON of `value`, cut to [`EVIDENCE_BYTES`] on a character boundary.
pub fn excerpt(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= EVIDENCE_BYTES {
        return text;
    }
    let mut end = EVIDENCE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

/// How a Task ended, when it did not simply complete.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending<T> {
    /// Completed, and what the mapping requires of a completed task held.
    Completed(T),
    /// Rejected or failed: with a well-formed error object, or reporting no condition.
    Refused(Refusal),
    /// Stopped in another state (canceled, input-required, auth-required, or still
    /// working when the client stopped waiting): nothing to validate.
    Stopped {
        /// The state it stopped in.
        state: String,
    },
}

/// A rejected or failed Task, read as the draft says: the final state and the
/// condition it reports, if it reports one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal {
    /// The final task state (`TASK_STATE_FAILED`, `TASK_STATE_REJECTED`).
    pub state: String,
    /// The draft's error object the agent sent; `None` when its final status reported
    /// no condition (draft "Machine-readable error conditions": the error object is
    /// required "when the remote agent reports one of the conditions", so a Task that
    /// failed or was rejected for another reason carries none, and breaks nothing).
    pub error: Option<ErrorObject>,
}

impl Refusal {
    /// The condition the agent reported, if it reported one.
    pub fn condition(&self) -> Option<Condition> {
        self.error.as_ref().map(ErrorObject::code)
    }
}

/// `TASK_STATE_REJECTED, constraint_rejected`, or `TASK_STATE_FAILED, no
/// machine-readable condition`.
impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.condition() {
            Some(code) => write!(f, "{}, {code}", self.state),
            None => write!(f, "{}, no machine-readable condition", self.state),
        }
    }
}

/// A supporting record received in its own Artifact.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// The Artifact's artifactId.
    pub artifact_id: String,
    /// The supporting-record kind.
    pub kind: String,
    /// The record, valid against its schema.
    pub record: Value,
}

/// What a completed domain-skill Task delivered, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delivered {
    /// The skill result object's `result` (valid against output_schema).
    pub result: Value,
    /// The primary result Artifact's artifactId.
    pub result_artifact_id: String,
    /// Every supporting record, in the Task's order.
    pub records: Vec<Record>,
}

/// The Task in a SendMessage response (`{"task": …}`); a bare `{"message": …}` answers
/// no schema-governed request (the mapping's results are Artifacts of a Task).
pub fn task_of(response: &Value, clause: Clause) -> Result<&Value, Violation> {
    if let Some(task) = response.get("task").filter(|t| t.is_object()) {
        return Ok(task);
    }
    let message = if response.get("message").is_some() {
        "the agent answered with a Message, not a Task: the mapping delivers results as Artifacts of a Task"
    } else {
        "the response is neither {\"task\": …} nor {\"message\": …}"
    };
    Err(Violation::new(clause, "", message).with_evidence(response))
}

/// The task's `status.state`, parsed (`None` for `TASK_STATE_UNSPECIFIED`).
fn state(task: &Value) -> Result<(Option<State>, String), Violation> {
    let text = task
        .pointer("/status/state")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Violation::new(
                Clause::Transport,
                "/status/state",
                "the Task has no string status.state",
            )
            .with_evidence(task.get("status").unwrap_or(&Value::Null))
        })?;
    let parsed: TaskState = serde_json::from_value(json!(text)).map_err(|_| {
        Violation::new(
            Clause::Transport,
            "/status/state",
            "the Task's status.state is not an A2A 1.0 task state",
        )
        .with_evidence(&json!(text))
    })?;
    Ok((State::from_task_state(&parsed), text.to_string()))
}

/// The data of a parts list that must be exactly one Data Part.
fn single_data(parts: Option<&Value>) -> Option<&Value> {
    task_rules::single_data(task_rules::parts_data(parts)?)
}

/// Read a task that did not complete: a refusal (checked) or a stop.
fn ending_of<T>(task: &Value, state: Option<State>, name: String) -> Result<Ending<T>, Violation> {
    match state {
        Some(state) if state.is_refusal() => {
            let error = refused(task, state)?;
            Ok(Ending::Refused(Refusal { state: name, error }))
        }
        _ => Ok(Ending::Stopped { state: name }),
    }
}

/// The condition a rejected or failed task (`state`) reports, read as the agent's guard
/// reads it ([`task_rules::status_error`]): a status that reports a condition must
/// carry the draft's error object, placed as the draft says (a violation otherwise);
/// one that reports none (a text reason, no Message) is a refusal without a condition.
fn refused(task: &Value, state: State) -> Result<Option<ErrorObject>, Violation> {
    let status = task.get("status").unwrap_or(&Value::Null);
    let parts = task_rules::parts_data(status.pointer("/message/parts")).unwrap_or_default();
    task_rules::status_error(state, &parts).map_err(|f| Violation::from_fault(f, "/status", status))
}

/// How a task ended, without checking what a completed task delivered (a probe that
/// expects a refusal only needs to know whether, and how, the agent refused).
pub fn ending(task: &Value) -> Result<Ending<()>, Violation> {
    let (state, name) = state(task)?;
    if state == Some(State::Completed) {
        return Ok(Ending::Completed(()));
    }
    ending_of(task, state, name)
}

/// Check a describe_skill task (draft "describe_skill response"): completed with exactly
/// one Artifact named `describe_skill` holding exactly one Data Part. Returns that data
/// (the describe_skill result object, for [`crate::client::verify_describe_response`]).
pub fn describe_result(task: &Value) -> Result<Ending<Value>, Violation> {
    let (state, name) = state(task)?;
    if state != Some(State::Completed) {
        return ending_of(task, state, name);
    }
    let artifacts = artifacts(task);
    let [artifact] = artifacts else {
        return Err(Violation::new(
            Clause::DescribeResponse,
            "/artifacts",
            format!(
                "the completed describe_skill task has {} Artifacts, not exactly one",
                artifacts.len()
            ),
        )
        .with_condition(Condition::InterfaceInvalid)
        .with_evidence(&names(artifacts)));
    };
    if artifact.get("name").and_then(Value::as_str) != Some(DESCRIBE_SKILL) {
        return Err(Violation::new(
            Clause::DescribeResponse,
            "/artifacts/0/name",
            "the describe_skill task's Artifact is not named describe_skill",
        )
        .with_condition(Condition::InterfaceInvalid)
        .with_evidence(artifact.get("name").unwrap_or(&Value::Null)));
    }
    let data = single_data(artifact.get("parts")).ok_or_else(|| {
        Violation::new(
            Clause::DescribeResponse,
            "/artifacts/0/parts",
            "the describe_skill Artifact does not hold exactly one Data Part",
        )
        .with_condition(Condition::InterfaceInvalid)
        .with_evidence(artifact.get("parts").unwrap_or(&Value::Null))
    })?;
    Ok(Ending::Completed(data.clone()))
}

/// Name the clause of a describe_skill result the client refused
/// ([`crate::client::verify_describe_response`]'s `error`): the digest triple when the
/// returned digest differs from the advertised one or from the one calculated over the
/// returned document, otherwise the document's validity. An unsupported interface
/// version is the client's own condition, not the agent's violation: `Err(error)`.
pub fn describe_violation(
    selected: &crate::interface::binding::Binding,
    data: &Value,
    error: ErrorObject,
) -> Result<Violation, ErrorObject> {
    if error.code() == Condition::UnsupportedInterfaceVersion {
        return Err(error);
    }
    let returned = data
        .pointer("/result/interface_digest")
        .and_then(Value::as_str);
    let computed = data
        .pointer("/result/interface")
        .filter(|d| d.is_object())
        .map(|d| crate::wire::digest::Digest::of_value(d).to_string());
    let triple = returned.is_some_and(|r| r != selected.interface_digest.as_str())
        || computed.as_deref().is_some_and(|c| Some(c) != returned);
    Ok(if triple {
        Violation::from_error(Clause::DigestTriple, "/result/interface_digest", &error)
            .with_evidence(&json!({
                "advertised": selected.interface_digest,
                "returned": returned,
                "computed": computed,
            }))
    } else {
        Violation::from_error(Clause::DocumentValid, "/result/interface", &error)
    })
}

fn artifacts(task: &Value) -> &[Value] {
    task.get("artifacts")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The Artifacts' names (for evidence).
fn names(artifacts: &[Value]) -> Value {
    Value::Array(
        artifacts
            .iter()
            .map(|a| a.get("name").cloned().unwrap_or(Value::Null))
            .collect(),
    )
}

/// Check a domain-skill task against the verified interface (draft "Domain-skill
/// invocation"): completed with exactly one primary result Artifact named after the
/// skill, one Data Part `{"skill","result"}` with a result valid against output_schema;
/// every other Artifact a record of a declared kind, one Data Part, valid against that
/// kind's schema. A violation of either of the last two carries `output_invalid`: the
/// output is unusable, whatever state the task reached.
pub fn skill_result(
    task: &Value,
    interface: &VerifiedInterface,
) -> Result<Ending<Delivered>, Violation> {
    let (state, name) = state(task)?;
    if state != Some(State::Completed) {
        return ending_of(task, state, name);
    }
    let artifacts = artifacts(task);
    let views: Vec<ArtifactView> = artifacts
        .iter()
        .map(|a| ArtifactView {
            name: a.get("name").and_then(Value::as_str),
            parts: Some(task_rules::parts_data(a.get("parts")).unwrap_or_default()),
        })
        .collect();
    let delivery = task_rules::completed_artifacts(interface, &views).map_err(|fault| {
        if fault.pointer.is_empty() {
            // The Artifact list as a whole: quote the Artifacts' names.
            Violation::from_fault(fault, "/artifacts", &names(artifacts))
        } else {
            Violation::from_fault(
                fault,
                "/artifacts",
                task.get("artifacts").unwrap_or(&Value::Null),
            )
        }
    })?;
    let result = delivery
        .result
        .expect("every Artifact of a received Task is checked here")
        .clone();
    let records = delivery
        .records
        .into_iter()
        .map(|(i, kind, record)| Record {
            artifact_id: text(&artifacts[i], "artifactId"),
            kind: kind.to_string(),
            record: record.clone(),
        })
        .collect();
    Ok(Ending::Completed(Delivered {
        result,
        result_artifact_id: text(&artifacts[delivery.primary], "artifactId"),
        records,
    }))
}

/// The client's verified interface is what it checks a received Task's output with.
impl OutputSchemas for VerifiedInterface {
    fn skill_id(&self) -> &str {
        &self.binding.skill_id
    }

    fn record_kinds(&self) -> Vec<&str> {
        self.validators.records.keys().map(String::as_str).collect()
    }

    fn check_result(&self, result: &Value) -> Result<(), ErrorObject> {
        VerifiedInterface::check_result(self, result)
    }

    fn check_record(&self, kind: &str, record: &Value) -> Result<(), ErrorObject> {
        VerifiedInterface::check_record(self, kind, record)
    }
}

/// A Task snapshot after Artifacts were delivered whole: each of them is restated by the
/// snapshot, not changed ([`task_rules::artifact_update`]), as the agent's guard and the
/// gateway read a whole Task event. What was delivered stays, whatever the snapshot
/// holds under that artifactId, and an Artifact it leaves out is kept.
fn restate_whole(snapshot: &mut Map<String, Value>, current: &Map<String, Value>, whole: &[Value]) {
    let Some(delivered) = current.get("artifacts").and_then(Value::as_array) else {
        return;
    };
    let id_of = |a: &Value| a.get("artifactId").cloned();
    let list = snapshot.entry("artifacts").or_insert(Value::Null);
    if list.is_null() {
        *list = Value::Array(Vec::new());
    }
    let Some(list) = list.as_array_mut() else {
        return;
    };
    for kept in delivered
        .iter()
        .filter(|a| id_of(a).is_some_and(|id| whole.contains(&id)))
    {
        match list.iter_mut().find(|a| id_of(a) == id_of(kept)) {
            Some(restated) => *restated = kept.clone(),
            None => list.push(kept.clone()),
        }
    }
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Rebuilds the final Task from the events of a streamed response (A2A 1.0
/// `StreamResponse`: `task`, `message`, `statusUpdate`, `artifactUpdate`), applying
/// Artifact updates as [`task_rules::artifact_update`] reads them, as the agent's guard
/// does: an update with `append: true` extends the parts of the Artifact with the same
/// artifactId, which must have been started and keeps its name (a violation
/// otherwise); any other starts or replaces it; and an Artifact delivered whole (an
/// update with `lastChunk: true`) does not change afterwards (a violation). A `task`
/// event is the Task anew, except that it restates an Artifact delivered whole, which
/// keeps what was delivered. Version 1.0 validates only the assembled result, never a
/// chunk.
#[derive(Debug, Default)]
pub struct Assembly {
    task: Option<Map<String, Value>>,
    message: Option<Value>,
    /// The artifactIds of Artifacts an update with `lastChunk` delivered whole.
    whole: Vec<Value>,
    events: usize,
}

impl Assembly {
    /// An empty Task, before any event.
    pub fn new() -> Self {
        Assembly::default()
    }

    /// Apply one `StreamResponse` event. Refuses an event of no known kind, one for
    /// another task than the first, and an update before any task.
    pub fn apply(&mut self, event: &Value) -> Result<(), Violation> {
        self.events += 1;
        let bad = |message: &str| {
            Err(Violation::new(Clause::Transport, "", message).with_evidence(event))
        };
        if let Some(task) = event.get("task").and_then(Value::as_object) {
            if let Some(current) = &self.task {
                if current.get("id") != task.get("id") {
                    return bad("a streamed Task event names another task than the first");
                }
            }
            let mut task = task.clone();
            if let Some(current) = &self.task {
                restate_whole(&mut task, current, &self.whole);
            }
            self.task = Some(task);
            return Ok(());
        }
        if let Some(message) = event.get("message") {
            self.message = Some(message.clone());
            return Ok(());
        }
        let (update, key) = if let Some(u) = event.get("statusUpdate") {
            (u, "statusUpdate")
        } else if let Some(u) = event.get("artifactUpdate") {
            (u, "artifactUpdate")
        } else {
            return bad("a stream event is none of task, message, statusUpdate, artifactUpdate");
        };
        let task_id = update.get("taskId").and_then(Value::as_str);
        let task = match &mut self.task {
            Some(task) => task,
            None => {
                // A stream may start with an update: the task is the one it names.
                let Some(id) = task_id else {
                    return bad("a stream update names no taskId");
                };
                let mut task = Map::new();
                task.insert("id".into(), json!(id));
                if let Some(c) = update.get("contextId") {
                    task.insert("contextId".into(), c.clone());
                }
                self.task.insert(task)
            }
        };
        if task_id.is_some_and(|id| task.get("id").and_then(Value::as_str) != Some(id)) {
            return bad("a stream update names another task than the first");
        }
        if key == "statusUpdate" {
            let Some(status) = update.get("status") else {
                return bad("a statusUpdate has no status");
            };
            task.insert("status".into(), status.clone());
            return Ok(());
        }
        let Some(artifact) = update.get("artifact").and_then(Value::as_object) else {
            return bad("an artifactUpdate has no artifact");
        };
        let append = update.get("append").and_then(Value::as_bool) == Some(true);
        let last_chunk = update.get("lastChunk").and_then(Value::as_bool) == Some(true);
        let list = task
            .entry("artifacts")
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(list) = list.as_array_mut() else {
            return bad("the streamed Task's artifacts is not a list");
        };
        let id = artifact.get("artifactId");
        let at = list.iter().position(|a| a.get("artifactId") == id);
        let whole = &self.whole;
        let started = at.map(|i| task_rules::Started {
            name: list[i].get("name").and_then(Value::as_str).unwrap_or(""),
            complete: id.is_some_and(|id| whole.contains(id)),
        });
        let name = artifact.get("name").and_then(Value::as_str);
        let rule = task_rules::artifact_update(started, name, append)
            .map_err(|f| Violation::from_fault(f, "/artifactUpdate", update))?;
        match (rule, at) {
            (Update::Append, Some(i)) => {
                let parts = artifact
                    .get("parts")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                match list[i].get_mut("parts").and_then(Value::as_array_mut) {
                    Some(old) => old.extend(parts),
                    None => list[i]["parts"] = Value::Array(parts),
                }
            }
            (_, Some(i)) => list[i] = Value::Object(artifact.clone()),
            (_, None) => list.push(Value::Object(artifact.clone())),
        }
        if let Some(id) = id.filter(|_| last_chunk) {
            self.whole.push(id.clone());
        }
        Ok(())
    }

    /// How many events were applied.
    pub fn events(&self) -> usize {
        self.events
    }

    /// The id of the task the stream is about, once known.
    pub fn task_id(&self) -> Option<&str> {
        self.task.as_ref()?.get("id")?.as_str()
    }

    /// The final response in SendMessage form: `{"task": …}` (or `{"message": …}` when
    /// the stream carried only a Message).
    pub fn finish(self) -> Value {
        match (self.task, self.message) {
            (Some(task), _) => json!({"task": Value::Object(task)}),
            (None, Some(message)) => json!({"message": message}),
            (None, None) => json!({}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interface::binding::Binding;

    const RESPONSE: &str =
        include_str!("../../tests/vectors/describe_skill/evaluate_resource_condition.json");
    const SKILL: &str = "evaluate_resource_condition";

    fn interface() -> VerifiedInterface {
        let adv = Binding {
            skill_id: SKILL.into(),
            skill_version: "1.0".parse().unwrap(),
            interface_digest:
                "sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d"
                    .parse()
                    .unwrap(),
        };
        let response = crate::wire::json::parse(RESPONSE.as_bytes()).unwrap();
        crate::client::verify_describe_response(&adv, &response).unwrap()
    }

    fn record() -> Value {
        json!({"record_id": "observation-7", "resource_id": "r", "metric": "utilization",
               "value": 42, "unit": "percent", "observed_at": "2026-08-11T12:00:01Z"})
    }

    fn result() -> Value {
        json!({"skill": SKILL, "result": {"result": "condition_not_met", "observed_value": 42,
               "unit": "percent", "supporting_record_refs": ["observation-7"]}})
    }

    fn task(artifacts: Value) -> Value {
        json!({"id": "t1", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": artifacts})
    }

    fn good() -> Value {
        task(json!([
            {"artifactId": "observation-7", "name": "resource-observation", "parts": [{"data": record()}]},
            {"artifactId": "result-1", "name": SKILL, "parts": [{"data": result()}]},
        ]))
    }

    fn violation(task: &Value) -> Violation {
        skill_result(task, &interface()).unwrap_err()
    }

    #[test]
    fn accepts_the_drafts_worked_example() {
        let Ending::Completed(d) = skill_result(&good(), &interface()).unwrap() else {
            panic!("not completed")
        };
        assert_eq!(d.result["result"], "condition_not_met");
        assert_eq!(d.result_artifact_id, "result-1");
        assert_eq!(d.records.len(), 1);
        assert_eq!(d.records[0].kind, "resource-observation");
    }

    #[test]
    fn each_broken_rule_names_its_clause() {
        let two = task(json!([
            {"artifactId": "a", "name": SKILL, "parts": [{"data": result()}]},
            {"artifactId": "b", "name": SKILL, "parts": [{"data": result()}]},
        ]));
        assert_eq!(violation(&two).clause, Clause::PrimaryResult);
        assert_eq!(violation(&task(json!([]))).clause, Clause::PrimaryResult);
        let mut invalid = good();
        invalid["artifacts"][1]["parts"][0]["data"]["result"]["result"] = json!("maybe");
        let v = violation(&invalid);
        assert_eq!(
            (v.clause, v.condition),
            (Clause::ResultValid, Some(Condition::OutputInvalid))
        );
        assert_eq!(v.pointer, "/artifacts/1/parts/0/data/result/result");
        let mut misnamed = good();
        misnamed["artifacts"][0]["name"] = json!("observation");
        let v = violation(&misnamed);
        assert_eq!(
            (v.clause, v.pointer.as_str()),
            (Clause::SupportingRecords, "/artifacts/0/name")
        );
        let mut bad_record = good();
        bad_record["artifacts"][0]["parts"][0]["data"]
            .as_object_mut()
            .unwrap()
            .remove("observed_at");
        assert_eq!(violation(&bad_record).clause, Clause::SupportingRecords);
        let mut two_parts = good();
        two_parts["artifacts"][1]["parts"] = json!([{"data": result()}, {"text": "x"}]);
        assert_eq!(violation(&two_parts).clause, Clause::PrimaryResult);
        let mut wrong_skill = good();
        wrong_skill["artifacts"][1]["parts"][0]["data"]["skill"] = json!("other");
        assert_eq!(violation(&wrong_skill).clause, Clause::PrimaryResult);
    }

    #[test]
    fn refusals_must_be_well_formed_and_in_the_right_state() {
        let refused = |state: &str, data: Value| json!({"id": "t", "status": {"state": state, "message": {"role": "ROLE_AGENT", "parts": [{"data": data}]}}});
        let ok = refused(
            "TASK_STATE_REJECTED",
            json!({"error": {"code": "interface_mismatch", "message": "stale"}}),
        );
        let Ending::Refused(r) = skill_result(&ok, &interface()).unwrap() else {
            panic!()
        };
        assert_eq!(r.condition(), Some(Condition::InterfaceMismatch));
        let wrong_state = refused(
            "TASK_STATE_FAILED",
            json!({"error": {"code": "input_invalid"}}),
        );
        assert_eq!(violation(&wrong_state).clause, Clause::ErrorState);
        let unknown = refused("TASK_STATE_REJECTED", json!({"error": {"code": "nope"}}));
        assert_eq!(violation(&unknown).clause, Clause::ErrorObject);
        let canceled = json!({"id": "t", "status": {"state": "TASK_STATE_CANCELED"}});
        assert!(matches!(
            skill_result(&canceled, &interface()).unwrap(),
            Ending::Stopped { .. }
        ));
    }

    fn with_status(state: &str, parts: Option<Value>) -> Value {
        let mut status = json!({"state": state});
        if let Some(parts) = parts {
            status["message"] = json!({"role": "ROLE_AGENT", "parts": parts});
        }
        json!({"id": "t", "status": status})
    }

    /// Draft "Machine-readable error conditions": the error object is required "when
    /// the remote agent reports one of the conditions"; a Task rejected or failed for
    /// another reason (our own executor's fixed text) reports none and breaks nothing.
    #[test]
    fn a_refusal_that_reports_no_condition_is_no_violation() {
        let no_condition = [
            (
                "TASK_STATE_FAILED",
                Some(json!([{"text": "the agent failed while processing this request"}])),
            ),
            ("TASK_STATE_REJECTED", Some(json!([{"text": "no"}]))),
            ("TASK_STATE_FAILED", None),
            ("TASK_STATE_REJECTED", Some(json!([]))),
            (
                "TASK_STATE_FAILED",
                Some(json!([{"data": {"reason": "x"}}, {"text": "t"}])),
            ),
        ];
        for (state, parts) in no_condition {
            let task = with_status(state, parts.clone());
            let Ending::Refused(r) = skill_result(&task, &interface()).unwrap() else {
                panic!("{task}")
            };
            assert_eq!((r.state.as_str(), r.condition()), (state, None), "{task}");
            assert_eq!(
                r.to_string(),
                format!("{state}, no machine-readable condition")
            );
            // The probe's reading, and describe_skill's, are the same.
            assert!(matches!(
                ending(&task).unwrap(),
                Ending::Refused(Refusal { error: None, .. })
            ));
            assert!(matches!(
                describe_result(&task).unwrap(),
                Ending::Refused(Refusal { error: None, .. })
            ));
        }
        let error = json!({"error": {"code": "output_invalid"}});
        let Ending::Refused(r) = ending(&with_status(
            "TASK_STATE_FAILED",
            Some(json!([{"data": error.clone()}])),
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(r.condition(), Some(Condition::OutputInvalid));
        assert_eq!(r.to_string(), "TASK_STATE_FAILED, output_invalid");
        // A status that reports a condition must still carry it as the draft says.
        let broken = [
            // A malformed error object.
            (
                json!([{"data": {"error": {"code": "nope"}}}]),
                "/status/message/parts/0/data/error/code",
            ),
            (
                json!([{"data": {"error": "output_invalid"}}]),
                "/status/message/parts/0/data",
            ),
            // Two Data Parts, one of them an error object.
            (
                json!([{"data": error.clone()}, {"data": {"reason": "x"}}]),
                "/status/message/parts",
            ),
            // An error object beside a text Part.
            (
                json!([{"text": "x"}, {"data": error.clone()}]),
                "/status/message/parts",
            ),
        ];
        for (parts, pointer) in broken {
            let task = with_status("TASK_STATE_FAILED", Some(parts));
            let v = violation(&task);
            assert_eq!(
                (v.clause, v.pointer.as_str()),
                (Clause::ErrorObject, pointer),
                "{task}"
            );
            assert_eq!(ending(&task).unwrap_err(), v);
        }
    }

    #[test]
    fn describe_tasks_hold_one_artifact_named_describe_skill() {
        let response = crate::wire::json::parse(RESPONSE.as_bytes()).unwrap();
        let t = task(
            json!([{"artifactId": "d", "name": "describe_skill", "parts": [{"data": response}]}]),
        );
        assert!(matches!(describe_result(&t).unwrap(), Ending::Completed(_)));
        let mut two = t.clone();
        two["artifacts"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "x", "parts": []}));
        assert_eq!(
            describe_result(&two).unwrap_err().clause,
            Clause::DescribeResponse
        );
        let mut renamed = t.clone();
        renamed["artifacts"][0]["name"] = json!("describe");
        assert_eq!(
            describe_result(&renamed).unwrap_err().pointer,
            "/artifacts/0/name"
        );
    }

    #[test]
    fn streams_assemble_appended_chunks() {
        let mut a = Assembly::new();
        let events = [
            json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
            json!({"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "r", "name": SKILL, "parts": []}}}),
            json!({"artifactUpdate": {"taskId": "t", "append": true, "lastChunk": true, "artifact": {"artifactId": "r", "parts": [{"data": result()}]}}}),
            json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_COMPLETED"}}}),
        ];
        for e in &events {
            a.apply(e).unwrap();
        }
        assert_eq!(a.events(), 4);
        let response = a.finish();
        let task = task_of(&response, Clause::PrimaryResult).unwrap();
        assert!(matches!(
            skill_result(task, &interface()).unwrap(),
            Ending::Completed(_)
        ));
        // An append without a name continues the started Artifact, under its name.
        let mut a = Assembly::new();
        a.apply(&events[0]).unwrap();
        a.apply(&events[1]).unwrap();
        a.apply(&events[2]).unwrap();
        let task = a.finish();
        assert_eq!(task["task"]["artifacts"][0]["name"], SKILL);
        assert_eq!(task["task"]["artifacts"][0]["parts"][0]["data"], result());
        // An append to an Artifact never started, or naming another one, breaks the
        // rule the agent's guard applies too.
        let appended = |id: &str, name: Option<&str>| {
            let mut artifact = json!({"artifactId": id, "parts": [{"text": "x"}]});
            if let Some(name) = name {
                artifact["name"] = json!(name);
            }
            json!({"artifactUpdate": {"taskId": "t", "append": true, "artifact": artifact}})
        };
        for (update, pointer, evidence) in [
            (appended("q", None), "/artifactUpdate/append", "true"),
            (appended("q", Some(SKILL)), "/artifactUpdate/append", "true"),
            (
                appended("r", Some("resource-observation")),
                "/artifactUpdate/artifact/name",
                "\"resource-observation\"",
            ),
        ] {
            let mut a = Assembly::new();
            a.apply(&events[0]).unwrap();
            a.apply(&events[1]).unwrap();
            let v = a.apply(&update).unwrap_err();
            assert_eq!(
                (v.clause, v.pointer.as_str(), v.evidence.as_deref()),
                (Clause::Transport, pointer, Some(evidence))
            );
            assert_eq!(v.condition, Some(Condition::OutputInvalid));
        }
        // After its lastChunk an Artifact is whole: neither an append nor a replacement
        // changes it, as the agent's guard holds it too.
        let replaced = json!({"artifactUpdate": {"taskId": "t", "artifact":
            {"artifactId": "r", "name": SKILL, "parts": [{"data": result()}]}}});
        for update in [appended("r", None), replaced] {
            let mut a = Assembly::new();
            for e in &events[..3] {
                a.apply(e).unwrap();
            }
            let v = a.apply(&update).unwrap_err();
            assert_eq!(
                (v.clause, v.pointer.as_str(), v.evidence.as_deref()),
                (
                    Clause::Transport,
                    "/artifactUpdate/artifact/artifactId",
                    Some("\"r\"")
                )
            );
            assert_eq!(
                v.message,
                "an Artifact update changes an Artifact already delivered whole (lastChunk)"
            );
        }
        // A Task snapshot restates an Artifact delivered whole; it does not change it or
        // take it away, as the agent's guard and the gateway read a whole Task event.
        let snapshot = |artifacts: Value| {
            json!({"task": {"id": "t", "contextId": "c",
                            "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": artifacts}})
        };
        let changed = json!({"artifactId": "r", "name": SKILL, "parts": [{"data": {"skill": SKILL,
            "result": {"result": "condition_met", "observed_value": 90, "unit": "percent",
                       "supporting_record_refs": []}}}]});
        for artifacts in [json!([changed]), json!([]), Value::Null] {
            let mut a = Assembly::new();
            for e in &events[..3] {
                a.apply(e).unwrap();
            }
            a.apply(&snapshot(artifacts)).unwrap();
            let response = a.finish();
            assert_eq!(response["task"]["artifacts"].as_array().unwrap().len(), 1);
            assert_eq!(
                response["task"]["artifacts"][0]["parts"][0]["data"],
                result()
            );
            assert_eq!(response["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        }
        // An Artifact not yet whole is the snapshot's to show.
        let mut a = Assembly::new();
        a.apply(&events[0]).unwrap();
        a.apply(&events[1]).unwrap();
        a.apply(&snapshot(json!([changed]))).unwrap();
        let response = a.finish();
        assert_eq!(response["task"]["artifacts"][0], changed);
        // Before it, a replacement is allowed.
        let mut a = Assembly::new();
        a.apply(&events[0]).unwrap();
        a.apply(&events[1]).unwrap();
        a.apply(&events[1]).unwrap();
        let mut other = Assembly::new();
        other.apply(&events[0]).unwrap();
        let stray =
            json!({"statusUpdate": {"taskId": "u", "status": {"state": "TASK_STATE_COMPLETED"}}});
        assert_eq!(other.apply(&stray).unwrap_err().clause, Clause::Transport);
    }

    #[test]
    fn evidence_is_bounded() {
        let big = json!({"x": "y".repeat(10_000)});
        let e = excerpt(&big);
        assert!(e.len() < EVIDENCE_BYTES + 40, "{}", e.len());
        assert!(e.contains("bytes in all"));
    }
}
