//! What a Task of a schema-governed skill may hold: the one rule set both sides apply.
//!
//! Draft "A2A Mapping for Interface Version 1.0", "Domain-skill invocation": on success a
//! Task holds exactly one **primary result Artifact**, named after the skill, whose
//! single Data Part is the skill result object `{"skill": <skill_id>, "result":
//! <output>}` with a `result` valid against output_schema; every other Artifact is a
//! **supporting record**, named after a kind the document declares (never the skill_id),
//! whose single Data Part validates against that kind's schema. "Machine-readable error
//! conditions": a Task that reports a condition carries, in its final status Message,
//! exactly one Data Part `{"error": {"code", "message"?, "details"?}}` whose code is one
//! of the draft's conditions, and reaches the state the draft assigns to that condition
//! (`TASK_STATE_REJECTED` or `TASK_STATE_FAILED`). The task states are A2A 1.0's.
//!
//! The agent's guard (`agent::task`, which decides what an executor may publish) and the
//! client's reader (`client::final_task`, which decides what a received Task delivered)
//! both decide these requirements here, so they cannot drift apart: each function is a
//! pure function of JSON values (A2A 1.0 JSON form) and answers with a [`Fault`] — which
//! [`Requirement`], a JSON Pointer, a fixed message that quotes nothing the peer sent,
//! and the condition the draft gives. Each side maps a fault to its own answer (the
//! guard to the error object that fails the Task, the client to a violation naming its
//! clause with evidence). The schemas themselves are the side's: it supplies them as
//! [`OutputSchemas`].

use crate::interface::condition::{Condition, Detail, Detected, ErrorObject};
use serde_json::Value;

/// The member of the skill result object naming the skill (draft: "Domain-skill
/// invocation").
pub const RESULT_OBJECT_SKILL: &str = "skill";
/// The member of the skill result object holding the domain output.
pub const RESULT_OBJECT_RESULT: &str = "result";

/// A2A 1.0's wire name for no task state (protobuf's zero value): not a [`State`] a Task
/// can be in.
pub const UNSPECIFIED_STATE: &str = "TASK_STATE_UNSPECIFIED";

/// The A2A 1.0 task states a schema-governed Task can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// `TASK_STATE_SUBMITTED`.
    Submitted,
    /// `TASK_STATE_WORKING`.
    Working,
    /// `TASK_STATE_INPUT_REQUIRED` (interrupted).
    InputRequired,
    /// `TASK_STATE_AUTH_REQUIRED` (interrupted).
    AuthRequired,
    /// `TASK_STATE_COMPLETED` (terminal).
    Completed,
    /// `TASK_STATE_FAILED` (terminal).
    Failed,
    /// `TASK_STATE_CANCELED` (terminal).
    Canceled,
    /// `TASK_STATE_REJECTED` (terminal).
    Rejected,
}

impl State {
    /// Each state and its A2A 1.0 wire name: the one table of task-state names (the
    /// Python face, the executor, the gateway and the client read them from here).
    const WIRE: [(State, &'static str); 8] = [
        (State::Submitted, "TASK_STATE_SUBMITTED"),
        (State::Working, "TASK_STATE_WORKING"),
        (State::InputRequired, "TASK_STATE_INPUT_REQUIRED"),
        (State::AuthRequired, "TASK_STATE_AUTH_REQUIRED"),
        (State::Completed, "TASK_STATE_COMPLETED"),
        (State::Failed, "TASK_STATE_FAILED"),
        (State::Canceled, "TASK_STATE_CANCELED"),
        (State::Rejected, "TASK_STATE_REJECTED"),
    ];

    /// From the A2A 1.0 wire name (`TASK_STATE_COMPLETED`, ...).
    pub fn from_wire(name: &str) -> Option<State> {
        State::WIRE
            .iter()
            .find(|(_, wire)| *wire == name)
            .map(|(state, _)| *state)
    }

    /// The A2A 1.0 wire name (`TASK_STATE_COMPLETED`, ...).
    pub fn wire_name(self) -> &'static str {
        State::WIRE
            .iter()
            .find(|(state, _)| *state == self)
            .map(|(_, wire)| *wire)
            .expect("every state has a wire name")
    }

    /// The state an A2A task state is (`None` for `Unspecified`, which is no state).
    pub fn from_task_state(state: &a2a_types::TaskState) -> Option<State> {
        use a2a_types::TaskState as T;
        Some(match state {
            T::Unspecified => return None,
            T::Submitted => State::Submitted,
            T::Working => State::Working,
            T::InputRequired => State::InputRequired,
            T::AuthRequired => State::AuthRequired,
            T::Completed => State::Completed,
            T::Failed => State::Failed,
            T::Canceled => State::Canceled,
            T::Rejected => State::Rejected,
        })
    }

    /// The Task waits for the caller (input or authorization).
    pub fn is_interrupted(self) -> bool {
        matches!(self, State::InputRequired | State::AuthRequired)
    }

