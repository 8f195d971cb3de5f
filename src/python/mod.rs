//! The `skillbundle._native` Python extension module (cargo feature `python`).
//!
//! Most A2A agents are written in Python. They get the one implementation — this crate —
//! rather than a second one: every check a Python agent makes goes through
//! [`Bundle::open`], [`crate::agent`] and [`crate::card::a2a::merge_card`]. This module only
//! converts: Python objects to JSON values under the I-JSON rules ([`value`]), refusals
//! to the Python exceptions the pure-Python package defines (`skillbundle._errors`:
//! `BundleRefused` with the CLI's findings, `InterfaceError` with the draft's error
//! object and A2A task state, `CardInvalid`), and results back to Python objects. The
//! package around it is `python/skillbundle/` (built by maturin from `pyproject.toml`).
//!
//! The GIL is released while a bundle is opened and while a value is validated, so an
//! agent that serves requests from several threads checks them in parallel.

pub mod body;
// Parts of this one extension module, split into files: nothing outside it names them,
// and they use this file's conversions as it uses theirs (private children are one
// module to tests/integration/layering.rs).
mod client;
mod enforce;
mod gil;
pub mod pool;
pub mod proto;
pub mod value;

use crate::agent::body::BodyLimits;
use crate::agent::interaction::Operation;
use crate::agent::task::{
    Limits, State, TaskGuard, Verdict, RESULT_OBJECT_RESULT, RESULT_OBJECT_SKILL,
};
use crate::agent::Admitted;
use crate::agent::Bundle;
use crate::card::a2a::{self, EXTENSION_URI};
use crate::crypto::keys::TrustedKeys;
use crate::crypto::keys::{self, KeyError, PublicKey};
use crate::interface::condition::{Condition, Detected, ErrorObject};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use serde_json::Value;
use std::path::PathBuf;
#[cfg(feature = "oci")]
use std::time::Duration;

/// The extension's allocator for what Rust allocates (Python's own objects stay with
/// Python's): every request, record and result an agent checks is decoded into JSON values
/// of many small allocations, and glibc's malloc, cold between requests, cost an
/// enforcing a2a-sdk agent about as much CPU as the checks' own code (see Cargo.toml).
/// A build with the CLI too sets none here: the binary's (the same) is the only one.
#[cfg(not(feature = "cli"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Depth beyond which a Python value is refused before conversion: the validator's own
/// limit plus one, so that the validator reports it (`resource_limit_exceeded`) with the
/// same pointer as for JSON text.
pub(crate) const MAX_DEPTH: usize = crate::schema::validator::MAX_NESTING + 1;

/// An exception class of the pure-Python `skillbundle._errors` module.
fn error_class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<pyo3::types::PyType>>,
    name: &str,
) -> PyResult<Bound<'py, pyo3::types::PyType>> {
    cell.import(py, "skillbundle._errors", name).cloned()
}

static BUNDLE_REFUSED: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
static INTERFACE_ERROR: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
static CARD_INVALID: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();

/// `skillbundle.InterfaceError(error_object, task_state)`.
///
/// Cold: never on the path of a valid request, so its code stays out of the callers'.
#[cold]
#[inline(never)]
pub(crate) fn interface_error(py: Python<'_>, error: &ErrorObject) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = error_class(py, &INTERFACE_ERROR, "InterfaceError")?;
        let state = error
            .task_state()
            .as_ref()
            .and_then(State::from_task_state)
            .map(State::wire_name);
        let object = value::to_python(py, &error.to_json())?;
        Ok(PyErr::from_value(class.call1((object, state))?))
    };
    build().unwrap_or_else(|e| e)
}

/// A value that is not I-JSON, met where the draft's condition `code` applies: the
/// same error object an agent would send for invalid JSON data, with the pointer in
/// `details` (never the value). Objects that are not JSON at all are a `TypeError`.
#[cold]
#[inline(never)]
pub(crate) fn refused_value(
    py: Python<'_>,
    refused: value::Refused,
    code: Condition,
    stage: Detected,
    what: &str,
) -> PyErr {
    if refused.why.is_type_error() {
        let at = if refused.pointer.is_empty() {
            "/"
        } else {
            &refused.pointer
        };
        return PyTypeError::new_err(format!(
            "{what} is not a JSON value: at {at}, {}",
            refused.why.describe()
        ));
    }
    let too_deep = matches!(refused.why, value::Refusal::TooDeep(_));
    let message = format!("{what} is not I-JSON: it holds {}", refused.why.describe());
    let error = ErrorObject::not_ijson(code, stage, too_deep, message, Some(refused.pointer));
    interface_error(py, &error)
}

/// `skillbundle.Describe(skill_id)`: a describe_skill request that passed every check.
#[pyclass(frozen, module = "skillbundle", name = "Describe")]
pub struct PyDescribe {
    #[pyo3(get)]
    skill_id: String,
}

