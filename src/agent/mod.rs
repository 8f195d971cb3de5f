//! What a loaded bundle serves: the Agent Card entries, describe_skill, and the checks an
//! agent makes on every invocation (draft: "Agent advertisement", "describe_skill
//! response", "Domain-skill invocation", "Machine-readable error conditions").
//!
//! The order of the request checks is the draft's and matters: the skill must be
//! advertised; then the request's skill_version and interface_digest must name the
//! *currently active* Skill Interface Document — a request built against a stale document
//! is `interface_mismatch`, decided before the arguments are even looked at, so a changed
//! contract can never be applied silently; only then are the arguments validated against
//! input_schema (`input_invalid`). Results and supporting records are validated before
//! the agent reports completion (`output_invalid`, and the task then fails).
//!
//! What an A2A executor does with those checks lives in four submodules: [`body`]
//! reads a request body strictly, under the request limits, before an SDK reads it;
//! [`message`] decides which incoming Message is a skill request, a follow-up or a base
//! request; [`task`] decides what a Task may publish and when; [`interaction`] which
//! operations (streaming, returning at once, push, cancel) a skill's `interaction`
//! declaration allows. Every language binding
//! (the Python executor in `skillbundle.a2a`) only adapts its SDK's events to them.
//!
//! Every refusal is a [`ErrorObject`] in the draft's exact wire shape whose
//! [`task_state`](ErrorObject::task_state) tells the caller which A2A state to use.
//! Error details carry JSON Pointers, the schema keyword and its location, and
//! `expected`/`actual` only where they come from the schema or from the JSON type of
//! the instance: no instance value is ever echoed.
#![doc = ""]
#![doc = include_str!("../../docs/loading-a-bundle.md")]

pub mod body;
#[cfg(feature = "oci")]
pub mod fetch;
pub mod interaction;
pub mod inventory;
pub mod load;
pub mod message;
pub mod task;

pub use crate::crypto::keys::TrustedKeys;
pub use load::{Bundle, SignatureStatus};

use crate::interface::condition::{Condition, Detail, Detected, ErrorObject};
use crate::interface::{Document, DESCRIBE_SKILL};
use crate::schema::validator::Governed;
use a2a_types::{AgentExtension, AgentSkill};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use load::LoadedSkill;
use serde_json::{json, Value};

/// At most this many entries in an error's `details` (the rest are counted in the
/// message): a hostile instance cannot make the error response arbitrarily large.
pub const MAX_ERROR_DETAILS: usize = 16;

/// The members a skill request object may carry (draft "Domain-skill invocation",
/// "describe_skill request"): any other member makes the request `input_invalid`.
pub const REQUEST_MEMBERS: &[&str] = &["skill", "skill_version", "interface_digest", "arguments"];

/// A skill request object that passed every check, ready to dispatch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Request<'a> {
    /// `{"skill":"describe_skill","arguments":{"skill_id"}}`: answer with
    /// [`Bundle::describe_skill`].
    Describe {
        /// The skill to describe.
        skill_id: &'a str,
    },
    /// A domain-skill invocation whose version and digest name the active document and
    /// whose arguments conform to its input_schema.
    Invoke {
        /// The skill invoked.
        skill_id: &'a str,
        /// Its `arguments`, valid against the skill's input_schema.
        arguments: &'a Value,
    },
}

/// A member of a skill request object, as the checks before the arguments see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Member<'a> {
    /// No such member.
    Absent,
    /// A string member, by its value.
    Str(&'a str),
    /// Present, but not a string.
    Other,
}

impl<'a> Member<'a> {
    fn of(value: Option<&'a Value>) -> Self {
        match value {
            None => Member::Absent,
            Some(Value::String(s)) => Member::Str(s),
            Some(_) => Member::Other,
        }
    }
}

