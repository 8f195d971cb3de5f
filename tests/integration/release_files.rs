//! Signed checksums of release files (`sign-files`, `verify-files`): what the release
//! workflow signs skillbundle's own binaries and wheels with. A list verifies only under
//! a trusted key, and only while every file it names has its digest.

use crate::common;

use common::*;

#[test]
fn a_signed_file_list_verifies_and_catches_a_changed_file_or_an_untrusted_key() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let ok = |r: Run| {
        assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
        r
    };
    ok(run(&["keygen", "--out", "keys/release"], root));
    ok(run(&["keygen", "--out", "keys/other"], root));
    write(
        &root.join("dist/skillbundle-x86_64-unknown-linux-musl"),
        b"a binary",
    );
    write(
        &root.join("dist/skillbundle-0.1.0-cp310-abi3-win_amd64.whl"),
        b"a wheel",
    );
    let signed = ok(run(
        &[
            "sign-files",
            "--sign-key",
            "keys/release.key",
            "--out",
            "dist/SHA256SUMS.jws.json",
            "dist/skillbundle-x86_64-unknown-linux-musl",
            "dist/skillbundle-0.1.0-cp310-abi3-win_amd64.whl",
            "--format",
            "json",
        ],
        root,
    ))
    .json();
    let names: Vec<&str> = signed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "skillbundle-0.1.0-cp310-abi3-win_amd64.whl",
            "skillbundle-x86_64-unknown-linux-musl"
        ]
    );
    let verify = |trust: &str| {
        run(
            &[
                "verify-files",
                "dist/SHA256SUMS.jws.json",
                "--trust",
                trust,
                "--format",
                "json",
            ],
            root,
        )
    };
    let verified = ok(verify("keys/release.jwk.json")).json();
    assert_eq!(verified["files"], signed["files"]);
    assert_eq!(verified["signed_by"], signed["signed_by"]);

    let untrusted = verify("keys/other.jwk.json");
    assert_eq!(untrusted.status, 1);
    untrusted.finding("untrusted_key");

    write(
        &root.join("dist/skillbundle-x86_64-unknown-linux-musl"),
        b"another binary",
    );
    let changed = verify("keys/release.jwk.json");
    assert_eq!(changed.status, 1);
    let f = changed.finding("digest_mismatch");
    assert!(
        f["file"]
            .as_str()
            .unwrap()
            .ends_with("skillbundle-x86_64-unknown-linux-musl"),
        "{f}"
    );

    // A list edited after signing (a digest swapped in) no longer verifies.
    let list = root.join("dist/SHA256SUMS.jws.json");
    let mut doc: serde_json::Value = serde_json::from_str(&read(&list)).unwrap();
    doc["files"][1]["digest"] = serde_json::Value::String(sha256_file(
        &root.join("dist/skillbundle-x86_64-unknown-linux-musl"),
    ));
    write(&list, serde_json::to_string_pretty(&doc).unwrap());
    let edited = verify("keys/release.jwk.json");
    assert_eq!(edited.status, 1);
    edited.finding("signature_invalid");
}