    /// The Task has ended.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            State::Completed | State::Failed | State::Canceled | State::Rejected
        )
    }

    /// A final state in which a Task reports a condition: rejected or failed.
    pub fn is_refusal(self) -> bool {
        matches!(self, State::Rejected | State::Failed)
    }

    /// Where a condition reported in this state was detected: before acceptance for
    /// a rejection, during processing for a failure (draft: "A remote Task MUST reach
    /// TASK_STATE_REJECTED when the request is understood but is not accepted ...").
    fn detected(self) -> Option<Detected> {
        match self {
            State::Rejected => Some(Detected::BeforeAcceptance),
            State::Failed => Some(Detected::DuringProcessing),
            _ => None,
        }
    }
}

/// The draft requirement a [`Fault`] breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Requirement {
    /// Exactly one primary result Artifact, named after the skill, with a single Data
    /// Part holding the skill result object.
    PrimaryResult,
    /// The result value validates against output_schema.
    ResultValid,
    /// Every other Artifact is a declared record kind, one Data Part, valid.
    SupportingRecord,
    /// A reported condition is one Data Part `{"error": {"code", ...}}` with a listed code.
    ErrorObject,
    /// A reported condition ends the Task in the state the draft assigns to it.
    ErrorState,
    /// An Artifact update that appends appends to the Artifact of its artifactId
    /// delivered before, and names no other; an Artifact delivered whole does not
    /// change ([`artifact_update`]).
    ArtifactUpdate,
}

/// A requirement a Task breaks: which, where, and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// The requirement.
    pub requirement: Requirement,
    /// A JSON Pointer into the value the function was given (an Artifact list, an
    /// Artifact, a Task's status), to the offending member.
    pub pointer: String,
    /// The condition the draft gives the output (`output_invalid` for unusable
    /// Artifacts); `None` for a malformed report of a condition, which has none.
    pub condition: Option<Condition>,
    /// What is wrong, in fixed words: the skill's own names at most, never a value.
    pub message: String,
    /// For a value that does not validate: the validator's details, with instance paths
    /// relative to that value (draft: `details` of `output_invalid`).
    pub details: Vec<Detail>,
}

impl Fault {
    fn new(
        requirement: Requirement,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        let condition = match requirement {
            Requirement::ErrorObject | Requirement::ErrorState => None,
            _ => Some(Condition::OutputInvalid),
        };
        Fault {
            requirement,
            pointer: pointer.into(),
            condition,
            message: message.into(),
            details: Vec::new(),
        }
    }

    /// A value the side's schemas refused (their error object's message and details).
    fn refused(requirement: Requirement, pointer: String, error: ErrorObject) -> Self {
        Fault {
            requirement,
            pointer,
            condition: Some(error.code()),
            message: error.message().to_string(),
            details: error.details().to_vec(),
        }
    }

    /// The same fault, its pointer prefixed by `prefix` (a pointer to where the checked
    /// value sits in a larger one).
    pub fn within(mut self, prefix: &str) -> Self {
        self.pointer.insert_str(0, prefix);
        self
    }

    /// The error object an agent fails its Task with for this fault: its condition
    /// (`output_invalid` when the fault has none: the agent's own output is what is
    /// wrong), detected as `detected`, with the fault's message and details.
    pub fn error(&self, detected: Detected) -> ErrorObject {
        ErrorObject::new(
            self.condition.unwrap_or(Condition::OutputInvalid),
            detected,
            self.message.clone(),
        )
        .with_details(self.details.clone())
    }
}

/// The schemas of one skill's output, as a side holds them (the agent's loaded bundle,
/// the client's verified interface). Their checks answer in that side's error objects.
pub trait OutputSchemas {
    /// The skill whose Task this is.
    fn skill_id(&self) -> &str;
    /// The supporting-record kinds the skill's document declares, in document order.
    fn record_kinds(&self) -> Vec<&str>;
    /// Validate a domain output against output_schema (`output_invalid` with details).
    fn check_result(&self, result: &Value) -> Result<(), ErrorObject>;
    /// Validate a record of a declared `kind` against that kind's schema.
    fn check_record(&self, kind: &str, record: &Value) -> Result<(), ErrorObject>;
}

/// The data of a Part list that is exactly one Data Part (`None` for a Part of another
/// kind, as each side reads Parts).
pub fn single_data<'a, I>(parts: I) -> Option<&'a Value>
where
    I: IntoIterator<Item = Option<&'a Value>>,
{
    let mut parts = parts.into_iter();
    match (parts.next(), parts.next()) {
        (Some(Some(data)), None) => Some(data),
        _ => None,
    }
}

/// The data of each Part of an A2A 1.0 JSON Part list (`None` for a Part that is not a
/// Data Part), or `None` when `parts` is not a list.
pub fn parts_data(parts: Option<&Value>) -> Option<Vec<Option<&Value>>> {
    let parts = parts?.as_array()?;
    Some(parts.iter().map(|p| p.get("data")).collect())
}

