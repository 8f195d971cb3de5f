//! Inline-reference closure: every `$ref` and `$dynamicRef` must stay inside the schema.
//!
//! The draft ("Deliver schemas inline in version 1.0") requires every reference in an
//! inline schema to resolve to the root, one of its subschemas, or an embedded schema
//! resource contained in that same value, and every embedded resource used as a target to
//! identify itself with an absolute `$id`. Nothing may be fetched — not from the network,
//! not from disk, and not even the 2020-12 meta-schema by URI. A validator with retrieval
//! disabled would also refuse such a schema, but only with an opaque compile error and
//! only for the first reference; this check explains every offending reference and points
//! at its `$ref` keyword.
//!
//! It implements the 2020-12 base-URI rules itself rather than asking the validator: walk
//! the subschemas (see the `walk` module) keeping the base URI in effect (the root `$id` when
//! present, otherwise [`ROOT_BASE_URI`]), record every resource (`$id`, resolved against
//! its parent's base) and every anchor (`$anchor`, `$dynamicAnchor`) of each resource, then
//! resolve each reference (RFC 3986, with the `referencing` crate's resolver) and check
//! that its target exists: the resource is in the value, and the fragment is empty, a JSON
//! Pointer that exists inside that resource, or a plain-name anchor defined in it. A
//! pointer that lands outside the ordinary keyword positions (an unknown keyword, say)
//! makes that value a schema too, so it is walked and its own references are checked.
//!
//! `$dynamicRef` is checked by its static target: dynamic scope only ever contains
//! resources of this same value once all static targets are inside it.

use super::{dialect::DRAFT_2020_12, walk::SchemaTree};
use crate::finding::{Code, Finding, Location};
use crate::wire::pointer;
use referencing::UriRef;
use serde_json::Value;
use std::collections::HashMap;

/// The base URI of a schema whose root has no absolute `$id` (the same default base the
/// `referencing` crate uses, so both resolve relative references identically).
pub const ROOT_BASE_URI: &str = "json-schema:///";

/// The two reference keywords of draft 2020-12.
pub const REFERENCE_KEYWORDS: [&str; 2] = ["$ref", "$dynamicRef"];

/// Check that every reference in `schema` resolves inside it.
///
/// Findings: [`Code::RefExternal`] for a reference whose resource is not in the value,
/// [`Code::RefUnresolved`] for bad syntax, a dangling pointer, a missing anchor, a target
/// that is not a schema, or a target inside an embedded resource whose `$id` is relative;
/// [`Code::SchemaInvalid`] for an `$id` that is not a URI reference and for a resource URI
/// or an anchor defined twice. Each finding's pointer is that of the offending keyword.
pub fn check(schema: &Value) -> Vec<Finding> {
    check_with(schema, Rules::V1_0)
}

/// Which closure rules apply. [`check`] always applies all of version 1.0's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// An embedded resource used as a reference target must have an absolute `$id`.
    /// Only worth turning off to see what else a schema would be rejected for — the
    /// JSON-Schema-Test-Suite, for one, targets many resources with relative `$id`s.
    pub absolute_target_ids: bool,
}

impl Rules {
    /// The rules of interface version 1.0.
    pub const V1_0: Rules = Rules {
        absolute_target_ids: true,
    };
}

impl Default for Rules {
    fn default() -> Self {
        Rules::V1_0
    }
}

/// [`check`] with a choice of rules.
pub fn check_with(schema: &Value, rules: Rules) -> Vec<Finding> {
    analyze(schema, rules).findings
}

/// What one walk of a schema's references finds: [`check_with`]'s findings and
/// [`ref_chains`]'s chains (which the rules do not change), for a caller that needs both
/// without resolving every reference twice.
#[derive(Debug)]
pub struct Closure {
    /// What the reference rules found.
    pub findings: Vec<Finding>,
    /// The reference chains, for the resource limits ([`ref_chains`]).
    pub chains: RefChains,
}

