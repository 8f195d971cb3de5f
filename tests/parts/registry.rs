//! Registry distribution against the real CNCF Distribution registry (Debian's
//! `docker-registry`), started here on 127.0.0.1 with a free port and filesystem storage
//! in a temporary directory, and stopped after: push, pull, `oci://` references, foreign
//! artifacts uploaded by plain HTTP, a cross-host redirect for a blob, basic auth with
//! htpasswd, keep-last-good and anti-rollback. `skopeo`, an independent client, reads
//! what `push` wrote.
//!
//! The tools are parts (`harness::Part::RegistryTools`, `OrasClient`) that
//! `scripts/test-parts` installs before the tests; a test without them is reported as
//! skipped, with the reason, and fails under `CI=true` (tests/parts/harness.rs).

use crate::common;
use crate::harness;

harness::tests! {
    push_writes_an_oci_artifact_that_skopeo_reads needs [RegistryTools],
    release_tags_do_not_move_without_force needs [RegistryTools],
    pull_verifies_before_writing_and_every_command_takes_oci_references needs [RegistryTools],
    artifacts_uploaded_by_plain_http_are_pulled_and_checked needs [RegistryTools],
    a_blob_redirect_to_another_host_is_followed_and_the_digest_still_checked needs [RegistryTools],
    basic_auth_uses_the_standard_credentials_file needs [RegistryTools],
    an_agent_keeps_the_last_good_bundle_and_refuses_rollbacks needs [RegistryTools],
    a_jwk_set_trusts_each_key_of_a_rotation,
    oras_pushes_what_skillbundle_pulls_and_pulls_what_it_pushes needs [RegistryTools, OrasClient],
    a_bundle_signed_over_a_path_as_its_name_is_refused_and_written_nowhere needs [RegistryTools, OrasClient],
    push_lists_the_signature_under_the_referrers_tag_where_the_registry_has_no_api needs [RegistryTools, OrasClient],
    pull_can_require_a_trusted_signature_referrer_of_the_very_bundle needs [RegistryTools],
    a_registry_with_the_referrers_api_lists_the_signature_itself needs [RegistryTools],
    release_statements_travel_beside_the_bundle_and_in_the_manifest needs [RegistryTools],
    serve_polls_a_registry_and_keeps_the_last_good_bundle needs [RegistryTools],
    serve_with_a_state_directory_counts_a_reload_it_kept_the_last_good_bundle_for_as_refused needs [RegistryTools],
}

use common::*;
use serde_json::{json, Value};
use skillbundle::agent::fetch::{self, Source};
use skillbundle::agent::TrustedKeys;
use skillbundle::crypto::keys::{PublicKey, SigningKeyPair};
use skillbundle::registry::credentials::Credentials;
use skillbundle::registry::{self, Options};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const V1: &str = "dist/example-network-skills-0.1.0.tar.gz";
const V2: &str = "dist/example-network-skills-0.2.0.tar.gz";
const TRUST: &str = "keys/release.jwk.json";

/// The ORAS project's Python client: the interpreter of the venv `scripts/registry-tools`
/// makes (python/requirements-oras.txt) and tests/support/oras_client.py. A part
/// (`harness::Part::OrasClient`): a test that calls this runs only when it is there.
fn oras() -> Oras {
    Oras {
        python: harness::oras_venv().join("bin/python"),
        script: harness::root().join("tests/support/oras_client.py"),
    }
}

struct Oras {
    python: PathBuf,
    script: PathBuf,
}

