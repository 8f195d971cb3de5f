//! Advice names what the author can change: the quoted version as written, and no
//! library option names.

use crate::common;

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

const TRACE: &str = "skills/trace_network_path/skill.yaml";

/// Point trace_network_path's input at the worked example's published schema_uri and
/// version, as a copied skill.yaml would.
fn reuse_erc_input_uri(ws: &std::path::Path) {
    let manifest = ws.join(TRACE);
    write(
        &manifest,
        read(&manifest)
            .replace(
                "schema_uri: \"https://schemas.example.net/skills/trace-network-path/input\"\n  version: \"1.1\"",
                "schema_uri: \"urn:example:resource-condition:input:1.0\"\n  version: \"1.0\"",
            ),
    );
    assert!(read(&manifest).contains("urn:example:resource-condition:input:1.0"));
}

/// A schema_uri another skill published, reused with other content: the advice offers a
/// URI of its own first, and the version only if it really revises that schema.
#[test]
fn a_reused_schema_uri_suggests_a_uri_of_its_own() {
    let ws = workspace();
    reuse_erc_input_uri(ws.path());
    // Both in the workspace: the two uses conflict.
    let out = run(&["check", ".", "--format", "json"], ws.path());
    let f = out.finding("schema_conflict");
    assert_eq!(
        f["help"],
        "a schema_uri + version names exactly one schema: if this is another schema than the one in ./skills/evaluate_resource_condition/schemas/input.json, give it a schema_uri of its own; if it revises that one, give it a new version"
    );
    // Only the lock knows the owner (the worked example is gone from the workspace).
    std::fs::remove_dir_all(ws.path().join("skills/evaluate_resource_condition")).unwrap();
    let out = run(&["check", ".", "--format", "json"], ws.path());
    let doc = out.json();
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["code"] == "immutability_violation"
                && f["file"] == "./skills/trace_network_path/schemas/input.json"
        })
        .unwrap_or_else(|| panic!("no schema immutability_violation: {doc}"));
    let help = f["help"].as_str().unwrap();
    assert!(
        help.starts_with(
            "urn:example:resource-condition:input:1.0 is the evaluate_resource_condition input schema in skillbundle.lock: if this is another schema, give it a schema_uri of its own in ./skills/trace_network_path/skill.yaml; if it revises that one, set input.version to \"2.0\""
        ),
        "{help}"
    );
}
