//! The one way a schema becomes a validator.
//!
//! A schema reaches skillbundle from a workspace (`check`, `build`), from a bundle
//! (`Bundle::open`, and through it `verify`, `describe`, `validate`, `card`, `diff`,
//! `--previous`), or from a fuzzer or a test suite. Whatever the source, the same
//! resource limits, dialect rule and inline-reference closure must hold before anything
//! is compiled: the draft's limits bind the agent as well as the builder, and a bundle
//! signed by a key the agent trusts is still not trusted to have passed them. Having
//! one function for it means no path can skip a step or run them in an unsafe order.
//!
//! Order matters for hostile input: the limits first (iterative walks, safe at any
//! size or depth: a 300,000-property schema is refused before it costs anything), then
//! dialect and closure (the validator would otherwise resolve a reference to its
//! bundled meta-schema), then what only compiling would otherwise find (unknown `format`
//! names, regular expressions that do not compile: `validator::probe`), then meta-schema
//! validation and compilation.
//!
//! Two ways out, one sequence: [`govern`] compiles at once (a build runs the examples
//! straight away); [`govern_lazily`] validates against the meta-schema instead and hands
//! back a [`Governed`] schema that compiles on first use (an agent loading a bundle,
//! where compiling every schema up front would be most of the start-up cost). Either way
//! a schema that passes is one that compiles.

use super::limits::{self, Limits};
use super::validator::{self, Governed, PatternCache, Validator};
use super::{closure, dialect};
use crate::finding::{Code, Finding, Location};
use crate::wire::schema_bytes::SchemaBytes;
use serde_json::Value;

/// Check `schema` as the dialect `dialect` under `limits`, then compile it, sharing
/// compiled patterns through `patterns`. Findings carry only a JSON Pointer into
/// `schema` (or no location), for the caller to map to file, line and column.
pub fn govern(
    schema: &Value,
    dialect: &str,
    limits: &Limits,
    patterns: &PatternCache,
) -> Result<Validator, Vec<Finding>> {
    govern_with_rules(schema, dialect, limits, patterns, closure::Rules::V1_0)
}

/// [`govern`]'s checks, proving instead of compiling: the schema is validated against the
/// meta-schema and the [`Governed`] result compiles it on first use. `canonical` must be
/// the JCS bytes of `schema` (what a Skill Interface Document's digest covers); they are
/// what is kept, not the tree.
pub fn govern_lazily(
    schema: &Value,
    canonical: SchemaBytes,
    dialect: &str,
    limits: &Limits,
    patterns: &PatternCache,
) -> Result<Governed, Vec<Finding>> {
    check(schema, dialect, limits, patterns, closure::Rules::V1_0)?;
    let meta = validator::metaschema_errors(schema);
    if !meta.is_empty() {
        return Err(meta);
    }
    Ok(Governed::new(canonical, patterns))
}

/// [`govern`] as draft 2020-12 under the default limits, with a pattern cache of its
/// own: for a schema that stands alone (a comparison's probe, a test).
pub fn govern_alone(schema: &Value) -> Result<Validator, Vec<Finding>> {
    govern(
        schema,
        super::dialect::DRAFT_2020_12,
        &Limits::default(),
        &PatternCache::new(),
    )
}

/// [`govern`] under other inline-closure rules than version 1.0's. Only a conformance
/// suite wants this (to see the rest of the pipeline on schemas that use relative
/// `$id`s); no skill, bundle or document is ever governed with other rules.
pub fn govern_with_rules(
    schema: &Value,
    dialect: &str,
    limits: &Limits,
    patterns: &PatternCache,
    rules: closure::Rules,
) -> Result<Validator, Vec<Finding>> {
    check(schema, dialect, limits, patterns, rules)?;
    validator::compile(schema, patterns)
}

