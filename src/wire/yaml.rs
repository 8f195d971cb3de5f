//! Strict YAML: manifests and YAML-authored schemas, read without YAML's traps.
//!
//! YAML is pleasant to write and easy to misread. This module fixes one set of options
//! for every YAML file the tool reads (serde-saphyr): duplicate keys are errors (serde_yaml
//! silently kept the last), YAML 1.1 booleans (`yes`, `on`) are not booleans, merge keys
//! and unknown tags are refused, one document per file, and alias expansion runs under a
//! budget so an alias bomb is refused quickly instead of eating memory. Errors come back
//! with line and column, and with a flag saying whether a resource limit was hit.

use serde::de::{DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::Deserializer;
use serde_json::{Map, Number, Value};
use serde_saphyr::options::AliasLimits;
use serde_saphyr::options::{DuplicateKeyPolicy, MergeKeyPolicy};
use serde_saphyr::{Budget, Error, Options};
use std::fmt;

/// A YAML file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// What is wrong.
    pub message: String,
    /// 1-based line, when the parser knows it.
    pub line: Option<usize>,
    /// 1-based column, when the parser knows it.
    pub column: Option<usize>,
    /// A resource budget (aliases, nesting, size) was exceeded.
    pub limit: bool,
    /// A serde "unknown field" error: the field and the names that were expected.
    pub unknown_field: Option<(String, Vec<&'static str>)>,
}

fn options(max_depth: usize) -> Options {
    let mut budget = Budget::default();
    budget.max_depth = max_depth;
    budget.max_aliases = 1_000;
    budget.max_documents = 1;
    budget.max_nodes = 200_000;
    budget.max_total_scalar_bytes = 16 * 1024 * 1024;
    let mut alias = AliasLimits::default();
    alias.max_total_replayed_events = 100_000;
    alias.max_replay_stack_depth = 16;
    let mut o = Options::default();
    o.budget = Some(budget);
    o.alias_limits = alias;
    o.duplicate_keys = DuplicateKeyPolicy::Error;
    o.merge_keys = MergeKeyPolicy::Error;
    o.strict_booleans = true;
    o.reject_unsupported_tags = true;
    o.with_snippet = false;
    o
}

fn inner(mut e: &Error) -> &Error {
    loop {
        match e {
            #[allow(deprecated)]
            Error::AliasError { error, .. } | Error::WithSnippet { error, .. } => e = error,
            _ => return e,
        }
    }
}

fn convert(e: Error) -> YamlError {
    let loc = e.location();
    let root = inner(&e);
    // A second document is refused through the document budget (max_documents = 1), but
    // it is a malformed file, not one that is too big: which document was meant is
    // ambiguous.
    let second_document = matches!(
        root,
        Error::Budget {
            breach: serde_saphyr::budget::BudgetBreach::Documents { .. },
            ..
        }
    );
    let limit = !second_document
        && matches!(
            root,
            Error::Budget { .. }
                | Error::AliasReplayLimitExceeded { .. }
                | Error::AliasExpansionLimitExceeded { .. }
                | Error::AliasReplayStackDepthExceeded { .. }
                | Error::AliasReplayCounterOverflow { .. }
        );
    // The scanner reports its own nesting guard as a plain message.
    let limit = limit || root.to_string().contains("recursion limit");
    let unknown_field = match root {
        Error::SerdeUnknownField {
            field, expected, ..
        } => Some((field.clone(), expected.clone())),
        _ => None,
    };
    let mut message = root.to_string();
    // serde-saphyr appends " at line X column Y" to some messages; we carry the
    // position separately.
    if let Some(i) = message.find(" at line ") {
        message.truncate(i);
    }
    // The library's advice names its own options; say what the author can change.
    if let Some(i) = message.find(", set DuplicateKeyPolicy in Options") {
        message.truncate(i);
        message.push_str(": a key may appear only once in a mapping; remove or rename one");
    }
    YamlError {
        message,
        line: loc.map(|l| l.line() as usize).filter(|&l| l > 0),
        column: loc.map(|l| l.column() as usize).filter(|&c| c > 0),
        limit,
        unknown_field,
    }
}

/// Read a typed manifest from YAML text.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    serde_saphyr::from_str_with_options(text, options(64)).map_err(convert)
}