/// What [`Bundle::admit`] reads of a skill request object: everything but the
/// arguments' content. A binding that holds the request as its own objects (Python's
/// dicts) fills it in from them, so that the arguments can be validated where they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// The `skill` member.
    pub skill: Member<'a>,
    /// The `skill_version` member.
    pub skill_version: Member<'a>,
    /// The `interface_digest` member.
    pub interface_digest: Member<'a>,
    /// Whether an `arguments` member is present (of whatever type).
    pub has_arguments: bool,
    /// Whether any member other than [`REQUEST_MEMBERS`] is present.
    pub extra_member: bool,
}

impl<'a> RequestHead<'a> {
    /// The head of a request held as a JSON value; `None` when it is not an object.
    pub fn of(request: &'a Value) -> Option<Self> {
        let members = request.as_object()?;
        Some(RequestHead {
            skill: Member::of(members.get("skill")),
            skill_version: Member::of(members.get("skill_version")),
            interface_digest: Member::of(members.get("interface_digest")),
            has_arguments: members.contains_key("arguments"),
            extra_member: members
                .keys()
                .any(|k| !REQUEST_MEMBERS.contains(&k.as_str())),
        })
    }
}

/// A request [`Bundle::admit`] let through to its arguments.
pub enum Admitted<'b> {
    /// describe_skill: [`Bundle::check_describe`] checks its arguments.
    Describe,
    /// A domain skill whose version and digest are the active ones: its arguments are
    /// validated against its input_schema ([`Input`]).
    Invoke(Input<'b>),
}

/// The input_schema an admitted domain-skill request's arguments must conform to.
pub struct Input<'b> {
    skill: &'b LoadedSkill,
}

impl<'b> Input<'b> {
    /// The skill the request invokes.
    pub fn skill_id(&self) -> &'b str {
        &self.skill.document.skill_id
    }

    /// The skill's active Skill Interface Document.
    pub fn document(&self) -> &'b Document {
        &self.skill.document
    }

    /// Validate arguments held as a JSON value (`input_invalid`, or
    /// `resource_limit_exceeded` when nested too deep).
    pub fn validate(&self, arguments: &Value) -> Result<(), ErrorObject> {
        validate(
            self.skill.input(),
            arguments,
            Condition::InputInvalid,
            Detected::BeforeAcceptance,
            || self.summary(),
        )
    }

    /// The input_schema compiled for Python objects read in place; the error is the one
    /// [`Input::validate`] gives for a schema that does not compile.
    #[cfg(feature = "python")]
    pub fn python_validator(
        &self,
    ) -> Result<&'b jsonschema::Validator<jsonschema::json::Pyo3>, ErrorObject> {
        self.skill
            .input()
            .python_validator()
            .map_err(|_| uncompiled(Detected::BeforeAcceptance))
    }

    /// The verdict on arguments a validator of the input_schema judged elsewhere (a
    /// binding's `Input::python_validator`): its errors, none when they are valid, make
    /// the same `input_invalid` error object [`Input::validate`] makes.
    pub fn verdict<'i>(
        &self,
        errors: impl Iterator<Item = jsonschema::ValidationError<'i>>,
    ) -> Result<(), ErrorObject> {
        refusal(
            errors,
            Condition::InputInvalid,
            Detected::BeforeAcceptance,
            || self.summary(),
        )
    }

    fn summary(&self) -> String {
        let d = &self.skill.document;
        format!(
            "the arguments do not conform to the input_schema of {} {}",
            d.skill_id, d.skill_version
        )
    }
}

impl Bundle {
    /// The schema-interface extension for the Agent Card's `capabilities.extensions`, as
    /// the bundle signs it: `interface_version` and each skill's binding. The card merge
    /// ([`crate::card::a2a::merge_card`]) adds each skill's capability descriptors to it.
    pub fn extension(&self) -> &AgentExtension {
        &self.extension
    }

    /// The AgentSkill entries for the Agent Card's `skills`: describe_skill first, then
    /// every skill of the bundle.
    pub fn agent_skills(&self) -> &[AgentSkill] {
        &self.agent_skills
    }

    /// The Agent Card fragment `{"capabilities":{"extensions":[…]},"skills":[…]}` as
    /// the bundle carries it.
    pub fn card_fragment(&self) -> &Value {
        &self.fragment
    }

