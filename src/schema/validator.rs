//! Compiling and running draft 2020-12 validators the way interface version 1.0 demands.
//!
//! `jsonschema` does the validating; this thin wrapper pins the choices the draft makes
//! for us, so that no caller can forget one:
//!
//! - the dialect is draft 2020-12, whatever `$schema` says (the dialect check reports a
//!   disagreeing `$schema` separately);
//! - `format` is an assertion (version 1.0 requires it even though 2020-12 defaults to
//!   annotation), and an unknown format name is a compile error instead of a silent pass;
//! - nothing is ever retrieved: the crate is built without its HTTP and file resolvers and
//!   the retriever refuses every URI ([`NoRetrieval`]). Only the meta-schemas bundled in
//!   `jsonschema` are available — which is why the closure check must run first: it is
//!   what forbids a `$ref` to the meta-schema URI;
//! - `pattern` uses `fancy-regex` with a backtracking budget ([`MAX_PATTERN_BACKTRACK_STEPS`]): plain
//!   patterns such as `^(a+)+$` run on the linear-time `regex` engine anyway, and a pattern
//!   that needs backtracking (look-around, back-references) fails its instance with a
//!   `pattern` error once the budget is spent instead of running for minutes;
//! - compilation, meta-validation and instance validation recurse, so values nested deeper
//!   than [`MAX_NESTING`] are refused up front rather than overflowing the stack.
//!
//! Errors come back as plain data ([`ValidationDetail`], [`Finding`]), never printed.

use super::limits::first_beyond_depth;
use super::walk::SchemaTree;
use crate::finding::{Code, Finding, Location};
use crate::wire::schema_bytes::SchemaBytes;
use jsonschema::error::ValidationErrorKind;
use jsonschema::{PatternOptions, Retrieve, Uri, ValidationError};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Backtracking steps `fancy-regex` may take for one `pattern` match before giving up
/// (its own default is 1,000,000). Exhausting it fails the instance.
pub const MAX_PATTERN_BACKTRACK_STEPS: usize = 100_000;

/// Deepest nesting of JSON objects and arrays that is compiled, meta-validated or
/// validated. A hard ceiling that protects the stack of the recursive validator whatever
/// the configured [`Limits`](super::limits::Limits) say; it matches `serde_json`'s own
/// default recursion limit.
pub const MAX_NESTING: usize = 128;

/// A retriever that refuses everything: interface version 1.0 forbids network and
/// filesystem schema retrieval.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRetrieval;

impl Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("schema retrieval is disabled; `{uri}` is not inside the inline schema").into())
    }
}

/// One reason an instance is invalid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidationDetail {
    /// JSON Pointer to the offending part of the instance.
    pub instance_path: String,
    /// The failing keyword's evaluation path from the schema root, through every `$ref`
    /// taken (JSON Schema's "keywordLocation", e.g. `/properties/a/$ref/maxLength`). It
    /// is always relative to the root, unlike a location inside an embedded resource.
    pub schema_path: String,
    /// The failing keyword, e.g. `required`, `format`, `pattern`.
    pub keyword: String,
    /// The validator's message.
    pub message: String,
}

/// A compiled schema.
#[derive(Debug)]
pub struct Validator {
    inner: jsonschema::Validator,
}

/// Compiled `pattern` regular expressions shared between the validators built with the
/// same cache (see `compile`), and the verdicts of `probe` on each distinct `format`
/// name and regular expression. Clones share one cache; it lives as long as one of them
/// does.
#[derive(Debug, Clone, Default)]
pub struct PatternCache {
    compiled: jsonschema::PatternCache,
    /// (keyword, text) → the finding compiling `{keyword: text}` gave (its location is
    /// the caller's to set), or `None` when it compiled.
    probed: Arc<Mutex<HashMap<Probe, Option<Finding>>>>,
}

/// What [`probe`] compiles alone: (`format` or `pattern`, the name or expression).
type Probe = (&'static str, String);

impl PatternCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }
}