/// [`check_with`] and [`ref_chains`] from one analysis.
pub fn analyze(schema: &Value, rules: Rules) -> Closure {
    let analysis = Analysis::run(schema, rules);
    let chains = analysis.chains();
    Closure {
        findings: analysis.findings,
        chains,
    }
}

/// The reference chains of a schema, for the resource limits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RefChains {
    /// The most reference hops taken in a row without reaching a schema that has no
    /// reference of its own (0 when the schema has no resolvable reference).
    pub longest: usize,
    /// The pointer of the reference keyword where a longest chain starts.
    pub longest_from: Option<String>,
    /// The pointer of a reference keyword on a cycle: schemas whose references lead back
    /// to themselves without ever leaving the instance location being evaluated.
    pub cycle: Option<String>,
}

/// Measure the reference chains in `schema`: follow each resolvable reference to its
/// target while the target itself carries a `$ref`/`$dynamicRef`. Runs in time linear in
/// the number of references and always terminates (a cycle is reported, not followed).
/// References that do not resolve are ignored here; [`check`] reports them.
pub fn ref_chains(schema: &Value) -> RefChains {
    analyze(schema, Rules::V1_0).chains
}

/// A schema resource: the root, or a subschema with `$id`.
#[derive(Debug)]
struct Resource {
    /// Its absolute URI, normalized, without fragment.
    uri: String,
    node: usize,
    /// Whether the `$id` that named it is an absolute URI (the root always counts).
    absolute: bool,
}

#[derive(Debug)]
struct RefSite {
    node: usize,
    keyword: &'static str,
    /// The target node, when the reference resolved.
    target: Option<usize>,
}

struct Analysis<'a> {
    rules: Rules,
    tree: SchemaTree<'a>,
    resources: Vec<Resource>,
    resource_by_uri: HashMap<String, usize>,
    /// The resource each node belongs to (parallel to `tree.nodes`).
    resource_of: Vec<usize>,
    /// Resource of an extra walk root (a node a pointer reached outside keyword positions).
    extra_roots: HashMap<usize, usize>,
    anchors: HashMap<(usize, String), usize>,
    refs: Vec<RefSite>,
    findings: Vec<Finding>,
}

fn finding(code: Code, message: String, pointer: String) -> Finding {
    Finding::new(code, message, Location::default().with_pointer(pointer))
}

/// Split an absolute URI into the part before `#` and the (still encoded) fragment.
fn split_fragment(uri: &str) -> (&str, Option<&str>) {
    match uri.split_once('#') {
        Some((resource, fragment)) => (resource, Some(fragment)),
        None => (uri, None),
    }
}

impl<'a> Analysis<'a> {
    fn run(schema: &'a Value, rules: Rules) -> Self {
        let tree = SchemaTree::new(schema);
        let mut analysis = Analysis {
            rules,
            tree,
            resources: Vec::new(),
            resource_by_uri: HashMap::new(),
            resource_of: Vec::new(),
            extra_roots: HashMap::new(),
            anchors: HashMap::new(),
            refs: Vec::new(),
            findings: Vec::new(),
        };
        analysis.index_new_nodes();
        let mut next = 0;
        while next < analysis.refs.len() {
            analysis.resolve_site(next);
            next += 1;
        }
        analysis
    }

    /// Record resources, anchors and reference sites of nodes not yet indexed.
    fn index_new_nodes(&mut self) {
        for index in self.resource_of.len()..self.tree.len() {
            let node = &self.tree.nodes[index];
            let value = node.value;
            let inherited = if index == 0 {
                None
            } else if let Some(&resource) = self.extra_roots.get(&index) {
                Some(resource)
            } else {
                node.parent.map(|parent| self.resource_of[parent])
            };
            let resource = self.resource_for(index, value, inherited);
            self.resource_of.push(resource);
            let Value::Object(map) = value else {
                continue;
            };
            for keyword in ["$anchor", "$dynamicAnchor"] {
                if let Some(Value::String(name)) = map.get(keyword) {
                    match self.anchors.get(&(resource, name.clone())) {
                        Some(&other) if other != index => self.findings.push(finding(
                            Code::SchemaInvalid,
                            format!(
                                "anchor `{name}` is defined twice in schema resource `{}`",
                                self.resources[resource].uri
                            ),
                            self.tree.keyword_pointer(index, keyword),
                        )),
                        _ => {
                            self.anchors.insert((resource, name.clone()), index);
                        }
                    }
                }
            }
            for keyword in REFERENCE_KEYWORDS {
                if map.contains_key(keyword) {
                    self.refs.push(RefSite {
                        node: index,
                        keyword,
                        target: None,
                    });
                }
            }
        }
    }

