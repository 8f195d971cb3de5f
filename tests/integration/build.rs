//! `skillbundle build` end to end: the worked example, reproducibility, and every bad
//! input of the core pipeline reported with its code, file and location, exit status 1,
//! and no bundle left behind.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;

const WORKED_EXAMPLE_DIGEST: &str =
    "sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d";

#[test]
fn worked_example_reproduces_the_drafts_digests() {
    let ws = workspace();
    let built = run(&["build", ".", "--format", "json"], ws.path());
    assert_eq!(built.status, 0, "{}{}", built.stdout, built.stderr);
    let bundle = built.json()["bundle"].as_str().unwrap().to_string();

    let inspected = run(&["inspect", &bundle, "--format", "json"], ws.path());
    assert_eq!(inspected.status, 0, "{}", inspected.stderr);
    let summary = inspected.json();
    assert_eq!(summary["bundle"]["name"], "example-network-skills");
    let skill = summary["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["skill_id"] == "evaluate_resource_condition")
        .unwrap()
        .clone();
    assert_eq!(skill["skill_version"], "1.0");
    assert_eq!(skill["interface_digest"], WORKED_EXAMPLE_DIGEST);
    let digests: Vec<&str> = skill["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["digest"].as_str().unwrap())
        .collect();
    assert_eq!(
        digests,
        [
            "sha256:a593fb695fd727eaa36602d9b539e53e54cde50aec6f4b7df5d624b70148f26a",
            "sha256:11ee18a8c1ab8821e083d61298ef07c4f2ce2e29c3eafb82f4742f1e1e969bce",
            "sha256:3cf0d51c1d6e97d03fa80d5b9435c55d955f824bc9e58d053bb2095e18a0a8c4",
        ]
    );
    assert_eq!(skill["schemas"][2]["kind"], "resource-observation");
    assert_eq!(skill["schemas"][2]["role"], "record");

    // sha256 of the interface file inside the archive is its interface_digest.
    let bytes = std::fs::read(ws.path().join(&bundle)).unwrap();
    let files = skillbundle::bundle::archive::read(&bytes, Default::default()).unwrap();
    let doc = &files["interfaces/evaluate_resource_condition.json"];
    assert_eq!(
        skillbundle::wire::digest::Digest::of_bytes(doc).as_str(),
        WORKED_EXAMPLE_DIGEST
    );
    assert_eq!(
        files.keys().collect::<Vec<_>>(),
        [
            "a2a/agent-card-fragment.json",
            "interfaces/evaluate_resource_condition.json",
            "interfaces/manage_interface_config.json",
            "interfaces/trace_network_path.json",
            "manifest.json",
        ]
    );
}

#[test]
fn the_card_fragment_advertises_the_extension_and_describe_skill() {
    let ws = workspace();
    let built = run(&["build", ".", "--format", "json"], ws.path());
    assert_eq!(built.status, 0, "{}", built.stderr);
    let bytes = std::fs::read(ws.path().join(built.json()["bundle"].as_str().unwrap())).unwrap();
    let files = skillbundle::bundle::archive::read(&bytes, Default::default()).unwrap();
    let fragment: Value = serde_json::from_slice(&files["a2a/agent-card-fragment.json"]).unwrap();
    let ext = &fragment["capabilities"]["extensions"][0];
    assert_eq!(
        ext["uri"],
        "https://agentic-network-management.github.io/agent-schema-interfaces/extensions/schema-interface/v1"
    );
    assert_eq!(ext["required"], false);
    assert_eq!(ext["params"]["interface_version"], "1.0");
    let advertised = ext["params"]["skills"].as_array().unwrap();
    assert!(advertised.contains(&serde_json::json!({
        "skill_id": "evaluate_resource_condition",
        "skill_version": "1.0",
        "interface_digest": WORKED_EXAMPLE_DIGEST,
    })));
    let ids: Vec<&str> = fragment["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "describe_skill",
            "evaluate_resource_condition",
            "manage_interface_config",
            "trace_network_path"
        ]
    );
    // Each entry is an A2A 1.0 AgentSkill.
    for skill in fragment["skills"].as_array().unwrap() {
        let parsed: a2a_types::AgentSkill = serde_json::from_value(skill.clone()).unwrap();
        assert_eq!(
            parsed.input_modes.as_deref(),
            Some(&["application/json".to_string()][..])
        );
    }
}

#[cfg(unix)]
fn scramble_metadata(root: &Path, seconds: i64) {
    use std::os::unix::fs::PermissionsExt;
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let f = std::fs::File::options()
                .write(true)
                .open(entry.path())
                .unwrap();
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds as u64);
            f.set_modified(t).unwrap();
            std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }
}