/// A schema that passed governance ([`super::govern_lazily`]), compiled on first use.
///
/// Compiling is most of what loading a bundle would cost (three quarters of `verify`'s
/// memory and a third of its time at 10,000 skills, measured), and an agent rarely
/// calls every skill it serves. So governance proves instead that compiling cannot fail
/// — the limits, dialect and closure checks, the meta-schema, and `probe` for what
/// only the compiler would otherwise find — and keeps the schema's canonical bytes; the
/// validator is built the first time [`Governed::validator`] is called, once.
#[derive(Debug)]
pub struct Governed {
    canonical: SchemaBytes,
    patterns: PatternCache,
    compiled: OnceLock<Result<Validator, Finding>>,
    /// The same schema compiled for Python objects read in place (feature `python`).
    #[cfg(feature = "python")]
    python: OnceLock<Result<jsonschema::Validator<jsonschema::json::Pyo3>, Finding>>,
}

impl Governed {
    pub(super) fn new(canonical: SchemaBytes, patterns: &PatternCache) -> Self {
        Governed {
            canonical,
            patterns: patterns.clone(),
            compiled: OnceLock::new(),
            #[cfg(feature = "python")]
            python: OnceLock::new(),
        }
    }

    /// The schema's validator, compiled on the first call. The error is unreachable for
    /// a schema that passed governance; it is returned, not panicked on, all the same.
    pub fn validator(&self) -> Result<&Validator, &Finding> {
        self.compiled
            .get_or_init(|| {
                // Bytes governance canonicalized, within its depth limit: they parse.
                let schema =
                    crate::wire::json::parse_with_depth(&self.canonical.bytes(), MAX_NESTING)
                        .map_err(|_| too_deep("the schema", String::new()))?;
                compile(&schema, &self.patterns).map_err(|mut f| f.swap_remove(0))
            })
            .as_ref()
    }

    /// The schema's validator for Python objects, read in place without a copy into
    /// `serde_json` values (`jsonschema`'s `Pyo3` representation), compiled on the first
    /// call with the very options of [`Governed::validator`]. It sees only what the Python
    /// face's I-JSON walk admitted (exact built-in types, finite numbers, bounded depth),
    /// so it judges the same values the same way.
    #[cfg(feature = "python")]
    pub fn python_validator(
        &self,
    ) -> Result<&jsonschema::Validator<jsonschema::json::Pyo3>, &Finding> {
        self.python
            .get_or_init(|| {
                let schema =
                    crate::wire::json::parse_with_depth(&self.canonical.bytes(), MAX_NESTING)
                        .map_err(|_| too_deep("the schema", String::new()))?;
                options_for::<jsonschema::json::Pyo3>()
                    .with_pattern_cache(self.patterns.compiled.clone())
                    .build(&schema)
                    .map_err(|e| compile_finding(&e))
            })
            .as_ref()
    }

    /// Whether the validator has been compiled yet.
    pub fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }
}

/// The one set of validator options the project uses: draft 2020-12, `format` asserted,
/// unknown formats refused, retrieval impossible, bounded regex backtracking.
pub(crate) fn options() -> jsonschema::ValidationOptions<'static> {
    options_for::<jsonschema::json::SerdeJson>()
}

/// [`options`] for validators that read instances in the representation `F`.
fn options_for<F: jsonschema::json::Json>(
) -> jsonschema::ValidationOptions<'static, Arc<dyn Retrieve>, F> {
    jsonschema::options_for::<F>()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .with_retriever(NoRetrieval)
        .with_pattern_options(
            PatternOptions::fancy_regex().backtrack_limit(MAX_PATTERN_BACKTRACK_STEPS),
        )
}

fn too_deep(what: &str, at: String) -> Finding {
    Finding::new(
        Code::ResourceLimitExceeded,
        format!("{what} is nested too deeply to be evaluated safely"),
        Location::default().with_pointer(at),
    )
}

