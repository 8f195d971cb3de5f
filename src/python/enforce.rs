//! The executor's rule set for Python: [`crate::agent::message`] (which Message is what)
//! and [`crate::agent::task`] (what a Task may publish), with values converted under the
//! I-JSON rules. `skillbundle.a2a` feeds a2a-sdk's events through these calls and does
//! what they answer; it decides nothing itself.
//!
//! Answers are small tuples, `(verdict, payload)`, so that the adapter's dispatch stays a
//! `match` on a string:
//! - `Bundle.route_message(...)`: `("describe", skill_id)`, `("invoke", Invocation)`,
//!   `("follow_up", None)`, `("base", None)`, `("extension_required", None)`,
//!   `("not_activated", None)`, `("binding", InterfaceError)` (refuse through the binding,
//!   touch no Task) or `("reject", InterfaceError)` (a new Task ends in the error's state);
//! - `TaskGuard.artifact/status/message/returned`: `("hold", None)`,
//!   `("release", [artifact_id, ...])` or `("fail", error_object)`.

use super::{interface_error, value, PyBundle, MAX_DEPTH};
use crate::agent::message::{ExistingTask, Part, Policy, Refusal, Route};
use crate::agent::task::{Limits, State, TaskGuard, Verdict};
use crate::agent::Request;
use crate::condition::{Condition, Detail, Detected, ErrorObject};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use serde_json::Value;

/// The largest integer I-JSON allows (2^53 − 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `skillbundle.Invocation`: a domain-skill request that passed every check — the skill,
/// the interface it names, and its arguments as validated (integral numbers as `int`).
#[pyclass(frozen, module = "skillbundle", name = "Invocation")]
pub struct PyInvocation {
    #[pyo3(get)]
    skill_id: String,
    #[pyo3(get)]
    skill_version: String,
    #[pyo3(get)]
    interface_digest: String,
    #[pyo3(get)]
    arguments: Py<PyAny>,
}

