//! The release ledger end to end, on copies of example-skills (which commits its
//! skillbundle.lock): immutability, version order, breaking changes, `--locked`,
//! `--previous`, malformed locks, and `skillbundle diff`.

use crate::common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;

const LOCK: &str = "skillbundle.lock";

fn edit(path: &Path, from: &str, to: &str) {
    let text = read(path);
    assert!(text.contains(from), "{from:?} not in {}", path.display());
    write(path, text.replacen(from, to, 1));
}

fn manifest(ws: &Path) -> std::path::PathBuf {
    ws.join(ERC).join("skill.yaml")
}

fn set_input_version(ws: &Path, version: &str) {
    edit(
        &manifest(ws),
        "schema_uri: \"urn:example:resource-condition:input:1.0\",  version: \"1.0\"",
        &format!(
            "schema_uri: \"urn:example:resource-condition:input:1.0\",  version: \"{version}\""
        ),
    );
}

fn set_output_version(ws: &Path, version: &str) {
    edit(
        &manifest(ws),
        "schema_uri: \"urn:example:resource-condition:output:1.0\", version: \"1.0\"",
        &format!(
            "schema_uri: \"urn:example:resource-condition:output:1.0\", version: \"{version}\""
        ),
    );
}

fn set_skill_version(ws: &Path, version: &str) {
    edit(
        &manifest(ws),
        "skill_version: \"1.0\"",
        &format!("skill_version: \"{version}\""),
    );
}

/// Edit a JSON schema file of the worked-example skill.
fn edit_schema(ws: &Path, file: &str, f: impl FnOnce(&mut Value)) {
    let path = ws.join(ERC).join("schemas").join(file);
    let mut v: Value = serde_json::from_str(&read(&path)).unwrap();
    f(&mut v);
    write(&path, serde_json::to_string_pretty(&v).unwrap() + "\n");
}

fn add_required_input_property(ws: &Path) {
    edit_schema(ws, "input.json", |v| {
        v["properties"]["priority"] = json!({"type": "integer"});
        v["required"]
            .as_array_mut()
            .unwrap()
            .push(json!("priority"));
    });
    // The vendor's valid example must now carry the new property too.
    let example = ws
        .join(ERC)
        .join("examples/input/valid/utilization-threshold.json");
    let mut v: Value = serde_json::from_str(&read(&example)).unwrap();
    v["priority"] = json!(1);
    write(&example, serde_json::to_string_pretty(&v).unwrap() + "\n");
}

fn add_optional_input_property(ws: &Path) {
    edit_schema(ws, "input.json", |v| {
        v["properties"]["priority"] = json!({"type": "integer"});
    });
}

fn lock_json(ws: &Path) -> Value {
    serde_json::from_str(&read(&ws.join(LOCK))).unwrap()
}