#[cfg(unix)]
#[test]
fn builds_are_byte_for_byte_reproducible() {
    let a = workspace();
    let b = workspace();
    scramble_metadata(b.path(), 1_700_000_000);
    let out_a = run(&["build", ".", "--format", "json"], a.path());
    let out_b = run(&["build", ".", "--format", "json"], b.path());
    assert_eq!(out_a.status, 0, "{}", out_a.stderr);
    assert_eq!(out_b.status, 0, "{}", out_b.stderr);
    let path_a = a.path().join(out_a.json()["bundle"].as_str().unwrap());
    let path_b = b.path().join(out_b.json()["bundle"].as_str().unwrap());
    assert_eq!(sha256_file(&path_a), sha256_file(&path_b));
    // And again in the same place: same bytes.
    let again = run(&["build", ".", "--format", "json"], a.path());
    assert_eq!(again.status, 0);
    assert_eq!(sha256_file(&path_a), sha256_file(&path_b));
}

/// Mutate a fresh workspace copy, build it, and check the single finding of `code`:
/// exit status 1, the file it names, its line when given, and no bundle written.
fn refused(mutate: impl FnOnce(&Path), code: &str, file: &str, line: Option<u64>) -> Value {
    let ws = workspace();
    mutate(ws.path());
    let out = run(&["build", ".", "--format", "json"], ws.path());
    assert_eq!(
        out.status, 1,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    let finding = out.finding(code);
    let named = finding["file"]
        .as_str()
        .unwrap_or_default()
        .replace('\\', "/");
    assert!(
        named.ends_with(file),
        "finding names {named:?}, expected …{file}: {finding}"
    );
    if let Some(line) = line {
        assert_eq!(finding["line"], line, "{finding}");
        assert!(finding["column"].as_u64().is_some(), "{finding}");
    }
    assert!(
        !ws.path().join("dist").exists(),
        "a failed build wrote output"
    );
    // Human output carries the same code and file.
    let human = run(&["check", "."], ws.path());
    assert_eq!(human.status, 1);
    assert!(
        human.stderr.contains(&format!("error[{code}]")),
        "{}",
        human.stderr
    );
    assert!(human.stderr.contains(file), "{}", human.stderr);
    finding
}

fn input_schema(ws: &Path) -> std::path::PathBuf {
    ws.join(ERC).join("schemas/input.json")
}

#[test]
fn duplicate_json_keys_are_json_invalid() {
    let f = refused(
        |ws| {
            write(
                &input_schema(ws),
                "{\n  \"type\": \"object\",\n  \"type\": \"array\"\n}\n",
            )
        },
        "json_invalid",
        "schemas/input.json",
        Some(3),
    );
    assert!(f["message"].as_str().unwrap().contains("duplicate"), "{f}");
}

#[test]
fn lone_surrogates_are_json_invalid() {
    refused(
        |ws| write(&input_schema(ws), "{\"title\": \"\\ud800\"}"),
        "json_invalid",
        "schemas/input.json",
        Some(1),
    );
}

#[test]
fn non_utf8_is_json_invalid() {
    refused(
        |ws| write(&input_schema(ws), b"{\"title\": \"\xc3\x28\"}".as_slice()),
        "json_invalid",
        "schemas/input.json",
        Some(1),
    );
}

#[test]
fn trailing_data_is_json_invalid() {
    refused(
        |ws| write(&input_schema(ws), "{}\n{}\n"),
        "json_invalid",
        "schemas/input.json",
        Some(2),
    );
}

#[test]
fn out_of_range_numbers_are_json_invalid() {
    refused(
        |ws| write(&input_schema(ws), "{\"maximum\": 9007199254740993}"),
        "json_invalid",
        "schemas/input.json",
        Some(1),
    );
    refused(
        |ws| write(&input_schema(ws), "{\"maximum\": 1e999}"),
        "json_invalid",
        "schemas/input.json",
        Some(1),
    );
}

#[test]
fn yaml_schemas_follow_the_same_rules() {
    let f = refused(
        |ws| {
            write(
                &ws.join("skills/manage_interface_config/schemas/input.yaml"),
                "type: object\ntitle: a\ntype: array\n",
            )
        },
        "json_invalid",
        "schemas/input.yaml",
        Some(3),
    );
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("duplicate"),
        "{f}"
    );
}

fn edit_manifest(ws: &Path, from: &str, to: &str) {
    let path = ws.join(ERC).join("skill.yaml");
    let text = read(&path);
    assert!(text.contains(from), "{from:?} not in manifest");
    write(&path, text.replacen(from, to, 1));
}

#[test]
fn non_canonical_versions_are_version_invalid() {
    for bad in [
        "\"01.0\"",
        "\"1\"",
        "\"1.0.0\"",
        "\"1.\"",
        "\"latest\"",
        "1.10",
        "1.0",
    ] {
        let f = refused(
            |ws| {
                edit_manifest(
                    ws,
                    "skill_version: \"1.0\"",
                    &format!("skill_version: {bad}"),
                )
            },
            "version_invalid",
            "evaluate_resource_condition/skill.yaml",
            Some(4),
        );
        if bad == "1.10" {
            assert!(f["message"].as_str().unwrap().contains("quote"), "{f}");
        }
    }
}

#[test]
fn unknown_manifest_fields_suggest_the_right_name() {
    let f = refused(
        |ws| edit_manifest(ws, "skill_version:", "skill_verison:"),
        "manifest_invalid",
        "evaluate_resource_condition/skill.yaml",
        Some(4),
    );
    assert_eq!(f["help"], "did you mean `skill_version`?");
}

