//! The strict lint: schema mistakes that every validator accepts in silence.
//!
//! JSON Schema ignores keywords it does not know, so `additionalProperites: false` is a
//! valid schema that leaves the object open, and the schema is signed and published
//! that way. A `required` name that a closed schema never declares makes every instance
//! invalid, and `minLength` under `type: integer` constrains nothing. None of these is
//! a draft violation — the interface stays valid — which is why they are a lint of the
//! authoring side (like ajv's strict mode) and not part of the governance a loading
//! agent applies:
//!
//! - an unknown keyword is an error, with a "did you mean" for a likely misspelling;
//!   `x-` keywords and the workspace's `lint.allow_keywords` are always accepted;
//! - a `required` name that no `properties` (or `patternProperties`) entry declares,
//!   under `additionalProperties: false` or an `unevaluatedProperties: false` with no
//!   in-place applicator that could declare it, is an error;
//! - a keyword that applies only to instance types the schema's `type` excludes is a
//!   warning.
//!
//! Findings carry a JSON Pointer only (see [`crate::schema`]); messages name keywords
//! of the dialect, never a name or value from the schema.

use super::walk::{SchemaTree, IN_PLACE};
use crate::finding::{Code, Finding, Location};
use crate::wire::pointer;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The lint's settings: `lint:` in `skillbundle.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Keywords accepted besides the dialect's own and `x-…` (for example a vendor's
    /// annotation vocabulary).
    pub allow_keywords: Vec<String>,
}

/// Every keyword draft 2020-12 defines (all of its vocabularies), plus `definitions`,
/// which the validator still resolves references into.
pub const KNOWN_KEYWORDS: &[&str] = &[
    // core
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "definitions",
    // applicator
    "prefixItems",
    "items",
    "contains",
    "additionalProperties",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "propertyNames",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    // unevaluated
    "unevaluatedItems",
    "unevaluatedProperties",
    // validation
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    // meta-data
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    // format annotation
    "format",
    // content
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Keywords that constrain only instances of some types, with those types.
const TYPED: &[(&[&str], &[&str])] = &[
    (
        &[
            "minLength",
            "maxLength",
            "pattern",
            "contentEncoding",
            "contentMediaType",
            "contentSchema",
        ],
        &["string"],
    ),
    (
        &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ],
        &["number", "integer"],
    ),
    (
        &[
            "properties",
            "patternProperties",
            "additionalProperties",
            "unevaluatedProperties",
            "required",
            "dependentRequired",
            "dependentSchemas",
            "propertyNames",
            "minProperties",
            "maxProperties",
        ],
        &["object"],
    ),
    (
        &[
            "items",
            "prefixItems",
            "unevaluatedItems",
            "contains",
            "minContains",
            "maxContains",
            "minItems",
            "maxItems",
            "uniqueItems",
        ],
        &["array"],
    ),
];

/// Lint `schema`. Findings carry a pointer into `schema` and no file.
pub fn check(schema: &Value, config: &Config) -> Vec<Finding> {
    let tree = SchemaTree::new(schema);
    let mut findings = Vec::new();
    for index in 0..tree.len() {
        let Value::Object(map) = tree.nodes[index].value else {
            continue;
        };
        let at =
            |keyword: &str| Location::default().with_pointer(tree.keyword_pointer(index, keyword));
        for keyword in map.keys() {
            if !is_allowed(keyword, config) {
                findings.push(unknown(keyword, at(keyword)));
            }
        }
        for i in undeclared_required(map) {
            let pointer = pointer::child(&tree.keyword_pointer(index, "required"), &i.to_string());
            findings.push(
                Finding::new(
                    Code::RequiredUndeclared,
                    "a required property is declared by no `properties` or `patternProperties` entry, and the schema is closed: no instance can have it, so every instance is invalid",
                    Location::default().with_pointer(pointer),
                )
                .with_help("declare the property under `properties`, or check the spelling of the name in `required`"),
            );
        }
        if let Some(types) = admitted_types(map) {
            for (keywords, applies_to) in TYPED {
                if applies_to.iter().any(|t| types.contains(t)) {
                    continue;
                }
                for keyword in keywords.iter().filter(|k| map.contains_key(**k)) {
                    findings.push(
                        Finding::new(
                            Code::KeywordInapplicable,
                            format!(
                                "`{keyword}` constrains only {} values, and this schema's `type` admits none: it has no effect",
                                applies_to.join(" or ")
                            ),
                            at(keyword),
                        )
                        .with_help("remove the keyword, or add the type it applies to under `type`"),
                    );
                }
            }
        }
    }
    findings
}

fn is_allowed(keyword: &str, config: &Config) -> bool {
    KNOWN_KEYWORDS.contains(&keyword)
        || keyword.starts_with("x-")
        || config.allow_keywords.iter().any(|k| k == keyword)
}

fn unknown(keyword: &str, location: Location) -> Finding {
    let finding = Finding::new(
        Code::UnknownKeyword,
        "unknown keyword: JSON Schema draft 2020-12 does not define it, so validators ignore it and it constrains nothing",
        location,
    );
    match suggestion(keyword) {
        Some(s) => finding.with_help(format!("did you mean `{s}`?")),
        None => finding.with_help(
            "prefix an annotation with `x-`, or list the keyword under `lint: {allow_keywords: [...]}` in skillbundle.yaml",
        ),
    }
}