    /// The resource node `index` belongs to, creating one when it carries `$id`.
    fn resource_for(&mut self, index: usize, value: &Value, inherited: Option<usize>) -> usize {
        let base = inherited.map_or(ROOT_BASE_URI, |r| self.resources[r].uri.as_str());
        let id = match value.get("$id") {
            Some(Value::String(id)) => Some(id),
            _ => None,
        };
        let resolved = id.and_then(|id| match super::walk::resolve_uri(base, id) {
            Some(uri) => Some((split_fragment(&uri).0.to_owned(), id)),
            None => {
                self.findings.push(finding(
                    Code::SchemaInvalid,
                    format!("`$id` value `{id}` is not a valid URI reference"),
                    self.tree.keyword_pointer(index, "$id"),
                ));
                None
            }
        });
        let (uri, absolute) = match (resolved, inherited) {
            (Some((uri, id)), _) => {
                let absolute = UriRef::parse(id.as_str()).is_ok_and(|id| id.has_scheme());
                (uri, absolute)
            }
            (None, Some(resource)) => return resource,
            (None, None) => (ROOT_BASE_URI.to_owned(), true),
        };
        let is_root = index == 0;
        if let Some(&existing) = self.resource_by_uri.get(&uri) {
            // The first definition stays the one references reach; the duplicate still
            // sets the base URI of its own subschemas.
            self.findings.push(finding(
                Code::SchemaInvalid,
                format!(
                    "schema resource `{uri}` is defined twice (first at `{}`)",
                    self.tree.pointer(self.resources[existing].node)
                ),
                self.tree.keyword_pointer(index, "$id"),
            ));
        }
        let resource = self.resources.len();
        self.resources.push(Resource {
            uri: uri.clone(),
            node: index,
            absolute: absolute || is_root,
        });
        self.resource_by_uri.entry(uri).or_insert(resource);
        resource
    }

    fn resolve_site(&mut self, site: usize) {
        let RefSite { node, keyword, .. } = self.refs[site];
        // Pointers are built only for findings: on a deeply nested schema, building one
        // per reference would cost time quadratic in the depth.
        let at = |tree: &SchemaTree| tree.keyword_pointer(node, keyword);
        match self.target_of(node, keyword) {
            Ok(target) => {
                let resource = &self.resources[self.resource_of[target]];
                if self.rules.absolute_target_ids && !resource.absolute {
                    let id = self.tree.nodes[resource.node].value["$id"]
                        .as_str()
                        .unwrap_or_default();
                    self.findings.push(
                        finding(
                            Code::RefUnresolved,
                            format!(
                                "`{keyword}` targets the embedded schema resource at `{}`, whose \
                                 `$id` `{id}` is relative; version 1.0 requires an embedded \
                                 resource used as a reference target to declare an absolute URI",
                                self.tree.pointer(resource.node)
                            ),
                            at(&self.tree),
                        )
                        .with_help("give that resource an absolute `$id`, e.g. `urn:example:name`"),
                    );
                }
                self.refs[site].target = Some(target);
            }
            Err((code, message)) => {
                let mut found = finding(code, message, at(&self.tree));
                if code == Code::RefExternal {
                    found = found.with_help(
                        "embed the referenced schema (under `$defs`, with an absolute `$id`) \
                         and refer to it inside this schema",
                    );
                }
                self.findings.push(found);
            }
        }
    }

