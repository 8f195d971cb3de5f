//! Object keywords. `properties`, `patternProperties` and `additionalProperties` decide
//! together what each member may hold, so a property that appears or vanishes is compared
//! with whatever governed (or now governs) that name; `required`, `dependentRequired`,
//! `dependentSchemas`, `propertyNames` and the counts are monotone on their own.

use super::*;

impl<'a> Cx<'a> {
    // -- objects -----------------------------------------------------------------------

    /// What governs member `name` of `at` when `properties` does not declare it: the
    /// residual schema, or — next to `patternProperties` whose pattern strings are the
    /// same as in `other` (and no `unevaluatedProperties` on either side) — the schema of
    /// the first pattern that matches the name, else `additionalProperties`. A member is
    /// the conjunction of its declared schema and every matching pattern's; each pattern's
    /// schema is also compared with its counterpart on its own, and a conjunction moves
    /// no further than the join of its parts, so comparing with one of them is sound.
    pub(super) fn member_rest(
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

    pub(super) fn props_rest(&self, at: &At<'a>) -> Residual<'a> {
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

    pub(super) fn cmp_objects(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize) {
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
}