/// Read a YAML-authored JSON value under the same I-JSON rules as [`crate::wire::json`]:
/// string keys only, finite numbers, integers within ±(2^53−1).
pub fn to_json(text: &str, max_depth: usize) -> Result<Value, YamlError> {
    let value: StrictValue =
        serde_saphyr::from_str_with_options(text, options(max_depth)).map_err(convert)?;
    crate::wire::json::check_numbers(&value.0).map_err(|e| {
        let position = locate(text, &e.pointer);
        YamlError {
            message: e.to_string(),
            line: position.map(|p| p.0),
            column: position.map(|p| p.1),
            limit: false,
            unknown_field: None,
        }
    })?;
    Ok(value.0)
}

/// The 1-based line and column where the value at `pointer` starts in the YAML `text`,
/// as [`crate::wire::json::locate`] gives for JSON: for an object member, the position of its
/// value. A pointer that passes through an alias stops at the alias (`*name`), which is
/// where the value is written in this file.
pub fn locate(text: &str, pointer: &str) -> Option<(usize, usize)> {
    use serde_saphyr::granit_parser::{Event, Parser};
    let target: Vec<String> = crate::wire::pointer::tokens(pointer)?
        .into_iter()
        .map(|t| t.into_owned())
        .collect();
    /// One open collection.
    enum Open {
        /// A mapping, and the key whose value comes next once a key was read.
        Map(Option<String>),
        /// A sequence, and the index of its next item.
        Seq(usize),
    }
    // The open collections, and the path segments leading to the innermost one.
    let mut stack: Vec<Open> = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((event, span))) = parser.next_event() {
        match event {
            Event::Scalar(..)
            | Event::SequenceStart(..)
            | Event::MappingStart(..)
            | Event::Alias(_) => {}
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                if !stack.is_empty() {
                    path.pop();
                }
                continue;
            }
            Event::DocumentEnd | Event::StreamEnd => return None,
            _ => continue,
        }
        let segment = match stack.last_mut() {
            None => None,
            Some(Open::Map(key @ None)) => {
                // A mapping key is not a node of the JSON value: remember it. (A complex
                // key is not JSON: no pointer leads into it.)
                let Event::Scalar(k, ..) = &event else {
                    return None;
                };
                *key = Some(k.to_string());
                continue;
            }
            Some(Open::Map(key)) => key.take(),
            Some(Open::Seq(i)) => {
                *i += 1;
                Some((*i - 1).to_string())
            }
        };
        let depth = path.len() + usize::from(segment.is_some());
        let on_path = depth <= target.len()
            && path.iter().zip(&target).all(|(a, b)| a == b)
            && segment.as_ref().is_none_or(|s| *s == target[depth - 1]);
        // The target itself, or an alias standing for a value that contains it.
        if on_path && (depth == target.len() || matches!(event, Event::Alias(_))) {
            return Some((span.start.line(), span.start.col() + 1));
        }
        if matches!(event, Event::SequenceStart(..) | Event::MappingStart(..)) {
            if let Some(s) = segment {
                path.push(s);
            }
            stack.push(if matches!(event, Event::SequenceStart(..)) {
                Open::Seq(0)
            } else {
                Open::Map(None)
            });
        }
    }
    None
}

/// A JSON value deserialized from YAML with I-JSON's structural rules.
struct StrictValue(Value);

