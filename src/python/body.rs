//! The strict reading of an A2A request body, for `skillbundle.guard.RequestGuard`.
//!
//! a2a-sdk parses JSON-RPC bodies with Python's `json` (the last of duplicate members
//! wins, integers beyond 2^53 become doubles, UTF-16 text is accepted) and HTTP+JSON
//! bodies with protobuf's parser, so one agent would read the same bytes two ways, and
//! neither the way the draft's I-JSON rules require. The guard hands each body to
//! [`check_body`] first: the same reader ([`crate::json::parse_with_limits`]) every
//! other JSON value of skillbundle goes through, under the request limits the draft's
//! "Resource limits" section requires (nesting and value count; size is counted by the
//! guard as it reads). What comes back names the class of fault and its line and column,
//! never the text: nothing a peer sent is echoed.

use pyo3::prelude::*;

/// Why a body was refused: `("parse", message)` for text that is not I-JSON (the
/// binding's parse error), `("limit", message)` for text beyond a limit
/// (`resource_limit_exceeded`). `None` when the body is one I-JSON value within limits.
#[pyfunction]
#[pyo3(signature = (body, *, max_depth, max_values))]
pub fn check_body(
    py: Python<'_>,
    body: &[u8],
    max_depth: usize,
    max_values: usize,
) -> Option<(&'static str, String)> {
    let error = py
        .detach(|| crate::json::parse_with_limits(body, max_depth, max_values).map(drop))
        .err()?;
    let at = format!("line {}, column {}", error.line, error.column);
    if error.limit {
        let what = if error.message.starts_with("nesting") {
            "nests deeper"
        } else {
            "holds more values"
        };
        return Some((
            "limit",
            format!("the request body {what} than this agent accepts (at {at})"),
        ));
    }
    Some((
        "parse",
        format!(
            "the request body is not I-JSON: {} (at {at})",
            fault(&error.message)
        ),
    ))
}

/// The class of a reader's fault in words of our own: the reader's message may quote the
/// text (a member name, a number), which must not go back to the peer.
fn fault(message: &str) -> &'static str {
    if message.starts_with("bytes that are not valid UTF-8")
        || message.starts_with("byte order mark")
    {
        "it is not UTF-8 text without a byte order mark"
    } else if message.starts_with("duplicate member name") {
        "an object repeats a member name"
    } else if message.starts_with("integer ") || message.starts_with("number ") {
        "it holds a number I-JSON does not allow (an integer beyond ±(2^53−1), or not a finite double)"
    } else if message.starts_with("lone surrogate") {
        "a string holds a lone surrogate escape"
    } else {
        "it is not well-formed JSON"
    }
}
