//! References inside one schema document: an index of its resources (`$id`), anchors and
//! base URIs, used to follow `$ref` (and an unchanged `$dynamicRef`) during the comparison.
//! Subschema positions come from the keyword tables of [`crate::schema::walk`] and URIs
//! are resolved by the resolver the closure check uses, so the comparison follows exactly
//! the references the build accepted.

use super::*;
use crate::schema::walk::{self, resolve_uri};

/// Base URI for a document without an absolute `$id` at its root.
const DEFAULT_BASE: &str = "https://skillbundle.invalid/schema";

pub(super) struct Doc<'a> {
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

impl<'a> Doc<'a> {
    pub(super) fn new(root: &'a Value) -> Self {
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
                let here = crate::wire::pointer::child(&ptr, k);
                if walk::SINGLE.contains(&k.as_str()) {
                    stack.push((sub, here, base.clone()));
                } else if walk::OBJECT.contains(&k.as_str()) {
                    if let Value::Object(entries) = sub {
                        for (name, s) in entries {
                            stack.push((s, crate::wire::pointer::child(&here, name), base.clone()));
                        }
                    }
                } else if walk::ARRAY.contains(&k.as_str()) {
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

    /// Whether every `$dynamicAnchor` is where it was, the same schema: then a
    /// `$dynamicRef` with the same text lands on the same schema in both documents.
    pub(super) fn same_dynamic_anchors(&self, other: &Doc<'_>) -> bool {
        self.dynamic == other.dynamic
    }

    /// The base URI in effect at `ptr` (the nearest enclosing indexed schema's).
    pub(super) fn base_at(&self, ptr: &str) -> &str {
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
    pub(super) fn resolve(&self, from: &str, reference: &str) -> Option<At<'a>> {
        let base = self.base_at(from);
        let absolute = resolve_uri(base, reference)?;
        let (resource, fragment) = match absolute.split_once('#') {
            Some((r, f)) => (r.to_string(), crate::wire::pointer::percent_decode(f)?),
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

impl<'a> Cx<'a> {
    // -- $ref / $dynamicRef ------------------------------------------------------------

    pub(super) fn cmp_refs(&mut self, o: &At<'a>, n: &At<'a>, pol: bool, depth: usize, bare: bool) {
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
            let same = do_ == dn && self.old.same_dynamic_anchors(&self.new);
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
}