/// Compile `schema` as draft 2020-12 with the version 1.0 settings described above —
/// only ever called by [`super::govern`], after the limits, dialect and closure checks.
///
/// On failure, every meta-schema violation is returned ([`Code::SchemaInvalid`]) or else
/// the compiler's error: an unknown `format`, an invalid `pattern` ([`Code::SchemaInvalid`],
/// at the keyword), or a reference it cannot resolve ([`Code::RefUnresolved`]; the closure
/// check reports those better). Values nested deeper than [`MAX_NESTING`] give
/// [`Code::ResourceLimitExceeded`].
///
/// Compiled `pattern`s are shared with every other validator compiled with the same
/// `patterns` cache. Regular expressions were most of the cost of compiling (a
/// third of `verify`'s instructions on generated skills, where a few patterns recur in
/// every schema); with the cache each distinct pattern is compiled once per cache, and
/// validators that keep it share one copy. The result does not depend on the cache: it is
/// keyed by the pattern and the engine options, which are always ours.
///
/// Meta-schema validation: `jsonschema` validates the schema against the draft 2020-12
/// meta-schema while building, so a schema that builds is meta-valid, and
/// [`metaschema_errors`] (which reports every violation, not only the first) only runs
/// when the build fails — the findings are the same as running it first, without
/// validating every schema against the meta-schema twice.
pub(super) fn compile(schema: &Value, patterns: &PatternCache) -> Result<Validator, Vec<Finding>> {
    if let Some(at) = first_beyond_depth(schema, MAX_NESTING) {
        return Err(vec![too_deep("the schema", at)]);
    }
    options()
        .with_pattern_cache(patterns.compiled.clone())
        .build(schema)
        .map(|inner| Validator { inner })
        .map_err(|error| {
            let meta = metaschema_errors(schema);
            if meta.is_empty() {
                vec![compile_finding(&error)]
            } else {
                meta
            }
        })
}

/// What only compiling would otherwise find in a meta-valid, closed schema: a `format`
/// name the dialect does not define (formats are asserted, so it is an error) and a
/// regular expression (`pattern`, a `patternProperties` name) that does not compile.
/// Each distinct name or expression is compiled alone, once per cache (`{"format": …}`,
/// `{"pattern": …}`, with the same options and pattern cache as [`compile`]), so the
/// regular expressions are compiled here once and shared with the validators built later.
pub(super) fn probe(schema: &Value, patterns: &PatternCache) -> Vec<Finding> {
    let tree = SchemaTree::new(schema);
    let mut findings = Vec::new();
    // Pointers are built only for findings (most probes pass).
    let mut check = |keyword: &'static str, text: &str, at: &dyn Fn() -> String| {
        let lock = || {
            patterns
                .probed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        };
        let key = (keyword, text.to_owned());
        let known = lock().get(&key).cloned();
        // Compiled without holding the lock: other threads probe other schemas meanwhile.
        let verdict = known.unwrap_or_else(|| {
            let verdict = options()
                .with_pattern_cache(patterns.compiled.clone())
                .build(&json!({ keyword: text }))
                .err()
                .map(|e| compile_finding(&e));
            lock().insert(key, verdict.clone());
            verdict
        });
        if let Some(mut finding) = verdict {
            finding.location = Location::default().with_pointer(at());
            findings.push(finding);
        }
    };
    for (index, node) in tree.nodes.iter().enumerate() {
        let Value::Object(map) = node.value else {
            continue;
        };
        if let Some(Value::String(name)) = map.get("format") {
            check("format", name, &|| tree.keyword_pointer(index, "format"));
        }
        if let Some(Value::String(pattern)) = map.get("pattern") {
            check("pattern", pattern, &|| {
                tree.keyword_pointer(index, "pattern")
            });
        }
        if let Some(Value::Object(properties)) = map.get("patternProperties") {
            let at = || tree.keyword_pointer(index, "patternProperties");
            for pattern in properties.keys() {
                check("pattern", pattern, &|| {
                    crate::wire::pointer::child(&at(), pattern)
                });
            }
        }
    }
    findings
}

