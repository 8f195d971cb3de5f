//! Nothing lost: a build that fails at any step, is killed while writing, or races
//! another build to the same path never leaves a damaged or partial bundle at the final
//! path. (The lock file's own atomicity is tested with the ledger.)

use crate::common;

use common::*;
use skillbundle::agent::{Bundle, TrustedKeys};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const BUNDLE: &str = "dist/example-network-skills-0.1.0.tar.gz";
const ERC_INPUT: &str = "skills/evaluate_resource_condition/schemas/input.json";
const ERC_SKILL: &str = "skills/evaluate_resource_condition/skill.yaml";

fn dist_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|it| {
            it.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// One mutation per pipeline step that can refuse a build, each undone after its run.
#[test]
fn a_build_failing_at_any_step_leaves_the_earlier_bundle_byte_identical() {
    let ws = workspace();
    let root = ws.path();
    let first = run(&["build", ".", "--format", "json"], root);
    assert_eq!(first.status, 0, "{}", first.stderr);
    let bundle = root.join(BUNDLE);
    let before = std::fs::read(&bundle).unwrap();

    type Step = (&'static str, &'static str, &'static str, &'static str);
    // (step, file, from, to): replace `from` with `to` in `file`.
    let steps: [Step; 12] = [
        (
            "workspace manifest",
            "skillbundle.yaml",
            "bundle:",
            "bundel:",
        ),
        (
            "skill manifest",
            ERC_SKILL,
            "skill_version: \"1.0\"",
            "skill_version: 1.10",
        ),
        (
            "path",
            ERC_SKILL,
            "file: schemas/input.json",
            "file: ../input.json",
        ),
        (
            "strict JSON",
            ERC_INPUT,
            "\"type\": \"object\",",
            "\"type\": \"object\", \"type\": \"object\",",
        ),
        (
            "limits",
            ERC_INPUT,
            "\"type\": \"object\",",
            "\"pattern\": \"$PATTERN\", \"type\": \"object\",",
        ),
        (
            "dialect",
            ERC_INPUT,
            "\"type\": \"object\",",
            "\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"type\": \"object\",",
        ),
        (
            "closure",
            ERC_INPUT,
            "\"type\": \"object\",",
            "\"$ref\": \"https://example.com/x\", \"type\": \"object\",",
        ),
        (
            "meta-schema",
            ERC_INPUT,
            "\"type\": \"object\",",
            "\"type\": \"objekt\",",
        ),
        (
            "examples",
            ERC_INPUT,
            "\"type\": \"string\"",
            "\"type\": \"integer\"",
        ),
        (
            "interface document",
            ERC_SKILL,
            "supported_response_modes: [sync, stream]",
            "supported_response_modes: []",
        ),
        (
            "cross-skill",
            "skills/trace_network_path/skill.yaml",
            "skill_id: trace_network_path",
            "skill_id: evaluate_resource_condition",
        ),
        (
            "reserved id",
            ERC_SKILL,
            "skill_id: evaluate_resource_condition",
            "skill_id: describe_skill",
        ),
    ];
    let long_pattern = "a".repeat(5000);
    for (step, file, from, to) in steps {
        let path = root.join(file);
        let original = read(&path);
        assert!(original.contains(from), "{step}: {file} lacks {from:?}");
        write(
            &path,
            original.replacen(from, &to.replace("$PATTERN", &long_pattern), 1),
        );
        let out = run(&["build", ".", "--format", "json"], root);
        assert_eq!(out.status, 1, "{step}: {}{}", out.stdout, out.stderr);
        assert_eq!(
            std::fs::read(&bundle).unwrap(),
            before,
            "{step}: bundle changed"
        );
        assert_eq!(
            dist_entries(&root.join("dist")).len(),
            1,
            "{step}: files left in dist/"
        );
        write(&path, original);
    }
    // A usage error (an unreadable signing key) is refused before anything is written.
    let out = run(&["build", ".", "--sign-key", "missing.key"], root);
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert_eq!(std::fs::read(&bundle).unwrap(), before);
    // And the untouched workspace still builds the same bytes.
    assert_eq!(run(&["build", "."], root).status, 0);
    assert_eq!(std::fs::read(&bundle).unwrap(), before);
}

/// A workspace of `skills` generated skills, each carrying `pad` bytes of incompressible
/// text in its input schema, so that writing the bundle takes a while in a debug build.
fn generated_workspace(root: &Path, name: &str, skills: usize, pad: usize) {
    write(
        &root.join("skillbundle.yaml"),
        format!("bundle: {{name: {name}, version: \"1.0.0\"}}\n"),
    );
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for i in 0..skills {
        let dir = root.join(format!("skills/s{i:04}"));
        let text: String = (0..pad)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        [(x % 62) as usize],
                )
            })
            .collect();
        write(
            &dir.join("schemas/input.json"),
            format!("{{\"type\": \"object\", \"description\": \"{text}\"}}"),
        );
        write(&dir.join("schemas/output.json"), "{\"type\": \"object\"}");
        write(
            &dir.join("skill.yaml"),
            format!(
                "skill_id: s{i:04}\nskill_version: \"1.0\"\ncard: {{name: S{i}, description: Generated.}}\n\
                 input: {{file: schemas/input.json, schema_uri: \"urn:example:s{i}:input\", version: \"1.0\"}}\n\
                 output: {{file: schemas/output.json, schema_uri: \"urn:example:s{i}:output\", version: \"1.0\"}}\n\
                 interaction: {{supported_response_modes: [sync], cancellable: false}}\n\
                 authority: {{default_mode: observe_only, approval_may_be_required: false}}\n"
            ),
        );
    }
}

