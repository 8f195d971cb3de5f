//! An iterative walk over the subschemas of a draft 2020-12 schema.
//!
//! The closure, dialect and limit checks all need "every place in this value that is a
//! schema" — and only those places: a `$ref` inside an `enum`, `const`, `default` or
//! `examples` value, or inside an unknown keyword, is data, not a reference. The keyword
//! table below is the one the `referencing` crate (used by `jsonschema`) walks for
//! draft 2020-12, so these checks see exactly the subschemas the validator will.
//!
//! The walk keeps an explicit stack and an arena of nodes that point at their parent
//! instead of carrying a pointer string each: a hostile schema nested 100,000 levels deep
//! costs memory linear in its size, never the call stack, and a node's JSON Pointer is
//! only built when a finding needs it.

use crate::wire::pointer;
use serde_json::Value;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Keywords whose value is one subschema.
pub(crate) const SINGLE: &[&str] = &[
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value is an array of subschemas.
pub(crate) const ARRAY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is an object whose member values are subschemas.
pub(crate) const OBJECT: &[&str] = &[
    "$defs",
    "definitions",
    "dependentSchemas",
    "patternProperties",
    "properties",
];

/// Resolve `reference` against the absolute URI `base` (RFC 3986 §5, normalized), with
/// the resolver of the `referencing` crate that `jsonschema` uses: every module that
/// follows references resolves them the way the validator does.
pub(crate) fn resolve_uri(base: &str, reference: &str) -> Option<String> {
    let base = referencing::Uri::parse(base).ok()?;
    referencing::uri::resolve_against(&base, reference)
        .ok()
        .map(|uri| uri.as_str().to_owned())
}

/// In-place applicators: keywords that apply a subschema to the same instance, so what
/// they evaluate counts for the `unevaluated*` keywords of their parent.
pub(crate) const IN_PLACE: &[&str] = &[
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

/// How a node is reached from its parent.
#[derive(Debug, Clone)]
enum Step<'a> {
    /// A walk root, with its full pointer from the document root.
    Root(String),
    /// `parent/keyword`
    Keyword(&'a str),
    /// `parent/keyword/member`
    Member(&'a str, &'a str),
    /// `parent/keyword/index`
    Item(&'a str, usize),
}

#[derive(Debug)]
pub(crate) struct Node<'a> {
    pub(crate) value: &'a Value,
    pub(crate) parent: Option<usize>,
    /// Schema nesting: 0 for a walk root.
    pub(crate) depth: usize,
    step: Step<'a>,
}

/// The subschemas of a schema value, in document (pre-)order. A node's parent always has
/// a smaller index than the node.
#[derive(Debug, Default)]
pub(crate) struct SchemaTree<'a> {
    pub(crate) nodes: Vec<Node<'a>>,
    by_address: HashMap<*const Value, usize, BuildHasherDefault<AddressHasher>>,
}

/// Hashes a node's address with one multiply and a rotation (the scheme of rustc's
/// FxHasher). SipHash, the default, resists keys chosen to collide, which addresses are
/// not (a document's author does not choose where its values are allocated), and hashing
/// was some 5% of loading a bundle, every schema being walked by each check.
#[derive(Default)]
pub(crate) struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    /// Rotated so that the product's well-mixed high bits pick the bucket (an aligned
    /// address's low bits are zero, and so are the product's).
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

impl<'a> SchemaTree<'a> {
    /// Walk `root` and every subschema below it.
    pub(crate) fn new(root: &'a Value) -> Self {
        let mut tree = SchemaTree::default();
        tree.add_root(root, String::new(), None);
        tree
    }

    /// Walk `value` (found at `pointer` in the document) as a schema too, skipping
    /// anything already walked. Returns the index of its node. `parent` is recorded for
    /// nodes that a reference reached outside the ordinary keyword positions.
    pub(crate) fn add_root(
        &mut self,
        value: &'a Value,
        pointer: String,
        parent: Option<usize>,
    ) -> usize {
        if let Some(&index) = self.by_address.get(&(value as *const Value)) {
            return index;
        }
        let depth = parent.map_or(0, |p| self.nodes[p].depth + 1);
        let first = self.nodes.len();
        // Pending nodes, created when popped so that indices follow document order.
        let mut stack = vec![(value, parent, depth, Step::Root(pointer))];
        let mut children = Vec::new();
        while let Some((value, parent, depth, step)) = stack.pop() {
            if self.by_address.contains_key(&(value as *const Value)) {
                continue;
            }
            let index = self.push(value, parent, depth, step);
            let Value::Object(map) = value else {
                continue;
            };
            children.clear();
            for (key, child) in map {
                let key = key.as_str();
                if SINGLE.contains(&key) {
                    children.push((child, Step::Keyword(key)));
                } else if ARRAY.contains(&key) {
                    if let Value::Array(items) = child {
                        for (i, item) in items.iter().enumerate() {
                            children.push((item, Step::Item(key, i)));
                        }
                    }
                } else if OBJECT.contains(&key) {
                    if let Value::Object(members) = child {
                        for (name, member) in members {
                            children.push((member, Step::Member(key, name.as_str())));
                        }
                    }
                }
            }
            stack.extend(
                children
                    .drain(..)
                    .rev()
                    .map(|(child, step)| (child, Some(index), depth + 1, step)),
            );
        }
        first
    }

    fn push(
        &mut self,
        value: &'a Value,
        parent: Option<usize>,
        depth: usize,
        step: Step<'a>,
    ) -> usize {
        let index = self.nodes.len();
        self.nodes.push(Node {
            value,
            parent,
            depth,
            step,
        });
        self.by_address.insert(value as *const Value, index);
        index
    }

    /// The node for this exact value (by address), if it was walked.
    pub(crate) fn index_of(&self, value: &Value) -> Option<usize> {
        self.by_address.get(&(value as *const Value)).copied()
    }

    /// The JSON Pointer of a node, escaped.
    pub(crate) fn pointer(&self, index: usize) -> String {
        let mut steps = Vec::new();
        let mut current = Some(index);
        let mut prefix = "";
        while let Some(i) = current {
            let node = &self.nodes[i];
            if let Step::Root(root) = &node.step {
                prefix = root;
                break;
            }
            steps.push(&node.step);
            current = node.parent;
        }
        let mut out = prefix.to_owned();
        for step in steps.iter().rev() {
            match step {
                Step::Root(_) => {}
                Step::Keyword(k) => pointer::push(&mut out, k),
                Step::Member(k, m) => {
                    pointer::push(&mut out, k);
                    pointer::push(&mut out, m);
                }
                Step::Item(k, i) => {
                    pointer::push(&mut out, k);
                    out.push('/');
                    out.push_str(&i.to_string());
                }
            }
        }
        out
    }

    /// The pointer of keyword `keyword` inside node `index`.
    pub(crate) fn keyword_pointer(&self, index: usize, keyword: &str) -> String {
        pointer::child(&self.pointer(index), keyword)
    }

    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pointers(value: &Value) -> Vec<String> {
        let tree = SchemaTree::new(value);
        (0..tree.len()).map(|i| tree.pointer(i)).collect()
    }

    #[test]
    fn walks_schema_positions_in_document_order() {
        let schema = json!({
            "properties": {"a/b": {"items": true}, "c": {}},
            "allOf": [{"not": {}}, false],
            "$defs": {"d": {"patternProperties": {"^x": {}}}},
            "enum": [{"$ref": "#/nope"}],
            "const": {"properties": {"z": {}}},
            "x-unknown": {"properties": {"y": {}}},
            "dependentRequired": {"a": ["b"]}
        });
        assert_eq!(
            pointers(&schema),
            [
                "",
                "/properties/a~1b",
                "/properties/a~1b/items",
                "/properties/c",
                "/allOf/0",
                "/allOf/0/not",
                "/allOf/1",
                "/$defs/d",
                "/$defs/d/patternProperties/^x",
            ]
        );
    }

    #[test]
    fn add_root_walks_unknown_keyword_once() {
        let schema = json!({"x": {"properties": {"y": {}}}, "properties": {"p": {}}});
        let mut tree = SchemaTree::new(&schema);
        assert_eq!(tree.len(), 2);
        let x = &schema["x"];
        let index = tree.add_root(x, "/x".into(), Some(0));
        assert_eq!(tree.pointer(index), "/x");
        assert_eq!(tree.pointer(tree.len() - 1), "/x/properties/y");
        assert_eq!(tree.add_root(x, "/x".into(), Some(0)), index);
        assert_eq!(tree.len(), 4);
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
        assert_eq!(
            resolve_uri("urn:a:b", "urn:c:d#/x").as_deref(),
            Some("urn:c:d#/x")
        );
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        // 10,000 levels: the walk is a loop over an explicit stack.
        let value = crate::schema::test_util::nest(10_000, "not", json!({}));
        let tree = SchemaTree::new(&value);
        assert_eq!(tree.len(), 10_001);
        assert_eq!(tree.nodes[10_000].depth, 10_000);
        assert!(tree.pointer(3).starts_with("/not/not/not"));
        drop(tree);
        crate::schema::test_util::drop_deep(value);
    }
}
