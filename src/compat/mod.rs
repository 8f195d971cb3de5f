//! Breaking-change detection between two versions of a JSON Schema (draft 2020-12).
//!
//! The draft asks publishers to bump MAJOR for a change "that is not backward compatible
//! with consumers of the prior version". What a consumer relies on depends on the role:
//!
//! - an **input** schema is what a caller's instances are checked against, so the new
//!   version must accept every instance the old one accepted (it may only *widen*);
//! - an **output** or **record** schema describes what the skill produces, so the new
//!   version must accept nothing the old one rejected (it may only *narrow*).
//!
//! The comparison therefore asks one question of every pair of corresponding subschemas:
//! how did the *set of instances it accepts* move? Each rule answers with a
//! [`Direction`] in a small lattice — `none` (same set), `widening` (may accept more),
//! `narrowing` (may accept less), `both` — plus `undecided` for anything the rules
//! cannot settle, which every role treats as breaking. A schema object is the
//! conjunction of its keywords, and most keywords constrain independently, so if every
//! keyword's constraint widened (or stayed), the whole subschema widened: findings are
//! collected per keyword and their join is the verdict. Keywords whose meaning depends on
//! their neighbours are compared as a group (`properties` with `additionalProperties`,
//! `prefixItems` with `items`, `contains` with `min/maxContains`, `if` with
//! `then`/`else`); the non-monotone ones (`not` flips the direction, a changed `if`,
//! `oneOf` whose branches may overlap, `unevaluated*` next to in-place applicators,
//! `pattern` and unrelated `format`s, `$dynamicRef`) are `undecided` unless a rule can
//! prove more. Unknown keywords and annotations never change the accepted set; their
//! changes are reported with direction `none`.
//!
//! Every rule errs on the side of "breaking": a verdict of "compatible" means the rules
//! proved it, never that they gave up. Internal `$ref`s (JSON Pointer fragments,
//! `$anchor`s, embedded resources with an absolute `$id`) are followed; a pair of
//! locations already under comparison is assumed equal when met again (the standard
//! co-inductive treatment of recursive schemas), which also makes cycles terminate.
//! Depth and visit limits bound the work on hostile input; hitting one is `undecided`.

use crate::workspace::Role;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;

mod patterns;
mod subsume;

/// How a change moves the set of instances a (sub)schema accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The accepted set is unchanged (annotations, equivalent rewrites).
    None,
    /// The new schema may accept instances the old one rejected.
    Widening,
    /// The new schema may reject instances the old one accepted.
    Narrowing,
    /// Both: some instances gained, others lost.
    Both,
    /// The rules cannot tell; treated as breaking in every role.
    Undecided,
}

impl Direction {
    /// Whether the new schema may accept something the old one rejected.
    pub fn may_widen(self) -> bool {
        matches!(
            self,
            Direction::Widening | Direction::Both | Direction::Undecided
        )
    }

    /// Whether the new schema may reject something the old one accepted.
    pub fn may_narrow(self) -> bool {
        matches!(
            self,
            Direction::Narrowing | Direction::Both | Direction::Undecided
        )
    }

    /// The direction seen through a `not`.
    pub fn flip(self) -> Direction {
        match self {
            Direction::Widening => Direction::Narrowing,
            Direction::Narrowing => Direction::Widening,
            d => d,
        }
    }

    /// The least upper bound in the lattice none < widening, narrowing < both < undecided.
    pub fn join(self, other: Direction) -> Direction {
        use Direction::*;
        match (self, other) {
            (Undecided, _) | (_, Undecided) => Undecided,
            (None, d) | (d, None) => d,
            (a, b) if a == b => a,
            _ => Both,
        }
    }

    /// Whether a change in this direction breaks consumers of a schema in `role`.
    pub fn breaks(self, role: Role) -> bool {
        match role {
            Role::Input => self.may_narrow(),
            Role::Output | Role::Record => self.may_widen(),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Direction::None => "none",
            Direction::Widening => "widening",
            Direction::Narrowing => "narrowing",
            Direction::Both => "both",
            Direction::Undecided => "undecided",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every rule id a [`Change`] can carry, with what it means. The ids are a stable
/// contract (CI scripts may match on them).
pub const RULES: &[(&str, &str)] = &[
    ("type-added", "a type is accepted that was not"),
    ("type-removed", "a type that was accepted no longer is"),
    ("enum-value-added", "an enum/const value was added"),
    ("enum-value-removed", "an enum/const value was removed"),
    ("enum-added", "the value is now restricted to an enum/const"),
    ("enum-removed", "an enum/const restriction was dropped"),
    ("minimum-tightened", "minimum/exclusiveMinimum raised or added"),
    ("minimum-loosened", "minimum/exclusiveMinimum lowered or removed"),
    ("maximum-tightened", "maximum/exclusiveMaximum lowered or added"),
    ("maximum-loosened", "maximum/exclusiveMaximum raised or removed"),
    ("multiple-of-tightened", "multipleOf added or made stricter"),
    ("multiple-of-loosened", "multipleOf removed or relaxed"),
    ("multiple-of-changed", "multipleOf changed to an unrelated value"),
    ("min-length-tightened", "minLength raised"),
    ("min-length-loosened", "minLength lowered"),
    ("max-length-tightened", "maxLength lowered or added"),
    ("max-length-loosened", "maxLength raised or removed"),
    ("pattern-added", "a pattern now constrains the string"),
    ("pattern-removed", "a pattern no longer constrains the string"),
    ("pattern-changed", "the pattern changed (regular-language inclusion is not decided)"),
    ("format-added", "a format is now asserted"),
    ("format-removed", "a format is no longer asserted"),
    ("format-widened", "the format changed to one that accepts a superset"),
    ("format-narrowed", "the format changed to one that accepts a subset"),
    ("format-changed", "the format changed to an unrelated one"),
    ("min-items-tightened", "minItems raised"),
    ("min-items-loosened", "minItems lowered"),
    ("max-items-tightened", "maxItems lowered or added"),
    ("max-items-loosened", "maxItems raised or removed"),
    ("unique-items-added", "items must now be unique"),
    ("unique-items-removed", "items need no longer be unique"),
    ("prefix-item-added", "a prefixItems position was added"),
    ("prefix-item-removed", "a prefixItems position was removed"),
    ("contains-added", "the array must now contain a matching item"),
    ("contains-removed", "the contains requirement was dropped"),
    ("contains-changed", "contains changed next to maxContains (not monotone)"),
    ("min-contains-tightened", "minContains raised"),
    ("min-contains-loosened", "minContains lowered"),
    ("max-contains-tightened", "maxContains lowered or added"),
    ("max-contains-loosened", "maxContains raised or removed"),
    ("property-added", "a property is declared that was not"),
    ("property-removed", "a declared property was removed"),
    ("pattern-property-added", "a patternProperties entry was added"),
    ("pattern-property-removed", "a patternProperties entry was removed"),
    ("additional-properties-undecided", "properties changed where patternProperties or unevaluatedProperties next to applicators decide what else is allowed"),
    ("required-added", "a property is now required"),
    ("required-removed", "a property is no longer required"),
    ("min-properties-tightened", "minProperties raised"),
    ("min-properties-loosened", "minProperties lowered"),
    ("max-properties-tightened", "maxProperties lowered or added"),
    ("max-properties-loosened", "maxProperties raised or removed"),
    ("dependent-required-added", "a dependentRequired requirement was added"),
    ("dependent-required-removed", "a dependentRequired requirement was removed"),
    ("dependent-schema-added", "a dependentSchemas entry was added"),
    ("dependent-schema-removed", "a dependentSchemas entry was removed"),
    ("items-undecided", "items changed where unevaluatedItems next to applicators decides what else is allowed"),
    ("all-of-branch-added", "an allOf branch was added"),
    ("all-of-branch-removed", "an allOf branch was removed"),
    ("any-of-added", "an anyOf now restricts the value"),
    ("any-of-removed", "an anyOf restriction was dropped"),
    ("any-of-branch-added", "an anyOf branch was added"),
    ("any-of-branch-removed", "an anyOf branch was removed"),
    ("one-of-added", "a oneOf (with disjoint branches) now restricts the value"),
    ("one-of-removed", "a oneOf (with disjoint branches) restriction was dropped"),
    ("one-of-branch-added", "a branch was added to a oneOf whose branches are disjoint"),
    ("one-of-branch-removed", "a branch was removed from a oneOf whose branches are disjoint"),
    ("one-of-changed", "a oneOf whose branches may overlap changed (not monotone)"),
    ("not-added", "a `not` now excludes values"),
    ("not-removed", "a `not` exclusion was dropped"),
    ("if-changed", "an `if` condition changed (not monotone)"),
    ("conditional-added", "an if/then/else was added"),
    ("conditional-removed", "an if/then/else was removed"),
    ("ref-added", "a `$ref` now constrains the value"),
    ("ref-removed", "a `$ref` no longer constrains the value"),
    ("ref-unresolved", "a `$ref` could not be followed inside the schema"),
    ("ref-cycle", "a chain of `$ref`s never reaches a schema"),
    ("dynamic-ref", "a `$dynamicRef` is involved (dynamic scope not analysed)"),
    ("unevaluated-with-applicators", "unevaluatedProperties/unevaluatedItems next to in-place applicators, and something below changed"),
    ("became-false", "the subschema now rejects everything"),
    ("no-longer-false", "the subschema rejected everything and now accepts something"),
    ("dialect-changed", "`$schema` changed"),
    ("keyword-unreadable", "a keyword's value is malformed, so its meaning is unknown"),
    ("limit-exceeded", "the comparison hit its depth or visit limit"),
    ("annotation-changed", "an annotation or unknown keyword changed (no effect on validation)"),
];

/// One difference between the old and the new schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Stable kebab-case rule id (see [`RULES`]).
    pub rule: &'static str,
    /// How the accepted set moved.
    pub direction: Direction,
    /// Where in the old schema (the enclosing subschema when the keyword is absent).
    pub old_pointer: String,
    /// Where in the new schema (the enclosing subschema when the keyword is absent).
    pub new_pointer: String,
    /// Why, in words.
    pub why: String,
}

impl Change {
    /// Whether this change breaks consumers of a schema in `role`.
    pub fn breaks(&self, role: Role) -> bool {
        self.direction.breaks(role)
    }
}

/// Every change found between two schemas.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Comparison {
    pub changes: Vec<Change>,
}

impl Comparison {
    /// The join of every change's direction.
    pub fn direction(&self) -> Direction {
        self.changes
            .iter()
            .fold(Direction::None, |d, c| d.join(c.direction))
    }

    /// Whether any change breaks consumers of a schema in `role`.
    pub fn is_breaking(&self, role: Role) -> bool {
        self.changes.iter().any(|c| c.breaks(role))
    }

    /// The changes that break consumers of a schema in `role`.
    pub fn breaking(&self, role: Role) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(move |c| c.breaks(role))
    }
}

/// Bounds on the work one comparison may do.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Nesting of subschema comparisons (refs included).
    pub max_depth: usize,
    /// Subschema pairs compared in total.
    pub max_visits: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 128,
            max_visits: 50_000,
        }
    }
}

