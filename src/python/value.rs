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
//! [`check_members`] applies the rules without copying anything: a request's arguments are then
//! validated where they are (the input_schema's validator reads Python objects in place,
//! [`crate::schema::validator::Governed::python_validator`]), and never copied at all.
//! [`to_json`] applies the same rules while it builds a `serde_json::Value`, for values
//! the library must hold (a result, a record, an Agent Card).

use crate::wire::json::MAX_SAFE_INTEGER;
use crate::wire::pointer;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::{ffi, Borrowed};
use serde_json::{Map, Number, Value};

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
    convert(obj, 0, max_depth).map_err(refused)
}

/// The top-level members of a `dict` that [`check_members`] was asked for.
pub struct Members<'py, const N: usize> {
    /// The value of each member asked for, in the order of the names; `None` if absent.
    pub values: [Option<Bound<'py, PyAny>>; N],
    /// The text of each value that is a `str`, as the walk read it (`None` for other
    /// values, and for a `str` the walk had admitted before). It is the value's own
    /// UTF-8 form, which lives as long as the value [`Members::values`] holds.
    texts: [Option<*const str>; N],
    /// Whether the dict has a member not asked for.
    pub others: bool,
}

impl<const N: usize> Members<'_, N> {
    /// The text of member `i` if it is a `str` the walk read ([`Members::values`] has
    /// the member itself).
    pub fn text(&self, i: usize) -> Option<&str> {
        // SAFETY: the text is the UTF-8 form CPython keeps with the immutable `str` that
        // `values[i]` holds a reference to, so it lives at least as long as `self`.
        self.texts[i].map(|t| unsafe { &*t })
    }
}

/// Check that a Python object is a JSON value under the rules [`to_json`] applies, without
/// converting it: the same refusals, with the same pointers. Containers nested more than
/// `max_depth` levels are refused rather than recursed into. When `obj` is a `dict`, the
/// values of its top-level members named `names` are handed back (`None` when it is
/// anything else): the walk reads every member anyway, so the caller needs no lookup of
/// its own.
///
/// This is on the path of every request, so it reads the objects through the C API with
/// borrowed references: no reference count is touched and nothing is allocated unless a
/// value is refused (a walk through pyo3's owned handles cost about 25 ns per value, more
/// than validating it). What makes the borrowed references sound: the walk holds the GIL
/// and runs no Python code (exact built-in types only, whose type checks, `PyDict_Next`,
/// item access, UTF-8 view and number reads call no method of the caller's), so no
/// container it reads can change under it.
#[inline(always)] // With its caller's `names`, the comparisons need no `memcmp`.
pub fn check_members<'py, const N: usize>(
    obj: &Bound<'py, PyAny>,
    max_depth: usize,
    names: &[&str; N],
) -> Result<Option<Members<'py, N>>, Refused> {
    let py = obj.py();
    let mut walker = Walker::new(py);
    if !obj.is_exact_instance_of::<PyDict>() {
        // SAFETY: `obj` is a live object and the GIL is held for the whole walk.
        return unsafe { walker.walk(obj.as_ptr(), 0, max_depth) }
            .map(|_| None)
            .map_err(refused);
    }
    let mut found = [std::ptr::null_mut(); N];
    let mut texts = [None; N];
    let mut others = false;
    // SAFETY: as above; the pointers found are the dict's own values, held by it
    // until they are made owned below, before any Python code can run.
    unsafe {
        walker
            .dict(
                obj.as_ptr(),
                0,
                max_depth,
                |key, name, value, value_text| {
                    let name = name.unwrap_or_else(|| text(key));
                    match names.iter().position(|n| *n == name) {
                        Some(i) => {
                            found[i] = value;
                            texts[i] = value_text.map(|t| t as *const str);
                        }
                        None => others = true,
                    }
                },
            )
            .map_err(refused)?;
        Ok(Some(Members {
            values: found.map(|v| (!v.is_null()).then(|| Bound::from_borrowed_ptr(py, v))),
            texts,
            others,
        }))
    }
}

/// Slots of [`Walker::admitted`] (a power of two).
const ADMITTED_SLOTS: usize = 64;

fn refused((mut tokens, why): Failure) -> Refused {
    tokens.reverse();
    let mut pointer = String::new();
    for t in tokens {
        pointer.push('/');
        pointer.push_str(&pointer::escape(&t));
    }
    Refused { pointer, why }
}

/// The exact types [`check_members`] admits.
struct Types {
    dict: *mut ffi::PyTypeObject,
    list: *mut ffi::PyTypeObject,
    tuple: *mut ffi::PyTypeObject,
    str_: *mut ffi::PyTypeObject,
    int: *mut ffi::PyTypeObject,
    float: *mut ffi::PyTypeObject,
    bool_: *mut ffi::PyTypeObject,
}

