//! Python objects ⇄ JSON values, with the same strictness as the Rust reader.
//!
//! A Python agent hands the library dicts, lists and numbers, not JSON text, so the I-JSON
//! rules that [`crate::wire::json::parse`] applies to bytes must be applied here to objects:
//! an `int` beyond ±(2^53−1) and a `float` that is not finite (or that is an integer
//! beyond that range) are refused instead of being rounded, a `str` with a lone surrogate
//! is refused, mapping keys must be `str`, and only `None`, `bool`, `int`, `float`, `str`,
//! `dict`, `list` and `tuple` are JSON at all. A refusal carries the JSON Pointer of the
//! offending value and never the value itself.
//!
//! Only those exact types are admitted, never a subclass: a `dict` subclass may answer
//! `__getitem__` or `items()` with other values than its storage holds, an `int` subclass
//! may compare or format as something else, so the value the library validated and the
//! value the agent's code later reads could differ. With exact types what is converted
//! here is what every later reader sees.
//!
//! The conversion walks the object once and builds the `serde_json::Value` directly: a
//! large request is copied exactly once on its way into the validator.

use crate::wire::pointer;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// The largest integer I-JSON allows (2^53 − 1).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Why a Python object is not a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// An object of a type that has no JSON form (its Python type name).
    NotJson(String),
    /// A mapping key that is not a `str` (its Python type name).
    KeyNotStr(String),
    /// An `int` beyond ±(2^53−1).
    IntegerOutOfRange,
    /// A `float` that is NaN or infinite, or an integer beyond ±(2^53−1).
    NumberNotIJson,
    /// A `str` (value or key) with a lone surrogate: it has no UTF-8 form.
    LoneSurrogate,
    /// Nested deeper than the limit.
    TooDeep(usize),
}

impl Refusal {
    /// What is wrong, without the value.
    pub fn describe(&self) -> String {
        match self {
            Refusal::NotJson(t) => format!("a Python {t} has no JSON form (use dict, list, tuple, str, int, float, bool or None; subclasses are refused, so that what is validated is what is read)"),
            Refusal::KeyNotStr(t) => format!("an object member name must be a str (not a subclass), not a Python {t}"),
            Refusal::IntegerOutOfRange => "an integer beyond ±(2^53−1), which I-JSON does not allow".to_string(),
            Refusal::NumberNotIJson => "a number that is not a finite I-JSON number (NaN, an infinity, or an integer beyond ±(2^53−1))".to_string(),
            Refusal::LoneSurrogate => "a string with a lone surrogate, which has no UTF-8 form".to_string(),
            Refusal::TooDeep(max) => format!("a value nested more than {max} levels deep"),
        }
    }

    /// Whether the object is simply not JSON (a programming error, `TypeError`) rather
    /// than JSON-shaped data that breaks an I-JSON rule.
    pub fn is_type_error(&self) -> bool {
        matches!(self, Refusal::NotJson(_) | Refusal::KeyNotStr(_))
    }
}

/// A refused object: where (a JSON Pointer from the converted root) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub pointer: String,
    pub why: Refusal,
}

/// Convert a Python object to a JSON value, refusing what I-JSON refuses. Values nested
/// more than `max_depth` levels are refused rather than recursed into.
pub fn to_json(obj: &Bound<'_, PyAny>, max_depth: usize) -> Result<Value, Refused> {
    convert(obj, 0, max_depth).map_err(|(mut tokens, why)| {
        tokens.reverse();
        let mut pointer = String::new();
        for t in tokens {
            pointer.push('/');
            pointer.push_str(&pointer::escape(&t));
        }
        Refused { pointer, why }
    })
}

/// On failure: the path tokens from the failing value up to the root, and why.
type Failure = (Vec<String>, Refusal);

fn convert(obj: &Bound<'_, PyAny>, depth: usize, max: usize) -> Result<Value, Failure> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    // bool before int: a Python bool is an int.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast_exact::<PyString>() {
        return string(s).map(Value::String);
    }
    if let Ok(i) = obj.cast_exact::<PyInt>() {
        return match i.extract::<i64>() {
            Ok(v) if v.unsigned_abs() <= MAX_SAFE_INTEGER as u64 => Ok(Value::Number(v.into())),
            _ => Err((Vec::new(), Refusal::IntegerOutOfRange)),
        };
    }
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        let v = f.value();
        let number = Number::from_f64(v).filter(|_| ijson_float(v));
        return number
            .map(Value::Number)
            .ok_or((Vec::new(), Refusal::NumberNotIJson));
    }
    if depth >= max
        && (obj.cast_exact::<PyDict>().is_ok()
            || obj.cast_exact::<PyList>().is_ok()
            || obj.cast_exact::<PyTuple>().is_ok())
    {
        return Err((Vec::new(), Refusal::TooDeep(max)));
    }
    if let Ok(d) = obj.cast_exact::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(key) = k.cast_exact::<PyString>() else {
                let t = type_name(&k);
                return Err((Vec::new(), Refusal::KeyNotStr(t)));
            };
            let key = string(key)?;
            match convert(&v, depth + 1, max) {
                Ok(value) => {
                    map.insert(key, value);
                }
                Err((mut path, why)) => {
                    path.push(key);
                    return Err((path, why));
                }
            }
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast_exact::<PyList>() {
        return sequence(l.iter(), l.len(), depth, max);
    }
    if let Ok(t) = obj.cast_exact::<PyTuple>() {
        return sequence(t.iter(), t.len(), depth, max);
    }
    Err((Vec::new(), Refusal::NotJson(type_name(obj))))
}

fn sequence<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    depth: usize,
    max: usize,
) -> Result<Value, Failure> {
    let mut out = Vec::with_capacity(len);
    for (i, item) in items.enumerate() {
        match convert(&item, depth + 1, max) {
            Ok(v) => out.push(v),
            Err((mut path, why)) => {
                path.push(i.to_string());
                return Err((path, why));
            }
        }
    }
    Ok(Value::Array(out))
}

fn string(s: &Bound<'_, PyString>) -> Result<String, Failure> {
    s.to_str()
        .map(str::to_owned)
        .map_err(|_| (Vec::new(), Refusal::LoneSurrogate))
}

/// A finite float that is not an integer beyond ±(2^53−1) (the rule
/// [`crate::wire::json::check_numbers`] applies).
fn ijson_float(v: f64) -> bool {
    if !v.is_finite() {
        return false;
    }
    if v.fract() == 0.0 && v.abs() > MAX_SAFE_INTEGER as f64 {
        // Delegate the exact rule (integral doubles from 1e21 on are written in exponent
        // form and allowed) to the one place that defines it.
        return Number::from_f64(v)
            .is_some_and(|n| crate::wire::json::check_numbers(&Value::Number(n)).is_ok());
    }
    true
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_string())
}

/// Convert a JSON value to Python: objects become `dict` (member order kept), arrays
/// `list`, integers `int`, other numbers `float`.
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_python(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
