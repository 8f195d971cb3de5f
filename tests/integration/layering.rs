//! The library's layers, checked: the agent side never links authoring code, and no two
//! modules import each other (ARCHITECTURE.md's rules, issue #25).
//!
//! Reads every module path in the library's own code — `crate::a::b`, `super::`- and
//! `self::`-relative paths, `use` groups (`use crate::{a, b::{c, d}}`, across lines), and
//! a child module by its bare name (`use kid::X`, `kid::f()`) — with comments, string literals and
//! `#[cfg(test)]` items left out (they do not ship), and fails naming the file and line of
//! each forbidden import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folders that an agent embeds or that both sides share: none may use the authoring side.
const AGENT_SIDE: &[&str] = &[
    "agent",
    "client",
    "card",
    "registry",
    "interface",
    "gateway",
];
const AUTHORING: &[&str] = &["build", "release"];

/// Cycles between top-level folders that are known and yet to be cut, as (a, b) with
/// a < b. A new cycle fails the test, and so does an entry here that is no longer a cycle
/// (delete its line). None today: the last three were cut in issue #25's follow-up.
const KNOWN_FOLDER_CYCLES: &[(&str, &str)] = &[];

#[derive(Debug)]
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

/// `text` with comments and the contents of string and character literals blanked to
/// spaces (line breaks kept, so byte offsets still give line numbers).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            // Block comments nest in Rust.
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#") || rest.starts_with(b"br"))
            && !(i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && {
                let r = if rest[0] == b'b' { 1 } else { 0 };
                rest.get(r) == Some(&b'r')
                    && rest[r + 1..]
                        .iter()
                        .find(|&&c| c != b'#')
                        .is_some_and(|&c| c == b'"')
            }
        {
            let r = if rest[0] == b'b' { 2 } else { 1 };
            let hashes = rest[r..].iter().take_while(|&&c| c == b'#').count();
            let open = i + r + hashes + 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = b[open..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |n| open + n);
            blank(&mut out, open, end);
            i = end + close.len();
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j.min(b.len()));
            i = j + 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{..}', '"'), or a lifetime ('a).
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|n| n + 3)
            } else {
                let ch = std::str::from_utf8(&rest[1..rest.len().min(5)])
                    .ok()
                    .or_else(|| {
                        (2..5)
                            .rev()
                            .find_map(|k| std::str::from_utf8(rest.get(1..k)?).ok())
                    })
                    .and_then(|s| s.chars().next());
                ch.and_then(|c| {
                    let n = 1 + c.len_utf8();
                    (rest.get(n) == Some(&b'\'')).then_some(n + 1)
                })
            };
            match len {
                Some(n) => {
                    blank(&mut out, i + 1, i + n - 1);
                    i += n;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// `code` with every item marked `#[cfg(test)]` blanked (a `mod tests { … }`, a
/// `mod x;`, a function): test code does not ship.
fn without_test_items(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(test)]").map(|n| from + n) {
        let b = code.as_bytes();
        // The item ends at its first `;` outside braces, or at the brace that closes its body.
        let (mut depth, mut j) = (0i32, at + "#[cfg(test)]".len());
        while j < b.len() {
            match b[j] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        j += 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    j += 1;
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        for c in &mut out[at..j.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = j.min(b.len());
    }
    String::from_utf8(out).unwrap()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Parses one path (or use tree) starting at `i`: returns every full path it names,
/// each with the byte offset of its last segment.
struct PathParser<'a> {
    b: &'a [u8],
    i: usize,
}

impl PathParser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let start = self.i;
        if self.b.get(self.i) == Some(&b'*') {
            self.i += 1;
            return Some("*".into());
        }
        if self.b[start..].starts_with(b"r#") {
            self.i += 2;
        }
        while self.i < self.b.len() && is_ident(self.b[self.i]) {
            self.i += 1;
        }
        (self.i > start).then(|| String::from_utf8_lossy(&self.b[start..self.i]).into_owned())
    }

    fn double_colon(&mut self) -> bool {
        let save = self.i;
        self.skip_ws();
        if self.b[self.i..].starts_with(b"::") {
            self.i += 2;
            true
        } else {
            self.i = save;
            false
        }
    }

    /// A use tree after `prefix`: `a::b`, `a::{b, c::d}`, `{…}`, `self`, `*`, `x as y`.
    fn tree(&mut self, prefix: Vec<String>, out: &mut Vec<(Vec<String>, usize)>) {
        self.skip_ws();
        if self.b.get(self.i) == Some(&b'{') {
            self.i += 1;
            loop {
                self.skip_ws();
                match self.b.get(self.i) {
                    Some(b'}') => {
                        self.i += 1;
                        return;
                    }
                    Some(b',') => self.i += 1,
                    None => return,
                    _ => {
                        let before = self.i;
                        self.tree(prefix.clone(), out);
                        if self.i == before {
                            self.i += 1;
                        }
                    }
                }
            }
        }
        let at = self.i;
        let Some(seg) = self.ident() else {
            // `crate::a::Type::<T>`: the path ends where the segments do.
            if !prefix.is_empty() {
                out.push((prefix, at));
            }
            return;
        };
        let mut path = prefix;
        if seg != "self" || path.is_empty() {
            path.push(seg);
        }
        if self.double_colon() {
            self.tree(path, out);
        } else {
            out.push((path, at));
            // `x as y`: the alias is not a path.
            let save = self.i;
            self.skip_ws();
            if self.b[self.i..].starts_with(b"as")
                && !is_ident(*self.b.get(self.i + 2).unwrap_or(&b' '))
            {
                self.i += 2;
                self.ident();
            } else {
                self.i = save;
            }
        }
    }
}

