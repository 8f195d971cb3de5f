//! The container recipe and the Kubernetes sidecar example, checked without docker (no
//! daemon here): every path the Dockerfile copies exists, it builds the binary the way
//! CI builds (`--locked`, the `skillbundle` binary), on a Rust at least the crate's
//! `rust-version`, with build outputs kept out of the context; and every option the
//! sidecar manifest passes to `skillbundle serve` is one the binary takes.

use crate::common;

use common::*;
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn dockerfile() -> String {
    read(&root().join("Dockerfile"))
}

/// The instructions of a Dockerfile: continuation lines joined, comments dropped.
fn instructions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || (line.is_empty() && current.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

#[test]
fn every_path_the_dockerfile_copies_from_the_context_exists() {
    let copies: Vec<String> = instructions(&dockerfile())
        .into_iter()
        .filter(|i| i.starts_with("COPY ") && !i.contains("--from="))
        .collect();
    assert!(!copies.is_empty(), "the Dockerfile copies nothing");
    for copy in copies {
        let words: Vec<&str> = copy.split_whitespace().skip(1).collect();
        let (_, sources) = words.split_last().expect("COPY SRC... DEST");
        for source in sources {
            assert!(
                root().join(source).exists(),
                "Dockerfile: COPY source {source} does not exist"
            );
        }
    }
}

#[test]
fn the_dockerfile_builds_the_binary_as_ci_does_and_copies_it_out() {
    let instructions = instructions(&dockerfile());
    let build = instructions
        .iter()
        .find(|i| i.starts_with("RUN ") && i.contains("cargo build"))
        .expect("a RUN cargo build");
    for flag in ["--release", "--locked", "--bin skillbundle"] {
        assert!(
            build.contains(flag),
            "the cargo build lacks {flag}: {build}"
        );
    }
    assert!(
        read(&root().join("Cargo.toml")).contains("name = \"skillbundle\"\npath = \"src/"),
        "Cargo.toml has no [[bin]] skillbundle"
    );
    let stages = instructions
        .iter()
        .filter(|i| i.starts_with("FROM "))
        .count();
    assert_eq!(stages, 2, "a build stage and a runtime stage");
    assert!(instructions
        .iter()
        .any(|i| i.starts_with("COPY --from=build") && i.contains("skillbundle")));
    assert!(
        instructions.iter().any(|i| i.starts_with("USER ")),
        "the runtime stage runs as a non-root user"
    );
}

#[test]
fn the_build_image_has_at_least_the_crates_rust_version() {
    let version = |text: &str| -> (u32, u32) {
        let mut parts = text.split('.').map(|p| p.parse::<u32>().unwrap());
        (parts.next().unwrap(), parts.next().unwrap())
    };
    let cargo = read(&root().join("Cargo.toml"));
    let wanted = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .map(|v| version(v.trim_end_matches('"')))
        .expect("Cargo.toml has a rust-version");
    let from = instructions(&dockerfile())
        .into_iter()
        .find(|i| i.starts_with("FROM rust:"))
        .expect("a FROM rust:VERSION build stage");
    let tag = from["FROM rust:".len()..].split(['-', ' ']).next().unwrap();
    assert!(
        version(tag) >= wanted,
        "rust:{tag} is older than rust-version {wanted:?}"
    );
}

#[test]
fn the_build_context_leaves_out_build_outputs() {
    let ignored = read(&root().join(".dockerignore"));
    for path in ["target/", "dist/", ".git/"] {
        assert!(
            ignored.lines().any(|l| l.trim() == path),
            ".dockerignore does not leave out {path}"
        );
    }
}

#[test]
fn the_sidecar_passes_only_options_serve_takes() {
    let manifest = read(&root().join("examples/kubernetes/sidecar.yaml"));
    let help = Command::new(env!("CARGO_BIN_EXE_skillbundle"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    assert!(help.status.success(), "skillbundle serve --help failed");
    let help = String::from_utf8(help.stdout).unwrap();
    let options: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- --"))
        .map(|o| o.split('=').next().unwrap())
        .collect();
    assert!(options.contains(&"bundle") && options.contains(&"upstream"));
    for option in options {
        assert!(
            help.contains(&format!("--{option} ")) || help.contains(&format!("--{option}\n")),
            "examples/kubernetes/sidecar.yaml passes --{option}, which `skillbundle serve` does not take"
        );
    }
    assert!(
        manifest.contains("path: /readyz") && manifest.contains("path: /healthz"),
        "the sidecar probes /readyz and /healthz"
    );
}
