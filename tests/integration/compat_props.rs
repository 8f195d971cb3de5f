//! Property tests for breaking-change detection, checked against a real validator.
//!
//! - A schema compared with itself shows no change at all.
//! - Soundness: whenever the comparison calls a change compatible for an input schema,
//!   no instance the old schema accepted is rejected by the new one; whenever it calls
//!   it compatible for an output schema, no instance the new one accepts was rejected by
//!   the old one. "Compatible" must never be a guess.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use skillbundle::interface::Role;
use skillbundle::release::compat::compare;

const NAMES: &[&str] = &["a", "b", "c"];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..4).prop_map(|n| json!(n)),
        prop::sample::select(vec![0.5f64, 1.5, -0.5]).prop_map(|f| json!(f)),
        prop::sample::select(vec!["", "a", "b", "ab", "ba", "aa"]).prop_map(|s| json!(s)),
    ]
}

fn instance() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["a", "b", "c", "d"]),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

fn names() -> impl Strategy<Value = Value> {
    prop::sample::subsequence(NAMES.to_vec(), 0..=3).prop_map(|v| json!(v))
}

/// One keyword with a value; `inner` generates subschemas.
fn keyword(inner: BoxedStrategy<Value>) -> impl Strategy<Value = (String, Value)> {
    let types = prop::sample::select(vec![
        "null", "boolean", "object", "array", "string", "integer", "number",
    ]);
    let small = || (0u64..4).prop_map(|n| json!(n));
    let bound = || (-2i64..3).prop_map(|n| json!(n));
    let kv = |k: &'static str, s: BoxedStrategy<Value>| s.prop_map(move |v| (k.to_string(), v));
    prop_oneof![
        kv("type", types.clone().prop_map(|t| json!(t)).boxed()),
        kv(
            "type",
            prop::sample::subsequence(
                vec!["null", "boolean", "object", "array", "string", "integer", "number"],
                1..3
            )
            .prop_map(|t| json!(t))
            .boxed()
        ),
        kv(
            "enum",
            prop::collection::vec(scalar(), 1..4)
                .prop_map(Value::Array)
                .boxed()
        ),
        kv("const", scalar().boxed()),
        kv("minimum", bound().boxed()),
        kv("maximum", bound().boxed()),
        kv("exclusiveMinimum", bound().boxed()),
        kv("exclusiveMaximum", bound().boxed()),
        kv(
            "multipleOf",
            prop::sample::select(vec![json!(1), json!(2), json!(0.5)]).boxed()
        ),
        kv("minLength", small().boxed()),
        kv("maxLength", small().boxed()),
        kv(
            "pattern",
            prop::sample::select(vec!["^a", "b$", "^[ab]*$"])
                .prop_map(|p| json!(p))
                .boxed()
        ),
        kv("minItems", small().boxed()),
        kv("maxItems", small().boxed()),
        kv("uniqueItems", any::<bool>().prop_map(Value::Bool).boxed()),
        kv("items", inner.clone()),
        kv(
            "prefixItems",
            prop::collection::vec(inner.clone(), 1..3)
                .prop_map(Value::Array)
                .boxed()
        ),
        kv("contains", inner.clone()),
        kv("minContains", small().boxed()),
        kv("maxContains", small().boxed()),
        kv(
            "properties",
            prop::collection::btree_map(prop::sample::select(NAMES.to_vec()), inner.clone(), 0..3)
                .prop_map(|m| Value::Object(
                    m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                ))
                .boxed()
        ),
        kv("required", names().boxed()),
        kv("additionalProperties", inner.clone()),
        kv("unevaluatedProperties", inner.clone()),
        kv("unevaluatedItems", inner.clone()),
        kv("minProperties", small().boxed()),
        kv("maxProperties", small().boxed()),
        kv("propertyNames", inner.clone()),
        kv(
            "dependentRequired",
            names().prop_map(|n| json!({"a": n})).boxed()
        ),
        kv(
            "dependentSchemas",
            inner.clone().prop_map(|s| json!({"b": s})).boxed()
        ),
        kv(
            "anyOf",
            prop::collection::vec(inner.clone(), 1..3)
                .prop_map(Value::Array)
                .boxed()
        ),
        kv(
            "allOf",
            prop::collection::vec(inner.clone(), 1..3)
                .prop_map(Value::Array)
                .boxed()
        ),
        kv(
            "oneOf",
            prop::collection::vec(inner.clone(), 1..3)
                .prop_map(Value::Array)
                .boxed()
        ),
        kv("not", inner.clone()),
        kv("if", inner.clone()),
        kv("then", inner.clone()),
        kv("else", inner.clone()),
        kv("$ref", Just(json!("#/$defs/d")).boxed()),
        kv("title", Just(json!("t")).boxed()),
    ]
}

