//! The executor's rule set for Python: the conversions between a2a-sdk's values and
//! [`crate::agent::message`] (which Message is what) and [`crate::agent::task`] (what a
//! Task may publish), under the I-JSON rules. `skillbundle.a2a` feeds a2a-sdk's events
//! through `Bundle.route_message` and `TaskGuard` (defined with the other classes in
//! [`super`]) and does what they answer; it decides nothing itself.
//!
//! Answers are small tuples, `(verdict, payload)`, so that the adapter's dispatch stays a
//! `match` on a string:
//! - `Bundle.route_message(...)`: `("describe", skill_id)`, `("invoke", Invocation)`,
//!   `("follow_up", None)`, `("base", None)`, `("extension_required", None)`,
//!   `("not_activated", None)`, `("binding", InterfaceError)` (refuse through the binding,
//!   touch no Task: also a Part nested too deep for a2a-sdk to hold, `resource_limit_exceeded`)
//!   or `("reject", InterfaceError)` (a new Task ends in the error's state);
//! - `TaskGuard.artifact/status/message/returned`: `("hold", None)`,
//!   `("release", [artifact_id, ...])` or `("fail", InterfaceError)` (the Task fails with
//!   the error's state and object).

use super::value;
use crate::agent::message::{ExistingTask, Part, Policy, Refusal, Route};
use crate::agent::task::Verdict;
use crate::agent::Bundle;
use crate::agent::{Input, Member, Request, RequestHead, REQUEST_MEMBERS};
use crate::interface::binding::Binding;
use crate::interface::condition::{Condition, ErrorObject};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use serde_json::Value;

/// The largest integer I-JSON allows (2^53 − 1), as a double (exact).
const MAX_SAFE_INTEGER: f64 = crate::wire::json::MAX_SAFE_INTEGER as f64;

/// `skillbundle.Invocation`: a domain-skill request that passed every check — the skill,
/// the interface it names, and its arguments as validated (integral numbers as `int`).
#[pyclass(frozen, module = "skillbundle", name = "Invocation")]
pub struct PyInvocation {
    binding: Binding,
    /// The arguments as validated.
    validated: Value,
    /// `validated` as Python objects, made when first read: a domain executor that reads
    /// the request's Data Part itself never pays for them.
    arguments: PyOnceLock<Py<PyAny>>,
}

#[pymethods]
impl PyInvocation {
    #[getter]
    fn skill_id(&self) -> &str {
        &self.binding.skill_id
    }

    #[getter]
    fn skill_version(&self) -> String {
        self.binding.skill_version.to_string()
    }

    #[getter]
    fn interface_digest(&self) -> &str {
        self.binding.interface_digest.as_str()
    }

    /// The arguments as validated, integral numbers as `int` (the same object on every
    /// read).
    #[getter]
    fn arguments(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.arguments
            .get_or_try_init(py, || {
                arguments_to_python(py, &self.validated).map(Bound::unbind)
            })
            .map(|a| a.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        // The arguments are the caller's: never in a repr that may reach a log.
        format!(
            "Invocation(skill_id={:?}, skill_version={:?}, interface_digest={:?})",
            self.binding.skill_id,
            self.binding.skill_version.to_string(),
            self.binding.interface_digest.as_str()
        )
    }
}

/// A validated value as Python objects, integral numbers (within ±(2^53−1)) as `int`:
/// the A2A bindings carry every number as a double, the schema decides what it is.
fn arguments_to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.as_i64().is_none() && f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER => {
                (f as i64).into_pyobject(py)?.into_any()
            }
            _ => value::to_python(py, value)?,
        },
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(arguments_to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, arguments_to_python(py, v)?)?;
            }
            dict.into_any()
        }
        Value::Null | Value::Bool(_) | Value::String(_) => value::to_python(py, value)?,
    })
}

