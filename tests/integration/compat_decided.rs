//! The fixed table of issue 13: schema changes users make to combinators, root `$ref`s
//! and `patternProperties`, each with the verdict expected for an input schema (the new
//! one must accept everything the old one did) and for an output or record schema (it
//! must accept nothing the old one rejected). Each pair is also checked the other way
//! round — a change that widens narrows when undone — and every "compatible" verdict is
//! spot-checked with the tool's validator on values the two schemas mention.
//!
//! Counterexamples found by `tests/integration/compat_soundness.rs` are added here as
//! fixed cases.

use serde_json::{json, Value};
use skillbundle::interface::Role;
use skillbundle::release::compat::compare;
use skillbundle::schema::govern_alone;

/// The verdict per role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum V {
    /// Accepts more: compatible for input, breaking for output/record.
    Widens,
    /// Accepts less: breaking for input, compatible for output/record.
    Narrows,
    /// Accepts the same values: compatible in every role.
    Same,
    /// Breaking in every role (incomparable, or still undecided).
    Breaks,
}

impl V {
    /// (breaking as input, breaking as output)
    fn breaking(self) -> (bool, bool) {
        match self {
            V::Widens => (false, true),
            V::Narrows => (true, false),
            V::Same => (false, false),
            V::Breaks => (true, true),
        }
    }

    fn reversed(self) -> V {
        match self {
            V::Widens => V::Narrows,
            V::Narrows => V::Widens,
            v => v,
        }
    }
}

fn s() -> Value {
    json!({"type": "string"})
}
fn num() -> Value {
    json!({"type": "number"})
}
fn boolean() -> Value {
    json!({"type": "boolean"})
}
fn int() -> Value {
    json!({"type": "integer"})
}

const D: &str = "https://json-schema.org/draft/2020-12/schema";

fn request() -> Value {
    json!({
        "type": "object",
        "properties": {"id": {"type": "string", "minLength": 1}, "limit": {"type": "integer", "minimum": 1}},
        "required": ["id"],
        "additionalProperties": false
    })
}

/// `body` as a root schema with a dialect.
fn inline(body: Value) -> Value {
    let mut v = body;
    v["$schema"] = json!(D);
    v
}

/// `body` moved into `$defs/request` behind a root `$ref`.
fn behind_ref(body: Value) -> Value {
    json!({"$schema": D, "$ref": "#/$defs/request", "$defs": {"request": body}})
}

fn with(mut v: Value, pointer: &str, value: Value) -> Value {
    *v.pointer_mut(pointer).unwrap() = value;
    v
}

fn pattern_object(props: Value, patterns: Value, closed: bool) -> Value {
    let mut v = json!({"type": "object", "properties": props, "patternProperties": patterns});
    if closed {
        v["additionalProperties"] = json!(false);
    }
    v
}