/// The dialect keyword closest to `word`, if close enough to be a likely misspelling
/// (case differences always are).
fn suggestion(word: &str) -> Option<&'static str> {
    let lower = word.to_ascii_lowercase();
    KNOWN_KEYWORDS
        .iter()
        .map(|k| {
            (
                strsim::damerau_levenshtein(&lower, &k.to_ascii_lowercase()),
                *k,
            )
        })
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Indices into `required` of names a closed schema never declares.
fn undeclared_required(map: &Map<String, Value>) -> Vec<usize> {
    let Some(Value::Array(required)) = map.get("required") else {
        return Vec::new();
    };
    let closed_here = map.get("additionalProperties") == Some(&Value::Bool(false));
    // Under `unevaluatedProperties: false`, an in-place applicator may declare it.
    let closed_unevaluated = map.get("unevaluatedProperties") == Some(&Value::Bool(false))
        && !IN_PLACE.iter().any(|k| map.contains_key(*k));
    if !(closed_here || closed_unevaluated) {
        return Vec::new();
    }
    let properties = map.get("properties").and_then(Value::as_object);
    let patterns: Vec<Option<regex::Regex>> = map
        .get("patternProperties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(|k| regex::Regex::new(k).ok()).collect())
        .unwrap_or_default();
    required
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let name = name.as_str()?;
            let declared = properties.is_some_and(|p| p.contains_key(name))
                // A pattern this engine cannot read might match: give it the benefit.
                || patterns.iter().any(|p| p.as_ref().is_none_or(|r| r.is_match(name)));
            (!declared).then_some(i)
        })
        .collect()
}

/// The instance types `type` admits, when the schema states it.
fn admitted_types(map: &Map<String, Value>) -> Option<Vec<&str>> {
    match map.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => ts.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(schema: Value, config: &Config) -> Vec<(Code, String, Option<String>)> {
        check(&schema, config)
            .into_iter()
            .map(|f| (f.code, f.location.pointer.unwrap_or_default(), f.help))
            .collect()
    }

    #[test]
    fn a_misspelt_keyword_is_an_error_with_a_suggestion() {
        let found = codes(
            json!({"type": "object", "properties": {"a": {"type": "string", "maxLenght": 3}}, "additionalProperites": false}),
            &Config::default(),
        );
        assert_eq!(
            found,
            [
                (
                    Code::UnknownKeyword,
                    "/additionalProperites".to_string(),
                    Some("did you mean `additionalProperties`?".to_string())
                ),
                (
                    Code::UnknownKeyword,
                    "/properties/a/maxLenght".to_string(),
                    Some("did you mean `maxLength`?".to_string())
                ),
            ]
        );
        assert_eq!(
            codes(json!({"requried": ["a"]}), &Config::default())[0]
                .2
                .as_deref(),
            Some("did you mean `required`?")
        );
    }

    #[test]
    fn x_keywords_and_configured_keywords_are_allowed() {
        let config = Config {
            allow_keywords: vec!["errorMessage".into()],
        };
        assert!(codes(
            json!({"x-owner": "netops", "errorMessage": "no", "properties": {"a": {"x-ui": 1}}}),
            &config
        )
        .is_empty());
        let found = codes(json!({"errorMessage": "no"}), &Config::default());
        assert_eq!(found[0].0, Code::UnknownKeyword);
        assert!(found[0].2.as_deref().unwrap().contains("allow_keywords"));
    }

    #[test]
    fn data_positions_are_not_linted() {
        // Member names of `properties`, and values of enum/const/default/examples, are
        // data, not keywords.
        let schema = json!({
            "properties": {"additionalProperites": {}},
            "enum": [{"requried": 1}],
            "default": {"nope": 1},
            "examples": [{"bogus": true}]
        });
        assert!(codes(schema, &Config::default()).is_empty());
    }

    #[test]
    fn required_names_a_closed_schema_never_declares() {
        let found = codes(
            json!({"properties": {"name": {}}, "required": ["name", "naem"], "additionalProperties": false}),
            &Config::default(),
        );
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].0, found[0].1.as_str()),
            (Code::RequiredUndeclared, "/required/1")
        );
        // Open content, a matching pattern, or an in-place applicator may declare it.
        for schema in [
            json!({"properties": {"name": {}}, "required": ["other"]}),
            json!({"patternProperties": {"^o": {}}, "required": ["other"], "additionalProperties": false}),
            json!({"allOf": [{"properties": {"other": {}}}], "required": ["other"], "unevaluatedProperties": false}),
        ] {
            assert!(
                codes(schema.clone(), &Config::default()).is_empty(),
                "{schema}"
            );
        }
        assert_eq!(
            codes(
                json!({"required": ["other"], "unevaluatedProperties": false}),
                &Config::default()
            )[0]
            .0,
            Code::RequiredUndeclared
        );
    }

    #[test]
    fn keywords_the_type_excludes_are_warnings() {
        let found = check(
            &json!({"type": "integer", "minLength": 1, "minimum": 0}),
            &Config::default(),
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].code, Code::KeywordInapplicable);
        assert!(!found[0].is_error());
        assert_eq!(found[0].location.pointer.as_deref(), Some("/minLength"));
        assert_eq!(
            found[0].message,
            "`minLength` constrains only string values, and this schema's `type` admits none: it has no effect"
        );
        assert!(codes(
            json!({"type": ["string", "null"], "minLength": 1}),
            &Config::default()
        )
        .is_empty());
        assert!(codes(json!({"minLength": 1}), &Config::default()).is_empty());
    }
}
