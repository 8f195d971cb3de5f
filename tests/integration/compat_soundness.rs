//! Soundness of compatibility verdicts, searched for counterexamples.
//!
//! A grammar generates pairs of schemas — `type`, `enum`/`const`, numeric and string
//! bounds, `required`, `properties` with open and closed content, `items`,
//! `allOf`/`anyOf`/`oneOf`/`not` and `$ref` — where the new schema is most often a
//! rewrite of the old one of the kinds authors make (a `type` widened into an `anyOf`,
//! one combinator swapped for another, branches reordered or duplicated, the body moved
//! behind a root `$ref`, a branch added to a union or an intersection), so that many
//! verdicts are "compatible" and each of those claims gets tested. For every pair, a few
//! dozen instances — random ones plus values the two schemas mention — are judged by the
//! validator the tool itself uses (compiled through `skillbundle::schema::govern`): whenever the
//! comparison calls the change compatible for an input schema, no instance the old
//! schema accepts may be rejected by the new one, and dually for an output schema.
//!
//! A counterexample found here becomes a fixed case in `tests/integration/compat_decided.rs`.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Map, Value};
use skillbundle::interface::Role;
use skillbundle::release::compat::compare;
use skillbundle::schema::{govern_alone, validator::Validator};
use std::cell::Cell;

/// Pairs per test (two tests, one per core): 3,000 pairs, 6,000 verdicts a run, about
/// 20 s of a debug build on an idle 2-core machine (each test prints how long it took).
const PAIRS: u32 = 1_500;

const NAMES: &[&str] = &["a", "b", "c"];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-2i64..4).prop_map(|n| json!(n)),
        prop::sample::select(vec![0.5f64, 2.5]).prop_map(|f| json!(f)),
        prop::sample::select(vec!["", "a", "ab", "abc"]).prop_map(|s| json!(s)),
    ]
}

fn instance() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec!["a", "b", "c", "d"]),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

fn type_name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "null", "boolean", "object", "array", "string", "integer", "number",
    ])
}

/// A schema without applicators.
fn leaf() -> BoxedStrategy<Value> {
    let small = || 0u64..4;
    let bound = || -2i64..4;
    prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        type_name().prop_map(|t| json!({ "type": t })),
        prop::sample::subsequence(vec!["null", "boolean", "string", "integer", "number"], 1..3)
            .prop_map(|t| json!({ "type": t })),
        prop::collection::vec(scalar(), 1..4).prop_map(|e| json!({ "enum": e })),
        scalar().prop_map(|c| json!({ "const": c })),
        (
            prop::sample::select(vec!["integer", "number"]),
            prop::sample::select(vec![
                "minimum",
                "exclusiveMinimum",
                "maximum",
                "exclusiveMaximum"
            ]),
            bound()
        )
            .prop_map(|(t, k, b)| json!({ "type": t, k: b })),
        (small(), small())
            .prop_map(|(lo, hi)| json!({"type": "string", "minLength": lo, "maxLength": lo + hi})),
        small().prop_map(|n| json!({ "minLength": n })),
        (
            prop::collection::btree_map(prop::sample::select(NAMES.to_vec()), type_name(), 0..3),
            prop::sample::subsequence(NAMES.to_vec(), 0..2),
            any::<bool>()
        )
            .prop_map(|(props, required, closed)| {
                let props: Map<String, Value> = props
                    .into_iter()
                    .map(|(k, t)| (k.to_string(), json!({ "type": t })))
                    .collect();
                let mut m = json!({"type": "object", "properties": props, "required": required});
                if closed {
                    m["additionalProperties"] = json!(false);
                }
                m
            }),
        (type_name(), small())
            .prop_map(|(t, n)| json!({"type": "array", "items": {"type": t}, "minItems": n})),
    ]
    .boxed()
}

