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

/// Bodies from this size on are read with the GIL released, so that the agent's other
/// threads run meanwhile; a smaller one (a skill request is a few hundred bytes) is read
/// in less time than releasing and taking back the GIL costs.
const DETACH_FROM_BYTES: usize = 16 * 1024;

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
    let checked = if body.len() < DETACH_FROM_BYTES {
        body::check_body(body, &limits)
    } else {
        py.detach(|| body::check_body(body, &limits))
    };
    checked.err().map(answer)
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
