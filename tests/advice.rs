//! Advice names what the author can change: the quoted version as written, and no
//! library option names.

mod common;

use common::*;

const SKILL: &str = "skills/evaluate_resource_condition/skill.yaml";

#[test]
fn an_unquoted_version_is_suggested_quoted_as_written() {
    let ws = workspace();
    let manifest = ws.path().join(SKILL);
    write(
        &manifest,
        read(&manifest).replace("skill_version: \"1.0\"", "skill_version: 1.10"),
    );
    let out = run(&["check", ".", "--format", "json"], ws.path());
    let f = out.finding("version_invalid");
    assert_eq!(
        f["message"],
        "the unquoted number 1.10 is read as a float, which loses the version's text; quote it: \"1.10\""
    );
    assert_eq!(f["help"], "write \"1.10\" (with the quotes)");
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(4), Some(16))
    );
}

#[test]
fn a_duplicate_key_message_names_no_library_option() {
    let ws = workspace();
    let manifest = ws.path().join(SKILL);
    write(
        &manifest,
        read(&manifest).replace(
            "skill_version: \"1.0\"",
            "skill_version: \"1.0\"\nskill_version: \"1.1\"",
        ),
    );
    let out = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(
        out.finding("manifest_invalid")["message"],
        "duplicate mapping key: skill_version: a key may appear only once in a mapping; remove or rename one"
    );
}

#[test]
fn an_unknown_format_message_names_no_library_option() {
    let ws = workspace();
    let schema = ws
        .path()
        .join("skills/evaluate_resource_condition/schemas/input.json");
    let text = read(&schema);
    let patched = text.replacen(
        "\"type\": \"string\"",
        "\"type\": \"string\", \"format\": \"ipv9\"",
        1,
    );
    assert_ne!(text, patched);
    write(&schema, patched);
    let out = run(&["check", ".", "--format", "json"], ws.path());
    let f = out.finding("schema_invalid");
    assert_eq!(
        f["message"],
        "unknown `format` name: formats are asserted, so a name the dialect does not define cannot be checked"
    );
    assert_eq!(
        f["help"],
        "use a format draft 2020-12 defines (such as date-time, ipv4, ipv6, hostname, uri, uuid), or express the constraint with `pattern`"
    );
}

#[test]
fn a_breaking_change_asks_only_for_the_major_step_still_missing() {
    // The input schema narrows (breaking for an input), its version took only a MINOR
    // step, and skill_version is already the unpublished "2.0": "2.0" suffices for the
    // skill, as `diff` agrees; only input.version still needs its MAJOR step.
    let ws = workspace();
    let schema = ws
        .path()
        .join("skills/evaluate_resource_condition/schemas/input.json");
    let text = read(&schema).replacen(
        "\"resource_id\": {\n      \"type\": \"string\"",
        "\"resource_id\": {\n      \"type\": \"string\", \"maxLength\": 200",
        1,
    );
    write(&schema, text);
    let manifest = ws.path().join(SKILL);
    write(
        &manifest,
        read(&manifest)
            .replace("skill_version: \"1.0\"", "skill_version: \"2.0\"")
            .replace(
                "schema_uri: \"urn:example:resource-condition:input:1.0\",  version: \"1.0\"",
                "schema_uri: \"urn:example:resource-condition:input:1.0\",  version: \"1.1\"",
            ),
    );
    let out = run(&["check", ".", "--format", "json"], ws.path());
    let f = out.finding("incompatible_change");
    let help = f["help"].as_str().unwrap();
    assert!(
        help.ends_with("set input.version to \"2.0\" and skill_version to \"2.0\""),
        "{help}"
    );
}
