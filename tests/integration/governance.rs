//! Schema governance end to end (`skillbundle check`): dialect, meta-schema validity,
//! inline-ref closure, format assertion, resource limits and examples — each with its
//! code, location and exit status 1, and proof that nothing is ever retrieved.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn input_schema(ws: &Path) -> PathBuf {
    ws.join(ERC).join("schemas/input.json")
}

/// Check a mutated copy of example-skills and return its findings of `code`
/// (asserting exit status 1 and that at least one has that code).
fn check_with(mutate: impl FnOnce(&Path), code: &str) -> Vec<serde_json::Value> {
    let ws = workspace();
    mutate(ws.path());
    let out = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(
        out.status, 1,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    let all = out.findings();
    let matching: Vec<_> = all.iter().filter(|f| f["code"] == code).cloned().collect();
    assert!(
        !matching.is_empty(),
        "expected a {code} finding, got:\n{}",
        serde_json::to_string_pretty(&all).unwrap()
    );
    matching
}

fn schema_finding(schema: &str, code: &str) -> serde_json::Value {
    let found = check_with(|ws| write(&input_schema(ws), schema), code);
    assert_eq!(found.len(), 1, "{found:?}");
    let f = found[0].clone();
    assert!(
        f["file"].as_str().unwrap().ends_with("schemas/input.json"),
        "{f}"
    );
    f
}

#[test]
fn a_schema_selecting_another_dialect_is_dialect_mismatch() {
    let f = schema_finding(
        "{\n  \"$schema\": \"http://json-schema.org/draft-07/schema#\",\n  \"type\": \"object\"\n}",
        "dialect_mismatch",
    );
    assert_eq!(f["pointer"], "/$schema");
    assert_eq!(f["line"], 2);
    assert_eq!(f["condition"], "interface_invalid");
}

#[test]
fn an_embedded_resource_selecting_another_dialect_is_dialect_mismatch() {
    let f = schema_finding(
        r#"{"$defs": {"x": {"$id": "https://example.com/x", "$schema": "http://json-schema.org/draft-07/schema#"}}}"#,
        "dialect_mismatch",
    );
    assert_eq!(f["pointer"], "/$defs/x/$schema");
}

#[test]
fn an_unsupported_declared_dialect_is_dialect_mismatch() {
    let found = check_with(
        |ws| {
            let path = ws.join(ERC).join("skill.yaml");
            let text = read(&path).replacen(
                "version: \"1.0\"}",
                "version: \"1.0\", dialect: \"http://json-schema.org/draft-07/schema#\"}",
                1,
            );
            write(&path, text);
        },
        "dialect_mismatch",
    );
    assert!(
        found[0]["message"].as_str().unwrap().contains("2020-12"),
        "{found:?}"
    );
}

#[test]
fn meta_schema_errors_are_located() {
    let f = schema_finding(
        "{\n  \"type\": \"object\",\n  \"properties\": {\n    \"a\": {\"minLength\": -1}\n  }\n}",
        "schema_invalid",
    );
    assert_eq!(f["pointer"], "/properties/a/minLength");
    assert_eq!(f["line"], 4);
    assert_eq!(f["column"], 24);
}

#[test]
fn unknown_formats_are_schema_invalid() {
    let f = schema_finding(
        r#"{"type": "string", "format": "date-tiem"}"#,
        "schema_invalid",
    );
    // The pointer names the keyword; the message says what to change, in our words.
    assert_eq!(f["pointer"], "/format");
    assert_eq!(
        f["message"],
        "unknown `format` name: formats are asserted, so a name the dialect does not define cannot be checked"
    );
}

#[test]
fn references_leaving_the_schema_are_ref_external() {
    for target in [
        "https://example.com/schemas/x.json",
        "https://json-schema.org/draft/2020-12/schema",
        "file:///etc/passwd",
    ] {
        let f = schema_finding(
            &format!("{{\n  \"properties\": {{\n    \"a\": {{\"$ref\": \"{target}\"}}\n  }}\n}}"),
            "ref_external",
        );
        assert_eq!(f["pointer"], "/properties/a/$ref", "{target}");
        assert_eq!(f["line"], 3, "{target}");
        assert_eq!(f["condition"], "interface_invalid");
    }
}

#[test]
fn a_relative_file_reference_is_a_shared_schema_and_must_exist() {
    // Relative file references are shared schemas (tests/integration/shared_schemas.rs):
    // embedded at build time when the file is in the workspace, path_invalid otherwise.
    let f = schema_finding(
        "{\n  \"properties\": {\n    \"a\": {\"$ref\": \"other.json\"}\n  }\n}",
        "path_invalid",
    );
    assert_eq!(f["message"], "the referenced file does not exist");
    assert_eq!(f["pointer"], "/properties/a/$ref");
    assert_eq!(f["line"], 3);
}

#[test]
fn dangling_pointers_and_missing_anchors_are_ref_unresolved() {
    for target in ["#/$defs/missing", "#no-such-anchor", "#/properties/a/items"] {
        let f = schema_finding(
            &format!("{{\"properties\": {{\"a\": {{\"$ref\": \"{target}\"}}}}, \"$defs\": {{}}}}"),
            "ref_unresolved",
        );
        assert_eq!(f["pointer"], "/properties/a/$ref", "{target}");
    }
}

#[test]
fn embedded_resources_with_absolute_ids_resolve() {
    let ws = workspace();
    // The compound-document skill of example-skills already relies on this; check it
    // stays clean.
    let out = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(out.status, 0, "{}", out.stdout);
}

#[test]
fn format_is_an_assertion_in_examples() {
    let found = check_with(
        |ws| {
            write(
                &ws.join(ERC)
                    .join("examples/records/resource-observation/valid/bad-time.json"),
                r#"{"record_id":"o","resource_id":"r","metric":"m","value":1,"unit":"u","observed_at":"2026-08-11 12:00"}"#,
            )
        },
        "fixture_failed",
    );
    assert_eq!(found.len(), 1);
    let f = &found[0];
    assert!(
        f["file"].as_str().unwrap().ends_with("valid/bad-time.json"),
        "{f}"
    );
    assert_eq!(f["pointer"], "/observed_at");
    assert!(f["message"].as_str().unwrap().contains("format"), "{f}");
}

#[test]
fn an_accepted_invalid_example_is_fixture_failed() {
    let found = check_with(
        |ws| {
            write(
                &ws.join(ERC)
                    .join("examples/input/invalid/actually-fine.json"),
                r#"{"resource_id":"r","condition":{"metric":"m","operator":"gt","threshold":1,"unit":"u"}}"#,
            )
        },
        "fixture_failed",
    );
    assert!(
        found[0]["message"].as_str().unwrap().contains("accepted"),
        "{found:?}"
    );
}

#[test]
fn an_example_rejected_for_the_wrong_reason_is_fixture_failed() {
    let found = check_with(
        |ws| {
            write(
                &ws.join(ERC)
                    .join("examples/input/invalid/missing-unit.expect.yaml"),
                "keyword: type\ninstance_path: /condition/threshold\n",
            )
        },
        "fixture_failed",
    );
    let msg = found[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("another reason") && msg.contains("`required` at \"/condition\""),
        "{msg}"
    );
}

#[test]
fn examples_for_an_undeclared_record_kind_are_refused() {
    let found = check_with(
        |ws| {
            write(
                &ws.join(ERC)
                    .join("examples/records/resource-observaton/valid/x.json"),
                "{}",
            )
        },
        "fixture_failed",
    );
    assert_eq!(found[0]["help"], "did you mean `resource-observation`?");
}

fn quick(mutate: impl FnOnce(&Path), code: &str) {
    let start = Instant::now();
    check_with(mutate, code);
    let took = start.elapsed();
    // A hang guard, not a speed target: the point is "refused, not hung".
    assert!(took < Duration::from_secs(300), "took {took:?}");
}

#[test]
fn a_100000_level_nested_array_is_refused_as_a_limit() {
    quick(
        |ws| {
            let deep = "[".repeat(100_000) + &"]".repeat(100_000);
            write(&input_schema(ws), format!("{{\"const\": {deep}}}"));
        },
        "resource_limit_exceeded",
    );
}

#[test]
fn a_50_mb_schema_is_refused_as_a_limit() {
    quick(
        |ws| {
            let big = format!("{{\"description\": \"{}\"}}", "x".repeat(50 * 1024 * 1024));
            write(&input_schema(ws), big);
        },
        "resource_limit_exceeded",
    );
}

#[test]
fn a_yaml_alias_bomb_is_refused_as_a_limit() {
    quick(
        |ws| {
            let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
            for i in 1..12 {
                let p = i - 1;
                bomb.push_str(&format!(
                    "a{i}: &a{i} [{}]\n",
                    vec![format!("*a{p}"); 10].join(", ")
                ));
            }
            write(
                &ws.join("skills/manage_interface_config/schemas/input.yaml"),
                bomb,
            );
        },
        "resource_limit_exceeded",
    );
}

#[test]
fn a_pathological_pattern_does_not_hang_the_examples() {
    // Nested quantifiers with a look-ahead force the backtracking engine; the backtrack
    // limit turns it into a rejection instead of a hang.
    let ws = workspace();
    write(
        &input_schema(ws.path()),
        r#"{"type": "object", "properties": {"resource_id": {"type": "string", "pattern": "^(a|a)*(?!x)$"}}}"#,
    );
    std::fs::remove_dir_all(ws.path().join(ERC).join("examples/input")).unwrap();
    write(
        &ws.path().join(ERC).join("examples/input/valid/evil.json"),
        format!("{{\"resource_id\": \"{}!\"}}", "a".repeat(40)),
    );
    let start = Instant::now();
    let out = run(&["check", ".", "--format", "json"], ws.path());
    // A hang guard (catastrophic backtracking), not a speed target.
    assert!(start.elapsed() < Duration::from_secs(300));
    assert_eq!(out.status, 1, "{}", out.stdout);
    assert!(out.findings().iter().any(|f| f["code"] == "fixture_failed"));
}

#[test]
fn a_long_pattern_is_refused_as_a_limit() {
    quick(
        |ws| {
            write(
                &input_schema(ws),
                format!(
                    "{{\"type\": \"string\", \"pattern\": \"{}\"}}",
                    "a".repeat(5000)
                ),
            )
        },
        "resource_limit_exceeded",
    );
}

#[test]
fn limits_are_configurable_in_the_workspace_manifest() {
    quick(
        |ws| {
            let path = ws.join("skillbundle.yaml");
            let text = read(&path) + "limits: {max_schema_bytes: 100}\n";
            write(&path, text);
        },
        "resource_limit_exceeded",
    );
    // An unknown limit name is a manifest error with a suggestion.
    let ws = workspace();
    let path = ws.path().join("skillbundle.yaml");
    write(&path, read(&path) + "limits: {max_schema_byte: 100}\n");
    let out = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(out.status, 1);
    assert_eq!(
        out.finding("manifest_invalid")["help"],
        "did you mean `max_schema_bytes`?"
    );
}

/// Nothing is ever fetched: a reference to a listening local port gets no connection.
#[test]
fn references_never_touch_the_network() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let schema = format!(
        r#"{{"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "http://127.0.0.1:{port}/x.json"}}"#
    );
    let found = check_with(|ws| write(&input_schema(ws), schema), "ref_external");
    assert_eq!(found[0]["pointer"], "/$ref");
    // (The validator alone, without the closure check, is tested the same way in
    // `schema::validator`'s unit tests.)
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("a connection reached the listener: {other:?}"),
    }
}

/// Nothing is ever read from disk to resolve a reference: a reference to a FIFO would
/// block any reader forever, so finishing at all proves the file was never opened.
#[cfg(unix)]
#[test]
fn references_never_open_local_files() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("schema.json");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that lives across the call.
    let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo: {}", std::io::Error::last_os_error());
    let uri = format!("file://{}", fifo.display());
    let (tx, rx) = std::sync::mpsc::channel();
    let schema = format!(r#"{{"$ref": "{uri}"}}"#);
    std::thread::spawn(move || {
        let found = check_with(|ws| write(&input_schema(ws), schema), "ref_external");
        tx.send(found.len()).unwrap();
    });
    let n = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the check blocked: something opened the FIFO");
    assert_eq!(n, 1);
}

#[test]
fn the_workspace_size_limit_applies() {
    quick(
        |ws| {
            let path = ws.join("skillbundle.yaml");
            write(&path, read(&path) + "limits: {max_workspace_bytes: 1000}\n");
        },
        "resource_limit_exceeded",
    );
}