/// Subschemas with applicators, nested a little.
fn schema() -> BoxedStrategy<Value> {
    leaf()
        .prop_recursive(3, 16, 3, |inner| {
            let list = || prop::collection::vec(inner.clone(), 1..4).prop_map(Value::Array);
            prop_oneof![
                list().prop_map(|b| json!({ "allOf": b })),
                list().prop_map(|b| json!({ "anyOf": b })),
                list().prop_map(|b| json!({ "oneOf": b })),
                inner.clone().prop_map(|s| json!({ "not": s })),
                Just(json!({"$ref": "#/$defs/d"})),
                (inner.clone(), inner.clone(), any::<bool>()).prop_map(|(a, b, closed)| {
                    let mut m = json!({"type": "object", "properties": {"a": a, "b": b}, "required": ["a"]});
                    if closed {
                        m["additionalProperties"] = json!(false);
                    }
                    m
                }),
                inner.clone().prop_map(|s| json!({"type": "array", "items": s})),
                (type_name(), list()).prop_map(|(t, b)| json!({ "type": t, "anyOf": b })),
            ]
        })
        .boxed()
}

/// A root: a schema plus the `$defs/d` its `$ref`s reach (itself without references).
fn with_defs(mut root: Value, d: Value) -> Value {
    if !root.is_object() {
        root = json!({ "allOf": [root] });
    }
    root["$defs"] = json!({ "d": d });
    root
}

fn other_combinator(k: &str, pick: usize) -> &'static str {
    let all = ["allOf", "anyOf", "oneOf"];
    let others: Vec<&str> = all.iter().copied().filter(|c| *c != k).collect();
    others[pick % others.len()]
}

/// The new schema: a rewrite of `old` (most of the time) or an unrelated one.
fn rewrite(old: &Value, how: u8, extra: &Value, pick: usize) -> Value {
    let defs = old["$defs"].clone();
    let mut body = old.clone();
    body.as_object_mut().unwrap().remove("$defs");
    let root = |v: Value| {
        let mut v = if v.is_object() {
            v
        } else {
            json!({ "allOf": [v] })
        };
        v["$defs"] = defs.clone();
        v
    };
    match how {
        0 => root(json!({ "anyOf": [body, extra] })),
        1 => root(json!({ "anyOf": [extra, body] })),
        2 => root(json!({ "allOf": [body, extra] })),
        3 => root(json!({ "oneOf": [body, extra] })),
        4 | 5 => {
            // Swap, reverse or duplicate the branches of every combinator at the root.
            let mut m = body.as_object().unwrap().clone();
            for k in ["allOf", "anyOf", "oneOf"] {
                if let Some(Value::Array(mut branches)) = m.remove(k) {
                    let key = match (how, pick % 3) {
                        (4, _) => other_combinator(k, pick),
                        (_, 0) => {
                            branches.reverse();
                            k
                        }
                        (_, 1) => {
                            branches.push(branches[0].clone());
                            k
                        }
                        _ => {
                            branches.truncate(1);
                            k
                        }
                    };
                    m.insert(key.to_string(), Value::Array(branches));
                }
            }
            root(Value::Object(m))
        }
        6 => {
            // The body moves into $defs behind a root $ref.
            let mut defs = defs.clone();
            defs["body"] = body;
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "#/$defs/body", "$defs": defs})
        }
        7 => {
            // A `type` becomes a union with another type.
            let mut m = body.as_object().cloned().unwrap_or_default();
            match m.remove("type") {
                Some(t) => {
                    m.insert("anyOf".into(), json!([{ "type": t }, extra]));
                    root(Value::Object(m))
                }
                None => root(json!({ "anyOf": [body, extra] })),
            }
        }
        8 => match body
            .get("anyOf")
            .or(body.get("oneOf"))
            .and_then(|b| b.get(pick % 2))
        {
            // A union collapses to one of its branches.
            Some(branch) => root(branch.clone()),
            None => root(extra.clone()),
        },
        _ => root(extra.clone()),
    }
}