/// What an Artifact of a skill's Task is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArtifactRole<'a> {
    /// Named after the skill: the primary result Artifact.
    PrimaryResult,
    /// Named after a kind the document declares.
    Record(&'a str),
}

/// What the Artifact named `name` is: the primary result, a record of a declared kind —
/// or neither, which no Task may hold (pointer `/name`, relative to the Artifact). An
/// absent or empty name is neither.
pub fn artifact_role<'a>(
    schemas: &impl OutputSchemas,
    name: Option<&'a str>,
) -> Result<ArtifactRole<'a>, Fault> {
    let skill = schemas.skill_id();
    match name {
        Some(name) if name == skill => Ok(ArtifactRole::PrimaryResult),
        None | Some("") => Err(Fault::new(
            Requirement::SupportingRecord,
            "/name",
            "an Artifact other than the primary result has no name (a supporting record is named after its kind)",
        )),
        Some(kind) => {
            let kinds = schemas.record_kinds();
            if kinds.contains(&kind) {
                return Ok(ArtifactRole::Record(kind));
            }
            Err(undeclared_kind(skill, kinds))
        }
    }
}

/// A record whose kind `skill_id` does not declare (`kinds` are the kinds it does): no
/// Task may hold it. Pointer `/name`, relative to the Artifact.
pub fn undeclared_kind(skill_id: &str, mut kinds: Vec<&str>) -> Fault {
    kinds.sort_unstable();
    let declared = if kinds.is_empty() {
        "none".to_string()
    } else {
        kinds.join(", ")
    };
    Fault::new(
        Requirement::SupportingRecord,
        "/name",
        format!("the record's kind is not one {skill_id} declares (declared: {declared})"),
    )
}

/// The `result` of a skill result object `{"skill": <skill_id>, "result": <output>}`,
/// read from the data of the primary result Artifact's single Data Part. Its shape only:
/// the result is not validated here (see [`check_result_object`]). Pointer: `""`, the
/// object.
pub fn result_of<'a>(skill_id: &str, object: &'a Value) -> Result<&'a Value, Fault> {
    let shape = |message: &str| Err(Fault::new(Requirement::PrimaryResult, "", message));
    let Some(members) = object.as_object() else {
        return shape("the primary result is not a skill result object (a JSON object)");
    };
    if members.get(RESULT_OBJECT_SKILL).and_then(Value::as_str) != Some(skill_id) {
        return shape("the skill result object's \"skill\" is not the invoked skill");
    }
    if members
        .keys()
        .any(|k| k != RESULT_OBJECT_SKILL && k != RESULT_OBJECT_RESULT)
    {
        return shape("the skill result object has a member other than skill and result");
    }
    match members.get(RESULT_OBJECT_RESULT) {
        Some(result) => Ok(result),
        None => shape("the skill result object has no \"result\""),
    }
}

/// The skill result object `{"skill": <skill_id>, "result": <output>}`.
pub fn result_object(skill_id: &str, output: Value) -> Value {
    let mut object = serde_json::Map::with_capacity(2);
    object.insert(RESULT_OBJECT_SKILL.to_string(), Value::from(skill_id));
    object.insert(RESULT_OBJECT_RESULT.to_string(), output);
    Value::Object(object)
}

/// Check a skill result object: its shape ([`result_of`]), then its `result` against
/// output_schema (a [`Requirement::ResultValid`] fault at `/result`, whose details
/// point into the result). Returns the result.
pub fn check_result_object<'a>(
    schemas: &impl OutputSchemas,
    object: &'a Value,
) -> Result<&'a Value, Fault> {
    let result = result_of(schemas.skill_id(), object)?;
    schemas
        .check_result(result)
        .map_err(|e| Fault::refused(Requirement::ResultValid, "/result".into(), e))?;
    Ok(result)
}

/// What one Artifact of a final Task delivers, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Checked<'a> {
    /// The primary result: the skill result object's `result`, valid.
    Result(&'a Value),
    /// A supporting record of a declared kind, valid.
    Record {
        /// The record's declared kind.
        kind: &'a str,
        /// The record.
        record: &'a Value,
    },
}