    /// Resolve the reference at `node`/`keyword` to the node of its target.
    fn target_of(&mut self, node: usize, keyword: &str) -> Result<usize, (Code, String)> {
        let unresolved = |message: String| (Code::RefUnresolved, message);
        let Some(reference) = self.tree.nodes[node].value[keyword].as_str() else {
            return Err(unresolved(format!("`{keyword}` must be a string")));
        };
        let base = &self.resources[self.resource_of[node]].uri;
        let Some(resolved) = super::walk::resolve_uri(base, reference) else {
            return Err(unresolved(format!(
                "`{reference}` is not a valid URI reference"
            )));
        };
        let (resource_uri, fragment) = split_fragment(&resolved);
        let Some(&resource) = self.resource_by_uri.get(resource_uri) else {
            let message = if resource_uri == DRAFT_2020_12 {
                format!(
                    "`{reference}` refers to the draft 2020-12 meta-schema, which is not part \
                     of this schema; version 1.0 allows only references inside the inline schema"
                )
            } else {
                format!(
                    "`{reference}` resolves to `{resource_uri}`, which is not a schema resource \
                     inside this schema; version 1.0 forbids retrieving schemas from anywhere else"
                )
            };
            return Err((Code::RefExternal, message));
        };
        let Some(fragment) = pointer::percent_decode(fragment.unwrap_or_default()) else {
            return Err(unresolved(format!(
                "`{reference}` has a fragment that is not valid percent-encoded UTF-8"
            )));
        };
        let resource_node = self.resources[resource].node;
        if fragment.is_empty() {
            return Ok(resource_node);
        }
        if !fragment.starts_with('/') {
            return self
                .anchors
                .get(&(resource, fragment.clone()))
                .copied()
                .ok_or_else(|| {
                    unresolved(format!(
                        "`{reference}`: no anchor `{fragment}` in schema resource `{}`",
                        self.resources[resource].uri
                    ))
                });
        }
        let Some(tokens) = pointer::tokens(&fragment) else {
            return Err(unresolved(format!(
                "`{reference}`: `{fragment}` is not a valid JSON Pointer"
            )));
        };
        // Follow the pointer, remembering the deepest walked schema on the way: its
        // resource is the base for anything found below it.
        let mut value = self.tree.nodes[resource_node].value;
        let mut deepest = resource_node;
        for token in &tokens {
            let Some(next) = pointer::step(value, token) else {
                return Err(unresolved(format!(
                    "`{reference}`: JSON Pointer `{fragment}` does not exist in schema \
                     resource `{}`",
                    self.resources[resource].uri
                )));
            };
            value = next;
            if let Some(index) = self.tree.index_of(value) {
                deepest = index;
            }
        }
        if let Some(index) = self.tree.index_of(value) {
            return Ok(index);
        }
        if !matches!(value, Value::Object(_) | Value::Bool(_)) {
            return Err(unresolved(format!(
                "`{reference}` points at a value that is not a schema (an object or a boolean)"
            )));
        }
        // A value outside the keyword positions that is used as a schema: walk it too.
        let mut path = self.tree.pointer(resource_node);
        for token in &tokens {
            pointer::push(&mut path, token);
        }
        let first_new = self.tree.len();
        let index = self.tree.add_root(value, path, Some(deepest));
        if index >= first_new {
            self.extra_roots.insert(index, self.resource_of[deepest]);
            self.index_new_nodes();
        }
        Ok(index)
    }