fn table() -> Vec<(&'static str, Value, Value, V)> {
    let (a, b, c) = (s(), num(), boolean());
    let disc = |kind: &str, t: &str| json!({"type": "object", "properties": {"kind": {"const": kind}, "v": {"type": t}}, "required": ["kind"]});
    vec![
        // 1. Combinators.
        (
            "type into anyOf with another type",
            a.clone(),
            json!({"anyOf": [a, b]}),
            V::Widens,
        ),
        (
            "type into anyOf, new branch first",
            a.clone(),
            json!({"anyOf": [b, a]}),
            V::Widens,
        ),
        (
            "type into oneOf of disjoint types",
            a.clone(),
            json!({"oneOf": [a, c]}),
            V::Widens,
        ),
        (
            "type into oneOf, reordered",
            a.clone(),
            json!({"oneOf": [c, a]}),
            V::Widens,
        ),
        (
            "type into a one-branch anyOf",
            a.clone(),
            json!({"anyOf": [a]}),
            V::Same,
        ),
        (
            "type into a one-branch allOf",
            a.clone(),
            json!({"allOf": [a]}),
            V::Same,
        ),
        (
            "type into a one-branch oneOf",
            a.clone(),
            json!({"oneOf": [a]}),
            V::Same,
        ),
        (
            "oneOf to anyOf, same branches",
            json!({"oneOf": [a, b]}),
            json!({"anyOf": [a, b]}),
            V::Same,
        ),
        (
            "oneOf to anyOf, reordered",
            json!({"oneOf": [a, b]}),
            json!({"anyOf": [b, a]}),
            V::Same,
        ),
        (
            "allOf to anyOf",
            json!({"allOf": [a, {"minLength": 1}]}),
            json!({"anyOf": [a, {"minLength": 1}]}),
            V::Widens,
        ),
        (
            "allOf to anyOf, reordered",
            json!({"allOf": [a, {"minLength": 1}]}),
            json!({"anyOf": [{"minLength": 1}, a]}),
            V::Widens,
        ),
        (
            "allOf duplicated branch",
            json!({"allOf": [a]}),
            json!({"allOf": [a, a]}),
            V::Same,
        ),
        (
            "anyOf duplicated branch",
            json!({"anyOf": [a, b]}),
            json!({"anyOf": [a, b, a]}),
            V::Same,
        ),
        (
            "anyOf branches reordered",
            json!({"anyOf": [a, b, c]}),
            json!({"anyOf": [c, a, b]}),
            V::Same,
        ),
        (
            "oneOf disjoint branches reordered",
            json!({"oneOf": [a, b, c]}),
            json!({"oneOf": [c, b, a]}),
            V::Same,
        ),
        (
            "oneOf reordered with a branch added",
            json!({"oneOf": [a, c]}),
            json!({"oneOf": [c, json!({"type": "null"}), a]}),
            V::Widens,
        ),
        (
            "anyOf branch added",
            json!({"anyOf": [a, b]}),
            json!({"anyOf": [a, b, c]}),
            V::Widens,
        ),
        (
            "anyOf branch widened",
            json!({"anyOf": [int(), a]}),
            json!({"anyOf": [a, b]}),
            V::Widens,
        ),
        (
            "anyOf into the plain type it covers",
            json!({"anyOf": [int(), json!({"type": "number", "minimum": 0})]}),
            b.clone(),
            V::Widens,
        ),
        (
            "anyOf collapsed to one branch",
            json!({"anyOf": [a, b]}),
            a.clone(),
            V::Narrows,
        ),
        (
            "allOf branch added",
            json!({"allOf": [a]}),
            json!({"allOf": [a, {"maxLength": 3}]}),
            V::Narrows,
        ),
        (
            "allOf into the merged object",
            json!({"allOf": [{"type": "string", "minLength": 1}]}),
            json!({"type": "string", "minLength": 1}),
            V::Same,
        ),
        (
            "plain type into allOf of itself and a weaker one",
            a.clone(),
            json!({"allOf": [a, {"type": ["string", "null"]}]}),
            V::Same,
        ),
        (
            "anyOf into oneOf of disjoint branches",
            json!({"anyOf": [a, b]}),
            json!({"oneOf": [b, a]}),
            V::Same,
        ),
        (
            "anyOf into oneOf of overlapping branches",
            json!({"anyOf": [b, int()]}),
            json!({"oneOf": [b, int()]}),
            V::Narrows,
        ),
        (
            "oneOf of overlapping branches into anyOf",
            json!({"oneOf": [b, int()]}),
            json!({"anyOf": [b, int()]}),
            V::Widens,
        ),
        (
            "oneOf discriminated by const: branches reordered",
            json!({"oneOf": [disc("x", "string"), disc("y", "number")]}),
            json!({"oneOf": [disc("y", "number"), disc("x", "string")]}),
            V::Same,
        ),
        (
            "oneOf discriminated by const: branch added",
            json!({"oneOf": [disc("x", "string")]}),
            json!({"oneOf": [disc("y", "number"), disc("x", "string")]}),
            V::Widens,
        ),
        (
            "oneOf discriminated by const to anyOf",
            json!({"oneOf": [disc("x", "string"), disc("y", "number")]}),
            json!({"anyOf": [disc("y", "number"), disc("x", "string")]}),
            V::Same,
        ),
        (
            "anyOf with a branch narrowed",
            json!({"anyOf": [a, b]}),
            json!({"anyOf": [{"type": "string", "maxLength": 5}, b]}),
            V::Narrows,
        ),
        (
            "anyOf replaced by an unrelated one",
            json!({"anyOf": [a, b]}),
            json!({"anyOf": [c, json!({"type": "null"})]}),
            V::Breaks,
        ),
        // In fact the same set, but a union of two ranges is not merged: still "narrows".
        (
            "type into anyOf of two ranges that cover it",
            a.clone(),
            json!({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 4}]}),
            V::Narrows,
        ),
        (
            "sibling keyword kept next to a new anyOf",
            json!({"type": "object", "required": ["id"]}),
            json!({"type": "object", "required": ["id"], "anyOf": [{"required": ["id"]}, {"required": ["name"]}]}),
            V::Same,
        ),
        // In fact the same set, but an enum is not split into a union of its values: "narrows".
        (
            "enum split into anyOf of consts",
            json!({"enum": ["a", "b"]}),
            json!({"anyOf": [{"const": "a"}, {"const": "b"}]}),
            V::Narrows,
        ),
        // In fact a widening; the same limit makes it undecided.
        (
            "enum split into oneOf of consts, one added",
            json!({"enum": ["a", "b"]}),
            json!({"oneOf": [{"const": "b"}, {"const": "c"}, {"const": "a"}]}),
            V::Breaks,
        ),
        (
            "nested: property type into anyOf",
            json!({"type": "object", "properties": {"v": a}}),
            json!({"type": "object", "properties": {"v": {"anyOf": [a, b]}}}),
            V::Widens,
        ),
        (
            "nested: items oneOf to anyOf",
            json!({"type": "array", "items": {"oneOf": [a, b]}}),
            json!({"type": "array", "items": {"anyOf": [b, a]}}),
            V::Same,
        ),
        (
            "nested: allOf inside anyOf branch",
            json!({"anyOf": [{"allOf": [a]}, b]}),
            json!({"anyOf": [b, a]}),
            V::Same,
        ),
        (
            "not around a widened anyOf",
            json!({"not": {"anyOf": [a]}}),
            json!({"not": {"anyOf": [a, b]}}),
            V::Narrows,
        ),
        (
            "not with reordered anyOf",
            json!({"not": {"anyOf": [a, b]}}),
            json!({"not": {"anyOf": [b, a]}}),
            V::Same,
        ),
        (
            "anyOf through $ref branches reordered",
            json!({"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}], "$defs": {"a": a, "b": b}}),
            json!({"anyOf": [{"$ref": "#/$defs/b"}, {"$ref": "#/$defs/a"}], "$defs": {"a": a, "b": b}}),
            V::Same,
        ),
        (
            "$ref with a sibling type moved into allOf",
            json!({"$ref": "#/$defs/a", "minLength": 1, "$defs": {"a": a}}),
            json!({"allOf": [{"$ref": "#/$defs/a"}, {"minLength": 1}], "$defs": {"a": a}}),
            V::Same,
        ),
        // 2. A root that is only $ref (+ $schema, $defs).
        (
            "body moved into $defs behind a root $ref",
            inline(request()),
            behind_ref(request()),
            V::Same,
        ),
        (
            "body moved back inline",
            behind_ref(request()),
            inline(request()),
            V::Same,
        ),
        (
            "body behind $ref, a property widened",
            inline(request()),
            behind_ref(with(request(), "/properties/limit/minimum", json!(0))),
            V::Widens,
        ),
        (
            "body behind $ref, a property required",
            inline(request()),
            behind_ref(with(request(), "/required", json!(["id", "limit"]))),
            V::Narrows,
        ),
        (
            "body behind $ref with a title next to it",
            inline(request()),
            {
                let mut v = behind_ref(request());
                v["title"] = json!("Request");
                v
            },
            V::Same,
        ),
        (
            "$ref target renamed in $defs",
            behind_ref(request()),
            json!({"$schema": D, "$ref": "#/$defs/req", "$defs": {"req": request()}}),
            V::Same,
        ),
        (
            "dialect dropped at the root",
            inline(request()),
            request(),
            V::Breaks,
        ),
        (
            "dialect dropped behind a root $ref",
            inline(request()),
            json!({"$ref": "#/$defs/request", "$defs": {"request": request()}}),
            V::Breaks,
        ),
        // 3. patternProperties next to properties.
        (
            "patterns unchanged, a property widened",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), false),
            pattern_object(
                json!({"a": {"type": ["string", "null"]}}),
                json!({"^x-": int()}),
                false,
            ),
            V::Widens,
        ),
        (
            "patterns unchanged, closed, a property widened",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            pattern_object(
                json!({"a": {"type": ["string", "null"]}}),
                json!({"^x-": int()}),
                true,
            ),
            V::Widens,
        ),
        (
            "patterns unchanged, nothing else changed",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            V::Same,
        ),
        (
            "patterns unchanged, closed, a property added",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            pattern_object(json!({"a": s(), "b": s()}), json!({"^x-": int()}), true),
            V::Widens,
        ),
        (
            "patterns unchanged, open, a property added",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), false),
            pattern_object(json!({"a": s(), "b": s()}), json!({"^x-": int()}), false),
            V::Narrows,
        ),
        (
            "patterns unchanged, a matching property declared as the pattern says",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            pattern_object(json!({"a": s(), "x-b": int()}), json!({"^x-": int()}), true),
            V::Same,
        ),
        (
            "patterns unchanged, a matching property declared narrower",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            pattern_object(
                json!({"a": s(), "x-b": {"type": "integer", "minimum": 0}}),
                json!({"^x-": int()}),
                true,
            ),
            V::Narrows,
        ),
        (
            "patterns unchanged, closed, a property removed",
            pattern_object(json!({"a": s(), "b": s()}), json!({"^x-": int()}), true),
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            V::Narrows,
        ),
        (
            "patterns unchanged, a matching property no longer declared",
            pattern_object(
                json!({"x-b": {"type": "integer", "minimum": 0}}),
                json!({"^x-": int()}),
                true,
            ),
            pattern_object(json!({}), json!({"^x-": int()}), true),
            V::Widens,
        ),
        (
            "pattern schema widened",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            pattern_object(json!({"a": s()}), json!({"^x-": num()}), true),
            V::Widens,
        ),
        // Regressions found by the soundness search.
        (
            "a $ref target narrowed next to an unchanged anyOf",
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/d"}}, "anyOf": [{"type": "object"}], "$defs": {"d": {"type": "string"}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/d"}}, "anyOf": [{"type": "object"}], "$defs": {"d": {"type": "string", "maxLength": 1}}}),
            V::Narrows,
        ),
        // Still undecided: breaking in every role.
        (
            "pattern changed, closed",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            pattern_object(json!({"a": s()}), json!({"^y-": int()}), true),
            V::Breaks,
        ),
        (
            "patterns changed and a property added",
            pattern_object(json!({"a": s()}), json!({"^x-": int()}), true),
            pattern_object(json!({"a": s(), "b": s()}), json!({"^x": int()}), true),
            V::Breaks,
        ),
        (
            "oneOf of overlapping branches reordered with a branch added",
            json!({"oneOf": [b, int()]}),
            json!({"oneOf": [int(), b, a]}),
            V::Breaks,
        ),
        (
            "unevaluatedProperties next to a rewritten combinator",
            json!({"anyOf": [{"properties": {"a": s()}}], "unevaluatedProperties": false}),
            json!({"oneOf": [{"properties": {"a": s()}}], "unevaluatedProperties": false}),
            V::Breaks,
        ),
        // What unevaluated* sees changed while each part accepts the same values (found by
        // compat_props): `if` without `then`, `items: true`, `contains`, a `$ref` target.
        (
            "an if without then dropped next to unevaluatedItems",
            json!({"unevaluatedItems": false, "if": {"items": true}}),
            json!({"unevaluatedItems": false}),
            V::Breaks,
        ),
        (
            "items: true dropped from an allOf branch next to unevaluatedItems",
            json!({"unevaluatedItems": false, "allOf": [{"items": true}]}),
            json!({"unevaluatedItems": false, "allOf": [true]}),
            V::Breaks,
        ),
        (
            "contains dropped next to unevaluatedItems",
            json!({"unevaluatedItems": false, "contains": s()}),
            json!({"unevaluatedItems": false}),
            V::Breaks,
        ),
        (
            "additionalProperties: true dropped from a $ref target next to unevaluatedProperties",
            json!({"$ref": "#/$defs/d", "unevaluatedProperties": false, "$defs": {"d": {"additionalProperties": true}}}),
            json!({"$ref": "#/$defs/d", "unevaluatedProperties": false, "$defs": {"d": true}}),
            V::Breaks,
        ),
        (
            "a title changed inside an allOf next to unevaluatedProperties",
            json!({"unevaluatedProperties": false, "allOf": [{"properties": {"a": s()}, "title": "x"}]}),
            json!({"unevaluatedProperties": false, "allOf": [{"properties": {"a": s()}, "title": "y"}]}),
            V::Same,
        ),
        // In fact the same set, but allOf branches are not merged into one object: "narrows".
        (
            "allOf branches merged into one object",
            json!({"allOf": [a, {"minLength": 1}]}),
            json!({"type": "string", "minLength": 1}),
            V::Narrows,
        ),
    ]
}