fn has_schema(lock: &Value, uri: &str, version: &str) -> bool {
    lock["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["schema_uri"] == uri && s["version"] == version)
}

fn has_skill(lock: &Value, id: &str, version: &str) -> bool {
    lock["skills"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["skill_id"] == id && s["skill_version"] == version)
}

/// A build that must fail with `code`: exit 1, nothing written, the lock untouched.
fn build_refused(ws: &Path, code: &str) -> Vec<Value> {
    let before = read(&ws.join(LOCK));
    let out = run(&["build", ".", "--format", "json"], ws);
    assert_eq!(out.status, 1, "{}\n{}", out.stdout, out.stderr);
    let found: Vec<Value> = out
        .findings()
        .into_iter()
        .filter(|f| f["code"] == code)
        .collect();
    assert!(
        !found.is_empty(),
        "no {code} finding in:\n{}",
        serde_json::to_string_pretty(&out.findings()).unwrap()
    );
    assert!(!ws.join("dist").exists(), "a refused build wrote a bundle");
    assert_eq!(
        read(&ws.join(LOCK)),
        before,
        "a refused build changed the lock"
    );
    found
}

fn build_ok(ws: &Path) -> Value {
    let out = run(&["build", ".", "--format", "json"], ws);
    assert_eq!(out.status, 0, "{}\n{}", out.stdout, out.stderr);
    out.json()
}

#[test]
fn the_committed_lock_is_current() {
    let ws = workspace();
    let before = read(&ws.path().join(LOCK));
    let out = run(&["build", ".", "--locked", "--format", "json"], ws.path());
    assert_eq!(out.status, 0, "{}", out.stdout);
    assert_eq!(out.json()["lock"]["updated"], false);
    assert_eq!(read(&ws.path().join(LOCK)), before);
    // And it is exactly what a build from scratch records.
    let fresh = workspace();
    std::fs::remove_file(fresh.path().join(LOCK)).unwrap();
    let out = build_ok(fresh.path());
    assert_eq!(out["lock"]["updated"], true);
    assert_eq!(read(&fresh.path().join(LOCK)), before);
}

#[test]
fn a_schema_edited_without_a_version_change_is_an_immutability_violation() {
    let ws = workspace();
    add_optional_input_property(ws.path());
    let found = build_refused(ws.path(), "immutability_violation");
    let schema = found
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("schemas/input.json"))
        .expect("a finding on the schema file");
    let msg = schema["message"].as_str().unwrap();
    // Both digests are named.
    assert!(
        msg.contains("sha256:a593fb695fd727eaa36602d9b539e53e54cde50aec6f4b7df5d624b70148f26a"),
        "{msg}"
    );
    assert_eq!(msg.matches("sha256:").count(), 2, "{msg}");
    assert!(schema["line"].as_u64().is_some(), "{schema}");
    // The change is compatible for an input, so a MINOR step is what to do.
    let help = schema["help"].as_str().unwrap();
    assert!(help.contains("set input.version to \"1.1\""), "{help}");
    assert!(help.contains("skill_version to \"1.1\""), "{help}");
    // The skill's interface changed without a new skill_version, too.
    let skill = found
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("skill.yaml"))
        .expect("a finding on skill.yaml");
    assert_eq!(skill["line"], 4, "{skill}");
    assert!(
        skill["help"].as_str().unwrap().contains("\"1.1\""),
        "{skill}"
    );
    // People see the same.
    let human = run(&["check", "."], ws.path());
    assert_eq!(human.status, 1);
    assert!(
        human.stderr.contains("error[immutability_violation]"),
        "{}",
        human.stderr
    );
    assert!(
        human.stderr.contains("set input.version to \"1.1\""),
        "{}",
        human.stderr
    );
}

#[test]
fn a_breaking_edit_without_a_version_change_suggests_a_major_step() {
    let ws = workspace();
    add_required_input_property(ws.path());
    let found = build_refused(ws.path(), "immutability_violation");
    let help = found[0]["help"].as_str().unwrap();
    assert!(help.contains("set input.version to \"2.0\""), "{help}");
    assert!(help.contains("skill_version to \"2.0\""), "{help}");
    assert!(help.contains("required-added"), "{help}");
}

#[test]
fn a_new_required_input_property_with_a_minor_bump_is_an_incompatible_change() {
    let ws = workspace();
    add_required_input_property(ws.path());
    set_input_version(ws.path(), "1.1");
    set_skill_version(ws.path(), "1.1");
    let found = build_refused(ws.path(), "incompatible_change");
    let schema = found
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("schemas/input.json"))
        .expect("a finding on the input schema");
    assert_eq!(schema["pointer"], "/required/2");
    assert!(schema["line"].as_u64().is_some());
    let msg = schema["message"].as_str().unwrap();
    assert!(msg.contains("required-added"), "{msg}");
    assert!(msg.contains("\"priority\""), "{msg}");
    assert!(msg.contains("1.0 → 1.1 is a MINOR step"), "{msg}");
    let help = schema["help"].as_str().unwrap();
    assert!(
        help.contains("set input.version to \"2.0\" and skill_version to \"2.0\""),
        "{help}"
    );
    // The skill's MINOR step is refused as well, on its manifest.
    assert!(found
        .iter()
        .any(|f| f["file"].as_str().unwrap().ends_with("skill.yaml")));
}