impl<'de> serde::Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor).map(StrictValue)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-compatible YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_i128<E: serde::de::Error>(self, _: i128) -> Result<Value, E> {
        Err(E::custom("integer beyond ±(2^53−1) (I-JSON)"))
    }
    fn visit_u128<E: serde::de::Error>(self, _: u128) -> Result<Value, E> {
        Err(E::custom("integer beyond ±(2^53−1) (I-JSON)"))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a non-finite number (.inf, .nan) is not JSON"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!("duplicate key {key:?}")));
            }
            let StrictValue(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Object keys must be strings in JSON; a YAML key such as `200` or `true` is refused
/// rather than silently stringified.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        struct K;
        impl Visitor<'_> for K {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key (quote keys such as \"200\" or \"true\")")
            }
            fn visit_str<E>(self, v: &str) -> Result<String, E> {
                Ok(v.to_owned())
            }
            fn visit_string<E>(self, v: String) -> Result<String, E> {
                Ok(v)
            }
        }
        d.deserialize_any(K)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn converts_yaml_to_json() {
        let v = to_json(
            "type: object\nproperties:\n  a: {type: string, enum: [yes, no]}\n",
            64,
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["yes", "no"]}}})
        );
    }

    #[test]
    fn locates_pointers_in_yaml() {
        let text = "type: object\nproperties:\n  name: {type: string, maxLenght: 3}\n  tags:\n    - a\n    - {x: 1}\nrequired: [name]\n";
        assert_eq!(locate(text, ""), Some((1, 1)));
        assert_eq!(locate(text, "/type"), Some((1, 7)));
        assert_eq!(locate(text, "/properties/name"), Some((3, 9)));
        assert_eq!(locate(text, "/properties/name/maxLenght"), Some((3, 35)));
        assert_eq!(locate(text, "/properties/tags/1/x"), Some((6, 11)));
        assert_eq!(locate(text, "/required/0"), Some((7, 12)));
        assert_eq!(locate(text, "/nope"), None);
        assert_eq!(locate(text, "/properties/tags/7"), None);
        // Through an alias: the alias is where the value is written.
        let aliased = "defs: &d {a: 1}\nuse: *d\n";
        assert_eq!(locate(aliased, "/use/a"), Some((2, 6)));
        assert_eq!(locate(aliased, "/defs/a"), Some((1, 14)));
    }

    #[test]
    fn refuses_duplicate_keys() {
        let e = to_json("a: 1\nb: 2\na: 3\n", 64).unwrap_err();
        assert_eq!(e.line, Some(3), "{e:?}");
        assert!(e.message.to_lowercase().contains("duplicate"), "{e:?}");
    }

    #[test]
    fn refuses_non_string_keys_and_non_finite_numbers() {
        assert!(to_json("200: ok\n", 64).is_err());
        assert!(to_json("a: .inf\n", 64).is_err());
        assert!(to_json("a: 9007199254740993\n", 64).is_err());
        // JCS would write 1e20 as an integer lexeme beyond ±(2^53−1).
        assert!(to_json("a: 1e20\n", 64).is_err());
        assert!(to_json("a: 1e21\n", 64).is_ok());
        let e = to_json("a: 1\nb: 1e20\n", 64).unwrap_err();
        assert_eq!((e.line, e.column), (Some(2), Some(4)));
    }

    #[test]
    fn refuses_alias_bombs_as_a_limit() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let e = to_json(&bomb, 64).unwrap_err();
        assert!(e.limit, "{e:?}");
    }

    #[test]
    fn refuses_deep_nesting_as_a_limit() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        let e = to_json(&deep, 64).unwrap_err();
        assert!(e.limit, "{e:?}");
    }

    #[test]
    fn refuses_multiple_documents_and_merge_keys() {
        let e = to_json("a: 1\n---\nb: 2\n", 64).unwrap_err();
        assert!(
            !e.limit,
            "a second document is malformed, not too big: {e:?}"
        );
        assert!(
            !from_str::<serde_json::Value>("a: 1\n---\nb: 2\n")
                .unwrap_err()
                .limit
        );
        assert!(to_json("base: &b {x: 1}\nd:\n  <<: *b\n", 64).is_err());
    }
}
