//! The agent side end to end: keygen → build --sign-key → verify, every tampered bundle
//! refused with its code, describe_skill as the draft prints it, invocation checks in
//! the draft's order, and the signature checked by hand from the spec alone.

use crate::common;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use common::*;
use serde_json::{json, Value};
use skillbundle::agent::Request;
use skillbundle::agent::{Bundle, SignatureStatus, TrustedKeys};
use skillbundle::bundle::archive;
use skillbundle::crypto::keys::PublicKey;
use skillbundle::interface::condition::Condition;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const DIGEST: &str = "sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d";
const ERC_ID: &str = "evaluate_resource_condition";
const BUNDLE: &str = "dist/example-network-skills-0.1.0.tar.gz";
const TRUST: &str = "keys/release.jwk.json";

/// A workspace with a key pair in keys/ and a bundle signed by it.
fn signed() -> tempfile::TempDir {
    let ws = workspace();
    let keygen = run(&["keygen", "--out", "keys/release"], ws.path());
    assert_eq!(keygen.status, 0, "{}", keygen.stderr);
    let built = run(
        &[
            "build",
            ".",
            "--sign-key",
            "keys/release.key",
            "--format",
            "json",
        ],
        ws.path(),
    );
    assert_eq!(built.status, 0, "{}{}", built.stdout, built.stderr);
    assert_eq!(built.json()["bundle"], format!("./{BUNDLE}"));
    ws
}

fn trusted(ws: &Path) -> TrustedKeys {
    TrustedKeys::new(vec![PublicKey::read_file(&ws.join(TRUST)).unwrap()])
}

fn open(ws: &Path) -> Bundle {
    Bundle::open_path(&ws.join(BUNDLE), &trusted(ws)).unwrap()
}

fn files(ws: &Path) -> BTreeMap<String, Vec<u8>> {
    archive::read(&std::fs::read(ws.join(BUNDLE)).unwrap(), Default::default()).unwrap()
}

/// A tar entry written with raw header fields, so that hostile names and types survive.
struct RawEntry<'a> {
    path: &'a [u8],
    kind: tar::EntryType,
    data: &'a [u8],
    link: Option<&'a str>,
}

