//! Resource limits on schemas and example instances.
//!
//! The draft ("Resource limits") requires an implementation to bound schema size,
//! nesting, reference depth and reference cycles, and to report `resource_limit_exceeded`
//! without necessarily disclosing the threshold. A schema is untrusted input to the build
//! as much as to an agent: a few kilobytes of nesting can overflow the stack of a
//! recursive compiler, and a reference cycle made only of `$ref`s never terminates
//! evaluation. These checks run before anything that recurses, so every walk here is a
//! loop over an explicit stack (see the `walk` module) and safe on a value nested 100,000
//! levels deep.
//!
//! Limits come from the optional `limits:` block of `skillbundle.yaml`; every field has a
//! default, and an unknown field is an error.

use super::{closure, walk::SchemaTree};
use crate::finding::{Code, Finding, Location};
use crate::wire::pointer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Configured resource limits. Missing fields take their default.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Size of one schema as compact JSON, in bytes (default 1 MiB).
    pub max_schema_bytes: u64,
    /// Nesting of JSON objects and arrays, in a schema or an example (default 64).
    pub max_depth: usize,
    /// Subschemas in one schema, the root included (default 10,000).
    pub max_subschemas: usize,
    /// `$ref` and `$dynamicRef` keywords in one schema (default 1,000).
    pub max_refs: usize,
    /// Reference hops taken in a row before reaching a schema without a reference
    /// (default 32).
    pub max_ref_depth: usize,
    /// Length of a `pattern` or `patternProperties` regular expression, in characters
    /// (default 1,000).
    pub max_pattern_length: usize,
    /// Size of one example instance as compact JSON, in bytes (default 1 MiB).
    pub max_example_bytes: u64,
    /// Total size of the files a workspace may contain, in bytes (default 256 MiB).
    pub max_workspace_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_schema_bytes: 1 << 20,
            max_depth: 64,
            max_subschemas: 10_000,
            max_refs: 1_000,
            max_ref_depth: 32,
            max_pattern_length: 1_000,
            max_example_bytes: 1 << 20,
            max_workspace_bytes: 256 << 20,
        }
    }
}

fn exceeded(what: &str, kind: &str, field: &str, pointer: String) -> Finding {
    Finding::new(
        Code::ResourceLimitExceeded,
        format!("{what} exceeds the resource limit on {kind}"),
        Location::default().with_pointer(pointer),
    )
    .with_help(format!(
        "simplify it, or raise `limits.{field}` in skillbundle.yaml"
    ))
}

/// Check a schema against every limit that applies to it: size, nesting, subschema and
/// reference counts, pattern lengths, reference-chain depth and reference cycles. Each
/// finding points at the first place that crosses its limit.
pub fn check_schema(schema: &Value, limits: &Limits) -> Vec<Finding> {
    check_schema_with(schema, limits, &closure::ref_chains(schema))
}

