//! Nothing dropped: a workspace never loses a skill, an example folder or a schema's
//! meaning without a word, and `check` passes only what `build` accepts.
//!
//! (Misnamed and misplaced manifests and a misspelt `examples/` folder are also shown
//! as CLI output in tests/cmd/check-layout*.toml; `init --skill describe_skill` in
//! tests/cmd/init-reserved.toml.)

use crate::common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;

const TNP: &str = "skills/trace_network_path";

fn codes(r: &Run) -> Vec<String> {
    r.findings()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_owned())
        .collect()
}

/// A skill whose manifest is named `skill.yml` is a finding, not a skill fewer, even
/// when the lock records the skill as released.
#[test]
fn a_misnamed_manifest_is_a_finding_not_a_dropped_skill() {
    for name in ["skill.yml", "Skill.yaml", "SKILL.YAML", "skill.json"] {
        let ws = workspace();
        let root = ws.path();
        std::fs::rename(root.join(TNP).join("skill.yaml"), root.join(TNP).join(name)).unwrap();
        for command in ["check", "build"] {
            let r = run(&[command, ".", "--format", "json"], root);
            assert_eq!(r.status, 1, "{name} {command}: {}", r.stdout);
            let f = r.finding("layout_unexpected");
            assert!(
                f["message"]
                    .as_str()
                    .unwrap()
                    .contains("did you mean skill.yaml"),
                "{f}"
            );
            assert!(f["file"].as_str().unwrap().ends_with(name), "{f}");
        }
        assert!(!root.join("dist").exists(), "{name}: nothing is written");
    }
}

#[test]
fn a_manifest_one_folder_too_deep_is_a_finding() {
    let ws = workspace();
    let root = ws.path();
    let deep = root.join("skills/group");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::rename(root.join(TNP), deep.join("trace_network_path")).unwrap();
    let r = run(&["check", ".", "--format", "json"], root);
    assert_eq!(r.status, 1, "{}", r.stdout);
    let f = r.finding("layout_unexpected");
    let message = f["message"].as_str().unwrap();
    assert!(message.contains("one folder too deep"), "{f}");
    assert!(message.contains("skills/group/skill.yaml"), "{f}");
}

/// A folder in a skill that nothing reads although it is meant to be: every example
/// check would be skipped while `check` says "all checks passed".
#[test]
fn a_misspelt_examples_folder_is_a_finding() {
    for name in ["exmaples", "example", "Examples", "tests"] {
        let ws = workspace();
        let root = ws.path();
        std::fs::rename(root.join(ERC).join("examples"), root.join(ERC).join(name)).unwrap();
        let r = run(&["check", ".", "--format", "json"], root);
        assert_eq!(r.status, 1, "{name}: {}", r.stdout);
        let f = r.finding("layout_unexpected");
        assert!(
            f["message"]
                .as_str()
                .unwrap()
                .contains("did you mean examples/?"),
            "{f}"
        );
    }
    // A folder of shared definitions is not an examples folder.
    let ws = workspace();
    let root = ws.path();
    write(&root.join(ERC).join("defs/notes.json"), "{}");
    let r = run(&["check", ".", "--format", "json"], root);
    assert_eq!(r.status, 0, "{}", r.stdout);
}

