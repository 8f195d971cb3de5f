//! Parallelism never changes the output: the bundle is the same bytes built with one
//! worker thread or two (`--jobs`, `RAYON_NUM_THREADS`), and the documents the pipeline
//! writes straight as canonical bytes are exactly what canonicalizing them gives.

use crate::common;

use common::*;
use std::path::Path;
use std::process::Command;

/// example-skills plus `copies` copies of its worked example under other skill_ids
/// (same schemas: one schema_uri + version with one content is allowed).
fn many_skills(copies: usize) -> tempfile::TempDir {
    let ws = workspace();
    let erc = ws.path().join(ERC);
    for i in 0..copies {
        let dir = ws.path().join(format!("skills/copy_{i:02}"));
        copy_tree(&erc, &dir);
        let manifest = read(&dir.join("skill.yaml")).replace(
            "skill_id: evaluate_resource_condition",
            &format!("skill_id: evaluate_resource_condition_{i:02}"),
        );
        write(&dir.join("skill.yaml"), manifest);
    }
    ws
}

fn build(ws: &Path, out: &str, jobs: Option<&str>, env_threads: Option<&str>) -> Vec<u8> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skillbundle"));
    cmd.args([
        "build",
        ".",
        "--out",
        out,
        "--sign-key",
        "key.key",
        "--format",
        "json",
    ])
    .current_dir(ws)
    .env_remove("SOURCE_DATE_EPOCH")
    .env_remove("RAYON_NUM_THREADS");
    if let Some(jobs) = jobs {
        cmd.args(["--jobs", jobs]);
    }
    if let Some(n) = env_threads {
        cmd.env("RAYON_NUM_THREADS", n);
    }
    let output = cmd.output().unwrap();
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["skills"].as_array().unwrap().len(), 3 + 24);
    std::fs::read(ws.join(report["bundle"].as_str().unwrap())).unwrap()
}

#[test]
fn the_bundle_is_the_same_bytes_with_one_or_two_threads() {
    let ws = many_skills(24);
    let key = run(&["keygen", "--out", "key"], ws.path());
    assert_eq!(key.status, 0, "{}", key.stderr);
    let one = build(ws.path(), "one", Some("1"), None);
    let two = build(ws.path(), "two", Some("2"), None);
    let env = build(ws.path(), "env", None, Some("2"));
    assert!(one == two, "--jobs 1 and --jobs 2 wrote different bundles");
    assert!(one == env, "RAYON_NUM_THREADS=2 wrote a different bundle");
    // And the bundle loads with either number of threads.
    for jobs in ["1", "2"] {
        let verified = run(
            &[
                "verify",
                "one/example-network-skills-0.1.0.tar.gz",
                "--trust",
                "key.jwk.json",
                "--jobs",
                jobs,
            ],
            ws.path(),
        );
        assert_eq!(verified.status, 0, "{}{}", verified.stdout, verified.stderr);
    }
}

#[test]
fn jobs_must_be_positive() {
    let ws = workspace();
    let r = run(&["check", ".", "--jobs", "0"], ws.path());
    assert_eq!(r.status, 2, "{}", r.stderr);
}

#[test]
fn spliced_documents_are_canonical() {
    let checked = skillbundle::build::pipeline::check(&example_skills());
    assert!(checked.ok(), "{:#?}", checked.findings);
    assert_eq!(checked.skills.len(), 3);
    for skill in &checked.skills {
        let interface = &skill.interface;
        let document = interface.to_value();
        assert_eq!(
            skillbundle::wire::digest::jcs(&document),
            interface.jcs(),
            "{}",
            interface.skill_id
        );
        assert_eq!(
            skillbundle::wire::digest::Digest::of_bytes(&interface.jcs()),
            interface.digest
        );
        for reference in interface.schemas() {
            assert_eq!(
                skillbundle::wire::digest::jcs(&reference.schema()),
                &*reference.jcs.bytes()
            );
            assert_eq!(
                skillbundle::wire::digest::Digest::of_value(&reference.schema()),
                reference.digest
            );
        }
        // What the writer wrote, the reader reads back: the same typed document.
        let schema = skillbundle::interface::packaged_schema::InterfaceSchema::packaged().unwrap();
        let read = skillbundle::interface::Document::read(schema, &document).unwrap();
        assert_eq!(&read, interface);
    }
}