/// One Part's data as JSON: `None` stays `None` (a Part that is not a Data Part), `bytes`
/// are a `google.protobuf.Value` in wire form ([`super::proto`], what the adapter sends),
/// anything else a Python value ([`value::to_json`]). `Err` is why the data is not I-JSON.
pub fn part_json(
    part: &Bound<'_, PyAny>,
    max_depth: usize,
) -> PyResult<Result<Option<Value>, value::Refused>> {
    if part.is_none() {
        return Ok(Ok(None));
    }
    if let Ok(bytes) = part.cast::<PyBytes>() {
        // A protobuf Value: what a2a-sdk can carry ([`super::proto::CARRIED_DEPTH`]).
        let max_depth = max_depth.min(super::proto::CARRIED_DEPTH);
        return match super::proto::decode(bytes.as_bytes(), max_depth) {
            Ok(v) => Ok(Ok(Some(v))),
            Err(Ok(refused)) => Ok(Err(refused)),
            Err(Err(why)) => Err(PyValueError::new_err(why)),
        };
    }
    Ok(value::to_json(part, max_depth).map(Some))
}

/// The Parts' data as read: each Part's (`None` for a Part that is not a Data Part), and
/// the size read in bytes.
pub type PartsRead = (Vec<Option<Value>>, usize);

/// Each Part's data as JSON ([`part_json`]) and the size read: the wire bytes of each
/// protobuf `Value`, [`super::gil::DETACH_FROM_BYTES`] for a Part given as Python objects
/// (their size is not known without walking them; checking them releases the GIL). `Err`
/// is why one is not I-JSON: the pointer of the offending value within that Part's data,
/// and what is wrong.
pub fn parts_json(
    parts: &Bound<'_, PyAny>,
    max_depth: usize,
) -> PyResult<Result<PartsRead, value::Refused>> {
    let mut values = Vec::new();
    let mut size = 0usize;
    for part in parts.try_iter()? {
        let part = part?;
        size = size.saturating_add(match part.cast::<PyBytes>() {
            Ok(bytes) => bytes.as_bytes().len(),
            Err(_) if part.is_none() => 0,
            Err(_) => super::gil::DETACH_FROM_BYTES,
        });
        match part_json(&part, max_depth)? {
            Ok(v) => values.push(v),
            Err(refused) => return Ok(Err(refused)),
        }
    }
    Ok(Ok((values, size)))
}

/// A request Part that is not I-JSON: the library's error object for it
/// ([`crate::agent::request_not_ijson`]).
pub fn refused_request(refused: value::Refused) -> ErrorObject {
    let too_deep = matches!(refused.why, value::Refusal::TooDeep(_));
    crate::agent::request_not_ijson(&refused.pointer, &refused.why.describe(), too_deep)
}

