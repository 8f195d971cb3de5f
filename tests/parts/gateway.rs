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

use crate::harness;

use std::path::PathBuf;
use std::process::Command;

harness::tests! {
    the_upstreams_and_clients_work_on_their_own needs [PythonEnv, JsSdk],
    the_card_describe_skill_and_valid_calls_through_the_gateway needs [PythonEnv, JsSdk],
    each_kind_of_bad_input_is_refused_before_the_upstream needs [PythonEnv, JsSdk],
    each_upstream_misbehaviour_fails_the_task_with_nothing_invalid_delivered needs [PythonEnv, JsSdk],
    base_requests_pass_through_and_require_extension_refuses_them needs [PythonEnv, JsSdk],
    a_newer_bundle_is_loaded_under_load_with_no_failed_request needs [PythonEnv, JsSdk],
    sigterm_lets_an_in_flight_task_finish needs [PythonEnv, JsSdk],
    skillbundle_probe_passes_against_the_gateway needs [PythonEnv, JsSdk],
    metrics_logs_and_readiness needs [PythonEnv, JsSdk],
}

/// Runs `pytest tests/gateway/FILE -k FILTER` in the parts venv and fails on any
/// pytest failure.
fn pytest(file: &str, filter: &str) {
    let root = harness::root();
    let venv = std::env::var_os("SKILLBUNDLE_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/py-venv"));
    let path = format!("tests/gateway/{file}");
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pytest",
            &path,
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            filter,
        ])
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
    harness::note(format!("pytest ({path} -k '{filter}'): {summary}"));
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
    pytest("test_parts.py", "");
}

/// The gateway's card (its interfaces, the bundle's skills and digests); valid calls of
/// every skill reach each upstream and come back valid, on both SDKs' clients, both
/// bindings, blocking and streaming; describe_skill is answered from the bundle without
/// the upstream.
fn the_card_describe_skill_and_valid_calls_through_the_gateway() {
    pytest(
        "test_gateway.py",
        "card or valid_requests or describe_skill or chunked",
    );
}

/// Every invalid input example of every skill, a stale digest or version, missing or
/// non-object arguments, nesting past the limit, a 2 MiB body, a request without
/// activation: refused with the draft's error, and the upstream counted no call.
fn each_kind_of_bad_input_is_refused_before_the_upstream() {
    pytest(
        "test_gateway.py",
        "bad_input or beside_another_part or oversized",
    );
}

/// An invalid result, an undeclared record kind, an invalid record, two results, a reply
/// slower than the deadline: a failed Task, nothing invalid and no
/// result in the response, the stream, GetTask or ListTasks, nothing the upstream said.
fn each_upstream_misbehaviour_fails_the_task_with_nothing_invalid_delivered() {
    pytest("test_gateway.py", "misbehaviour");
}

/// Base A2A requests reach the upstream unchanged; with `--require-extension` the card
/// says `required: true` and requests without activation are refused (-32008) before the
/// upstream. A send with a push-notification config, base or governed, is refused
/// (PushNotificationNotSupportedError, as the card's `pushNotifications: false` says)
/// before the upstream.
fn base_requests_pass_through_and_require_extension_refuses_them() {
    pytest("test_gateway.py", "base_requests or push_configs");
    pytest("test_operations.py", "require_extension");
}

/// SIGHUP loads a newer signed bundle while 16 clients keep calling: no request fails.
fn a_newer_bundle_is_loaded_under_load_with_no_failed_request() {
    pytest("test_operations.py", "sighup");
}

/// SIGTERM while an upstream is still working: the caller gets its completed Task, then
/// the gateway exits 0.
fn sigterm_lets_an_in_flight_task_finish() {
    pytest("test_operations.py", "sigterm");
}

/// `skillbundle probe` (both bindings, valid arguments from the example workspace)
/// passes every MUST against the gateway.
fn skillbundle_probe_passes_against_the_gateway() {
    pytest("test_gateway.py", "probe");
}

/// /metrics names requests, refusals by code, upstream latency and the bundle; the log is
/// JSON lines without argument values; /readyz stays 503 while the upstream's card cannot
/// be read.
fn metrics_logs_and_readiness() {
    pytest("test_gateway.py", "metrics or log_is_json or readyz");
}
