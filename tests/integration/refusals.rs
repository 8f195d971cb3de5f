//! One exit-status rule for refusals, and `check` saying when the release rules had
//! nothing to compare with (issue 14).

use crate::common;

use common::{run, workspace};

#[test]
fn refusing_to_overwrite_is_path_invalid_exit_1_for_init_and_keygen() {
    let ws = workspace();
    let init = run(&["init", ".", "--format", "json"], ws.path());
    assert_eq!(init.status, 1, "{}", init.stdout);
    init.finding("path_invalid");

    assert_eq!(run(&["keygen", "--out", "k/a"], ws.path()).status, 0);
    let again = run(&["keygen", "--out", "k/a", "--format", "json"], ws.path());
    assert_eq!(again.status, 1, "{}", again.stdout);
    again.finding("path_invalid");
}

#[test]
fn check_without_a_lock_warns_that_there_is_no_baseline() {
    let ws = workspace();
    let with_lock = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(with_lock.status, 0, "{}", with_lock.stderr);
    assert_eq!(with_lock.json()["warnings"], serde_json::json!([]));

    std::fs::remove_file(ws.path().join("skillbundle.lock")).unwrap();
    let human = run(&["check", "."], ws.path());
    assert_eq!(human.status, 0, "{}", human.stderr);
    assert_eq!(
        human.stderr,
        "warning: there is no skillbundle.lock, so the release rules had no baseline: published versions were not compared (`skillbundle build` writes it; commit it)\n"
    );
    let json = run(&["check", ".", "--format", "json"], ws.path());
    assert_eq!(json.status, 0);
    assert_eq!(json.json()["warnings"].as_array().unwrap().len(), 1);
}