#[test]
fn duplicate_yaml_keys_in_manifests_are_refused() {
    refused(
        |ws| {
            edit_manifest(
                ws,
                "skill_version: \"1.0\"",
                "skill_version: \"1.0\"\nskill_version: \"2.0\"",
            )
        },
        "manifest_invalid",
        "evaluate_resource_condition/skill.yaml",
        Some(5),
    );
}

#[test]
fn paths_that_leave_the_workspace_are_path_invalid() {
    refused(
        |ws| {
            edit_manifest(
                ws,
                "file: schemas/input.json",
                "file: ../../../outside.json",
            )
        },
        "path_invalid",
        "evaluate_resource_condition/skill.yaml",
        None,
    );
    refused(
        |ws| edit_manifest(ws, "file: schemas/input.json", "file: /etc/hostname"),
        "path_invalid",
        "evaluate_resource_condition/skill.yaml",
        None,
    );
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_workspace_are_path_invalid() {
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), "{}").unwrap();
    let target = outside.path().to_path_buf();
    let f = refused(
        move |ws| {
            let link = input_schema(ws);
            std::fs::remove_file(&link).unwrap();
            std::os::unix::fs::symlink(&target, &link).unwrap();
        },
        "path_invalid",
        "evaluate_resource_condition/skill.yaml",
        None,
    );
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("outside the workspace"),
        "{f}"
    );
}

fn add_skill_copy(ws: &Path, dir: &str, edit: impl Fn(String) -> String) {
    let from = ws.join(ERC);
    let to = ws.join("skills").join(dir);
    copy_tree(&from, &to);
    let text = read(&to.join("skill.yaml"));
    write(&to.join("skill.yaml"), edit(text));
}

#[test]
fn two_skills_with_one_id_are_duplicate_skill() {
    refused(
        |ws| add_skill_copy(ws, "zz_copy", |t| t),
        "duplicate_skill",
        "zz_copy/skill.yaml",
        None,
    );
}

#[test]
fn describe_skill_is_reserved() {
    refused(
        |ws| {
            edit_manifest(
                ws,
                "skill_id: evaluate_resource_condition",
                "skill_id: describe_skill",
            )
        },
        "duplicate_skill",
        "evaluate_resource_condition/skill.yaml",
        None,
    );
}

#[test]
fn record_kinds_must_differ_from_the_skill_id_and_each_other() {
    refused(
        |ws| {
            edit_manifest(
                ws,
                "kind: resource-observation",
                "kind: evaluate_resource_condition",
            )
        },
        "manifest_invalid",
        "evaluate_resource_condition/skill.yaml",
        None,
    );
    refused(
        |ws| {
            edit_manifest(
                ws,
                "interaction:",
                "  - {kind: resource-observation, file: schemas/resource-observation.json,\n     schema_uri: \"urn:example:resource-observation:1.0\", version: \"1.0\"}\ninteraction:",
            )
        },
        "manifest_invalid",
        "evaluate_resource_condition/skill.yaml",
        None,
    );
}

#[test]
fn one_schema_identity_with_two_contents_is_schema_conflict() {
    let f = refused(
        |ws| {
            add_skill_copy(ws, "zz_variant", |t| {
                t.replace(
                    "skill_id: evaluate_resource_condition",
                    "skill_id: evaluate_variant",
                )
            });
            std::fs::remove_dir_all(ws.join("skills/zz_variant/examples")).unwrap();
            // Same schema_uri + version as the original input schema, different content.
            write(
                &ws.join("skills/zz_variant/schemas/input.json"),
                "{\"type\": \"object\", \"title\": \"changed\"}",
            );
        },
        "schema_conflict",
        "zz_variant/schemas/input.json",
        None,
    );
    assert_eq!(f["condition"], "interface_invalid");
}

#[test]
fn a_failed_build_leaves_an_earlier_bundle_untouched() {
    let ws = workspace();
    let first = run(&["build", ".", "--format", "json"], ws.path());
    assert_eq!(first.status, 0);
    let bundle = ws.path().join(first.json()["bundle"].as_str().unwrap());
    let before = sha256_file(&bundle);
    write(&input_schema(ws.path()), "{ broken");
    let second = run(&["build", ".", "--format", "json"], ws.path());
    assert_eq!(second.status, 1);
    assert_eq!(sha256_file(&bundle), before);
    let leftovers: Vec<_> = std::fs::read_dir(bundle.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

#[test]
fn findings_in_different_skills_are_all_reported() {
    let ws = workspace();
    write(&input_schema(ws.path()), "{\"a\":1,\"a\":2}");
    write(
        &ws.path()
            .join("skills/trace_network_path/schemas/output.json"),
        "[1,",
    );
    let out = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(out.status, 1);
    let files: Vec<String> = out
        .findings()
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
}

#[test]
fn a_missing_workspace_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["check", "nowhere"], dir.path());
    assert_eq!(out.status, 2);
    assert!(out.stderr.contains("skillbundle.yaml"), "{}", out.stderr);
}