/// [`check_schema`] with the schema's reference chains already measured (governance
/// takes them from the closure analysis it runs anyway).
pub(crate) fn check_schema_with(
    schema: &Value,
    limits: &Limits,
    chains: &closure::RefChains,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    if serialized_len(schema, limits.max_schema_bytes) > limits.max_schema_bytes {
        findings.push(exceeded(
            "the schema",
            "size",
            "max_schema_bytes",
            String::new(),
        ));
    }
    if let Some(at) = first_beyond_depth(schema, limits.max_depth) {
        findings.push(exceeded("the schema", "nesting depth", "max_depth", at));
    }
    let tree = SchemaTree::new(schema);
    if tree.len() > limits.max_subschemas {
        let at = tree.pointer(limits.max_subschemas);
        findings.push(exceeded(
            "the schema",
            "the number of subschemas",
            "max_subschemas",
            at,
        ));
    }
    let mut refs = 0;
    let mut refs_reported = false;
    for (index, node) in tree.nodes.iter().enumerate() {
        let Value::Object(map) = node.value else {
            continue;
        };
        for keyword in closure::REFERENCE_KEYWORDS {
            if map.contains_key(keyword) {
                refs += 1;
                if refs > limits.max_refs && !refs_reported {
                    refs_reported = true;
                    let at = tree.keyword_pointer(index, keyword);
                    findings.push(exceeded(
                        "the schema",
                        "the number of references",
                        "max_refs",
                        at,
                    ));
                }
            }
        }
        if let Some(Value::String(pattern)) = map.get("pattern") {
            if pattern.chars().count() > limits.max_pattern_length {
                let at = tree.keyword_pointer(index, "pattern");
                findings.push(exceeded(
                    "a pattern",
                    "pattern length",
                    "max_pattern_length",
                    at,
                ));
            }
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            for pattern in patterns.keys() {
                if pattern.chars().count() > limits.max_pattern_length {
                    let at =
                        pointer::child(&tree.keyword_pointer(index, "patternProperties"), pattern);
                    findings.push(exceeded(
                        "a pattern",
                        "pattern length",
                        "max_pattern_length",
                        at,
                    ));
                }
            }
        }
    }
    drop(tree);
    if chains.longest > limits.max_ref_depth {
        let at = chains.longest_from.clone().unwrap_or_default();
        findings.push(exceeded(
            "a reference chain",
            "reference depth",
            "max_ref_depth",
            at,
        ));
    }
    if let Some(at) = chains.cycle.clone() {
        findings.push(
            Finding::new(
                Code::ResourceLimitExceeded,
                "a reference cycle: these references lead back to themselves without \
                 consuming any input, so evaluation would never end",
                Location::default().with_pointer(at),
            )
            .with_help("break the cycle with a schema that applies to a child value"),
        );
    }
    findings
}

/// Check an example instance (or any payload) against the size and nesting limits.
pub fn check_instance(instance: &Value, limits: &Limits) -> Vec<Finding> {
    let mut findings = Vec::new();
    if serialized_len(instance, limits.max_example_bytes) > limits.max_example_bytes {
        findings.push(exceeded(
            "the instance",
            "size",
            "max_example_bytes",
            String::new(),
        ));
    }
    if let Some(at) = first_beyond_depth(instance, limits.max_depth) {
        findings.push(exceeded("the instance", "nesting depth", "max_depth", at));
    }
    findings
}

/// The length of `value` serialized as compact JSON (as `serde_json::to_vec` writes it),
/// computed without recursion. Counting stops early once it passes `stop_after`; pass
/// `u64::MAX` for the exact length.
pub fn serialized_len(value: &Value, stop_after: u64) -> u64 {
    let mut total: u64 = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        total = total.saturating_add(match value {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => n.to_string().len() as u64,
            Value::String(s) => string_len(s),
            Value::Array(items) => {
                stack.extend(items);
                2 + items.len().saturating_sub(1) as u64
            }
            Value::Object(map) => {
                stack.extend(map.values());
                // Braces, commas, and a colon per member.
                let mut len = 2 + map.len().saturating_sub(1) as u64 + map.len() as u64;
                for key in map.keys() {
                    len += string_len(key);
                }
                len
            }
        });
        if total > stop_after {
            break;
        }
    }
    total
}

/// Length of a JSON string literal as serde_json escapes it.
fn string_len(s: &str) -> u64 {
    let mut len = 2;
    for c in s.chars() {
        len += match c {
            '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8() as u64,
        };
    }
    len
}