    /// The active Skill Interface Document of `skill_id`, typed, if the bundle has it.
    pub fn document(&self, skill_id: &str) -> Option<&Document> {
        self.skills.get(skill_id).map(|s| &s.document)
    }

    /// The active Skill Interface Document of `skill_id` as a value, if the bundle has
    /// it. Built from the typed [`Bundle::document`] on each call (a loaded bundle keeps
    /// no trees: each inline schema is held as its canonical bytes).
    pub fn interface(&self, skill_id: &str) -> Option<Value> {
        self.document(skill_id).map(Document::to_value)
    }

    /// The describe_skill result object for `skill_id`:
    /// `{"skill":"describe_skill","result":{"interface_digest","interface"}}` — the
    /// data value of the single Data Part of the `describe_skill` Artifact.
    pub fn describe_skill(&self, skill_id: &str) -> Result<Value, ErrorObject> {
        let skill = self.skill(skill_id, Detected::BeforeAcceptance)?;
        Ok(json!({
            "skill": DESCRIBE_SKILL,
            "result": {
                "interface_digest": skill.document.digest.as_str(),
                "interface": skill.document.to_value(),
            }
        }))
    }

    /// Check a skill request object (the data value of the request Message's single
    /// Data Part), in the draft's order: skill advertised (`skill_not_advertised`);
    /// for a domain skill, skill_version and interface_digest equal to the active
    /// document's (`interface_mismatch`), then arguments valid against input_schema
    /// (`input_invalid`). A describe_skill request needs `arguments: {"skill_id"}` naming
    /// an advertised skill, and no `skill_version` or `interface_digest` (the draft: the
    /// request "does not carry … skill_version … or another in-band negotiation
    /// parameter"). The draft fixes the request object's members, so any member other
    /// than [`REQUEST_MEMBERS`] is `input_invalid`, as is a request that is not an object
    /// or has no string `skill` (it can name no skill, so it cannot be
    /// `skill_not_advertised`), and a describe_skill request for `describe_skill` itself.
    /// No message repeats anything the caller sent: member names and values appear only
    /// as JSON Pointers in `details`.
    ///
    /// The checks before the arguments are [`Bundle::admit`]'s, which a language binding
    /// calls itself to validate arguments it holds as its own objects ([`Admitted`]).
    pub fn check_request<'a>(&'a self, request: &'a Value) -> Result<Request<'a>, ErrorObject> {
        let head = RequestHead::of(request);
        match self.admit(head.as_ref())? {
            Admitted::Describe => {
                let skill_id = self.check_describe(request.get("arguments"))?;
                Ok(Request::Describe { skill_id })
            }
            Admitted::Invoke(input) => {
                // admit() saw the member.
                let arguments = &request["arguments"];
                input.validate(arguments)?;
                Ok(Request::Invoke {
                    skill_id: input.skill_id(),
                    arguments,
                })
            }
        }
    }

