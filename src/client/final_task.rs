//! The A2A Tasks a client receives, read as the draft's A2A mapping says they must be.
//!
//! A client may not take a completed Task at its word. Draft "A2A Mapping for Interface
//! Version 1.0": a describe_skill task completes with exactly one Artifact, named
//! `describe_skill`, with exactly one Data Part ("describe_skill response"); a domain
//! skill completes with exactly one primary result Artifact named after the skill whose
//! single Data Part is `{"skill","result"}` valid against output_schema, every other
//! Artifact being a supporting record named after a declared kind (never the skill_id)
//! and valid against that kind's schema ("Domain-skill invocation"); a refusal ends
//! `TASK_STATE_REJECTED` or `TASK_STATE_FAILED` — which one the condition decides — with
//! one Data Part `{"error":{"code",...}}` whose code is one of the listed conditions
//! ("Machine-readable error conditions"). The same requirements hold whether the Task
//! arrived whole, by polling, or as a stream of updates, so [`Assembly`] first rebuilds
//! the final Task from streamed events (artifactId, append, lastChunk as A2A defines).
//!
//! Pure functions of JSON values (the A2A 1.0 JSON form): the wire client
//! (`client::call`), the conformance probe (`client::probe`) and the Python client share
//! them. The domain checks themselves are [`VerifiedInterface`]'s; a broken rule comes
//! back as a [`Violation`] naming its [`Clause`], a JSON pointer into the Task, and a
//! bounded excerpt of what the agent sent.

use crate::client::clause::Clause;
use crate::client::VerifiedInterface;
use crate::interface::condition::{Condition, Detected, ErrorObject};
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
    /// Rejected or failed with a well-formed error object.
    Refused(Refusal),
    /// Stopped in another state (canceled, input-required, auth-required, or still
    /// working when the client stopped waiting): nothing to validate.
    Stopped { state: String },
}

/// A well-formed refusal: the final state and the draft's error object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal {
    pub state: String,
    pub error: ErrorObject,
}

/// A supporting record received in its own Artifact.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    pub artifact_id: String,
    pub kind: String,
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

/// The task's `status.state`, parsed.
fn state(task: &Value) -> Result<(TaskState, String), Violation> {
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
    Ok((parsed, text.to_string()))
}

/// The data of a parts list that must be exactly one Data Part.
fn single_data(parts: Option<&Value>) -> Option<&Value> {
    match parts.and_then(Value::as_array).map(Vec::as_slice) {
        Some([part]) => part.get("data"),
        _ => None,
    }
}