impl Oras {
    /// Run `oras_client.py ARGS` and return its stdout, or its stderr as the error.
    fn run(&self, args: &[&str], cwd: &Path) -> Result<String, String> {
        let out = Command::new(&self.python)
            .arg(&self.script)
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running registry; stopped (and its storage removed) when dropped.
struct Registry {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    fn start(htpasswd: Option<(&str, &str)>) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let auth = match htpasswd {
            None => String::new(),
            Some((user, password)) => {
                let out = Command::new("htpasswd")
                    .args(["-Bbn", user, password])
                    .output()
                    .unwrap();
                assert!(out.status.success());
                std::fs::write(dir.path().join("htpasswd"), out.stdout).unwrap();
                format!(
                    "auth:\n  htpasswd:\n    realm: skillbundle-test\n    path: {}\n",
                    dir.path().join("htpasswd").display()
                )
            }
        };
        let config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n{auth}",
            dir.path().join("data").display()
        );
        std::fs::write(dir.path().join("config.yml"), config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(dir.path().join("config.yml"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let registry = Registry {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the registry did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A workspace with a key pair and two signed bundles: 0.1.0 and 0.2.0.
fn bundles() -> tempfile::TempDir {
    let ws = workspace();
    let ok = |r: Run| assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    ok(run(&["keygen", "--out", "keys/release"], ws.path()));
    ok(run(
        &["build", ".", "--sign-key", "keys/release.key"],
        ws.path(),
    ));
    let yaml = ws.path().join("skillbundle.yaml");
    let text = read(&yaml).replace("version: \"0.1.0\"", "version: \"0.2.0\"");
    assert!(text.contains("0.2.0"), "{text}");
    write(&yaml, text);
    ok(run(
        &["build", ".", "--sign-key", "keys/release.key"],
        ws.path(),
    ));
    ws
}

fn trusted(ws: &Path) -> TrustedKeys {
    TrustedKeys::new(vec![PublicKey::read_file(&ws.join(TRUST)).unwrap()])
}

fn plain() -> fetch::FetchOptions {
    Options {
        plain_http: true,
        credentials: Some(Credentials::Anonymous),
        ..Options::default()
    }
    .into()
}

fn skopeo_raw(reference: &str) -> Vec<u8> {
    let out = Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false"])
        .arg(format!("docker://{reference}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn push(ws: &Path, bundle: &str, reference: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "push",
        bundle,
        reference,
        "--trust",
        TRUST,
        "--plain-http",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    run(&args, ws)
}

/// `pull REFERENCE --trust TRUST --out OUT --plain-http --format json EXTRA...` in `ws`.
fn pull(ws: &Path, reference: &str, out: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "pull",
        reference,
        "--trust",
        TRUST,
        "--out",
        out,
        "--plain-http",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    run(&args, ws)
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

fn push_writes_an_oci_artifact_that_skopeo_reads() {
    let registry = Registry::start(None);
    let ws = bundles();
    let target = format!("{}/skills/net:0.1.0", registry.host());
    let pushed = push(ws.path(), V1, &target, &[]);
    assert_eq!(pushed.status, 0, "{}{}", pushed.stdout, pushed.stderr);
    let doc = pushed.json();
    let digest = doc["digest"].as_str().unwrap().to_string();
    assert_eq!(doc["reference"], format!("{target}@{digest}"));
    assert_eq!(doc["unchanged"], false);

    // skopeo, an independent client, reads the manifest.
    let raw = skopeo_raw(&target);
    assert_eq!(
        registry::sha256(&raw),
        digest,
        "the printed digest is the manifest's"
    );
    let manifest: Value = serde_json::from_slice(&raw).unwrap();
    let bundle_bytes = std::fs::read(ws.path().join(V1)).unwrap();
    assert_eq!(manifest["schemaVersion"], 2);
    assert_eq!(manifest["mediaType"], registry::MANIFEST_MEDIA_TYPE);
    assert_eq!(
        manifest["artifactType"],
        "application/vnd.skillbundle.bundle.v1"
    );
    assert_eq!(
        manifest["config"],
        json!({"mediaType": "application/vnd.oci.empty.v1+json", "digest": registry::sha256(b"{}"), "size": 2, "data": "e30="})
    );
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1);
    assert_eq!(
        layers[0]["mediaType"],
        "application/vnd.skillbundle.bundle.v1.tar+gzip"
    );
    assert_eq!(layers[0]["digest"], registry::sha256(&bundle_bytes));
    assert_eq!(layers[0]["size"], bundle_bytes.len());
    assert_eq!(
        manifest["annotations"],
        json!({
            "io.skillbundle.bundle.name": "example-network-skills",
            "io.skillbundle.bundle.skills": "3",
            "org.opencontainers.image.created": "1970-01-01T00:00:00Z",
            "org.opencontainers.image.title": "example-network-skills-0.1.0.tar.gz",
            "org.opencontainers.image.version": "0.1.0",
        })
    );

    // skopeo copies the artifact out; its one layer is the bundle, byte for byte.
    let layout = tempfile::tempdir().unwrap();
    let copied = Command::new("skopeo")
        .args(["copy", "--src-tls-verify=false"])
        .arg(format!("docker://{target}"))
        .arg(format!("oci:{}:b", layout.path().display()))
        .output()
        .unwrap();
    assert!(
        copied.status.success(),
        "{}",
        String::from_utf8_lossy(&copied.stderr)
    );
    let hex = registry::sha256(&bundle_bytes).replace("sha256:", "");
    assert_eq!(
        std::fs::read(layout.path().join("blobs/sha256").join(hex)).unwrap(),
        bundle_bytes
    );

    // The same bundle again: same digest, nothing changed.
    let again = push(ws.path(), V1, &target, &[]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert_eq!(again.json()["digest"], digest.as_str());
    assert_eq!(again.json()["unchanged"], true);
    // And to another tag: the same manifest, the same digest.
    let other = push(
        ws.path(),
        V1,
        &format!("{}/skills/net:latest", registry.host()),
        &[],
    );
    assert_eq!(other.json()["digest"], digest.as_str());
}

fn release_tags_do_not_move_without_force() {
    let registry = Registry::start(None);
    let ws = bundles();
    let v1 = format!("{}/skills/net:0.1.0", registry.host());
    assert_eq!(push(ws.path(), V1, &v1, &[]).status, 0);
    let before = skopeo_raw(&v1);

    // 0.2.0's content under the tag 0.1.0: refused, and the tag still names 0.1.0.
    let moved = push(ws.path(), V2, &v1, &[]);
    assert_eq!(moved.status, 1, "{}", moved.stdout);
    let finding = moved.finding("tag_immutable");
    assert_eq!(finding["file"], v1.as_str());
    assert_eq!(skopeo_raw(&v1), before);
    // --force moves it.
    let forced = push(ws.path(), V2, &v1, &["--force"]);
    assert_eq!(forced.status, 0, "{}", forced.stderr);
    assert_eq!(forced.json()["moved"], true);

    // A tag that names no version moves freely.
    let stable = format!("{}/skills/net:stable", registry.host());
    assert_eq!(push(ws.path(), V1, &stable, &[]).status, 0);
    let next = push(ws.path(), V2, &stable, &[]);
    assert_eq!(next.status, 0, "{}", next.stderr);
    assert_eq!(next.json()["moved"], true);

    // Only a verified bundle is pushed: an unsigned one needs --allow-unsigned.
    let unsigned = tempfile::tempdir().unwrap();
    copy_tree(&example_skills(), unsigned.path());
    assert_eq!(run(&["build", "."], unsigned.path()).status, 0);
    let target = format!("{}/skills/unsigned:0.1.0", registry.host());
    let refused = run(
        &["push", V1, &target, "--plain-http", "--format", "json"],
        unsigned.path(),
    );
    assert_eq!(refused.status, 1, "{}", refused.stdout);
    refused.finding("untrusted_key");
    let allowed = run(
        &["push", V1, &target, "--plain-http", "--allow-unsigned"],
        unsigned.path(),
    );
    assert_eq!(allowed.status, 0, "{}", allowed.stderr);
}

fn pull_verifies_before_writing_and_every_command_takes_oci_references() {
    let registry = Registry::start(None);
    let ws = bundles();
    let target = format!("{}/skills/net:0.1.0", registry.host());
    let digest = push(ws.path(), V1, &target, &[]).json()["digest"]
        .as_str()
        .unwrap()
        .to_string();

    let out = ws.path().join("pulled");
    let pulled = run(
        &[
            "pull",
            &format!("oci://{target}"),
            "--trust",
            TRUST,
            "--out",
            "pulled",
            "--plain-http",
        ],
        ws.path(),
    );
    assert_eq!(pulled.status, 0, "{}", pulled.stderr);
    assert!(pulled
        .stdout
        .contains(&format!("{}/skills/net@{digest}", registry.host())));
    assert_eq!(
        std::fs::read(out.join("example-network-skills-0.1.0.tar.gz")).unwrap(),
        std::fs::read(ws.path().join(V1)).unwrap()
    );
    // By digest, too.
    let by_digest = format!("oci://{}/skills/net@{digest}", registry.host());
    let again = run(
        &[
            "pull",
            &by_digest,
            "--trust",
            TRUST,
            "--out",
            "by-digest",
            "--plain-http",
        ],
        ws.path(),
    );
    assert_eq!(again.status, 0, "{}", again.stderr);

    // oci:// wherever a bundle path is taken.
    let oci = format!("oci://{target}");
    let common = ["--trust", TRUST, "--plain-http"];
    let verify = run(
        &[&["verify", oci.as_str()][..], &common].concat(),
        ws.path(),
    );
    assert_eq!(verify.status, 0, "{}", verify.stderr);
    assert!(verify
        .stdout
        .starts_with("verified example-network-skills 0.1.0"));
    let describe = run(
        &[
            &["describe", oci.as_str(), "evaluate_resource_condition"][..],
            &common,
        ]
        .concat(),
        ws.path(),
    );
    assert_eq!(describe.status, 0, "{}", describe.stderr);
    assert!(describe
        .stdout
        .contains("sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d"));
    let card = run(&[&["card", oci.as_str()][..], &common].concat(), ws.path());
    assert_eq!(card.status, 0, "{}", card.stderr);
    let validate = run(
        &[
            &[
                "validate",
                oci.as_str(),
                "--request",
                "requests/evaluate.json",
            ][..],
            &common,
        ]
        .concat(),
        ws.path(),
    );
    assert_eq!(validate.status, 0, "{}{}", validate.stdout, validate.stderr);

    // Refusals: a clear code, and nothing written.
    run(&["keygen", "--out", "keys/other"], ws.path());
    let cases: Vec<(Vec<String>, &str, i32)> = vec![
        (
            vec![oci.clone(), "--trust".into(), "keys/other.jwk.json".into()],
            "untrusted_key",
            1,
        ),
        (
            vec![
                format!("oci://{}/skills/net:9.9.9", registry.host()),
                "--trust".into(),
                TRUST.into(),
            ],
            "artifact_not_found",
            2,
        ),
        (
            vec![
                format!("oci://127.0.0.1:{}/skills/net:0.1.0", free_port()),
                "--trust".into(),
                TRUST.into(),
            ],
            "registry_error",
            2,
        ),
    ];
    for (args, code, status) in cases {
        let mut argv = vec!["pull".to_string()];
        argv.extend(args);
        argv.extend(["--out", "refused", "--plain-http", "--format", "json"].map(String::from));
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let refused = run(&argv, ws.path());
        assert_eq!(refused.status, status, "{code}: {}", refused.stdout);
        refused.finding(code);
        assert!(files_in(&ws.path().join("refused")).is_empty(), "{code}");
    }
}

/// A minimal HTTP/1.1 exchange over a fresh connection: the status, the headers
/// (lower-cased names) and the body.
fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let (status, headers) = crate::common::response_head(&response[..split]);
    (status, headers, response[split + 4..].to_vec())
}

/// Upload a blob the way the distribution spec describes it: POST for an upload
/// session, then PUT with the digest.
fn upload_blob(port: u16, repo: &str, bytes: &[u8]) -> String {
    let digest = registry::sha256(bytes);
    let (status, headers, _) = http(
        port,
        "POST",
        &format!("/v2/{repo}/blobs/uploads/"),
        &[],
        b"",
    );
    assert_eq!(status, 202);
    let location = headers
        .iter()
        .find(|(n, _)| n == "location")
        .unwrap()
        .1
        .clone();
    let path = location
        .strip_prefix(&format!("http://127.0.0.1:{port}"))
        .unwrap_or(&location)
        .to_string();
    let sep = if path.contains('?') { '&' } else { '?' };
    let (status, _, body) = http(
        port,
        "PUT",
        &format!("{path}{sep}digest={digest}"),
        &[("Content-Type", "application/octet-stream")],
        bytes,
    );
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
    digest
}

fn upload_manifest(port: u16, repo: &str, tag: &str, manifest: &Value) {
    let (status, _, body) = http(
        port,
        "PUT",
        &format!("/v2/{repo}/manifests/{tag}"),
        &[("Content-Type", registry::MANIFEST_MEDIA_TYPE)],
        &serde_json::to_vec(manifest).unwrap(),
    );
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
}

fn artifacts_uploaded_by_plain_http_are_pulled_and_checked() {
    let registry = Registry::start(None);
    let ws = bundles();
    let bytes = std::fs::read(ws.path().join(V1)).unwrap();
    let repo = "vendor/net";
    let config = upload_blob(registry.port, repo, b"{}");
    let layer = upload_blob(registry.port, repo, &bytes);
    let manifest = |artifact_type: &str, layer_type: &str| {
        json!({
            "schemaVersion": 2,
            "mediaType": registry::MANIFEST_MEDIA_TYPE,
            "artifactType": artifact_type,
            "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": config, "size": 2},
            "layers": [{"mediaType": layer_type, "digest": layer, "size": bytes.len()}],
        })
    };
    let ours = "application/vnd.skillbundle.bundle.v1";
    let layer_type = "application/vnd.skillbundle.bundle.v1.tar+gzip";
    upload_manifest(registry.port, repo, "good", &manifest(ours, layer_type));
    upload_manifest(
        registry.port,
        repo,
        "helm",
        &manifest("application/vnd.cncf.helm.config.v1+json", layer_type),
    );
    upload_manifest(
        registry.port,
        repo,
        "octets",
        &manifest(ours, "application/octet-stream"),
    );

    let pull = |tag: &str, out: &str| {
        pull(
            ws.path(),
            &format!("oci://{}/{repo}:{tag}", registry.host()),
            out,
            &[],
        )
    };
    let good = pull("good", "good");
    assert_eq!(good.status, 0, "{}{}", good.stdout, good.stderr);
    assert_eq!(
        std::fs::read(ws.path().join("good/example-network-skills-0.1.0.tar.gz")).unwrap(),
        bytes
    );
    for tag in ["helm", "octets"] {
        let refused = pull(tag, "refused");
        assert_eq!(refused.status, 1, "{tag}: {}", refused.stdout);
        refused.finding("artifact_invalid");
        assert!(files_in(&ws.path().join("refused")).is_empty());
    }
}

/// A proxy in front of the registry that answers every blob GET with a redirect to
/// another host name of the same registry (`localhost` instead of `127.0.0.1`) — or,
/// with `swap`, to another blob — and forwards everything else.
fn redirecting_proxy(registry_port: u16, swap: Option<(String, String)>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let swap = swap.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut byte).unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let mut lines = text.split("\r\n");
                let request_line = lines.next().unwrap_or("").to_string();
                let path = request_line.split(' ').nth(1).unwrap_or("/").to_string();
                if request_line.starts_with("GET ") && path.contains("/blobs/sha256:") {
                    let path = match &swap {
                        Some((from, to)) => path.replace(from.as_str(), to),
                        None => path,
                    };
                    let response = format!(
                        "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://localhost:{registry_port}{path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                    let _ = client.write_all(response.as_bytes());
                    return;
                }
                let mut upstream = TcpStream::connect(("127.0.0.1", registry_port)).unwrap();
                let mut forwarded = format!("{request_line}\r\n");
                for line in lines.filter(|l| !l.is_empty()) {
                    if !line.to_ascii_lowercase().starts_with("connection:") {
                        forwarded.push_str(line);
                        forwarded.push_str("\r\n");
                    }
                }
                forwarded.push_str("Connection: close\r\n\r\n");
                let _ = upstream.write_all(forwarded.as_bytes());
                let _ = std::io::copy(&mut upstream, &mut client);
            });
        }
    });
    port
}

fn a_blob_redirect_to_another_host_is_followed_and_the_digest_still_checked() {
    let registry = Registry::start(None);
    let ws = bundles();
    let v1 = format!("{}/skills/net:0.1.0", registry.host());
    let v2 = format!("{}/skills/net:0.2.0", registry.host());
    assert_eq!(push(ws.path(), V1, &v1, &[]).status, 0);
    assert_eq!(push(ws.path(), V2, &v2, &[]).status, 0);
    let d1 = registry::sha256(&std::fs::read(ws.path().join(V1)).unwrap());
    let d2 = registry::sha256(&std::fs::read(ws.path().join(V2)).unwrap());

    let pull_through = |proxy: u16, out: &str| {
        pull(
            ws.path(),
            &format!("oci://127.0.0.1:{proxy}/skills/net:0.1.0"),
            out,
            &[],
        )
    };
    let followed = pull_through(redirecting_proxy(registry.port, None), "followed");
    assert_eq!(followed.status, 0, "{}{}", followed.stdout, followed.stderr);
    assert_eq!(files_in(&ws.path().join("followed")).len(), 1);

    // The redirect hands out another (valid, signed) bundle: its digest gives it away.
    let swapped = pull_through(redirecting_proxy(registry.port, Some((d1, d2))), "swapped");
    assert_eq!(swapped.status, 1, "{}", swapped.stdout);
    swapped.finding("digest_mismatch");
    assert!(files_in(&ws.path().join("swapped")).is_empty());
}

fn basic_auth_uses_the_standard_credentials_file() {
    let registry = Registry::start(Some(("ci", "s3cret-pass")));
    let ws = bundles();
    let target = format!("{}/skills/net:0.1.0", registry.host());
    let with_auth_file = |auth: Option<&str>, args: &[&str]| {
        let auth_file = ws.path().join("auth.json");
        if let Some(pair) = auth {
            use base64::Engine as _;
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            write(
                &auth_file,
                json!({"auths": {registry.host(): {"auth": encoded}}}).to_string(),
            );
        } else {
            let _ = std::fs::remove_file(&auth_file);
        }
        run_env(
            args,
            ws.path(),
            &[("REGISTRY_AUTH_FILE", auth_file.as_os_str())],
        )
    };
    let push_args = [
        "push",
        V1,
        &target,
        "--trust",
        TRUST,
        "--plain-http",
        "--format",
        "json",
    ];
    for auth in [None, Some("ci:wrong")] {
        let refused = with_auth_file(auth, &push_args);
        assert_eq!(refused.status, 2, "{auth:?}: {}", refused.stdout);
        let finding = refused.finding("registry_unauthorized");
        assert!(!finding["message"].as_str().unwrap().contains("wrong"));
    }
    let pushed = with_auth_file(Some("ci:s3cret-pass"), &push_args);
    assert_eq!(pushed.status, 0, "{}{}", pushed.stdout, pushed.stderr);
    let oci = format!("oci://{target}");
    let verified = with_auth_file(
        Some("ci:s3cret-pass"),
        &["verify", &oci, "--trust", TRUST, "--plain-http"],
    );
    assert_eq!(verified.status, 0, "{}", verified.stderr);
    let anonymous = with_auth_file(None, &["verify", &oci, "--trust", TRUST, "--plain-http"]);
    assert_eq!(anonymous.status, 2);
    assert!(
        anonymous.stderr.contains("registry_unauthorized"),
        "{}",
        anonymous.stderr
    );
}

fn an_agent_keeps_the_last_good_bundle_and_refuses_rollbacks() {
    let mut registry = Registry::start(None);
    let ws = bundles();
    let stable = format!("{}/skills/net:stable", registry.host());
    let trust = trusted(ws.path());
    let state = tempfile::tempdir().unwrap();

    // 0.2.0 is published and fetched: it is now the highest version and the last good.
    assert_eq!(push(ws.path(), V2, &stable, &[]).status, 0);
    let first = fetch::fetch(&stable, &trust, state.path(), &plain()).unwrap();
    assert_eq!(first.bundle.version(), "0.2.0");
    assert!(matches!(
        first.source,
        Source::Registry { previous: None, .. }
    ));
    let recorded: Value =
        serde_json::from_slice(&std::fs::read(state.path().join("state.json")).unwrap()).unwrap();
    assert_eq!(
        recorded["highest"]["example-network-skills"]["version"],
        "0.2.0"
    );
    assert_eq!(files_in(&state.path().join("bundles")).len(), 1);

    // The tag is moved back to 0.1.0 (signed, valid — and older): refused, and the
    // agent runs on the kept 0.2.0, saying why.
    assert_eq!(push(ws.path(), V1, &stable, &[]).status, 0);
    let rolled = fetch::fetch(&stable, &trust, state.path(), &plain()).unwrap();
    assert_eq!(rolled.bundle.version(), "0.2.0");
    let Source::LastGood { refused, .. } = &rolled.source else {
        panic!("expected the last good bundle");
    };
    assert_eq!(refused[0].code.as_str(), "rollback_refused");
    // `pull --state` refuses the same way and writes nothing.
    let state_arg = state.path().to_str().unwrap();
    let pulled = pull(ws.path(), &stable, "out", &["--state", state_arg]);
    assert_eq!(pulled.status, 1, "{}", pulled.stdout);
    pulled.finding("rollback_refused");
    assert!(files_in(&ws.path().join("out")).is_empty());

    // The tag is moved to another bundle the vendor signed, at a higher version (a
    // beta channel, a renamed product): mix-and-match, refused the same way.
    let yaml = ws.path().join("skillbundle.yaml");
    let text = read(&yaml).replace(
        "name: example-network-skills, version: \"0.2.0\"",
        "name: example-network-skills-beta, version: \"9.0.0\"",
    );
    assert!(text.contains("-beta"), "{text}");
    write(&yaml, text);
    let built = run(&["build", ".", "--sign-key", "keys/release.key"], ws.path());
    assert_eq!(built.status, 0, "{}{}", built.stdout, built.stderr);
    let beta = "dist/example-network-skills-beta-9.0.0.tar.gz";
    assert_eq!(push(ws.path(), beta, &stable, &[]).status, 0);
    let renamed = fetch::fetch(&stable, &trust, state.path(), &plain()).unwrap();
    assert_eq!(renamed.bundle.name(), "example-network-skills");
    let Source::LastGood { refused, .. } = &renamed.source else {
        panic!("expected the last good bundle");
    };
    assert_eq!(refused[0].code.as_str(), "rollback_refused");
    assert!(
        refused[0].message.contains("another bundle"),
        "{}",
        refused[0].message
    );
    assert_eq!(push(ws.path(), V1, &stable, &[]).status, 0);

    // A bundle no trusted key signed is refused too; the last good one is kept.
    let stranger = TrustedKeys::new(vec![skillbundle::crypto::keys::SigningKeyPair::from_seed(
        &[7; 32],
    )
    .public_key()]);
    let kept = fetch::fetch(&stable, &stranger, state.path(), &plain());
    assert!(
        kept.is_err(),
        "the kept bundle is re-verified with the keys given"
    );

    // The registry goes away: the last good bundle is loaded, and the reason given.
    let _ = registry.child.kill();
    let _ = registry.child.wait();
    let offline = fetch::fetch(&stable, &trust, state.path(), &plain()).unwrap();
    assert_eq!(offline.bundle.version(), "0.2.0");
    let Source::LastGood { refused, .. } = &offline.source else {
        panic!("expected the last good bundle");
    };
    assert_eq!(refused[0].code.as_str(), "registry_error");
    // Without a last good bundle there is nothing to start on.
    let empty = tempfile::tempdir().unwrap();
    let none = fetch::fetch(&stable, &trust, empty.path(), &plain())
        .err()
        .unwrap();
    assert_eq!(none[0].code.as_str(), "registry_error");
}

fn a_jwk_set_trusts_each_key_of_a_rotation() {
    let ws = bundles();
    let ok = |r: Run| assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    ok(run(&["keygen", "--out", "keys/next"], ws.path()));
    let key = |name: &str| -> Value {
        serde_json::from_str(&read(&ws.path().join(format!("keys/{name}.jwk.json")))).unwrap()
    };
    write(
        &ws.path().join("keys/trusted.jwks.json"),
        json!({"keys": [key("next"), key("release")]}).to_string(),
    );
    let verify = run(
        &["verify", V1, "--trust", "keys/trusted.jwks.json"],
        ws.path(),
    );
    assert_eq!(verify.status, 0, "{}", verify.stderr);
    write(&ws.path().join("keys/empty.jwks.json"), r#"{"keys": []}"#);
    let empty = run(
        &["verify", V1, "--trust", "keys/empty.jwks.json"],
        ws.path(),
    );
    assert_eq!(empty.status, 2);
    assert!(empty.stderr.contains("trust nothing"), "{}", empty.stderr);
}

/// A bundle signed by the trusted key over a name the builder refuses (`../../x`), put in
/// the real registry by another client: `pull` refuses it (`bundle_invalid`) and writes
/// nothing, inside `--out` or two folders up. tests/integration/lying_registry.rs has the
/// other names.
fn a_bundle_signed_over_a_path_as_its_name_is_refused_and_written_nowhere() {
    let oras = oras();
    let registry = Registry::start(None);
    let ws = bundles();
    let key = SigningKeyPair::read_pem_file(&ws.path().join("keys/release.key")).unwrap();
    write(
        &ws.path().join("crafted.tar.gz"),
        common::crafted::signed_example_bundle("../../x", "1.0.0", &[key]),
    );
    let reference = format!("{}/oras/net:crafted", registry.host());
    oras.run(
        &[
            "push",
            &reference,
            "crafted.tar.gz:application/vnd.skillbundle.bundle.v1.tar+gzip",
            "/dev/null:application/vnd.skillbundle.bundle.v1",
        ],
        ws.path(),
    )
    .unwrap();
    let pulled = pull(ws.path(), &format!("oci://{reference}"), "out/deep", &[]);
    assert_eq!(pulled.status, 1, "{}{}", pulled.stdout, pulled.stderr);
    pulled.finding("bundle_invalid");
    assert!(!pulled.stdout.contains("../"), "{}", pulled.stdout);
    assert!(files_in(&ws.path().join("out/deep")).is_empty());
    assert!(!ws.path().join("x-1.0.0.tar.gz").exists());
}

fn oras_pushes_what_skillbundle_pulls_and_pulls_what_it_pushes() {
    let oras = oras();
    let registry = Registry::start(None);
    let ws = bundles();
    let bytes = std::fs::read(ws.path().join(V1)).unwrap();
    let layer = format!("{V1}:application/vnd.skillbundle.bundle.v1.tar+gzip");

    // ORAS pushes the bundle in the OCI 1.0 form: no artifactType, the type as
    // config.mediaType, with an empty config blob (/dev/null) or ORAS's `{}`.
    for (tag, config) in [("empty", "/dev/null"), ("braces", "no-such-config-file")] {
        let reference = format!("{}/oras/net:{tag}", registry.host());
        let config = format!("{config}:application/vnd.skillbundle.bundle.v1");
        oras.run(&["push", &reference, &layer, &config], ws.path())
            .unwrap();
        let manifest: Value =
            serde_json::from_str(&oras.run(&["manifest", &reference], ws.path()).unwrap()).unwrap();
        assert_eq!(manifest.get("artifactType"), None, "{manifest}");
        assert_eq!(
            manifest["config"]["mediaType"],
            "application/vnd.skillbundle.bundle.v1"
        );

        let out = format!("pulled-{tag}");
        let pulled = pull(ws.path(), &format!("oci://{reference}"), &out, &[]);
        assert_eq!(
            pulled.status, 0,
            "{tag}: {}{}",
            pulled.stdout, pulled.stderr
        );
        assert_eq!(
            std::fs::read(
                ws.path()
                    .join(&out)
                    .join("example-network-skills-0.1.0.tar.gz")
            )
            .unwrap(),
            bytes
        );
        let trust = trusted(ws.path());
        let state = tempfile::tempdir().unwrap();
        let fetched = fetch::fetch(&reference, &trust, state.path(), &plain()).unwrap();
        assert_eq!(fetched.bundle.version(), "0.1.0");
    }

    // ORAS without a config type writes "application/vnd.unknown.config.v1+json": not a
    // bundle, whatever its layer holds.
    let unknown = format!("{}/oras/net:unknown", registry.host());
    oras.run(&["push", &unknown, &layer], ws.path()).unwrap();
    let refused = pull(ws.path(), &format!("oci://{unknown}"), "refused", &[]);
    assert_eq!(refused.status, 1, "{}", refused.stdout);
    refused.finding("artifact_invalid");
    assert!(files_in(&ws.path().join("refused")).is_empty());

    // skillbundle pushes; ORAS pulls the one layer under its title, byte for byte.
    let ours = format!("{}/skills/net:0.1.0", registry.host());
    assert_eq!(push(ws.path(), V1, &ours, &[]).status, 0);
    let into = ws.path().join("by-oras");
    let files = oras
        .run(&["pull", &ours, into.to_str().unwrap()], ws.path())
        .unwrap();
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        [into
            .join("example-network-skills-0.1.0.tar.gz")
            .to_str()
            .unwrap()]
    );
    assert_eq!(
        std::fs::read(into.join("example-network-skills-0.1.0.tar.gz")).unwrap(),
        bytes
    );
}

/// The bundle V1's artifact manifest digest as `push` writes it, and its signing
/// payload (the manifest's JCS bytes without its signatures).
fn subject_and_payload(ws: &Path) -> (String, Vec<u8>) {
    let bytes = std::fs::read(ws.join(V1)).unwrap();
    let info = registry::BundleInfo {
        name: "example-network-skills".into(),
        version: "0.1.0".into(),
        skills: 3,
    };
    let manifest =
        skillbundle::bundle::first_pass::read_manifest(&bytes, Default::default()).unwrap();
    (
        registry::sha256(&registry::manifest_for(&bytes, &info)),
        skillbundle::bundle::sign::signing_payload(&manifest),
    )
}

fn push_lists_the_signature_under_the_referrers_tag_where_the_registry_has_no_api() {
    let oras = oras();
    let registry = Registry::start(None);
    let ws = bundles();
    let target = format!("{}/skills/net:0.1.0", registry.host());
    let pushed = push(ws.path(), V1, &target, &[]);
    assert_eq!(pushed.status, 0, "{}{}", pushed.stdout, pushed.stderr);
    let doc = pushed.json();
    let digest = doc["digest"].as_str().unwrap().to_string();
    let referrer = doc["referrer"]["digest"].as_str().unwrap().to_string();
    let tag = digest.replace(':', "-");
    // Distribution 2.8 has no referrers API: the referrers tag schema's index lists it.
    assert_eq!(doc["referrer"]["fallback_tag"], tag.as_str());
    assert_eq!(
        doc["referrer"]["artifact_type"],
        "application/vnd.skillbundle.signature.v1"
    );

    // ORAS sees the tag, and the index under it names the referrer with its type.
    let repo = format!("{}/skills/net", registry.host());
    let tags: Vec<String> =
        serde_json::from_str(&oras.run(&["tags", &repo], ws.path()).unwrap()).unwrap();
    assert!(tags.contains(&tag), "{tags:?}");
    let index: Value = serde_json::from_str(
        &oras
            .run(&["manifest", &format!("{repo}:{tag}")], ws.path())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    let listed = index["manifests"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{index}");
    assert_eq!(listed[0]["digest"], referrer.as_str());
    assert_eq!(
        listed[0]["artifactType"],
        "application/vnd.skillbundle.signature.v1"
    );
    // skopeo reads the referrer: its subject is the bundle's manifest, its one layer
    // the detached JWS of the bundle's own signatures.
    let raw = skopeo_raw(&format!("{repo}@{referrer}"));
    let manifest: Value = serde_json::from_slice(&raw).unwrap();
    assert_eq!(manifest["subject"]["digest"], digest.as_str());
    assert_eq!(manifest["layers"][0]["mediaType"], "application/jose+json");
    let bundle_manifest = skillbundle::bundle::first_pass::read_manifest(
        &std::fs::read(ws.path().join(V1)).unwrap(),
        Default::default(),
    )
    .unwrap();
    let jws_digest = manifest["layers"][0]["digest"].as_str().unwrap();
    let (status, _, jws) = http(
        registry.port,
        "GET",
        &format!("/v2/skills/net/blobs/{jws_digest}"),
        &[],
        b"",
    );
    assert_eq!(status, 200);
    let jws: Value = serde_json::from_slice(&jws).unwrap();
    assert_eq!(
        jws,
        json!({"signatures": bundle_manifest["signatures"].clone()})
    );

    // Pushed again: already listed, never listed twice.
    let again = push(ws.path(), V1, &target, &[]);
    assert_eq!(again.json()["referrer"]["digest"], referrer.as_str());
    assert_eq!(again.json()["referrer"]["fallback_tag"], Value::Null);
    let index: Value = serde_json::from_slice(&skopeo_raw(&format!("{repo}:{tag}"))).unwrap();
    assert_eq!(index["manifests"].as_array().unwrap().len(), 1);

    // An unsigned bundle has no signature to publish.
    let unsigned = tempfile::tempdir().unwrap();
    copy_tree(&example_skills(), unsigned.path());
    assert_eq!(run(&["build", "."], unsigned.path()).status, 0);
    let bare = run(
        &[
            "push",
            V1,
            &format!("{}/skills/unsigned:0.1.0", registry.host()),
            "--plain-http",
            "--allow-unsigned",
            "--format",
            "json",
        ],
        unsigned.path(),
    );
    assert_eq!(bare.status, 0, "{}", bare.stderr);
    assert_eq!(bare.json()["referrer"], Value::Null);
}

fn pull_can_require_a_trusted_signature_referrer_of_the_very_bundle() {
    let registry = Registry::start(None);
    let ws = bundles();
    let host = registry.host();
    let (subject, payload) = subject_and_payload(ws.path());
    let require = ["--require-referrer-signature"];

    // Pushed by `push`: found under the referrers tag, verified, written.
    let target = format!("{host}/skills/net:0.1.0");
    assert_eq!(push(ws.path(), V1, &target, &[]).status, 0);
    let pulled = pull(ws.path(), &format!("oci://{target}"), "ok", &require);
    assert_eq!(pulled.status, 0, "{}{}", pulled.stdout, pulled.stderr);
    assert_eq!(files_in(&ws.path().join("ok")).len(), 1);
    // The same through Bundle::fetch, an agent's start-up.
    let options = fetch::FetchOptions {
        require_referrer_signature: true,
        ..plain()
    };
    let state = tempfile::tempdir().unwrap();
    let fetched = fetch::fetch(&target, &trusted(ws.path()), state.path(), &options).unwrap();
    assert!(matches!(fetched.source, Source::Registry { .. }));

    // With a release statement beside it, push writes another manifest (the statement
    // is an annotation): the referrer names that one, and pull finds it.
    let ok = |r: Run| assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    ok(run(
        &[
            "build",
            ".",
            "--sign-key",
            "keys/release.key",
            "--expires",
            "30d",
        ],
        ws.path(),
    ));
    let released = format!("{host}/skills/released:0.2.0");
    let pushed = push(ws.path(), V2, &released, &[]);
    assert_eq!(pushed.status, 0, "{}{}", pushed.stdout, pushed.stderr);
    let referrer = pushed.json()["referrer"]["digest"]
        .as_str()
        .unwrap()
        .to_string();
    let raw: Value =
        serde_json::from_slice(&skopeo_raw(&format!("{host}/skills/released@{referrer}"))).unwrap();
    assert_eq!(raw["subject"]["digest"], pushed.json()["digest"]);
    let bundle_manifest: Value = serde_json::from_slice(&skopeo_raw(&released)).unwrap();
    assert!(
        bundle_manifest["annotations"]
            .get(skillbundle::bundle::release_statement::ANNOTATION)
            .is_some(),
        "{bundle_manifest}"
    );
    let pulled = pull(
        ws.path(),
        &format!("oci://{released}"),
        "released",
        &require,
    );
    assert_eq!(pulled.status, 0, "{}{}", pulled.stdout, pulled.stderr);

    // The same bundle uploaded without a referrer: accepted without the flag only.
    let bytes = std::fs::read(ws.path().join(V1)).unwrap();
    let info = registry::BundleInfo {
        name: "example-network-skills".into(),
        version: "0.1.0".into(),
        skills: 3,
    };
    let bare = "bare/net";
    upload_blob(registry.port, bare, b"{}");
    upload_blob(registry.port, bare, &bytes);
    let manifest: Value = serde_json::from_slice(&registry::manifest_for(&bytes, &info)).unwrap();
    upload_manifest(registry.port, bare, "0.1.0", &manifest);
    let bare_ref = format!("oci://{host}/{bare}:0.1.0");
    assert_eq!(pull(ws.path(), &bare_ref, "plain", &[]).status, 0);
    let refused = pull(ws.path(), &bare_ref, "refused", &require);
    assert_eq!(refused.status, 1, "{}", refused.stdout);
    let finding = refused.finding("referrer_signature_missing");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains(&subject.replace(':', "-")),
        "{finding}"
    );
    assert!(files_in(&ws.path().join("refused")).is_empty());
    let state = tempfile::tempdir().unwrap();
    let none = fetch::fetch(&bare_ref, &trusted(ws.path()), state.path(), &options)
        .err()
        .unwrap();
    assert_eq!(none[0].code.as_str(), "referrer_signature_missing");

    // Referrers listed under the tag that do not qualify: signed by a stranger over the
    // bundle, signed by the vendor over other content. None is accepted.
    let stranger = skillbundle::crypto::keys::SigningKeyPair::from_seed(&[9; 32]);
    let foreign_jws =
        skillbundle::registry::referrers::jws_document(&[skillbundle::crypto::jws::sign(
            &payload, &stranger,
        )]);
    let vendor = skillbundle::crypto::keys::SigningKeyPair::from_pkcs8_pem(&read(
        &ws.path().join("keys/release.key"),
    ))
    .unwrap();
    let elsewhere_jws =
        skillbundle::registry::referrers::jws_document(&[skillbundle::crypto::jws::sign(
            b"other", &vendor,
        )]);
    let subject_bytes = registry::manifest_for(&bytes, &info);
    let mut listed = Vec::new();
    for jws in [&foreign_jws, &elsewhere_jws] {
        upload_blob(registry.port, bare, jws);
        let referrer =
            skillbundle::registry::referrers::signature_manifest(jws, &subject_bytes, &info);
        let digest = registry::sha256(&referrer);
        let value: Value = serde_json::from_slice(&referrer).unwrap();
        upload_manifest(registry.port, bare, &digest, &value);
        listed.push(json!({
            "mediaType": registry::MANIFEST_MEDIA_TYPE,
            "digest": digest,
            "size": referrer.len(),
            "artifactType": "application/vnd.skillbundle.signature.v1",
        }));
    }
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": listed,
    });
    let (status, _, body) = http(
        registry.port,
        "PUT",
        &format!("/v2/{bare}/manifests/{}", subject.replace(':', "-")),
        &[("Content-Type", "application/vnd.oci.image.index.v1+json")],
        &serde_json::to_vec(&index).unwrap(),
    );
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
    let refused = pull(ws.path(), &bare_ref, "refused", &require);
    assert_eq!(refused.status, 1, "{}", refused.stdout);
    let finding = refused.finding("referrer_signature_missing");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("none is signed by a trusted key over this bundle"),
        "{finding}"
    );
    assert!(files_in(&ws.path().join("refused")).is_empty());
}