    /// Longest chain and a cycle, by an iterative depth-first search over the nodes that
    /// carry references, following resolved targets that carry references too.
    fn chains(&self) -> RefChains {
        let mut edges: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
        for (site, r) in self.refs.iter().enumerate() {
            if let Some(target) = r.target {
                edges.entry(r.node).or_default().push((target, site));
            }
        }
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            New,
            Active,
            Done(usize),
        }
        let mut state: HashMap<usize, State> = HashMap::new();
        let mut chains = RefChains::default();
        let mut longest_node = None;
        let mut starts: Vec<usize> = edges.keys().copied().collect();
        starts.sort_unstable();
        for start in starts {
            if state.get(&start).copied().unwrap_or(State::New) != State::New {
                continue;
            }
            // Frames: (node, next edge to look at, best depth so far).
            let mut stack: Vec<(usize, usize, usize)> = vec![(start, 0, 0)];
            state.insert(start, State::Active);
            while let Some(frame) = stack.last_mut() {
                let (node, next_edge, best) = *frame;
                let out = edges.get(&node).map_or(&[][..], Vec::as_slice);
                if let Some(&(target, site)) = out.get(next_edge) {
                    frame.1 += 1;
                    if !edges.contains_key(&target) {
                        frame.2 = best.max(1);
                        continue;
                    }
                    match state.get(&target).copied().unwrap_or(State::New) {
                        State::Done(depth) => frame.2 = best.max(depth + 1),
                        State::Active => {
                            frame.2 = best.max(1);
                            if chains.cycle.is_none() {
                                let r = &self.refs[site];
                                chains.cycle = Some(self.tree.keyword_pointer(r.node, r.keyword));
                            }
                        }
                        State::New => {
                            state.insert(target, State::Active);
                            stack.push((target, 0, 0));
                        }
                    }
                } else {
                    stack.pop();
                    state.insert(node, State::Done(best));
                    if best > chains.longest {
                        chains.longest = best;
                        longest_node = Some(node);
                    }
                    if let Some(parent) = stack.last_mut() {
                        parent.2 = parent.2.max(best + 1);
                    }
                }
            }
        }
        chains.longest_from = longest_node.map(|node| {
            let keyword = self
                .refs
                .iter()
                .find(|r| r.node == node)
                .map_or("$ref", |r| r.keyword);
            self.tree.keyword_pointer(node, keyword)
        });
        chains
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codes(schema: &Value) -> Vec<(Code, String)> {
        check(schema)
            .into_iter()
            .map(|f| (f.code, f.location.pointer.unwrap_or_default()))
            .collect()
    }

    fn ok(schema: Value) {
        let findings = check(&schema);
        assert!(findings.is_empty(), "{schema}: {findings:#?}");
    }

    fn one(schema: Value, code: Code, pointer: &str) {
        assert_eq!(codes(&schema), [(code, pointer.to_owned())], "{schema}");
    }

    #[test]
    fn local_pointers() {
        ok(json!({"$defs": {"x": {}}, "properties": {"a": {"$ref": "#/$defs/x"}}}));
        ok(json!({"$ref": "#"}));
        ok(json!({"items": {"$ref": "#/items"}}));
        ok(json!({"$defs": {"f": false}, "$ref": "#/$defs/f"}));
        one(
            json!({"$defs": {"x": {}}, "properties": {"a": {"$ref": "#/$defs/missing"}}}),
            Code::RefUnresolved,
            "/properties/a/$ref",
        );
        one(json!({"$ref": "#/$defs/x/"}), Code::RefUnresolved, "/$ref");
    }

    #[test]
    fn pointer_escapes_and_percent_encoding() {
        let defs = json!({"tilde~field": {}, "slash/field": {}, "percent%field": {}, "a b": {}});
        ok(json!({"$defs": defs, "$ref": "#/$defs/tilde~0field"}));
        ok(json!({"$defs": defs, "$ref": "#/$defs/slash~1field"}));
        ok(json!({"$defs": defs, "$ref": "#/$defs/percent%25field"}));
        ok(json!({"$defs": defs, "$ref": "#/$defs/a%20b"}));
        ok(json!({"$defs": defs, "$ref": "#%2F$defs%2Fa%20b"}));
        one(
            json!({"$defs": defs, "$ref": "#/$defs/slash/field"}),
            Code::RefUnresolved,
            "/$ref",
        );
        one(
            json!({"$defs": defs, "$ref": "#/$defs/tilde~2field"}),
            Code::RefUnresolved,
            "/$ref",
        );
        one(
            json!({"$defs": defs, "$ref": "#/$defs/a b"}),
            Code::RefUnresolved,
            "/$ref",
        );
        one(
            json!({"$defs": defs, "$ref": "#/$defs/%FF"}),
            Code::RefUnresolved,
            "/$ref",
        );
        // The finding pointer escapes the keys on the way to the `$ref`.
        one(
            json!({"properties": {"a/b~": {"$ref": "#/nope"}}}),
            Code::RefUnresolved,
            "/properties/a~1b~0/$ref",
        );
    }

