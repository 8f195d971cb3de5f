//! The strict reading of an A2A request body before an SDK reads it, under the request
//! limits the draft requires (draft: "Resource limits"; I-JSON as "Message and payload
//! encoding" requires it).
//!
//! An SDK may read a request body its own way: a2a-sdk (Python) parses JSON-RPC bodies
//! with Python's `json` (the last of duplicate members wins, integers beyond 2^53 become
//! doubles, UTF-16 text is accepted) and HTTP+JSON bodies with protobuf's parser. One
//! agent would then read the same bytes two ways, and neither the way the draft's I-JSON
//! rules require. A request guard in front of the SDK hands each body to [`check_body`]
//! first: the reader every other JSON value of skillbundle goes through
//! ([`crate::wire::json::parse_with_limits`]), under [`BodyLimits`]. A refusal names the class
//! of fault and its line and column, never the text: nothing a peer sent is echoed.
//!
//! The draft sets no numbers; [`BodyLimits::default`] holds this library's, safe for an
//! agent on the open network. The size limit is the guard's to apply as it reads (a body
//! beyond it is never buffered whole), the other two are applied here.

/// The limits on one request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// The largest body read, in bytes.
    pub max_body_bytes: usize,
    /// The deepest nesting of the body's JSON text, counted from its root. A skill
    /// request object's `arguments` sit 7 levels down in a JSON-RPC body, 6 in an
    /// HTTP+JSON one.
    pub max_depth: usize,
    /// The most JSON values in the body, every object member and array element counted:
    /// what parsing and an SDK's conversions cost grows with them, not with the bytes.
    pub max_values: usize,
}

impl BodyLimits {
    /// 1 MiB.
    pub const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;
    /// 64 levels.
    pub const DEFAULT_MAX_DEPTH: usize = 64;
    /// 20,000 values.
    pub const DEFAULT_MAX_VALUES: usize = 20_000;
}

impl Default for BodyLimits {
    fn default() -> Self {
        BodyLimits {
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_values: Self::DEFAULT_MAX_VALUES,
        }
    }
}

/// Why a body was refused, in words of our own (never the body's text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyFault {
    /// Text that is not one I-JSON value: the binding's parse error.
    NotIJson(String),
    /// Text beyond a limit: the binding's invalid-request error carrying the draft's
    /// `resource_limit_exceeded`.
    Limit(String),
}

impl BodyFault {
    /// What is wrong, and where (line and column).
    pub fn message(&self) -> &str {
        match self {
            BodyFault::NotIJson(m) | BodyFault::Limit(m) => m,
        }
    }
}

/// The refusal of a body longer than [`BodyLimits::max_body_bytes`] (by its
/// `Content-Length`, or by the bytes read so far).
pub fn too_large(limits: &BodyLimits) -> BodyFault {
    BodyFault::Limit(format!(
        "the request body is larger than this agent accepts ({} bytes)",
        limits.max_body_bytes
    ))
}

/// Read `body` strictly under `limits` (nesting and value count): `Ok` when it is one
/// I-JSON value within them.
pub fn check_body(body: &[u8], limits: &BodyLimits) -> Result<(), BodyFault> {
    let error =
        match crate::wire::json::parse_with_limits(body, limits.max_depth, limits.max_values) {
            Ok(_) => return Ok(()),
            Err(error) => error,
        };
    let at = format!("line {}, column {}", error.line, error.column);
    if error.limit {
        let what = if error.message.starts_with("nesting") {
            "nests deeper"
        } else {
            "holds more values"
        };
        return Err(BodyFault::Limit(format!(
            "the request body {what} than this agent accepts (at {at})"
        )));
    }
    Err(BodyFault::NotIJson(format!(
        "the request body is not I-JSON: {} (at {at})",
        fault(&error.message)
    )))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<(), BodyFault> {
        check_body(text.as_bytes(), &BodyLimits::default())
    }

    #[test]
    fn faults_are_classed_and_never_quote_the_body() {
        assert_eq!(check(r#"{"a": [1, 2]}"#), Ok(()));
        for (text, class) in [
            (r#"{"secret": 1, "secret": 2}"#, "repeats a member name"),
            (
                r#"{"secret": 9007199254740993}"#,
                "a number I-JSON does not allow",
            ),
            (r#"{"secret": "\ud800"}"#, "lone surrogate"),
            (r#"{"secret": tru}"#, "not well-formed JSON"),
            ("\u{feff}{}", "byte order mark"),
        ] {
            let Err(BodyFault::NotIJson(m)) = check(text) else {
                panic!("{text} passed")
            };
            assert!(m.contains(class), "{m}");
            assert!(!m.contains("secret") && !m.contains("9007"), "{m}");
        }
    }

    #[test]
    fn limits_are_resource_limits() {
        let limits = BodyLimits {
            max_depth: 3,
            max_values: 5,
            ..BodyLimits::default()
        };
        let deep = check_body(b"[[[[1]]]]", &limits);
        assert!(matches!(&deep, Err(BodyFault::Limit(m)) if m.contains("nests deeper")));
        let many = check_body(b"[1,2,3,4,5,6]", &limits);
        assert!(matches!(&many, Err(BodyFault::Limit(m)) if m.contains("more values")));
        assert!(too_large(&limits).message().contains("1048576 bytes"));
    }
}
