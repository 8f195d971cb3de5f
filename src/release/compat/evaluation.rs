//! What `unevaluatedProperties` and `unevaluatedItems` depend on. They apply to the
//! members and items that no adjacent keyword and no in-place applicator below (through
//! `$ref`s, into the branches that pass) evaluated, so a change there can move values in
//! or out of the accepted set while accepting the same values itself: `items: true`
//! inside an `allOf`, an `if` with no `then`, a `contains` whose matches become
//! evaluated. The accepted sets of the parts cannot decide such a change, so the
//! comparison asks a plainer question — are the parts the same schemas — and anything
//! but "yes" leaves the verdict undecided.

use super::*;
use crate::schema::walk;

/// Schema nodes looked at before the answer becomes "may differ".
const BUDGET: usize = 20_000;

impl<'a> Cx<'a> {
    /// Whether what the `unevaluated*` keywords of `o` and `n` see may differ between
    /// the two: the in-place applicators, and `contains` next to `unevaluatedItems`.
    /// (`properties`, `patternProperties`, `additionalProperties`, `prefixItems` and
    /// `items` next to them are compared position by position in their own modules.)
    pub(super) fn evaluation_may_differ(&self, o: &At<'a>, n: &At<'a>) -> bool {
        let items = |at: &At<'a>| at.v.get("unevaluatedItems").is_some();
        let contains: &[&str] = if items(o) || items(n) {
            &["contains"]
        } else {
            &[]
        };
        let mut walk = Same {
            cx: self,
            seen: HashSet::new(),
            budget: BUDGET,
        };
        !IN_PLACE
            .iter()
            .chain(contains)
            .all(|k| walk.member(o, n, k))
    }
}

/// A lockstep walk over two schemas, the old one in the old document and the new one in
/// the new, asking whether they are the same schema up to annotations.
struct Same<'c, 'a> {
    cx: &'c Cx<'a>,
    /// Reference targets already being compared: assumed the same (co-induction), so
    /// cycles end.
    seen: HashSet<(String, String)>,
    budget: usize,
}

impl<'a> Same<'_, 'a> {
    fn schema(&mut self, o: &At<'a>, n: &At<'a>) -> bool {
        self.budget = match self.budget.checked_sub(1) {
            Some(b) => b,
            None => return false,
        };
        match (o.v, n.v) {
            (Value::Object(om), Value::Object(nm)) => {
                // Annotations and unknown keywords evaluate nothing.
                let keys = |m: &'a Map<String, Value>| m.keys().filter(|k| is_assertion(k));
                keys(om).count() == keys(nm).count() && keys(om).all(|k| self.member(o, n, k))
            }
            (a, b) => a == b,
        }
    }

    /// Whether the keyword `k` is the same in `o` and `n` (absent from both counts).
    fn member(&mut self, o: &At<'a>, n: &At<'a>, k: &str) -> bool {
        let (a, b) = match (o.get(k), n.get(k)) {
            (None, None) => return true,
            (Some(a), Some(b)) => (a, b),
            _ => return false,
        };
        match k {
            "$ref" => self.follow(o, n, &a, &b),
            // A dynamic reference lands where the dynamic scope says; with the same
            // text and the same dynamic anchors everywhere it lands on the same place.
            "$dynamicRef" => {
                self.cx.old.same_dynamic_anchors(&self.cx.new) && self.follow(o, n, &a, &b)
            }
            _ if walk::SINGLE.contains(&k) => self.schema(&a, &b),
            _ if walk::ARRAY.contains(&k) => match (a.v, b.v) {
                (Value::Array(x), Value::Array(y)) => {
                    x.len() == y.len()
                        && (0..x.len()).all(|i| match (a.index(i), b.index(i)) {
                            (Some(p), Some(q)) => self.schema(&p, &q),
                            _ => false,
                        })
                }
                _ => false,
            },
            _ if walk::OBJECT.contains(&k) => match (a.v, b.v) {
                (Value::Object(x), Value::Object(y)) => {
                    x.len() == y.len()
                        && x.keys().all(|name| match (a.get(name), b.get(name)) {
                            (Some(p), Some(q)) => self.schema(&p, &q),
                            _ => false,
                        })
                }
                _ => false,
            },
            _ => json_eq(a.v, b.v),
        }
    }

    /// Follow the reference `a` (in `o`, old document) and `b` (in `n`, new document).
    fn follow(&mut self, o: &At<'a>, n: &At<'a>, a: &At<'a>, b: &At<'a>) -> bool {
        let (Some(ra), Some(rb)) = (a.v.as_str(), b.v.as_str()) else {
            return false;
        };
        let (Some(ta), Some(tb)) = (
            self.cx.old.resolve(&o.ptr, ra),
            self.cx.new.resolve(&n.ptr, rb),
        ) else {
            return false;
        };
        if !self.seen.insert((ta.ptr.clone(), tb.ptr.clone())) {
            return true;
        }
        self.schema(&ta, &tb)
    }
}
