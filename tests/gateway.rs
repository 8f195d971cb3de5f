//! The gateway (`skillbundle serve`, issue #27) against real parts: upstream agents that
//! know nothing of skillbundle, one on a2a-sdk (tests/gateway/upstream.py) and one on
//! `@a2a-js/sdk` (tests/js/upstream.cjs), and clients on both SDKs (a2a-sdk in pytest,
//! tests/js/client.cjs under node), on both bindings, blocking and streaming; each a
//! process of its own on 127.0.0.1, on a free port, stopped by PID.
//!
//! Each test here runs one pytest file of tests/gateway/ in the parts venv, with
//! `SKILLBUNDLE_BIN` (this build's binary), `SKILLBUNDLE_ROOT` and
//! `SKILLBUNDLE_JS_MODULES` (the npm packages `scripts/test-parts` installs with
//! `npm ci`). pytest's output is shown, and its summary line again after the test summary;
//! a pytest failure fails the test.

mod harness;

use std::path::PathBuf;
use std::process::Command;

harness::tests! {
    the_upstreams_and_clients_work_on_their_own needs [PythonEnv, JsSdk],
}

/// Runs `pytest tests/gateway/FILE` in the parts venv and fails on any pytest failure.
fn pytest(file: &str) {
    let root = harness::root();
    let venv = std::env::var_os("SKILLBUNDLE_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/py-venv"));
    let path = format!("tests/gateway/{file}");
    let out = Command::new(venv.join("bin/python"))
        .args(["-m", "pytest", &path, "-q", "-p", "no:cacheprovider"])
        .env("SKILLBUNDLE_BIN", env!("CARGO_BIN_EXE_skillbundle"))
        .env("SKILLBUNDLE_ROOT", root)
        .env(
            "SKILLBUNDLE_JS_MODULES",
            harness::js_dir().join("node_modules"),
        )
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(root)
        .output()
        .expect("the parts venv's python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let summary = stdout
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or("no output");
    harness::note(format!("pytest ({path}): {summary}"));
    assert!(
        out.status.success(),
        "pytest {path} failed ({})",
        out.status
    );
    assert!(stdout.contains(" passed"), "pytest {path} ran no tests");
}

/// The parts themselves, without the gateway: each upstream answers every example
/// skill validly through both clients on both bindings, blocking and streaming, and each
/// misbehaviour mode misbehaves as it says (so that a gateway test passing means the
/// gateway caught it).
fn the_upstreams_and_clients_work_on_their_own() {
    pytest("test_parts.py");
}