    /// The checks of a skill request object that come before its arguments
    /// ([`Bundle::check_request`] has the order and the rules); `head` is `None` when the
    /// request is not a JSON object. A describe_skill request's arguments are then
    /// checked by [`Bundle::check_describe`], a domain skill's by [`Input`].
    pub fn admit(&self, head: Option<&RequestHead<'_>>) -> Result<Admitted<'_>, ErrorObject> {
        let stage = Detected::BeforeAcceptance;
        let refuse = |message: &str| Err(ErrorObject::new(Condition::InputInvalid, stage, message));
        let Some(head) = head else {
            return refuse(
                "the request is not a skill request object: the Data Part's data must be a JSON object",
            );
        };
        let Member::Str(skill_id) = head.skill else {
            return refuse(
                "the request is not a skill request object: it has no string \"skill\" member",
            );
        };
        let extra = || {
            refuse(
                "the skill request object has a member other than skill, skill_version, interface_digest and arguments",
            )
        };
        if skill_id == DESCRIBE_SKILL {
            if head.extra_member {
                return extra();
            }
            if head.skill_version != Member::Absent || head.interface_digest != Member::Absent {
                return refuse(
                    "a describe_skill request carries no skill_version or interface_digest: interface version 1.0 defines no version negotiation",
                );
            }
            return Ok(Admitted::Describe);
        }
        let skill = self.skill(skill_id, stage)?;
        let active = &skill.document;
        if head.skill_version != Member::Str(&skill.skill_version)
            || head.interface_digest != Member::Str(active.digest.as_str())
        {
            return Err(ErrorObject::new(
                Condition::InterfaceMismatch,
                stage,
                format!(
                    "the request's skill_version or interface_digest is not the active interface's (skill_version {}, interface_digest {}); retrieve the Agent Card and call describe_skill again",
                    active.skill_version,
                    active.digest.as_str()
                ),
            ));
        }
        // After interface_mismatch: a request built against a stale interface is always
        // reported as such, whatever else is wrong with it.
        if head.extra_member {
            return extra();
        }
        if !head.has_arguments {
            return refuse(
                "the request has no \"arguments\" member: the complete domain input is required",
            );
        }
        Ok(Admitted::Invoke(Input { skill }))
    }

    /// The skill_id of an admitted describe_skill request's `arguments`, which must be
    /// exactly `{"skill_id": <string>}` naming a schema-governed skill this agent
    /// advertises.
    pub fn check_describe<'a>(&self, arguments: Option<&'a Value>) -> Result<&'a str, ErrorObject> {
        let target = describe_arguments(arguments)?;
        self.skill(target, Detected::BeforeAcceptance)?;
        Ok(target)
    }

    /// Check a request with the routing hints of the A2A capability-descriptors proposal,
    /// carried in the request Message's `metadata` as `skill_id` and `interface_id` (the
    /// descriptor id `<skill_id>@<skill_version>` the Agent Card advertises, see
    /// [`crate::card::a2a::with_descriptors`]). Hints are advisory, but never contradict: a
    /// `skill_id` other than the request's `skill`, or an `interface_id` of another skill
    /// or version than the request names, is `interface_mismatch`; an `interface_id` no
    /// advertised interface has is rejected as `skill_not_advertised` (the proposal lets
    /// the agent reject an unknown interface). A hint that is not a string is
    /// `input_invalid`. Then the request is checked as [`Bundle::check_request`] does.
    /// Messages repeat none of the hints' values.
    pub fn check_message<'a>(
        &'a self,
        request: &'a Value,
        metadata: Option<&Value>,
    ) -> Result<Request<'a>, ErrorObject> {
        let stage = Detected::BeforeAcceptance;
        let hint = |name: &str| -> Result<Option<&str>, ErrorObject> {
            match metadata.and_then(|m| m.get(name)) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(_) => Err(ErrorObject::new(
                    Condition::InputInvalid,
                    stage,
                    "a routing hint in the message metadata (skill_id, interface_id) is not a string",
                )),
            }
        };
        let skill_hint = hint("skill_id")?;
        let interface_hint = hint("interface_id")?;
        let requested = request.get("skill").and_then(Value::as_str);
        if skill_hint.is_some() && skill_hint != requested {
            return Err(ErrorObject::new(
                Condition::InterfaceMismatch,
                stage,
                "the message's routing hint skill_id names another skill than the request's \"skill\"",
            ));
        }
        if let Some(wanted) = interface_hint {
            // `<skill_id>@<skill_version>`: the skill is found by its id, not by a scan.
            let target = wanted
                .rsplit_once('@')
                .and_then(|(id, _)| self.skills.get(id))
                .map(|s| &s.document)
                .filter(|d| {
                    crate::card::a2a::interface_id(&d.skill_id, &d.skill_version.to_string())
                        == wanted
                });
            let Some(target) = target else {
                return Err(ErrorObject::new(
                    Condition::SkillNotAdvertised,
                    stage,
                    "the message's routing hint interface_id names no interface this agent advertises",
                ));
            };
            let version = request.get("skill_version").and_then(Value::as_str);
            if requested != Some(target.skill_id.as_str())
                || version != Some(target.skill_version.to_string().as_str())
            {
                return Err(ErrorObject::new(
                    Condition::InterfaceMismatch,
                    stage,
                    "the message's routing hint interface_id names another skill or version than the request",
                ));
            }
        }
        self.check_request(request)
    }

    /// Validate a domain output (the `result` member of the skill result object) against
    /// the skill's output_schema before reporting completion. `output_invalid` means the
    /// task must fail.
    pub fn check_result(&self, skill_id: &str, result: &Value) -> Result<(), ErrorObject> {
        let stage = Detected::DuringProcessing;
        let skill = self.skill(skill_id, stage)?;
        validate(
            skill.output(),
            result,
            Condition::OutputInvalid,
            stage,
            || {
                format!(
                    "the result does not conform to the output_schema of {skill_id} {}",
                    skill.document.skill_version
                )
            },
        )
    }

    /// Validate a supporting record of `kind` (the Artifact's name) against the schema
    /// the skill declares for it. A kind the skill does not declare, or a record that
    /// does not conform, is `output_invalid`: the record must not be published.
    pub fn check_record(
        &self,
        skill_id: &str,
        kind: &str,
        record: &Value,
    ) -> Result<(), ErrorObject> {
        let stage = Detected::DuringProcessing;
        let skill = self.skill(skill_id, stage)?;
        let Some(schema) = skill.record(kind) else {
            let kinds = skill.document.records().iter();
            let kinds = kinds.filter_map(|r| r.kind.as_deref()).collect();
            return Err(
                crate::interface::task_rules::undeclared_kind(skill_id, kinds).error(stage),
            );
        };
        validate(schema, record, Condition::OutputInvalid, stage, || {
            format!("the {kind} record does not conform to the schema {skill_id} declares for it")
        })
    }

    fn skill(&self, skill_id: &str, stage: Detected) -> Result<&LoadedSkill, ErrorObject> {
        self.skills.get(skill_id).ok_or_else(|| {
            if skill_id == DESCRIBE_SKILL {
                // describe_skill is advertised, but it is not a schema-governed skill:
                // asking for its interface is a malformed describe_skill input.
                let detail = Detail {
                    instance_path: "/skill_id".into(),
                    schema_path: None,
                    keyword: None,
                    expected: None,
                    actual: None,
                };
                return ErrorObject::new(
                    Condition::InputInvalid,
                    stage,
                    "describe_skill has no Skill Interface Document; name one of the schema-governed skills the extension advertises",
                )
                .with_details(vec![detail]);
            }
            ErrorObject::new(
                Condition::SkillNotAdvertised,
                stage,
                "the requested skill is not advertised by this agent",
            )
        })
    }
}

