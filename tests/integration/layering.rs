//! The library's layers, checked: the agent side never links authoring code, and no two
//! modules import each other (ARCHITECTURE.md's rules, issue #25).
//!
//! Reads every `crate::` path in the library's own code (comments and `#[cfg(test)]`
//! modules aside, which do not ship) and fails naming the file and line of each
//! forbidden import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folders that an agent embeds or that both sides share: none may use the authoring side.
const AGENT_SIDE: &[&str] = &["agent", "client", "card", "registry", "interface"];
const AUTHORING: &[&str] = &["build", "release"];

/// Cycles between top-level folders that exist today and are yet to be cut (each is a
/// module-level one-way import; the folders as a whole still meet both ways). A new
/// cycle fails the test; removing one of these means deleting its line.
const KNOWN_FOLDER_CYCLES: &[(&str, &str)] = &[
    // bundle::release_statement opens a Bundle; bundle::destination reads agent::load.
    ("agent", "bundle"),
    // agent::fetch pulls through registry; registry::referrers reads agent::load.
    ("agent", "registry"),
    // build::pipeline runs the release rules; release reads build's manifests.
    ("build", "release"),
];

struct Import {
    from: Vec<String>,
    to: Vec<String>,
    file: PathBuf,
    line: usize,
}

fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            // The binary is a crate of its own.
            if path.file_name().is_some_and(|n| n == "bin") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::a::b::c` path in `line`, as its segments.
fn crate_paths(line: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        let after = &rest[at + "crate::".len()..];
        let end = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(after.len());
        if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            let path: Vec<String> = after[..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            if !path.is_empty() {
                paths.push(path);
            }
        }
        rest = &after[end..];
    }
    paths
}

fn imports() -> (BTreeSet<Vec<String>>, Vec<Import>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut found = Vec::new();
    for file in &files {
        let from = module_of(&src, file);
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#[cfg(test)]") {
                break;
            }
            if code.starts_with("//") {
                continue;
            }
            for path in crate_paths(line) {
                // The longest prefix of the path that is a module of the library.
                let to = (1..=path.len())
                    .rev()
                    .map(|k| path[..k].to_vec())
                    .find(|p| modules.contains(p));
                if let Some(to) = to.filter(|to| *to != from) {
                    found.push(Import {
                        from: from.clone(),
                        to,
                        file: file.clone(),
                        line: n + 1,
                    });
                }
            }
        }
    }
    // A parser that found nothing would pass every rule: the library has hundreds.
    assert!(
        found.len() > 100,
        "only {} imports found under src/",
        found.len()
    );
    (modules, found)
}

fn at(i: &Import) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    format!(
        "{}:{}",
        i.file.strip_prefix(root).unwrap().display(),
        i.line
    )
}

#[test]
fn the_agent_side_never_uses_the_authoring_side() {
    let (_, found) = imports();
    let broken: Vec<String> = found
        .iter()
        .filter(|i| {
            AGENT_SIDE.contains(&i.from[0].as_str()) && AUTHORING.contains(&i.to[0].as_str())
        })
        .map(|i| {
            format!(
                "{}: {} uses crate::{}",
                at(i),
                i.from.join("::"),
                i.to.join("::")
            )
        })
        .collect();
    assert!(
        broken.is_empty(),
        "forbidden imports:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_two_modules_import_each_other() {
    let (_, found) = imports();
    let mut edges: BTreeMap<(&[String], &[String]), &Import> = BTreeMap::new();
    for i in &found {
        edges.entry((&i.from, &i.to)).or_insert(i);
    }
    let broken: Vec<String> = edges
        .iter()
        .filter(|((a, b), _)| a < b && edges.contains_key(&(*b, *a)))
        .map(|((a, b), i)| {
            let back = edges[&(*b, *a)];
            format!(
                "{} <-> {}: {} and {}",
                a.join("::"),
                b.join("::"),
                at(i),
                at(back)
            )
        })
        .collect();
    assert!(
        broken.is_empty(),
        "modules importing each other:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_new_cycle_between_folders() {
    let (_, found) = imports();
    let mut edges: BTreeMap<(&str, &str), &Import> = BTreeMap::new();
    for i in found
        .iter()
        .filter(|i| !i.from.is_empty() && i.from[0] != i.to[0])
    {
        edges
            .entry((i.from[0].as_str(), i.to[0].as_str()))
            .or_insert(i);
    }
    let broken: Vec<String> = edges
        .iter()
        .filter(|((a, b), _)| a < b && edges.contains_key(&(*b, *a)))
        .filter(|((a, b), _)| !KNOWN_FOLDER_CYCLES.contains(&(*a, *b)))
        .map(|((a, b), i)| format!("{a} <-> {b}: {} and {}", at(i), at(edges[&(*b, *a)])))
        .collect();
    assert!(
        broken.is_empty(),
        "new cycles between folders:\n{}",
        broken.join("\n")
    );
}
