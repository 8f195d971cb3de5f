//! Shared schemas: definitions several skills take from one file of the workspace.
//!
//! Vendors share definitions across skills (an interface name, an IP prefix, a device
//! reference). The draft delivers every schema inline and self-contained, so a `$ref` to
//! another file cannot reach an agent as written. At build time — and only then — a
//! `$ref` that is a relative file reference (`../../common/network.json#/$defs/prefix`,
//! relative to the referring file) is resolved inside the workspace, never outside it
//! and never from the network; the file it names is embedded into the root schema's
//! `$defs` as an embedded resource with an absolute `$id` derived from its
//! workspace-relative path (`urn:skillbundle:workspace:common/network.json`), and the
//! `$ref` is rewritten to that `$id`. This is what the draft's inline closure allows and
//! what the sourcemeta JSON Schema CLI's `bundle` command does.
//!
//! The digest is computed over the result, so a change to a shared file changes every
//! skill that embeds it, and the release rules ask each of them for its version step.
//! [`Embedded::locate`] maps a pointer into an embedded resource back to the shared
//! file, so findings inside a shared file name that file and line.

use crate::build::workspace;
use crate::finding::{Code, Finding, Location};
use crate::fs::source_file::SourceFile;
use crate::schema::walk::SchemaTree;
use crate::wire::pointer;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// The `$id` prefix of an embedded shared file; the workspace-relative path follows.
pub const URN_PREFIX: &str = "urn:skillbundle:workspace:";

/// At most this many shared files are embedded into one schema.
pub const MAX_SHARED_FILES: usize = 256;

/// The shared files embedded into one schema, by `$id`.
#[derive(Debug, Default)]
pub struct Embedded {
    /// `$id` → the shared file embedded under it.
    pub files: BTreeMap<String, SourceFile>,
}

impl Embedded {
    /// The location of `pointer` (into the schema after embedding) in the shared file
    /// it points into, if it points into one.
    pub fn locate(&self, pointer: &str) -> Option<Location> {
        let tokens = pointer::tokens(pointer)?;
        if tokens.len() < 2 || tokens[0] != "$defs" {
            return None;
        }
        let file = self.files.get(tokens[1].as_ref())?;
        let mut rest = String::new();
        for t in &tokens[2..] {
            pointer::push(&mut rest, t);
        }
        Some(file.locate(&rest))
    }
}

/// A `$ref` value that names a file: no scheme, not a plain fragment.
fn file_reference(reference: &str) -> Option<(&str, Option<&str>)> {
    if reference.starts_with('#') || reference.is_empty() {
        return None;
    }
    let scheme = reference
        .split_once(':')
        .is_some_and(|(s, _)| !s.is_empty() && !s.contains(['/', '#', '?']));
    if scheme {
        return None;
    }
    Some(match reference.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (reference, None),
    })
}

/// The `$ref`s of `schema` that name files, as (pointer to the `$ref`, path, fragment).
/// A `$ref` under a subschema with its own `$id` resolves against that URI, not the
/// file system, and is left alone.
fn file_references(schema: &Value) -> Vec<(String, String, Option<String>)> {
    let tree = SchemaTree::new(schema);
    let mut found = Vec::new();
    for index in 0..tree.len() {
        let Some(Value::String(reference)) = tree.nodes[index].value.get("$ref") else {
            continue;
        };
        let Some((path, fragment)) = file_reference(reference) else {
            continue;
        };
        let mut ancestor = Some(index);
        let mut under_id = false;
        while let Some(i) = ancestor {
            under_id |= tree.nodes[i].value.get("$id").is_some();
            ancestor = tree.nodes[i].parent;
        }
        if !under_id {
            found.push((
                tree.keyword_pointer(index, "$ref"),
                path.to_owned(),
                fragment.map(str::to_owned),
            ));
        }
    }
    found
}

/// A stand-in for the base URI of a schema file whose root has no `$id`: relative `$id`s
/// and `$ref`s are resolved against it only to compare them with each other.
const PLACEHOLDER_BASE: &str = "file:///skillbundle-schema-file/schema.json";

