//! The README is tested: every shell command it shows runs, in order, in a scratch
//! folder holding a copy of example-skills, and its error-code table lists exactly the
//! codes the code defines, with the same descriptions.

use crate::common;

use common::*;
use skillbundle::finding::Code;
use std::path::Path;
use std::process::Command;

fn readme() -> String {
    read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
}

/// The command lines of every ```sh block, with trailing comments removed.
fn shell_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_sh = !in_sh && trimmed == "```sh";
            continue;
        }
        if in_sh && !trimmed.is_empty() && !trimmed.starts_with('#') {
            let command = match trimmed.find("  #") {
                Some(i) => trimmed[..i].trim_end(),
                None => trimmed,
            };
            commands.push(command.to_string());
        }
    }
    commands
}

#[test]
fn every_command_in_the_readme_runs() {
    let commands = shell_commands(&readme());
    assert!(commands.len() >= 10, "{commands:?}");
    let dir = workspace_copy();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_skillbundle"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for command in &commands {
        // The project's own commands: the test suite is this very run, and
        // `cargo run --release -- ARGS` is `skillbundle ARGS`.
        let command = match command.strip_prefix("cargo run --release -- ") {
            Some(args) => format!("skillbundle {args}"),
            None if command.starts_with("cargo ") => continue,
            None => command.clone(),
        };
        // The benchmark takes a quarter of an hour and installs a peer tool: it is run by
        // hand, and its results are in the README.
        if command.contains("bench/run") {
            eprintln!("not run here (the benchmark takes about 15 minutes): {command}");
            continue;
        }
        let out = Command::new("bash")
            .arg("-c")
            .arg(&command)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env_remove("SOURCE_DATE_EPOCH")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README command failed: {command}\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 10, "only {ran} commands ran");
}

/// A scratch folder with `example-skills/` in it, as in a clone of this repository.
fn workspace_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&example_skills(), &dir.path().join("example-skills"));
    dir
}

#[test]
fn the_error_code_table_lists_exactly_the_codes() {
    let text = readme();
    let table = text
        .split("## Error codes")
        .nth(1)
        .expect("an Error codes section")
        .split("\n## ")
        .next()
        .unwrap();
    let rows: Vec<(String, String)> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .map(|l| {
            let (code, rest) = l.split_once("` | ").unwrap();
            (
                code.to_string(),
                rest.trim_end_matches(" |").replace('`', ""),
            )
        })
        .collect();
    let documented: Vec<&str> = rows.iter().map(|(c, _)| c.as_str()).collect();
    let defined: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        documented, defined,
        "README error codes differ from Code::ALL (same order)"
    );
    for ((_, description), code) in rows.iter().zip(Code::ALL) {
        assert_eq!(description, code.description(), "{code}");
    }
}

#[test]
fn completions_and_man_page_are_generated() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell], dir.path());
        assert_eq!(out.status, 0);
        assert!(out.stdout.contains("skillbundle"), "{shell}");
        assert!(
            out.stdout.contains("describe"),
            "{shell}: subcommands are completed"
        );
    }
    let man = run(&["man"], dir.path());
    assert_eq!(man.status, 0);
    assert!(man.stdout.contains(".TH skillbundle 1"), "not a man page");
    assert!(
        man.stdout.contains("describe"),
        "the man page lists the subcommands"
    );
}

#[test]
fn every_subcommand_help_has_an_example() {
    let dir = tempfile::tempdir().unwrap();
    let help = run(&["--help"], dir.path()).stdout;
    let commands: Vec<String> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 10, "{commands:?}");
    for command in commands {
        let out = run(&[&command, "--help"], dir.path());
        assert_eq!(out.status, 0, "{command}");
        assert!(
            out.stdout.contains("Example"),
            "`skillbundle {command} --help` shows no example:\n{}",
            out.stdout
        );
    }
}