/// The skill_id of a describe_skill request's arguments, which must be exactly
/// `{"skill_id": <string>}`.
fn describe_arguments(arguments: Option<&Value>) -> Result<&str, ErrorObject> {
    let stage = Detected::BeforeAcceptance;
    let detail = |path: &str, keyword: &str, expected: Value| Detail {
        instance_path: path.to_string(),
        schema_path: None,
        keyword: Some(keyword.to_string()),
        expected: Some(expected),
        actual: None,
    };
    let fail = |message: &str, details: Vec<Detail>| {
        Err(ErrorObject::new(Condition::InputInvalid, stage, message).with_details(details))
    };
    let Some(Value::Object(map)) = arguments else {
        return fail(
            "describe_skill takes arguments {\"skill_id\": \"<advertised skill_id>\"}",
            vec![detail("", "type", json!("object"))],
        );
    };
    if let Some(extra) = map.keys().find(|k| *k != "skill_id") {
        return fail(
            "describe_skill takes only a skill_id: no version or other negotiation parameter",
            vec![detail(
                &format!("/{}", crate::wire::pointer::escape(extra)),
                "additionalProperties",
                json!(false),
            )],
        );
    }
    match map.get("skill_id") {
        Some(Value::String(id)) => Ok(id),
        Some(_) => fail(
            "describe_skill's skill_id must be a string",
            vec![detail("/skill_id", "type", json!("string"))],
        ),
        None => fail(
            "describe_skill needs the skill_id of an advertised skill",
            vec![detail("", "required", json!("skill_id"))],
        ),
    }
}