#[pymethods]
impl PyInvocation {
    fn __repr__(&self) -> String {
        // The arguments are the caller's: never in a repr that may reach a log.
        format!(
            "Invocation(skill_id={:?}, skill_version={:?}, interface_digest={:?})",
            self.skill_id, self.skill_version, self.interface_digest
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

/// A Part's data as JSON, or why it is not: the pointer of the offending value within the
/// Part's data, and what is wrong.
fn part_json(part: &Bound<'_, PyAny>) -> Result<Option<Value>, value::Refused> {
    if part.is_none() {
        return Ok(None);
    }
    value::to_json(part, MAX_DEPTH).map(Some)
}

/// A request Part that is not I-JSON: `input_invalid` (`resource_limit_exceeded` when too
/// deep), its pointer relative to `arguments` when it is inside them, as every
/// `input_invalid` detail is; outside them, no pointer is given (the request object
/// itself is malformed).
pub(super) fn refused_request(refused: value::Refused) -> ErrorObject {
    let code = if matches!(refused.why, value::Refusal::TooDeep(_)) {
        Condition::ResourceLimitExceeded
    } else {
        Condition::InputInvalid
    };
    let inside = refused
        .pointer
        .strip_prefix("/arguments")
        .filter(|rest| rest.is_empty() || rest.starts_with('/'));
    let error = ErrorObject::new(
        code,
        Detected::BeforeAcceptance,
        format!(
            "the request is not I-JSON: {} holds {}",
            if inside.is_some() {
                "its arguments"
            } else {
                "the request object"
            },
            refused.why.describe()
        ),
    );
    match inside {
        Some(at) => error.with_details(vec![Detail {
            instance_path: at.to_string(),
            schema_path: None,
            keyword: None,
            expected: None,
            actual: None,
        }]),
        None => error,
    }
}

/// `Bundle.route_message`, called from `PyBundle` (see the module documentation).
#[allow(clippy::too_many_arguments)]
pub(super) fn route_message<'py>(
    py: Python<'py>,
    bundle: &PyBundle,
    parts: &Bound<'py, PyAny>,
    metadata: Option<&Bound<'py, PyAny>>,
    activated: bool,
    task: Option<(Option<String>, bool)>,
    require_extension: bool,
    base_requests: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let answer = |kind: &str, payload: Bound<'py, PyAny>| {
        PyTuple::new(py, [PyString::new(py, kind).into_any(), payload])
    };
    let none = || py.None().into_bound(py);
    let mut values = Vec::new();
    for part in parts.try_iter()? {
        match part_json(&part?) {
            Ok(v) => values.push(v),
            Err(refused) => {
                let error = interface_error(py, &refused_request(refused));
                return answer("reject", error.into_value(py).into_bound(py).into_any());
            }
        }
    }
    // Hints that are not I-JSON are no hints: the request check refuses them by type.
    let metadata = metadata
        .filter(|m| !m.is_none())
        .map(|m| value::to_json(m, MAX_DEPTH).unwrap_or(Value::Null));
    let parts: Vec<Part<'_>> = values
        .iter()
        .map(|v| v.as_ref().map_or(Part::Other, Part::Data))
        .collect();
    let policy = Policy {
        require_extension,
        base_requests,
    };
    let existing = task.as_ref().map(|(skill, interrupted)| ExistingTask {
        skill_id: skill.as_deref(),
        interrupted: *interrupted,
    });
    let b = &bundle.bundle;
    let routed = py.detach(|| {
        b.route_message(&parts, metadata.as_ref(), activated, existing, policy)
            .map(|route| match route {
                Route::Request(Request::Describe { skill_id }) => {
                    Ok((true, skill_id.to_string(), None))
                }
                Route::Request(Request::Invoke {
                    skill_id,
                    arguments,
                }) => Ok((false, skill_id.to_string(), Some(arguments.clone()))),
                Route::FollowUp => Err("follow_up"),
                Route::Base => Err("base"),
            })
    });
    match routed {
        Ok(Ok((true, skill_id, _))) => answer("describe", PyString::new(py, &skill_id).into_any()),
        Ok(Ok((false, skill_id, arguments))) => {
            let doc = b
                .document(&skill_id)
                .expect("a checked request names a bundle skill");
            let invocation = PyInvocation {
                skill_version: doc.skill_version.to_string(),
                interface_digest: doc.digest.to_string(),
                skill_id,
                arguments: arguments_to_python(py, &arguments.unwrap_or(Value::Null))?.unbind(),
            };
            answer("invoke", Bound::new(py, invocation)?.into_any())
        }
        Ok(Err(kind)) => answer(kind, none()),
        Err(Refusal::ExtensionRequired) => answer("extension_required", none()),
        Err(Refusal::NotActivated) => answer("not_activated", none()),
        Err(Refusal::Binding(e)) => answer(
            "binding",
            interface_error(py, &e)
                .into_value(py)
                .into_bound(py)
                .into_any(),
        ),
        Err(Refusal::Task(e)) => answer(
            "reject",
            interface_error(py, &e)
                .into_value(py)
                .into_bound(py)
                .into_any(),
        ),
    }
}

/// `skillbundle.TaskGuard`: the rule set for one Task of one skill
/// ([`crate::agent::task`]). Made by `Bundle.task_guard`.
#[pyclass(module = "skillbundle", name = "TaskGuard")]
pub struct PyTaskGuard {
    bundle: Py<PyBundle>,
    guard: TaskGuard,
}

pub(super) fn task_guard(
    bundle: Bound<'_, PyBundle>,
    skill_id: &str,
    max_records: usize,
    max_artifact_bytes: usize,
) -> PyResult<PyTaskGuard> {
    let limits = Limits {
        max_records,
        max_artifact_bytes,
    };
    let guard = bundle
        .get()
        .bundle
        .task_guard(skill_id, limits)
        .ok_or_else(|| PyValueError::new_err("the bundle has no skill of that skill_id"))?;
    Ok(PyTaskGuard {
        bundle: bundle.unbind(),
        guard,
    })
}

fn verdict<'py>(py: Python<'py>, v: Verdict) -> PyResult<Bound<'py, PyTuple>> {
    let (kind, payload) = match v {
        Verdict::Hold => ("hold", py.None().into_bound(py)),
        Verdict::Release(ids) => ("release", PyList::new(py, ids)?.into_any()),
        Verdict::Fail(e) => ("fail", value::to_python(py, &e.to_json())?),
    };
    PyTuple::new(py, [PyString::new(py, kind).into_any(), payload])
}