/// A front for the registry with the referrers API Distribution 2.8 lacks: it forwards
/// every request, remembers each manifest pushed with a `subject` (when `remember`),
/// answers `GET /v2/<name>/referrers/<digest>` itself (200, an image index, `extra`
/// descriptors first: a registry that lies) and sets `OCI-Subject` on the PUT's
/// response, as the distribution spec says. Every request line is logged.
fn referrers_api(
    registry_port: u16,
    extra: Vec<Value>,
    remember: bool,
) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Arc::new(Mutex::new(Vec::new()));
    // (repository, subject digest) → the descriptors of its referrers.
    type Listed = BTreeMap<(String, String), Vec<Value>>;
    let referrers: Arc<Mutex<Listed>> = Arc::default();
    let log_out = log.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let (log, referrers, extra) = (log.clone(), referrers.clone(), extra.clone());
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut byte).unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let mut lines = text.split("\r\n");
                let request_line = lines.next().unwrap_or("").to_string();
                let headers: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
                let length: usize = headers
                    .iter()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.trim().parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0u8; length];
                client.read_exact(&mut body).unwrap();
                log.lock().unwrap().push(request_line.clone());
                let path = request_line.split(' ').nth(1).unwrap_or("/").to_string();
                let path = path.split('?').next().unwrap_or("").to_string();
                if let Some((name, digest)) = path
                    .strip_prefix("/v2/")
                    .and_then(|p| p.split_once("/referrers/"))
                {
                    let mut manifests = extra.clone();
                    if let Some(known) = referrers
                        .lock()
                        .unwrap()
                        .get(&(name.to_string(), digest.to_string()))
                    {
                        manifests.extend(known.iter().cloned());
                    }
                    let index = serde_json::to_vec(&json!({
                        "schemaVersion": 2,
                        "mediaType": "application/vnd.oci.image.index.v1+json",
                        "manifests": manifests,
                    }))
                    .unwrap();
                    let _ = client.write_all(format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.index.v1+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        index.len()
                    ).as_bytes());
                    let _ = client.write_all(&index);
                    return;
                }
                let mut upstream = TcpStream::connect(("127.0.0.1", registry_port)).unwrap();
                let mut forwarded = format!("{request_line}\r\n");
                for line in &headers {
                    if !line.to_ascii_lowercase().starts_with("connection:") {
                        forwarded.push_str(line);
                        forwarded.push_str("\r\n");
                    }
                }
                forwarded.push_str("Connection: close\r\n\r\n");
                upstream.write_all(forwarded.as_bytes()).unwrap();
                upstream.write_all(&body).unwrap();
                let mut response = Vec::new();
                let _ = upstream.read_to_end(&mut response);
                let subject = serde_json::from_slice::<Value>(&body)
                    .ok()
                    .and_then(|m| m["subject"]["digest"].as_str().map(str::to_string));
                let pushed_manifest =
                    request_line.starts_with("PUT ") && path.contains("/manifests/");
                if let (true, Some(subject)) = (pushed_manifest, subject) {
                    let manifest: Value = serde_json::from_slice(&body).unwrap();
                    let name = path
                        .strip_prefix("/v2/")
                        .and_then(|p| p.split_once("/manifests/"))
                        .unwrap()
                        .0
                        .to_string();
                    if remember {
                        referrers
                            .lock()
                            .unwrap()
                            .entry((name, subject.clone()))
                            .or_default()
                            .push(json!({
                                "mediaType": manifest["mediaType"],
                                "digest": registry::sha256(&body),
                                "size": body.len(),
                                "artifactType": manifest["artifactType"],
                                "annotations": manifest["annotations"],
                            }));
                    }
                    // OCI-Subject after the status line.
                    let split = response.windows(2).position(|w| w == b"\r\n").unwrap();
                    let mut with = response[..split + 2].to_vec();
                    with.extend_from_slice(format!("OCI-Subject: {subject}\r\n").as_bytes());
                    with.extend_from_slice(&response[split + 2..]);
                    response = with;
                }
                let _ = client.write_all(&response);
            });
        }
    });
    (port, log_out)
}

