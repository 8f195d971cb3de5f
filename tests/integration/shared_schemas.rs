//! Shared schemas: a `$ref` to a file inside the workspace is embedded at build time as
//! a resource with an absolute `$id`; findings inside the shared file point at it; a
//! change to it changes (and `diff` names) every skill that embeds it; nothing outside
//! the workspace is ever read.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn shared_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cmd/fixtures/shared"),
        dir.path(),
    );
    dir
}

const URN: &str = "urn:skillbundle:workspace:common/network.yaml";

#[test]
fn a_shared_file_is_embedded_with_an_absolute_id_and_the_ref_rewritten() {
    let ws = shared_workspace();
    let checked = skillbundle::build::pipeline::check(ws.path());
    assert!(checked.ok(), "{:#?}", checked.findings);
    assert_eq!(checked.skills.len(), 2);
    for skill in &checked.skills {
        let input = &skill.schemas[0].reference;
        let schema: Value = serde_json::from_slice(&input.jcs.bytes()).unwrap();
        assert_eq!(schema["$defs"][URN]["$id"], URN, "{schema:#}");
        assert!(schema["$defs"][URN]["$defs"]["interface-name"].is_object());
        let text = schema.to_string();
        assert!(!text.contains("common/network.yaml#") || text.contains(&format!("{URN}#")));
        assert!(!text.contains("../"), "no file reference survives: {text}");
    }
    // The example that must fail fails through the shared definition (minLength 1).
    let port = &checked.skills[0];
    let input: Value = serde_json::from_slice(&port.schemas[0].reference.jcs.bytes()).unwrap();
    assert_eq!(
        input["properties"]["interface"]["$ref"],
        format!("{URN}#/$defs/interface-name")
    );
}

#[test]
fn findings_inside_a_shared_file_point_at_that_file_and_line() {
    let ws = shared_workspace();
    let shared = ws.path().join("common/network.yaml");
    write(
        &shared,
        read(&shared).replace("minLength: 1", "minLenght: 1"),
    );
    let out = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(out.status, 1, "{}", out.stderr);
    // Embedded by both skills, reported once.
    let f = out.finding("unknown_keyword");
    assert_eq!(f["file"], "./common/network.yaml");
    assert_eq!(f["pointer"], "/$defs/interface-name/minLenght");
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(8), Some(16))
    );
    assert_eq!(f["help"], "did you mean `minLength`?");
}

#[test]
fn a_shared_file_change_changes_every_skill_that_embeds_it() {
    let old = shared_workspace();
    let new = shared_workspace();
    let shared = new.path().join("common/network.yaml");
    write(
        &shared,
        read(&shared).replace("maxLength: 64", "maxLength: 32"),
    );
    let out = run(
        &[
            "diff",
            old.path().to_str().unwrap(),
            new.path().to_str().unwrap(),
        ],
        old.path(),
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    for skill in ["set_port", "set_route"] {
        assert!(
            out.stdout.contains(&format!(
                "{skill} 1.0 → 1.0: needs a MAJOR step, kept its version — not enough: use 2.0"
            )),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn references_never_leave_the_workspace() {
    let ws = shared_workspace();
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("evil.json"), r#"{"type": "string"}"#);
    let input = ws.path().join("skills/port/schemas/input.json");
    write(
        &input,
        read(&input).replace(
            "../../../common/network.yaml#/$defs/interface-name",
            "../../../../evil.json",
        ),
    );
    let out = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(out.status, 1, "{}", out.stdout);
    let f = out.finding("path_invalid");
    assert_eq!(
        f["message"],
        "the reference leaves the workspace; shared schemas must be files inside it"
    );
    assert_eq!(f["file"], "./skills/port/schemas/input.json");
    assert_eq!(f["pointer"], "/properties/interface/$ref");
    assert_eq!(f["line"], 5);

    // A missing file is named as such, at the reference.
    write(
        &input,
        read(&input).replace("../../../../evil.json", "../../../common/nope.json"),
    );
    let out = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(
        out.finding("path_invalid")["message"],
        "the referenced file does not exist"
    );
}