#[pymethods]
impl PyDescribe {
    #[new]
    fn new(skill_id: String) -> Self {
        PyDescribe { skill_id }
    }

    #[classattr]
    fn __match_args__() -> (&'static str,) {
        ("skill_id",)
    }

    fn __repr__(&self) -> String {
        format!("Describe(skill_id={:?})", self.skill_id)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyDescribe>()
            .is_ok_and(|o| o.get().skill_id == self.skill_id)
    }
}

/// `skillbundle.Invoke(skill_id, arguments)`: a domain-skill request whose version and
/// digest name the active document and whose arguments conform to its input_schema.
/// `arguments` is the caller's own object (not a copy).
///
/// One is made for every valid request and usually dropped soon after, so its memory is
/// reused from a free list rather than allocated and freed each time (and a reused one
/// does not count towards the garbage collector's next run).
#[pyclass(frozen, freelist = 16, module = "skillbundle", name = "Invoke")]
pub struct PyInvoke {
    /// The caller's own `str` (made by `check_request` from the request's `skill`
    /// member, which it equals): no copy on the path of every request.
    #[pyo3(get)]
    skill_id: Py<PyString>,
    #[pyo3(get)]
    arguments: Py<PyAny>,
}

#[pymethods]
impl PyInvoke {
    #[new]
    fn new(skill_id: Bound<'_, PyString>, arguments: Py<PyAny>) -> Self {
        PyInvoke {
            skill_id: skill_id.unbind(),
            arguments,
        }
    }

    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) {
        ("skill_id", "arguments")
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Invoke(skill_id={:?}, arguments={})",
            self.skill_id.bind(py).to_cow()?,
            self.arguments.bind(py).repr()?
        ))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(o) = other.cast::<PyInvoke>() else {
            return Ok(false);
        };
        let o = o.get();
        Ok(o.skill_id.bind(py).as_any().eq(self.skill_id.bind(py))?
            && o.arguments.bind(py).eq(self.arguments.bind(py))?)
    }
}

/// A duration argument in seconds: finite and positive, else `ValueError`.
#[cfg(feature = "oci")]
fn seconds(name: &str, value: Option<f64>, default: Duration) -> PyResult<Duration> {
    match value {
        None => Ok(default),
        Some(s) => Duration::try_from_secs_f64(s)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                PyValueError::new_err(format!("{name} must be a positive number of seconds"))
            }),
    }
}

/// What `Bundle.fetch` loaded, and from where (`skillbundle.Fetched`).
#[cfg(feature = "oci")]
#[pyclass(frozen, module = "skillbundle", name = "Fetched")]
pub struct PyFetched {
    /// The verified bundle.
    #[pyo3(get)]
    bundle: Py<PyBundle>,
    /// `"registry"`: pulled just now and recorded as the last good bundle;
    /// `"last_good"`: the registry's bundle could not be had or was refused, and the
    /// bundle kept in the state directory was verified again and loaded.
    #[pyo3(get)]
    source: &'static str,
    /// `registry/repository@sha256:…` of the manifest the bundle came from.
    #[pyo3(get)]
    pinned: String,
    /// The version accepted before this one for the same name (source `"registry"`).
    #[pyo3(get)]
    previous_version: Option<String>,
    /// Why the registry's bundle was not loaded (source `"last_good"`): findings as
    /// `BundleRefused.findings` holds them.
    #[pyo3(get)]
    refused: Py<PyList>,
    /// The verified bundle file, as kept in the state directory.
    #[pyo3(get)]
    file: PathBuf,
}

#[cfg(feature = "oci")]
#[pymethods]
impl PyFetched {
    fn __repr__(&self, py: Python<'_>) -> String {
        let bundle = self.bundle.bind(py).get();
        format!(
            "Fetched(bundle={} {}, source={:?}, pinned={:?})",
            bundle.bundle.name(),
            bundle.bundle.version(),
            self.source,
            self.pinned
        )
    }
}

/// A verified, loaded skill bundle (`skillbundle.Bundle`).
#[pyclass(frozen, module = "skillbundle", name = "Bundle")]
pub struct PyBundle {
    bundle: Bundle,
}