/// Compare two schemas with the default limits.
pub fn compare(old: &Value, new: &Value) -> Comparison {
    compare_with_limits(old, new, Limits::default())
}

/// Compare two schemas: every change, each with its direction.
pub fn compare_with_limits(old: &Value, new: &Value, limits: Limits) -> Comparison {
    let mut cx = Cx {
        old: Doc::new(old),
        new: Doc::new(new),
        changes: Vec::new(),
        seen: HashSet::new(),
        visits: 0,
        limits,
        limit_hit: false,
        disjoint_budget: std::cell::Cell::new(20_000),
        subsume_budget: subsume::BUDGET,
        patterns: patterns::Patterns::default(),
    };
    let (old_dialect, new_dialect) = (old.get("$schema"), new.get("$schema"));
    if old_dialect
        .zip(new_dialect)
        .is_none_or(|(a, b)| !json_eq(a, b))
        && (old_dialect.is_some() || new_dialect.is_some())
    {
        let at = |v: &Value| {
            if v.get("$schema").is_some() {
                "/$schema"
            } else {
                ""
            }
        };
        cx.emit(
            true,
            "dialect-changed",
            Direction::Undecided,
            at(old),
            at(new),
            format!(
                "$schema changed from {} to {}",
                old_dialect.map_or("none".into(), short),
                new_dialect.map_or("none".into(), short)
            ),
        );
    }
    cx.cmp(&At::root(old), &At::root(new), true, 0);
    // One change per (rule, pointers, why): a location reached along two paths is
    // reported once.
    let mut unique = HashSet::new();
    cx.changes.retain(|c| {
        unique.insert((
            c.rule,
            c.old_pointer.clone(),
            c.new_pointer.clone(),
            c.why.clone(),
        ))
    });
    Comparison {
        changes: cx.changes,
    }
}

// ---------------------------------------------------------------------------------------
// Keyword vocabulary.

/// Keywords that constrain instances (and that this module has rules for).
const ASSERTIONS: &[&str] = &[
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "prefixItems",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "required",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$dynamicRef",
];

/// Keywords that never constrain instances by themselves and whose changes are not
/// reported (references reach `$defs` content at its own pointers).
const SILENT: &[&str] = &["$defs", "definitions"];

/// In-place applicators: what they evaluate counts for `unevaluated*` of their parent.
const IN_PLACE: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$dynamicRef",
    "dependentSchemas",
];

fn is_assertion(k: &str) -> bool {
    ASSERTIONS.contains(&k)
}

static TRUE: Value = Value::Bool(true);
static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

/// A subschema and where it is.
#[derive(Debug, Clone)]
struct At<'a> {
    v: &'a Value,
    ptr: String,
}

impl<'a> At<'a> {
    fn root(v: &'a Value) -> Self {
        At {
            v,
            ptr: String::new(),
        }
    }

    /// The member `key` of this object, if present.
    fn get(&self, key: &str) -> Option<At<'a>> {
        self.v.get(key).map(|v| At {
            v,
            ptr: crate::pointer::child(&self.ptr, key),
        })
    }

    /// The member `key`, or `true` located at this subschema when absent.
    fn get_or_true(&self, key: &str) -> At<'a> {
        self.get(key).unwrap_or(At {
            v: &TRUE,
            ptr: self.ptr.clone(),
        })
    }

    fn index(&self, i: usize) -> Option<At<'a>> {
        self.v.get(i).map(|v| At {
            v,
            ptr: format!("{}/{i}", self.ptr),
        })
    }

    fn map(&self) -> &'a Map<String, Value> {
        match self.v {
            Value::Object(m) => m,
            _ => &EMPTY,
        }
    }

    fn is_false(&self) -> bool {
        self.v == &Value::Bool(false)
    }
}

/// A schema is trivially `true` when it is `true` or has no assertion keyword.
fn trivially_true(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Object(m) => !m.keys().any(|k| is_assertion(k)),
        _ => false,
    }
}

/// JSON equality with numbers compared by value (1 == 1.0), as JSON Schema does.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(59).collect::<String>())
    } else {
        s
    }
}

// ---------------------------------------------------------------------------------------
// Types.

const T_NULL: u8 = 1;
const T_BOOL: u8 = 2;
const T_OBJECT: u8 = 4;
const T_ARRAY: u8 = 8;
const T_STRING: u8 = 16;
const T_INTEGER: u8 = 32;
const T_FRACTION: u8 = 64;
const T_ALL: u8 = 127;

fn type_bits(name: &str) -> Option<u8> {
    Some(match name {
        "null" => T_NULL,
        "boolean" => T_BOOL,
        "object" => T_OBJECT,
        "array" => T_ARRAY,
        "string" => T_STRING,
        "integer" => T_INTEGER,
        "number" => T_INTEGER | T_FRACTION,
        _ => return None,
    })
}

fn type_names(bits: u8) -> String {
    let mut names = Vec::new();
    for (bit, name) in [
        (T_NULL, "null"),
        (T_BOOL, "boolean"),
        (T_OBJECT, "object"),
        (T_ARRAY, "array"),
        (T_STRING, "string"),
    ] {
        if bits & bit != 0 {
            names.push(name);
        }
    }
    match (bits & T_INTEGER != 0, bits & T_FRACTION != 0) {
        (true, true) => names.push("number"),
        (true, false) => names.push("integer"),
        (false, true) => names.push("non-integer number"),
        _ => {}
    }
    names.join(", ")
}

fn value_bits(v: &Value) -> u8 {
    match v {
        Value::Null => T_NULL,
        Value::Bool(_) => T_BOOL,
        Value::Object(_) => T_OBJECT,
        Value::Array(_) => T_ARRAY,
        Value::String(_) => T_STRING,
        Value::Number(n) => {
            if n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                T_INTEGER
            } else {
                T_FRACTION
            }
        }
    }
}

/// The types a schema object allows: `Ok(None)` when unconstrained, `Err` when the
/// keyword is malformed.
fn types_of(m: &Map<String, Value>) -> Result<Option<u8>, ()> {
    match m.get("type") {
        None => Ok(None),
        Some(Value::String(s)) => type_bits(s).map(Some).ok_or(()),
        Some(Value::Array(items)) => {
            let mut bits = 0;
            for item in items {
                bits |= item.as_str().and_then(type_bits).ok_or(())?;
            }
            Ok(Some(bits))
        }
        Some(_) => Err(()),
    }
}

/// The values a schema object allows by enum/const: `Ok(None)` when unconstrained.
fn values_of(m: &Map<String, Value>) -> Result<Option<Vec<Value>>, ()> {
    let from_enum = match m.get("enum") {
        None => None,
        Some(Value::Array(items)) => Some(items.clone()),
        Some(_) => return Err(()),
    };
    Ok(match (m.get("const"), from_enum) {
        (None, e) => e,
        (Some(c), None) => Some(vec![c.clone()]),
        (Some(c), Some(e)) => Some(e.into_iter().filter(|v| json_eq(v, c)).collect()),
    })
}

// ---------------------------------------------------------------------------------------
// References: an index of the resources and anchors of one schema document.

/// Base URI for a document without an absolute `$id` at its root.
const DEFAULT_BASE: &str = "https://skillbundle.invalid/schema";

struct Doc<'a> {
    root: &'a Value,
    /// Absolute resource URI (no fragment) → pointer of the resource root.
    resources: HashMap<String, String>,
    /// (resource URI, anchor name) → pointer; `$dynamicAnchor`s included.
    anchors: HashMap<(String, String), String>,
    /// Pointer of a schema object → its base URI.
    bases: HashMap<String, String>,
    /// Every subschema declaring `$dynamicAnchor`: (pointer, JSON), for the dynamic-ref rule.
    dynamic: Vec<(String, String)>,
}

/// Keywords whose value is one subschema.
const SUB_ONE: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "contentSchema",
];
/// Keywords whose value maps names to subschemas.
const SUB_MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is an array of subschemas.
const SUB_ARRAY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

impl<'a> Doc<'a> {
    fn new(root: &'a Value) -> Self {
        let mut doc = Doc {
            root,
            resources: HashMap::new(),
            anchors: HashMap::new(),
            bases: HashMap::new(),
            dynamic: Vec::new(),
        };
        doc.resources
            .insert(DEFAULT_BASE.to_string(), String::new());
        // An explicit stack, so a hostile nesting depth cannot overflow ours.
        let mut stack: Vec<(&Value, String, String)> =
            vec![(root, String::new(), DEFAULT_BASE.to_string())];
        let mut budget = 200_000usize;
        while let Some((v, ptr, base)) = stack.pop() {
            budget = match budget.checked_sub(1) {
                Some(b) => b,
                None => break,
            };
            let Value::Object(m) = v else { continue };
            let mut base = base;
            if let Some(id) = m.get("$id").and_then(Value::as_str) {
                if let Some(abs) = resolve_uri(&base, id) {
                    base = strip_fragment(&abs).to_string();
                    doc.resources.insert(base.clone(), ptr.clone());
                }
            }
            for key in ["$anchor", "$dynamicAnchor"] {
                if let Some(a) = m.get(key).and_then(Value::as_str) {
                    doc.anchors
                        .entry((base.clone(), a.to_string()))
                        .or_insert_with(|| ptr.clone());
                }
            }
            if m.contains_key("$dynamicAnchor") {
                doc.dynamic.push((ptr.clone(), v.to_string()));
            }
            doc.bases.insert(ptr.clone(), base.clone());
            for (k, sub) in m {
                let here = crate::pointer::child(&ptr, k);
                if SUB_ONE.contains(&k.as_str()) {
                    stack.push((sub, here, base.clone()));
                } else if SUB_MAP.contains(&k.as_str()) {
                    if let Value::Object(entries) = sub {
                        for (name, s) in entries {
                            stack.push((s, crate::pointer::child(&here, name), base.clone()));
                        }
                    }
                } else if SUB_ARRAY.contains(&k.as_str()) {
                    if let Value::Array(items) = sub {
                        for (i, s) in items.iter().enumerate() {
                            stack.push((s, format!("{here}/{i}"), base.clone()));
                        }
                    }
                }
            }
        }
        doc.dynamic.sort();
        doc
    }

    /// The base URI in effect at `ptr` (the nearest enclosing indexed schema's).
    fn base_at(&self, ptr: &str) -> &str {
        let mut p = ptr;
        loop {
            if let Some(b) = self.bases.get(p) {
                return b;
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return DEFAULT_BASE,
            }
        }
    }

    /// Resolve a `$ref` value found in the schema object at `from`.
    fn resolve(&self, from: &str, reference: &str) -> Option<At<'a>> {
        let base = self.base_at(from);
        let absolute = resolve_uri(base, reference)?;
        let (resource, fragment) = match absolute.split_once('#') {
            Some((r, f)) => (r.to_string(), crate::pointer::percent_decode(f)?),
            None => (absolute.clone(), String::new()),
        };
        let resource_ptr = self.resources.get(&resource)?;
        let ptr = if fragment.is_empty() {
            resource_ptr.clone()
        } else if fragment.starts_with('/') {
            format!("{resource_ptr}{fragment}")
        } else {
            self.anchors.get(&(resource, fragment))?.clone()
        };
        let v = self.root.pointer(&ptr)?;
        Some(At { v, ptr })
    }
}