/// Validate `instance`; on failure, `code` with up to [`MAX_ERROR_DETAILS`] details.
///
/// The validator recurses along the instance, so a value nested deeper than
/// [`MAX_NESTING`](crate::schema::validator::MAX_NESTING) is refused with
/// `resource_limit_exceeded` before it is evaluated (the guard is the validator's own,
/// [`Validator::evaluate`](crate::schema::validator::Validator)): an agent checks requests on worker threads whose
/// stacks are small (2 MiB for tokio), and 20,000 levels overflowed one.
pub(crate) fn validate(
    schema: &Governed,
    instance: &Value,
    code: Condition,
    stage: Detected,
    summary: impl FnOnce() -> String,
) -> Result<(), ErrorObject> {
    // Compiled here on first use. Governance proved it compiles, so the error is not
    // expected; were it to happen, the schema is what is defective, not the instance.
    let validator = schema.validator().map_err(|_| uncompiled(stage))?;
    let max = crate::schema::validator::MAX_NESTING;
    let errors = validator.evaluate(instance).map_err(|too_deep| {
        ErrorObject::new(
            Condition::ResourceLimitExceeded,
            stage,
            format!(
                "the value is nested more than {max} levels deep, beyond what this agent validates"
            ),
        )
        .with_details(vec![Detail {
            instance_path: too_deep.pointer,
            schema_path: None,
            keyword: None,
            expected: None,
            actual: None,
        }])
    })?;
    refusal(errors, code, stage, summary)
}

/// A schema that does not compile: the schema is what is defective, not the instance.
fn uncompiled(stage: Detected) -> ErrorObject {
    ErrorObject::new(
        Condition::InterfaceInvalid,
        stage,
        "the schema this value is checked against could not be compiled",
    )
}

/// The error object for a validator's errors (`code`, up to [`MAX_ERROR_DETAILS`] details), or
/// `Ok` when there are none: one shape whatever representation the value was read in.
fn refusal<'i>(
    mut errors: impl Iterator<Item = jsonschema::ValidationError<'i>>,
    code: Condition,
    stage: Detected,
    summary: impl FnOnce() -> String,
) -> Result<(), ErrorObject> {
    let Some(first) = errors.next() else {
        return Ok(());
    };
    let mut details = vec![detail(&first)];
    let mut more = 0usize;
    for e in errors {
        if details.len() < MAX_ERROR_DETAILS {
            details.push(detail(&e));
        } else {
            more += 1;
            if more > 10_000 {
                break;
            }
        }
    }
    // Never the instance's text, nor its path: member names under
    // additionalProperties or patternProperties are the caller's. The schema location is
    // the schema's own (which describe_skill publishes); the instance path is in details.
    let mut message = format!(
        "{}: the value at details[0].instance_path fails `{}` (schema location {})",
        summary(),
        first.kind().keyword(),
        match first.schema_path().as_str() {
            "" => "/",
            at => at,
        }
    );
    let total = details.len() + more;
    if total > 1 {
        message.push_str(&format!("; {} problems in all", total));
    }
    Err(ErrorObject::new(code, stage, message).with_details(details))
}

