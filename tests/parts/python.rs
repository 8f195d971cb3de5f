//! The Python package, end to end, as a user without Rust gets it: `scripts/python-env
//! --wheel` builds the wheel (`maturin build --profile wheel`, for the venv's CPython), a
//! fresh venv installs it with a PATH that has no `cargo` or `rustc` (its dependencies
//! from the wheelhouse `scripts/test-parts` filled, without the network), and pytest runs
//! `tests/python/` in that venv — the core API, a tampered bundle, and a real a2a-sdk server and client —
//! with `SKILLBUNDLE_BIN` (this build's binary, for comparisons with the CLI) and
//! `SKILLBUNDLE_ROOT` (the repository). pytest's output is shown, and its summary line
//! again after the test summary; a pytest failure fails this test.
//!
//! The Python environment is a part (`harness::Part::PythonEnv`, tests/parts/harness.rs).

use crate::harness;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

harness::tests! {
    the_wheel_installs_without_rust_and_passes_the_python_tests needs [PythonEnv, RegistryTools],
}

/// PATH without the directories that hold `cargo` or `rustc`.
fn path_without_rust() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| !dir.join("cargo").exists() && !dir.join("rustc").exists())
        .collect();
    std::env::join_paths(kept).unwrap()
}

fn the_wheel_installs_without_rust_and_passes_the_python_tests() {
    let root = harness::root();
    let built = Command::new("bash")
        .arg(root.join("scripts/python-env"))
        .arg("--wheel")
        .current_dir(root)
        .output()
        .expect("bash runs scripts/python-env");
    assert!(
        built.status.success(),
        "scripts/python-env --wheel failed ({}):\n{}",
        built.status,
        String::from_utf8_lossy(&built.stderr)
    );
    let wheel = PathBuf::from(String::from_utf8(built.stdout).unwrap().trim());

    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("py-fresh");
    let _ = std::fs::remove_dir_all(&venv);
    let path = path_without_rust();
    let no_rust = |program: &Path| {
        let mut command = Command::new(program);
        command
            .env("PATH", &path)
            .env_remove("CARGO")
            .current_dir(root);
        command
    };
    let base = std::env::var_os("SKILLBUNDLE_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/py-venv"));
    // The interpreter the parts venv was made with, not the venv itself.
    let python = String::from_utf8(
        Command::new(base.join("bin/python"))
            .args(["-c", "import sys; print(sys._base_executable)"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let ok = |what: &str, out: std::process::Output| {
        assert!(
            out.status.success(),
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok(
        "python -m venv",
        no_rust(Path::new(python.trim()))
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .unwrap(),
    );
    ok(
        "pip install of the wheel",
        no_rust(&venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-index",
                "--find-links",
            ])
            .arg(root.join("target/py-wheelhouse"))
            .args(["-r", "python/requirements-test.txt"])
            .arg(format!("{}[a2a-server]", wheel.display()))
            .output()
            .unwrap(),
    );
    let out = no_rust(&venv.join("bin/python"))
        .args([
            "-m",
            "pytest",
            "tests/python",
            "-q",
            "-p",
            "no:cacheprovider",
        ])
        .env("SKILLBUNDLE_BIN", env!("CARGO_BIN_EXE_skillbundle"))
        .env("SKILLBUNDLE_ROOT", root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("the fresh venv's python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    let summary = stdout
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or("no output");
    harness::note(format!(
        "pytest (tests/python, wheel {}): {summary}",
        wheel.file_name().unwrap().to_string_lossy()
    ));
    assert!(out.status.success(), "pytest failed ({})", out.status);
    assert!(stdout.contains(" passed"), "pytest ran no tests");
}