fn a_registry_with_the_referrers_api_lists_the_signature_itself() {
    let registry = Registry::start(None);
    let ws = bundles();
    let (port, log) = referrers_api(registry.port, vec![], true);
    let target = format!("127.0.0.1:{port}/skills/net:0.1.0");
    let pushed = push(ws.path(), V1, &target, &[]);
    assert_eq!(pushed.status, 0, "{}{}", pushed.stdout, pushed.stderr);
    let doc = pushed.json();
    let digest = doc["digest"].as_str().unwrap().to_string();
    let tag = digest.replace(':', "-");
    // Listed by the API: no fallback tag is written.
    assert_eq!(doc["referrer"]["fallback_tag"], Value::Null, "{doc}");
    let tags = Command::new("skopeo")
        .args(["list-tags", "--tls-verify=false"])
        .arg(format!("docker://{}/skills/net", registry.host()))
        .output()
        .unwrap();
    let tags = String::from_utf8_lossy(&tags.stdout);
    assert!(tags.contains("0.1.0") && !tags.contains(&tag), "{tags}");

    let pulled = pull(
        ws.path(),
        &format!("oci://{target}"),
        "ok",
        &["--require-referrer-signature"],
    );
    assert_eq!(pulled.status, 0, "{}{}", pulled.stdout, pulled.stderr);
    let log = log.lock().unwrap().clone();
    assert!(
        log.iter()
            .any(|l| l.starts_with(&format!("GET /v2/skills/net/referrers/{digest}"))),
        "{log:?}"
    );
    assert!(!log.iter().any(|l| l.contains(&tag)), "{log:?}");

    // An API that lies: a descriptor for a manifest it does not have, and the bundle's
    // own manifest passed off as a signature. Neither is accepted.
    let manifest_size = skopeo_raw(&format!("{}/skills/net:0.1.0", registry.host())).len();
    let lies = vec![
        json!({"mediaType": registry::MANIFEST_MEDIA_TYPE, "digest": registry::sha256(b"none"), "size": 4,
               "artifactType": "application/vnd.skillbundle.signature.v1"}),
        json!({"mediaType": registry::MANIFEST_MEDIA_TYPE, "digest": digest, "size": manifest_size,
               "artifactType": "application/vnd.skillbundle.signature.v1"}),
    ];
    let (liar, _) = referrers_api(registry.port, lies, false);
    let refused = pull(
        ws.path(),
        &format!("oci://127.0.0.1:{liar}/skills/net:0.1.0"),
        "refused",
        &["--require-referrer-signature"],
    );
    assert_eq!(refused.status, 1, "{}", refused.stdout);
    let finding = refused.finding("referrer_signature_missing");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .starts_with("2 signature referrer(s)"),
        "{finding}"
    );
    assert!(files_in(&ws.path().join("refused")).is_empty());
}