/// Check one whole Artifact of a skill's Task, its name and the data of its Parts
/// (`None` for a Part that is not a Data Part): the primary result or a valid record of
/// a declared kind, each with a single Data Part. Pointers are relative to the Artifact.
pub fn check_artifact<'a>(
    schemas: &impl OutputSchemas,
    name: Option<&'a str>,
    parts: &[Option<&'a Value>],
) -> Result<Checked<'a>, Fault> {
    let role = artifact_role(schemas, name)?;
    let data = single_data(parts.iter().copied());
    match role {
        ArtifactRole::PrimaryResult => {
            let data = data.ok_or_else(|| {
                Fault::new(
                    Requirement::PrimaryResult,
                    "/parts",
                    "the primary result Artifact does not hold exactly one Data Part",
                )
            })?;
            check_result_object(schemas, data)
                .map(Checked::Result)
                .map_err(|f| f.within("/parts/0/data"))
        }
        ArtifactRole::Record(kind) => {
            let record = data.ok_or_else(|| {
                Fault::new(
                    Requirement::SupportingRecord,
                    "/parts",
                    format!("the {kind} record Artifact does not hold exactly one Part, a Data Part holding the record"),
                )
            })?;
            schemas.check_record(kind, record).map_err(|e| {
                Fault::refused(Requirement::SupportingRecord, "/parts/0/data".into(), e)
            })?;
            Ok(Checked::Record { kind, record })
        }
    }
}

/// "Exactly one primary result Artifact": a completed Task with `count` Artifacts named
/// after the skill. Pointer `""`, the Artifact list.
pub fn primary_count(skill_id: &str, count: usize) -> Result<(), Fault> {
    match count {
        1 => Ok(()),
        0 => Err(Fault::new(
            Requirement::PrimaryResult,
            "",
            format!(
                "the Task has no valid primary result: exactly one Artifact named {skill_id} whose single Data Part is the skill result object {{\"skill\": \"{skill_id}\", \"result\": <output>}}"
            ),
        )),
        n => Err(Fault::new(
            Requirement::PrimaryResult,
            "",
            format!(
                "the Task has {n} primary result Artifacts (named {skill_id}): exactly one is allowed"
            ),
        )),
    }
}

/// One Artifact of a final Task, as a side knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactView<'a> {
    /// Its name.
    pub name: Option<&'a str>,
    /// The data of each of its Parts (`None` for a Part that is not a Data Part), or
    /// `None` for an Artifact already checked whole and published.
    pub parts: Option<Vec<Option<&'a Value>>>,
}

/// What a completed Task's Artifacts deliver: the index of the primary result, its
/// result (when it was checked here) and each record checked here, with its index.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery<'a> {
    /// The index of the primary result Artifact.
    pub primary: usize,
    /// Its result, when it was checked here.
    pub result: Option<&'a Value>,
    /// Each record checked here: Artifact index, kind, record.
    pub records: Vec<(usize, &'a str, &'a Value)>,
}

/// Check the Artifacts of a completed Task (draft "Domain-skill invocation"): exactly
/// one primary result Artifact, then that Artifact, then every other one, in order.
/// Pointers are relative to the Artifact list (`/2/parts/0/data/result`).
pub fn completed_artifacts<'a>(
    schemas: &impl OutputSchemas,
    artifacts: &[ArtifactView<'a>],
) -> Result<Delivery<'a>, Fault> {
    let skill = schemas.skill_id();
    let primaries: Vec<usize> = (0..artifacts.len())
        .filter(|&i| artifacts[i].name == Some(skill))
        .collect();
    primary_count(skill, primaries.len())?;
    let primary = primaries[0];
    let mut delivery = Delivery {
        primary,
        result: None,
        records: Vec::new(),
    };
    let order = std::iter::once(primary).chain((0..artifacts.len()).filter(|&i| i != primary));
    for i in order {
        let Some(parts) = &artifacts[i].parts else {
            continue;
        };
        match check_artifact(schemas, artifacts[i].name, parts)
            .map_err(|f| f.within(&format!("/{i}")))?
        {
            Checked::Result(result) => delivery.result = Some(result),
            Checked::Record { kind, record } => delivery.records.push((i, kind, record)),
        }
    }
    Ok(delivery)
}

/// What an Artifact update does to the Artifact of its artifactId delivered so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// None was delivered: the update starts it.
    Start,
    /// One was, not yet whole, and the update does not append: it replaces that
    /// Artifact.
    Replace,
    /// One was, and the update appends: its Parts follow that Artifact's Parts, whose
    /// name stays.
    Append,
}

/// The Artifact of an artifactId delivered so far, as an update meets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started<'a> {
    /// Its name (`""` for one without a name).
    pub name: &'a str,
    /// An update with `lastChunk` delivered it: it is whole.
    pub complete: bool,
}