#[pymethods]
impl PyTaskGuard {
    /// The skill this Task invokes.
    #[getter]
    fn skill_id(&self) -> &str {
        self.guard.skill_id()
    }

    /// Nothing more of the Task may be published (it failed or ended).
    #[getter]
    fn finished(&self) -> bool {
        self.guard.is_finished()
    }

    /// The Task waits for the caller (input or authorization).
    #[getter]
    fn interrupted(&self) -> bool {
        self.guard.state().is_interrupted()
    }

    /// An Artifact update: `parts` holds each Part's data (`None` for a Part that is not a
    /// Data Part).
    fn artifact<'py>(
        &mut self,
        py: Python<'py>,
        artifact_id: &str,
        name: &str,
        parts: &Bound<'py, PyAny>,
        append: bool,
        last_chunk: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let mut values = Vec::new();
        for part in parts.try_iter()? {
            match part_json(&part?) {
                Ok(v) => values.push(v),
                Err(refused) => {
                    let code = if matches!(refused.why, value::Refusal::TooDeep(_)) {
                        Condition::ResourceLimitExceeded
                    } else {
                        Condition::OutputInvalid
                    };
                    let error = ErrorObject::new(
                        code,
                        Detected::DuringProcessing,
                        format!(
                            "an Artifact's data is not I-JSON: it holds {}",
                            refused.why.describe()
                        ),
                    )
                    .with_details(vec![Detail {
                        instance_path: refused.pointer,
                        schema_path: None,
                        keyword: None,
                        expected: None,
                        actual: None,
                    }]);
                    self.guard.abort();
                    return verdict(py, Verdict::Fail(error));
                }
            }
        }
        let bundle = self.bundle.get();
        let guard = &mut self.guard;
        let v = py.detach(|| {
            guard.artifact(
                &bundle.bundle,
                artifact_id,
                name,
                values,
                append,
                last_chunk,
            )
        });
        verdict(py, v)
    }

    /// A status change to `state` (an A2A 1.0 wire name, `TASK_STATE_COMPLETED`...);
    /// `parts` holds its status Message's Parts' data, if it has a Message.
    #[pyo3(signature = (state, parts = None))]
    fn status<'py>(
        &mut self,
        py: Python<'py>,
        state: &str,
        parts: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let mut values = Vec::new();
        if let Some(parts) = parts {
            for part in parts.try_iter()? {
                // A Part that is not I-JSON reports no error object of the draft's.
                values.push(part_json(&part?).unwrap_or(Some(Value::Null)));
            }
        }
        let bundle = self.bundle.get();
        let guard = &mut self.guard;
        let v = py.detach(|| guard.status_with_message(&bundle.bundle, state, &values));
        verdict(py, v)
    }

    /// The executor answered with a bare Message.
    fn message<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let v = self.guard.message(&self.bundle.get().bundle);
        verdict(py, v)
    }

    /// The executor returned.
    fn returned<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let v = self.guard.returned();
        verdict(py, v)
    }

    /// The Task fails for the agent's own reason: nothing more is published.
    fn abort(&mut self) {
        self.guard.abort();
    }

    /// An Artifact the stored Task already shows, and the Task's state (rebuilding a
    /// guard for a follow-up).
    fn adopt(&mut self, artifact_id: &str, name: &str) {
        self.guard.adopt(artifact_id, name);
    }

    /// The stored Task's state, when rebuilding a guard for it.
    fn set_state(&mut self, state: &str) {
        if let Some(s) = State::from_wire(state) {
            self.guard.set_state(s);
        }
    }
}

/// `Bundle.domain_refusal(code, message)`: the `InterfaceError` for a domain refusal.
pub(super) fn domain_refusal(
    py: Python<'_>,
    bundle: &PyBundle,
    code: &str,
    message: &str,
) -> PyResult<Py<PyAny>> {
    let condition = crate::condition::Condition::ALL
        .iter()
        .copied()
        .find(|c| c.as_str() == code);
    let error = condition
        .and_then(|c| bundle.bundle.domain_refusal(c, message))
        .ok_or_else(|| {
            PyValueError::new_err(
                "a domain refusal is constraint_rejected, authorization_failed or resource_limit_exceeded",
            )
        })?;
    Ok(interface_error(py, &error).into_value(py).into_any())
}