/// One detail: pointers and keyword always; `expected` from the schema; `actual` only
/// as a JSON type name.
fn detail(e: &jsonschema::ValidationError<'_>) -> Detail {
    let (expected, actual) = match e.kind() {
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => json!(t.as_str()),
                TypeKind::Multiple(set) => {
                    json!(set.iter().map(|t| t.as_str()).collect::<Vec<_>>())
                }
            };
            (Some(expected), Some(json!(json_type(e.instance()))))
        }
        ValidationErrorKind::Required { property } => (Some(property.clone()), None),
        ValidationErrorKind::Enum { options } => (Some((**options).clone()), None),
        ValidationErrorKind::Constant { expected_value } => {
            (Some((**expected_value).clone()), None)
        }
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => (Some(limit.clone()), None),
        ValidationErrorKind::MinLength { limit }
        | ValidationErrorKind::MaxLength { limit }
        | ValidationErrorKind::MinItems { limit }
        | ValidationErrorKind::MaxItems { limit }
        | ValidationErrorKind::MinProperties { limit }
        | ValidationErrorKind::MaxProperties { limit } => (Some(json!(limit)), None),
        ValidationErrorKind::Format { format } => (Some(json!(format)), None),
        ValidationErrorKind::Pattern { pattern } => (Some(json!(pattern)), None),
        _ => (None, None),
    };
    Detail {
        instance_path: e.instance_path().to_string(),
        schema_path: Some(e.schema_path().to_string()),
        keyword: Some(e.kind().keyword().to_string()),
        expected,
        actual,
    }
}

/// The JSON Schema type name of a value (an integral number is an "integer").
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A skill request object that is not I-JSON (`why`, at `pointer` from the request
/// object's root): `input_invalid` (`resource_limit_exceeded` when nested too deep),
/// detected before acceptance. Inside `arguments` the detail's pointer is relative to
/// them, as every `input_invalid` detail is; outside them no pointer is given (the
/// request object itself is malformed).
pub fn request_not_ijson(pointer: &str, why: &str, too_deep: bool) -> ErrorObject {
    let inside = pointer
        .strip_prefix("/arguments")
        .filter(|rest| rest.is_empty() || rest.starts_with('/'));
    let holder = if inside.is_some() {
        "its arguments"
    } else {
        "the request object"
    };
    ErrorObject::not_ijson(
        Condition::InputInvalid,
        Detected::BeforeAcceptance,
        too_deep,
        format!("the request is not I-JSON: {holder} holds {why}"),
        inside.map(str::to_string),
    )
}

/// A bundle of the example workspace (example-skills), built unsigned once per test
/// process, for the unit tests of the agent side.
#[cfg(test)]
pub(crate) mod tests_support {
    use crate::agent::{Bundle, TrustedKeys};
    use std::path::Path;
    use std::sync::OnceLock;

    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                if entry.file_name() != "dist" {
                    copy(&entry.path(), &target);
                }
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }

    pub fn example_bundle() -> &'static Bundle {
        static BUNDLE: OnceLock<Bundle> = OnceLock::new();
        BUNDLE.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let ws = dir.path().join("ws");
            copy(
                &Path::new(env!("CARGO_MANIFEST_DIR")).join("example-skills"),
                &ws,
            );
            let built =
                crate::build::pipeline::build(&ws, &dir.path().join("dist"), &Default::default());
            let path = built.bundle.expect("the example workspace builds");
            Bundle::open_path(&path, &TrustedKeys::new(Vec::new()).and_allow_unsigned())
                .expect("the example bundle opens")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_that_is_not_ijson_is_placed_as_the_draft_places_details() {
        let why = "a value nested too deep";
        let inside = request_not_ijson("/arguments/a/0", why, false);
        assert_eq!(inside.code(), Condition::InputInvalid);
        assert_eq!(inside.details()[0].instance_path, "/a/0");
        assert_eq!(
            request_not_ijson("/arguments", why, false).details()[0].instance_path,
            ""
        );
        // A member merely named like `arguments` is outside them: no pointer.
        let outside = request_not_ijson("/argumentsX/a", why, true);
        assert_eq!(outside.code(), Condition::ResourceLimitExceeded);
        assert!(outside.details().is_empty());
        assert_eq!(outside.task_state(), Some(a2a_types::TaskState::Rejected));
        let task::Verdict::Fail(output) = task::output_not_ijson("/x".into(), why, false) else {
            panic!("not a failure")
        };
        assert_eq!(output.code(), Condition::OutputInvalid);
        assert_eq!(output.details()[0].instance_path, "/x");
        assert_eq!(output.task_state(), Some(a2a_types::TaskState::Failed));
    }
}
