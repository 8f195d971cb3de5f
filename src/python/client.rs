//! The client side for Python: the library's checks behind `skillbundle.client`.
//!
//! The Python client (`python/skillbundle/client.py`) moves bytes with a2a-sdk's own
//! client; every decision is made here, by the same functions `skillbundle call` uses:
//! [`crate::client::read_card`], [`crate::client::final_task`] and
//! [`crate::client::verify_describe_response`], [`crate::client::interface_cache`] and
//! [`crate::client::delegation`]. A broken rule raises `ProtocolViolation` (the clause, pointer
//! and bounded evidence), a rejected or failed task `SkillRefused` (the task state and the
//! agent's error object, `None` when it reported no condition), a task that stopped
//! otherwise `TaskStopped`, a condition the
//! client detects itself `InterfaceError` — all defined in `skillbundle._client_errors`.

use super::value;
use crate::client::clause::Clause;
use crate::client::delegation::{Hop, Upstream};
use crate::client::final_task::{self, Ending, Refusal, Violation};
use crate::client::interface_cache::InterfaceCache;
use crate::client::{CardAdvertisement, VerifiedInterface};
use crate::interface::binding::Binding;
use crate::interface::condition::{Condition, Detected};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};
use serde_json::{json, Value};
use std::sync::Mutex;

static VIOLATION: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static REFUSED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static STOPPED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<Bound<'py, PyType>> {
    cell.import(py, "skillbundle._client_errors", name).cloned()
}

fn violation(py: Python<'_>, v: &Violation) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let object = value::to_python(py, &serde_json::to_value(v).unwrap_or(Value::Null))?;
        let extra = json!({"section": v.clause.section(), "requirement": v.clause.text()});
        let extra = value::to_python(py, &extra)?;
        Ok(PyErr::from_value(
            class(py, &VIOLATION, "ProtocolViolation")?.call1((object, extra))?,
        ))
    };
    build().unwrap_or_else(|e| e)
}

fn refused(py: Python<'_>, r: &Refusal, describe: bool) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let error = r.error.as_ref().map_or(Value::Null, |e| e.to_json());
        Ok(PyErr::from_value(
            class(py, &REFUSED, "SkillRefused")?.call1((
                value::to_python(py, &error)?,
                r.state.clone(),
                describe,
            ))?,
        ))
    };
    build().unwrap_or_else(|e| e)
}

fn stopped(py: Python<'_>, state: &str, describe: bool) -> PyErr {
    let build = || -> PyResult<PyErr> {
        Ok(PyErr::from_value(
            class(py, &STOPPED, "TaskStopped")?.call1((state.to_string(), describe))?,
        ))
    };
    build().unwrap_or_else(|e| e)
}

fn json_arg(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    value::to_json(obj, super::MAX_DEPTH)
        .map_err(|r| super::refused_value(py, r, Condition::OutputInvalid, Detected::Client, what))
}

/// The Task of a SendMessage response in A2A 1.0 JSON form (`{"task": …}`); a bare
/// `{"message": …}` or anything else raises `ProtocolViolation` under the draft's clause
/// for that exchange (`describe-response` or `primary-result`): the mapping delivers
/// results as Artifacts of a Task.
#[pyfunction]
#[pyo3(signature = (response, *, describe))]
fn task_of<'py>(
    py: Python<'py>,
    response: &Bound<'py, PyAny>,
    describe: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let response = json_arg(py, response, "the response")?;
    let clause = if describe {
        Clause::DescribeResponse
    } else {
        Clause::PrimaryResult
    };
    match final_task::task_of(&response, clause) {
        Ok(task) => value::to_python(py, task),
        Err(v) => Err(violation(py, &v)),
    }
}

/// What an Agent Card advertises under the extension; raises `InterfaceError`
/// (`skill_not_advertised`, `unsupported_interface_version`, `interface_invalid`).
#[pyclass(frozen, module = "skillbundle", name = "CardAdvertisement")]
pub struct PyCard {
    card: CardAdvertisement,
}