/// Every module path in `code` (comments, literals and test items already blanked), as
/// absolute segments (relative ones resolved against `module`), with its line.
/// `modules` says which bare first segments of a `use` are child modules.
fn paths_in(
    code: &str,
    module: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Vec<(Vec<String>, usize)> {
    let b = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let resolve = |path: &[String]| -> Option<Vec<String>> {
        let mut base: Vec<String> = module.to_vec();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                // A bare path: a child module of this one, or nothing of the library.
                let mut child = module.to_vec();
                child.push(first.to_string());
                if !modules.contains(&child) {
                    return None;
                }
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    };
    // The names of this module's child modules: a bare path through one of them is the
    // child (a same-named import beside it would not compile).
    let children: Vec<String> = modules
        .iter()
        .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
        .map(|m| m[module.len()].clone())
        .collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b'$' || b[i - 1] == b':');
        if !boundary {
            i += 1;
            continue;
        }
        let rest = &b[i..];
        let word_after =
            |w: &[u8]| rest.starts_with(w) && !rest.get(w.len()).copied().is_some_and(is_ident);
        let mut trees = Vec::new();
        let mut p = PathParser { b, i };
        if word_after(b"use") {
            // A use declaration: bare child-module paths count here too.
            p.i += 3;
            p.tree(Vec::new(), &mut trees);
        } else if ["crate", "super", "self"]
            .into_iter()
            .chain(children.iter().map(String::as_str))
            .any(|k| word_after(k.as_bytes()) && b[i + k.len()..].starts_with(b"::"))
        {
            p.tree(Vec::new(), &mut trees);
            // Outside `use`, the anchored paths and those through a child module
            // (`load::read(…)` in `agent`: how a parent mostly reaches its children) are
            // read; any other bare `x::y` may be another crate's or a type's item.
            trees.retain(|(path, _)| {
                path.first().is_some_and(|first| {
                    matches!(first.as_str(), "crate" | "super" | "self")
                        || (path.len() > 1 && children.contains(first))
                })
            });
        } else {
            i += 1;
            continue;
        }
        for (path, at) in trees {
            if let Some(abs) = resolve(&path) {
                found.push((abs, line_of(at)));
            }
        }
        i = p.i.max(i + 1);
    }
    found
}

/// The child modules `code` declares without `pub` (`mod refs;`): a module split into
/// files, whose parts nothing outside it can name.
fn private_children(code: &str, module: &[String]) -> Vec<Vec<String>> {
    code.lines()
        .filter_map(|l| {
            let name = l.trim().strip_prefix("mod ")?.strip_suffix(';')?.trim();
            let mut child = module.to_vec();
            child.push(name.to_string());
            Some(child)
        })
        .collect()
}

struct Library {
    imports: Vec<Import>,
    /// (parent, child) for every private child module.
    private: BTreeSet<(Vec<String>, Vec<String>)>,
}

fn library() -> Library {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut found = Vec::new();
    let mut private = BTreeSet::new();
    for file in &files {
        let from = module_of(&src, file);
        let text = std::fs::read_to_string(file).unwrap();
        let code = without_test_items(&code_only(&text));
        for child in private_children(&code, &from) {
            private.insert((from.clone(), child));
        }
        for (path, line) in paths_in(&code, &from, &modules) {
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
                    line,
                });
            }
        }
    }
    // A parser that found nothing would pass every rule: the library has hundreds.
    assert!(
        found.len() > 100,
        "only {} imports found under src/",
        found.len()
    );
    Library {
        imports: found,
        private,
    }
}

fn at(i: &Import) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    format!(
        "{}:{}",
        i.file.strip_prefix(root).unwrap().display(),
        i.line
    )
}