fn partials(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|it| {
            it.filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().to_string_lossy().into_owned();
                (name.starts_with(".skillbundle-") && name.ends_with(".partial")).then(|| e.path())
            })
            .collect()
        })
        .unwrap_or_default()
}

fn opens(path: &Path) -> bool {
    Bundle::open_path(path, &TrustedKeys::allow_unsigned()).is_ok()
}

#[cfg(unix)]
#[test]
fn a_build_killed_while_writing_leaves_the_old_bundle_or_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    generated_workspace(root, "big", 200, 48 * 1024);
    let dist = root.join("dist");
    let dest = dist.join("big-1.0.0.tar.gz");
    // An earlier bundle at the same path, from a smaller selection of the same skills.
    let manifest = read(&root.join("skillbundle.yaml"));
    write(
        &root.join("skillbundle.yaml"),
        format!("{manifest}skills: [skills/s0000]\n"),
    );
    assert_eq!(run(&["build", "."], root).status, 0);
    let old = std::fs::read(&dest).unwrap();
    write(&root.join("skillbundle.yaml"), &manifest);

    // Other content under the same name and version: only with --force
    // (tests/integration/release_output.rs); what is tested here is how it is replaced.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillbundle"))
        .args(["build", ".", "--force"])
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut caught = false;
    while start.elapsed() < Duration::from_secs(120) {
        if !partials(&dist).is_empty() {
            child.kill().unwrap(); // SIGKILL
            caught = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    child.wait().unwrap();
    assert!(
        caught,
        "the build finished before its temporary file was seen"
    );

    // The final path holds the old bundle, byte for byte (or, had the rename won the
    // race against the kill, the complete new one).
    let now = std::fs::read(&dest).unwrap();
    assert!(
        now == old || opens(&dest),
        "a partial bundle at the final path"
    );
    // What is left is only the temporary file, under its temporary name.
    let leftovers = partials(&dist);
    assert!(leftovers.len() <= 1, "{leftovers:?}");
    assert_eq!(dist_entries(&dist).len(), 1 + leftovers.len());

    // The next build completes and removes the temporary file the killed build left
    // (beside the bundle, and a lock's beside the lock); one whose writer still holds
    // it (another build running) is kept.
    let lock_leftover = root.join(".skillbundle-lock-killed.partial");
    write(&lock_leftover, b"half a lock");
    let fresh = dist.join(".skillbundle-fresh.partial");
    write(&fresh, b"another build's work in progress");
    let held = std::fs::File::open(&fresh).unwrap();
    // SAFETY: a valid descriptor, locked as a running build locks its temporary file.
    let locked = unsafe {
        libc::flock(
            std::os::unix::io::AsRawFd::as_raw_fd(&held),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    assert_eq!(locked, 0);
    assert_eq!(run(&["build", ".", "--force"], root).status, 0);
    assert!(opens(&dest));
    assert_ne!(std::fs::read(&dest).unwrap(), old);
    assert_eq!(partials(&dist), vec![fresh]);
    assert!(partials(root).is_empty(), "{:?}", partials(root));
    drop(held);
}

/// Ctrl-C (SIGINT) or SIGTERM while a build writes its bundle: the build removes its
/// temporary file before it ends, and the bundle's path holds the old bundle or the
/// complete new one.
#[cfg(unix)]
#[test]
fn an_interrupted_build_removes_its_temporary_files() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    generated_workspace(root, "big", 200, 48 * 1024);
    let dist = root.join("dist");
    let dest = dist.join("big-1.0.0.tar.gz");
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let _ = std::fs::remove_dir_all(&dist);
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillbundle"))
            .args(["build", "."])
            .current_dir(root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let mut caught = false;
        while start.elapsed() < Duration::from_secs(120) {
            if !partials(&dist).is_empty() {
                // SAFETY: signalling our own child.
                assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
                caught = true;
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let status = child.wait().unwrap();
        assert!(
            caught,
            "the build finished before its temporary file was seen"
        );
        // Ended by the signal, as an interrupted program does (or, had the write won
        // the race, completed).
        assert!(
            status.signal() == Some(signal) || status.success(),
            "{status:?}"
        );
        assert!(partials(&dist).is_empty(), "{:?}", partials(&dist));
        assert!(partials(root).is_empty(), "{:?}", partials(root));
        assert!(
            !dest.exists() || opens(&dest),
            "a partial bundle at the final path"
        );
    }
}

#[test]
fn two_builds_racing_to_one_path_leave_one_complete_bundle() {
    // Two workspaces with the same bundle name and version but different content.
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    generated_workspace(a.path(), "race", 20, 4 * 1024);
    generated_workspace(b.path(), "race", 21, 4 * 1024);
    let out = tempfile::tempdir().unwrap();
    let expected: Vec<Vec<u8>> = [a.path(), b.path()]
        .iter()
        .map(|ws| {
            let own = ws.join("own");
            assert_eq!(run(&["build", ".", "--out", "own"], ws).status, 0);
            std::fs::read(own.join("race-1.0.0.tar.gz")).unwrap()
        })
        .collect();
    assert_ne!(expected[0], expected[1]);
    let shared = out.path().to_str().unwrap().to_string();
    for _ in 0..3 {
        let children: Vec<_> = [a.path(), b.path()]
            .iter()
            .map(|ws| {
                std::process::Command::new(env!("CARGO_BIN_EXE_skillbundle"))
                    // Same name and version, other content: --force (see above).
                    .args(["build", ".", "--out", &shared, "--force"])
                    .current_dir(ws)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let dest = out.path().join("race-1.0.0.tar.gz");
        let got = std::fs::read(&dest).unwrap();
        assert!(
            expected.contains(&got),
            "the bundle is neither build's output"
        );
        assert!(opens(&dest));
        assert_eq!(dist_entries(out.path()), ["race-1.0.0.tar.gz"]);
    }
}