#[pymethods]
impl PyCard {
    /// Read the advertisement of an Agent Card (a dict in A2A 1.0 JSON form).
    #[staticmethod]
    fn read(py: Python<'_>, card: &Bound<'_, PyAny>) -> PyResult<Self> {
        let card = json_arg(py, card, "the Agent Card")?;
        let card = crate::client::read_card(&card).map_err(|e| super::interface_error(py, &e))?;
        Ok(PyCard { card })
    }

    /// `skill_id`, `skill_version`, `interface_digest` of each advertised skill.
    #[getter]
    fn skills<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let list: Vec<Value> = self.card.skills.iter().map(Binding::to_json).collect();
        value::to_python(py, &Value::Array(list))
    }

    #[getter]
    fn describe_skill(&self) -> bool {
        self.card.describe_skill
    }

    /// Whether the card marks the extension `required: true`.
    #[getter]
    fn extension_required(&self) -> bool {
        self.card.extension_required
    }

    /// The describe_skill request object for `skill_id`; raises `InterfaceError`
    /// (`skill_not_advertised`) when the card does not advertise both.
    fn describe_request<'py>(
        &self,
        py: Python<'py>,
        skill_id: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = self
            .card
            .describe_request(skill_id)
            .map_err(|e| super::interface_error(py, &e))?;
        value::to_python(py, &request)
    }

    /// Check a describe_skill Task (A2A 1.0 JSON form) and verify the document it
    /// returned against this card's binding for `skill_id`.
    fn verify_describe(
        &self,
        py: Python<'_>,
        skill_id: &str,
        task: &Bound<'_, PyAny>,
    ) -> PyResult<PyInterface> {
        let selected = self
            .card
            .select(skill_id)
            .map_err(|e| super::interface_error(py, &e))?
            .clone();
        let task = json_arg(py, task, "the describe_skill task")?;
        let data = match final_task::describe_result(&task).map_err(|v| violation(py, &v))? {
            Ending::Completed(data) => data,
            Ending::Refused(r) => return Err(refused(py, &r, true)),
            Ending::Stopped { state } => return Err(stopped(py, &state, true)),
        };
        let verified = py
            .detach(|| crate::client::verify_describe_response(&selected, &data))
            .map_err(
                |e| match final_task::describe_violation(&selected, &data, e) {
                    Ok(v) => violation(py, &v),
                    Err(local) => super::interface_error(py, &local),
                },
            )?;
        Ok(PyInterface { verified })
    }
}

/// A Skill Interface Document the client verified.
#[pyclass(frozen, module = "skillbundle", name = "VerifiedInterface")]
pub struct PyInterface {
    verified: VerifiedInterface,
}

#[pymethods]
impl PyInterface {
    #[getter]
    fn skill_id(&self) -> &str {
        &self.verified.binding.skill_id
    }

    #[getter]
    fn skill_version(&self) -> String {
        self.verified.binding.skill_version.to_string()
    }

    #[getter]
    fn interface_digest(&self) -> &str {
        self.verified.binding.interface_digest.as_str()
    }

    #[getter]
    fn document<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value::to_python(py, &self.verified.document)
    }

    /// Validate `arguments` against input_schema and build the skill request object;
    /// raises `InterfaceError` (`input_invalid`, local) when they do not conform.
    fn request<'py>(
        &self,
        py: Python<'py>,
        arguments: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arguments = value::to_json(arguments, super::MAX_DEPTH).map_err(|r| {
            super::refused_value(
                py,
                r,
                Condition::InputInvalid,
                Detected::Client,
                "the arguments",
            )
        })?;
        let request = py
            .detach(|| self.verified.request(arguments))
            .map_err(|e| super::interface_error(py, &e))?;
        value::to_python(py, &request)
    }

    /// Check a domain-skill Task (A2A 1.0 JSON form): returns `{"result",
    /// "result_artifact_id", "records"}`, or raises `ProtocolViolation`, `SkillRefused`,
    /// `TaskStopped`.
    fn check_task<'py>(
        &self,
        py: Python<'py>,
        task: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let task = json_arg(py, task, "the task")?;
        match py
            .detach(|| final_task::skill_result(&task, &self.verified))
            .map_err(|v| violation(py, &v))?
        {
            Ending::Completed(d) => {
                value::to_python(py, &serde_json::to_value(&d).unwrap_or(Value::Null))
            }
            Ending::Refused(r) => Err(refused(py, &r, false)),
            Ending::Stopped { state } => Err(stopped(py, &state, false)),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "VerifiedInterface({} {} {})",
            self.verified.binding.skill_id,
            self.verified.binding.skill_version,
            self.verified.binding.interface_digest
        )
    }
}