fn release_statements_travel_beside_the_bundle_and_in_the_manifest() {
    let registry = Registry::start(None);
    let ws = bundles();
    let ok = |r: &Run| assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    let statement = ws
        .path()
        .join("dist/example-network-skills-0.2.0.release.json");

    // build --expires: the bundle is byte for byte the one built without it (the
    // SOURCE_DATE_EPOCH rules hold), and the statement is written beside it.
    let before = std::fs::read(ws.path().join(V2)).unwrap();
    let build = |expires: &str| {
        run(
            &[
                "build",
                ".",
                "--sign-key",
                "keys/release.key",
                "--expires",
                expires,
                "--format",
                "json",
            ],
            ws.path(),
        )
    };
    let built = build("30d");
    ok(&built);
    assert_eq!(std::fs::read(ws.path().join(V2)).unwrap(), before);
    assert_eq!(
        built.json()["release"],
        "./dist/example-network-skills-0.2.0.release.json"
    );
    let verify = |args: &[&str]| {
        run(
            &[
                &["verify", V2, "--trust", TRUST, "--format", "json"][..],
                args,
            ]
            .concat(),
            ws.path(),
        )
    };
    ok(&verify(&["--max-age", "1d"]));
    // Without one, --max-age refuses.
    let elsewhere = run(
        &[
            "verify",
            V1,
            "--trust",
            TRUST,
            "--max-age",
            "1d",
            "--format",
            "json",
        ],
        ws.path(),
    );
    assert_eq!(elsewhere.status, 1, "{}", elsewhere.stdout);
    elsewhere.finding("release_expired");
    // --expires needs a signing key.
    assert_eq!(run(&["build", ".", "--expires", "1d"], ws.path()).status, 2);

    // push carries it in the manifest; pull --max-age checks it.
    let target = format!("{}/skills/net:0.2.0", registry.host());
    let pushed = push(ws.path(), V2, &target, &[]);
    ok(&pushed);
    let manifest: Value = serde_json::from_slice(&skopeo_raw(&target)).unwrap();
    let carried = manifest["annotations"]["io.skillbundle.release"]
        .as_str()
        .unwrap();
    let on_disk: Value = serde_json::from_slice(&std::fs::read(&statement).unwrap()).unwrap();
    assert_eq!(serde_json::from_str::<Value>(carried).unwrap(), on_disk);
    ok(&pull(ws.path(), &target, "pulled", &["--max-age", "1d"]));

    // A re-issued statement (CI's daily build) moves the release-version tag without
    // --force: the layer, the bundle, is the same.
    ok(&build("31d"));
    assert_eq!(std::fs::read(ws.path().join(V2)).unwrap(), before);
    let again = push(ws.path(), V2, &target, &[]);
    ok(&again);
    assert_eq!(again.json()["moved"], true);
    ok(&pull(ws.path(), &target, "again", &["--max-age", "1d"]));

    // The same bundle pushed without a statement, under another tag: refused with
    // --max-age, accepted without.
    std::fs::remove_file(&statement).unwrap();
    let bare = format!("{}/skills/net:bare", registry.host());
    ok(&push(ws.path(), V2, &bare, &[]));
    let refused = pull(ws.path(), &bare, "refused", &["--max-age", "1d"]);
    assert_eq!(refused.status, 1, "{}", refused.stdout);
    refused.finding("release_expired");
    assert!(files_in(&ws.path().join("refused")).is_empty());
    ok(&pull(ws.path(), &bare, "bare", &[]));
}