/// What a Message is, as the Python adapter dispatches on it.
pub enum Routed {
    Describe(String),
    Invoke(PyInvocation),
    /// `follow_up`, `base`, `extension_required`, `not_activated`.
    Plain(&'static str),
    /// `binding` or `reject`, with the error object.
    Refused(&'static str, ErrorObject),
}

/// Route a Message (its Parts' data as [`parts_json`] converted them, with their
/// size) by [`Bundle::route_message`]; `task` is `(skill_id, interrupted)` of the Task it
/// is sent into.
pub fn route(
    py: Python<'_>,
    bundle: &Bundle,
    parts: Result<PartsRead, value::Refused>,
    metadata: Option<Value>,
    activated: bool,
    task: Option<(Option<String>, bool)>,
    policy: Policy,
) -> PyResult<Routed> {
    let (mut values, size) = match parts {
        Ok(v) => v,
        // Nested too deep for the SDK to hold: refused through the binding, before a Task
        // (whose history would hold the Message) is created — as the body guard refuses a
        // body beyond its depth limit.
        Err(refused) if matches!(refused.why, value::Refusal::TooDeep(_)) => {
            return Ok(Routed::Refused("binding", refused_request(refused)))
        }
        Err(refused) => return Ok(Routed::Refused("reject", refused_request(refused))),
    };
    let parts: Vec<Part<'_>> = values
        .iter()
        .map(|v| v.as_ref().map_or(Part::Other, Part::Data))
        .collect();
    let existing = task.as_ref().map(|(skill, interrupted)| ExistingTask {
        skill_id: skill.as_deref(),
        interrupted: *interrupted,
    });
    let routed = super::gil::detach_if_large(py, size, || {
        match bundle.route_message(&parts, metadata.as_ref(), activated, existing, policy) {
            Ok(Route::Request(Request::Describe { skill_id })) => {
                Ok(Ok((skill_id.to_string(), None)))
            }
            Ok(Route::Request(Request::Invoke {
                skill_id,
                arguments,
            })) => {
                // Which Part's arguments: taken from it below rather than copied.
                let at = values.iter().position(|v| {
                    v.as_ref()
                        .and_then(|v| v.get("arguments"))
                        .is_some_and(|a| std::ptr::eq(a, arguments))
                });
                Ok(Ok((skill_id.to_string(), Some(at))))
            }
            Ok(Route::FollowUp) => Ok(Err("follow_up")),
            Ok(Route::Base) => Ok(Err("base")),
            Err(Refusal::ExtensionRequired) => Ok(Err("extension_required")),
            Err(Refusal::NotActivated) => Ok(Err("not_activated")),
            Err(Refusal::Binding(e)) => Err(("binding", e)),
            Err(Refusal::Task(e)) => Err(("reject", e)),
        }
    });
    Ok(match routed {
        Ok(Ok((skill_id, None))) => Routed::Describe(skill_id),
        Ok(Ok((skill_id, Some(at)))) => {
            let arguments = at
                .and_then(|i| values[i].as_mut())
                .and_then(Value::as_object_mut)
                .and_then(|request| request.remove("arguments"))
                .expect("a checked request's arguments are a member of one of its Parts");
            let doc = bundle
                .document(&skill_id)
                .expect("a checked request names a bundle skill");
            Routed::Invoke(PyInvocation {
                binding: doc.binding(),
                validated: arguments,
                arguments: PyOnceLock::new(),
            })
        }
        Ok(Err(kind)) => Routed::Plain(kind),
        Err((kind, e)) => Routed::Refused(kind, e),
    })
}

/// The verdict for an Artifact's Parts that are not I-JSON
/// ([`crate::agent::task::output_not_ijson`]).
pub fn refused_output(refused: value::Refused) -> Verdict {
    let too_deep = matches!(refused.why, value::Refusal::TooDeep(_));
    crate::agent::task::output_not_ijson(refused.pointer, &refused.why.describe(), too_deep)
}

/// A verdict as the tuple the adapter dispatches on.
pub fn verdict<'py>(py: Python<'py>, v: Verdict) -> PyResult<Bound<'py, PyTuple>> {
    let (kind, payload) = match v {
        Verdict::Hold => ("hold", py.None().into_bound(py)),
        Verdict::Release(ids) => ("release", PyList::new(py, ids)?.into_any()),
        Verdict::Fail(e) => (
            "fail",
            super::interface_error(py, &e)
                .into_value(py)
                .into_bound(py)
                .into_any(),
        ),
    };
    PyTuple::new(py, [PyString::new(py, kind).into_any(), payload])
}

/// A condition by its wire name, if the domain code may refuse with it
/// ([`Bundle::domain_refusal`]).
pub fn domain_refusal(bundle: &Bundle, code: &str, message: &str) -> Option<ErrorObject> {
    Condition::ALL
        .iter()
        .copied()
        .find(|c| c.as_str() == code)
        .and_then(|c| bundle.domain_refusal(c, message))
}

/// The members of a skill request object held as a Python `dict` (exact, as
/// [`value::check_members`] admits), read by the walk that checks it for [`Bundle::admit`].
pub struct RequestMembers<'py> {
    members: value::Members<'py, 4>,
}

/// The members' places in [`value::Members`].
const SKILL: usize = 0;
const SKILL_VERSION: usize = 1;
const INTERFACE_DIGEST: usize = 2;
const ARGUMENTS: usize = 3;