/// The pointer of the first object or array nested deeper than `max_depth` levels (the
/// outermost container is level 1), found by an iterative depth-first walk that never
/// descends past the limit.
pub fn first_beyond_depth(value: &Value, max_depth: usize) -> Option<String> {
    enum Children<'a> {
        Object(serde_json::map::Iter<'a>),
        Array(std::iter::Enumerate<std::slice::Iter<'a, Value>>),
    }
    fn children(value: &Value) -> Option<Children<'_>> {
        match value {
            Value::Object(map) => Some(Children::Object(map.iter())),
            Value::Array(items) => Some(Children::Array(items.iter().enumerate())),
            _ => None,
        }
    }
    let root = children(value)?;
    if max_depth == 0 {
        return Some(String::new());
    }
    // One frame per open container, with the token that leads into it.
    let mut stack: Vec<(String, Children<'_>)> = vec![(String::new(), root)];
    while let Some((_, frame)) = stack.last_mut() {
        let next = match frame {
            Children::Object(iter) => iter.next().map(|(k, v)| (k.clone(), v)),
            Children::Array(iter) => iter.next().map(|(i, v)| (i.to_string(), v)),
        };
        let Some((token, child)) = next else {
            stack.pop();
            continue;
        };
        let Some(grandchildren) = children(child) else {
            continue;
        };
        if stack.len() >= max_depth {
            let mut at = String::new();
            for (token, _) in stack.iter().skip(1) {
                pointer::push(&mut at, token);
            }
            pointer::push(&mut at, &token);
            return Some(at);
        }
        stack.push((token, grandchildren));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::test_util::{nest, Deep};
    use serde_json::json;

    fn kinds(findings: &[Finding]) -> Vec<(String, String)> {
        findings
            .iter()
            .inspect(|f| assert_eq!(f.code, Code::ResourceLimitExceeded))
            .map(|f| {
                (
                    f.message.clone(),
                    f.location.pointer.clone().unwrap_or_default(),
                )
            })
            .collect()
    }

    #[test]
    fn defaults_and_strict_deserialization() {
        let limits: Limits = serde_json::from_value(json!({})).unwrap();
        assert_eq!(limits, Limits::default());
        assert_eq!(limits.max_schema_bytes, 1_048_576);
        assert_eq!(limits.max_workspace_bytes, 268_435_456);
        let limits: Limits = serde_json::from_value(json!({"max_depth": 8})).unwrap();
        assert_eq!(limits.max_depth, 8);
        assert_eq!(limits.max_refs, 1_000);
        let error = serde_json::from_value::<Limits>(json!({"max_dept": 8})).unwrap_err();
        assert!(error.to_string().contains("unknown field"), "{error}");
    }

    #[test]
    fn ordinary_schema_is_within_limits() {
        let schema = json!({
            "$defs": {"id": {"type": "string", "pattern": "^[a-z]+$"}},
            "properties": {"a": {"$ref": "#/$defs/id"}, "b": {"items": {"$ref": "#"}}},
            "patternProperties": {"^x-": {}}
        });
        assert!(check_schema(&schema, &Limits::default()).is_empty());
        assert!(check_instance(&json!({"a": [1, 2, {"b": null}]}), &Limits::default()).is_empty());
    }

    #[test]
    fn serialized_len_matches_serde_json() {
        for value in [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(-12.5),
            json!(1e300),
            json!(u64::MAX),
            json!(""),
            json!("quote\" backslash\\ nl\n tab\t bell\u{7} del\u{7f} é 😀"),
            json!([]),
            json!({}),
            json!([1, [2, [3]], {"k\"": "v", "": []}]),
            json!({"a": {"b": {"c": [null, true, "x"]}}, "d": 1}),
        ] {
            let expected = serde_json::to_vec(&value).unwrap().len() as u64;
            assert_eq!(serialized_len(&value, u64::MAX), expected, "{value}");
        }
        assert!(serialized_len(&json!([1, 2, 3, 4, 5]), 3) > 3);
    }

    #[test]
    fn size_limit() {
        let limits = Limits {
            max_schema_bytes: 20,
            max_example_bytes: 10,
            ..Limits::default()
        };
        let schema = json!({"description": "a longer description"});
        let found = kinds(&check_schema(&schema, &limits));
        assert_eq!(found.len(), 1);
        assert!(found[0].0.contains("size"), "{found:?}");
        assert!(!found[0].0.contains("20"), "the threshold is not disclosed");
        // Ten bytes with the quotes, then eleven.
        assert!(check_instance(&json!("eight ch"), &limits).is_empty());
        assert_eq!(
            kinds(&check_instance(&json!("nine char"), &limits)).len(),
            1
        );
    }

    #[test]
    fn depth_limit_points_at_the_first_container_too_deep() {
        let limits = Limits {
            max_depth: 3,
            ..Limits::default()
        };
        // Levels: root object 1, properties 2, a 3, items 4.
        let schema = json!({"properties": {"a/b": {"items": {}}}, "x": [[1]]});
        assert_eq!(
            first_beyond_depth(&schema, 3).as_deref(),
            Some("/properties/a~1b/items")
        );
        assert_eq!(first_beyond_depth(&schema, 4), None);
        assert_eq!(
            first_beyond_depth(&json!([[[[]]]]), 3).as_deref(),
            Some("/0/0/0")
        );
        assert_eq!(first_beyond_depth(&json!("scalar"), 0), None);
        assert_eq!(first_beyond_depth(&json!({}), 0).as_deref(), Some(""));
        let found = kinds(&check_schema(&schema, &limits));
        assert_eq!(found.len(), 1);
        assert!(found[0].0.contains("nesting depth"));
        assert_eq!(found[0].1, "/properties/a~1b/items");
        assert_eq!(kinds(&check_instance(&json!([[[[1]]]]), &limits)).len(), 1);
    }

    #[test]
    fn counts_subschemas_and_references() {
        let limits = Limits {
            max_subschemas: 3,
            max_refs: 1,
            ..Limits::default()
        };
        let schema = json!({
            "$defs": {"a": {}},
            "properties": {"x": {"$ref": "#/$defs/a"}, "y": {"$dynamicRef": "#/$defs/a"}}
        });
        let found = kinds(&check_schema(&schema, &limits));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].0.contains("subschemas"));
        assert_eq!(found[0].1, "/properties/y");
        assert!(found[1].0.contains("references"));
        assert_eq!(found[1].1, "/properties/y/$dynamicRef");
        // References in data do not count.
        let data = json!({"enum": [{"$ref": "#"}, {"$ref": "#"}], "$ref": "#/enum"});
        assert!(check_schema(&data, &limits).is_empty());
    }

    #[test]
    fn pattern_lengths() {
        let limits = Limits {
            max_pattern_length: 5,
            ..Limits::default()
        };
        let schema = json!({
            "pattern": "ééééé",
            "properties": {"a": {"pattern": "^abcde$"}},
            "patternProperties": {"^ok$": {}, "^too/long$": {}},
            "const": {"pattern": "^ignored because it is data$"}
        });
        let found = kinds(&check_schema(&schema, &limits));
        let pointers: Vec<_> = found.iter().map(|(_, p)| p.as_str()).collect();
        assert_eq!(
            pointers,
            ["/patternProperties/^too~1long$", "/properties/a/pattern"]
        );
    }

    #[test]
    fn reference_depth_and_cycles() {
        let limits = Limits {
            max_ref_depth: 2,
            ..Limits::default()
        };
        let two = json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {}}});
        assert!(check_schema(&two, &limits).is_empty());
        let three = json!({
            "$ref": "#/$defs/a",
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/c"}, "c": {}}
        });
        let found = kinds(&check_schema(&three, &limits));
        assert_eq!(found.len(), 1);
        assert!(found[0].0.contains("reference depth"));
        assert_eq!(found[0].1, "/$ref");
        let cycle = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}});
        let found = kinds(&check_schema(&cycle, &Limits::default()));
        assert_eq!(found.len(), 1);
        assert!(found[0].0.contains("cycle"));
        // Recursion into child values is not a cycle.
        let tree = json!({"properties": {"children": {"items": {"$ref": "#"}}}});
        assert!(check_schema(&tree, &Limits::default()).is_empty());
    }

    #[test]
    fn hundred_thousand_levels_do_not_overflow_the_stack() {
        // Built iteratively; every walk in `check_schema` is a loop, so a thread with a
        // small stack is enough. Only dropping the value needs a big one.
        let deep = Deep(Some(nest(100_000, "not", json!({"$ref": "#"}))));
        let findings = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn_scoped(scope, || check_schema(deep.get(), &Limits::default()))
                .unwrap()
                .join()
                .unwrap()
        });
        let found = kinds(&findings);
        assert!(found
            .iter()
            .any(|(m, p)| m.contains("nesting depth") && p.len() == 64 * 4));
        assert!(found.iter().any(|(m, _)| m.contains("subschemas")));
        let instance = Deep(Some(nest(100_000, "a", json!(1))));
        let findings = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn_scoped(scope, || check_instance(instance.get(), &Limits::default()))
                .unwrap()
                .join()
                .unwrap()
        });
        assert_eq!(findings.len(), 1);
    }
}