#[test]
fn the_same_change_with_major_bumps_passes_and_is_recorded() {
    let ws = workspace();
    let before = lock_json(ws.path());
    add_required_input_property(ws.path());
    set_input_version(ws.path(), "2.0");
    set_skill_version(ws.path(), "2.0");
    let out = build_ok(ws.path());
    assert_eq!(out["lock"]["updated"], true);
    assert_eq!(
        out["lock"]["added_schemas"],
        json!([{"schema_uri": "urn:example:resource-condition:input:1.0", "version": "2.0"}])
    );
    assert_eq!(
        out["lock"]["added_skills"],
        json!([{"skill_id": "evaluate_resource_condition", "skill_version": "2.0"}])
    );
    let after = lock_json(ws.path());
    assert!(has_schema(
        &after,
        "urn:example:resource-condition:input:1.0",
        "2.0"
    ));
    assert!(has_skill(&after, "evaluate_resource_condition", "2.0"));
    // Append-only: every earlier entry is still there, unchanged.
    for key in ["schemas", "skills"] {
        for entry in before[key].as_array().unwrap() {
            assert!(
                after[key].as_array().unwrap().contains(entry),
                "{entry} was dropped or edited"
            );
        }
        assert_eq!(
            after[key].as_array().unwrap().len(),
            before[key].as_array().unwrap().len() + 1
        );
    }
    // The next build records nothing new, and --locked agrees.
    let again = run(&["build", ".", "--locked", "--format", "json"], ws.path());
    assert_eq!(again.status, 0, "{}", again.stdout);
    // No temporary file is left next to the lock.
    let leftovers: Vec<String> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_new_optional_input_property_with_a_minor_bump_passes() {
    let ws = workspace();
    add_optional_input_property(ws.path());
    set_input_version(ws.path(), "1.1");
    set_skill_version(ws.path(), "1.1");
    let out = build_ok(ws.path());
    let lock = lock_json(ws.path());
    assert!(has_schema(
        &lock,
        "urn:example:resource-condition:input:1.0",
        "1.1"
    ));
    assert!(has_skill(&lock, "evaluate_resource_condition", "1.1"));
    assert_eq!(out["lock"]["added_skills"].as_array().unwrap().len(), 1);
}

#[test]
fn an_added_output_enum_value_with_a_minor_bump_fails() {
    let ws = workspace();
    edit_schema(ws.path(), "output.json", |v| {
        v["properties"]["result"]["enum"]
            .as_array_mut()
            .unwrap()
            .push(json!("unknown"));
    });
    set_output_version(ws.path(), "1.1");
    set_skill_version(ws.path(), "1.1");
    let found = build_refused(ws.path(), "incompatible_change");
    let schema = found
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("schemas/output.json"))
        .expect("a finding on the output schema");
    assert_eq!(schema["pointer"], "/properties/result/enum");
    let msg = schema["message"].as_str().unwrap();
    assert!(msg.contains("enum-value-added"), "{msg}");
    assert!(msg.contains("\"unknown\""), "{msg}");
    assert!(
        msg.contains("an output schema must accept nothing"),
        "{msg}"
    );
}

/// A lock checked out with Windows line endings records the same thing: `--locked`
/// passes and the file is left as it is.
#[test]
fn a_crlf_lock_is_current() {
    let ws = workspace();
    let lock = ws.path().join(LOCK);
    let crlf = read(&lock).replace('\n', "\r\n");
    write(&lock, &crlf);
    let out = run(&["build", ".", "--locked", "--format", "json"], ws.path());
    assert_eq!(out.status, 0, "{}", out.stdout);
    assert_eq!(read(&lock), crlf);
}