/// Read a task that did not complete: a refusal (checked) or a stop.
fn ending_of<T>(task: &Value, state: TaskState, name: String) -> Result<Ending<T>, Violation> {
    if !matches!(state, TaskState::Rejected | TaskState::Failed) {
        return Ok(Ending::Stopped { state: name });
    }
    let error = refusal_error(task)?;
    let allowed: Vec<TaskState> = [Detected::BeforeAcceptance, Detected::DuringProcessing]
        .into_iter()
        .filter_map(|d| ErrorObject::new(error.code(), d, "").task_state())
        .collect();
    if !allowed.contains(&state) {
        return Err(Violation::new(
            Clause::ErrorState,
            "/status/state",
            format!(
                "the task ended {name} with {}, which the draft assigns to {}",
                error.code(),
                allowed
                    .iter()
                    .map(|s| json!(s).as_str().unwrap_or_default().to_string())
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        )
        .with_evidence(&json!(name)));
    }
    Ok(Ending::Refused(Refusal { state: name, error }))
}

/// How a task ended, without checking what a completed task delivered (a probe that
/// expects a refusal only needs to know whether, and how, the agent refused).
pub fn ending(task: &Value) -> Result<Ending<()>, Violation> {
    let (state, name) = state(task)?;
    if state == TaskState::Completed {
        return Ok(Ending::Completed(()));
    }
    ending_of(task, state, name)
}

/// The error object of a rejected or failed task's final status Message.
pub fn refusal_error(task: &Value) -> Result<ErrorObject, Violation> {
    let message = task.pointer("/status/message");
    let data = single_data(message.and_then(|m| m.get("parts"))).ok_or_else(|| {
        Violation::new(
            Clause::ErrorObject,
            "/status/message/parts",
            "the final status Message does not hold exactly one Data Part (the draft's error object)",
        )
        .with_evidence(message.unwrap_or(&Value::Null))
    })?;
    error_object(data).map_err(|mut v| {
        v.pointer = format!("/status/message/parts/0/data{}", v.pointer);
        v
    })
}

/// Read the draft's error object `{"error":{"code","message"?,"details"?}}`: the code
/// must be one of the listed conditions, `message` a string, each detail carry an
/// `instance_path`.
pub fn error_object(data: &Value) -> Result<ErrorObject, Violation> {
    let bad = |pointer: &str, message: &str, at: &Value| {
        Err(Violation::new(Clause::ErrorObject, pointer, message).with_evidence(at))
    };
    let Some(body) = data.get("error").filter(|e| e.is_object()) else {
        return bad("", "the Data Part is not {\"error\": {…}}", data);
    };
    let code = &body["code"];
    if !code.is_string() {
        return bad("/error/code", "the error object has no string code", body);
    }
    if serde_json::from_value::<Condition>(code.clone()).is_err() {
        return bad(
            "/error/code",
            "the error code is not one of the draft's conditions",
            code,
        );
    }
    if data.as_object().is_some_and(|o| o.len() != 1) {
        return bad(
            "",
            "the error object has members other than \"error\"",
            data,
        );
    }
    match serde_json::from_value::<ErrorObject>(data.clone()) {
        Ok(mut error) => {
            error.detected = Detected::DuringProcessing;
            Ok(error)
        }
        Err(_) => bad(
            "/error",
            "the error object's message is not a string, or a detail lacks a string instance_path",
            body,
        ),
    }
}

/// Check a describe_skill task (draft "describe_skill response"): completed with exactly
/// one Artifact named `describe_skill` holding exactly one Data Part. Returns that data
/// (the describe_skill result object, for [`crate::client::verify_describe_response`]).
pub fn describe_result(task: &Value) -> Result<Ending<Value>, Violation> {
    let (state, name) = state(task)?;
    if state != TaskState::Completed {
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
    if state != TaskState::Completed {
        return ending_of(task, state, name);
    }
    let skill = interface.binding.skill_id.as_str();
    let artifacts = artifacts(task);
    let primary: Vec<usize> = (0..artifacts.len())
        .filter(|&i| artifacts[i].get("name").and_then(Value::as_str) == Some(skill))
        .collect();
    let &[index] = primary.as_slice() else {
        return Err(Violation::new(
            Clause::PrimaryResult,
            "/artifacts",
            format!(
                "the completed task has {} Artifacts named after the skill, not exactly one primary result",
                primary.len()
            ),
        )
        .with_condition(Condition::OutputInvalid)
        .with_evidence(&names(artifacts)));
    };
    let at = format!("/artifacts/{index}");
    let artifact = &artifacts[index];
    let data = single_data(artifact.get("parts")).ok_or_else(|| {
        Violation::new(
            Clause::PrimaryResult,
            format!("{at}/parts"),
            "the primary result Artifact does not hold exactly one Data Part",
        )
        .with_condition(Condition::OutputInvalid)
        .with_evidence(artifact.get("parts").unwrap_or(&Value::Null))
    })?;
    if let Err(error) = interface.check_result_object(data) {
        // A schema failure carries details; a malformed result object does not.
        let clause = if error.details().is_empty() {
            Clause::PrimaryResult
        } else {
            Clause::ResultValid
        };
        let pointer = if error.details().is_empty() {
            format!("{at}/parts/0/data")
        } else {
            format!("{at}/parts/0/data/result")
        };
        return Err(Violation::from_error(clause, pointer, &error).with_evidence(data));
    }
    let mut records = Vec::new();
    for (i, artifact) in artifacts.iter().enumerate() {
        if i == index {
            continue;
        }
        let at = format!("/artifacts/{i}");
        let unusable = |pointer: String, message: &str, evidence: &Value| {
            Violation::new(Clause::SupportingRecords, pointer, message)
                .with_condition(Condition::OutputInvalid)
                .with_evidence(evidence)
        };
        let Some(kind) = artifact.get("name").and_then(Value::as_str) else {
            return Err(unusable(
                format!("{at}/name"),
                "an Artifact other than the primary result has no name (a supporting record is named after its kind)",
                artifact.get("name").unwrap_or(&Value::Null),
            ));
        };
        let record = single_data(artifact.get("parts")).ok_or_else(|| {
            unusable(
                format!("{at}/parts"),
                "a supporting-record Artifact does not hold exactly one Data Part",
                artifact.get("parts").unwrap_or(&Value::Null),
            )
        })?;
        if let Err(error) = interface.check_record(kind, record) {
            let pointer = if interface.record_schema(kind).is_none() {
                format!("{at}/name")
            } else {
                format!("{at}/parts/0/data")
            };
            let evidence = if interface.record_schema(kind).is_none() {
                json!(kind)
            } else {
                record.clone()
            };
            return Err(
                Violation::from_error(Clause::SupportingRecords, pointer, &error)
                    .with_evidence(&evidence),
            );
        }
        records.push(Record {
            artifact_id: text(artifact, "artifactId"),
            kind: kind.to_string(),
            record: record.clone(),
        });
    }
    Ok(Ending::Completed(Delivered {
        result: data["result"].clone(),
        result_artifact_id: text(artifact, "artifactId"),
        records,
    }))
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
/// Artifact updates as A2A defines them: an update with `append: true` extends the
/// parts of the Artifact with the same artifactId; any other replaces it. Version 1.0
/// validates only the assembled result, never a chunk.
#[derive(Debug, Default)]
pub struct Assembly {
    task: Option<Map<String, Value>>,
    message: Option<Value>,
    events: usize,
}

impl Assembly {
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
            self.task = Some(task.clone());
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
        let list = task
            .entry("artifacts")
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(list) = list.as_array_mut() else {
            return bad("the streamed Task's artifacts is not a list");
        };
        let id = artifact.get("artifactId");
        match list.iter_mut().find(|a| a.get("artifactId") == id) {
            Some(existing) if append => {
                let parts = artifact
                    .get("parts")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                match existing.get_mut("parts").and_then(Value::as_array_mut) {
                    Some(old) => old.extend(parts),
                    None => existing["parts"] = Value::Array(parts),
                }
            }
            Some(existing) => *existing = Value::Object(artifact.clone()),
            None => list.push(Value::Object(artifact.clone())),
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
        assert_eq!(r.error.code(), Condition::InterfaceMismatch);
        let wrong_state = refused(
            "TASK_STATE_FAILED",
            json!({"error": {"code": "input_invalid"}}),
        );
        assert_eq!(violation(&wrong_state).clause, Clause::ErrorState);
        let unknown = refused("TASK_STATE_REJECTED", json!({"error": {"code": "nope"}}));
        assert_eq!(violation(&unknown).clause, Clause::ErrorObject);
        let text = json!({"id": "t", "status": {"state": "TASK_STATE_REJECTED", "message": {"parts": [{"text": "no"}]}}});
        assert_eq!(violation(&text).clause, Clause::ErrorObject);
        let canceled = json!({"id": "t", "status": {"state": "TASK_STATE_CANCELED"}});
        assert!(matches!(
            skill_result(&canceled, &interface()).unwrap(),
            Ending::Stopped { .. }
        ));
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
