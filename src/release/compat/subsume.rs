//! Subsumption for combinators: deciding `old ⊆ new` (or `new ⊆ old`) where the
//! keyword-by-keyword comparison cannot, because a `type` became an `anyOf`, one
//! combinator replaced another, branches were reordered or duplicated, or a body moved
//! behind a `$ref` with siblings.
//!
//! The keyword rules pair `allOf`/`anyOf`/`oneOf` branches and report a keyword that
//! appeared or vanished as a change of its own, so rewriting `{"type":"string"}` as
//! `{"anyOf":[{"type":"string"},{"type":"number"}]}` looks like "an anyOf now restricts
//! the value". This module reads every schema object as a conjunction of terms instead:
//! its own keywords without the in-place applicators (compared *bare*), each `allOf`
//! branch and `$ref` target (flattened), and each `anyOf` — or `oneOf`, see below — as a
//! union of its branches. Then `L(a) ⊆ L(b)` holds when every term of `b` is implied by
//! the terms of `a`:
//!
//! - a bare term of `b` is implied when one bare term of `a` is within it (by the
//!   keyword rules, which are exact on these applicator-free objects at this level);
//! - a union of `b` is implied when the terms of `a` imply one of its branches —
//!   branches are matched by subsumption, never by position, so duplicates collapse;
//! - otherwise, when `a` has a union term, each of its branches is taken in turn with
//!   the rest of `a` (a case split), and each case must imply the term.
//!
//! A `oneOf` accepts a subset of the `anyOf` with the same branches, so on the side whose
//! instances are being covered it is read as that `anyOf`; on the covering side only when
//! its branches are provably pairwise disjoint (different types, distinct `const`/`enum`
//! values, or a required property with disjoint schemas), where the two mean the same.
//! `unevaluated*` next to applicators and `$dynamicRef` make a schema opaque here.
//!
//! Everything it cannot prove is "not proved", never "false": the procedure can only
//! move a change's direction towards "none" when it has a proof, so the keyword rules'
//! verdict stands whenever it gives up (budget, nesting, an unresolvable reference).

use super::{is_assertion, At, Change, Cx, Direction, Side};
use serde_json::{Map, Value};

/// Steps (terms built, implications tried, subschema pairs compared in trials) one
/// comparison may spend here.
pub(super) const BUDGET: usize = 20_000;

/// Branches of one combinator beyond which it is not analysed here.
const MAX_COMBINATOR_BRANCHES: usize = 64;

/// Nesting of `allOf`/`$ref` flattening and of case splits.
const MAX_FLATTEN_NESTING: usize = 12;

/// The in-place applicators this module reads as terms.
const APPLICATORS: &[&str] = &["allOf", "anyOf", "oneOf", "$ref"];