#[test]
fn locked_fails_when_the_lock_would_change_and_writes_nothing() {
    let ws = workspace();
    add_optional_input_property(ws.path());
    set_input_version(ws.path(), "1.1");
    set_skill_version(ws.path(), "1.1");
    let before = read(&ws.path().join(LOCK));
    let out = run(&["build", ".", "--locked", "--format", "json"], ws.path());
    assert_eq!(out.status, 1, "{}", out.stdout);
    let f = out.finding("lock_outdated");
    assert!(f["file"].as_str().unwrap().ends_with(LOCK));
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("skill evaluate_resource_condition 1.1"),
        "{f}"
    );
    assert_eq!(read(&ws.path().join(LOCK)), before);
    assert!(!ws.path().join("dist").exists());
    // A missing lock would be created: also outdated.
    std::fs::remove_file(ws.path().join(LOCK)).unwrap();
    let out = run(&["build", ".", "--locked"], ws.path());
    assert_eq!(out.status, 1);
    assert!(
        out.stderr.contains("error[lock_outdated]"),
        "{}",
        out.stderr
    );
    assert!(!ws.path().join(LOCK).exists());
    assert!(!ws.path().join("dist").exists());
}

#[test]
fn versions_must_go_up() {
    // A new skill version below the recorded one.
    let ws = workspace();
    let m = ws.path().join("skills/trace_network_path/skill.yaml");
    edit(&m, "skill_version: \"1.2\"", "skill_version: \"1.1\"");
    let f = build_refused(ws.path(), "version_not_increased");
    assert!(
        f[0]["message"].as_str().unwrap().contains("use 1.3"),
        "{}",
        f[0]
    );
    assert_eq!(f[0]["line"], 5);
    // A new MAJOR line starts at MINOR 0.
    let ws = workspace();
    let m = ws.path().join("skills/trace_network_path/skill.yaml");
    edit(&m, "skill_version: \"1.2\"", "skill_version: \"2.1\"");
    let f = build_refused(ws.path(), "version_not_increased");
    assert!(
        f[0]["message"].as_str().unwrap().contains("use 2.0"),
        "{}",
        f[0]
    );
    // A schema version below the recorded one, named on the manifest line declaring it.
    let ws = workspace();
    let m = ws.path().join("skills/trace_network_path/skill.yaml");
    edit(
        &m,
        "schema_uri: \"https://schemas.example.net/skills/trace-network-path/input\"\n  version: \"1.1\"",
        "schema_uri: \"https://schemas.example.net/skills/trace-network-path/input\"\n  version: \"0.9\"",
    );
    let f = build_refused(ws.path(), "version_not_increased");
    let schema = f
        .iter()
        .find(|f| f["message"].as_str().unwrap().contains("input.version"))
        .unwrap();
    assert_eq!(schema["line"], 15, "{schema}");
}

