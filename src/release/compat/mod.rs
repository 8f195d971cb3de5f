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

use crate::interface::Role;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;

mod annotations;
mod arrays;
mod composition;
mod evaluation;
mod numbers;
mod objects;
mod patterns;
mod refs;
mod strings;
mod subsume;
mod types;

use refs::Doc;

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

    /// The wire name (`widening`, `narrowing`, ...).
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
    ("unevaluated-with-applicators", "unevaluatedProperties/unevaluatedItems next to in-place applicators (or contains), and something there changed"),
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
    /// The changes, in the order the walk found them.
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

// In-place applicators: what they evaluate counts for `unevaluated*` of their parent.
use crate::schema::walk::IN_PLACE;

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
            ptr: crate::wire::pointer::child(&self.ptr, key),
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
        let why = match remedy(rule).filter(|_| direction == Direction::Undecided) {
            Some(what) => format!("{why}; it counts as breaking: {what}"),
            None => why,
        };
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

        let directional = self.changes[start..]
            .iter()
            .any(|c| c.direction != Direction::None);
        if (watch_unevaluated && directional)
            || ((uneval(om) || uneval(nm)) && self.evaluation_may_differ(&o, &n))
        {
            self.emit(
                pol,
                "unevaluated-with-applicators",
                Direction::Undecided,
                &o.ptr,
                &n.ptr,
                "unevaluatedProperties/unevaluatedItems depend on what the in-place applicators (and contains) here evaluate, and those changed; the effect on the accepted set is not decided".into(),
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

/// What an author can do about an undecided change (which counts as breaking).
fn remedy(rule: &str) -> Option<&'static str> {
    Some(match rule {
        "pattern-changed" => "inclusion between regular expressions is not decided; keep the old pattern, or release the change as a MAJOR version",
        "one-of-changed" => "make the oneOf branches provably disjoint (different types, or distinct const/enum values of a property every branch requires), use anyOf where matching two branches is harmless, or release the change as a MAJOR version",
        "if-changed" | "conditional-added" | "conditional-removed" => "keep the `if` as it was and change `then`/`else`, or release the change as a MAJOR version",
        "additional-properties-undecided" | "pattern-property-added" | "pattern-property-removed" => "keep the patternProperties patterns unchanged in a release that adds or removes properties (patterns are compared by their text), or release the change as a MAJOR version",
        "items-undecided" | "unevaluated-with-applicators" => "declare what else is allowed with additionalProperties/items next to the keywords it depends on instead of unevaluated*, or release the change as a MAJOR version",
        "contains-changed" => "change `contains` and `maxContains` in separate releases, or release the change as a MAJOR version",
        "dynamic-ref" => "use `$ref` where the target is fixed, or release the change as a MAJOR version",
        "dialect-changed" => "keep `$schema` as it was, or release the change as a MAJOR version",
        "ref-unresolved" | "ref-cycle" | "keyword-unreadable" => "fix the schema so that it compiles, then compare again",
        "limit-exceeded" => "split the change into smaller releases, or release it as a MAJOR version",
        _ => return None,
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
