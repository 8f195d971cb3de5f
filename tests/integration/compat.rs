//! Breaking-change detection, table-driven: each mutation of a schema is compared as an
//! input schema (the new one must accept all the old accepted) and as an output schema
//! (the new one must accept nothing the old rejected), and the verdict is asserted both
//! ways round: a change that widens one way narrows the other.

use serde_json::{json, Value};
use skillbundle::interface::Role;
use skillbundle::release::compat::{compare, Direction, RULES};

/// Compatible / breaking, as seen by the consumer of an input and of an output schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum V {
    /// Accepts more: fine for input, breaking for output.
    Widens,
    /// Accepts less: breaking for input, fine for output.
    Narrows,
    /// Breaking both ways (incomparable, or undecided).
    Breaks,
    /// Compatible both ways (no change to the accepted set).
    Same,
}

impl V {
    fn expected(self) -> (bool, bool) {
        match self {
            V::Widens => (false, true),
            V::Narrows => (true, false),
            V::Breaks => (true, true),
            V::Same => (false, false),
        }
    }
}

fn base() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z]+$"},
            "count": {"type": "integer", "minimum": 0, "maximum": 100},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
            "state": {"enum": ["up", "down"]},
            "kind": {"const": "probe"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 8},
            "at": {"type": "string", "format": "date-time"},
            "addr": {"anyOf": [{"type": "string", "format": "ipv4"}, {"type": "string", "format": "ipv6"}]},
            "op": {"oneOf": [{"const": "read"}, {"const": "write"}]},
            "meta": {"type": "object", "minProperties": 1, "maxProperties": 4},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
            "hop": {"$ref": "#/$defs/hop"},
            "note": {"type": "string", "not": {"const": ""}}
        },
        "required": ["id", "count"],
        "additionalProperties": false,
        "$defs": {
            "hop": {"type": "object", "properties": {"ttl": {"type": "integer", "minimum": 1}}, "required": ["ttl"], "additionalProperties": false}
        }
    })
}

/// Apply `f` to a copy of the base schema.
fn with(f: impl FnOnce(&mut Value)) -> Value {
    let mut v = base();
    f(&mut v);
    v
}

fn at<'a>(v: &'a mut Value, pointer: &str) -> &'a mut Value {
    v.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}"))
}

fn remove(v: &mut Value, pointer: &str, key: &str) {
    at(v, pointer).as_object_mut().unwrap().remove(key);
}

struct Case {
    name: &'static str,
    old: Value,
    new: Value,
    verdict: V,
    /// A rule that must be among the changes (None: no change at all expected).
    rule: Option<&'static str>,
}

fn case(name: &'static str, new: Value, verdict: V, rule: Option<&'static str>) -> Case {
    Case {
        name,
        old: base(),
        new,
        verdict,
        rule,
    }
}

