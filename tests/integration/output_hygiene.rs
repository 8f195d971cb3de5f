//! Output hygiene: strings from a bundle reach no terminal or CI log raw, and a snippet
//! never quotes a file the tool did not read as that input.
//!
//! An unsigned bundle whose manifest carries ESC, OSC, BEL, CR/LF and `::error`
//! payloads in every string `inspect` and `verify` show goes through every output
//! format: no control character reaches stdout or stderr raw, no line starts a GitHub
//! workflow command, and JSON and SARIF stay valid JSON.

use crate::common;

use common::crafted::{fixture, pack};
use common::*;
use serde_json::Value;

const PAYLOAD: &str =
    "x\u{1b}[31mred\u{1b}]0;pwned\u{7}\r\n::error title=forged::owned\n::warning::y %0A";

fn hostile_bundle() -> Vec<u8> {
    let fx = fixture();
    let mut files = fx.files.clone();
    let mut m: Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    m.as_object_mut().unwrap().remove("signatures");
    m["bundle"]["name"] = Value::from(PAYLOAD);
    m["bundle"]["version"] = Value::from(PAYLOAD);
    m["generator"] = Value::from(PAYLOAD);
    for skill in m["skills"].as_array_mut().unwrap() {
        skill["skill_version"] = Value::from(PAYLOAD);
        skill["interface_digest"] = Value::from(PAYLOAD);
        for schema in skill["schemas"].as_array_mut().unwrap() {
            for field in ["schema_uri", "version", "role", "digest"] {
                schema[field] = Value::from(PAYLOAD);
            }
        }
    }
    files.insert(
        "manifest.json".into(),
        skillbundle::bundle::stable_pretty(&m),
    );
    pack(&files, 0)
}

fn assert_clean(what: &str, run: &Run, format: &str) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{what} --format {format}: a raw control character on {stream}: {text:?}"
        );
        // Our own `::error` commands in github format, each with only its own `::`
        // separator; no other line may start one.
        let forged = |l: &str| {
            if format == "github" && l.starts_with("::error ") {
                l.matches("::").count() != 2 || l.contains("forged")
            } else {
                l.starts_with("::")
            }
        };
        assert!(
            !text.lines().any(forged),
            "{what} --format {format}: a workflow command on {stream}: {text}"
        );
    }
    if format == "json" || format == "sarif" {
        serde_json::from_str::<Value>(&run.stdout)
            .unwrap_or_else(|e| panic!("{what} --format {format}: not JSON: {e}"));
    }
}

#[test]
fn bundle_strings_are_escaped_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("b.tar.gz"), hostile_bundle());
    for format in ["human", "github", "json", "sarif"] {
        // inspect runs every check verify runs (signatures aside), so these strings are
        // refused before any is listed; what it says about them is escaped.
        let inspect = run(&["inspect", "b.tar.gz", "--format", format], dir.path());
        assert_eq!(inspect.status, 1, "{}", inspect.stderr);
        assert_clean("inspect", &inspect, format);
        // verify refuses it (the manifest no longer matches the documents), and what it
        // says is escaped too.
        let verify = run(
            &["verify", "b.tar.gz", "--allow-unsigned", "--format", format],
            dir.path(),
        );
        assert_eq!(verify.status, 1, "{}", verify.stdout);
        assert_clean("verify", &verify, format);
    }
}

#[test]
fn snippets_never_quote_a_same_named_file_from_the_working_directory() {
    let fx = fixture();
    let mut files = fx.files.clone();
    files.insert(
        "manifest.json".into(),
        b"{\n  \"format\": oops\n}\n".to_vec(),
    );
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("b.tar.gz"), pack(&files, 0));
    write(
        &dir.path().join("manifest.json"),
        "first line\nOPERATOR-SECRET on line two\n",
    );
    for args in [
        &["verify", "b.tar.gz", "--allow-unsigned"][..],
        &["inspect", "b.tar.gz"][..],
    ] {
        let out = run(args, dir.path());
        assert_eq!(out.status, 1, "{}", out.stderr);
        assert!(out.stderr.contains("bundle_invalid"), "{}", out.stderr);
        assert!(
            !out.stderr.contains("OPERATOR-SECRET") && !out.stdout.contains("OPERATOR-SECRET"),
            "{}: quoted the operator's ./manifest.json: {}",
            args[0],
            out.stderr
        );
        assert!(
            out.stderr.contains("b.tar.gz/manifest.json"),
            "{}",
            out.stderr
        );
    }
}