/// One `trust` entry: a dict is a JWK or a JWK Set, anything else a path to a file
/// holding a JWK, a JWK Set or an SPKI PEM key. Both go through
/// [`keys::parse_key_set`], the function behind the CLI's `--trust`.
fn trusted_keys(
    py: Python<'_>,
    index: usize,
    entry: &Bound<'_, PyAny>,
) -> PyResult<Vec<PublicKey>> {
    if entry.cast::<PyDict>().is_ok() {
        let jwk = value::to_json(entry, 8).map_err(|r| {
            PyValueError::new_err(format!(
                "trust[{index}] is not a JWK or JWK Set: {}",
                r.why.describe()
            ))
        })?;
        return keys::parse_key_set(&jwk.to_string())
            .map_err(|e| PyValueError::new_err(format!("trust[{index}] is not usable: {e}")));
    }
    let path: PathBuf = entry.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "trust[{index}] must be a path (str or os.PathLike) to a JWK, JWK Set or PEM file, or a JWK or JWK Set dict"
        ))
    })?;
    py.detach(|| keys::read_key_set(&path))
        .map_err(|e| match e {
            KeyError::Io { .. } => PyOSError::new_err(format!("trust[{index}]: {e}")),
            _ => PyValueError::new_err(format!("trust[{index}] ({}): {e}", path.display())),
        })
}

/// `trust=`: a list of [`trusted_keys`] entries; a single key is a `TypeError`.
fn trust_list(py: Python<'_>, trust: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<PublicKey>> {
    let mut keys = Vec::new();
    if let Some(trust) = trust {
        if trust.cast::<pyo3::types::PyString>().is_ok() || trust.cast::<PyDict>().is_ok() {
            return Err(PyTypeError::new_err(
                "trust must be a list of keys (paths or JWK dicts), not a single key",
            ));
        }
        for (i, entry) in trust.try_iter()?.enumerate() {
            keys.extend(trusted_keys(py, i, &entry?)?);
        }
    }
    Ok(keys)
}

/// Findings as the list of dicts `BundleRefused.findings` holds.
fn findings_list<'py>(
    py: Python<'py>,
    findings: &[crate::finding::Finding],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for f in findings {
        let json = serde_json::to_value(f).expect("a finding always serializes");
        list.append(value::to_python(py, &json)?)?;
    }
    Ok(list)
}

/// `skillbundle.BundleRefused(findings)`.
fn bundle_refused(py: Python<'_>, findings: &[crate::finding::Finding]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = error_class(py, &BUNDLE_REFUSED, "BundleRefused")?;
        Ok(PyErr::from_value(
            class.call1((findings_list(py, findings)?,))?,
        ))
    };
    build().unwrap_or_else(|e| e)
}

impl PyBundle {
    fn fragment_member(&self, key: &str) -> &Value {
        &self.bundle.card_fragment()[key]
    }

    fn json_arg(
        &self,
        py: Python<'_>,
        obj: &Bound<'_, PyAny>,
        code: Condition,
        stage: Detected,
        what: &str,
    ) -> PyResult<Value> {
        value::to_json(obj, MAX_DEPTH).map_err(|r| refused_value(py, r, code, stage, what))
    }

    /// `check_request`'s answer to a request [`Bundle::admit`] admitted as describe_skill:
    /// its arguments, then `Describe`. Out of line, so that the code of the common case,
    /// a domain-skill request, stays compact.
    #[inline(never)]
    fn check_describe_request<'py>(
        &self,
        py: Python<'py>,
        members: Option<enforce::RequestMembers<'py>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let refuse = |e: ErrorObject| interface_error(py, &e);
        let arguments = members
            .as_ref()
            .and_then(enforce::RequestMembers::arguments)
            .map(|a| value::to_json(a, MAX_DEPTH))
            .transpose()
            .map_err(|mut r| {
                r.pointer.insert_str(0, "/arguments");
                refuse(enforce::refused_request(r))
            })?;
        let skill_id = self
            .bundle
            .check_describe(arguments.as_ref())
            .map_err(refuse)?
            .to_string();
        Ok(Bound::new(py, PyDescribe { skill_id })?.into_any())
    }
}

/// `check_request`'s error for a request that is not I-JSON: a `TypeError` for what is
/// not JSON at all, else `input_invalid` with the pointer relative to `arguments`, like
/// every input_invalid detail ([`enforce::refused_request`]).
#[cold]
#[inline(never)]
fn request_not_ijson(py: Python<'_>, refused: value::Refused) -> PyErr {
    if refused.why.is_type_error() {
        let stage = Detected::BeforeAcceptance;
        refused_value(py, refused, Condition::InputInvalid, stage, "the request")
    } else {
        interface_error(py, &enforce::refused_request(refused))
    }
}

