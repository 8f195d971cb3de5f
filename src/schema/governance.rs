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
//! bundled meta-schema), then meta-schema validation and compilation.

use super::limits::{self, Limits};
use super::validator::{self, PatternCache, Validator};
use super::{closure, dialect};
use crate::finding::{Code, Finding, Location};
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

/// [`govern`] as draft 2020-12 under the default limits, with a pattern cache of its
/// own: for a schema that stands alone (a comparison's probe, a test).
pub fn govern_alone(schema: &Value) -> Result<Validator, Vec<Finding>> {
    govern(
        schema,
        super::DRAFT_2020_12,
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
    if !(schema.is_object() || schema.is_boolean()) {
        return Err(vec![Finding::new(
            Code::SchemaInvalid,
            "a JSON Schema must be an object or a boolean",
            Location::default().with_pointer(""),
        )]);
    }
    let over = limits::check_schema(schema, limits);
    if !over.is_empty() {
        return Err(over);
    }
    let mut problems = dialect::check(schema, dialect);
    problems.extend(closure::check_with(schema, rules));
    if !problems.is_empty() {
        return Err(problems);
    }
    validator::compile(schema, patterns)
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