/// One conjunct of a schema read as a conjunction.
#[derive(Clone)]
enum Term<'a> {
    /// A schema object's own keywords without its in-place applicators.
    Bare(At<'a>),
    /// One of these schemas (an `anyOf`, or a `oneOf` read as one).
    Union(Vec<At<'a>>),
}

impl Side {
    fn other(self) -> Side {
        match self {
            Side::Old => Side::New,
            Side::New => Side::Old,
        }
    }
}

fn has_applicator(m: &Map<String, Value>) -> bool {
    APPLICATORS.iter().any(|k| m.contains_key(*k))
}

/// Whether the object constrains nothing once its applicators are left out.
fn bare_is_true(m: &Map<String, Value>) -> bool {
    !m.keys()
        .any(|k| is_assertion(k) && !APPLICATORS.contains(&k.as_str()))
}

impl<'a> Cx<'a> {
    /// After the keyword rules compared `o` with `n` (their changes are
    /// `self.changes[start..]`), try to prove that the subschema as a whole lost nothing,
    /// gained nothing, or both, and lower the directions of those changes accordingly.
    pub(super) fn settle_by_subsumption(
        &mut self,
        o: &At<'a>,
        n: &At<'a>,
        pol: bool,
        depth: usize,
        start: usize,
    ) {
        if self.limit_hit
            || self.subsume_budget == 0
            || !(has_applicator(o.map()) || has_applicator(n.map()))
        {
            return;
        }
        // Matching branches is quadratic (and a case split multiplies): long lists keep
        // the keyword rules' verdict.
        let long = |m: &Map<String, Value>| {
            ["allOf", "anyOf", "oneOf"].iter().any(|k| {
                m.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|b| b.len() > MAX_COMBINATOR_BRANCHES)
            })
        };
        if long(o.map()) || long(n.map()) {
            return;
        }
        let changes = &self.changes[start..];
        if changes
            .iter()
            .any(|c| matches!(c.rule, "limit-exceeded" | "dialect-changed"))
        {
            return;
        }
        let may_widen = changes.iter().any(|c| c.direction.may_widen());
        let may_narrow = changes.iter().any(|c| c.direction.may_narrow());
        if !(may_widen || may_narrow) {
            return;
        }
        // Directions are reported through `pol`; the proofs are about the sets themselves.
        let (need_kept, need_no_gain) = if pol {
            (may_narrow, may_widen)
        } else {
            (may_widen, may_narrow)
        };
        let kept = need_kept && self.subsumes(Side::Old, o, n, depth);
        let no_gain = need_no_gain && !self.limit_hit && self.subsumes(Side::New, n, o, depth);
        if self.limit_hit || !(kept || no_gain) {
            return;
        }
        let (no_narrow, no_widen) = if pol {
            (kept, no_gain)
        } else {
            (no_gain, kept)
        };
        let note = match (kept || !need_kept, no_gain || !need_no_gain) {
            (true, true) => "yet the subschema as a whole accepts exactly the values it did",
            (true, false) => "yet the subschema as a whole still accepts every value it did",
            _ => "yet the subschema as a whole accepts no value it did not",
        };
        for c in &mut self.changes[start..] {
            let widen = c.direction.may_widen() && !no_widen;
            let narrow = c.direction.may_narrow() && !no_narrow;
            let direction = match (widen, narrow) {
                (false, false) => Direction::None,
                (true, false) => Direction::Widening,
                (false, true) => Direction::Narrowing,
                (true, true) => c.direction,
            };
            if direction != c.direction {
                c.direction = direction;
                c.why = format!(
                    "{}; {note} (combinator branches compared by subsumption)",
                    c.why
                );
            }
        }
    }

    /// Whether every instance `a` (on `side`) accepts is accepted by `b` (on the other
    /// side), as far as this procedure can prove.
    fn subsumes(&mut self, side: Side, a: &At<'a>, b: &At<'a>, depth: usize) -> bool {
        let Some(left) = self.terms(side, a, false, 0) else {
            return false;
        };
        let Some(right) = self.terms(side.other(), b, true, 0) else {
            return false;
        };
        right.iter().all(|r| self.implies(side, &left, r, 0, depth))
    }

    fn spend(&mut self) -> bool {
        match self.subsume_budget.checked_sub(1) {
            Some(left) => {
                self.subsume_budget = left;
                true
            }
            None => false,
        }
    }

    /// `x` read as a conjunction of terms; `None` when it cannot be (opaque, malformed,
    /// unresolvable, too deep). `covering` is true on the side that must contain the
    /// other, where an overlapping `oneOf` is not a union.
    fn terms(
        &mut self,
        side: Side,
        x: &At<'a>,
        covering: bool,
        nest: usize,
    ) -> Option<Vec<Term<'a>>> {
        if nest > MAX_FLATTEN_NESTING || !self.spend() {
            return None;
        }
        let x = self.deref(side, x).ok()?;
        let m = match x.v {
            Value::Bool(true) => return Some(Vec::new()),
            Value::Bool(false) => return Some(vec![Term::Bare(x)]),
            Value::Object(m) => m,
            _ => return None,
        };
        if !has_applicator(m) {
            return Some(vec![Term::Bare(x)]);
        }
        if ["unevaluatedProperties", "unevaluatedItems", "$dynamicRef"]
            .iter()
            .any(|k| m.contains_key(*k))
        {
            return None;
        }
        let mut out = Vec::new();
        if !bare_is_true(m) {
            out.push(Term::Bare(x.clone()));
        }
        if let Some(list) = Self::branches(&x, "allOf").ok()? {
            for b in list {
                out.extend(self.terms(side, &b, covering, nest + 1)?);
            }
        }
        if let Some(list) = Self::branches(&x, "anyOf").ok()? {
            out.push(Term::Union(list));
        }
        if let Some(list) = Self::branches(&x, "oneOf").ok()? {
            if covering && list.len() > 1 && !self.pairwise_disjoint(side, &list) {
                return None;
            }
            out.push(Term::Union(list));
        }
        if let Some(r) = m.get("$ref") {
            let target = self.doc(side).resolve(&x.ptr, r.as_str()?)?;
            out.extend(self.terms(side, &target, covering, nest + 1)?);
        }
        Some(out)
    }

    /// Whether the conjunction `left` (on `side`) implies the term `right` (on the other).
    fn implies(
        &mut self,
        side: Side,
        left: &[Term<'a>],
        right: &Term<'a>,
        nest: usize,
        depth: usize,
    ) -> bool {
        if nest > MAX_FLATTEN_NESTING || !self.spend() {
            return false;
        }
        if left
            .iter()
            .any(|t| matches!(t, Term::Bare(x) if self.is_unsatisfiable(x)))
        {
            return true;
        }
        match right {
            Term::Bare(y) => {
                for t in left {
                    if let Term::Bare(x) = t {
                        if self.bare_within(side, x, y, depth) {
                            return true;
                        }
                    }
                }
            }
            Term::Union(ys) => {
                for y in ys {
                    let Some(terms) = self.terms(side.other(), y, true, nest + 1) else {
                        continue;
                    };
                    if terms
                        .iter()
                        .all(|c| self.implies(side, left, c, nest + 1, depth))
                    {
                        return true;
                    }
                }
            }
        }
        // Case split on the first union of the left side.
        let Some(i) = left.iter().position(|t| matches!(t, Term::Union(_))) else {
            return false;
        };
        let Term::Union(branches) = &left[i] else {
            return false;
        };
        for u in branches.clone() {
            let Some(extra) = self.terms(side, &u, false, nest + 1) else {
                return false;
            };
            let mut case: Vec<Term<'a>> = left[..i].to_vec();
            case.extend(left[i + 1..].iter().cloned());
            case.extend(extra);
            if !self.implies(side, &case, right, nest + 1, depth) {
                return false;
            }
        }
        true
    }

    /// Whether bare `x` (on `side`) accepts nothing bare `y` (on the other side) rejects.
    fn bare_within(&mut self, side: Side, x: &At<'a>, y: &At<'a>, depth: usize) -> bool {
        let (o, n) = match side {
            Side::Old => (x, y),
            Side::New => (y, x),
        };
        let direction = self.trial(o, n, depth);
        match side {
            Side::Old => !direction.may_narrow(),
            Side::New => !direction.may_widen(),
        }
    }

    /// Compare `o` with `n` bare, on the side: the changes found are only measured.
    /// Within the trial, a hop met again while it is being compared is assumed to hold
    /// (co-induction, as in the main comparison), so recursive schemas terminate.
    fn trial(&mut self, o: &At<'a>, n: &At<'a>, depth: usize) -> Direction {
        // A trial starts with no assumptions: a reference hop the main comparison already
        // took (and reported) must be compared again here, not assumed equal.
        let seen = std::mem::take(&mut self.seen);
        let start = self.changes.len();
        let visits = self.visits;
        self.cmp_inner(o, n, true, depth + 1, true);
        // A trial costs what it compared: large bare objects use the budget up sooner.
        self.subsume_budget = self.subsume_budget.saturating_sub(self.visits - visits);
        let found: Vec<Change> = self.changes.split_off(start);
        self.seen = seen;
        if self.limit_hit {
            // The limit is a verdict on the whole comparison: keep saying so.
            if let Some(c) = found.into_iter().find(|c| c.rule == "limit-exceeded") {
                self.changes.push(c);
            }
            return Direction::Undecided;
        }
        found
            .iter()
            .fold(Direction::None, |d, c| d.join(c.direction))
    }
}