#[pymethods]
impl PyBundle {
    /// Open, verify and load a bundle. Refusal raises `BundleRefused`.
    #[staticmethod]
    #[pyo3(signature = (path, *, trust = None, allow_unsigned = false))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        trust: Option<&Bound<'_, PyAny>>,
        allow_unsigned: bool,
    ) -> PyResult<Self> {
        let mut trust = TrustedKeys::new(trust_list(py, trust)?);
        if allow_unsigned {
            trust = trust.and_allow_unsigned();
        }
        let opened = py.detach(|| pool::install(|| Bundle::open_path(&path, &trust)))?;
        match opened {
            Ok(bundle) => Ok(PyBundle { bundle }),
            Err(findings) => Err(bundle_refused(py, &findings)),
        }
    }

    /// Pull, verify and load a bundle from an OCI registry at agent start-up, with
    /// keep-last-good and anti-rollback in the `state` directory: the library's
    /// `fetch::fetch`, the same rules as `skillbundle pull --state`; `max_age` (seconds)
    /// requires a release statement no older than that (`release_expired`). Raises
    /// `BundleRefused` only when there is nothing to start on.
    #[cfg(feature = "oci")]
    #[staticmethod]
    #[pyo3(signature = (
        reference, *, trust, state, max_age = None, timeout = None, connect_timeout = None,
        read_timeout = None, plain_http = false, allow_rollback = false,
        require_referrer_signature = false,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn fetch(
        py: Python<'_>,
        reference: &str,
        trust: &Bound<'_, PyAny>,
        state: PathBuf,
        max_age: Option<f64>,
        timeout: Option<f64>,
        connect_timeout: Option<f64>,
        read_timeout: Option<f64>,
        plain_http: bool,
        allow_rollback: bool,
        require_referrer_signature: bool,
    ) -> PyResult<PyFetched> {
        use crate::agent::fetch::{FetchOptions, Source};
        use crate::registry::{Options, Timeouts};
        let keys = trust_list(py, Some(trust))?;
        if keys.is_empty() {
            return Err(PyValueError::new_err(
                "trust is empty: a fetched bundle must be signed by a trusted key",
            ));
        }
        let trust = TrustedKeys::new(keys);
        let defaults = Timeouts::default();
        let timeouts = Timeouts {
            total: seconds("timeout", timeout, defaults.total)?,
            connect: seconds("connect_timeout", connect_timeout, defaults.connect)?,
            read: seconds("read_timeout", read_timeout, defaults.read)?,
        };
        let options = FetchOptions {
            registry: Options {
                plain_http,
                credentials: None,
                timeouts,
            },
            allow_rollback,
            require_referrer_signature,
            max_age: max_age
                .map(|s| seconds("max_age", Some(s), Duration::ZERO))
                .transpose()?,
        };
        let fetched = py
            .detach(|| {
                pool::install(|| crate::agent::fetch::fetch(reference, &trust, &state, &options))
            })?
            .map_err(|findings| bundle_refused(py, &findings))?;
        let (source, pinned, previous_version, refused) = match fetched.source {
            Source::Registry { pinned, previous } => ("registry", pinned, previous, Vec::new()),
            Source::LastGood { pinned, refused } => ("last_good", pinned, None, refused),
        };
        Ok(PyFetched {
            bundle: Py::new(
                py,
                PyBundle {
                    bundle: fetched.bundle,
                },
            )?,
            source,
            pinned,
            previous_version,
            refused: findings_list(py, &refused)?.unbind(),
            file: fetched.file,
        })
    }

    /// The bundle's name.
    #[getter]
    fn name(&self) -> &str {
        self.bundle.name()
    }

    /// The bundle's version.
    #[getter]
    fn version(&self) -> &str {
        self.bundle.version()
    }

    /// What the signature check established, in words.
    #[getter]
    fn signature(&self) -> String {
        self.bundle.signature().to_string()
    }

    /// Whether a trusted key vouches for the bundle.
    #[getter]
    fn verified(&self) -> bool {
        self.bundle.signature().is_verified()
    }

    /// `[{"skill_id", "skill_version", "interface_digest"}, ...]` in manifest order.
    #[getter]
    fn skills<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for binding in self.bundle.advertised() {
            list.append(crate::python::value::to_python(py, &binding.to_json())?)?;
        }
        Ok(list)
    }

    /// The schema-interface AgentExtension for `capabilities.extensions`.
    fn extension<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let extensions = self.fragment_member("capabilities")["extensions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let ext = extensions
            .iter()
            .find(|e| e["uri"] == EXTENSION_URI)
            .expect("a loaded bundle's fragment carries the extension");
        value::to_python(py, ext)
    }

    /// The AgentSkill entries for the Agent Card's `skills` (describe_skill first).
    fn agent_skills<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value::to_python(py, self.fragment_member("skills"))
    }

    /// The Agent Card fragment `{"capabilities":{"extensions":[…]},"skills":[…]}`.
    fn card_fragment<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value::to_python(py, self.bundle.card_fragment())
    }

    /// `base` (an A2A 1.0 AgentCard as a dict) with the extension and skills merged in,
    /// as `skillbundle card --base` does; with `require_extension`, the extension is
    /// advertised `required: true` (an executor in strict mode). Raises `CardInvalid`.
    #[pyo3(signature = (base, *, require_extension = false))]
    fn agent_card<'py>(
        &self,
        py: Python<'py>,
        base: &Bound<'py, PyAny>,
        require_extension: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let base = value::to_json(base, MAX_DEPTH).map_err(|r| {
            PyTypeError::new_err(format!(
                "the base Agent Card is not a JSON value: at {}, {}",
                if r.pointer.is_empty() {
                    "/"
                } else {
                    &r.pointer
                },
                r.why.describe()
            ))
        })?;
        let mut extension = self.bundle.extension().clone();
        if require_extension {
            extension.required = Some(true);
        }
        match a2a::merge_card(&base, &extension, self.bundle.agent_skills()) {
            Ok(card) => value::to_python(py, &card),
            Err(e) => {
                let class = error_class(py, &CARD_INVALID, "CardInvalid")?;
                Err(PyErr::from_value(class.call1((e.to_string(),))?))
            }
        }
    }

    /// The active Skill Interface Document of `skill_id`, or None.
    fn interface<'py>(&self, py: Python<'py>, skill_id: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.bundle.interface(skill_id) {
            Some(doc) => value::to_python(py, &doc),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The describe_skill result object for `skill_id`. Raises `InterfaceError`.
    fn describe_skill<'py>(&self, py: Python<'py>, skill_id: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.bundle.describe_skill(skill_id) {
            Ok(v) => value::to_python(py, &v),
            Err(e) => Err(interface_error(py, &e)),
        }
    }

    /// Check a skill request object (the request Message's Data Part value): returns
    /// `Describe` or `Invoke`, or raises `InterfaceError`.
    ///
    /// The request is checked by the I-JSON rules without being copied
    /// ([`value::check_members`]), admitted by [`Bundle::admit`] on the members that walk read
    /// from the dict's own storage, and its arguments validated where they are by the
    /// input_schema's validator for Python objects; the GIL stays held, since that
    /// validator reads the objects themselves.
    fn check_request<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // The walk admits exact dicts only: no `__getitem__` of the caller's runs.
        let members = match enforce::RequestMembers::check(data, MAX_DEPTH) {
            Ok(members) => members,
            Err(r) => return Err(request_not_ijson(py, r)),
        };
        let head = members.as_ref().map(enforce::RequestMembers::head);
        match self.bundle.admit(head.as_ref()) {
            Ok(Admitted::Invoke(input)) => {
                let Some((skill_id, arguments)) =
                    members.and_then(enforce::RequestMembers::invocation)
                else {
                    return Err(PyValueError::new_err("the request has no arguments"));
                };
                if let Err(e) = enforce::validate_arguments(&input, &arguments)? {
                    return Err(interface_error(py, &e));
                }
                // The caller's own objects: validated, never copied.
                Ok(Bound::new(
                    py,
                    PyInvoke {
                        skill_id: skill_id.unbind(),
                        arguments: arguments.unbind(),
                    },
                )?
                .into_any())
            }
            Ok(Admitted::Describe) => self.check_describe_request(py, members),
            Err(e) => Err(interface_error(py, &e)),
        }
    }

    /// Validate a domain output against the skill's output_schema. Raises
    /// `InterfaceError` (`output_invalid`, `TASK_STATE_FAILED`).
    fn check_result(
        &self,
        py: Python<'_>,
        skill_id: &str,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let stage = Detected::DuringProcessing;
        let v = self.json_arg(py, value, Condition::OutputInvalid, stage, "the result")?;
        py.detach(|| self.bundle.check_result(skill_id, &v))
            .map_err(|e| interface_error(py, &e))
    }

    /// Check the data of a result Artifact's Data Part: the skill result object
    /// `{"skill": skill_id, "result": <output>}`, whose `result` must conform to the
    /// output_schema. Raises `InterfaceError` (`output_invalid`).
    fn check_result_object(
        &self,
        py: Python<'_>,
        skill_id: &str,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let stage = Detected::DuringProcessing;
        let v = self.json_arg(
            py,
            data,
            Condition::OutputInvalid,
            stage,
            "the result object",
        )?;
        py.detach(|| self.bundle.check_result_object(skill_id, Some(&v)))
            .map_err(|e| interface_error(py, &e))
    }

    /// Validate a supporting record of `kind`. Raises `InterfaceError` (`output_invalid`).
    fn check_record(
        &self,
        py: Python<'_>,
        skill_id: &str,
        kind: &str,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let stage = Detected::DuringProcessing;
        let v = self.json_arg(py, value, Condition::OutputInvalid, stage, "the record")?;
        py.detach(|| self.bundle.check_record(skill_id, kind, &v))
            .map_err(|e| interface_error(py, &e))
    }

    /// What a Message is, by the executor's rules (`crate::agent::message`): see
    /// `skillbundle._native.pyi`. `task` is `(skill_id or None, interrupted)` for a
    /// Message sent into an existing Task.
    #[pyo3(signature = (parts, *, metadata = None, activated, task = None, require_extension = false, base_requests = false))]
    #[allow(clippy::too_many_arguments)]
    fn route_message<'py>(
        &self,
        py: Python<'py>,
        parts: &Bound<'py, PyAny>,
        metadata: Option<&Bound<'py, PyAny>>,
        activated: bool,
        task: Option<(Option<String>, bool)>,
        require_extension: bool,
        base_requests: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let parts = enforce::parts_json(parts, MAX_DEPTH)?;
        // Hints that are not I-JSON are no hints: the request check refuses them by type.
        let metadata = metadata
            .filter(|m| !m.is_none())
            .map(|m| value::to_json(m, MAX_DEPTH).unwrap_or(Value::Null));
        let policy = crate::agent::message::Policy {
            require_extension,
            base_requests,
        };
        let routed = enforce::route(py, &self.bundle, parts, metadata, activated, task, policy)?;
        let (kind, payload) = match routed {
            enforce::Routed::Describe(skill_id) => {
                ("describe", PyString::new(py, &skill_id).into_any())
            }
            enforce::Routed::Invoke(invocation) => {
                ("invoke", Bound::new(py, invocation)?.into_any())
            }
            enforce::Routed::Plain(kind) => (kind, py.None().into_bound(py)),
            enforce::Routed::Refused(kind, e) => (
                kind,
                interface_error(py, &e)
                    .into_value(py)
                    .into_bound(py)
                    .into_any(),
            ),
        };
        PyTuple::new(py, [PyString::new(py, kind).into_any(), payload])
    }

    /// The domain skill a Task invokes, from its first Message's Data Part
    /// ([`Bundle::invoked_skill`]): `None` for describe_skill or anything else.
    fn invoked_skill(&self, data: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let Ok(Some(v)) = enforce::part_json(data, MAX_DEPTH)? else {
            return Ok(None);
        };
        Ok(self.bundle.invoked_skill(&v).map(str::to_string))
    }

    /// The rule set for one Task of `skill_id` (`crate::agent::task`).
    #[pyo3(signature = (skill_id, *, max_records = Limits::DEFAULT_MAX_RECORDS, max_artifact_bytes = Limits::DEFAULT_MAX_ARTIFACT_BYTES))]
    fn task_guard(
        slf: Bound<'_, Self>,
        skill_id: &str,
        max_records: usize,
        max_artifact_bytes: usize,
    ) -> PyResult<PyTaskGuard> {
        let limits = Limits {
            max_records,
            max_artifact_bytes,
        };
        let guard = slf
            .get()
            .bundle
            .task_guard(skill_id, limits)
            .ok_or_else(|| PyValueError::new_err("the bundle has no skill of that skill_id"))?;
        Ok(PyTaskGuard {
            bundle: slf.unbind(),
            guard,
        })
    }

    /// Whether a Task of `skill_id` may take the A2A 1.0 operation `method`
    /// (`SendMessage`, `SendStreamingMessage`, `SubscribeToTask`,
    /// `CreateTaskPushNotificationConfig`, `CancelTask`; the send's configuration flags
    /// beside it), by the skill's `interaction` declaration
    /// (`crate::agent::interaction`): `None` when it may, else `(kind, message)` with
    /// kind `task_not_cancelable` or `unsupported_operation`, the A2A error to raise.
    /// `skill_id` `None` (a base Task) or not a bundle skill: always allowed. Another
    /// method is a `ValueError`.
    #[pyo3(signature = (skill_id, method, *, return_immediately = false, push_config = false))]
    fn check_operation(
        &self,
        skill_id: Option<&str>,
        method: &str,
        return_immediately: bool,
        push_config: bool,
    ) -> PyResult<Option<(&'static str, String)>> {
        let operation = Operation::from_method(method, return_immediately, push_config)
            .ok_or_else(|| {
                PyValueError::new_err(
                    "the method is not an A2A 1.0 operation a skill's interaction declaration governs",
                )
            })?;
        Ok(self
            .bundle
            .check_operation(skill_id, operation)
            .err()
            .map(|r| (r.kind.as_str(), r.message)))
    }

    /// The `InterfaceError` (not raised) for a domain refusal: `constraint_rejected`,
    /// `authorization_failed` (`TASK_STATE_REJECTED`) or `resource_limit_exceeded`
    /// (`TASK_STATE_FAILED`). Any other code is a `ValueError`.
    fn domain_refusal(&self, py: Python<'_>, code: &str, message: &str) -> PyResult<Py<PyAny>> {
        let error = enforce::domain_refusal(&self.bundle, code, message).ok_or_else(|| {
            PyValueError::new_err(
                "a domain refusal is constraint_rejected, authorization_failed or resource_limit_exceeded",
            )
        })?;
        Ok(interface_error(py, &error).into_value(py).into_any())
    }

    fn __repr__(&self) -> String {
        format!(
            "<skillbundle.Bundle {} {} ({} skills, {})>",
            self.bundle.name(),
            self.bundle.version(),
            self.bundle.skill_ids().count(),
            self.bundle.signature()
        )
    }
}