#[test]
fn skill_level_rules_need_a_major_step() {
    for (from, to, needle) in [
        (
            "cancellable: true",
            "cancellable: false",
            "cancellable went from true to false",
        ),
        (
            "default_mode: observe_only",
            "default_mode: execute",
            "more powerful",
        ),
        (
            "approval_may_be_required: false",
            "approval_may_be_required: true",
            "approval_may_be_required went from false to true",
        ),
        ("[sync, stream]", "[sync]", "response mode stream removed"),
    ] {
        let ws = workspace();
        edit(&manifest(ws.path()), from, to);
        set_skill_version(ws.path(), "1.1");
        let found = build_refused(ws.path(), "incompatible_change");
        let msg = found[0]["message"].as_str().unwrap();
        assert!(msg.contains(needle), "{msg}");
        assert!(found[0]["help"].as_str().unwrap().contains("\"2.0\""));
        // With a MAJOR step it passes.
        edit(
            &manifest(ws.path()),
            "skill_version: \"1.1\"",
            "skill_version: \"2.0\"",
        );
        build_ok(ws.path());
    }
    // A schema that took a MAJOR step (even for a change the rules find compatible: only
    // its publisher knows what it means) takes the skill with it.
    let ws = workspace();
    add_optional_input_property(ws.path());
    set_input_version(ws.path(), "2.0");
    set_skill_version(ws.path(), "1.1");
    let found = build_refused(ws.path(), "incompatible_change");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("the input schema took a MAJOR step (1.0 → 2.0)"),
        "{}",
        found[0]
    );
    // The opposite moves are MINOR.
    let ws = workspace();
    edit(
        &manifest(ws.path()),
        "[sync, stream]",
        "[sync, stream, poll]",
    );
    set_skill_version(ws.path(), "1.1");
    build_ok(ws.path());
}

#[test]
fn malformed_locks_are_refused() {
    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: [(&str, Mutation, &str); 4] = [
        (
            "bad digest",
            Box::new(|v| v["schemas"][0]["digest"] = json!("sha256:abc")),
            "/schemas/0/digest",
        ),
        (
            "bad version",
            Box::new(|v| v["skills"][0]["skill_version"] = json!("1.0.0")),
            "/skills/0/skill_version",
        ),
        (
            "duplicate entry",
            Box::new(|v| {
                let dup = v["skills"][1].clone();
                v["skills"].as_array_mut().unwrap().push(dup);
            }),
            "/skills/3",
        ),
        (
            "edited schema",
            Box::new(|v| v["schemas"][0]["schema"]["title"] = json!("edited")),
            "/schemas/0/digest",
        ),
    ];
    for (name, mutate, pointer) in cases {
        let ws = workspace();
        let mut lock = lock_json(ws.path());
        mutate(&mut lock);
        write(
            &ws.path().join(LOCK),
            serde_json::to_string_pretty(&lock).unwrap(),
        );
        let out = run(&["check", ".", "--format", "json"], ws.path());
        assert_eq!(out.status, 1, "{name}: {}", out.stdout);
        let f = out.finding("lock_invalid");
        assert_eq!(f["pointer"], pointer, "{name}: {f}");
        assert!(f["line"].as_u64().is_some(), "{name}: {f}");
        assert!(f["file"].as_str().unwrap().ends_with(LOCK));
        let built = run(&["build", "."], ws.path());
        assert_eq!(built.status, 1, "{name}");
        assert!(!ws.path().join("dist").exists(), "{name}");
    }
    // Not JSON at all, or JSON with a duplicate member.
    for text in [
        "{\"format\": ",
        "{\"format\": \"skillbundle-lock/1\", \"format\": 1}",
    ] {
        let ws = workspace();
        write(&ws.path().join(LOCK), text);
        let out = run(&["check", "."], ws.path());
        assert_eq!(out.status, 1);
        assert!(out.stderr.contains("error[lock_invalid]"), "{}", out.stderr);
    }
}

