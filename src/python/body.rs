//! The strict reading of an A2A request body, for `skillbundle.guard.RequestGuard`: the
//! library's [`crate::agent::body`] (the reader, the limits' defaults and the wording of
//! each refusal), converted to the small tuples the guard dispatches on.

use crate::agent::body::{self, BodyFault, BodyLimits};
use pyo3::prelude::*;

/// A refusal as `("parse", message)` (the binding's parse error) or `("limit",
/// message)` (`resource_limit_exceeded`).
fn answer(fault: BodyFault) -> (&'static str, String) {
    match fault {
        BodyFault::NotIJson(m) => ("parse", m),
        BodyFault::Limit(m) => ("limit", m),
    }
}

/// Why a body was refused ([`answer`]), or `None` when the body is one I-JSON value
/// within the limits.
#[pyfunction]
#[pyo3(signature = (body, *, max_depth, max_values))]
pub fn check_body(
    py: Python<'_>,
    body: &[u8],
    max_depth: usize,
    max_values: usize,
) -> Option<(&'static str, String)> {
    let limits = BodyLimits {
        max_body_bytes: usize::MAX,
        max_depth,
        max_values,
    };
    super::gil::detach_if_large(py, body.len(), || body::check_body(body, &limits))
        .err()
        .map(answer)
}

/// The refusal of a body longer than `max_body_bytes` (always `("limit", message)`).
#[pyfunction]
#[pyo3(signature = (*, max_body_bytes))]
pub fn body_too_large(max_body_bytes: usize) -> (&'static str, String) {
    answer(body::too_large(&BodyLimits {
        max_body_bytes,
        ..BodyLimits::default()
    }))
}