fn strip_fragment(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(r, _)| r)
}

fn has_scheme(s: &str) -> bool {
    let Some(colon) = s.find(':') else {
        return false;
    };
    let scheme = &s[..colon];
    !scheme.is_empty()
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// RFC 3986 reference resolution, enough for schema identifiers: absolute references,
/// fragments, and relative paths against hierarchical (`scheme://authority/path`) bases.
fn resolve_uri(base: &str, reference: &str) -> Option<String> {
    if has_scheme(reference) {
        return Some(reference.to_string());
    }
    let base = strip_fragment(base);
    if reference.is_empty() {
        return Some(base.to_string());
    }
    if reference.starts_with('#') {
        return Some(format!("{base}{reference}"));
    }
    let (scheme, rest) = base.split_once("://")?;
    if let Some(r) = reference.strip_prefix("//") {
        return Some(format!("{scheme}://{r}"));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let (ref_path, suffix) = match reference.find(['?', '#']) {
        Some(i) => (&reference[..i], &reference[i..]),
        None => (reference, ""),
    };
    let merged = if ref_path.is_empty() {
        path.to_string()
    } else if ref_path.starts_with('/') {
        ref_path.to_string()
    } else {
        let dir = path.rfind('/').map_or("/", |i| &path[..=i]);
        format!("{dir}{ref_path}")
    };
    Some(format!(
        "{scheme}://{authority}{}{suffix}",
        remove_dot_segments(&merged)
    ))
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {
                if i == segments.len() - 1 {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if i == segments.len() - 1 {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if joined.starts_with('/') || joined.is_empty() {
        joined
    } else {
        format!("/{joined}")
    }
}

// ---------------------------------------------------------------------------------------
// The comparison.

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Old,
    New,
}

struct Cx<'a> {
    old: Doc<'a>,
    new: Doc<'a>,
    changes: Vec<Change>,
    /// Reference hops already taken (or being taken), per polarity: where each side
    /// stood before following its `$ref`, where it landed, and whether a side is a
    /// synthetic `true` (an absent keyword).
    seen: HashSet<SeenKey>,
    visits: usize,
    limits: Limits,
    limit_hit: bool,
    /// Steps left for the disjointness test of oneOf branches (it recurses).
    disjoint_budget: std::cell::Cell<usize>,
    /// Steps left for the subsumption procedure ([`subsume`]).
    subsume_budget: usize,
    /// Property names tested against `patternProperties` patterns.
    patterns: patterns::Patterns,
}

type SeenKey = (String, String, String, String, bool, bool, bool);

/// A residual schema: what applies to members/items no other keyword covers.
enum Residual<'a> {
    Known(At<'a>),
    /// Decided by patternProperties or by unevaluated* next to applicators.
    Unknown,
}

impl<'a> Cx<'a> {
    fn doc(&self, side: Side) -> &Doc<'a> {
        match side {
            Side::Old => &self.old,
            Side::New => &self.new,
        }
    }

    fn emit(
        &mut self,
        pol: bool,
        rule: &'static str,
        direction: Direction,
        o: &str,
        n: &str,
        why: String,
    ) {
        debug_assert!(
            RULES.iter().any(|(r, _)| *r == rule),
            "unlisted rule {rule}"
        );
        self.changes.push(Change {
            rule,
            direction: if pol { direction } else { direction.flip() },
            old_pointer: o.to_string(),
            new_pointer: n.to_string(),
            why,
        });
    }

    /// Follow `$ref`s of objects that are nothing but a reference (plus annotations).
    fn deref(&self, side: Side, at: &At<'a>) -> Result<At<'a>, &'static str> {
        let doc = self.doc(side);
        let mut at = at.clone();
        for _ in 0..64 {
            let Value::Object(m) = at.v else {
                return Ok(at);
            };
            let Some(r) = m.get("$ref") else {
                return Ok(at);
            };
            if m.keys().any(|k| k != "$ref" && is_assertion(k)) {
                return Ok(at);
            }
            let Some(r) = r.as_str() else {
                return Err("ref-unresolved");
            };
            at = doc.resolve(&at.ptr, r).ok_or("ref-unresolved")?;
        }
        Err("ref-cycle")
    }

    /// Compare `n` (new) against `o` (old). `pol` is false under an odd number of `not`s.
    fn cmp(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize) {
        self.cmp_inner(o, n, pol, depth, false);
    }

    /// [`Self::cmp`]; with `bare`, the in-place applicators of this pair (`allOf`,
    /// `anyOf`, `oneOf`, `$ref`) are left out: the subsumption procedure
    /// ([`subsume`]) compares them as conjuncts and unions of their own.
    fn cmp_inner(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize, bare: bool) {
        let (o_before, n_before) = (o, n);
        if self.limit_hit {
            return;
        }
        self.visits += 1;
        if depth > self.limits.max_depth || self.visits > self.limits.max_visits {
            self.limit_hit = true;
            self.emit(
                pol,
                "limit-exceeded",
                Direction::Undecided,
                &o.ptr,
                &n.ptr,
                "the schemas are too deep or too large to compare within the limits".into(),
            );
            return;
        }
        let (o, n) = match (self.deref(Side::Old, o), self.deref(Side::New, n)) {
            (Ok(o), Ok(n)) => (o, n),
            // Two `$ref` loops that never reach a schema mean the same (nothing usable).
            (Err("ref-cycle"), Err("ref-cycle")) => return,
            (Err(rule), _) | (_, Err(rule)) => {
                self.emit(
                    pol,
                    rule,
                    Direction::Undecided,
                    &o.ptr,
                    &n.ptr,
                    format!(
                        "a $ref here cannot be followed inside the schema (old {}, new {})",
                        short(o.v),
                        short(n.v)
                    ),
                );
                return;
            }
        };
        let followed = !std::ptr::eq(o.v, o_before.v) || !std::ptr::eq(n.v, n_before.v);
        if followed && !self.first_visit(o_before, n_before, &o, &n, pol) {
            return;
        }
        // Booleans and malformed subschemas.
        let o_obj = matches!(o.v, Value::Object(_)) || o.v == &TRUE;
        let n_obj = matches!(n.v, Value::Object(_)) || n.v == &TRUE;
        if !(o_obj || o.is_false()) || !(n_obj || n.is_false()) {
            if !json_eq(o.v, n.v) {
                self.emit(
                    pol,
                    "keyword-unreadable",
                    Direction::Undecided,
                    &o.ptr,
                    &n.ptr,
                    "a subschema is neither an object nor a boolean".into(),
                );
            }
            return;
        }
        if o.v == &TRUE && n.v == &TRUE {
            return;
        }
        match (o.is_false(), n.is_false()) {
            (true, true) => return,
            (true, false) => {
                if !self.is_unsatisfiable(&n) {
                    self.emit(
                        pol,
                        "no-longer-false",
                        Direction::Widening,
                        &o.ptr,
                        &n.ptr,
                        "the old schema rejected every value here; the new one accepts some".into(),
                    );
                }
                return;
            }
            (false, true) => {
                if !self.is_unsatisfiable(&o) {
                    self.emit(
                        pol,
                        "became-false",
                        Direction::Narrowing,
                        &o.ptr,
                        &n.ptr,
                        "the new schema rejects every value here (false)".into(),
                    );
                }
                return;
            }
            (false, false) => {}
        }
        let (om, nm) = (o.map(), n.map());
        let uneval = |m: &Map<String, Value>| {
            m.contains_key("unevaluatedProperties") || m.contains_key("unevaluatedItems")
        };
        let in_place = |m: &Map<String, Value>| IN_PLACE.iter().any(|k| m.contains_key(*k));
        let watch_unevaluated = (uneval(om) || uneval(nm)) && (in_place(om) || in_place(nm));
        let start = self.changes.len();

        self.cmp_type(&o, &n, pol);
        self.cmp_numbers(&o, &n, pol);
        self.cmp_strings(&o, &n, pol);
        self.cmp_arrays(&o, &n, pol, depth);
        self.cmp_objects(&o, &n, pol, depth);
        self.cmp_composition(&o, &n, pol, depth, bare);
        self.cmp_refs(&o, &n, pol, depth, bare);
        self.cmp_other(&o, &n, pol);

        if watch_unevaluated
            && self.changes[start..]
                .iter()
                .any(|c| c.direction != Direction::None)
        {
            self.emit(
                pol,
                "unevaluated-with-applicators",
                Direction::Undecided,
                &o.ptr,
                &n.ptr,
                "unevaluatedProperties/unevaluatedItems depend on what the in-place applicators here evaluate, and those changed; the effect on the accepted set is not decided".into(),
            );
        }
        if !bare {
            self.settle_by_subsumption(&o, &n, pol, depth, start);
        }
    }

    /// Record a reference hop; false when the same hop is already being (or was)
    /// compared, which is assumed to hold (co-induction), so cycles terminate.
    fn first_visit(&mut self, ob: &At<'a>, nb: &At<'a>, o: &At<'a>, n: &At<'a>, pol: bool) -> bool {
        self.seen.insert((
            ob.ptr.clone(),
            nb.ptr.clone(),
            o.ptr.clone(),
            n.ptr.clone(),
            std::ptr::eq(ob.v, &TRUE),
            std::ptr::eq(nb.v, &TRUE),
            pol,
        ))
    }

    /// Run a comparison and report it as one change named `rule` whose direction is the
    /// join of everything found (nothing is reported when nothing changed).
    #[allow(clippy::too_many_arguments)]
    fn summarize(
        &mut self,
        rule: &'static str,
        o: &At<'a>,
        n: &At<'a>,
        pol: bool,
        depth: usize,
        report: (&str, &str),
        why: String,
    ) {
        let start = self.changes.len();
        self.cmp(o, n, pol, depth + 1);
        let subs: Vec<Change> = self.changes.drain(start..).collect();
        if subs.is_empty() {
            return;
        }
        let direction = subs
            .iter()
            .fold(Direction::None, |d, c| d.join(c.direction));
        let mut rules: Vec<&str> = subs
            .iter()
            .map(|c| c.rule)
            .filter(|r| !matches!(*r, "no-longer-false" | "became-false"))
            .collect();
        rules.sort_unstable();
        rules.dedup();
        let why = if rules.is_empty() {
            why
        } else {
            format!(
                "{why} (by rule{} {})",
                if rules.len() == 1 { "" } else { "s" },
                rules.join(", ")
            )
        };
        self.changes.push(Change {
            rule,
            direction,
            old_pointer: report.0.to_string(),
            new_pointer: report.1.to_string(),
            why,
        });
    }

    /// A cheap, sound test for "accepts nothing": false, an empty enum, or no type at all.
    fn is_unsatisfiable(&self, at: &At<'a>) -> bool {
        match at.v {
            Value::Bool(b) => !b,
            Value::Object(m) => {
                matches!(values_of(m), Ok(Some(ref v)) if v.is_empty())
                    || matches!(types_of(m), Ok(Some(0)))
            }
            _ => false,
        }
    }

    fn unreadable(&mut self, pol: bool, o: &At<'a>, n: &At<'a>, keyword: &str) {
        self.emit(
            pol,
            "keyword-unreadable",
            Direction::Undecided,
            &o.get(keyword).map_or(o.ptr.clone(), |a| a.ptr),
            &n.get(keyword).map_or(n.ptr.clone(), |a| a.ptr),
            format!("`{keyword}` has a malformed value, so its meaning is unknown"),
        );
    }

    fn ptr_of(at: &At<'a>, keys: &[&str]) -> String {
        keys.iter()
            .find_map(|k| at.get(k))
            .map_or(at.ptr.clone(), |a| a.ptr)
    }

    // -- type --------------------------------------------------------------------------

    /// `type` and `enum`/`const` constrain together: the accepted values are those of
    /// the enum whose type is allowed. Both are compared on that effective set.
    fn cmp_type(&mut self, o: &At<'a>, n: &At<'a>, pol: bool) {
        let (to, tn) = match (types_of(o.map()), types_of(n.map())) {
            (Ok(a), Ok(b)) => (a.unwrap_or(T_ALL), b.unwrap_or(T_ALL)),
            _ => {
                if !json_eq(
                    o.v.get("type").unwrap_or(&TRUE),
                    n.v.get("type").unwrap_or(&TRUE),
                ) {
                    self.unreadable(pol, o, n, "type");
                }
                return;
            }
        };
        let (vo, vn) = match (values_of(o.map()), values_of(n.map())) {
            (Ok(a), Ok(b)) => (a, b),
            _ => {
                self.unreadable(pol, o, n, "enum");
                return;
            }
        };
        let filter = |values: Option<Vec<Value>>, types: u8| {
            values.map(|vs| {
                vs.into_iter()
                    .filter(|v| value_bits(v) & types != 0)
                    .collect::<Vec<_>>()
            })
        };
        let (vo, vn) = (filter(vo, to), filter(vn, tn));
        self.cmp_values(o, n, pol, vo.clone(), vn.clone());
        if vo.is_some() && vn.is_some() {
            // Both sides enumerate their values: the value comparison said it all.
            return;
        }
        let effective = |types: u8, values: &Option<Vec<Value>>| match values {
            Some(vs) => types & vs.iter().fold(0, |b, v| b | value_bits(v)),
            None => types,
        };
        let (to, tn) = (effective(to, &vo), effective(tn, &vn));
        let (op, np) = (Self::ptr_of(o, &["type"]), Self::ptr_of(n, &["type"]));
        let added = tn & !to;
        let removed = to & !tn;
        if added != 0 {
            self.emit(
                pol,
                "type-added",
                Direction::Widening,
                &op,
                &np,
                format!("the new schema also accepts {}", type_names(added)),
            );
        }
        if removed != 0 {
            self.emit(
                pol,
                "type-removed",
                Direction::Narrowing,
                &op,
                &np,
                format!("the new schema no longer accepts {}", type_names(removed)),
            );
        }
    }

    // -- enum / const ------------------------------------------------------------------

    fn cmp_values(
        &mut self,
        o: &At<'a>,
        n: &At<'a>,
        pol: bool,
        vo: Option<Vec<Value>>,
        vn: Option<Vec<Value>>,
    ) {
        let (op, np) = (
            Self::ptr_of(o, &["enum", "const"]),
            Self::ptr_of(n, &["enum", "const"]),
        );
        match (vo, vn) {
            (None, None) => {}
            (None, Some(values)) => self.emit(
                pol,
                "enum-added",
                Direction::Narrowing,
                &op,
                &np,
                format!(
                    "the value is now restricted to {}",
                    short(&Value::Array(values))
                ),
            ),
            (Some(values), None) => self.emit(
                pol,
                "enum-removed",
                Direction::Widening,
                &op,
                &np,
                format!(
                    "the value is no longer restricted to {}",
                    short(&Value::Array(values))
                ),
            ),
            (Some(old), Some(new)) => {
                let keys = |vs: &[Value]| -> HashSet<Vec<u8>> {
                    vs.iter().map(crate::digest::jcs).collect()
                };
                let (old_keys, new_keys) = (keys(&old), keys(&new));
                for v in new
                    .iter()
                    .filter(|v| !old_keys.contains(&crate::digest::jcs(v)))
                {
                    self.emit(
                        pol,
                        "enum-value-added",
                        Direction::Widening,
                        &op,
                        &np,
                        format!("value {} is now allowed", short(v)),
                    );
                }
                for v in old
                    .iter()
                    .filter(|v| !new_keys.contains(&crate::digest::jcs(v)))
                {
                    self.emit(
                        pol,
                        "enum-value-removed",
                        Direction::Narrowing,
                        &op,
                        &np,
                        format!("value {} is no longer allowed", short(v)),
                    );
                }
            }
        }
    }

    // -- numbers -----------------------------------------------------------------------

    fn cmp_numbers(&mut self, o: &At<'a>, n: &At<'a>, pol: bool) {
        for (lower, incl, excl, tightened, loosened) in [
            (
                true,
                "minimum",
                "exclusiveMinimum",
                "minimum-tightened",
                "minimum-loosened",
            ),
            (
                false,
                "maximum",
                "exclusiveMaximum",
                "maximum-tightened",
                "maximum-loosened",
            ),
        ] {
            let (bo, bn) = match (
                bound(o.map(), incl, excl, lower),
                bound(n.map(), incl, excl, lower),
            ) {
                (Ok(a), Ok(b)) => (a, b),
                _ => {
                    self.unreadable(pol, o, n, incl);
                    continue;
                }
            };
            let cmp = compare_bounds(bo, bn, lower);
            let (op, np) = (
                Self::ptr_of(o, &[incl, excl]),
                Self::ptr_of(n, &[incl, excl]),
            );
            let show = |b: Option<(f64, bool)>| match b {
                None => "none".to_string(),
                Some((v, true)) => format!("{v} (exclusive)"),
                Some((v, false)) => format!("{v}"),
            };
            match cmp {
                std::cmp::Ordering::Equal => {}
                std::cmp::Ordering::Greater => self.emit(
                    pol,
                    tightened,
                    Direction::Narrowing,
                    &op,
                    &np,
                    format!("the {incl} bound went from {} to {}", show(bo), show(bn)),
                ),
                std::cmp::Ordering::Less => self.emit(
                    pol,
                    loosened,
                    Direction::Widening,
                    &op,
                    &np,
                    format!("the {incl} bound went from {} to {}", show(bo), show(bn)),
                ),
            }
        }
        let mo = o.v.get("multipleOf");
        let mn = n.v.get("multipleOf");
        if mo.is_none() && mn.is_none() {
            return;
        }
        let (op, np) = (
            Self::ptr_of(o, &["multipleOf"]),
            Self::ptr_of(n, &["multipleOf"]),
        );
        let positive = |v: Option<&Value>| match v {
            None => Ok(None),
            Some(x) => x.as_f64().filter(|f| *f > 0.0).map(Some).ok_or(()),
        };
        match (positive(mo), positive(mn)) {
            (Ok(None), Ok(Some(b))) => self.emit(
                pol,
                "multiple-of-tightened",
                Direction::Narrowing,
                &op,
                &np,
                format!("numbers must now be multiples of {b}"),
            ),
            (Ok(Some(a)), Ok(None)) => self.emit(
                pol,
                "multiple-of-loosened",
                Direction::Widening,
                &op,
                &np,
                format!("numbers need no longer be multiples of {a}"),
            ),
            (Ok(Some(a)), Ok(Some(b))) if a != b => {
                let divides = |x: f64, y: f64| {
                    let q = x / y;
                    q.is_finite() && q.fract() == 0.0
                };
                let (rule, dir) = if divides(a, b) {
                    ("multiple-of-loosened", Direction::Widening)
                } else if divides(b, a) {
                    ("multiple-of-tightened", Direction::Narrowing)
                } else {
                    ("multiple-of-changed", Direction::Both)
                };
                self.emit(
                    pol,
                    rule,
                    dir,
                    &op,
                    &np,
                    format!("multipleOf went from {a} to {b}"),
                );
            }
            (Ok(_), Ok(_)) => {}
            _ => self.unreadable(pol, o, n, "multipleOf"),
        }
    }

    // -- strings -----------------------------------------------------------------------

    fn cmp_strings(&mut self, o: &At<'a>, n: &At<'a>, pol: bool) {
        self.cmp_count(o, n, pol, "minLength", true, "min-length");
        self.cmp_count(o, n, pol, "maxLength", false, "max-length");
        let (op, np) = (Self::ptr_of(o, &["pattern"]), Self::ptr_of(n, &["pattern"]));
        match (o.v.get("pattern"), n.v.get("pattern")) {
            (None, None) => {}
            (None, Some(p)) => self.emit(
                pol,
                "pattern-added",
                Direction::Narrowing,
                &op,
                &np,
                format!("strings must now match {}", short(p)),
            ),
            (Some(p), None) => self.emit(
                pol,
                "pattern-removed",
                Direction::Widening,
                &op,
                &np,
                format!("strings need no longer match {}", short(p)),
            ),
            (Some(a), Some(b)) if a != b => self.emit(
                pol,
                "pattern-changed",
                Direction::Undecided,
                &op,
                &np,
                format!(
                    "the pattern changed from {} to {}; whether one language contains the other is not decided",
                    short(a),
                    short(b)
                ),
            ),
            _ => {}
        }
        let (op, np) = (Self::ptr_of(o, &["format"]), Self::ptr_of(n, &["format"]));
        match (o.v.get("format"), n.v.get("format")) {
            (None, None) => {}
            (None, Some(f)) => self.emit(
                pol,
                "format-added",
                Direction::Narrowing,
                &op,
                &np,
                format!("format {} is now asserted", short(f)),
            ),
            (Some(f), None) => self.emit(
                pol,
                "format-removed",
                Direction::Widening,
                &op,
                &np,
                format!("format {} is no longer asserted", short(f)),
            ),
            (Some(a), Some(b)) if a != b => {
                let (rule, dir) = match (a.as_str(), b.as_str()) {
                    (Some(x), Some(y)) if format_within(x, y) => {
                        ("format-widened", Direction::Widening)
                    }
                    (Some(x), Some(y)) if format_within(y, x) => {
                        ("format-narrowed", Direction::Narrowing)
                    }
                    _ => ("format-changed", Direction::Undecided),
                };
                self.emit(
                    pol,
                    rule,
                    dir,
                    &op,
                    &np,
                    format!("the format changed from {} to {}", short(a), short(b)),
                );
            }
            _ => {}
        }
    }

    /// A non-negative count bound (minLength, maxItems, …): `lower` bounds default to 0,
    /// upper bounds to unbounded.
    fn cmp_count(
        &mut self,
        o: &At<'a>,
        n: &At<'a>,
        pol: bool,
        keyword: &'static str,
        lower: bool,
        stem: &'static str,
    ) {
        let read = |at: &At<'a>| match at.v.get(keyword) {
            None => Ok(if lower { Some(0.0) } else { None }),
            Some(v) => v
                .as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(Some)
                .ok_or(()),
        };
        let (bo, bn) = match (read(o), read(n)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => {
                self.unreadable(pol, o, n, keyword);
                return;
            }
        };
        let ord = compare_bounds(bo.map(|v| (v, false)), bn.map(|v| (v, false)), lower);
        let (tightened, loosened) = rule_pair(stem);
        let show = |b: Option<f64>| b.map_or("none".to_string(), |v| v.to_string());
        let (op, np) = (Self::ptr_of(o, &[keyword]), Self::ptr_of(n, &[keyword]));
        let why = format!("{keyword} went from {} to {}", show(bo), show(bn));
        match ord {
            std::cmp::Ordering::Equal => {}
            std::cmp::Ordering::Greater => {
                self.emit(pol, tightened, Direction::Narrowing, &op, &np, why)
            }
            std::cmp::Ordering::Less => {
                self.emit(pol, loosened, Direction::Widening, &op, &np, why)
            }
        }
    }

    // -- arrays ------------------------------------------------------------------------

    fn items_rest(&self, at: &At<'a>) -> Residual<'a> {
        let m = at.map();
        if let Some(items) = at.get("items") {
            return Residual::Known(items);
        }
        match at.get("unevaluatedItems") {
            None => Residual::Known(at.get_or_true("items")),
            Some(u) => {
                if m.contains_key("contains") || IN_PLACE.iter().any(|k| m.contains_key(*k)) {
                    Residual::Unknown
                } else {
                    Residual::Known(u)
                }
            }
        }
    }

    fn cmp_arrays(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize) {
        self.cmp_count(o, n, pol, "minItems", true, "min-items");
        self.cmp_count(o, n, pol, "maxItems", false, "max-items");
        let unique = |at: &At<'a>| at.v.get("uniqueItems").and_then(Value::as_bool);
        match (unique(o).unwrap_or(false), unique(n).unwrap_or(false)) {
            (false, true) => self.emit(
                pol,
                "unique-items-added",
                Direction::Narrowing,
                &Self::ptr_of(o, &["uniqueItems"]),
                &Self::ptr_of(n, &["uniqueItems"]),
                "array items must now be unique".into(),
            ),
            (true, false) => self.emit(
                pol,
                "unique-items-removed",
                Direction::Widening,
                &Self::ptr_of(o, &["uniqueItems"]),
                &Self::ptr_of(n, &["uniqueItems"]),
                "array items need no longer be unique".into(),
            ),
            _ => {}
        }

        // Positions: prefixItems[i], then the rest (items, or unevaluatedItems alone).
        let prefix = |at: &At<'a>| -> Result<Vec<At<'a>>, ()> {
            match at.get("prefixItems") {
                None => Ok(Vec::new()),
                Some(p) => match p.v {
                    Value::Array(items) => {
                        Ok((0..items.len()).filter_map(|i| p.index(i)).collect())
                    }
                    _ => Err(()),
                },
            }
        };
        let (po, pn) = match (prefix(o), prefix(n)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => {
                self.unreadable(pol, o, n, "prefixItems");
                return;
            }
        };
        if o.v.get("items").is_some_and(Value::is_array)
            || n.v.get("items").is_some_and(Value::is_array)
        {
            // The array form of `items` belongs to older drafts.
            self.unreadable(pol, o, n, "items");
            return;
        }
        let (ro, rn) = (self.items_rest(o), self.items_rest(n));
        for i in 0..po.len().max(pn.len()) {
            match (po.get(i), pn.get(i)) {
                (Some(a), Some(b)) => self.cmp(a, b, pol, depth + 1),
                (None, Some(b)) => match &ro {
                    Residual::Known(r) => self.summarize(
                        "prefix-item-added",
                        r,
                        b,
                        pol,
                        depth,
                        (&r.ptr, &b.ptr),
                        format!("position {i} now has its own schema instead of the old rest-of-array schema"),
                    ),
                    Residual::Unknown => self.emit(
                        pol,
                        "items-undecided",
                        Direction::Undecided,
                        &o.ptr,
                        &b.ptr,
                        format!("position {i} was governed by unevaluatedItems next to applicators"),
                    ),
                },
                (Some(a), None) => match &rn {
                    Residual::Known(r) => self.summarize(
                        "prefix-item-removed",
                        a,
                        r,
                        pol,
                        depth,
                        (&a.ptr, &r.ptr),
                        format!("position {i} is now governed by the rest-of-array schema"),
                    ),
                    Residual::Unknown => self.emit(
                        pol,
                        "items-undecided",
                        Direction::Undecided,
                        &a.ptr,
                        &n.ptr,
                        format!("position {i} is now governed by unevaluatedItems next to applicators"),
                    ),
                },
                (None, None) => {}
            }
        }
        match (&ro, &rn) {
            (Residual::Known(a), Residual::Known(b)) => self.cmp(a, b, pol, depth + 1),
            _ => {
                // Compare the keywords themselves; the unevaluated rule flags any interplay.
                for k in ["items", "unevaluatedItems"] {
                    let (a, b) = (o.get_or_true(k), n.get_or_true(k));
                    self.cmp(&a, &b, pol, depth + 1);
                }
            }
        }

        // contains with minContains / maxContains.
        let (co, cn) = (o.get("contains"), n.get("contains"));
        let count = |at: &At<'a>, k: &str| -> Result<Option<f64>, ()> {
            match at.v.get(k) {
                None => Ok(None),
                Some(v) => v
                    .as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(Some)
                    .ok_or(()),
            }
        };
        let (mino, minn, maxo, maxn) = match (
            count(o, "minContains"),
            count(n, "minContains"),
            count(o, "maxContains"),
            count(n, "maxContains"),
        ) {
            (Ok(a), Ok(b), Ok(c), Ok(d)) => (a.unwrap_or(1.0), b.unwrap_or(1.0), c, d),
            _ => {
                self.unreadable(pol, o, n, "minContains");
                return;
            }
        };
        match (co, cn) {
            (None, None) => {}
            (None, Some(c)) => {
                if minn > 0.0 || maxn.is_some() {
                    self.emit(
                        pol,
                        "contains-added",
                        Direction::Narrowing,
                        &o.ptr,
                        &c.ptr,
                        "arrays must now contain matching items".into(),
                    );
                }
            }
            (Some(c), None) => {
                if mino > 0.0 || maxo.is_some() {
                    self.emit(
                        pol,
                        "contains-removed",
                        Direction::Widening,
                        &c.ptr,
                        &n.ptr,
                        "arrays need no longer contain matching items".into(),
                    );
                }
            }
            (Some(a), Some(b)) => {
                if maxo.is_some() || maxn.is_some() {
                    let start = self.changes.len();
                    self.cmp(&a, &b, pol, depth + 1);
                    if self.changes[start..]
                        .iter()
                        .any(|c| c.direction != Direction::None)
                    {
                        self.emit(
                            pol,
                            "contains-changed",
                            Direction::Undecided,
                            &a.ptr,
                            &b.ptr,
                            "contains changed next to maxContains, which counts matches from above"
                                .into(),
                        );
                    }
                } else {
                    self.cmp(&a, &b, pol, depth + 1);
                }
                let (op, np) = (
                    Self::ptr_of(o, &["minContains"]),
                    Self::ptr_of(n, &["minContains"]),
                );
                match compare_bounds(Some((mino, false)), Some((minn, false)), true) {
                    std::cmp::Ordering::Greater => self.emit(
                        pol,
                        "min-contains-tightened",
                        Direction::Narrowing,
                        &op,
                        &np,
                        format!("minContains went from {mino} to {minn}"),
                    ),
                    std::cmp::Ordering::Less => self.emit(
                        pol,
                        "min-contains-loosened",
                        Direction::Widening,
                        &op,
                        &np,
                        format!("minContains went from {mino} to {minn}"),
                    ),
                    _ => {}
                }
                let (op, np) = (
                    Self::ptr_of(o, &["maxContains"]),
                    Self::ptr_of(n, &["maxContains"]),
                );
                match compare_bounds(maxo.map(|v| (v, false)), maxn.map(|v| (v, false)), false) {
                    std::cmp::Ordering::Greater => self.emit(
                        pol,
                        "max-contains-tightened",
                        Direction::Narrowing,
                        &op,
                        &np,
                        "maxContains lowered or added".into(),
                    ),
                    std::cmp::Ordering::Less => self.emit(
                        pol,
                        "max-contains-loosened",
                        Direction::Widening,
                        &op,
                        &np,
                        "maxContains raised or removed".into(),
                    ),
                    _ => {}
                }
            }
        }
    }

    // -- objects -----------------------------------------------------------------------

    /// What governs member `name` of `at` when `properties` does not declare it: the
    /// residual schema, or — next to `patternProperties` whose pattern strings are the
    /// same as in `other` (and no `unevaluatedProperties` on either side) — the schema of
    /// the first pattern that matches the name, else `additionalProperties`. A member is
    /// the conjunction of its declared schema and every matching pattern's; each pattern's
    /// schema is also compared with its counterpart on its own, and a conjunction moves
    /// no further than the join of its parts, so comparing with one of them is sound.
    fn member_rest(
        &mut self,
        rest: &Residual<'a>,
        at: &At<'a>,
        other: &At<'a>,
        name: &str,
    ) -> Residual<'a> {
        if let Residual::Known(r) = rest {
            return Residual::Known(r.clone());
        }
        let pattern_keys = |a: &At<'a>| -> Option<Vec<&'a String>> {
            let mut keys: Vec<&String> =
                a.v.get("patternProperties")?.as_object()?.keys().collect();
            keys.sort();
            Some(keys)
        };
        let uneval = |a: &At<'a>| a.v.get("unevaluatedProperties").is_some();
        let (Some(mine), Some(theirs)) = (pattern_keys(at), pattern_keys(other)) else {
            return Residual::Unknown;
        };
        if mine != theirs || uneval(at) || uneval(other) {
            return Residual::Unknown;
        }
        for p in mine {
            match self.patterns.matches(p, name) {
                Some(true) => {
                    if let Some(schema) = at.get("patternProperties").and_then(|m| m.get(p)) {
                        return Residual::Known(schema);
                    }
                }
                Some(false) => {}
                None => return Residual::Unknown,
            }
        }
        Residual::Known(at.get_or_true("additionalProperties"))
    }

    fn props_rest(&self, at: &At<'a>) -> Residual<'a> {
        let m = at.map();
        if m.get("patternProperties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty())
        {
            return Residual::Unknown;
        }
        if let Some(a) = at.get("additionalProperties") {
            return Residual::Known(a);
        }
        match at.get("unevaluatedProperties") {
            None => Residual::Known(at.get_or_true("additionalProperties")),
            Some(u) => {
                if IN_PLACE.iter().any(|k| m.contains_key(*k)) {
                    Residual::Unknown
                } else {
                    Residual::Known(u)
                }
            }
        }
    }

    fn cmp_objects(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize) {
        self.cmp_count(o, n, pol, "minProperties", true, "min-properties");
        self.cmp_count(o, n, pol, "maxProperties", false, "max-properties");

        let props = |at: &At<'a>| -> Result<Vec<(String, At<'a>)>, ()> {
            match at.get("properties") {
                None => Ok(Vec::new()),
                Some(p) => match p.v {
                    Value::Object(m) => Ok(m
                        .keys()
                        .filter_map(|k| p.get(k).map(|a| (k.clone(), a)))
                        .collect()),
                    _ => Err(()),
                },
            }
        };
        let (po, pn) = match (props(o), props(n)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => {
                self.unreadable(pol, o, n, "properties");
                return;
            }
        };
        let (ro, rn) = (self.props_rest(o), self.props_rest(n));
        let index = |list: &[(String, At<'a>)]| -> HashMap<String, usize> {
            list.iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect()
        };
        let (po_index, pn_index) = (index(&po), index(&pn));
        let keyword = |r: &At<'a>| {
            r.ptr
                .rsplit('/')
                .next()
                .filter(|k| k.ends_with("Properties"))
                .unwrap_or("additionalProperties")
                .to_string()
        };
        let describe = |r: &At<'a>| {
            if r.ptr.contains("/patternProperties/") {
                format!("was governed by the patternProperties entry at {}", r.ptr)
            } else if r.is_false() {
                format!("was rejected ({} is false)", keyword(r))
            } else if trivially_true(r.v) {
                "could hold any value".to_string()
            } else {
                format!("was governed by the schema at {}", r.ptr)
            }
        };
        for (name, a) in &po {
            match pn_index.get(name.as_str()).map(|&i| &pn[i]) {
                Some((_, b)) => self.cmp(a, b, pol, depth + 1),
                None => match self.member_rest(&rn, n, o, name) {
                    Residual::Known(r) => {
                        let r = &r;
                        let now = if r.ptr.contains("/patternProperties/") {
                            format!("is now governed by the patternProperties entry at {}", r.ptr)
                        } else if r.is_false() {
                            format!("is now rejected ({} is false)", keyword(r))
                        } else if trivially_true(r.v) {
                            "may now hold any value".to_string()
                        } else {
                            format!("is now governed by the schema at {}", r.ptr)
                        };
                        self.summarize(
                            "property-removed",
                            a,
                            r,
                            pol,
                            depth,
                            (&a.ptr, &n.ptr),
                            format!("property {name:?} is no longer declared: it {now}"),
                        );
                    }
                    Residual::Unknown => self.emit(
                        pol,
                        "additional-properties-undecided",
                        Direction::Undecided,
                        &a.ptr,
                        &n.ptr,
                        format!("property {name:?} is no longer declared, and patternProperties or unevaluatedProperties next to applicators decide what it may now hold"),
                    ),
                },
            }
        }
        for (name, b) in &pn {
            if po_index.contains_key(name.as_str()) {
                continue;
            }
            match self.member_rest(&ro, o, n, name) {
                Residual::Known(r) => self.summarize(
                    "property-added",
                    &r,
                    b,
                    pol,
                    depth,
                    (&o.ptr, &b.ptr),
                    format!("property {name:?} is now declared; before, it {}", describe(&r)),
                ),
                Residual::Unknown => self.emit(
                    pol,
                    "additional-properties-undecided",
                    Direction::Undecided,
                    &o.ptr,
                    &b.ptr,
                    format!("property {name:?} is now declared, and patternProperties or unevaluatedProperties next to applicators decided what it could hold"),
                ),
            }
        }
        match (&ro, &rn) {
            (Residual::Known(a), Residual::Known(b)) => self.cmp(a, b, pol, depth + 1),
            _ => {
                for k in ["additionalProperties", "unevaluatedProperties"] {
                    let (a, b) = (o.get_or_true(k), n.get_or_true(k));
                    self.cmp(&a, &b, pol, depth + 1);
                }
            }
        }

        // patternProperties, keyed by the pattern text.
        let pats = |at: &At<'a>| -> Vec<(String, At<'a>)> {
            at.get("patternProperties")
                .map(|p| {
                    p.map()
                        .keys()
                        .filter_map(|k| p.get(k).map(|a| (k.clone(), a)))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (pato, patn) = (pats(o), pats(n));
        let (pato_index, patn_index) = (index(&pato), index(&patn));
        let open = |at: &At<'a>| {
            at.v.get("additionalProperties").is_none_or(trivially_true)
                && at.v.get("unevaluatedProperties").is_none_or(trivially_true)
        };
        let both_open = open(o) && open(n);
        for (p, a) in &pato {
            match patn_index.get(p.as_str()).map(|&i| &patn[i]) {
                Some((_, b)) => self.cmp(a, b, pol, depth + 1),
                None if both_open && trivially_true(a.v) => {}
                None => self.emit(
                    pol,
                    "pattern-property-removed",
                    if both_open {
                        Direction::Widening
                    } else {
                        Direction::Undecided
                    },
                    &a.ptr,
                    &n.ptr,
                    format!("members matching {p:?} are no longer constrained by their own schema"),
                ),
            }
        }
        for (p, b) in &patn {
            if pato_index.contains_key(p.as_str()) || (both_open && trivially_true(b.v)) {
                continue;
            }
            self.emit(
                pol,
                "pattern-property-added",
                if both_open {
                    Direction::Narrowing
                } else {
                    Direction::Undecided
                },
                &o.ptr,
                &b.ptr,
                format!("members matching {p:?} are now constrained by their own schema"),
            );
        }

        // required.
        let names = |at: &At<'a>, k: &str| -> Result<Vec<String>, ()> {
            match at.v.get(k) {
                None => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| v.as_str().map(str::to_string).ok_or(()))
                    .collect(),
                Some(_) => Err(()),
            }
        };
        match (names(o, "required"), names(n, "required")) {
            (Ok(ro), Ok(rn)) => {
                let (ro_set, rn_set): (HashSet<&String>, HashSet<&String>) =
                    (ro.iter().collect(), rn.iter().collect());
                for (i, name) in rn.iter().enumerate() {
                    if !ro_set.contains(name) {
                        self.emit(
                            pol,
                            "required-added",
                            Direction::Narrowing,
                            &Self::ptr_of(o, &["required"]),
                            &format!("{}/required/{i}", n.ptr),
                            format!("property {name:?} is now required; instances without it were accepted before"),
                        );
                    }
                }
                for (i, name) in ro.iter().enumerate() {
                    if !rn_set.contains(name) {
                        self.emit(
                            pol,
                            "required-removed",
                            Direction::Widening,
                            &format!("{}/required/{i}", o.ptr),
                            &Self::ptr_of(n, &["required"]),
                            format!("property {name:?} is no longer required"),
                        );
                    }
                }
            }
            _ => self.unreadable(pol, o, n, "required"),
        }

        // propertyNames: monotone.
        if o.v.get("propertyNames").is_some() || n.v.get("propertyNames").is_some() {
            let (a, b) = (
                o.get_or_true("propertyNames"),
                n.get_or_true("propertyNames"),
            );
            self.cmp(&a, &b, pol, depth + 1);
        }

        // dependentRequired: per trigger, like required.
        let deps = |at: &At<'a>| -> Result<Vec<(String, Vec<String>)>, ()> {
            match at.v.get("dependentRequired") {
                None => Ok(Vec::new()),
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, v)| {
                        let list = v
                            .as_array()
                            .ok_or(())?
                            .iter()
                            .map(|s| s.as_str().map(str::to_string).ok_or(()))
                            .collect::<Result<Vec<_>, ()>>()?;
                        Ok((k.clone(), list))
                    })
                    .collect(),
                Some(_) => Err(()),
            }
        };
        match (deps(o), deps(n)) {
            (Ok(dep_o), Ok(dn)) => {
                let (op, np) = (
                    Self::ptr_of(o, &["dependentRequired"]),
                    Self::ptr_of(n, &["dependentRequired"]),
                );
                let get = |d: &[(String, Vec<String>)], k: &str| {
                    d.iter()
                        .find(|(t, _)| t == k)
                        .map(|(_, l)| l.clone())
                        .unwrap_or_default()
                };
                let mut triggers: Vec<&String> = dep_o.iter().chain(&dn).map(|(k, _)| k).collect();
                triggers.sort();
                triggers.dedup();
                for t in triggers {
                    let (lo, ln) = (get(&dep_o, t), get(&dn, t));
                    for name in ln.iter().filter(|x| !lo.contains(x)) {
                        self.emit(
                            pol,
                            "dependent-required-added",
                            Direction::Narrowing,
                            &op,
                            &np,
                            format!("when {t:?} is present, {name:?} is now required"),
                        );
                    }
                    for name in lo.iter().filter(|x| !ln.contains(x)) {
                        self.emit(
                            pol,
                            "dependent-required-removed",
                            Direction::Widening,
                            &op,
                            &np,
                            format!("when {t:?} is present, {name:?} is no longer required"),
                        );
                    }
                }
            }
            _ => self.unreadable(pol, o, n, "dependentRequired"),
        }

        // dependentSchemas: per trigger, monotone; added/removed entries are conjuncts.
        let dso = o.get("dependentSchemas");
        let dsn = n.get("dependentSchemas");
        if dso.is_some() || dsn.is_some() {
            let keys = |d: &Option<At<'a>>| -> Vec<String> {
                d.as_ref()
                    .map(|a| a.map().keys().cloned().collect())
                    .unwrap_or_default()
            };
            let mut all = keys(&dso);
            all.extend(keys(&dsn));
            all.sort();
            all.dedup();
            for k in all {
                let a = dso.as_ref().and_then(|d| d.get(&k));
                let b = dsn.as_ref().and_then(|d| d.get(&k));
                match (a, b) {
                    (Some(a), Some(b)) => self.cmp(&a, &b, pol, depth + 1),
                    (None, Some(b)) => self.summarize(
                        "dependent-schema-added",
                        &At {
                            v: &TRUE,
                            ptr: o.ptr.clone(),
                        },
                        &b,
                        pol,
                        depth,
                        (&o.ptr, &b.ptr),
                        format!("when {k:?} is present, the object must now also match a schema"),
                    ),
                    (Some(a), None) => self.summarize(
                        "dependent-schema-removed",
                        &a,
                        &At {
                            v: &TRUE,
                            ptr: n.ptr.clone(),
                        },
                        pol,
                        depth,
                        (&a.ptr, &n.ptr),
                        format!("when {k:?} is present, the object need no longer match a schema"),
                    ),
                    (None, None) => {}
                }
            }
        }
    }

    // -- allOf / anyOf / oneOf / not / if ----------------------------------------------

    fn branches(at: &At<'a>, key: &str) -> Result<Option<Vec<At<'a>>>, ()> {
        match at.get(key) {
            None => Ok(None),
            Some(list) => match list.v {
                Value::Array(items) if !items.is_empty() => Ok(Some(
                    (0..items.len()).filter_map(|i| list.index(i)).collect(),
                )),
                _ => Err(()),
            },
        }
    }

    /// Pair old and new branches: equal ones first, the rest in order; the leftovers
    /// were removed (old) or added (new). Any pairing is sound for these monotone
    /// combinators — a poor one can only report more changes, never hide one.
    fn pair(o: &[At<'a>], n: &[At<'a>]) -> (Vec<(usize, usize)>, Vec<usize>, Vec<usize>) {
        let mut pairs = Vec::new();
        let mut used_o = vec![false; o.len()];
        let mut used_n = vec![false; n.len()];
        // Matching equal branches is quadratic; on huge lists pair in order instead.
        let exact = o.len().saturating_mul(n.len()) <= 250_000;
        for (j, b) in n.iter().enumerate().filter(|_| exact) {
            if let Some(i) = (0..o.len()).find(|&i| !used_o[i] && json_eq(o[i].v, b.v)) {
                used_o[i] = true;
                used_n[j] = true;
                pairs.push((i, j));
            }
        }
        let rest_o: Vec<usize> = (0..o.len()).filter(|&i| !used_o[i]).collect();
        let rest_n: Vec<usize> = (0..n.len()).filter(|&j| !used_n[j]).collect();
        let k = rest_o.len().min(rest_n.len());
        pairs.extend(rest_o.iter().zip(&rest_n).map(|(&i, &j)| (i, j)));
        pairs.sort_unstable();
        (pairs, rest_o[k..].to_vec(), rest_n[k..].to_vec())
    }

    fn cmp_composition(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize, bare: bool) {
        if !bare {
            self.cmp_combinators(o, n, pol, depth);
        }
        self.cmp_not_and_conditionals(o, n, pol, depth);
    }

    fn cmp_combinators(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize) {
        // allOf: an intersection. More branches narrow; fewer widen.
        match (Self::branches(o, "allOf"), Self::branches(n, "allOf")) {
            (Ok(bo), Ok(bn)) => {
                let (bo, bn) = (bo.unwrap_or_default(), bn.unwrap_or_default());
                let (pairs, removed, added) = Self::pair(&bo, &bn);
                for (i, j) in pairs {
                    self.cmp(&bo[i], &bn[j], pol, depth + 1);
                }
                for j in added {
                    let t = At {
                        v: &TRUE,
                        ptr: o.ptr.clone(),
                    };
                    self.summarize(
                        "all-of-branch-added",
                        &t,
                        &bn[j],
                        pol,
                        depth,
                        (&o.ptr, &bn[j].ptr),
                        "an allOf branch was added".into(),
                    );
                }
                for i in removed {
                    let t = At {
                        v: &TRUE,
                        ptr: n.ptr.clone(),
                    };
                    self.summarize(
                        "all-of-branch-removed",
                        &bo[i],
                        &t,
                        pol,
                        depth,
                        (&bo[i].ptr, &n.ptr),
                        "an allOf branch was removed".into(),
                    );
                }
            }
            _ => self.unreadable(pol, o, n, "allOf"),
        }

        // anyOf: a union. More branches widen; fewer narrow.
        match (Self::branches(o, "anyOf"), Self::branches(n, "anyOf")) {
            (Ok(bo), Ok(bn)) => self.cmp_union(o, n, bo, bn, pol, depth, "any"),
            _ => self.unreadable(pol, o, n, "anyOf"),
        }

        // oneOf: a union when the branches are pairwise disjoint, on both sides;
        // otherwise not monotone.
        match (Self::branches(o, "oneOf"), Self::branches(n, "oneOf")) {
            (Ok(bo), Ok(bn)) => {
                let disjoint_o = bo
                    .as_ref()
                    .is_none_or(|b| self.pairwise_disjoint(Side::Old, b));
                let disjoint_n = bn
                    .as_ref()
                    .is_none_or(|b| self.pairwise_disjoint(Side::New, b));
                if (disjoint_o && disjoint_n) || bo.is_none() || bn.is_none() {
                    self.cmp_union(o, n, bo, bn, pol, depth, "one");
                } else {
                    let start = self.changes.len();
                    self.cmp_union(o, n, bo, bn, pol, depth, "one");
                    if self.changes[start..]
                        .iter()
                        .any(|c| c.direction != Direction::None)
                    {
                        self.emit(
                            pol,
                            "one-of-changed",
                            Direction::Undecided,
                            &Self::ptr_of(o, &["oneOf"]),
                            &Self::ptr_of(n, &["oneOf"]),
                            "oneOf branches that may overlap changed: an instance matching two branches is rejected, so the effect is not monotone".into(),
                        );
                    }
                }
            }
            _ => self.unreadable(pol, o, n, "oneOf"),
        }
    }

    fn cmp_not_and_conditionals(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize) {
        // not: the direction flips.
        match (o.get("not"), n.get("not")) {
            (Some(a), Some(b)) => self.cmp(&a, &b, !pol, depth + 1),
            (None, Some(b)) => {
                if !self.is_unsatisfiable(&b) {
                    self.emit(
                        pol,
                        "not-added",
                        Direction::Narrowing,
                        &o.ptr,
                        &b.ptr,
                        "values matching the `not` schema are now rejected".into(),
                    );
                }
            }
            (Some(a), None) => {
                if !self.is_unsatisfiable(&a) {
                    self.emit(
                        pol,
                        "not-removed",
                        Direction::Widening,
                        &a.ptr,
                        &n.ptr,
                        "values matching the old `not` schema are accepted again".into(),
                    );
                }
            }
            (None, None) => {}
        }

        // if / then / else: then and else are monotone, the condition is not.
        let cond = |at: &At<'a>| {
            at.get("if")
                .map(|i| (i, at.get_or_true("then"), at.get_or_true("else")))
        };
        match (cond(o), cond(n)) {
            (None, None) => {}
            (Some((io, to, eo)), Some((i_n, tn, en))) => {
                let start = self.changes.len();
                self.cmp(&io, &i_n, pol, depth + 1);
                let changed = self.changes[start..]
                    .iter()
                    .any(|c| c.direction != Direction::None);
                if changed {
                    self.changes.truncate(start);
                    self.emit(pol, "if-changed", Direction::Undecided, &io.ptr, &i_n.ptr, "the `if` condition changed, which moves instances between `then` and `else`".into());
                }
                self.cmp(&to, &tn, pol, depth + 1);
                self.cmp(&eo, &en, pol, depth + 1);
            }
            (None, Some((i_n, tn, en))) => {
                if !(trivially_true(tn.v) && trivially_true(en.v)) {
                    self.emit(
                        pol,
                        "conditional-added",
                        Direction::Undecided,
                        &o.ptr,
                        &i_n.ptr,
                        "an if/then/else was added".into(),
                    );
                }
            }
            (Some((io, to, eo)), None) => {
                if !(trivially_true(to.v) && trivially_true(eo.v)) {
                    self.emit(
                        pol,
                        "conditional-removed",
                        Direction::Undecided,
                        &io.ptr,
                        &n.ptr,
                        "an if/then/else was removed".into(),
                    );
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn cmp_union(
        &mut self,
        o: &At<'a>,
        n: &At<'a>,
        bo: Option<Vec<At<'a>>>,
        bn: Option<Vec<At<'a>>>,
        pol: bool,
        depth: usize,
        which: &str,
    ) {
        let key = if which == "any" { "anyOf" } else { "oneOf" };
        let (added_rule, removed_rule, kw_added, kw_removed) = if which == "any" {
            (
                "any-of-branch-added",
                "any-of-branch-removed",
                "any-of-added",
                "any-of-removed",
            )
        } else {
            (
                "one-of-branch-added",
                "one-of-branch-removed",
                "one-of-added",
                "one-of-removed",
            )
        };
        match (bo, bn) {
            (None, None) => {}
            (None, Some(b)) => {
                if !Self::union_is_true(which, &b) {
                    self.emit(
                        pol,
                        kw_added,
                        Direction::Narrowing,
                        &o.ptr,
                        &Self::ptr_of(n, &[key]),
                        format!("the value must now match one of the {key} branches"),
                    );
                }
            }
            (Some(a), None) => {
                if !Self::union_is_true(which, &a) {
                    self.emit(
                        pol,
                        kw_removed,
                        Direction::Widening,
                        &Self::ptr_of(o, &[key]),
                        &n.ptr,
                        format!("the value need no longer match one of the {key} branches"),
                    );
                }
            }
            (Some(a), Some(b)) => {
                let (pairs, removed, added) = Self::pair(&a, &b);
                for (i, j) in pairs {
                    self.cmp(&a[i], &b[j], pol, depth + 1);
                }
                for j in added {
                    if !self.is_unsatisfiable(&b[j]) {
                        self.emit(
                            pol,
                            added_rule,
                            Direction::Widening,
                            &Self::ptr_of(o, &[key]),
                            &b[j].ptr,
                            format!(
                                "{key} branch {} was added: values matching it are now accepted",
                                short(b[j].v)
                            ),
                        );
                    }
                }
                for i in removed {
                    if !self.is_unsatisfiable(&a[i]) {
                        self.emit(pol, removed_rule, Direction::Narrowing, &a[i].ptr, &Self::ptr_of(n, &[key]), format!("{key} branch {} was removed: values matching only it are now rejected", short(a[i].v)));
                    }
                }
            }
        }
    }

    /// Whether an anyOf/oneOf with these branches accepts everything: any trivially
    /// true branch for anyOf; for oneOf only a single such branch (two `true`
    /// branches reject everything, and `[true, X]` means `not X`).
    fn union_is_true(which: &str, branches: &[At<'a>]) -> bool {
        if which == "any" {
            branches.iter().any(|x| trivially_true(x.v))
        } else {
            branches.len() == 1 && trivially_true(branches[0].v)
        }
    }

    fn pairwise_disjoint(&self, side: Side, branches: &[At<'a>]) -> bool {
        (0..branches.len()).all(|i| {
            (i + 1..branches.len()).all(|j| self.disjoint(side, &branches[i], &branches[j], 0))
        })
    }

    /// A sound (incomplete) test that no instance matches both schemas.
    fn disjoint(&self, side: Side, a: &At<'a>, b: &At<'a>, depth: usize) -> bool {
        let budget = self.disjoint_budget.get();
        if depth > 8 || budget == 0 {
            return false;
        }
        self.disjoint_budget.set(budget - 1);
        let (Ok(a), Ok(b)) = (self.deref(side, a), self.deref(side, b)) else {
            return false;
        };
        if a.is_false() || b.is_false() {
            return true;
        }
        let (am, bm) = (a.map(), b.map());
        let (Ok(ta), Ok(tb)) = (types_of(am), types_of(bm)) else {
            return false;
        };
        let (ta, tb) = (ta.unwrap_or(T_ALL), tb.unwrap_or(T_ALL));
        if ta & tb == 0 {
            return true;
        }
        let (Ok(va), Ok(vb)) = (values_of(am), values_of(bm)) else {
            return false;
        };
        match (&va, &vb) {
            (Some(x), Some(y)) if !x.iter().any(|v| y.iter().any(|w| json_eq(v, w))) => {
                return true
            }
            (Some(x), None) if x.iter().all(|v| value_bits(v) & tb == 0) => return true,
            (None, Some(y)) if y.iter().all(|v| value_bits(v) & ta == 0) => return true,
            _ => {}
        }
        // A discriminating property: required by both, with disjoint schemas.
        let required = |m: &Map<String, Value>| -> Vec<String> {
            m.get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (ra, rb) = (required(am), required(bm));
        for p in ra.iter().filter(|p| rb.contains(p)) {
            let pa = a.get("properties").and_then(|x| x.get(p));
            let pb = b.get("properties").and_then(|x| x.get(p));
            if let (Some(pa), Some(pb)) = (pa, pb) {
                if self.disjoint(side, &pa, &pb, depth + 1) {
                    return true;
                }
            }
        }
        false
    }

    // -- $ref / $dynamicRef ------------------------------------------------------------

    fn cmp_refs(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize, bare: bool) {
        let target = |cx: &Self, side: Side, at: &At<'a>| -> Option<Result<At<'a>, ()>> {
            if bare {
                return None;
            }
            let r = at.v.get("$ref")?;
            Some(
                r.as_str()
                    .and_then(|r| cx.doc(side).resolve(&at.ptr, r))
                    .ok_or(()),
            )
        };
        match (target(self, Side::Old, o), target(self, Side::New, n)) {
            (None, None) => {}
            (Some(Err(())), _) | (_, Some(Err(()))) => self.emit(
                pol,
                "ref-unresolved",
                Direction::Undecided,
                &Self::ptr_of(o, &["$ref"]),
                &Self::ptr_of(n, &["$ref"]),
                "a $ref cannot be followed inside the schema".into(),
            ),
            (Some(Ok(a)), Some(Ok(b))) => {
                if self.first_visit(o, n, &a, &b, pol) {
                    self.cmp(&a, &b, pol, depth + 1);
                }
            }
            (None, Some(Ok(b))) => {
                let t = At {
                    v: &TRUE,
                    ptr: o.ptr.clone(),
                };
                self.summarize(
                    "ref-added",
                    &t,
                    &b,
                    pol,
                    depth,
                    (&o.ptr, &Self::ptr_of(n, &["$ref"])),
                    format!("the value must now also match {}", b.ptr_display()),
                );
            }
            (Some(Ok(a)), None) => {
                let t = At {
                    v: &TRUE,
                    ptr: n.ptr.clone(),
                };
                self.summarize(
                    "ref-removed",
                    &a,
                    &t,
                    pol,
                    depth,
                    (&Self::ptr_of(o, &["$ref"]), &n.ptr),
                    format!("the value need no longer match {}", a.ptr_display()),
                );
            }
        }
        let (do_, dn) = (o.v.get("$dynamicRef"), n.v.get("$dynamicRef"));
        if do_.is_some() || dn.is_some() {
            let same = do_ == dn && self.old.dynamic == self.new.dynamic;
            let followed = match (do_.and_then(Value::as_str), dn.and_then(Value::as_str)) {
                (Some(a), Some(b)) if same => {
                    match (self.old.resolve(&o.ptr, a), self.new.resolve(&n.ptr, b)) {
                        (Some(ta), Some(tb)) => {
                            if self.first_visit(o, n, &ta, &tb, pol) {
                                self.cmp(&ta, &tb, pol, depth + 1);
                            }
                            true
                        }
                        _ => false,
                    }
                }
                _ => false,
            };
            if !followed {
                self.emit(
                    pol,
                    "dynamic-ref",
                    Direction::Undecided,
                    &Self::ptr_of(o, &["$dynamicRef"]),
                    &Self::ptr_of(n, &["$dynamicRef"]),
                    "a $dynamicRef changed or its dynamic anchors changed; dynamic scope is not analysed".into(),
                );
            }
        }
    }

    // -- everything else ---------------------------------------------------------------

    fn cmp_other(&mut self, o: &At<'a>, n: &At<'a>, pol: bool) {
        let (om, nm) = (o.map(), n.map());
        let mut keys: Vec<&String> = om.keys().chain(nm.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            if is_assertion(k) || SILENT.contains(&k.as_str()) {
                continue;
            }
            let (a, b) = (om.get(k), nm.get(k));
            if a.zip(b).is_some_and(|(a, b)| json_eq(a, b)) {
                continue;
            }
            let (op, np) = (Self::ptr_of(o, &[k]), Self::ptr_of(n, &[k]));
            if k == "$schema" {
                // The dialect belongs to a resource: the documents' roots are compared
                // once (see `compare_with_limits`), embedded resources here. A `$ref`
                // that lands on a plain subschema compares no dialect.
                let embedded = |at: &At<'a>| !at.ptr.is_empty() && at.v.get("$id").is_some();
                if !(embedded(o) && embedded(n)) {
                    continue;
                }
                self.emit(
                    pol,
                    "dialect-changed",
                    Direction::Undecided,
                    &op,
                    &np,
                    format!(
                        "$schema changed from {} to {}",
                        a.map_or("none".into(), short),
                        b.map_or("none".into(), short)
                    ),
                );
            } else {
                self.emit(
                    pol,
                    "annotation-changed",
                    Direction::None,
                    &op,
                    &np,
                    format!("`{k}` changed; it does not affect validation"),
                );
            }
        }
    }
}

impl At<'_> {
    fn ptr_display(&self) -> String {
        if self.ptr.is_empty() {
            "the schema root".into()
        } else {
            format!("the schema at {}", self.ptr)
        }
    }
}

fn rule_pair(stem: &str) -> (&'static str, &'static str) {
    match stem {
        "min-length" => ("min-length-tightened", "min-length-loosened"),
        "max-length" => ("max-length-tightened", "max-length-loosened"),
        "min-items" => ("min-items-tightened", "min-items-loosened"),
        "max-items" => ("max-items-tightened", "max-items-loosened"),
        "min-properties" => ("min-properties-tightened", "min-properties-loosened"),
        _ => ("max-properties-tightened", "max-properties-loosened"),
    }
}

/// The effective numeric bound of `incl`/`excl` keywords: (value, exclusive).
fn bound(
    m: &Map<String, Value>,
    incl: &str,
    excl: &str,
    lower: bool,
) -> Result<Option<(f64, bool)>, ()> {
    let read = |k: &str| match m.get(k) {
        None => Ok(None),
        Some(v) => v.as_f64().map(Some).ok_or(()),
    };
    let (i, e) = (read(incl)?, read(excl)?);
    Ok(match (i, e) {
        (None, None) => None,
        (Some(i), None) => Some((i, false)),
        (None, Some(e)) => Some((e, true)),
        (Some(i), Some(e)) => {
            let tighter_is_e = if lower { e >= i } else { e <= i };
            if tighter_is_e {
                Some((e, true))
            } else {
                Some((i, false))
            }
        }
    })
}

/// How the new bound compares to the old: Greater = tighter, Less = looser.
fn compare_bounds(
    old: Option<(f64, bool)>,
    new: Option<(f64, bool)>,
    lower: bool,
) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (old, new) {
        (None, None) => Equal,
        (None, Some(_)) => Greater,
        (Some(_), None) => Less,
        (Some((a, ea)), Some((b, eb))) => {
            let by_value = if lower {
                b.partial_cmp(&a)
            } else {
                a.partial_cmp(&b)
            }
            .unwrap_or(Equal);
            match by_value {
                Equal => match (ea, eb) {
                    (false, true) => Greater,
                    (true, false) => Less,
                    _ => Equal,
                },
                o => o,
            }
        }
    }
}

/// Whether every string valid for format `a` is valid for format `b`.
fn format_within(a: &str, b: &str) -> bool {
    matches!(
        (a, b),
        ("hostname", "idn-hostname")
            | ("email", "idn-email")
            | ("uri", "iri")
            | ("uri", "uri-reference")
            | ("uri", "iri-reference")
            | ("uri-reference", "iri-reference")
            | ("iri", "iri-reference")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(old: Value, new: Value) -> Vec<(&'static str, Direction)> {
        compare(&old, &new)
            .changes
            .into_iter()
            .map(|c| (c.rule, c.direction))
            .collect()
    }

    #[test]
    fn lattice() {
        use Direction::*;
        assert_eq!(Widening.join(Narrowing), Both);
        assert_eq!(None.join(Widening), Widening);
        assert_eq!(Both.join(Undecided), Undecided);
        assert_eq!(Widening.flip(), Narrowing);
        assert!(Undecided.breaks(Role::Input) && Undecided.breaks(Role::Output));
        assert!(!Widening.breaks(Role::Input) && Widening.breaks(Role::Record));
    }

    #[test]
    fn resolves_uris() {
        assert_eq!(
            resolve_uri("https://a.example/x/y.json", "z.json").as_deref(),
            Some("https://a.example/x/z.json")
        );
        assert_eq!(
            resolve_uri("https://a.example/x/y.json", "../z#/a").as_deref(),
            Some("https://a.example/z#/a")
        );
        assert_eq!(
            resolve_uri("https://a.example/x/y.json", "#foo").as_deref(),
            Some("https://a.example/x/y.json#foo")
        );
        assert_eq!(resolve_uri("urn:a:b", "c.json"), Option::None);
        assert_eq!(
            resolve_uri("urn:a:b", "urn:c:d#/x").as_deref(),
            Some("urn:c:d#/x")
        );
    }

    #[test]
    fn follows_refs_through_embedded_resources_and_anchors() {
        let old = json!({
            "properties": {"a": {"$ref": "https://e.example/thing"}, "b": {"$ref": "#b"}},
            "$defs": {
                "thing": {"$id": "https://e.example/thing", "type": "string", "properties": {}},
                "bee": {"$anchor": "b", "type": "integer"}
            }
        });
        let mut new = old.clone();
        new["$defs"]["thing"]["type"] = json!(["string", "null"]);
        new["$defs"]["bee"]["type"] = json!("number");
        let found = rules(old, new);
        assert_eq!(
            found,
            [
                ("type-added", Direction::Widening),
                ("type-added", Direction::Widening)
            ]
        );
    }

    #[test]
    fn recursive_schemas_terminate() {
        let old = json!({"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"});
        let mut new = old.clone();
        new["$defs"]["node"]["required"] = json!(["next"]);
        let found = rules(old.clone(), new);
        assert_eq!(found, [("required-added", Direction::Narrowing)]);
        assert!(compare(
            &json!({"$ref": "#"}),
            &json!({"$ref": "#", "type": "string"})
        )
        .is_breaking(Role::Input));
    }

    #[test]
    fn hostile_depth_is_bounded() {
        let mut old = json!({"type": "string"});
        let mut new = json!({"type": "integer"});
        for _ in 0..500 {
            old = json!({"items": old});
            new = json!({"items": new});
        }
        let c = compare(&old, &new);
        assert_eq!(c.changes.len(), 1);
        assert_eq!(c.changes[0].rule, "limit-exceeded");
        assert_eq!(c.direction(), Direction::Undecided);
    }

    #[test]
    fn every_rule_is_listed_once() {
        let mut ids: Vec<&str> = RULES.iter().map(|(r, _)| *r).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n);
        for id in ids {
            assert!(id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
        }
    }
}