    #[test]
    fn array_indices_are_strict() {
        ok(json!({"allOf": [{}, {"$ref": "#/allOf/0"}]}));
        one(
            json!({"allOf": [{}, {"$ref": "#/allOf/00"}]}),
            Code::RefUnresolved,
            "/allOf/1/$ref",
        );
        one(
            json!({"allOf": [{}, {"$ref": "#/allOf/-"}]}),
            Code::RefUnresolved,
            "/allOf/1/$ref",
        );
        one(
            json!({"allOf": [{}, {"$ref": "#/allOf/2"}]}),
            Code::RefUnresolved,
            "/allOf/1/$ref",
        );
    }

    #[test]
    fn external_references() {
        one(
            json!({"$ref": "https://example.com/x.json"}),
            Code::RefExternal,
            "/$ref",
        );
        one(
            json!({"$ref": "http://example.com/x.json#/a"}),
            Code::RefExternal,
            "/$ref",
        );
        one(
            json!({"$ref": "file:///etc/passwd"}),
            Code::RefExternal,
            "/$ref",
        );
        one(json!({"$ref": "other.json"}), Code::RefExternal, "/$ref");
        one(
            json!({"$ref": "urn:example:thing"}),
            Code::RefExternal,
            "/$ref",
        );
        one(
            json!({"$defs": {"m": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}}),
            Code::RefExternal,
            "/$defs/m/$ref",
        );
        let findings = check(&json!({"$ref": "https://json-schema.org/draft/2020-12/schema"}));
        assert!(findings[0].message.contains("meta-schema"), "{findings:?}");
        // Relative to an absolute root `$id`, a sibling document is still external.
        one(
            json!({"$id": "https://example.com/root.json", "$ref": "other.json"}),
            Code::RefExternal,
            "/$ref",
        );
    }

    #[test]
    fn bad_syntax() {
        one(json!({"$ref": 5}), Code::RefUnresolved, "/$ref");
        one(json!({"$ref": "#/a b"}), Code::RefUnresolved, "/$ref");
        one(json!({"$ref": "http://[bad"}), Code::RefUnresolved, "/$ref");
        one(json!({"$ref": "#/a%zz"}), Code::RefUnresolved, "/$ref");
    }

    #[test]
    fn embedded_resources_with_absolute_ids() {
        let schema = json!({
            "$id": "https://example.com/root.json",
            "$defs": {
                "b": {"$id": "https://example.com/b.json", "$defs": {"c": {"type": "string"}}}
            },
            "properties": {
                "by_uri": {"$ref": "https://example.com/b.json"},
                "by_relative_uri": {"$ref": "b.json"},
                "by_uri_pointer": {"$ref": "https://example.com/b.json#/$defs/c"},
                "root_pointer": {"$ref": "#/$defs/b/$defs/c"},
                "root_by_uri": {"$ref": "https://example.com/root.json"}
            }
        });
        ok(schema);
        // No root `$id`: an embedded resource with an absolute `$id` is still addressable.
        ok(json!({
            "$defs": {"b": {"$id": "urn:example:b", "type": "string"}},
            "$ref": "urn:example:b"
        }));
        // Inside an embedded resource, `#...` is relative to it, not to the root.
        ok(json!({
            "$defs": {
                "x": {"type": "integer"},
                "b": {"$id": "urn:example:b", "$defs": {"x": {}}, "$ref": "#/$defs/x"}
            }
        }));
        one(
            json!({
                "$defs": {"b": {"$id": "urn:example:b", "$ref": "#/$defs/x"}},
                "properties": {"x": {}}
            }),
            Code::RefUnresolved,
            "/$defs/b/$ref",
        );
        // A pointer into the embedded resource, not into the root, is missing.
        one(
            json!({
                "$defs": {"x": {}, "b": {"$id": "urn:example:b"}},
                "$ref": "urn:example:b#/$defs/x"
            }),
            Code::RefUnresolved,
            "/$ref",
        );
    }