/// Everything before meta-schema validation, in the order above.
fn check(
    schema: &Value,
    dialect: &str,
    limits: &Limits,
    patterns: &PatternCache,
    rules: closure::Rules,
) -> Result<(), Vec<Finding>> {
    if !(schema.is_object() || schema.is_boolean()) {
        return Err(vec![Finding::new(
            Code::SchemaInvalid,
            "a JSON Schema must be an object or a boolean",
            Location::default().with_pointer(""),
        )]);
    }
    // One analysis of the references gives the limits their chains and the closure
    // check its findings (resolving every reference twice was ~5% of loading a bundle).
    let closure = closure::analyze(schema, rules);
    let over = limits::check_schema_with(schema, limits, &closure.chains);
    if !over.is_empty() {
        return Err(over);
    }
    let mut problems = dialect::check(schema, dialect);
    problems.extend(closure.findings);
    if !problems.is_empty() {
        return Err(problems);
    }
    let problems = validator::probe(schema, patterns);
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::DRAFT_2020_12;
    use serde_json::json;

    fn codes(schema: &Value) -> Vec<Code> {
        match govern(
            schema,
            DRAFT_2020_12,
            &Limits::default(),
            &PatternCache::new(),
        ) {
            Ok(_) => Vec::new(),
            Err(findings) => findings.iter().map(|f| f.code).collect(),
        }
    }

    fn lazily(schema: &Value, patterns: &PatternCache) -> Result<Governed, Vec<Finding>> {
        let canonical = crate::wire::digest::jcs(schema).into();
        govern_lazily(
            schema,
            canonical,
            DRAFT_2020_12,
            &Limits::default(),
            patterns,
        )
    }

    #[test]
    fn lazily_governed_schemas_are_refused_for_what_only_compiling_would_find() {
        let patterns = PatternCache::new();
        for (schema, pointer) in [
            (
                json!({"properties": {"a": {"format": "no-such-format"}}}),
                "/properties/a/format",
            ),
            (
                json!({"properties": {"a": {"pattern": "(("}}}),
                "/properties/a/pattern",
            ),
            (
                json!({"$defs": {"d": {"patternProperties": {"[": true}}}}),
                "/$defs/d/patternProperties/[",
            ),
            (json!({"type": "no-such-type"}), "/type"),
        ] {
            let findings = lazily(&schema, &patterns).expect_err("refused");
            assert_eq!(findings[0].code, Code::SchemaInvalid, "{schema}");
            assert_eq!(
                findings[0].location.pointer.as_deref(),
                Some(pointer),
                "{schema}: {findings:?}"
            );
            // What govern (compiling at once) says about the same schema: refused too.
            assert!(govern(&schema, DRAFT_2020_12, &Limits::default(), &patterns).is_err());
        }
        // A probe's verdict is remembered: the same bad pattern elsewhere, same answer.
        let again = json!({"items": {"pattern": "(("}});
        assert_eq!(
            lazily(&again, &patterns).unwrap_err()[0]
                .location
                .pointer
                .as_deref(),
            Some("/items/pattern")
        );
    }

    #[test]
    fn a_lazily_governed_schema_compiles_on_first_use_only() {
        let schema = json!({"type": "object", "properties": {"at": {"type": "string", "format": "date-time", "pattern": "^2"}}});
        let governed = lazily(&schema, &PatternCache::new()).unwrap();
        assert!(!governed.is_compiled());
        let validator = governed.validator().unwrap();
        assert!(validator.is_valid(&json!({"at": "2026-08-11T12:00:01Z"})));
        assert!(!validator.is_valid(&json!({"at": "yesterday"})));
        assert!(governed.is_compiled());
    }

    #[test]
    fn every_step_runs_before_compiling() {
        assert!(codes(&json!({"type": "object"})).is_empty());
        assert!(codes(&json!(true)).is_empty());
        assert_eq!(codes(&json!(3)), [Code::SchemaInvalid]);
        let props: serde_json::Map<String, Value> =
            (0..20_000).map(|i| (i.to_string(), json!({}))).collect();
        assert_eq!(
            codes(&json!({"properties": props}))[0],
            Code::ResourceLimitExceeded
        );
        let cycle = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
        assert_eq!(codes(&cycle)[0], Code::ResourceLimitExceeded);
        let long = json!({"pattern": "a".repeat(5000)});
        assert_eq!(codes(&long), [Code::ResourceLimitExceeded]);
        assert_eq!(
            codes(&json!({"$ref": "https://example.com/x.json"})),
            [Code::RefExternal]
        );
        assert_eq!(
            codes(&json!({"$schema": "http://json-schema.org/draft-07/schema#"})),
            [Code::DialectMismatch]
        );
    }
}