/// `skillbundle serve --bundle oci://… --poll 1s`: a newer signed bundle pushed to the tag
/// is served at the next poll (seen in /metrics and the card); an older one, or one no
/// trusted key signed, is refused and the served bundle stays.
fn serve_polls_a_registry_and_keeps_the_last_good_bundle() {
    serve_polls(false);
}

/// The same with `--state DIR`: the registry's bundle refused, `fetch` hands back the
/// last good one (the one served), and the reload still counts as refused, never as
/// unchanged.
fn serve_with_a_state_directory_counts_a_reload_it_kept_the_last_good_bundle_for_as_refused() {
    serve_polls(true);
}

/// A reload outcome's count in the gateway's metrics.
fn reloads(metrics: &str, outcome: &str) -> u64 {
    let line = format!("skillbundle_gateway_reloads_total{{outcome=\"{outcome}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(line.as_str()))
        .map_or(0, |n| n.trim().parse().unwrap())
}

fn serve_polls(with_state: bool) {
    let registry = Registry::start(None);
    let ws = bundles();
    let stable = format!("{}/skills/net:stable", registry.host());
    assert_eq!(push(ws.path(), V1, &stable, &[]).status, 0);
    let port = free_port();
    let logs = tempfile::tempdir().unwrap();
    let log_file = logs.path().join("serve.log");
    let reference = format!("oci://{stable}");
    let listen = format!("127.0.0.1:{port}");
    let state = logs.path().join("state");
    // The upstream is never reached: the card and /metrics do not need it.
    let mut command = Command::new(env!("CARGO_BIN_EXE_skillbundle"));
    command.args([
        "serve",
        "--bundle",
        &reference,
        "--trust",
        TRUST,
        "--plain-http",
        "--upstream",
        "http://127.0.0.1:9",
        "--listen",
        &listen,
        "--poll",
        "1s",
    ]);
    if with_state {
        command.arg("--state").arg(&state);
    }
    let mut gateway = command
        .current_dir(ws.path())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_file).unwrap())
        .spawn()
        .unwrap();
    struct Stop<'a>(&'a mut Child);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _stop = Stop(&mut gateway);
    let metrics = || -> Option<String> {
        TcpStream::connect(("127.0.0.1", port)).ok()?;
        let (status, _, body) = http(port, "GET", "/metrics", &[], b"");
        (status == 200).then(|| String::from_utf8_lossy(&body).into_owned())
    };
    let wait_for = |what: &str, ok: &dyn Fn(&str) -> bool| -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(text) = metrics() {
                if ok(&text) {
                    return text;
                }
                assert!(Instant::now() < deadline, "{what}:\n{text}");
            } else {
                assert!(Instant::now() < deadline, "{what}: the gateway is not up");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let serving = |version: &str| format!("version=\"{version}\"");
    wait_for("0.1.0 served", &|m| m.contains(&serving("0.1.0")));
    let card_version = || {
        let (_, _, body) = http(port, "GET", "/.well-known/agent-card.json", &[], b"");
        let card: Value = serde_json::from_slice(&body).unwrap();
        card["version"].as_str().unwrap().to_string()
    };
    assert_eq!(card_version(), "0.1.0");

    // 0.2.0, signed, pushed to the tag: served at the next poll.
    assert_eq!(push(ws.path(), V2, &stable, &[]).status, 0);
    wait_for("0.2.0 served", &|m| {
        m.contains(&serving("0.2.0"))
            && m.contains("skillbundle_gateway_reloads_total{outcome=\"loaded\"} 1")
    });
    assert_eq!(card_version(), "0.2.0");

    // The tag moved back to 0.1.0: refused, 0.2.0 stays.
    assert_eq!(push(ws.path(), V1, &stable, &[]).status, 0);
    let refused = "skillbundle_gateway_reloads_total{outcome=\"refused\"}";
    let at_refusal = wait_for("the rollback refused", &|m| m.contains(refused));
    assert_eq!(card_version(), "0.2.0");
    // Every later poll of the rolled-back tag is refused again; none is "unchanged".
    let later = wait_for("the rollback refused again", &|m| {
        reloads(m, "refused") >= reloads(&at_refusal, "refused") + 2
    });
    assert_eq!(
        reloads(&later, "unchanged"),
        reloads(&at_refusal, "unchanged"),
        "{later}"
    );

    // 0.3.0 signed by no trusted key: refused, 0.2.0 stays.
    let yaml = ws.path().join("skillbundle.yaml");
    let text = read(&yaml).replace("version: \"0.2.0\"", "version: \"0.3.0\"");
    write(&yaml, text);
    let stranger = run(&["keygen", "--out", "keys/stranger"], ws.path());
    assert_eq!(stranger.status, 0, "{}{}", stranger.stdout, stranger.stderr);
    let built = run(
        &["build", ".", "--sign-key", "keys/stranger.key"],
        ws.path(),
    );
    assert_eq!(built.status, 0, "{}{}", built.stdout, built.stderr);
    let v3 = "dist/example-network-skills-0.3.0.tar.gz";
    let pushed = run(
        &[
            "push",
            v3,
            &stable,
            "--trust",
            "keys/stranger.jwk.json",
            "--plain-http",
        ],
        ws.path(),
    );
    assert_eq!(pushed.status, 0, "{}{}", pushed.stdout, pushed.stderr);
    // Each refusal is logged with its code: here, not a rollback but an untrusted key.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let log = std::fs::read_to_string(&log_file).unwrap();
        let untrusted = log
            .lines()
            .any(|l| l.contains("bundle_reload_refused") && !l.contains("rollback_refused"));
        if untrusted {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no refusal of the untrusted bundle:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(card_version(), "0.2.0");
    assert!(metrics().unwrap().contains(&serving("0.2.0")));
}
