//! Dialect: which JSON Schema version a schema is written in, and that it never switches.
//!
//! A Schema Reference declares its `dialect`, and version 1.0 supports exactly one:
//! draft 2020-12. The schema itself may repeat that choice in a root `$schema`, and an
//! embedded resource may carry its own `$schema` — but the draft forbids an embedded
//! resource from selecting another dialect, and a validator would otherwise silently
//! evaluate part of the schema under different rules. Comparison is exact: a trailing `#`
//! or an `http:` variant of the URI names a different (draft-04-style) identifier, so it
//! is reported rather than "normalized" into agreement.

use super::walk::SchemaTree;
use crate::finding::{Code, Finding, Location};
use serde_json::Value;

/// The JSON Schema dialect interface version 1.0 supports (its meta-schema URI).
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// The dialects interface version 1.0 supports.
pub const SUPPORTED: &[&str] = &[DRAFT_2020_12];

/// The dialect a Schema Reference has when none is written: the only one interface
/// version 1.0 supports (draft "Schema Reference", dialect).
pub const DEFAULT_DIALECT: &str = DRAFT_2020_12;

/// Whether `dialect` is one version 1.0 supports (exact match).
pub fn is_supported(dialect: &str) -> bool {
    SUPPORTED.contains(&dialect)
}

/// Check the declared dialect and every `$schema` in `schema` against it.
///
/// An unsupported `declared` dialect gives one [`Code::DialectMismatch`] finding with no
/// pointer (the dialect is declared by the manifest, not by the schema), and nothing else
/// is compared. Otherwise every `$schema` at a schema position — the root, an embedded
/// resource, or any other subschema — must equal `declared` exactly; each one that does
/// not is reported at the pointer of that `$schema` keyword.
pub fn check(schema: &Value, declared: &str) -> Vec<Finding> {
    if !is_supported(declared) {
        return vec![Finding::new(
            Code::DialectMismatch,
            format!(
                "dialect `{declared}` is not supported; interface version 1.0 supports: {}",
                SUPPORTED.join(", ")
            ),
            Location::default(),
        )];
    }
    let tree = SchemaTree::new(schema);
    let mut findings = Vec::new();
    for (index, node) in tree.nodes.iter().enumerate() {
        let Some(found) = node.value.get("$schema") else {
            continue;
        };
        if found.as_str() == Some(declared) {
            continue;
        }
        let what = if index == 0 {
            "the schema"
        } else if node.value.get("$id").is_some() {
            "an embedded schema resource"
        } else {
            "a subschema"
        };
        let message = match found.as_str() {
            Some(uri) => {
                format!("{what} selects dialect `{uri}`, but the declared dialect is `{declared}`")
            }
            None => format!("`$schema` must be a string naming the dialect `{declared}`"),
        };
        let location = Location::default().with_pointer(tree.keyword_pointer(index, "$schema"));
        findings.push(Finding::new(Code::DialectMismatch, message, location));
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pointers(schema: &Value, declared: &str) -> Vec<Option<String>> {
        check(schema, declared)
            .into_iter()
            .inspect(|f| assert_eq!(f.code, Code::DialectMismatch))
            .map(|f| f.location.pointer)
            .collect()
    }

    #[test]
    fn declared_dialect_must_be_supported() {
        for declared in [
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2019-09/schema",
            "https://json-schema.org/draft/2020-12/schema#",
            "",
        ] {
            let findings = check(&json!({}), declared);
            assert_eq!(findings.len(), 1, "{declared}");
            assert_eq!(findings[0].code, Code::DialectMismatch);
            assert_eq!(findings[0].location.pointer, None);
            assert!(findings[0].message.contains(DRAFT_2020_12));
        }
        assert!(check(&json!({}), DRAFT_2020_12).is_empty());
        assert!(check(&json!(true), DRAFT_2020_12).is_empty());
    }

    #[test]
    fn root_schema_must_equal_the_declared_dialect() {
        let ok = json!({"$schema": DRAFT_2020_12, "type": "object"});
        assert!(check(&ok, DRAFT_2020_12).is_empty());
        for other in [
            "https://json-schema.org/draft/2020-12/schema#",
            "http://json-schema.org/draft/2020-12/schema",
            "HTTPS://json-schema.org/draft/2020-12/schema",
            "http://json-schema.org/draft-07/schema#",
            "http://localhost:1234/draft2020-12/metaschema-no-validation.json",
        ] {
            let schema = json!({"$schema": other});
            assert_eq!(
                pointers(&schema, DRAFT_2020_12),
                [Some("/$schema".into())],
                "{other}"
            );
        }
        assert_eq!(
            pointers(&json!({"$schema": 12}), DRAFT_2020_12),
            [Some("/$schema".into())]
        );
    }

    #[test]
    fn embedded_resources_may_not_switch() {
        let schema = json!({
            "$schema": DRAFT_2020_12,
            "$defs": {
                "same": {"$id": "urn:example:same", "$schema": DRAFT_2020_12},
                "old": {"$id": "urn:example:old", "$schema": "http://json-schema.org/draft-07/schema#"},
                "nested": {"items": {"$schema": "https://json-schema.org/draft/2019-09/schema"}}
            }
        });
        assert_eq!(
            pointers(&schema, DRAFT_2020_12),
            [
                Some("/$defs/old/$schema".into()),
                Some("/$defs/nested/items/$schema".into())
            ]
        );
        let message = &check(&schema, DRAFT_2020_12)[0].message;
        assert!(message.contains("embedded schema resource"), "{message}");
    }

    #[test]
    fn schema_in_data_is_ignored() {
        let schema = json!({
            "const": {"$schema": "http://json-schema.org/draft-04/schema#"},
            "examples": [{"$schema": "x"}]
        });
        assert!(check(&schema, DRAFT_2020_12).is_empty());
    }
}