/// A status Message's Parts' data as the guard reads it: a Message whose data is not
/// I-JSON reports no error object of the draft's.
fn status_parts(parts: Option<&Bound<'_, PyAny>>) -> PyResult<enforce::PartsRead> {
    Ok(match parts {
        Some(parts) => {
            enforce::parts_json(parts, MAX_DEPTH)?.unwrap_or_else(|_| (vec![Some(Value::Null)], 0))
        }
        None => (Vec::new(), 0),
    })
}

/// `skillbundle.TaskGuard`: the rule set for one Task of one skill
/// ([`crate::agent::task`]), made by `Bundle.task_guard`. Each method answers
/// `("hold", None)`, `("release", [artifact_id, ...])` or `("fail", InterfaceError)`.
#[pyclass(module = "skillbundle", name = "TaskGuard")]
pub struct PyTaskGuard {
    bundle: Py<PyBundle>,
    guard: TaskGuard,
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

    /// Whether the Artifact of `artifact_id` was delivered whole (a chunk with
    /// `lastChunk`, or published): a whole Task event restates it, no update may change
    /// it ([`TaskGuard::is_whole`]).
    fn is_whole(&self, artifact_id: &str) -> bool {
        self.guard.is_whole(artifact_id)
    }

    /// The Task waits for the caller (input or authorization).
    #[getter]
    fn interrupted(&self) -> bool {
        self.guard.state().is_interrupted()
    }