/// Pack entries as .tar.gz (stored gzip blocks: fast in the byte-flip sweep).
fn pack(entries: &[RawEntry]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for e in entries {
        let mut header = tar::Header::new_gnu();
        header.as_old_mut().name[..e.path.len()].copy_from_slice(e.path);
        header.set_entry_type(e.kind);
        header.set_size(e.data.len() as u64);
        header.set_mode(0o644);
        if let Some(l) = e.link {
            header.set_link_name(l).unwrap();
        }
        header.set_cksum();
        builder.append(&header, e.data).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// `files` as the builder writes them (the one form a loader accepts), or — with
/// `extra` entries — packed raw, so that hostile names and types survive.
fn pack_files(files: &BTreeMap<String, Vec<u8>>, extra: &[RawEntry]) -> Vec<u8> {
    if extra.is_empty() {
        return archive::write(
            Vec::new(),
            files.iter().map(|(k, v)| (k.as_str(), v.as_slice())),
            0,
        )
        .unwrap();
    }
    let mut entries: Vec<RawEntry> = files
        .iter()
        .map(|(p, d)| RawEntry {
            path: p.as_bytes(),
            kind: tar::EntryType::Regular,
            data: d,
            link: None,
        })
        .collect();
    entries.extend(extra.iter().map(|e| RawEntry { ..*e }));
    pack(&entries)
}

/// Run `verify` on `bytes` and return the codes of its findings; asserts exit status 1.
fn refused(ws: &Path, name: &str, bytes: &[u8], trust: &str) -> Vec<String> {
    let path = ws.join(name);
    std::fs::write(&path, bytes).unwrap();
    let out = run(&["verify", name, "--trust", trust, "--format", "json"], ws);
    assert_eq!(out.status, 1, "{name}: {}{}", out.stdout, out.stderr);
    assert_eq!(out.json()["ok"], false);
    out.findings()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn keygen_build_sign_verify() {
    let ws = signed();
    let out = run(&["verify", BUNDLE, "--trust", TRUST], ws.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    let kid = PublicKey::read_file(&ws.path().join(TRUST))
        .unwrap()
        .kid()
        .to_string();
    assert!(
        out.stdout.starts_with(&format!(
            "verified example-network-skills 0.1.0: 3 skills, signed by {kid}\n"
        )),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(&format!("  {ERC_ID} 1.0 {DIGEST}\n")));
    assert!(out.stderr.is_empty(), "{}", out.stderr);

    let json = run(
        &["verify", BUNDLE, "--trust", TRUST, "--format", "json"],
        ws.path(),
    )
    .json();
    assert_eq!(json["ok"], true);
    assert_eq!(
        json["signature"],
        json!({"status": "verified", "signed_by": [kid]})
    );

    // Without a trusted key, a signed bundle loads only under --allow-unsigned, and the
    // output says that nothing was verified.
    let out = run(&["verify", BUNDLE, "--allow-unsigned"], ws.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(out.stdout.contains("but NOT VERIFIED"), "{}", out.stdout);
    assert!(out.stderr.starts_with("warning: "), "{}", out.stderr);

    // The library says the same.
    let bundle = open(ws.path());
    assert_eq!(
        bundle.signature(),
        &SignatureStatus::Verified { by: vec![kid] }
    );
    assert_eq!(
        bundle.skill_ids().collect::<Vec<_>>(),
        [ERC_ID, "manage_interface_config", "trace_network_path"]
    );
}

#[test]
fn the_public_key_also_works_as_spki_pem_and_files_are_safe() {
    let ws = workspace();
    let out = run(&["keygen", "--out", "k/vendor", "--pem"], ws.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(out.stdout.contains("k/vendor.pub.pem"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(ws.path().join("k/vendor.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Never overwritten without --force: refused like `init` refuses (path_invalid, 1).
    let before = read(&ws.path().join("k/vendor.key"));
    let again = run(&["keygen", "--out", "k/vendor"], ws.path());
    assert_eq!(again.status, 1);
    assert!(
        again.stderr.contains("error[path_invalid]"),
        "{}",
        again.stderr
    );
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    assert_eq!(read(&ws.path().join("k/vendor.key")), before);

    let built = run(&["build", ".", "--sign-key", "k/vendor.key"], ws.path());
    assert_eq!(built.status, 0, "{}", built.stderr);
    let out = run(
        &["verify", BUNDLE, "--trust", "k/vendor.pub.pem"],
        ws.path(),
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
}

#[test]
fn signed_bundles_are_reproducible_and_rotation_works() {
    let a = signed();
    let b = workspace();
    std::fs::create_dir_all(b.path().join("keys")).unwrap();
    for f in ["release.key", "release.jwk.json"] {
        std::fs::copy(a.path().join("keys").join(f), b.path().join("keys").join(f)).unwrap();
    }
    let built = run(&["build", ".", "--sign-key", "keys/release.key"], b.path());
    assert_eq!(built.status, 0, "{}", built.stderr);
    assert_eq!(
        sha256_file(&a.path().join(BUNDLE)),
        sha256_file(&b.path().join(BUNDLE))
    );

    // Rotation: old and new key both sign; either one alone is trusted.
    assert_eq!(run(&["keygen", "--out", "keys/next"], b.path()).status, 0);
    let built = run(
        &[
            "build",
            ".",
            "--sign-key",
            "keys/release.key",
            "--sign-key",
            "keys/next.key",
        ],
        b.path(),
    );
    assert_eq!(built.status, 0, "{}", built.stderr);
    for key in ["keys/release.jwk.json", "keys/next.jwk.json"] {
        let out = run(&["verify", BUNDLE, "--trust", key], b.path());
        assert_eq!(out.status, 0, "{key}: {}", out.stderr);
    }
}

#[test]
fn a_bad_signing_key_is_a_usage_error() {
    let ws = workspace();
    write(&ws.path().join("not-a-key.pem"), "hello");
    let out = run(&["build", ".", "--sign-key", "not-a-key.pem"], ws.path());
    assert_eq!(out.status, 2);
    assert!(out.stderr.contains("not-a-key.pem"), "{}", out.stderr);
    assert!(!ws.path().join(BUNDLE).exists());
}

#[test]
fn tampered_bundles_are_refused_with_the_right_code() {
    let ws = signed();
    let dir = ws.path();
    let good = files(dir);
    assert_eq!(good.len(), 5);

    // A single byte changed in each entry.
    for (path, bytes) in &good {
        let mut changed = good.clone();
        let data = changed.get_mut(path).unwrap();
        let expected = if path == "manifest.json" {
            // A letter of the bundle name: still JSON, but not what was signed.
            let at = find(bytes, b"example-network-skills") + 3;
            data[at] ^= 0x01;
            "signature_invalid"
        } else {
            let at = bytes.len() / 2;
            data[at] ^= 0x01;
            "digest_mismatch"
        };
        let codes = refused(dir, "changed.tar.gz", &pack_files(&changed, &[]), TRUST);
        assert_eq!(codes, [expected], "byte changed in {path}");
    }

    // An entry removed.
    for path in good.keys() {
        let mut fewer = good.clone();
        fewer.remove(path);
        let codes = refused(dir, "fewer.tar.gz", &pack_files(&fewer, &[]), TRUST);
        assert_eq!(codes, ["bundle_invalid"], "{path} removed");
    }

    // An entry added.
    let extra = RawEntry {
        path: b"interfaces/extra.json",
        kind: tar::EntryType::Regular,
        data: b"{}",
        link: None,
    };
    let codes = refused(dir, "more.tar.gz", &pack_files(&good, &[extra]), TRUST);
    assert_eq!(codes, ["bundle_invalid"]);

    // A `../` entry and a symbolic link: refused, and nothing written outside.
    let escape = RawEntry {
        path: b"../escaped.json",
        kind: tar::EntryType::Regular,
        data: b"{}",
        link: None,
    };
    let out = refused(dir, "escape.tar.gz", &pack_files(&good, &[escape]), TRUST);
    assert_eq!(out, ["bundle_invalid"]);
    assert!(!dir.parent().unwrap().join("escaped.json").exists());
    let link = RawEntry {
        path: b"a2a/link.json",
        kind: tar::EntryType::Symlink,
        data: b"",
        link: Some("/etc/passwd"),
    };
    let codes = refused(dir, "link.tar.gz", &pack_files(&good, &[link]), TRUST);
    assert_eq!(codes, ["bundle_invalid"]);
    assert!(!dir.join("a2a").exists());

    // The wrong key.
    assert_eq!(run(&["keygen", "--out", "keys/other"], dir).status, 0);
    let bytes = std::fs::read(dir.join(BUNDLE)).unwrap();
    let codes = refused(dir, "wrong-key.tar.gz", &bytes, "keys/other.jwk.json");
    assert_eq!(codes, ["untrusted_key"]);

    // No signature.
    let unsigned = run(&["build", ".", "--out", "unsigned"], dir);
    assert_eq!(unsigned.status, 0, "{}", unsigned.stderr);
    let bytes = std::fs::read(dir.join("unsigned/example-network-skills-0.1.0.tar.gz")).unwrap();
    let codes = refused(dir, "unsigned.tar.gz", &bytes, TRUST);
    assert_eq!(codes, ["untrusted_key"]);

    // Signatures removed from a signed manifest: no signature either.
    let mut stripped = good.clone();
    let mut manifest: Value = serde_json::from_slice(&good["manifest.json"]).unwrap();
    manifest.as_object_mut().unwrap().remove("signatures");
    stripped.insert(
        "manifest.json".into(),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    );
    let codes = refused(dir, "stripped.tar.gz", &pack_files(&stripped, &[]), TRUST);
    assert_eq!(codes, ["untrusted_key"]);

    // A truncated archive.
    let bytes = std::fs::read(dir.join(BUNDLE)).unwrap();
    let codes = refused(dir, "short.tar.gz", &bytes[..bytes.len() / 2], TRUST);
    assert_eq!(codes, ["bundle_invalid"]);
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

/// Every 5th byte of manifest.json and every 41st byte of the other entries flipped in
/// turn (a sample: each load checks a signature, slow in debug builds): the bundle is
/// always refused, with one of the load codes.
#[test]
fn no_single_byte_change_is_accepted() {
    let ws = signed();
    let good = files(ws.path());
    let trust = trusted(ws.path());
    assert!(Bundle::open(&pack_files(&good, &[]), &trust).is_ok());
    for (path, bytes) in &good {
        let step = if path == "manifest.json" { 5 } else { 41 };
        for at in (0..bytes.len()).step_by(step) {
            let mut changed = good.clone();
            changed.get_mut(path).unwrap()[at] ^= 0x01;
            let findings = Bundle::open(&pack_files(&changed, &[]), &trust)
                .expect_err(&format!("{path} byte {at} changed, yet accepted"));
            for f in findings {
                assert!(
                    matches!(
                        f.code.as_str(),
                        "bundle_invalid"
                            | "digest_mismatch"
                            | "signature_invalid"
                            | "untrusted_key"
                    ),
                    "{path} byte {at}: {f}"
                );
            }
        }
    }
}

#[test]
fn unsigned_bundles_load_only_when_allowed_and_say_so() {
    let ws = workspace();
    assert_eq!(run(&["build", "."], ws.path()).status, 0);
    let out = run(&["verify", BUNDLE], ws.path());
    assert_eq!(out.status, 1);
    assert!(
        out.stderr
            .contains("error[untrusted_key]: the bundle is not signed"),
        "{}",
        out.stderr
    );

    let out = run(&["verify", BUNDLE, "--allow-unsigned"], ws.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("loaded example-network-skills 0.1.0: 3 skills, but UNSIGNED"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("warning: example-network-skills 0.1.0 is UNSIGNED"),
        "{}",
        out.stderr
    );
    let json = run(
        &["verify", BUNDLE, "--allow-unsigned", "--format", "json"],
        ws.path(),
    )
    .json();
    assert_eq!(json["signature"]["status"], "unsigned");
    assert_eq!(json["warnings"].as_array().unwrap().len(), 1);

    let bundle =
        Bundle::open_path(&ws.path().join(BUNDLE), &TrustedKeys::allow_unsigned()).unwrap();
    assert_eq!(bundle.signature(), &SignatureStatus::Unsigned);
    assert!(!bundle.signature().is_verified());
}

/// The describe_skill result object of the draft's worked example, from the copy in
/// tests/ (and, when the draft is at hand, from the draft itself).
fn expected_describe() -> Value {
    let copy = skillbundle::wire::json::parse(
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/vectors/describe_skill/evaluate_resource_condition.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let draft = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/reference/schema-interfaces-draft.txt");
    if let Ok(text) = std::fs::read_to_string(&draft) {
        let start = text
            .rfind(r#"{ "skill": "describe_skill", "result""#)
            .expect("the draft's describe_skill example");
        let from_draft: Value = serde_json::Deserializer::from_str(&text[start..])
            .into_iter::<Value>()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(
            from_draft, copy,
            "tests/vectors copy differs from the draft"
        );
    }
    copy
}

#[test]
fn describe_skill_equals_the_drafts_text() {
    let ws = signed();
    let expected = expected_describe();
    let object = open(ws.path()).describe_skill(ERC_ID).unwrap();
    assert_eq!(object, expected);
    // Same canonical bytes, so the same digest for anyone who recomputes it.
    assert_eq!(
        skillbundle::wire::digest::jcs(&object),
        skillbundle::wire::digest::jcs(&expected)
    );
    assert_eq!(
        skillbundle::wire::digest::Digest::of_value(&object["result"]["interface"]).as_str(),
        DIGEST
    );

    let out = run(&["describe", BUNDLE, ERC_ID, "--trust", TRUST], ws.path());
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(out.json(), expected);

    let out = run(
        &["describe", BUNDLE, "no_such_skill", "--trust", TRUST],
        ws.path(),
    );
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "skill_not_advertised");
}

fn draft_request() -> Value {
    json!({
        "skill": ERC_ID,
        "skill_version": "1.0",
        "interface_digest": DIGEST,
        "arguments": {
            "resource_id": "network-resource-123",
            "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"}
        }
    })
}

#[test]
fn invocation_checks_follow_the_draft() {
    let ws = signed();
    let bundle = open(ws.path());

    let request = draft_request();
    assert_eq!(
        bundle.check_request(&request).unwrap(),
        Request::Invoke {
            skill_id: ERC_ID,
            arguments: &request["arguments"]
        }
    );

    // A stale digest is interface_mismatch, decided before the (invalid) arguments.
    let mut stale = draft_request();
    stale["interface_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    stale["arguments"] = json!("not even an object");
    let e = bundle.check_request(&stale).unwrap_err();
    assert_eq!(e.code(), Condition::InterfaceMismatch);
    assert_eq!(e.task_state(), Some(a2a_types::TaskState::Rejected));
    assert!(e.details().is_empty());
    let mut old_version = draft_request();
    old_version["skill_version"] = json!("0.9");
    assert_eq!(
        bundle.check_request(&old_version).unwrap_err().code(),
        Condition::InterfaceMismatch
    );
    let mut missing = draft_request();
    missing.as_object_mut().unwrap().remove("interface_digest");
    assert_eq!(
        bundle.check_request(&missing).unwrap_err().code(),
        Condition::InterfaceMismatch
    );

    // The draft's "missing unit".
    let mut no_unit = draft_request();
    no_unit["arguments"]["condition"]
        .as_object_mut()
        .unwrap()
        .remove("unit");
    let e = bundle.check_request(&no_unit).unwrap_err();
    assert_eq!(e.task_state(), Some(a2a_types::TaskState::Rejected));
    assert_eq!(
        e.to_json()["error"]["details"],
        json!([{
            "instance_path": "/condition",
            "schema_path": "/properties/condition/required",
            "keyword": "required",
            "expected": "unit"
        }])
    );
    assert_eq!(e.code(), Condition::InputInvalid);

    // The draft's "threshold must be numeric": expected/actual are types, never values.
    let mut text = draft_request();
    text["arguments"]["condition"]["threshold"] = json!("eighty, secretly");
    let e = bundle.check_request(&text).unwrap_err();
    assert_eq!(
        e.to_json()["error"]["details"],
        json!([{
            "instance_path": "/condition/threshold",
            "schema_path": "/properties/condition/properties/threshold/type",
            "keyword": "type",
            "expected": "number",
            "actual": "string"
        }])
    );
    assert!(!e.to_json().to_string().contains("secretly"));

    // Not advertised.
    let mut unknown = draft_request();
    unknown["skill"] = json!("reboot_everything");
    assert_eq!(
        bundle.check_request(&unknown).unwrap_err().code(),
        Condition::SkillNotAdvertised
    );

    // describe_skill requests.
    let describe = json!({"skill": "describe_skill", "arguments": {"skill_id": ERC_ID}});
    assert_eq!(
        bundle.check_request(&describe).unwrap(),
        Request::Describe { skill_id: ERC_ID }
    );
    let describe = json!({"skill": "describe_skill", "arguments": {"skill_id": "nope"}});
    assert_eq!(
        bundle.check_request(&describe).unwrap_err().code(),
        Condition::SkillNotAdvertised
    );
    let describe = json!({"skill": "describe_skill", "arguments": {"skill_id": ERC_ID, "skill_version": "1.0"}});
    assert_eq!(
        bundle.check_request(&describe).unwrap_err().code(),
        Condition::InputInvalid
    );
}

#[test]
fn results_and_records_are_checked_before_completion() {
    let ws = signed();
    let bundle = open(ws.path());
    let result = json!({
        "result": "condition_not_met", "observed_value": 42, "unit": "percent",
        "supporting_record_refs": ["observation-7"]
    });
    bundle.check_result(ERC_ID, &result).unwrap();
    let mut outside = result.clone();
    outside["result"] = json!("maybe");
    let e = bundle.check_result(ERC_ID, &outside).unwrap_err();
    assert_eq!(e.code(), Condition::OutputInvalid);
    assert_eq!(e.task_state(), Some(a2a_types::TaskState::Failed));
    assert_eq!(e.details()[0].instance_path, "/result");
    assert!(!e.to_json().to_string().contains("maybe"));

    let record = json!({
        "record_id": "observation-7", "resource_id": "network-resource-123",
        "metric": "utilization", "value": 42, "unit": "percent",
        "observed_at": "2026-08-11T12:00:01Z"
    });
    bundle
        .check_record(ERC_ID, "resource-observation", &record)
        .unwrap();
    let mut no_time = record.clone();
    no_time.as_object_mut().unwrap().remove("observed_at");
    assert_eq!(
        bundle
            .check_record(ERC_ID, "resource-observation", &no_time)
            .unwrap_err()
            .code(),
        Condition::OutputInvalid
    );
    let mut bad_time = record.clone();
    bad_time["observed_at"] = json!("yesterday");
    let e = bundle
        .check_record(ERC_ID, "resource-observation", &bad_time)
        .unwrap_err();
    assert_eq!(e.details()[0].keyword.as_deref(), Some("format"));
    assert_eq!(
        bundle
            .check_record(ERC_ID, "other-kind", &record)
            .unwrap_err()
            .code(),
        Condition::OutputInvalid
    );
}

#[test]
fn validate_prints_the_drafts_error_object() {
    let ws = signed();
    let dir = ws.path();
    let mut no_unit = draft_request();
    no_unit["arguments"]["condition"]
        .as_object_mut()
        .unwrap()
        .remove("unit");
    write(&dir.join("no-unit.json"), no_unit.to_string());
    let out = run(
        &[
            "validate",
            BUNDLE,
            "--trust",
            TRUST,
            "--request",
            "no-unit.json",
        ],
        dir,
    );
    assert_eq!(out.status, 1);
    let error = out.json();
    assert_eq!(error["error"]["code"], "input_invalid");
    assert_eq!(error["error"]["details"][0]["instance_path"], "/condition");
    assert_eq!(error.as_object().unwrap().len(), 1);

    let mut stale = draft_request();
    stale["interface_digest"] = json!(format!("sha256:{}", "1".repeat(64)));
    write(&dir.join("stale.json"), stale.to_string());
    let out = run(
        &[
            "validate",
            BUNDLE,
            "--trust",
            TRUST,
            "--request",
            "stale.json",
            "--format",
            "json",
        ],
        dir,
    );
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "interface_mismatch");

    write(&dir.join("ok.json"), draft_request().to_string());
    let out = run(
        &["validate", BUNDLE, "--trust", TRUST, "--request", "ok.json"],
        dir,
    );
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.starts_with("valid:"), "{}", out.stdout);

    let examples = PathBuf::from(ERC).join("examples");
    let out = run(
        &[
            "validate",
            BUNDLE,
            "--trust",
            TRUST,
            "--result",
            ERC_ID,
            examples
                .join("output/invalid/result-outside-enum.json")
                .to_str()
                .unwrap(),
        ],
        dir,
    );
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "output_invalid");
    let out = run(
        &[
            "validate",
            BUNDLE,
            "--trust",
            TRUST,
            "--record",
            ERC_ID,
            "resource-observation",
            examples
                .join("records/resource-observation/valid/observation-7.json")
                .to_str()
                .unwrap(),
        ],
        dir,
    );
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);

    // The bundle is loaded exactly as verify does: without trust, nothing is validated.
    let out = run(&["validate", BUNDLE, "--request", "ok.json"], dir);
    assert_eq!(out.status, 1);
    assert!(out.stderr.contains("untrusted_key"), "{}", out.stderr);
}

#[test]
fn card_prints_or_merges_the_fragment() {
    let ws = signed();
    let dir = ws.path();
    let out = run(&["card", BUNDLE, "--trust", TRUST], dir);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let fragment = out.json();
    assert_eq!(
        serde_json::to_vec_pretty(&fragment).unwrap(),
        serde_json::to_vec_pretty(
            &serde_json::from_slice::<Value>(&files(dir)["a2a/agent-card-fragment.json"]).unwrap()
        )
        .unwrap()
    );

    let base = json!({
        "name": "Network agent",
        "description": "Answers network questions.",
        "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true, "extensions": [{"uri": "urn:example:other-extension"}]},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [{"id": "ping", "name": "Ping", "description": "Replies.", "tags": ["ops"]}]
    });
    write(&dir.join("base.json"), base.to_string());
    let out = run(
        &["card", BUNDLE, "--trust", TRUST, "--base", "base.json"],
        dir,
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    let card = out.json();
    let card_typed: a2a_types::AgentCard = serde_json::from_value(card.clone()).unwrap();
    let ids: Vec<&str> = card_typed.skills.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "ping",
            "describe_skill",
            ERC_ID,
            "manage_interface_config",
            "trace_network_path"
        ]
    );
    let exts = card["capabilities"]["extensions"].as_array().unwrap();
    assert_eq!(exts[0]["uri"], "urn:example:other-extension");
    // The bundle's extension, with a capability descriptor per skill
    // (tests/integration/capability_descriptors.rs).
    let mut without_descriptors = exts[1].clone();
    for entry in without_descriptors["params"]["skills"]
        .as_array_mut()
        .unwrap()
    {
        assert!(entry
            .as_object_mut()
            .unwrap()
            .remove("interfaces")
            .is_some());
    }
    assert_eq!(
        without_descriptors,
        fragment["capabilities"]["extensions"][0]
    );
    // Deterministic output.
    let again = run(
        &["card", BUNDLE, "--trust", TRUST, "--base", "base.json"],
        dir,
    );
    assert_eq!(again.stdout, out.stdout);

    // A duplicate skill id is refused.
    let mut dup = base.clone();
    dup["skills"][0]["id"] = json!(ERC_ID);
    write(&dir.join("dup.json"), dup.to_string());
    let out = run(
        &[
            "card", BUNDLE, "--trust", TRUST, "--base", "dup.json", "--format", "json",
        ],
        dir,
    );
    assert_eq!(out.status, 1);
    assert_eq!(out.finding("duplicate_skill")["file"], "dup.json");
    // Not an AgentCard.
    write(&dir.join("bad.json"), r#"{"name": "only a name"}"#);
    let out = run(
        &[
            "card", BUNDLE, "--trust", TRUST, "--base", "bad.json", "--format", "json",
        ],
        dir,
    );
    assert_eq!(out.status, 1);
    // One finding per missing required member (tests/integration/card.rs checks each message).
    let findings = out.findings();
    assert!(findings.len() > 1, "{findings:?}");
    assert!(findings.iter().all(|f| f["code"] == "card_invalid"));
}

#[test]
fn agent_card_entries_and_extension() {
    let ws = signed();
    let bundle = open(ws.path());
    let ext = bundle.extension();
    assert_eq!(ext.uri, skillbundle::card::a2a::EXTENSION_URI);
    let params = ext.params.as_ref().unwrap();
    assert_eq!(params["interface_version"], "1.0");
    assert!(params["skills"].as_array().unwrap().contains(&json!({
        "skill_id": ERC_ID, "skill_version": "1.0", "interface_digest": DIGEST
    })));
    let ids: Vec<&str> = bundle
        .agent_skills()
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "describe_skill",
            ERC_ID,
            "manage_interface_config",
            "trace_network_path"
        ]
    );
}

/// An implementation with nothing but the JWS and JCS specs, the public JWK and an
/// Ed25519 primitive can check a bundle's signature.
#[test]
fn the_signature_verifies_from_the_spec_alone() {
    let ws = signed();
    let jwk: Value = serde_json::from_str(&read(&ws.path().join(TRUST))).unwrap();
    assert_eq!(jwk["kty"], "OKP");
    assert_eq!(jwk["crv"], "Ed25519");
    let manifest_bytes = files(ws.path()).remove("manifest.json").unwrap();
    let mut manifest: Value = serde_json::from_slice(&manifest_bytes).unwrap();
    let signatures = manifest
        .as_object_mut()
        .unwrap()
        .remove("signatures")
        .unwrap();
    let [signature] = signatures.as_array().unwrap().as_slice() else {
        panic!("one signature expected: {signatures}");
    };
    assert_eq!(signature.as_object().unwrap().len(), 2);
    let protected = signature["protected"].as_str().unwrap();
    let header = URL_SAFE_NO_PAD.decode(protected).unwrap();
    assert_eq!(
        String::from_utf8(header).unwrap(),
        format!(
            r#"{{"alg":"EdDSA","kid":"{}","typ":"JOSE"}}"#,
            jwk["kid"].as_str().unwrap()
        )
    );
    // Detached payload: the JCS bytes of the manifest without `signatures`.
    let payload = serde_json_canonicalizer::to_vec(&manifest).unwrap();
    let signing_input = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(&payload));
    let x: [u8; 32] = URL_SAFE_NO_PAD
        .decode(jwk["x"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    let sig: [u8; 64] = URL_SAFE_NO_PAD
        .decode(signature["signature"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    ed25519_dalek::VerifyingKey::from_bytes(&x)
        .unwrap()
        .verify_strict(
            signing_input.as_bytes(),
            &ed25519_dalek::Signature::from_bytes(&sig),
        )
        .expect("the signature verifies over the hand-built signing input");
}

/// The "Loading a bundle in your agent" section of the README is the doc-tested text
/// in docs/loading-a-bundle.md (compiled as the `agent` module's documentation).
#[test]
fn readme_example_is_the_doc_tested_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let section = read(&root.join("docs/loading-a-bundle.md"));
    let readme = read(&root.join("README.md"));
    assert!(
        readme.contains(&section),
        "README.md must contain docs/loading-a-bundle.md verbatim"
    );
}

/// Take a deeply nested value apart without recursion (dropping it recurses per level).
fn drop_iteratively(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[test]
fn deeply_nested_arguments_are_a_resource_limit_not_a_stack_overflow() {
    // A recursive input schema makes the validator descend along the instance. 20,000
    // levels overflowed a 2 MiB worker-thread stack (an agent's tokio worker) before
    // check_request applied the validator's nesting ceiling.
    let ws = workspace();
    let erc = ws.path().join(ERC);
    write(
        &erc.join("schemas/input.json"),
        r##"{"type": "array", "items": {"$ref": "#"}}"##,
    );
    std::fs::remove_dir_all(erc.join("examples/input")).unwrap();
    // Not a release: start without the ledger, which would (rightly) refuse the edit.
    std::fs::remove_file(ws.path().join("skillbundle.lock")).unwrap();
    let built = run(&["build", ".", "--format", "json"], ws.path());
    assert_eq!(built.status, 0, "{}", built.stdout);
    let bundle =
        Bundle::open_path(&ws.path().join(BUNDLE), &TrustedKeys::allow_unsigned()).unwrap();
    let digest = bundle.advertised()[0].interface_digest.clone();
    let mut deep = json!([]);
    for _ in 0..20_000 {
        deep = Value::Array(vec![deep]);
    }
    // Built by hand: json! would serialize `deep` recursively.
    let mut request = json!({"skill": ERC_ID, "skill_version": "1.0", "interface_digest": digest});
    request["arguments"] = deep;
    let outcome = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let check = |v: &Value| bundle.check_request(v).map(|_| ()).map_err(|e| e.code());
            let outcome = (
                check(&request),
                bundle
                    .check_result(ERC_ID, &request["arguments"])
                    .map_err(|e| e.code()),
            );
            drop_iteratively(request);
            outcome
        })
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert_eq!(outcome.0, Err(Condition::ResourceLimitExceeded));
    assert_eq!(outcome.1, Err(Condition::ResourceLimitExceeded));
    // 100 levels are evaluated as usual.
    let bundle =
        Bundle::open_path(&ws.path().join(BUNDLE), &TrustedKeys::allow_unsigned()).unwrap();
    let mut shallow = json!([]);
    for _ in 0..100 {
        shallow = Value::Array(vec![shallow]);
    }
    let request = json!({
        "skill": ERC_ID, "skill_version": "1.0", "interface_digest": digest, "arguments": shallow,
    });
    assert!(bundle.check_request(&request).is_ok());
}