fn object_of(entries: Vec<(String, Value)>) -> Value {
    let mut m = Map::new();
    for (k, v) in entries {
        m.insert(k, v);
    }
    Value::Object(m)
}

fn subschema() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        prop::collection::vec(keyword(Just(json!(true)).boxed()), 1..3).prop_map(object_of),
    ];
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop::collection::vec(keyword(inner.boxed()), 0..4).prop_map(object_of)
    })
    .boxed()
}

/// A root schema: a subschema plus a `$defs/d` target for the generated `$ref`s.
fn schema() -> impl Strategy<Value = Value> {
    (subschema(), subschema()).prop_map(|(mut root, d)| {
        if let Value::Object(m) = &mut root {
            m.insert("$defs".into(), json!({ "d": d }));
        } else {
            root = json!({"allOf": [root], "$defs": {"d": d}});
        }
        root
    })
}

/// Every subschema location of `v`, as JSON pointers.
fn locations(v: &Value, ptr: String, out: &mut Vec<String>) {
    out.push(ptr.clone());
    let Value::Object(m) = v else { return };
    for (k, sub) in m {
        let here = format!("{ptr}/{}", k.replace('~', "~0").replace('/', "~1"));
        match k.as_str() {
            "items"
            | "contains"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else" => locations(sub, here, out),
            "properties" | "$defs" | "dependentSchemas" => {
                if let Value::Object(entries) = sub {
                    for (name, s) in entries {
                        locations(s, format!("{here}/{name}"), out);
                    }
                }
            }
            "prefixItems" | "anyOf" | "allOf" | "oneOf" => {
                if let Value::Array(items) = sub {
                    for (i, s) in items.iter().enumerate() {
                        locations(s, format!("{here}/{i}"), out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Mutate one subschema of `old`: set a keyword, drop one, or replace it wholesale.
fn mutated() -> impl Strategy<Value = (Value, Value)> {
    (
        schema(),
        any::<prop::sample::Index>(),
        keyword(subschema()),
        0u8..3,
        subschema(),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(old, at, (k, v), op, replacement, which)| {
            let mut new = old.clone();
            let mut locs = Vec::new();
            locations(&old, String::new(), &mut locs);
            let target = new.pointer_mut(&locs[at.index(locs.len())]).unwrap();
            match op {
                0 => match target {
                    Value::Object(m) => {
                        m.insert(k, v);
                    }
                    _ => *target = object_of(vec![(k, v)]),
                },
                1 => {
                    if let Value::Object(m) = target {
                        if !m.is_empty() {
                            let key = m.keys().nth(which.index(m.len())).unwrap().clone();
                            if key != "$defs" {
                                m.remove(&key);
                            }
                        }
                    }
                }
                _ => {
                    if !locs.is_empty() && target.get("$defs").is_none() {
                        *target = replacement;
                    }
                }
            }
            (old, new)
        })
}

/// The validator the tool itself uses (governed: draft 2020-12, formats asserted, no
/// retrieval).
fn validator(schema: &Value) -> Option<skillbundle::schema::validator::Validator> {
    skillbundle::schema::govern_alone(schema).ok()
}

fn check_sound(old: &Value, new: &Value, instances: &[Value]) -> Result<(), TestCaseError> {
    let (Some(vo), Some(vn)) = (validator(old), validator(new)) else {
        return Ok(());
    };
    let c = compare(old, new);
    let input_ok = !c.is_breaking(Role::Input);
    let output_ok = !c.is_breaking(Role::Output);
    for i in instances {
        let (a, b) = (vo.is_valid(i), vn.is_valid(i));
        if input_ok {
            prop_assert!(
                !a || b,
                "called input-compatible, but the new schema rejects {i} which the old accepted\nold: {old}\nnew: {new}\nchanges: {:#?}",
                c.changes
            );
        }
        if output_ok {
            prop_assert!(
                !b || a,
                "called output-compatible, but the new schema accepts {i} which the old rejected\nold: {old}\nnew: {new}\nchanges: {:#?}",
                c.changes
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_schema_compared_with_itself_has_no_change(s in schema()) {
        // A `$ref` loop that never reaches a schema is not a schema a validator accepts;
        // the comparison calls it undecided, which is fine.
        prop_assume!(validator(&s).is_some());
        let c = compare(&s, &s);
        prop_assert!(c.changes.is_empty(), "{s}\n{:#?}", c.changes);
    }

    #[test]
    fn compatible_verdicts_hold_for_one_mutation(
        (old, new) in mutated(),
        instances in prop::collection::vec(instance(), 24),
    ) {
        check_sound(&old, &new, &instances)?;
        check_sound(&new, &old, &instances)?;
    }

    #[test]
    fn compatible_verdicts_hold_for_unrelated_schemas(
        old in schema(),
        new in schema(),
        instances in prop::collection::vec(instance(), 16),
    ) {
        check_sound(&old, &new, &instances)?;
    }
}