/// Literal values the schemas mention, and objects and arrays holding them: the values
/// at the edges of what the schemas accept.
fn mentioned(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            for (k, sub) in m {
                match k.as_str() {
                    "const" => out.push(sub.clone()),
                    "enum" => out.extend(sub.as_array().into_iter().flatten().cloned()),
                    _ => mentioned(sub, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| mentioned(i, out)),
        _ => {}
    }
}

fn compile(schema: &Value) -> Option<Validator> {
    govern_alone(schema).ok()
}

#[derive(Default)]
struct Tally {
    pairs: Cell<u32>,
    compiled: Cell<u32>,
    input_compatible: Cell<u32>,
    output_compatible: Cell<u32>,
}

/// Check both directions of one pair: the comparison of `old` with `new` and of `new`
/// with `old`, against the same instances.
fn check_pair(
    old: &Value,
    new: &Value,
    instances: &[Value],
    tally: &Tally,
) -> Result<(), TestCaseError> {
    tally.pairs.set(tally.pairs.get() + 1);
    let (Some(vo), Some(vn)) = (compile(old), compile(new)) else {
        return Ok(());
    };
    tally.compiled.set(tally.compiled.get() + 1);
    let mut extra = Vec::new();
    mentioned(old, &mut extra);
    mentioned(new, &mut extra);
    let wrapped: Vec<Value> = extra
        .iter()
        .flat_map(|v| [json!({ "a": v }), json!({ "a": v, "b": v }), json!([v])])
        .collect();
    // Each instance judged once by each schema.
    let verdicts: Vec<(&Value, bool, bool)> = instances
        .iter()
        .chain(&extra)
        .chain(&wrapped)
        .map(|i| (i, vo.is_valid(i), vn.is_valid(i)))
        .collect();
    for (a, b, flipped) in [(old, new, false), (new, old, true)] {
        let c = compare(a, b);
        let input_ok = !c.is_breaking(Role::Input);
        let output_ok = !c.is_breaking(Role::Output);
        tally
            .input_compatible
            .set(tally.input_compatible.get() + input_ok as u32);
        tally
            .output_compatible
            .set(tally.output_compatible.get() + output_ok as u32);
        for &(i, in_old, in_new) in &verdicts {
            let (in_a, in_b) = if flipped {
                (in_new, in_old)
            } else {
                (in_old, in_new)
            };
            if input_ok && in_a && !in_b {
                return Err(TestCaseError::fail(format!(
                    "called input-compatible, but the new schema rejects {i}, which the old accepts\nold: {a}\nnew: {b}\nchanges: {:#?}",
                    c.changes
                )));
            }
            if output_ok && in_b && !in_a {
                return Err(TestCaseError::fail(format!(
                    "called output-compatible, but the new schema accepts {i}, which the old rejects\nold: {a}\nnew: {b}\nchanges: {:#?}",
                    c.changes
                )));
            }
        }
    }
    Ok(())
}

#[test]
fn compatible_verdicts_have_no_counterexample() {
    search();
}

/// The same search again, with other random pairs, on the other core.
#[test]
fn compatible_verdicts_have_no_counterexample_either() {
    search();
}

fn search() {
    let started = std::time::Instant::now();
    let tally = Tally::default();
    let pairs = (
        (schema(), leaf(), leaf()),
        0u8..10,
        schema(),
        any::<usize>(),
        prop::collection::vec(instance(), 32),
    );
    let mut runner = TestRunner::new(Config {
        cases: PAIRS,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(
        &pairs,
        |((body, d, other_d), how, extra, pick, instances)| {
            let old = with_defs(body, d);
            let mut new = rewrite(&old, how, &extra, pick);
            // Now and then the target of the `$ref`s changes too.
            if pick % 4 == 0 {
                new["$defs"]["d"] = other_d;
            }
            check_pair(&old, &new, &instances, &tally)
        },
    );
    eprintln!(
        "{} pairs ({} both compiled) in {:.1?}: {} called input-compatible, {} output-compatible",
        tally.pairs.get(),
        tally.compiled.get(),
        started.elapsed(),
        tally.input_compatible.get(),
        tally.output_compatible.get()
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    // The search must exercise "compatible" claims, or it proves nothing.
    assert!(tally.input_compatible.get() > tally.compiled.get() / 3);
    assert!(tally.output_compatible.get() > tally.compiled.get() / 3);
}