    /// The primary result Artifact for `result`: its name and the data of its single
    /// Data Part, the skill result object (`result` is the caller's object, checked when
    /// the Artifact is published).
    fn result_artifact<'py>(
        &self,
        py: Python<'py>,
        result: Bound<'py, PyAny>,
    ) -> PyResult<(String, Bound<'py, PyDict>)> {
        let object = PyDict::new(py);
        object.set_item(RESULT_OBJECT_SKILL, self.guard.skill_id())?;
        object.set_item(RESULT_OBJECT_RESULT, result)?;
        Ok((self.guard.result_artifact_name().to_string(), object))
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
        match enforce::parts_json(parts, MAX_DEPTH)? {
            Ok(read) => self.update(py, artifact_id, name, read, append, last_chunk),
            Err(refused) => {
                self.guard.abort();
                enforce::verdict(py, enforce::refused_output(refused))
            }
        }
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
        let (values, size) = status_parts(parts)?;
        let bundle = &self.bundle.get().bundle;
        let guard = &mut self.guard;
        let v = gil::detach_if_large(py, size, || {
            guard.status_with_message(bundle, state, &values)
        });
        enforce::verdict(py, v)
    }

    /// The status of a whole `Task` the domain code published (`state` and `parts` as
    /// for `status`): `None` when it is the Task as created (`TASK_STATE_SUBMITTED`, or
    /// no state), which publishes nothing; otherwise the verdict on it as a status change.
    #[pyo3(signature = (state, parts = None))]
    fn task_status<'py>(
        &mut self,
        py: Python<'py>,
        state: &str,
        parts: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let (values, size) = status_parts(parts)?;
        let bundle = &self.bundle.get().bundle;
        let guard = &mut self.guard;
        gil::detach_if_large(py, size, || guard.task_status(bundle, state, &values))
            .map(|v| enforce::verdict(py, v))
            .transpose()
    }

    /// `data`, handed to a publishing helper, as the single Data Part of the whole
    /// Artifact `artifact_id` named `name`: `(bytes, verdict)`, the wire bytes of the
    /// `google.protobuf.Value` the Part carries and the verdict on that Artifact as an
    /// update, checked as read back from those bytes (exactly what is published). `None`
    /// when `data` is not JSON of exact built-in types within what a Data Part carries:
    /// the adapter then hands it to a2a-sdk as it is, and the guard reads what the SDK made.
    fn data_artifact<'py>(
        &mut self,
        py: Python<'py>,
        artifact_id: &str,
        name: &str,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyTuple>)>> {
        let Ok(value) = value::to_json(data, proto::CARRIED_DEPTH) else {
            return Ok(None);
        };
        let bytes = proto::encode(&value);
        drop(value);
        let Ok(read) = proto::decode(&bytes, proto::CARRIED_DEPTH) else {
            return Ok(None);
        };
        let read = (vec![Some(read)], bytes.len());
        let verdict = self.update(py, artifact_id, name, read, false, true)?;
        Ok(Some((PyBytes::new(py, &bytes), verdict)))
    }

    /// A value the domain code handed to a publishing helper that a2a-sdk could not turn
    /// into a Data Part: `("fail", InterfaceError)` with the library's reason — nested
    /// deeper than a Data Part can carry (`resource_limit_exceeded`), or not I-JSON
    /// (`output_invalid`) — and nothing more of the Task is published; `("hold", None)`
    /// when the library finds nothing wrong with it (the SDK's error is then the caller's).
    fn refuse_data<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        match value::to_json(data, proto::CARRIED_DEPTH) {
            Ok(_) => enforce::verdict(py, Verdict::Hold),
            Err(refused) => {
                self.guard.abort();
                enforce::verdict(py, enforce::refused_output(refused))
            }
        }
    }

    /// The domain code published, past the helpers, a value a2a-sdk's protobuf refused
    /// to hold for its nesting (the adapter saw the SDK raise, not the value):
    /// `("fail", InterfaceError)` with `resource_limit_exceeded`, and nothing more of the
    /// Task is published. `("hold", None)` when the Task had already ended.
    fn uncarried<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        // What a2a-sdk's protobuf refuses past: deeper than a Data Part carries.
        let why = value::Refusal::TooDeep(proto::CARRIED_DEPTH).describe();
        enforce::verdict(py, self.guard.uncarried(&why))
    }

    /// The executor answered with a bare Message.
    fn message<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let v = self.guard.message(&self.bundle.get().bundle);
        enforce::verdict(py, v)
    }

    /// The executor returned.
    fn returned<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let v = self.guard.returned();
        enforce::verdict(py, v)
    }

    /// The Task fails for the agent's own reason: nothing more is published.
    fn abort(&mut self) {
        self.guard.abort();
    }

    /// An Artifact the stored Task already shows (rebuilding a guard for a follow-up).
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