fn folder_edges(found: &[Import]) -> BTreeMap<(&str, &str), &Import> {
    let mut edges: BTreeMap<(&str, &str), &Import> = BTreeMap::new();
    for i in found
        .iter()
        .filter(|i| !i.from.is_empty() && !i.to.is_empty() && i.from[0] != i.to[0])
    {
        edges
            .entry((i.from[0].as_str(), i.to[0].as_str()))
            .or_insert(i);
    }
    edges
}

#[test]
fn the_parser_sees_every_form_of_module_path() {
    let modules: BTreeSet<Vec<String>> = [
        vec![],
        vec!["a".to_string()],
        vec!["a".to_string(), "b".to_string()],
        vec!["a".to_string(), "b".to_string(), "kid".to_string()],
        vec!["c".to_string()],
        vec!["c".to_string(), "d".to_string()],
    ]
    .into_iter()
    .collect();
    let here = vec!["a".to_string(), "b".to_string()];
    let text = r#"
use crate::{c, c::d::{self, X as Y}};
use super::Thing;
use self::kid::K;
use kid::{L, M};
use std::fmt; // not the library
fn f() -> crate::c::d::Z { let s = "crate::in_a_string::X"; super::super::c::W }
// use crate::in_a_comment;
/* use crate::in_a_block /* nested */ comment; */
let q = '"'; let t = crate::c::T;
fn g() { kid::run(); other::skip(); kid(); c::not_a_child(); }
#[cfg(test)]
mod tests { use crate::in_a_test::X; }
"#;
    let code = without_test_items(&code_only(text));
    let found: Vec<(String, usize)> = paths_in(&code, &here, &modules)
        .into_iter()
        .map(|(p, line)| (p.join("::"), line))
        .collect();
    let want: Vec<(String, usize)> = [
        ("c", 2),
        ("c::d", 2),
        ("c::d::X", 2),
        ("a::Thing", 3),
        ("a::b::kid::K", 4),
        ("a::b::kid::L", 5),
        ("a::b::kid::M", 5),
        ("c::d::Z", 7),
        ("c::W", 7),
        ("c::T", 10),
        ("a::b::kid::run", 11),
    ]
    .into_iter()
    .map(|(p, l)| (p.to_string(), l))
    .collect();
    assert_eq!(found, want);
}

#[test]
fn the_agent_side_never_uses_the_authoring_side() {
    let found = library().imports;
    let broken: Vec<String> = found
        .iter()
        .filter(|i| {
            !i.from.is_empty()
                && !i.to.is_empty()
                && AGENT_SIDE.contains(&i.from[0].as_str())
                && AUTHORING.contains(&i.to[0].as_str())
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

/// A module and its private children (`mod refs;` in `release/compat/mod.rs`) are one
/// module split into files: the children share the parent's private context, and nothing
/// outside can name them. Every other pair counts, a public child and its parent too: a
/// `pub mod` is a module of its own that others may import, and a two-way import with its
/// parent makes neither usable without the other. (A child importing its parent alone is
/// one edge, never a pair.) The parent's side is mostly a bare `child::f()`, which is
/// why paths through a child module count outside `use` too.
#[test]
fn no_two_modules_import_each_other() {
    let Library { imports, private } = library();
    let mut edges: BTreeMap<(&[String], &[String]), &Import> = BTreeMap::new();
    for i in &imports {
        edges.entry((&i.from, &i.to)).or_insert(i);
    }
    let one_module = |a: &[String], b: &[String]| {
        private.contains(&(a.to_vec(), b.to_vec())) || private.contains(&(b.to_vec(), a.to_vec()))
    };
    let broken: Vec<String> = edges
        .iter()
        .filter(|((a, b), _)| a < b && edges.contains_key(&(*b, *a)))
        .filter(|((a, b), _)| !one_module(a, b))
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
fn no_cycle_between_folders() {
    let found = library().imports;
    let edges = folder_edges(&found);
    let broken: Vec<String> = edges
        .iter()
        .filter(|((a, b), _)| a < b && edges.contains_key(&(*b, *a)))
        .filter(|((a, b), _)| !KNOWN_FOLDER_CYCLES.contains(&(*a, *b)))
        .map(|((a, b), i)| format!("{a} <-> {b}: {} and {}", at(i), at(edges[&(*b, *a)])))
        .collect();
    assert!(
        broken.is_empty(),
        "cycles between folders:\n{}",
        broken.join("\n")
    );
    let stale: Vec<String> = KNOWN_FOLDER_CYCLES
        .iter()
        .filter(|(a, b)| !(edges.contains_key(&(*a, *b)) && edges.contains_key(&(*b, *a))))
        .map(|(a, b)| format!("{a} <-> {b}"))
        .collect();
    assert!(
        stale.is_empty(),
        "KNOWN_FOLDER_CYCLES lists cycles that are gone (delete their lines):\n{}",
        stale.join("\n")
    );
}