#[test]
fn table_has_at_least_sixty_pairs() {
    assert!(table().len() >= 60, "{} pairs", table().len());
}

#[test]
fn every_pair_gets_its_verdict_in_both_roles_and_both_directions() {
    let mut wrong = Vec::new();
    for (name, old, new, expected) in table() {
        for (a, b, e, way) in [
            (&old, &new, expected, "forward"),
            (&new, &old, expected.reversed(), "reversed"),
        ] {
            let c = compare(a, b);
            let got = (c.is_breaking(Role::Input), c.is_breaking(Role::Output));
            assert_eq!(
                c.is_breaking(Role::Record),
                got.1,
                "{name}: record and output roles must agree"
            );
            if got != e.breaking() {
                wrong.push(format!(
                    "{name} ({way}): expected {e:?} (input breaking, output breaking) = {:?}, got {got:?}\n  {:#?}",
                    e.breaking(),
                    c.changes
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Values at the edges of both schemas: their consts and enums, wrapped in the shapes the
/// table uses, plus a few plain ones.
fn probes(old: &Value, new: &Value) -> Vec<Value> {
    fn walk(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                for (k, sub) in m {
                    match k.as_str() {
                        "const" => out.push(sub.clone()),
                        "enum" => out.extend(sub.as_array().into_iter().flatten().cloned()),
                        _ => walk(sub, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut base = vec![
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(7),
        json!(""),
        json!("abcdef"),
        json!("x"),
        json!([]),
        json!(["a", 1]),
        json!({}),
    ];
    walk(old, &mut base);
    walk(new, &mut base);
    let mut out = base.clone();
    for v in &base {
        out.push(json!({ "id": "a", "limit": v }));
        out.push(json!({ "id": v }));
        out.push(json!({ "a": v }));
        out.push(json!({ "a": "s", "x-b": v }));
        out.push(json!({ "a": "s", "b": v }));
        out.push(json!({ "kind": v, "v": v }));
        out.push(json!({ "kind": "x", "v": v }));
        out.push(json!({ "v": v }));
        out.push(json!([v]));
    }
    out
}

#[test]
fn compatible_verdicts_in_the_table_hold_on_probes() {
    for (name, old, new, _) in table() {
        let (vo, vn) = (govern_alone(&old).unwrap(), govern_alone(&new).unwrap());
        let c = compare(&old, &new);
        for i in probes(&old, &new) {
            let (a, b) = (vo.is_valid(&i), vn.is_valid(&i));
            if !c.is_breaking(Role::Input) {
                assert!(!a || b, "{name}: input-compatible, yet {i} is lost");
            }
            if !c.is_breaking(Role::Output) {
                assert!(!b || a, "{name}: output-compatible, yet {i} is gained");
            }
        }
    }
}