impl PyTaskGuard {
    /// The guard's verdict on an Artifact update whose Parts' data was read (with the size
    /// read, which decides whether the check lets go of the GIL).
    fn update<'py>(
        &mut self,
        py: Python<'py>,
        artifact_id: &str,
        name: &str,
        (values, size): enforce::PartsRead,
        append: bool,
        last_chunk: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let bundle = &self.bundle.get().bundle;
        let guard = &mut self.guard;
        let v = gil::detach_if_large(py, size, || {
            guard.artifact(bundle, artifact_id, name, values, append, last_chunk)
        });
        enforce::verdict(py, v)
    }
}

/// Whether `state` (an A2A 1.0 wire name) ends a Task: completed, failed, canceled or
/// rejected. Any other name, known or not, does not.
#[pyfunction]
fn is_terminal(state: &str) -> bool {
    State::from_wire(state).is_some_and(State::is_terminal)
}

/// Whether a Task in `state` (an A2A 1.0 wire name) waits for the caller: input-required
/// or auth-required.
#[pyfunction]
fn is_interrupted(state: &str) -> bool {
    State::from_wire(state).is_some_and(State::is_interrupted)
}

/// The extension module `skillbundle._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBundle>()?;
    m.add_class::<PyDescribe>()?;
    m.add_class::<PyInvoke>()?;
    m.add_function(wrap_pyfunction!(body::check_body, m)?)?;
    m.add_function(wrap_pyfunction!(body::body_too_large, m)?)?;
    m.add_function(wrap_pyfunction!(is_terminal, m)?)?;
    m.add_function(wrap_pyfunction!(is_interrupted, m)?)?;
    client::register(m)?;
    m.add_class::<enforce::PyInvocation>()?;
    m.add_class::<PyTaskGuard>()?;
    m.add("DEFAULT_MAX_RECORDS", Limits::DEFAULT_MAX_RECORDS)?;
    m.add(
        "DEFAULT_MAX_ARTIFACT_BYTES",
        Limits::DEFAULT_MAX_ARTIFACT_BYTES,
    )?;
    #[cfg(feature = "oci")]
    m.add_class::<PyFetched>()?;
    m.add("DEFAULT_MAX_BODY_BYTES", BodyLimits::DEFAULT_MAX_BODY_BYTES)?;
    // What a2a-sdk can parse, not the library's general body default (proto.rs).
    m.add("DEFAULT_MAX_DEPTH", proto::CARRIED_BODY_DEPTH)?;
    m.add("DEFAULT_MAX_VALUES", BodyLimits::DEFAULT_MAX_VALUES)?;
    m.add(
        "RESOURCE_LIMIT_EXCEEDED",
        Condition::ResourceLimitExceeded.as_str(),
    )?;
    m.add("DESCRIBE_SKILL", crate::interface::DESCRIBE_SKILL)?;
    m.add("EXTENSION_URI", EXTENSION_URI)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