/// A skill the lock records and the workspace no longer has is refused until its
/// removal is stated in skillbundle.yaml (`removed_skills`).
#[test]
fn a_released_skill_missing_from_the_workspace_is_refused_unless_its_removal_is_stated() {
    let ws = workspace();
    let root = ws.path();
    std::fs::remove_dir_all(root.join(TNP)).unwrap();
    for command in ["check", "build"] {
        let r = run(&[command, ".", "--format", "json"], root);
        assert_eq!(r.status, 1, "{command}: {}", r.stdout);
        let f = r.finding("skill_removed");
        let message = f["message"].as_str().unwrap();
        assert!(message.contains("\"trace_network_path\""), "{f}");
        assert!(
            f["help"]
                .as_str()
                .unwrap()
                .contains("removed_skills: [trace_network_path]"),
            "{f}"
        );
    }
    let manifest = root.join("skillbundle.yaml");
    let text = read(&manifest);
    write(
        &manifest,
        format!("{text}removed_skills: [trace_network_path]\n"),
    );
    let r = run(&["build", ".", "--format", "json"], root);
    assert_eq!(r.status, 0, "{}", r.stdout);
    let report = r.json();
    let skills: Vec<&str> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["skill_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        skills,
        ["evaluate_resource_condition", "manage_interface_config"]
    );

    // A stated removal must be true: the skill is gone and the lock records it.
    for listed in ["evaluate_resource_condition", "never_released"] {
        write(
            &manifest,
            format!("{text}removed_skills: [trace_network_path, {listed}]\n"),
        );
        let r = run(&["check", ".", "--format", "json"], root);
        assert_eq!(r.status, 1, "{listed}: {}", r.stdout);
        let f = r.finding("manifest_invalid");
        assert!(f["message"].as_str().unwrap().contains(listed), "{f}");
    }
}

/// A relative `$ref` that names an embedded resource with a relative `$id` has two
/// readings (JSON Schema's: the embedded resource; the shared-schema rule's: a
/// workspace file): it is refused, with both.
#[test]
fn a_ref_to_an_embedded_resource_with_a_relative_id_is_refused_as_ambiguous() {
    for with_file in [true, false] {
        let ws = workspace();
        let root = ws.path();
        let input = root.join(ERC).join("schemas/input.json");
        let mut schema: Value = serde_json::from_str(&read(&input)).unwrap();
        schema["$defs"] = json!({"unit": {"$id": "unit.json", "type": "string"}});
        schema["properties"]["condition"]["properties"]["unit"] = json!({"$ref": "unit.json"});
        write(&input, serde_json::to_string_pretty(&schema).unwrap());
        if with_file {
            write(
                &root.join(ERC).join("schemas/unit.json"),
                r#"{"type": "integer"}"#,
            );
        }
        for command in ["check", "build"] {
            let r = run(&[command, ".", "--format", "json"], root);
            assert_eq!(r.status, 1, "{command}: {}", r.stdout);
            let f = r.finding("ref_ambiguous");
            let message = f["message"].as_str().unwrap();
            assert!(message.contains("embedded resource at /$defs/unit"), "{f}");
            assert!(message.contains(&format!("{ERC}/schemas/unit.json")), "{f}");
            assert_eq!(f["pointer"], "/properties/condition/properties/unit/$ref");
        }
    }
}

/// `check` reports what `build` would refuse about the destination: a bundle of the
/// same name and version already there with other content.
#[test]
fn check_reports_what_build_would_refuse_about_the_destination() {
    let ws = workspace();
    let root = ws.path();
    assert_eq!(run(&["build", "."], root).status, 0);
    // Other content under the same bundle name and version.
    let card = root.join(ERC).join("skill.yaml");
    let text = read(&card);
    write(
        &card,
        text.replace(
            "description: Checks whether",
            "description: Checks (again) whether",
        ),
    );
    let built = run(&["build", ".", "--format", "json"], root);
    assert_eq!(built.status, 1, "{}", built.stdout);
    built.finding("release_immutable");
    let checked = run(&["check", ".", "--format", "json"], root);
    assert_eq!(checked.status, 1, "{}", checked.stdout);
    assert_eq!(codes(&checked), codes(&built));
    // As `build --force` and `build --out elsewhere` would, check passes them.
    assert_eq!(run(&["check", ".", "--force"], root).status, 0);
    let elsewhere = tempfile::tempdir().unwrap();
    let out = elsewhere.path().to_str().unwrap();
    assert_eq!(run(&["check", ".", "--out", out], root).status, 0);
    assert!(
        Path::new(out).read_dir().unwrap().next().is_none(),
        "check writes nothing"
    );
}