    #[test]
    fn relative_id_targets_are_flagged() {
        let schema = json!({
            "$id": "https://example.com/root.json",
            "$defs": {"b": {"$id": "b.json", "type": "string"}},
            "$ref": "b.json"
        });
        let findings = check(&schema);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].code, Code::RefUnresolved);
        assert!(
            findings[0].message.contains("relative"),
            "{}",
            findings[0].message
        );
        // The same resource reached through the root's pointer is still a target in it.
        one(
            json!({"$defs": {"b": {"$id": "b.json"}}, "$ref": "#/$defs/b"}),
            Code::RefUnresolved,
            "/$ref",
        );
        let relaxed = Rules {
            absolute_target_ids: false,
        };
        assert!(check_with(&schema, relaxed).is_empty());
        assert_eq!(Rules::default(), Rules::V1_0);
        // A relative `$id` that nothing targets is not a closure problem.
        ok(json!({"$defs": {"b": {"$id": "b.json"}}, "$ref": "#/$defs"}));
        // The root may identify itself relatively.
        ok(json!({"$id": "root.json", "$defs": {"a": {}}, "$ref": "root.json#/$defs/a"}));
    }

    #[test]
    fn anchors() {
        ok(json!({"$defs": {"a": {"$anchor": "foo"}}, "$ref": "#foo"}));
        ok(json!({
            "$id": "https://example.com/root.json",
            "$defs": {"a": {"$anchor": "foo"}},
            "$ref": "https://example.com/root.json#foo"
        }));
        one(
            json!({"$defs": {"a": {"$anchor": "foo"}}, "$ref": "#bar"}),
            Code::RefUnresolved,
            "/$ref",
        );
        // Anchors belong to their resource.
        let schema = json!({
            "$defs": {"b": {"$id": "urn:example:b", "$defs": {"a": {"$anchor": "foo"}}}},
            "properties": {
                "good": {"$ref": "urn:example:b#foo"},
                "bad": {"$ref": "#foo"}
            }
        });
        assert_eq!(
            codes(&schema),
            [(Code::RefUnresolved, "/properties/bad/$ref".to_owned())]
        );
        one(
            json!({"$defs": {"a": {"$anchor": "x"}, "b": {"$anchor": "x"}}}),
            Code::SchemaInvalid,
            "/$defs/b/$anchor",
        );
        // `$anchor` and `$dynamicAnchor` of the same name on the same schema agree.
        ok(json!({"$defs": {"a": {"$anchor": "x", "$dynamicAnchor": "x"}}, "$ref": "#x"}));
    }

    #[test]
    fn dynamic_references() {
        ok(json!({
            "$id": "https://example.com/tree",
            "$dynamicAnchor": "node",
            "properties": {"children": {"items": {"$dynamicRef": "#node"}}}
        }));
        ok(json!({"$defs": {"a": {"$dynamicAnchor": "items"}}, "$ref": "#items"}));
        one(
            json!({"items": {"$dynamicRef": "#nowhere"}}),
            Code::RefUnresolved,
            "/items/$dynamicRef",
        );
        one(
            json!({"items": {"$dynamicRef": "https://example.com/tree#node"}}),
            Code::RefExternal,
            "/items/$dynamicRef",
        );
    }

    #[test]
    fn references_in_data_are_not_references() {
        ok(json!({
            "enum": [{"$ref": "https://example.com/x"}],
            "const": {"$ref": "#/nope"},
            "default": {"$dynamicRef": "file:///etc/passwd"},
            "examples": [{"$ref": "#/nope"}],
            "x-unknown": {"$ref": "http://example.com"}
        }));
        // An `$id` in data does not create a resource.
        one(
            json!({"enum": [{"$id": "urn:example:fake"}], "$ref": "urn:example:fake"}),
            Code::RefExternal,
            "/$ref",
        );
    }

    #[test]
    fn pointer_into_unknown_keyword_is_walked() {
        ok(json!({"x-unknown": {"type": "integer"}, "properties": {"a": {"$ref": "#/x-unknown"}}}));
        ok(json!({"examples": [{"type": "string"}], "$ref": "#/examples/0"}));
        // Once referenced, the value is a schema and its own references count.
        one(
            json!({
                "x-unknown": {"properties": {"b": {"$ref": "https://example.com/x"}}},
                "$ref": "#/x-unknown"
            }),
            Code::RefExternal,
            "/x-unknown/properties/b/$ref",
        );
        one(json!({"x": 3, "$ref": "#/x"}), Code::RefUnresolved, "/$ref");
    }

    #[test]
    fn ids_resolve_against_the_nearest_parent() {
        ok(json!({
            "$id": "http://example.com/a/b.json",
            "$defs": {
                "c": {
                    "$id": "http://example.com/c/",
                    "$defs": {"d": {"$id": "http://example.com/c/d.json", "type": "integer"}}
                }
            },
            "properties": {"x": {"$ref": "http://example.com/c/d.json"}}
        }));
        one(
            json!({"$id": "urn:example:root", "$defs": {"a": {"$id": "http://[bad"}}}),
            Code::SchemaInvalid,
            "/$defs/a/$id",
        );
        one(
            json!({"$defs": {"a": {"$id": "urn:x"}, "b": {"$id": "urn:x"}}}),
            Code::SchemaInvalid,
            "/$defs/b/$id",
        );
    }

    #[test]
    fn chains_and_cycles() {
        assert_eq!(ref_chains(&json!({})), RefChains::default());
        assert_eq!(
            ref_chains(&json!({"$ref": "#/$defs/a", "$defs": {"a": {}}})).longest,
            1
        );
        let chain = json!({
            "$ref": "#/$defs/a",
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/c"}, "c": {}}
        });
        let chains = ref_chains(&chain);
        assert_eq!((chains.longest, chains.cycle), (3, None));
        assert_eq!(chains.longest_from.as_deref(), Some("/$ref"));
        // Recursion through an applicator is not a chain: `#` has no `$ref` of its own.
        let tree = json!({"properties": {"child": {"$ref": "#"}}});
        let chains = ref_chains(&tree);
        assert_eq!((chains.longest, chains.cycle), (1, None));
        assert_eq!(
            chains.longest_from.as_deref(),
            Some("/properties/child/$ref")
        );
        let cycle = json!({
            "$ref": "#/$defs/a",
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}
        });
        let chains = ref_chains(&cycle);
        assert!(chains.cycle.is_some(), "{chains:?}");
        assert!(check(&cycle).is_empty(), "cycles are not a closure finding");
        assert!(ref_chains(&json!({"$ref": "#"})).cycle.is_some());
    }

    #[test]
    fn long_chain_is_measured_without_recursion() {
        let n = 20_000;
        let mut defs = serde_json::Map::new();
        for i in 0..n {
            defs.insert(
                format!("d{i}"),
                json!({"$ref": format!("#/$defs/d{}", i + 1)}),
            );
        }
        defs.insert(format!("d{n}"), json!({}));
        let schema = json!({"$defs": defs});
        let chains = ref_chains(&schema);
        assert_eq!((chains.longest, chains.cycle), (n, None));
        assert_eq!(chains.longest_from.as_deref(), Some("/$defs/d0/$ref"));
    }
}
