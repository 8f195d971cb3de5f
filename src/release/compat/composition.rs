//! `allOf`, `anyOf`, `oneOf`, `not` and `if`/`then`/`else` compared branch by branch:
//! branches are paired (equal ones first), `not` flips the direction, and a changed `if`
//! or an overlapping `oneOf` is undecided. What pairing cannot see — a rewrite from one
//! combinator to another, or a type turned into a union — the subsumption procedure in
//! `subsume` settles afterwards.

use super::*;

impl<'a> Cx<'a> {
    // -- allOf / anyOf / oneOf / not / if ----------------------------------------------

    pub(super) fn branches(at: &At<'a>, key: &str) -> Result<Option<Vec<At<'a>>>, ()> {
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
    pub(super) fn pair(
        o: &[At<'a>],
        n: &[At<'a>],
    ) -> (Vec<(usize, usize)>, Vec<usize>, Vec<usize>) {
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

    pub(super) fn cmp_composition(
        &mut self,
        o: &At<'a>,
        n: &At<'a>,
        pol: bool,
        depth: usize,
        bare: bool,
    ) {
        if !bare {
            self.cmp_combinators(o, n, pol, depth);
        }
        self.cmp_not_and_conditionals(o, n, pol, depth);
    }

    pub(super) fn cmp_combinators(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize) {
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

    pub(super) fn cmp_not_and_conditionals(
        &mut self,
        o: &At<'a>,
        n: &At<'a>,
        pol: bool,
        depth: usize,
    ) {
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
    pub(super) fn cmp_union(
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
    pub(super) fn union_is_true(which: &str, branches: &[At<'a>]) -> bool {
        if which == "any" {
            branches.iter().any(|x| trivially_true(x.v))
        } else {
            branches.len() == 1 && trivially_true(branches[0].v)
        }
    }

    pub(super) fn pairwise_disjoint(&self, side: Side, branches: &[At<'a>]) -> bool {
        (0..branches.len()).all(|i| {
            (i + 1..branches.len()).all(|j| self.disjoint(side, &branches[i], &branches[j], 0))
        })
    }

    /// A sound (incomplete) test that no instance matches both schemas.
    pub(super) fn disjoint(&self, side: Side, a: &At<'a>, b: &At<'a>, depth: usize) -> bool {
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
}