/// The embedded resources of `schema` whose `$id` is relative all the way up (so it
/// resolves against the file's own base URI, as a file `$ref` does): (the `$id` resolved
/// against [`PLACEHOLDER_BASE`], without fragment; the pointer to the resource; the `$id`
/// as written).
fn relative_resources(schema: &Value) -> Vec<(String, String, String)> {
    let tree = SchemaTree::new(schema);
    let mut found = Vec::new();
    for index in 0..tree.len() {
        let Some(Value::String(_)) = tree.nodes[index].value.get("$id") else {
            continue;
        };
        let mut chain = Vec::new();
        let mut ancestor = Some(index);
        while let Some(i) = ancestor {
            if let Some(Value::String(id)) = tree.nodes[i].value.get("$id") {
                chain.push(id.as_str());
            }
            ancestor = tree.nodes[i].parent;
        }
        let mut base = PLACEHOLDER_BASE.to_owned();
        for id in chain.iter().rev() {
            match crate::schema::walk::resolve_uri(&base, id) {
                Some(uri) => base = uri,
                None => break,
            }
        }
        // An absolute `$id` on the way gives an absolute base that no file `$ref`
        // resolved against the placeholder can equal.
        let resolved = base.split('#').next().unwrap_or_default().to_owned();
        found.push((resolved, tree.pointer(index), chain[0].to_owned()));
    }
    found
}

/// Resolve `relative` against the directory `base` (real, inside `real_root`) without
/// ever leaving the workspace: the workspace-relative path, with `/` separators.
fn workspace_path(real_root: &Path, base: &Path, relative: &str) -> Result<String, &'static str> {
    let rel = Path::new(relative);
    if rel.is_absolute() || relative.contains('\\') {
        return Err("a shared schema reference must be a relative path with `/` separators");
    }
    let mut parts: Vec<String> = match base.strip_prefix(real_root) {
        Ok(inside) => inside
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect(),
        Err(_) => return Err("the referring file is outside the workspace"),
    };
    for c in rel.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err("the reference leaves the workspace; shared schemas must be files inside it");
                }
            }
            _ => return Err("a shared schema reference must be a relative path"),
        }
    }
    Ok(parts.join("/"))
}