impl Types {
    fn get() -> Self {
        // Only the addresses of the interpreter's static type objects are taken.
        Types {
            dict: &raw mut ffi::PyDict_Type,
            list: &raw mut ffi::PyList_Type,
            tuple: &raw mut ffi::PyTuple_Type,
            str_: &raw mut ffi::PyUnicode_Type,
            int: &raw mut ffi::PyLong_Type,
            float: &raw mut ffi::PyFloat_Type,
            bool_: &raw mut ffi::PyBool_Type,
        }
    }
}

/// The UTF-8 form of an exact `str`, if it has one (holds no lone surrogate). CPython
/// makes the form once and keeps it with the object (for ASCII text it is the text
/// itself), so it lives as long as `s`.
///
/// # Safety
/// `s` is a live exact `str` and the GIL is held; the text is not used after `s` is freed.
#[inline]
unsafe fn utf8<'a>(s: *mut ffi::PyObject) -> Option<&'a str> {
    // Compact ASCII text (member names, identifiers, enum values: most of a request) is
    // its own UTF-8 form, read in place where the build knows the version's layout
    // (build.rs); the stable ABI and 3.14's hidden bit-fields go through the call below.
    #[cfg(not(any(Py_LIMITED_API, Py_3_14)))]
    if ffi::PyUnicode_IS_COMPACT_ASCII(s) != 0 {
        return Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(
            ffi::PyUnicode_1BYTE_DATA(s),
            ffi::PyUnicode_GET_LENGTH(s) as usize,
        )));
    }
    let mut size: ffi::Py_ssize_t = 0;
    let data = ffi::PyUnicode_AsUTF8AndSize(s, &mut size);
    if data.is_null() {
        // UnicodeEncodeError: a lone surrogate. Nothing of it is reported.
        ffi::PyErr_Clear();
        return None;
    }
    // CPython's UTF-8 form is valid UTF-8 (what fails to encode failed above).
    Some(std::str::from_utf8_unchecked(std::slice::from_raw_parts(
        data.cast::<u8>(),
        size as usize,
    )))
}

// A `float`'s value and a `list`'s or `tuple`'s items: read in place by a build for one
// CPython version (the macros of its headers), through the stable ABI's calls by an abi3
// build. Each takes a live object of its exact type, with the GIL held; an index is in range.

#[cfg(not(Py_LIMITED_API))]
use ffi::{
    PyFloat_AS_DOUBLE as float_value, PyList_GET_ITEM as list_item, PyList_GET_SIZE as list_len,
    PyTuple_GET_ITEM as tuple_item, PyTuple_GET_SIZE as tuple_len,
};
#[cfg(Py_LIMITED_API)]
use ffi::{
    PyFloat_AsDouble as float_value, PyList_GetItem as list_item, PyList_Size as list_len,
    PyTuple_GetItem as tuple_item, PyTuple_Size as tuple_len,
};

/// The text of a `str` [`utf8`] admitted.
///
/// # Safety
/// As [`utf8`].
unsafe fn text<'a>(s: *mut ffi::PyObject) -> &'a str {
    utf8(s).unwrap_or_default()
}

/// [`check_members`]'s state: the exact types it admits, and the `str` and `int` objects it has
/// already admitted in this walk, by address (direct-mapped). Those objects are
/// immutable and, while the walk runs, none is freed (every one is held by a container
/// that nothing changes), so an address seen again is the same object with the same
/// verdict. It pays where one object recurs: member names (a JSON decoder makes one
/// object per distinct name; code that builds dicts from literals shares them too),
/// small integers (CPython's are shared), repeated enum values.
struct Walker<'py> {
    py: Python<'py>,
    types: Types,
    admitted: [*mut ffi::PyObject; ADMITTED_SLOTS],
}

impl<'py> Walker<'py> {
    fn new(py: Python<'py>) -> Self {
        Walker {
            py,
            types: Types::get(),
            admitted: [std::ptr::null_mut(); ADMITTED_SLOTS],
        }
    }

    fn slot(obj: *mut ffi::PyObject) -> usize {
        // Objects are at least 16-byte aligned: the low bits say nothing.
        (obj as usize >> 4) & (ADMITTED_SLOTS - 1)
    }

    /// Whether `obj` was admitted before in this walk; if not, it will be once `admit`
    /// says so.
    fn seen(&self, obj: *mut ffi::PyObject) -> bool {
        self.admitted[Self::slot(obj)] == obj
    }

    fn admit(&mut self, obj: *mut ffi::PyObject) {
        self.admitted[Self::slot(obj)] = obj;
    }

    /// A member name: an exact `str` with a UTF-8 form. Its text when it was read now
    /// (`None` when the same name was admitted before).
    ///
    /// # Safety
    /// As [`Walker::walk`]; the text lives as long as `key`.
    #[inline(always)]
    unsafe fn key<'a>(&mut self, key: *mut ffi::PyObject) -> Result<Option<&'a str>, Failure> {
        // The type first: an admitted int is no member name.
        if ffi::Py_TYPE(key) != self.types.str_ {
            let k = Borrowed::from_ptr(self.py, key);
            return Err((Vec::new(), Refusal::KeyNotStr(type_name(&k))));
        }
        if self.seen(key) {
            return Ok(None);
        }
        let Some(text) = utf8(key) else {
            return Err((Vec::new(), Refusal::LoneSurrogate));
        };
        self.admit(key);
        Ok(Some(text))
    }

