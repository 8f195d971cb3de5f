//! Array keywords. `prefixItems` and `items` decide together what each position may
//! hold, and `contains` with `minContains`/`maxContains`, so they are compared as groups;
//! the counts are monotone on their own.

use super::*;

impl<'a> Cx<'a> {
    // -- arrays ------------------------------------------------------------------------

    pub(super) fn items_rest(&self, at: &At<'a>) -> Residual<'a> {
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

    pub(super) fn cmp_arrays(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize) {
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
}
