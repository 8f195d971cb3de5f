//! `skillbundle init`: a new workspace passes `check` and `build` at once, and init
//! never overwrites anything.

use crate::common;

use common::*;

#[test]
fn a_new_workspace_checks_and_builds() {
    let dir = tempfile::tempdir().unwrap();
    let made = run(&["init", "fresh", "--skill", "probe_path"], dir.path());
    assert_eq!(made.status, 0, "{}{}", made.stdout, made.stderr);
    let ws = dir.path().join("fresh");
    assert!(ws.join("skills/probe_path/skill.yaml").is_file());
    assert_eq!(
        read(&ws.join(".gitignore")),
        "# bundles written by `skillbundle build`\ndist/\n# signing keys (`skillbundle keygen`): never commit a private key\n*.key\n"
    );
    let checked = run(&["check", "fresh"], dir.path());
    assert_eq!(checked.status, 0, "{}{}", checked.stdout, checked.stderr);
    let built = run(&["build", "fresh", "--format", "json"], dir.path());
    assert_eq!(built.status, 0, "{}", built.stdout);
    assert!(ws.join("dist/fresh-0.1.0.tar.gz").is_file());
}

#[test]
fn init_refuses_to_overwrite_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("skillbundle.yaml"), "mine\n");
    let out = run(&["init", "."], dir.path());
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("refusing to overwrite"),
        "{}",
        out.stderr
    );
    assert_eq!(read(&dir.path().join("skillbundle.yaml")), "mine\n");
    assert!(!dir.path().join("skills").exists());
}

#[test]
fn init_refuses_a_reserved_or_unsafe_skill_id() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["describe_skill", "../x", ""] {
        let out = run(&["init", ".", "--skill", bad], dir.path());
        assert_eq!(out.status, 1, "{bad}: {}", out.stderr);
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn init_inside_a_workspace_adds_a_skill_named_for_its_id() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(run(&["init", "ws"], dir.path()).status, 0);
    let ws = dir.path().join("ws");
    let before = read(&ws.join("skillbundle.yaml"));
    let added = run(&["init", ".", "--skill", "trace_route"], &ws);
    assert_eq!(added.status, 0, "{}", added.stderr);
    assert!(
        added.stdout.starts_with(
            "added skill trace_route to the workspace in .:\n  ./skills/trace_route/skill.yaml\n"
        ),
        "{}",
        added.stdout
    );
    assert_eq!(read(&ws.join("skillbundle.yaml")), before);
    let manifest = read(&ws.join("skills/trace_route/skill.yaml"));
    assert!(manifest.contains("  name: Trace route\n"), "{manifest}");
    let checked = run(&["check", "."], &ws);
    assert_eq!(checked.status, 0, "{}{}", checked.stdout, checked.stderr);
    assert!(checked
        .stdout
        .starts_with("checked 2 skills: all checks passed"));
}