fn cases() -> Vec<Case> {
    use V::*;
    let mut c = vec![
        case("unchanged", base(), Same, None),
        case(
            "description added",
            with(|v| at(v, "/properties/id")["description"] = json!("the id")),
            Same,
            Some("annotation-changed"),
        ),
        case(
            "type widened to nullable",
            with(|v| at(v, "/properties/id")["type"] = json!(["string", "null"])),
            Widens,
            Some("type-added"),
        ),
        case(
            "integer became number",
            with(|v| at(v, "/properties/count")["type"] = json!("number")),
            Widens,
            Some("type-added"),
        ),
        case(
            "number became integer",
            with(|v| at(v, "/properties/ratio")["type"] = json!("integer")),
            Narrows,
            Some("type-removed"),
        ),
        case(
            "type constraint added",
            with(|v| at(v, "/properties/state")["type"] = json!("string")),
            Same,
            None,
        ),
        case(
            "type changed string to integer",
            with(|v| at(v, "/properties/id")["type"] = json!("integer")),
            Breaks,
            Some("type-removed"),
        ),
        case(
            "enum value added",
            with(|v| at(v, "/properties/state")["enum"] = json!(["up", "down", "testing"])),
            Widens,
            Some("enum-value-added"),
        ),
        case(
            "enum value removed",
            with(|v| at(v, "/properties/state")["enum"] = json!(["up"])),
            Narrows,
            Some("enum-value-removed"),
        ),
        case(
            "enum reordered",
            with(|v| at(v, "/properties/state")["enum"] = json!(["down", "up"])),
            Same,
            None,
        ),
        case(
            "const became an enum with one more value",
            with(|v| {
                remove(v, "/properties/kind", "const");
                at(v, "/properties/kind")["enum"] = json!(["probe", "trace"]);
            }),
            Widens,
            Some("enum-value-added"),
        ),
        case(
            "enum introduced",
            with(|v| at(v, "/properties/id")["enum"] = json!(["a", "b"])),
            Narrows,
            Some("enum-added"),
        ),
        case(
            "enum dropped",
            with(|v| remove(v, "/properties/state", "enum")),
            Widens,
            Some("enum-removed"),
        ),
        case(
            "required property added",
            with(|v| at(v, "")["required"] = json!(["id", "count", "state"])),
            Narrows,
            Some("required-added"),
        ),
        case(
            "required property removed",
            with(|v| at(v, "")["required"] = json!(["id"])),
            Widens,
            Some("required-removed"),
        ),
        case(
            "optional property added under additionalProperties false",
            with(|v| at(v, "/properties")["priority"] = json!({"type": "integer"})),
            Widens,
            Some("property-added"),
        ),
        case(
            "new required property",
            with(|v| {
                at(v, "/properties")["priority"] = json!({"type": "integer"});
                at(v, "/required")
                    .as_array_mut()
                    .unwrap()
                    .push(json!("priority"));
            }),
            Breaks,
            Some("required-added"),
        ),
        case(
            "property removed under additionalProperties false",
            with(|v| remove(v, "/properties", "note")),
            Narrows,
            Some("property-removed"),
        ),
        case(
            "additionalProperties opened",
            with(|v| at(v, "")["additionalProperties"] = json!(true)),
            Widens,
            Some("no-longer-false"),
        ),
        case(
            "minimum raised",
            with(|v| at(v, "/properties/count")["minimum"] = json!(1)),
            Narrows,
            Some("minimum-tightened"),
        ),
        case(
            "minimum removed",
            with(|v| remove(v, "/properties/count", "minimum")),
            Widens,
            Some("minimum-loosened"),
        ),
        case(
            "maximum raised",
            with(|v| at(v, "/properties/count")["maximum"] = json!(1000)),
            Widens,
            Some("maximum-loosened"),
        ),
        case(
            "maximum made exclusive",
            with(|v| {
                remove(v, "/properties/count", "maximum");
                at(v, "/properties/count")["exclusiveMaximum"] = json!(100);
            }),
            Narrows,
            Some("maximum-tightened"),
        ),
        case(
            "exclusiveMinimum made inclusive",
            with(|v| {
                remove(v, "/properties/ratio", "exclusiveMinimum");
                at(v, "/properties/ratio")["minimum"] = json!(0);
            }),
            Widens,
            Some("minimum-loosened"),
        ),
        case(
            "multipleOf refined",
            with(|v| at(v, "/properties/ratio")["multipleOf"] = json!(0.25)),
            Widens,
            Some("multiple-of-loosened"),
        ),
        case(
            "multipleOf coarsened",
            with(|v| at(v, "/properties/ratio")["multipleOf"] = json!(1)),
            Narrows,
            Some("multiple-of-tightened"),
        ),
        case(
            "minLength raised",
            with(|v| at(v, "/properties/id")["minLength"] = json!(3)),
            Narrows,
            Some("min-length-tightened"),
        ),
        case(
            "maxLength raised",
            with(|v| at(v, "/properties/id")["maxLength"] = json!(128)),
            Widens,
            Some("max-length-loosened"),
        ),
        case(
            "pattern removed",
            with(|v| remove(v, "/properties/id", "pattern")),
            Widens,
            Some("pattern-removed"),
        ),
        case(
            "pattern changed",
            with(|v| at(v, "/properties/id")["pattern"] = json!("^[a-z0-9]+$")),
            Breaks,
            Some("pattern-changed"),
        ),
        case(
            "format added",
            with(|v| at(v, "/properties/id")["format"] = json!("hostname")),
            Narrows,
            Some("format-added"),
        ),
        case(
            "format changed to an unrelated one",
            with(|v| at(v, "/properties/at")["format"] = json!("date")),
            Breaks,
            Some("format-changed"),
        ),
        case(
            "minItems lowered",
            with(|v| at(v, "/properties/tags")["minItems"] = json!(0)),
            Widens,
            Some("min-items-loosened"),
        ),
        case(
            "maxItems lowered",
            with(|v| at(v, "/properties/tags")["maxItems"] = json!(4)),
            Narrows,
            Some("max-items-tightened"),
        ),
        case(
            "uniqueItems added",
            with(|v| at(v, "/properties/tags")["uniqueItems"] = json!(true)),
            Narrows,
            Some("unique-items-added"),
        ),
        case(
            "items type widened",
            with(|v| at(v, "/properties/tags/items")["type"] = json!(["string", "integer"])),
            Widens,
            Some("type-added"),
        ),
        case(
            "prefixItems position added where items is false",
            with(|v| {
                at(v, "/properties/pair/prefixItems")
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "boolean"}))
            }),
            Widens,
            Some("prefix-item-added"),
        ),
        case(
            "prefixItems position removed",
            with(|v| {
                at(v, "/properties/pair/prefixItems")
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
            Narrows,
            Some("prefix-item-removed"),
        ),
        case(
            "minProperties raised",
            with(|v| at(v, "/properties/meta")["minProperties"] = json!(2)),
            Narrows,
            Some("min-properties-tightened"),
        ),
        case(
            "maxProperties removed",
            with(|v| remove(v, "/properties/meta", "maxProperties")),
            Widens,
            Some("max-properties-loosened"),
        ),
        case(
            "anyOf branch added",
            with(|v| {
                at(v, "/properties/addr/anyOf")
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "string", "format": "hostname"}))
            }),
            Widens,
            Some("any-of-branch-added"),
        ),
        case(
            "anyOf branch removed",
            with(|v| {
                at(v, "/properties/addr/anyOf")
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
            Narrows,
            Some("any-of-branch-removed"),
        ),
        case(
            "oneOf disjoint branch added",
            with(|v| {
                at(v, "/properties/op/oneOf")
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"const": "delete"}))
            }),
            Widens,
            Some("one-of-branch-added"),
        ),
        case(
            "oneOf overlapping branch added",
            with(|v| {
                at(v, "/properties/op/oneOf")
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "string"}))
            }),
            Breaks,
            Some("one-of-changed"),
        ),
        case(
            "$ref target tightened",
            with(|v| at(v, "/$defs/hop/properties/ttl")["maximum"] = json!(64)),
            Narrows,
            Some("maximum-tightened"),
        ),
        case(
            "$ref target gains a property under additionalProperties false",
            with(|v| at(v, "/$defs/hop/properties")["rtt"] = json!({"type": "number"})),
            Widens,
            Some("property-added"),
        ),
        case(
            "inline schema moved behind an equal $ref",
            with(|v| {
                at(v, "/$defs")["count"] = json!({"type": "integer", "minimum": 0, "maximum": 100});
                at(v, "/properties")["count"] = json!({"$ref": "#/$defs/count"});
            }),
            Same,
            None,
        ),
        case(
            "not excludes more",
            with(|v| at(v, "/properties/note/not")["const"] = json!(null)),
            Breaks,
            Some("enum-value-added"),
        ),
        case(
            "not widened inside narrows outside",
            with(|v| at(v, "/properties/note")["not"] = json!({"enum": ["", "-"]})),
            Narrows,
            Some("enum-value-added"),
        ),
        case(
            "allOf branch added",
            with(|v| at(v, "")["allOf"] = json!([{"required": ["state"]}])),
            Narrows,
            Some("all-of-branch-added"),
        ),
        case(
            "property schema became false",
            with(|v| at(v, "/properties")["note"] = json!(false)),
            Narrows,
            Some("became-false"),
        ),
        case(
            "dependentRequired added",
            with(|v| at(v, "")["dependentRequired"] = json!({"state": ["note"]})),
            Narrows,
            Some("dependent-required-added"),
        ),
        case(
            "contains added",
            with(|v| at(v, "/properties/tags")["contains"] = json!({"const": "core"})),
            Narrows,
            Some("contains-added"),
        ),
        case(
            "$schema changed",
            with(|v| at(v, "")["$schema"] = json!("https://json-schema.org/draft/2019-09/schema")),
            Breaks,
            Some("dialect-changed"),
        ),
        case(
            "unresolvable $ref",
            with(|v| at(v, "/properties")["hop"] = json!({"$ref": "#/$defs/missing"})),
            Breaks,
            Some("ref-unresolved"),
        ),
        case(
            "$dynamicRef introduced",
            with(|v| at(v, "/properties")["hop"] = json!({"$dynamicRef": "#/$defs/hop"})),
            Breaks,
            Some("dynamic-ref"),
        ),
    ];
    // Cases whose base is not the shared one.
    let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    c.push(Case {
        name: "property constrained on an open object",
        old: open.clone(),
        new: json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}),
        verdict: V::Narrows,
        rule: Some("property-added"),
    });
    c.push(Case {
        name: "property declaration dropped from an open object",
        old: open.clone(),
        new: json!({"type": "object"}),
        verdict: V::Widens,
        rule: Some("property-removed"),
    });
    c.push(Case {
        name: "additionalProperties closed",
        old: open.clone(),
        new: json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
        verdict: V::Narrows,
        rule: Some("became-false"),
    });
    c.push(Case {
        name: "property added under unevaluatedProperties false",
        old: json!({"type": "object", "properties": {"a": {}}, "unevaluatedProperties": false}),
        new: json!({"type": "object", "properties": {"a": {}, "b": {"type": "string"}}, "unevaluatedProperties": false}),
        verdict: V::Widens,
        rule: Some("property-added"),
    });
    c.push(Case {
        name: "unevaluatedProperties false next to a changed allOf",
        old: json!({"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": false}),
        new: json!({"allOf": [{"properties": {"a": {}, "b": {"type": "string"}}}], "unevaluatedProperties": false}),
        verdict: V::Breaks,
        rule: Some("unevaluated-with-applicators"),
    });
    c.push(Case {
        name: "if condition changed",
        old: json!({"if": {"properties": {"op": {"const": "write"}}}, "then": {"required": ["ticket"]}}),
        new: json!({"if": {"properties": {"op": {"enum": ["write", "delete"]}}}, "then": {"required": ["ticket"]}}),
        verdict: V::Breaks,
        rule: Some("if-changed"),
    });
    c.push(Case {
        name: "then branch tightened",
        old: json!({"if": {"properties": {"op": {"const": "write"}}}, "then": {"required": ["ticket"]}}),
        new: json!({"if": {"properties": {"op": {"const": "write"}}}, "then": {"required": ["ticket", "reason"]}}),
        verdict: V::Narrows,
        rule: Some("required-added"),
    });
    c.push(Case {
        name: "format widened uri to iri",
        old: json!({"type": "string", "format": "uri"}),
        new: json!({"type": "string", "format": "iri"}),
        verdict: V::Widens,
        rule: Some("format-widened"),
    });
    c.push(Case {
        name: "boolean schema true to false",
        old: json!(true),
        new: json!(false),
        verdict: V::Narrows,
        rule: Some("became-false"),
    });
    c.push(Case {
        name: "recursive schema: a required member deep in the cycle",
        old: json!({"$ref": "#/$defs/n", "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}, "v": {"type": "integer"}}}}}),
        new: json!({"$ref": "#/$defs/n", "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}, "v": {"type": "integer"}}, "required": ["v"]}}}),
        verdict: V::Narrows,
        rule: Some("required-added"),
    });
    c
}

#[test]
fn mutations_give_the_expected_verdict_as_input_and_as_output() {
    let all = cases();
    assert!(all.len() >= 30, "only {} cases", all.len());
    let known: Vec<&str> = RULES.iter().map(|(r, _)| *r).collect();
    let mut failures = Vec::new();
    for c in &all {
        let forward = compare(&c.old, &c.new);
        let (input, output) = (
            forward.is_breaking(Role::Input),
            forward.is_breaking(Role::Output),
        );
        let record = forward.is_breaking(Role::Record);
        if (input, output) != c.verdict.expected() || record != output {
            failures.push(format!(
                "{}: expected {:?} (input breaking, output breaking) = {:?}, got ({input}, {output}); changes: {:#?}",
                c.name,
                c.verdict,
                c.verdict.expected(),
                forward.changes
            ));
        }
        match c.rule {
            None => {
                let effective: Vec<_> = forward
                    .changes
                    .iter()
                    .filter(|ch| ch.direction != Direction::None)
                    .collect();
                if !effective.is_empty() {
                    failures.push(format!(
                        "{}: expected no effective change, got {effective:#?}",
                        c.name
                    ));
                }
            }
            Some(rule) => {
                if !forward.changes.iter().any(|ch| ch.rule == rule) {
                    failures.push(format!(
                        "{}: expected rule {rule}, got {:#?}",
                        c.name, forward.changes
                    ));
                }
            }
        }
        for ch in &forward.changes {
            assert!(
                known.contains(&ch.rule),
                "{}: unlisted rule {}",
                c.name,
                ch.rule
            );
            assert!(!ch.why.is_empty());
        }
        // Backwards, widening and narrowing trade places.
        let backward = compare(&c.new, &c.old);
        if backward.is_breaking(Role::Input) != output
            || backward.is_breaking(Role::Output) != input
        {
            failures.push(format!(
                "{}: reversed comparison is not the mirror image: {:#?}",
                c.name, backward.changes
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn changes_point_into_both_schemas() {
    let old = base();
    let new = with(|v| at(v, "")["required"] = json!(["id", "count", "state"]));
    let c = compare(&old, &new);
    assert_eq!(c.changes.len(), 1, "{:#?}", c.changes);
    let ch = &c.changes[0];
    assert_eq!(ch.rule, "required-added");
    assert_eq!(ch.direction, Direction::Narrowing);
    assert_eq!(ch.old_pointer, "/required");
    assert_eq!(ch.new_pointer, "/required/2");
    assert!(ch.why.contains("\"state\""), "{}", ch.why);

    let new = with(|v| at(v, "/$defs/hop/properties/ttl")["minimum"] = json!(0));
    let c = compare(&old, &new);
    assert_eq!(
        c.changes[0].old_pointer,
        "/$defs/hop/properties/ttl/minimum"
    );
    assert_eq!(
        c.changes[0].new_pointer,
        "/$defs/hop/properties/ttl/minimum"
    );
}

#[test]
fn the_example_skills_compound_schema_follows_embedded_resources() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/example-skills/skills/trace_network_path/schemas/input.json"
    );
    let old: Value = skillbundle::wire::json::parse(&std::fs::read(path).unwrap()).unwrap();
    assert!(compare(&old, &old).changes.is_empty());
    // The endpoint resource (reached by its absolute $id) gains a required member.
    let mut new = old.clone();
    new["$defs"]["endpoint"]["required"] = json!(["vrf"]);
    let c = compare(&old, &new);
    assert!(c.is_breaking(Role::Input));
    assert!(c
        .changes
        .iter()
        .any(|ch| ch.rule == "required-added" && ch.new_pointer == "/$defs/endpoint/required/0"));
    // device_name is reached through a relative ref inside the embedded resource.
    let mut new = old.clone();
    new["$defs"]["endpoint"]["$defs"]["device_name"]["maxLength"] = json!(63);
    let c = compare(&old, &new);
    assert!(
        c.changes.iter().any(|ch| ch.rule == "max-length-tightened"
            && ch.new_pointer == "/$defs/endpoint/$defs/device_name/maxLength"),
        "{:#?}",
        c.changes
    );
}

#[test]
fn hostile_sizes_finish() {
    let many = |n: usize, f: &dyn Fn(usize) -> Value| -> Vec<Value> { (0..n).map(f).collect() };
    // Huge enums, anyOf/oneOf lists, property maps and required lists.
    let old = json!({
        "enum": many(40_000, &|i| json!(i)),
        "anyOf": many(20_000, &|i| json!({"const": i})),
        "oneOf": many(5_000, &|i| json!({"const": format!("v{i}")})),
        "properties": Value::Object(many(20_000, &|i| json!(i)).into_iter().map(|i| (format!("p{i}"), json!({"type": "integer"}))).collect()),
        "required": many(20_000, &|i| json!(format!("p{i}"))),
    });
    let mut new = old.clone();
    new["enum"].as_array_mut().unwrap().push(json!("extra"));
    new["anyOf"]
        .as_array_mut()
        .unwrap()
        .insert(0, json!({"const": -1}));
    new["required"].as_array_mut().unwrap().reverse();
    let c = compare(&old, &new);
    // The comparison finishing at all is the point (no quadratic blow-up that never
    // ends); how fast it is belongs in bench/, not in a test.
    assert!(c.is_breaking(Role::Output));
}
