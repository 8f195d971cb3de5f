//! Every finding renders in every output format. One workspace with several kinds of
//! finding, snapshotted as human, json, github and sarif; the SARIF log is validated
//! against the SARIF 2.1.0 schema.

use crate::common;

use common::*;
use std::path::Path;

/// A copy of example-skills with three kinds of problem in three skills: one with a
/// line and column, one with a pointer and condition, one with a help.
fn broken_workspace() -> tempfile::TempDir {
    let ws = workspace();
    let root = ws.path();
    let erc = root.join(ERC);
    // json_invalid with a line and column.
    write(
        &erc.join("schemas/output.json"),
        "{\n  \"type\": \"object\",\n  \"type\": \"array\"\n}\n",
    );
    // manifest_invalid with a "did you mean" help.
    let tnp = root.join("skills/trace_network_path/skill.yaml");
    write(&tnp, read(&tnp).replacen("cancellable:", "cancelable:", 1));
    // ref_external with a pointer, line and column.
    write(
        &root.join("skills/manage_interface_config/schemas/output.json"),
        "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"x\": {\"$ref\": \"https://example.com/x.json\"}\n  }\n}\n",
    );
    ws
}

fn render(format: &str, root: &Path) -> Run {
    let out = run(&["check", ".", "--format", format], root);
    assert_eq!(out.status, 1, "{}{}", out.stdout, out.stderr);
    out
}

#[test]
fn human() {
    let ws = broken_workspace();
    let out = render("human", ws.path());
    assert_eq!(out.stdout, "");
    insta::assert_snapshot!(out.stderr);
}

#[test]
fn json() {
    let ws = broken_workspace();
    let out = render("json", ws.path());
    insta::assert_json_snapshot!(out.json());
}

#[test]
fn github() {
    let ws = broken_workspace();
    let out = render("github", ws.path());
    for line in out.stdout.lines() {
        assert!(line.starts_with("::error "), "{line}");
    }
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn sarif() {
    let ws = broken_workspace();
    let out = render("sarif", ws.path());
    let log = out.json();
    insta::assert_json_snapshot!(log);
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/sarif/sarif-2.1.0-rtm.5.json");
    let text = std::fs::read_to_string(schema_path).unwrap();
    // The published schema's `language` patterns have a stray `]`, a literal only under
    // ECMA-262's Annex B; escape it so a strict regex engine reads the same pattern.
    let stray = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
    assert!(text.contains(stray));
    let text = text.replace(stray, r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$""#);
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .offline()
        .build(&schema)
        .unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "SARIF output is invalid: {errors:#?}");
    assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 3);
}
