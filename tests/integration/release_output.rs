//! Published bundles are immutable too: `build` never replaces a bundle of the same name
//! and version with other content unless `--force`, never a signed one with an unsigned
//! one, and never writes through a `dist` link that leaves the workspace unless `--out`
//! names it (src/bundle/destination.rs).

use crate::common;

use common::{read, run, sha256_file, workspace, write};

const BUNDLE: &str = "dist/example-network-skills-0.1.0.tar.gz";
const CARD: &str = "skills/evaluate_resource_condition/skill.yaml";

/// Change the card description: other content, same name and version.
fn change_content(ws: &std::path::Path) {
    let path = ws.join(CARD);
    let text = read(&path).replace(
        "Checks whether an observed resource metric satisfies a threshold.",
        "Checks whether an observed metric satisfies a threshold.",
    );
    write(&path, text);
}

#[test]
fn a_release_is_replaced_only_by_the_same_content() {
    let ws = workspace();
    let first = run(&["build", "."], ws.path());
    assert_eq!(first.status, 0, "{}", first.stderr);
    let built = sha256_file(&ws.path().join(BUNDLE));

    // The same release again: the same bytes, accepted.
    let again = run(&["build", "."], ws.path());
    assert_eq!(again.status, 0, "{}", again.stderr);

    // The same release, now signed: accepted (only the signatures differ).
    let keygen = run(&["keygen", "--out", "keys/release"], ws.path());
    assert_eq!(keygen.status, 0, "{}", keygen.stderr);
    let signed = run(&["build", ".", "--sign-key", "keys/release.key"], ws.path());
    assert_eq!(signed.status, 0, "{}", signed.stderr);
    let signed_sum = sha256_file(&ws.path().join(BUNDLE));
    assert_ne!(signed_sum, built);

    // Unsigned over signed: never, not even with --force.
    for extra in [&[][..], &["--force"][..]] {
        let mut args = vec!["build", ".", "--format", "json"];
        args.extend_from_slice(extra);
        let down = run(&args, ws.path());
        assert_eq!(down.status, 1, "{}", down.stdout);
        let f = down.finding("signature_downgrade");
        assert!(f["message"]
            .as_str()
            .unwrap()
            .contains("an unsigned bundle never replaces a signed one"));
        assert_eq!(sha256_file(&ws.path().join(BUNDLE)), signed_sum);
    }

    // Other content under the same name and version: only with --force.
    change_content(ws.path());
    let args = ["build", ".", "--sign-key", "keys/release.key"];
    let refused = run(&[&args[..], &["--format", "json"]].concat(), ws.path());
    assert_eq!(refused.status, 1, "{}", refused.stdout);
    let f = refused.finding("release_immutable");
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("Raise `bundle.version` in skillbundle.yaml, or pass --force"));
    assert_eq!(sha256_file(&ws.path().join(BUNDLE)), signed_sum);
    let forced = run(&[&args[..], &["--force"]].concat(), ws.path());
    assert_eq!(forced.status, 0, "{}", forced.stderr);
    assert_ne!(sha256_file(&ws.path().join(BUNDLE)), signed_sum);
}

#[cfg(unix)]
#[test]
fn a_dist_link_out_of_the_workspace_is_written_only_when_named() {
    let ws = workspace();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("dist")).ok();
    std::fs::remove_dir_all(ws.path().join("dist")).ok();
    std::os::unix::fs::symlink(elsewhere.path(), ws.path().join("dist")).unwrap();

    let refused = run(&["build", ".", "--format", "json"], ws.path());
    assert_eq!(refused.status, 1, "{}", refused.stdout);
    let f = refused.finding("path_invalid");
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("the output directory leads outside the workspace"));
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);

    let named = run(&["build", ".", "--out", "dist"], ws.path());
    assert_eq!(named.status, 0, "{}", named.stderr);
    assert!(elsewhere
        .path()
        .join("example-network-skills-0.1.0.tar.gz")
        .is_file());
}