#[test]
fn previous_bundles_are_a_baseline_too() {
    // Publish a bundle, then lose the lock: --previous still catches the edit.
    let ws = workspace();
    let built = build_ok(ws.path());
    let bundle = ws.path().join(built["bundle"].as_str().unwrap());
    let kept = tempfile::tempdir().unwrap();
    let previous = kept.path().join("previous.tar.gz");
    std::fs::copy(&bundle, &previous).unwrap();
    std::fs::remove_file(ws.path().join(LOCK)).unwrap();
    std::fs::remove_dir_all(ws.path().join("dist")).unwrap();
    add_required_input_property(ws.path());
    let prev = previous.to_str().unwrap();
    let out = run(
        &["check", ".", "--previous", prev, "--format", "json"],
        ws.path(),
    );
    assert_eq!(out.status, 1, "{}", out.stdout);
    assert!(out
        .findings()
        .iter()
        .any(|f| f["code"] == "immutability_violation"));
    set_input_version(ws.path(), "1.1");
    set_skill_version(ws.path(), "1.1");
    let out = run(
        &["check", ".", "--previous", prev, "--format", "json"],
        ws.path(),
    );
    assert_eq!(out.status, 1);
    assert!(out
        .findings()
        .iter()
        .any(|f| f["code"] == "incompatible_change"));

    // A tampered bundle is refused before it is used.
    let bytes = std::fs::read(&previous).unwrap();
    let mut files = skillbundle::bundle::archive::read(&bytes, Default::default()).unwrap();
    let doc = files
        .get_mut("interfaces/evaluate_resource_condition.json")
        .unwrap();
    *doc = String::from_utf8(doc.clone())
        .unwrap()
        .replace("\"sync\"", "\"poll\"")
        .into_bytes();
    let tampered = kept.path().join("tampered.tar.gz");
    let out_bytes = skillbundle::bundle::archive::write(
        Vec::new(),
        files.iter().map(|(k, v)| (k.as_str(), v.as_slice())),
        0,
    )
    .unwrap();
    std::fs::write(&tampered, out_bytes).unwrap();
    let out = run(
        &[
            "check",
            ".",
            "--previous",
            tampered.to_str().unwrap(),
            "--format",
            "json",
        ],
        ws.path(),
    );
    assert_eq!(out.status, 1);
    let f = out.finding("digest_mismatch");
    assert!(
        f["file"]
            .as_str()
            .unwrap()
            .ends_with("tampered.tar.gz/interfaces/evaluate_resource_condition.json"),
        "{f}"
    );
}