/// Embed every shared file `schema` refers to, transitively, and rewrite the
/// references. `schema_real` is the referring file on disk; `root` is the workspace as
/// given (for display paths). Findings are located in the file that holds the `$ref`.
pub fn embed(
    schema: &mut Value,
    source: &SourceFile,
    schema_real: &Path,
    root: &Path,
    limits: &crate::schema::limits::Limits,
) -> Result<Embedded, Vec<Finding>> {
    let mut embedded = Embedded::default();
    if file_references(schema).is_empty() {
        return Ok(embedded);
    }
    let real_root = root.canonicalize().map_err(|e| {
        vec![Finding::at_file(
            Code::Io,
            format!("the workspace cannot be opened: {e}"),
            root,
        )]
    })?;
    let mut findings = Vec::new();
    let mut resources: BTreeMap<String, Value> = BTreeMap::new();
    // Files to process: (their value, their real path, their source for locations, $id).
    let mut pending: Vec<(Value, PathBuf, SourceFile, Option<String>)> = vec![(
        std::mem::take(schema),
        schema_real.to_path_buf(),
        source.clone(),
        None,
    )];
    let mut root_value = None;
    while let Some((mut value, real, file, id)) = pending.pop() {
        let base = real.parent().unwrap_or(&real_root).to_path_buf();
        let relative_ids = relative_resources(&value);
        for (at, path, fragment) in file_references(&value) {
            let fail = |message: &str| Finding::new(Code::PathInvalid, message, file.locate(&at));
            let names = crate::schema::walk::resolve_uri(PLACEHOLDER_BASE, &path);
            if let Some((_, pointer, id)) = relative_ids
                .iter()
                .find(|(r, ..)| Some(r) == names.as_ref())
            {
                let file_reading = match workspace_path(&real_root, &base, &path) {
                    Ok(rel) => format!("the workspace file {}", root.join(rel).display()),
                    Err(_) => format!("a workspace file {path:?} beside this schema"),
                };
                findings.push(
                    Finding::new(
                        Code::RefAmbiguous,
                        format!(
                            "`$ref` {path:?} is ambiguous: JSON Schema resolves it to the embedded resource at {pointer} (whose `$id` is {id:?}), while as a shared-schema reference it names {file_reading}; refusing to guess"
                        ),
                        file.locate(&at),
                    )
                    .with_help(
                        "give the embedded resource an absolute `$id` (the draft requires one of every embedded resource a `$ref` targets, e.g. urn:example:...) and refer to it by that; or rename it so the `$ref` names only the file",
                    ),
                );
                continue;
            }
            let rel = match workspace_path(&real_root, &base, &path) {
                Ok(rel) => rel,
                Err(message) => {
                    findings.push(fail(message));
                    continue;
                }
            };
            let target = real_root.join(&rel);
            let target_real = match target.canonicalize() {
                Ok(t) if t.starts_with(&real_root) && t.is_file() => t,
                Ok(_) => {
                    findings.push(fail(
                        "the referenced file is not a regular file inside the workspace",
                    ));
                    continue;
                }
                Err(_) => {
                    findings.push(
                        fail("the referenced file does not exist").with_help(
                            "a file $ref is relative to the file that holds it, e.g. ../../common/network.json#/$defs/ipv4-prefix",
                        ),
                    );
                    continue;
                }
            };
            let target_id = format!("{URN_PREFIX}{rel}");
            if !embedded.files.contains_key(&target_id) && Some(&target_id) != id.as_ref() {
                if embedded.files.len() >= MAX_SHARED_FILES {
                    findings.push(Finding::new(
                        Code::ResourceLimitExceeded,
                        format!("a schema may embed at most {MAX_SHARED_FILES} shared files"),
                        file.locate(&at),
                    ));
                    continue;
                }
                let display = root.join(&rel);
                match workspace::read_value(
                    &target_real,
                    &display,
                    limits.max_schema_bytes,
                    limits.max_depth,
                ) {
                    Ok((shared, shared_file)) => {
                        if !shared.is_object() {
                            findings.push(Finding::new(
                                Code::SchemaInvalid,
                                "a shared schema file must hold a JSON Schema object",
                                shared_file.locate(""),
                            ));
                            continue;
                        }
                        if shared.get("$id").is_some() {
                            findings.push(Finding::new(
                                Code::SchemaInvalid,
                                "a shared schema file may not declare `$id`: the build gives it one from its path in the workspace",
                                shared_file.locate("/$id"),
                            ));
                            continue;
                        }
                        embedded
                            .files
                            .insert(target_id.clone(), shared_file.clone());
                        pending.push((shared, target_real, shared_file, Some(target_id.clone())));
                    }
                    Err(f) => {
                        findings.push(f);
                        continue;
                    }
                }
            }
            let rewritten = match fragment {
                Some(f) if !f.is_empty() => format!("{target_id}#{f}"),
                _ => target_id,
            };
            if let Some(slot) = value.pointer_mut(&at) {
                *slot = Value::String(rewritten);
            }
        }
        match id {
            None => root_value = Some(value),
            Some(id) => {
                if let Value::Object(map) = &mut value {
                    let mut with_id = Map::new();
                    with_id.insert("$id".into(), Value::String(id.clone()));
                    with_id.extend(std::mem::take(map));
                    *map = with_id;
                }
                resources.insert(id, value);
            }
        }
    }
    let mut value = root_value.unwrap_or(Value::Bool(false));
    if !findings.is_empty() {
        *schema = value;
        return Err(findings);
    }
    // A schema with a `$ref` is an object: a boolean schema has no keywords.
    if let Value::Object(map) = &mut value {
        let defs = map
            .entry("$defs")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(defs) = defs else {
            *schema = value;
            return Err(vec![Finding::new(
                Code::SchemaInvalid,
                "`$defs` must be an object to receive the shared schemas",
                source.locate("/$defs"),
            )]);
        };
        defs.extend(resources);
    }
    *schema = value;
    Ok(embedded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_file_references() {
        assert_eq!(
            file_reference("../common/net.json#/$defs/p"),
            Some(("../common/net.json", Some("/$defs/p")))
        );
        assert_eq!(file_reference("net.yaml"), Some(("net.yaml", None)));
        assert_eq!(file_reference("#/$defs/p"), None);
        assert_eq!(file_reference("https://example.com/s.json"), None);
        assert_eq!(file_reference("urn:x:y"), None);
    }

    #[test]
    fn paths_never_leave_the_workspace() {
        let root = Path::new("/ws");
        assert_eq!(
            workspace_path(
                root,
                Path::new("/ws/skills/a/schemas"),
                "../../../common/n.json"
            ),
            Ok("common/n.json".into())
        );
        assert!(workspace_path(root, Path::new("/ws/skills"), "../../etc/passwd").is_err());
        assert!(workspace_path(root, Path::new("/ws"), "/etc/passwd").is_err());
    }
}