/// The bounded cache of verified interfaces, keyed by target identity, skill_id,
/// skill_version and interface_digest (draft "Operational Considerations").
#[pyclass(frozen, module = "skillbundle", name = "InterfaceCache")]
pub struct PyCache {
    cache: Mutex<InterfaceCache>,
}

#[pymethods]
impl PyCache {
    #[new]
    #[pyo3(signature = (capacity = 64))]
    fn new(capacity: usize) -> Self {
        PyCache {
            cache: Mutex::new(InterfaceCache::new(capacity)),
        }
    }

    /// The interface cached for `agent` under the card's current binding of `skill_id`.
    fn get(&self, agent: &str, card: &PyCard, skill_id: &str) -> Option<PyInterface> {
        let selected = card.card.select(skill_id).ok()?;
        let mut cache = self.cache.lock().ok()?;
        cache
            .get(agent, selected)
            .map(|verified| PyInterface { verified })
    }

    fn insert(&self, agent: &str, interface: &PyInterface) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(agent, interface.verified.clone());
        }
    }

    /// Drop the entries of `agent` its newly read card no longer advertises; how many.
    fn refresh(&self, agent: &str, card: &PyCard) -> usize {
        self.cache
            .lock()
            .map(|mut c| c.refresh(agent, &card.card))
            .unwrap_or_default()
    }

    fn __len__(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or_default()
    }
}

/// The correlation metadata for a call on behalf of `task_id` at `agent`:
/// `{METADATA_KEY: {...}}`, to merge into the request Message's `metadata`.
#[pyfunction]
#[pyo3(signature = (agent, task_id, context_id = None))]
fn delegation_metadata<'py>(
    py: Python<'py>,
    agent: &str,
    task_id: &str,
    context_id: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut up = Upstream::new(agent, task_id);
    up.context_id = context_id;
    value::to_python(
        py,
        &json!({ crate::client::delegation::METADATA_KEY: up.metadata() }),
    )
}

/// The hop record for a completed downstream call; raises `ValueError` when the
/// downstream task id is the upstream one at the same agent.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn delegation_hop<'py>(
    py: Python<'py>,
    upstream_agent: &str,
    upstream_task_id: &str,
    downstream_agent: &str,
    downstream_task_id: &str,
    interface: &PyInterface,
    terminal_state: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let up = Upstream::new(upstream_agent, upstream_task_id);
    let hop = Hop::record(
        &up,
        downstream_agent,
        downstream_task_id,
        interface.verified.advertised(),
        terminal_state,
    )
    .ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err(
            "the downstream task has the upstream task's id at the same agent",
        )
    })?;
    let dict = PyDict::new(py);
    for (k, v) in serde_json::to_value(&hop)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
    {
        dict.set_item(k, value::to_python(py, &v)?)?;
    }
    Ok(dict.into_any())
}

/// Add the client classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCard>()?;
    m.add_class::<PyInterface>()?;
    m.add_class::<PyCache>()?;
    m.add_function(wrap_pyfunction!(delegation_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(delegation_hop, m)?)?;
    m.add_function(wrap_pyfunction!(task_of, m)?)?;
    m.add(
        "DELEGATION_METADATA_KEY",
        crate::client::delegation::METADATA_KEY,
    )?;
    Ok(())
}