fn compile_finding(error: &ValidationError<'_>) -> Finding {
    let path = error.instance_path().as_str();
    let code = match error.kind() {
        ValidationErrorKind::Referencing(_) => Code::RefUnresolved,
        _ => Code::SchemaInvalid,
    };
    let mut location = Location::default();
    if !path.is_empty() || code != Code::RefUnresolved {
        location = location.with_pointer(path);
    }
    let text = error.to_string();
    if text.starts_with("Unknown format:") {
        // The library's wording names its own configuration; say what the author can change.
        return Finding::new(
            Code::SchemaInvalid,
            "unknown `format` name: formats are asserted, so a name the dialect does not define cannot be checked",
            location,
        )
        .with_help("use a format draft 2020-12 defines (such as date-time, ipv4, ipv6, hostname, uri, uuid), or express the constraint with `pattern`");
    }
    Finding::new(
        code,
        format!("the schema does not compile: {text}"),
        location,
    )
}

/// An instance nested deeper than [`MAX_NESTING`], which is never evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the instance is nested more than {MAX_NESTING} levels deep")]
pub(crate) struct TooDeep {
    /// The JSON Pointer of the first value beyond that depth.
    pub(crate) pointer: String,
}

impl Validator {
    /// Every error of `instance`, as the underlying jsonschema errors (for callers that
    /// need their kinds), or — for an instance nested deeper than [`MAX_NESTING`], which
    /// is never evaluated (the validator recurses along it) — the pointer to the first
    /// value beyond that depth.
    pub(crate) fn evaluate<'i>(
        &'i self,
        instance: &'i Value,
    ) -> Result<jsonschema::ErrorIterator<'i>, TooDeep> {
        match first_beyond_depth(instance, MAX_NESTING) {
            Some(pointer) => Err(TooDeep { pointer }),
            None => Ok(self.inner.iter_errors(instance)),
        }
    }

    /// Every reason `instance` is invalid; empty when it is valid. An instance nested
    /// deeper than [`MAX_NESTING`] is not evaluated and gets one detail saying so (with an
    /// empty keyword), so it is never accepted.
    pub fn errors(&self, instance: &Value) -> Vec<ValidationDetail> {
        if let Some(at) = first_beyond_depth(instance, MAX_NESTING) {
            return vec![ValidationDetail {
                instance_path: at,
                schema_path: String::new(),
                keyword: String::new(),
                message: "the instance is nested too deeply to be evaluated safely".into(),
            }];
        }
        self.inner
            .iter_errors(instance)
            .map(|error| ValidationDetail {
                instance_path: error.instance_path().as_str().to_owned(),
                schema_path: error.evaluation_path().as_str().to_owned(),
                keyword: error.kind().keyword().to_owned(),
                message: error.to_string(),
            })
            .collect()
    }

    /// Whether `instance` is valid (the same verdict as `errors(instance).is_empty()`).
    pub fn is_valid(&self, instance: &Value) -> bool {
        first_beyond_depth(instance, MAX_NESTING).is_none() && self.inner.is_valid(instance)
    }
}