impl<'py> RequestMembers<'py> {
    /// Check a request under the I-JSON rules ([`value::check_members`]) and read its members in
    /// the same walk; `None` when it is not a `dict`.
    pub fn check(
        request: &Bound<'py, PyAny>,
        max_depth: usize,
    ) -> Result<Option<Self>, value::Refused> {
        const NAMES: [&str; 4] = match REQUEST_MEMBERS {
            [skill, version, digest, arguments] => [*skill, *version, *digest, *arguments],
            _ => panic!("a skill request object has four members"),
        };
        const _: () = assert!(SKILL == 0 && SKILL_VERSION == 1);
        const _: () = assert!(INTERFACE_DIGEST == 2 && ARGUMENTS == 3);
        let members = value::check_members(request, max_depth, &NAMES)?;
        Ok(members.map(|members| RequestMembers { members }))
    }

    /// The `arguments` member, if present.
    pub fn arguments(&self) -> Option<&Bound<'py, PyAny>> {
        self.members.values[ARGUMENTS].as_ref()
    }

    /// The `skill` (a `str`) and `arguments` members of a request [`Bundle::admit`]
    /// admitted as an invocation.
    pub fn invocation(self) -> Option<(Bound<'py, PyString>, Bound<'py, PyAny>)> {
        let [skill, _, _, arguments] = self.members.values;
        Some((skill?.cast_into::<PyString>().ok()?, arguments?))
    }

    /// The head [`Bundle::admit`] judges, borrowing the members' text.
    pub fn head(&self) -> RequestHead<'_> {
        let member = |i: usize| match (&self.members.values[i], self.members.text(i)) {
            (None, _) => Member::Absent,
            // The text the walk read: most members.
            (Some(_), Some(text)) => Member::Str(text),
            // A `str` the walk had admitted before (read again), or another value. A lone
            // surrogate was refused by the walk.
            (Some(v), None) => match v.cast::<PyString>() {
                Ok(s) => s.to_str().map_or(Member::Other, Member::Str),
                Err(_) => Member::Other,
            },
        };
        RequestHead {
            skill: member(SKILL),
            skill_version: member(SKILL_VERSION),
            interface_digest: member(INTERFACE_DIGEST),
            has_arguments: self.arguments().is_some(),
            extra_member: self.members.others,
        }
    }
}

/// Validate arguments held as Python objects against an admitted request's input_schema,
/// in place: the verdict [`Input::verdict`] gives on the validator's errors. The objects
/// must have passed [`value::check_members`] (exact types, I-JSON numbers, bounded depth), so the
/// validator reads nothing it would judge differently from the same value as JSON.
/// `Err` only for a failure of Python itself while reading them.
pub fn validate_arguments(
    input: &Input<'_>,
    arguments: &Bound<'_, PyAny>,
) -> PyResult<Result<(), ErrorObject>> {
    let validator = match input.python_validator() {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    let node = arguments.as_borrowed();
    // The common case first, and bare: `is_valid` builds no errors, and the guard
    // `inspect` puts around a run (it surfaces what the validator could not read: a type
    // it does not know, a lone surrogate, an Enum member's value, a container changed by
    // Python code the run called) has nothing to find in what value::check_members admitted —
    // exact built-in types, UTF-8 text, numbers within I-JSON — read by a validator that
    // calls no Python code. Only a refusal, whose errors are read, runs under it.
    if validator.is_valid(node) {
        return Ok(Ok(()));
    }
    invalid_arguments(input, validator, node)
}

/// [`validate_arguments`]' verdict on arguments the validator found invalid: out of line,
/// so that the code of the common case stays compact.
#[cold]
#[inline(never)]
fn invalid_arguments(
    input: &Input<'_>,
    validator: &jsonschema::Validator<jsonschema::json::Pyo3>,
    node: pyo3::Borrowed<'_, '_, PyAny>,
) -> PyResult<Result<(), ErrorObject>> {
    jsonschema::json::inspect(node, false, || input.verdict(validator.iter_errors(node)))
}