/// How an Artifact update (A2A 1.0 `TaskArtifactUpdateEvent`: its `append`, and its
/// Artifact's artifactId and name) applies to what was delivered before: the one
/// reading of chunks the agent's guard, the client's stream assembly and the gateway
/// share. Draft "Domain-skill invocation": "For streaming, A2A governs Artifact-update
/// delivery through artifactId, append, and lastChunk. When append is true, the event
/// content is appended to previously delivered content for the same Artifact. This
/// profile does not assign additional semantics to append when it is false or absent"
/// (A2A 1.0: appended "to a previously sent artifact with the same ID").
///
/// `started` is the Artifact of this artifactId delivered so far, `None` when none
/// was; `name` is the update's. The rule:
/// - An Artifact delivered whole does not change afterwards: any update of it, an
///   append or a replacement, breaks the rule (pointer `/artifact/artifactId`). The
///   draft's intermediate-exchange example: "Complete primary result Artifact update
///   ... lastChunk=true. This final update contains the complete primary result", and
///   a complete supporting record is validated (and may be shown, and acted on) on its
///   own; what was delivered complete is what the Task holds.
/// - An append needs previously delivered content: one for an Artifact never started
///   breaks the rule (`/append`). An append continues that Artifact: an absent or empty
///   name keeps its name, another name breaks the rule (`/artifact/name`) — the name is
///   what tells the primary result from a record.
/// - Without `append`, the update starts the Artifact, or replaces one not yet whole.
///
/// Pointers are relative to the update.
pub fn artifact_update(
    started: Option<Started>,
    name: Option<&str>,
    append: bool,
) -> Result<Update, Fault> {
    match (started, append) {
        (Some(Started { complete: true, .. }), _) => Err(Fault::new(
            Requirement::ArtifactUpdate,
            "/artifact/artifactId",
            "an Artifact update changes an Artifact already delivered whole (lastChunk)",
        )),
        (None, false) => Ok(Update::Start),
        (Some(_), false) => Ok(Update::Replace),
        (None, true) => Err(Fault::new(
            Requirement::ArtifactUpdate,
            "/append",
            "an Artifact update appends to an Artifact that was never started",
        )),
        (Some(started), true) => match name {
            Some(name) if !name.is_empty() && name != started.name => Err(Fault::new(
                Requirement::ArtifactUpdate,
                "/artifact/name",
                "an Artifact update names another Artifact than the one it appends to",
            )),
            _ => Ok(Update::Append),
        },
    }
}

/// Whether the draft lets a Task report `code` by ending in `state`: a condition found
/// before acceptance rejects, one met while processing fails
/// ([`ErrorObject::task_state`]).
pub fn condition_ends_in(code: Condition, state: State) -> bool {
    let Some(detected) = state.detected() else {
        return false;
    };
    let reached = ErrorObject::new(code, detected, "").task_state();
    reached.as_ref().and_then(State::from_task_state) == Some(state)
}

/// The states the draft lets a Task report `code` in.
pub fn states_for(code: Condition) -> Vec<State> {
    [State::Rejected, State::Failed]
        .into_iter()
        .filter(|s| condition_ends_in(code, *s))
        .collect()
}

/// Whether the data of a status Message's Parts reports a condition: some Data Part is
/// an object with an `error` member. Draft "Machine-readable error conditions": "When
/// the remote agent reports one of the conditions below through an A2A Task, the Task's
/// final status Message MUST contain exactly one Data Part" holding the error object;
/// so a status that reports one is held to that placement ([`refusal_error`]), and one
/// that reports none (a text reason, no Message) to nothing. The one reading of "reports
/// a condition": the agent's guard and the client's reader ([`status_error`]) and the
/// gateway (what it shows of a failed status, how it recognises a Task it forgot) all
/// use it.
pub fn reports_condition(parts: &[Option<&Value>]) -> bool {
    parts
        .iter()
        .flatten()
        .any(|d| d.as_object().is_some_and(|o| o.contains_key("error")))
}

/// Read the draft's error object `{"error": {"code", "message"?, "details"?}}`: the code
/// one of the listed conditions, `message` a string, each detail with an
/// `instance_path`, no other member. Detected as `detected`. Pointers are relative to
/// the object.
pub fn error_object(data: &Value, detected: Detected) -> Result<ErrorObject, Fault> {
    let bad =
        |pointer: &str, message: &str| Err(Fault::new(Requirement::ErrorObject, pointer, message));
    let Some(body) = data.get("error").filter(|e| e.is_object()) else {
        return bad("", "the Data Part is not {\"error\": {…}}");
    };
    let code = &body["code"];
    if !code.is_string() {
        return bad("/error/code", "the error object has no string code");
    }
    if serde_json::from_value::<Condition>(code.clone()).is_err() {
        return bad(
            "/error/code",
            "the error code is not one of the draft's conditions",
        );
    }
    if data.as_object().is_some_and(|o| o.len() != 1) {
        return bad("", "the error object has members other than \"error\"");
    }
    match serde_json::from_value::<ErrorObject>(data.clone()) {
        Ok(mut error) => {
            error.detected = detected;
            Ok(error)
        }
        Err(_) => bad(
            "/error",
            "the error object's message is not a string, or a detail lacks a string instance_path",
        ),
    }
}