/// Validate `schema` against the draft 2020-12 meta-schema bundled in `jsonschema` (no
/// retrieval): one [`Code::SchemaInvalid`] finding per distinct violation, pointing into
/// `schema`. Values nested deeper than [`MAX_NESTING`] give
/// [`Code::ResourceLimitExceeded`] instead.
pub fn metaschema_errors(schema: &Value) -> Vec<Finding> {
    if let Some(at) = first_beyond_depth(schema, MAX_NESTING) {
        return vec![too_deep("the schema", at)];
    }
    let meta = jsonschema::draft202012::meta::validator();
    // The common case first: `is_valid` stops at nothing and builds no errors (collecting
    // errors for valid schemas was some 6% of loading a bundle).
    if meta.is_valid(schema) {
        return Vec::new();
    }
    let mut seen = HashSet::new();
    let mut findings = Vec::new();
    for error in meta.iter_errors(schema) {
        let pointer = error.instance_path().as_str().to_owned();
        let message = format!("not a valid draft 2020-12 schema: {error}");
        if seen.insert((pointer.clone(), message.clone())) {
            findings.push(Finding::new(
                Code::SchemaInvalid,
                message,
                Location::default().with_pointer(pointer),
            ));
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::test_util::{nest, Deep};
    use serde_json::json;
    use std::time::{Duration, Instant};

    fn compiled(schema: Value) -> Validator {
        compile(&schema, &PatternCache::new()).unwrap_or_else(|f| panic!("{schema}: {f:#?}"))
    }

    fn compile_err(schema: Value) -> Vec<Finding> {
        match compile(&schema, &PatternCache::new()) {
            Ok(_) => panic!("{schema} compiled"),
            Err(findings) => findings,
        }
    }

    #[test]
    fn format_is_an_assertion() {
        let v = compiled(json!({"properties": {"at": {"format": "date-time"}}}));
        assert!(v.is_valid(&json!({"at": "2026-08-11T12:00:01Z"})));
        let errors = v.errors(&json!({"at": "yesterday"}));
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].instance_path, "/at");
        assert_eq!(errors[0].schema_path, "/properties/at/format");
        assert_eq!(errors[0].keyword, "format");
        for (format, bad) in [
            ("email", "nope"),
            ("ipv4", "256.0.0.1"),
            ("uuid", "not-a-uuid"),
            ("uri", "no scheme"),
            ("date", "2026-13-01"),
            ("regex", "(("),
            ("duration", "P"),
        ] {
            let v = compiled(json!({"format": format}));
            assert!(!v.is_valid(&json!(bad)), "{format} accepted {bad}");
            assert!(v.is_valid(&json!(42)), "format applies to strings only");
        }
    }

    #[test]
    fn unknown_format_is_rejected_at_compile_time() {
        let findings = compile_err(json!({"properties": {"a/b": {"format": "no-such-format"}}}));
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, Code::SchemaInvalid);
        assert_eq!(
            findings[0].location.pointer.as_deref(),
            Some("/properties/a~1b/format")
        );
        // The pointer names the keyword; the message names no option of the library.
        assert!(findings[0].message.starts_with("unknown `format` name"));
    }

    #[test]
    fn nothing_is_retrieved() {
        for uri in [
            "http://example.com/x.json",
            "file:///etc/passwd",
            "urn:example:x",
        ] {
            let findings = compile_err(json!({"properties": {"a": {"$ref": uri}}}));
            assert_eq!(findings[0].code, Code::RefUnresolved, "{uri}");
            assert!(
                findings[0].message.contains("retriev"),
                "{}",
                findings[0].message
            );
        }
        assert!(NoRetrieval
            .retrieve(&Uri::parse("https://example.com/".to_owned()).unwrap())
            .is_err());
    }

    #[test]
    fn every_error_is_reported_with_escaped_paths() {
        let v = compiled(json!({
            "type": "object",
            "required": ["id"],
            "properties": {"a/b~": {"type": "string"}, "n": {"minimum": 3}},
            "$defs": {"s": {"maxLength": 2}},
            "additionalProperties": {"$ref": "#/$defs/s"}
        }));
        let errors = v.errors(&json!({"a/b~": 1, "n": 1, "extra": "long"}));
        let mut got: Vec<_> = errors
            .iter()
            .map(|e| {
                (
                    e.instance_path.as_str(),
                    e.keyword.as_str(),
                    e.schema_path.as_str(),
                )
            })
            .collect();
        got.sort_unstable();
        assert_eq!(
            got,
            [
                ("", "required", "/required"),
                ("/a~1b~0", "type", "/properties/a~1b~0/type"),
                (
                    "/extra",
                    "maxLength",
                    "/additionalProperties/$ref/maxLength"
                ),
                ("/n", "minimum", "/properties/n/minimum"),
            ]
        );
        assert!(v.errors(&json!({"id": 1})).is_empty());
    }

    #[test]
    fn dialect_is_pinned_to_2020_12() {
        // Under draft-07 an array `items` would be valid; 2020-12 rejects it.
        let findings = compile_err(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "items": [{}]
        }));
        assert_eq!(findings[0].code, Code::SchemaInvalid);
        assert_eq!(findings[0].location.pointer.as_deref(), Some("/items"));
    }

    #[test]
    fn invalid_pattern_is_a_schema_error() {
        let findings = compile_err(json!({"properties": {"a": {"pattern": "(("}}}));
        assert_eq!(findings[0].code, Code::SchemaInvalid);
        assert_eq!(
            findings[0].location.pointer.as_deref(),
            Some("/properties/a/pattern")
        );
    }

    #[test]
    fn catastrophic_patterns_finish_fast() {
        let evil = json!(format!("{}!", "a".repeat(68)));
        // No look-around: runs on the linear-time engine and simply does not match.
        let plain = compiled(json!({"pattern": "^(a+)+$"}));
        let start = Instant::now();
        let errors = plain.errors(&evil);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].keyword, "pattern");
        // Look-around forces backtracking; the budget turns it into an error.
        let fancy = compiled(json!({"pattern": "^(a|a)*(?!x)$"}));
        let errors = fancy.errors(&evil);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].keyword, "pattern");
        assert!(
            errors[0].message.contains("backtracking"),
            "{}",
            errors[0].message
        );
        assert!(!fancy.is_valid(&evil));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn metaschema_errors_are_located_and_deduplicated() {
        assert!(metaschema_errors(&json!({"type": "object"})).is_empty());
        assert!(metaschema_errors(&json!(true)).is_empty());
        let findings = metaschema_errors(&json!({
            "type": 3,
            "properties": {"a": {"minimum": "x"}},
            "$id": "urn:x#frag"
        }));
        let mut pointers: Vec<_> = findings
            .iter()
            .inspect(|f| assert_eq!(f.code, Code::SchemaInvalid))
            .map(|f| f.location.pointer.clone().unwrap())
            .collect();
        pointers.sort();
        assert_eq!(pointers, ["/$id", "/properties/a/minimum", "/type"]);
        assert!(metaschema_errors(&json!(3))[0].location.pointer == Some(String::new()));
        // compile reports all of them too.
        assert_eq!(compile_err(json!({"type": 3, "minimum": "x"})).len(), 2);
    }

    #[test]
    fn deep_values_are_refused_not_overflowed() {
        let deep = Deep(Some(nest(10_000, "not", json!({}))));
        let findings = compile(deep.get(), &PatternCache::new()).expect_err("too deep to compile");
        assert_eq!(findings[0].code, Code::ResourceLimitExceeded);
        assert_eq!(
            metaschema_errors(deep.get())[0].code,
            Code::ResourceLimitExceeded
        );
        let v = compiled(json!({"items": {"$ref": "#"}}));
        let instance = Deep(Some(nest(10_000, "a", json!(1))));
        let errors = v.errors(instance.get());
        assert_eq!(errors.len(), 1);
        assert!(!v.is_valid(instance.get()));
        // Just inside the ceiling is evaluated.
        let inside = nest(MAX_NESTING - 1, "a", json!(1));
        assert!(compiled(json!({"type": "object"}))
            .errors(&inside)
            .is_empty());
    }

    /// Defence in depth under the closure check: the compiler alone never fetches a
    /// reference (a listening local port gets no connection)...
    #[test]
    fn the_compiler_alone_never_touches_the_network() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let uri = format!("http://127.0.0.1:{port}/x.json");
        compile_err(json!({"properties": {"a": {"$ref": uri}}}));
        match listener.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("a connection reached the listener: {other:?}"),
        }
    }

    /// ...and never opens a local file: a reference to a FIFO would block any reader
    /// forever, so finishing at all proves the file was never opened.
    #[cfg(unix)]
    #[test]
    fn the_compiler_alone_never_opens_local_files() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("schema.json");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that lives across the call.
        let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
        assert_eq!(made, 0, "mkfifo: {}", std::io::Error::last_os_error());
        let schema = json!({"$ref": format!("file://{}", fifo.display())});
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            tx.send(compile(&schema, &PatternCache::new()).is_err())
                .unwrap();
        });
        let refused = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("compiling blocked: something opened the FIFO");
        assert!(refused);
    }
}