    /// One object of [`check_members`]'s walk, by the rules of [`convert`]. Scalars are judged
    /// here, inlined into the loop over their container; only containers recurse. The
    /// text of a `str` read now is handed back (not one admitted before).
    ///
    /// # Safety
    /// `obj` is a live object, the GIL is held, the text is not used after `obj` is
    /// freed, and nothing the walk reads is changed
    /// while it runs (no Python code runs: see [`check_members`]).
    #[inline(always)]
    unsafe fn walk<'a>(
        &mut self,
        obj: *mut ffi::PyObject,
        depth: usize,
        max: usize,
    ) -> Result<Option<&'a str>, Failure> {
        let t = &self.types;
        let ty = ffi::Py_TYPE(obj);
        if ty == t.str_ {
            if self.seen(obj) {
                return Ok(None);
            }
            let Some(text) = utf8(obj) else {
                return Err((Vec::new(), Refusal::LoneSurrogate));
            };
            self.admit(obj);
            return Ok(Some(text));
        }
        if ty == t.dict || ty == t.list || ty == t.tuple {
            return self.container(obj, ty, depth, max).map(|()| None);
        }
        if ty == t.float {
            return if ijson_float(float_value(obj)) {
                Ok(None)
            } else {
                Err((Vec::new(), Refusal::NumberNotIJson))
            };
        }
        if ty == t.int {
            if self.seen(obj) {
                return Ok(None);
            }
            let mut overflow: std::os::raw::c_int = 0;
            let v = ffi::PyLong_AsLongLongAndOverflow(obj, &mut overflow);
            if overflow != 0 || v.unsigned_abs() > MAX_SAFE_INTEGER {
                return Err((Vec::new(), Refusal::IntegerOutOfRange));
            }
            self.admit(obj);
            return Ok(None);
        }
        if ty == t.bool_ || obj == ffi::Py_None() {
            return Ok(None);
        }
        let o = Borrowed::from_ptr(self.py, obj);
        Err((Vec::new(), Refusal::NotJson(type_name(&o))))
    }

    /// A `dict`, `list` or `tuple` (`ty`) at `depth`: refused beyond `max`, else each
    /// member name and value.
    ///
    /// # Safety
    /// As [`Walker::walk`].
    #[inline(never)]
    unsafe fn container(
        &mut self,
        obj: *mut ffi::PyObject,
        ty: *mut ffi::PyTypeObject,
        depth: usize,
        max: usize,
    ) -> Result<(), Failure> {
        if ty == self.types.dict {
            return self.dict(obj, depth, max, |_, _, _, _| ());
        }
        if depth >= max {
            return Err((Vec::new(), Refusal::TooDeep(max)));
        }
        let list = ty == self.types.list;
        let len = if list { list_len(obj) } else { tuple_len(obj) };
        for i in 0..len {
            let item = if list {
                list_item(obj, i)
            } else {
                tuple_item(obj, i)
            };
            if let Err((mut path, why)) = self.walk(item, depth + 1, max) {
                path.push(i.to_string());
                return Err((path, why));
            }
        }
        Ok(())
    }
}

impl Walker<'_> {
    /// An exact `dict` at `depth`: refused beyond `max`, else each member name and value;
    /// `member` is told each member's name, its text if the walk read it (not when the
    /// same name was admitted before), its value and the value's text if it is a `str`
    /// the walk read ([`Walker::walk`]), once both are admitted.
    ///
    /// # Safety
    /// As [`Walker::walk`]; `obj` is an exact `dict`.
    #[inline(always)]
    unsafe fn dict(
        &mut self,
        obj: *mut ffi::PyObject,
        depth: usize,
        max: usize,
        mut member: impl FnMut(*mut ffi::PyObject, Option<&str>, *mut ffi::PyObject, Option<&str>),
    ) -> Result<(), Failure> {
        if depth >= max {
            return Err((Vec::new(), Refusal::TooDeep(max)));
        }
        let mut pos: ffi::Py_ssize_t = 0;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // As many members as the dict holds, and no call past the last: the call that
        // reports the end costs as much as one that reads a member.
        for _ in 0..ffi::PyDict_Size(obj) {
            if ffi::PyDict_Next(obj, &mut pos, &mut key, &mut value) == 0 {
                break;
            }
            let name = self.key(key)?;
            match self.walk(value, depth + 1, max) {
                Ok(value_text) => member(key, name, value, value_text),
                Err((mut path, why)) => {
                    // An admitted key has a UTF-8 form.
                    path.push(text(key).to_owned());
                    return Err((path, why));
                }
            }
        }
        Ok(())
    }
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
            Ok(v) if v.unsigned_abs() <= MAX_SAFE_INTEGER => Ok(Value::Number(v.into())),
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