/// The condition a rejected or failed Task (`state`) reports in its final status
/// Message, whose Parts are `parts` (the data of each Data Part), placed as the draft
/// says ("Machine-readable error conditions"): exactly one Data Part holding the draft's
/// error object ([`error_object`]), whose condition the draft assigns to `state`
/// ([`condition_ends_in`]; never so for a state other than rejected or failed).
/// Pointers are relative to the Task's status (`/message/parts/0/data/error/code`,
/// `/state`).
pub fn refusal_error(state: State, parts: &[Option<&Value>]) -> Result<ErrorObject, Fault> {
    let data = single_data(parts.iter().copied()).ok_or_else(|| {
        Fault::new(
            Requirement::ErrorObject,
            "/message/parts",
            "the final status Message does not hold exactly one Data Part (the draft's error object)",
        )
    })?;
    let detected = state.detected().unwrap_or(Detected::DuringProcessing);
    let error = error_object(data, detected).map_err(|f| f.within("/message/parts/0/data"))?;
    if !condition_ends_in(error.code(), state) {
        let allowed: Vec<&str> = states_for(error.code())
            .into_iter()
            .map(State::wire_name)
            .collect();
        return Err(Fault::new(
            Requirement::ErrorState,
            "/state",
            format!(
                "the task ended {} with {}, which the draft assigns to {}",
                state.wire_name(),
                error.code(),
                allowed.join(" or ")
            ),
        ));
    }
    Ok(error)
}