#[test]
fn diff_reports_every_change_and_the_steps_needed() {
    let old = workspace();
    let new = workspace();
    add_required_input_property(new.path());
    edit_schema(new.path(), "input.json", |v| {
        v["description"] = json!("now documented");
    });
    set_input_version(new.path(), "1.1");
    set_skill_version(new.path(), "1.1");
    let (o, n) = (old.path().to_str().unwrap(), new.path().to_str().unwrap());
    let out = run(&["diff", o, n, "--format", "json"], old.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    let doc = out.json();
    assert_eq!(doc["satisfied"], false);
    let skill = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["skill_id"] == "evaluate_resource_condition")
        .unwrap()
        .clone();
    assert_eq!(skill["status"], "changed");
    assert_eq!(skill["required"], "major");
    assert_eq!(skill["actual"], "minor");
    assert_eq!(skill["suggested"], "2.0");
    let input = &skill["schemas"][0];
    assert_eq!(input["role"], "input");
    assert_eq!(input["breaking"], true);
    assert_eq!(input["required"], "major");
    let rules: Vec<(&str, bool)> = input["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["rule"].as_str().unwrap(),
                c["breaking"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(rules.contains(&("required-added", true)), "{rules:?}");
    assert!(rules.contains(&("property-added", false)), "{rules:?}");
    assert!(rules.contains(&("annotation-changed", false)), "{rules:?}");
    for other in ["manage_interface_config", "trace_network_path"] {
        assert!(doc["skills"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["skill_id"] == other && s["status"] == "unchanged"));
    }
    // Human output, bundle against workspace.
    let built = build_ok(old.path());
    let bundle = old.path().join(built["bundle"].as_str().unwrap());
    let out = run(&["diff", bundle.to_str().unwrap(), n], old.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "evaluate_resource_condition 1.0 → 1.1: needs a MAJOR step, took a MINOR step — not enough: use 2.0"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("breaking   required-added (narrowing)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("manage_interface_config 2.0: unchanged"),
        "{}",
        out.stdout
    );
}

/// `diff` compares what can be compared (issue 14 item 7): a failing example does not
/// stop the comparison of its skill, a skill whose schema is broken is `not_compared`,
/// both are reported as warnings, and the exit status is 0 because the comparison ran.
#[test]
fn diff_compares_what_it_can_and_reports_the_rest() {
    let old = workspace();
    let new = workspace();
    // The worked example: a breaking input change with a MINOR bump, and a valid input
    // example that now fails (it lacks the new required property).
    edit_schema(new.path(), "input.json", |v| {
        v["properties"]["priority"] = json!({"type": "integer"});
        v["required"]
            .as_array_mut()
            .unwrap()
            .push(json!("priority"));
    });
    set_input_version(new.path(), "1.1");
    set_skill_version(new.path(), "1.1");
    // trace_network_path: an input schema that is not valid JSON.
    write(
        &new.path()
            .join("skills/trace_network_path/schemas/input.json"),
        "{\"type\": \n",
    );
    let (o, n) = (old.path().to_str().unwrap(), new.path().to_str().unwrap());
    let out = run(&["diff", o, n, "--format", "json"], old.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    let doc = out.json();
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["satisfied"], false);
    let skill = |id: &str| {
        doc["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["skill_id"] == id)
            .unwrap_or_else(|| panic!("{id} missing: {doc}"))
            .clone()
    };
    let erc = skill("evaluate_resource_condition");
    assert_eq!(erc["status"], "changed");
    assert_eq!(erc["required"], "major");
    assert_eq!(erc["suggested"], "2.0");
    let tnp = skill("trace_network_path");
    assert_eq!(tnp["status"], "not_compared");
    assert_eq!(tnp["old_version"], "1.2");
    assert_eq!(tnp["new_version"], Value::Null);
    assert_eq!(skill("manage_interface_config")["status"], "unchanged");
    let findings = doc["findings"].as_array().unwrap();
    let codes: Vec<&str> = findings
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"fixture_failed"), "{codes:?}");
    assert!(codes.contains(&"json_invalid"), "{codes:?}");
    assert!(
        findings.iter().all(|f| f["severity"] == "warning"),
        "{findings:?}"
    );
    // For people: the warnings on stderr, the comparison on stdout.
    let out = run(&["diff", o, n], old.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "trace_network_path 1.2 → -: not compared (a side has problems: see the warnings)"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("evaluate_resource_condition 1.0 → 1.1: needs a MAJOR step"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("warning[fixture_failed]"),
        "{}",
        out.stderr
    );
}

/// A skill.yaml that cannot be read hides which skill its directory holds: a skill
/// missing from that side is `not_compared`, never `removed`.
#[test]
fn diff_never_calls_a_skill_removed_when_a_manifest_is_unreadable() {
    let old = workspace();
    let new = workspace();
    write(&manifest(new.path()), "skill_id: [\n");
    let (o, n) = (old.path().to_str().unwrap(), new.path().to_str().unwrap());
    let out = run(&["diff", o, n, "--format", "json"], old.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    let doc = out.json();
    let statuses: Vec<(&str, &str)> = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["skill_id"].as_str().unwrap(),
                s["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("evaluate_resource_condition", "not_compared"),
            ("manage_interface_config", "unchanged"),
            ("trace_network_path", "unchanged"),
        ]
    );
    assert_eq!(doc["findings"][0]["severity"], "warning");
}

/// A directory that is not a workspace is still a refusal: nothing was compared.
#[test]
fn diff_refuses_a_workspace_it_cannot_open() {
    let old = workspace();
    let empty = tempfile::tempdir().unwrap();
    let out = run(
        &[
            "diff",
            old.path().to_str().unwrap(),
            empty.path().to_str().unwrap(),
            "--format",
            "json",
        ],
        old.path(),
    );
    assert_eq!(out.status, 2, "{}", out.stdout);
    assert_eq!(out.json()["ok"], false);
    assert_eq!(out.json()["findings"][0]["code"], "io_error");
}