/// The condition a final status reports, if it reports one: in a rejected or failed
/// Task whose status Message reports a condition ([`reports_condition`]), the error
/// object as [`refusal_error`] reads it. `Ok(None)` for any other state, and for a
/// status that reports no condition (a failure with a text reason).
pub fn status_error(state: State, parts: &[Option<&Value>]) -> Result<Option<ErrorObject>, Fault> {
    if !state.is_refusal() || !reports_condition(parts) {
        return Ok(None);
    }
    refusal_error(state, parts).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A skill `s` whose result is valid when it is `true`, and whose one record kind
    /// `note` is valid when it is a string.
    struct Toy;

    impl OutputSchemas for Toy {
        fn skill_id(&self) -> &str {
            "s"
        }
        fn record_kinds(&self) -> Vec<&str> {
            vec!["note"]
        }
        fn check_result(&self, result: &Value) -> Result<(), ErrorObject> {
            let detail = Detail {
                instance_path: String::new(),
                schema_path: None,
                keyword: Some("const".into()),
                expected: None,
                actual: None,
            };
            (result == &json!(true)).then_some(()).ok_or_else(|| {
                ErrorObject::new(Condition::OutputInvalid, Detected::Client, "bad result")
                    .with_details(vec![detail])
            })
        }
        fn check_record(&self, _kind: &str, record: &Value) -> Result<(), ErrorObject> {
            record.is_string().then_some(()).ok_or_else(|| {
                ErrorObject::new(Condition::OutputInvalid, Detected::Client, "bad record")
            })
        }
    }

    fn result(value: Value) -> Value {
        json!({"skill": "s", "result": value})
    }

    fn view<'a>(name: &'a str, parts: &[&'a Value]) -> ArtifactView<'a> {
        ArtifactView {
            name: Some(name),
            parts: Some(parts.iter().map(|p| Some(*p)).collect()),
        }
    }

    fn fault(artifacts: &[ArtifactView]) -> (Requirement, String) {
        let f = completed_artifacts(&Toy, artifacts).unwrap_err();
        (f.requirement, f.pointer)
    }

    #[test]
    fn state_names_are_a2a_1_0_wire_names_both_ways() {
        use a2a_types::TaskState as T;
        let every = [
            T::Submitted,
            T::Working,
            T::InputRequired,
            T::AuthRequired,
            T::Completed,
            T::Failed,
            T::Canceled,
            T::Rejected,
        ];
        for task_state in every {
            let state = State::from_task_state(&task_state).unwrap();
            // The wire name is a2a-types' own serialization of the same state.
            assert_eq!(json!(state.wire_name()), json!(task_state));
            assert_eq!(State::from_wire(state.wire_name()), Some(state));
            assert_eq!(state.is_terminal(), task_state.is_terminal());
        }
        assert_eq!(State::from_task_state(&T::Unspecified), None);
        assert_eq!(State::from_wire("TASK_STATE_UNSPECIFIED"), None);
        assert_eq!(State::from_wire("completed"), None);
    }

    #[test]
    fn an_artifact_is_the_result_a_declared_record_or_nothing_allowed() {
        assert_eq!(
            artifact_role(&Toy, Some("s")),
            Ok(ArtifactRole::PrimaryResult)
        );
        assert_eq!(
            artifact_role(&Toy, Some("note")),
            Ok(ArtifactRole::Record("note"))
        );
        for name in [None, Some(""), Some("diary")] {
            let f = artifact_role(&Toy, name).unwrap_err();
            assert_eq!(
                (f.requirement, f.pointer.as_str(), f.condition),
                (
                    Requirement::SupportingRecord,
                    "/name",
                    Some(Condition::OutputInvalid)
                )
            );
        }
        let f = artifact_role(&Toy, Some("diary")).unwrap_err();
        assert_eq!(
            f.message,
            "the record's kind is not one s declares (declared: note)"
        );
    }

    #[test]
    fn the_result_object_has_exactly_skill_and_result() {
        assert_eq!(result_of("s", &result(json!(1))), Ok(&json!(1)));
        assert_eq!(result_object("s", json!(1)), result(json!(1)));
        for bad in [
            json!([1]),
            json!({"skill": "t", "result": 1}),
            json!({"skill": "s"}),
            json!({"skill": "s", "result": 1, "x": 2}),
        ] {
            let f = result_of("s", &bad).unwrap_err();
            assert_eq!(
                (f.requirement, f.pointer.as_str()),
                (Requirement::PrimaryResult, "")
            );
        }
        // A valid shape with an invalid result: the schema's details, at /result.
        let f = check_result_object(&Toy, &result(json!(false))).unwrap_err();
        assert_eq!(
            (f.requirement, f.pointer.as_str()),
            (Requirement::ResultValid, "/result")
        );
        assert_eq!(f.details.len(), 1);
        assert_eq!(
            f.error(Detected::DuringProcessing).task_state(),
            Some(a2a_types::TaskState::Failed)
        );
    }

    #[test]
    fn a_completed_task_holds_one_valid_result_and_valid_declared_records() {
        let good = result(json!(true));
        let note = json!("n");
        let done =
            completed_artifacts(&Toy, &[view("note", &[&note]), view("s", &[&good])]).unwrap();
        assert_eq!(done.primary, 1);
        assert_eq!(done.result, Some(&json!(true)));
        assert_eq!(done.records, vec![(0, "note", &note)]);
        // Published Artifacts count, and are not checked again.
        let published = ArtifactView {
            name: Some("s"),
            parts: None,
        };
        let done = completed_artifacts(&Toy, std::slice::from_ref(&published)).unwrap();
        assert_eq!((done.primary, done.result), (0, None));
        assert_eq!(
            fault(&[published, view("s", &[&good])]),
            (Requirement::PrimaryResult, String::new())
        );

        assert_eq!(fault(&[]), (Requirement::PrimaryResult, String::new()));
        assert_eq!(
            fault(&[view("s", &[&good]), view("s", &[&good])]),
            (Requirement::PrimaryResult, String::new())
        );
        let bad = result(json!(false));
        assert_eq!(
            fault(&[view("s", &[&bad])]),
            (Requirement::ResultValid, "/0/parts/0/data/result".into())
        );
        assert_eq!(
            fault(&[view("s", &[&good, &good])]),
            (Requirement::PrimaryResult, "/0/parts".into())
        );
        let text = ArtifactView {
            name: Some("s"),
            parts: Some(vec![Some(&good), None]),
        };
        assert_eq!(
            fault(&[text]),
            (Requirement::PrimaryResult, "/0/parts".into())
        );
        let wrong = json!({"skill": "t", "result": true});
        assert_eq!(
            fault(&[view("s", &[&wrong])]),
            (Requirement::PrimaryResult, "/0/parts/0/data".into())
        );
        assert_eq!(
            fault(&[view("s", &[&good]), view("note", &[&good])]),
            (Requirement::SupportingRecord, "/1/parts/0/data".into())
        );
        assert_eq!(
            fault(&[view("s", &[&good]), view("diary", &[&note])]),
            (Requirement::SupportingRecord, "/1/name".into())
        );
        assert_eq!(
            fault(&[view("s", &[&good]), view("note", &[])]),
            (Requirement::SupportingRecord, "/1/parts".into())
        );
        // The primary result is checked first, then the others in order.
        assert_eq!(
            fault(&[view("diary", &[&note]), view("s", &[&bad])]).0,
            Requirement::ResultValid
        );
    }

    #[test]
    fn an_append_continues_the_artifact_its_artifact_id_started() {
        let rule = |started: Option<&str>, name, append| {
            let started = started.map(|name| Started {
                name,
                complete: false,
            });
            artifact_update(started, name, append).map_err(|f| {
                assert_eq!(
                    (f.requirement, f.condition),
                    (Requirement::ArtifactUpdate, Some(Condition::OutputInvalid))
                );
                f.pointer
            })
        };
        // Without append: a new Artifact, or a replacement (of any name).
        assert_eq!(rule(None, Some("s"), false), Ok(Update::Start));
        assert_eq!(rule(None, None, false), Ok(Update::Start));
        assert_eq!(rule(Some("s"), Some("note"), false), Ok(Update::Replace));
        // An append to an Artifact never started appends to nothing.
        for name in [None, Some(""), Some("s")] {
            assert_eq!(rule(None, name, true), Err("/append".into()));
        }
        // An append keeps the started Artifact's name, or repeats it.
        for name in [None, Some(""), Some("s")] {
            assert_eq!(rule(Some("s"), name, true), Ok(Update::Append));
        }
        assert_eq!(rule(Some(""), None, true), Ok(Update::Append));
        assert_eq!(
            rule(Some("s"), Some("note"), true),
            Err("/artifact/name".into())
        );
        assert_eq!(
            rule(Some(""), Some("s"), true),
            Err("/artifact/name".into())
        );
    }

    #[test]
    fn an_artifact_delivered_whole_does_not_change() {
        let whole = Started {
            name: "s",
            complete: true,
        };
        for name in [None, Some(""), Some("s"), Some("note")] {
            for append in [false, true] {
                let f = artifact_update(Some(whole), name, append).unwrap_err();
                assert_eq!(
                    (f.requirement, f.pointer.as_str(), f.condition),
                    (
                        Requirement::ArtifactUpdate,
                        "/artifact/artifactId",
                        Some(Condition::OutputInvalid)
                    ),
                    "{name:?} {append}"
                );
                assert_eq!(
                    f.message,
                    "an Artifact update changes an Artifact already delivered whole (lastChunk)"
                );
            }
        }
    }

    #[test]
    fn each_condition_ends_in_the_state_the_draft_assigns() {
        for code in Condition::ALL {
            for (state, detected) in [
                (State::Rejected, Detected::BeforeAcceptance),
                (State::Failed, Detected::DuringProcessing),
            ] {
                let reached = ErrorObject::new(*code, detected, "").task_state();
                assert_eq!(
                    condition_ends_in(*code, state),
                    reached.as_ref().and_then(State::from_task_state) == Some(state),
                    "{code} {state:?}"
                );
            }
            assert!(!condition_ends_in(*code, State::Completed));
            assert!(!states_for(*code).is_empty(), "{code}");
        }
        assert_eq!(
            states_for(Condition::ResourceLimitExceeded),
            vec![State::Rejected, State::Failed]
        );
        assert_eq!(states_for(Condition::InputInvalid), vec![State::Rejected]);
        assert_eq!(states_for(Condition::OutputInvalid), vec![State::Failed]);
    }

    #[test]
    fn a_reported_condition_is_placed_as_the_draft_says() {
        let refused = json!({"error": {"code": "constraint_rejected", "message": "no"}});
        let error = refusal_error(State::Rejected, &[Some(&refused)]).unwrap();
        assert_eq!(error.code(), Condition::ConstraintRejected);
        assert_eq!(error.task_state(), Some(a2a_types::TaskState::Rejected));
        let limit = json!({"error": {"code": "resource_limit_exceeded"}});
        for state in [State::Rejected, State::Failed] {
            let e = refusal_error(state, &[Some(&limit)]).unwrap();
            assert_eq!(
                e.task_state().as_ref().and_then(State::from_task_state),
                Some(state)
            );
        }
        let at = |state, parts: &[Option<&Value>]| {
            let f = refusal_error(state, parts).unwrap_err();
            (f.requirement, f.pointer, f.condition)
        };
        let object = |p: &str| (Requirement::ErrorObject, p.to_string(), None);
        assert_eq!(
            at(State::Failed, &[Some(&refused)]),
            (Requirement::ErrorState, "/state".into(), None)
        );
        assert_eq!(
            at(State::Rejected, &[Some(&refused), None]),
            object("/message/parts")
        );
        assert_eq!(at(State::Rejected, &[None]), object("/message/parts"));
        assert_eq!(
            at(State::Rejected, &[Some(&json!({"x": 1}))]),
            object("/message/parts/0/data")
        );
        let cases = [
            (
                json!({"error": {"message": "m"}}),
                "/message/parts/0/data/error/code",
            ),
            (
                json!({"error": {"code": "nope"}}),
                "/message/parts/0/data/error/code",
            ),
            (
                json!({"error": {"code": "input_invalid"}, "x": 1}),
                "/message/parts/0/data",
            ),
            (
                json!({"error": {"code": "input_invalid", "message": 1}}),
                "/message/parts/0/data/error",
            ),
            (
                json!({"error": {"code": "input_invalid", "details": [{}]}}),
                "/message/parts/0/data/error",
            ),
        ];
        for (data, pointer) in cases {
            assert_eq!(
                at(State::Rejected, &[Some(&data)]),
                object(pointer),
                "{data}"
            );
        }
        // A status that reports no condition is not held to the error object's shape.
        let text = json!({"reason": "x"});
        assert_eq!(status_error(State::Failed, &[None]), Ok(None));
        assert_eq!(status_error(State::Failed, &[Some(&text)]), Ok(None));
        assert_eq!(status_error(State::Completed, &[Some(&refused)]), Ok(None));
        assert!(status_error(State::Failed, &[Some(&refused)]).is_err());
        assert!(status_error(State::Rejected, &[Some(&refused), None]).is_err());
    }
}
