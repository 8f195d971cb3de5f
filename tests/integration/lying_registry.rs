//! Pulling from a registry that lies: a small HTTP/1.1 server of the test's own on
//! 127.0.0.1, where every answer is what the test says — bundles signed over names the
//! builder refuses, renamed and downgraded bundles, endless or oversized bodies, a
//! declared layer that is not what it says, a server that trickles a byte at a time, a
//! token realm on another origin over plain HTTP. Each class is refused with its own
//! finding, nothing is written outside `--out`, and an agent keeps its last good bundle.
//! (The same classes against the real CNCF Distribution registry are in
//! `tests/parts/registry.rs`.)
#![cfg(feature = "oci")]

use crate::common;

use common::crafted::{fixture, signed_example_bundle};
use common::*;
use serde_json::{json, Value};
use skillbundle::agent::fetch::{self, Source};
use skillbundle::agent::Bundle;
use skillbundle::bundle;
use skillbundle::bundle::release_statement;
use skillbundle::registry;
use skillbundle::registry::credentials::Credentials;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the lying registry saw it.
#[derive(Debug, Clone)]
struct Request {
    method: String,
    path: String,
    /// Lower-cased names.
    headers: Vec<(String, String)>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the lying registry sends for a body.
enum Body {
    Bytes(Vec<u8>),
    /// `declared` in Content-Length, then `sent` bytes of `fill`, then the connection
    /// is closed (or kept hanging when `sent` is `u64::MAX`: an endless body).
    Claim {
        declared: Option<u64>,
        sent: u64,
        fill: u8,
    },
    /// These bytes, one every `every`.
    Trickle(Vec<u8>, Duration),
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
}

impl Response {
    fn json(status: u16, body: &[u8], media_type: &str) -> Response {
        Response {
            status,
            headers: vec![
                ("Content-Type".into(), media_type.into()),
                ("Docker-Content-Digest".into(), sha256(body)),
            ],
            body: Body::Bytes(body.to_vec()),
        }
    }

    fn bytes(body: &[u8]) -> Response {
        Response {
            status: 200,
            headers: vec![("Content-Type".into(), "application/octet-stream".into())],
            body: Body::Bytes(body.to_vec()),
        }
    }

    fn status(status: u16) -> Response {
        Response {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: Body::Bytes(b"{\"errors\":[]}".to_vec()),
        }
    }

    fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A lying server on 127.0.0.1; it lives as long as the test process (its threads end
/// when their connections do).
struct Lying {
    port: u16,
    seen: Arc<Mutex<Vec<Request>>>,
    handler: Arc<Mutex<Arc<Handler>>>,
}

impl Lying {
    fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Lying {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Mutex<Arc<Handler>>> = Arc::new(Mutex::new(Arc::new(handler)));
        let (log, current) = (seen.clone(), handler.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (current, log) = (current.clone(), log.clone());
                std::thread::spawn(move || serve(stream, &current, &log));
            }
        });
        Lying {
            port,
            seen,
            handler,
        }
    }

    /// From now on, answer with `handler`.
    fn set(&self, handler: impl Fn(&Request) -> Response + Send + Sync + 'static) {
        *self.handler.lock().unwrap() = Arc::new(handler);
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, current: &Mutex<Arc<Handler>>, log: &Mutex<Vec<Request>>) {
    loop {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        let text = String::from_utf8_lossy(&head).into_owned();
        let mut lines = text.split("\r\n");
        let mut first = lines.next().unwrap_or("").split(' ');
        let method = first.next().unwrap_or("").to_string();
        let path = first.next().unwrap_or("").to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let request = Request {
            method,
            path,
            headers,
        };
        // A request body (none of ours has one) would be read here.
        if let Some(len) = request
            .header("content-length")
            .and_then(|v| v.parse::<usize>().ok())
        {
            let mut body = vec![0; len];
            if stream.read_exact(&mut body).is_err() {
                return;
            }
        }
        log.lock().unwrap().push(request.clone());
        let handler = current.lock().unwrap().clone();
        let response = handler(&request);
        let mut out = format!("HTTP/1.1 {} Lies\r\n", response.status);
        for (name, value) in &response.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        match &response.body {
            Body::Bytes(bytes) => out.push_str(&format!("Content-Length: {}\r\n", bytes.len())),
            Body::Claim {
                declared: Some(n), ..
            } => out.push_str(&format!("Content-Length: {n}\r\n")),
            Body::Claim { declared: None, .. } => out.push_str("Connection: close\r\n"),
            Body::Trickle(bytes, _) => {
                out.push_str(&format!("Content-Length: {}\r\n", bytes.len()))
            }
        }
        out.push_str("\r\n");
        if stream.write_all(out.as_bytes()).is_err() {
            return;
        }
        match response.body {
            Body::Bytes(bytes) => {
                if stream.write_all(&bytes).is_err() {
                    return;
                }
            }
            Body::Claim { sent, fill, .. } => {
                let chunk = vec![fill; 64 * 1024];
                let mut left = sent;
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    if stream.write_all(&chunk[..n]).is_err() {
                        return;
                    }
                    if sent != u64::MAX {
                        left -= n as u64;
                    }
                }
                return;
            }
            Body::Trickle(bytes, every) => {
                for b in bytes {
                    std::thread::sleep(every);
                    if stream.write_all(&[b]).is_err() {
                        return;
                    }
                }
            }
        }
    }
}

fn sha256(bytes: &[u8]) -> String {
    skillbundle::registry::sha256(bytes)
}

/// A bundle of example-skills named `name` at `version`, signed by the fixture's key:
/// what a vendor's key could have signed, whatever the builder would say about it.
fn signed_bundle(name: &str, version: &str) -> Vec<u8> {
    signed_example_bundle(name, version, std::slice::from_ref(&fixture().key))
}

/// The manifest `push` writes for `bytes`.
fn manifest_for(bytes: &[u8], name: &str, version: &str) -> Vec<u8> {
    skillbundle::registry::manifest_for(
        bytes,
        &skillbundle::registry::BundleInfo {
            name: name.into(),
            version: version.into(),
            skills: 3,
        },
    )
}

/// A registry that serves `bundle` under every tag, honestly.
fn serving(bundle: Vec<u8>, name: &str, version: &str) -> Lying {
    let manifest = manifest_for(&bundle, name, version);
    let layer = sha256(&bundle);
    Lying::start(move |r| {
        if r.path.contains("/manifests/") {
            Response::json(200, &manifest, skillbundle::registry::MANIFEST_MEDIA_TYPE)
        } else if r.path.ends_with(&layer) {
            Response::bytes(&bundle)
        } else if r.path == "/v2/" {
            Response::json(200, b"{}", "application/json")
        } else {
            Response::status(404)
        }
    })
}

/// A workspace with the fixture's public key at `trust.jwk.json`.
fn agent_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("trust.jwk.json"),
        fixture().key.public_key().to_jwk_json(),
    );
    dir
}

fn pull(dir: &Path, reference: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "pull",
        reference,
        "--trust",
        "trust.jwk.json",
        "--out",
        "out/bundles",
        "--plain-http",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    run(&args, dir)
}

/// Every file under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

// --- Names are the builder's names ------------------------------------------------------

/// Names and versions the builder refuses, each signed by a trusted key: refused on
/// load (`bundle_invalid`, pointing at the member), and `pull` writes nothing anywhere.
#[test]
fn a_bundle_signed_over_a_name_the_builder_refuses_is_not_loaded_or_written() {
    let trust = fixture().trust();
    let cases = [
        ("../../x", "1.0.0", "/bundle/name"),
        ("..", "1.0.0", "/bundle/name"),
        ("a/b", "1.0.0", "/bundle/name"),
        (".hidden", "1.0.0", "/bundle/name"),
        ("", "1.0.0", "/bundle/name"),
        ("net", "../../../x", "/bundle/version"),
        ("net", "1.0.0/..", "/bundle/version"),
        ("net", "1.0\u{0}", "/bundle/version"),
        ("net", "-1", "/bundle/version"),
    ];
    let long = "n".repeat(129);
    let cases = cases
        .into_iter()
        .chain([(long.as_str(), "1.0.0", "/bundle/name")]);
    for (name, version, pointer) in cases {
        let bytes = signed_bundle(name, version);
        let findings = Bundle::open(&bytes, &trust).err().unwrap();
        assert_eq!(findings.len(), 1, "{name:?} {version:?}: {findings:?}");
        assert_eq!(findings[0].code.as_str(), "bundle_invalid");
        assert_eq!(
            findings[0].location.pointer.as_deref(),
            Some(pointer),
            "{name:?}"
        );
        assert!(!findings[0].message.contains("../"), "nothing is echoed");

        let registry = serving(bytes, "net", "1.0.0");
        let dir = agent_dir();
        let reference = format!("oci://{}/skills/net:stable", registry.host());
        let pulled = pull(dir.path(), &reference, &[]);
        assert_eq!(
            pulled.status, 1,
            "{name:?}: {}{}",
            pulled.stdout, pulled.stderr
        );
        pulled.finding("bundle_invalid");
        assert_eq!(tree(dir.path()), ["trust.jwk.json"], "{name:?} {version:?}");
    }
    // The builder's own names still load and are written under --out.
    let good = signed_bundle("net.skills_v2-x", "1.0.0-rc.1");
    Bundle::open(&good, &trust).unwrap();
    let registry = serving(good, "net.skills_v2-x", "1.0.0-rc.1");
    let dir = agent_dir();
    let pulled = pull(
        dir.path(),
        &format!("oci://{}/skills/net:stable", registry.host()),
        &[],
    );
    assert_eq!(pulled.status, 0, "{}{}", pulled.stdout, pulled.stderr);
    assert_eq!(
        tree(dir.path()),
        [
            "out/bundles/net.skills_v2-x-1.0.0-rc.1.tar.gz",
            "trust.jwk.json"
        ]
    );
}

// --- Anti-rollback keyed by what the agent follows -------------------------------------

/// A registry whose every tag names what the test last put there.
struct Switchable {
    lying: Lying,
    now: Arc<Mutex<(Vec<u8>, Vec<u8>)>>,
}

impl Switchable {
    fn start() -> Switchable {
        let now: Arc<Mutex<(Vec<u8>, Vec<u8>)>> = Arc::default();
        let served = now.clone();
        let lying = Lying::start(move |r| {
            let (manifest, bundle) = served.lock().unwrap().clone();
            if r.path.contains("/manifests/") {
                Response::json(200, &manifest, skillbundle::registry::MANIFEST_MEDIA_TYPE)
            } else if r.path.ends_with(&sha256(&bundle)) {
                Response::bytes(&bundle)
            } else {
                Response::status(404)
            }
        });
        Switchable { lying, now }
    }

    fn serve(&self, bundle: &[u8], name: &str, version: &str) {
        *self.now.lock().unwrap() = (manifest_for(bundle, name, version), bundle.to_vec());
    }

    fn reference(&self) -> String {
        format!("oci://{}/skills/net:stable", self.lying.host())
    }
}

/// The same name and version signed by one more key: a valid bundle with other bytes.
fn resigned(name: &str, version: &str) -> Vec<u8> {
    let other = skillbundle::crypto::keys::SigningKeyPair::from_seed(&[9; 32]);
    signed_example_bundle(name, version, &[fixture().key.clone(), other])
}

fn plain() -> fetch::FetchOptions {
    registry::Options {
        plain_http: true,
        credentials: Some(Credentials::Anonymous),
        ..registry::Options::default()
    }
    .into()
}

/// The codes of the findings that made an agent fall back to its last good bundle.
fn refused_codes(fetched: &fetch::Fetched) -> Vec<&'static str> {
    match &fetched.source {
        Source::LastGood { refused, .. } => refused.iter().map(|f| f.code.as_str()).collect(),
        Source::Registry { .. } => Vec::new(),
    }
}

#[test]
fn a_source_moves_only_forward_on_the_bundle_it_delivered() {
    let trust = fixture().trust();
    let registry = Switchable::start();
    let state = tempfile::tempdir().unwrap();
    let fetch = |options: &fetch::FetchOptions| {
        fetch::fetch(&registry.reference(), &trust, state.path(), options).unwrap()
    };
    let v2 = signed_bundle("net", "0.2.0");
    registry.serve(&v2, "net", "0.2.0");
    let first = fetch(&plain());
    assert_eq!(
        (first.bundle.name(), first.bundle.version()),
        ("net", "0.2.0")
    );
    assert!(refused_codes(&first).is_empty());

    // Each is signed by the trusted key and valid; each is refused, and the agent runs
    // on the kept net 0.2.0.
    let cases = [
        (
            "rename: a beta channel",
            signed_bundle("net-beta", "9.0.0"),
            "net-beta",
            "9.0.0",
        ),
        (
            "rename: another product",
            signed_bundle("storage", "0.2.0"),
            "storage",
            "0.2.0",
        ),
        ("downgrade", signed_bundle("net", "0.1.0"), "net", "0.1.0"),
        (
            "downgrade: a pre-release",
            signed_bundle("net", "0.2.0-rc.1"),
            "net",
            "0.2.0-rc.1",
        ),
        (
            "same version, other content",
            resigned("net", "0.2.0"),
            "net",
            "0.2.0",
        ),
    ];
    for (case, bytes, name, version) in &cases {
        registry.serve(bytes, name, version);
        let kept = fetch(&plain());
        assert_eq!(
            (kept.bundle.name(), kept.bundle.version()),
            ("net", "0.2.0"),
            "{case}"
        );
        assert_eq!(refused_codes(&kept), ["rollback_refused"], "{case}");
        // `pull --state` refuses it the same way and writes nothing.
        let dir = agent_dir();
        let state_arg = state.path().to_str().unwrap();
        let pulled = pull(dir.path(), &registry.reference(), &["--state", state_arg]);
        assert_eq!(pulled.status, 1, "{case}: {}", pulled.stdout);
        pulled.finding("rollback_refused");
        assert_eq!(tree(dir.path()), ["trust.jwk.json"], "{case}");
    }
    let recorded: Value =
        serde_json::from_slice(&std::fs::read(state.path().join("state.json")).unwrap()).unwrap();
    let source = format!("{}/skills/net", registry.lying.host());
    assert_eq!(recorded["sources"][&source]["name"], "net");
    assert_eq!(recorded["sources"][&source]["version"], "0.2.0");
    assert_eq!(recorded["highest"]["net"]["version"], "0.2.0");

    // A higher version of the same bundle moves the source forward.
    let v3 = signed_bundle("net", "0.3.0");
    registry.serve(&v3, "net", "0.3.0");
    let next = fetch(&plain());
    assert_eq!(next.bundle.version(), "0.3.0");
    assert!(matches!(&next.source, Source::Registry { previous: Some(p), .. } if p == "0.2.0"));

    // The operator's explicit word: the rename is accepted and recorded.
    let (_, bytes, name, version) = &cases[0];
    registry.serve(bytes, name, version);
    let allowed = fetch(&fetch::FetchOptions {
        allow_rollback: true,
        ..plain()
    });
    assert_eq!(allowed.bundle.name(), "net-beta");
    assert!(refused_codes(&allowed).is_empty());
    let recorded: Value =
        serde_json::from_slice(&std::fs::read(state.path().join("state.json")).unwrap()).unwrap();
    assert_eq!(recorded["sources"][&source]["name"], "net-beta");
    // And from the command line.
    let (_, bytes, name, version) = &cases[2];
    registry.serve(bytes, name, version);
    let dir = agent_dir();
    let state_arg = state.path().to_str().unwrap();
    let pulled = pull(
        dir.path(),
        &registry.reference(),
        &["--state", state_arg, "--allow-rollback"],
    );
    assert_eq!(pulled.status, 0, "{}{}", pulled.stdout, pulled.stderr);
    assert_eq!(
        tree(dir.path()),
        ["out/bundles/net-0.1.0.tar.gz", "trust.jwk.json"]
    );
}

// --- Bounded and timed ------------------------------------------------------------------

/// A hang guard, not a speed target: "refused, not hung".
const HANG_GUARD: Duration = Duration::from_secs(60);

fn options_with(timeouts: registry::Timeouts) -> registry::Options {
    registry::Options {
        plain_http: true,
        credentials: Some(Credentials::Anonymous),
        timeouts,
    }
}

/// Pull `reference` through the library as `verify oci://` and `pull` do: the first
/// finding's code, and how long it took.
fn pull_code(reference: &str, options: &registry::Options) -> (&'static str, String, Duration) {
    let started = std::time::Instant::now();
    let parsed = registry::ArtifactRef::parse(reference).unwrap();
    let limit = bundle::archive::ReadLimits::default().max_total_bytes;
    let result = registry::block_on(registry::pull(&parsed, options, limit)).unwrap();
    let finding = result.expect_err("the pull is refused");
    (finding.code.as_str(), finding.message, started.elapsed())
}

fn manifest_route(r: &Request) -> bool {
    r.path.contains("/manifests/")
}

#[test]
fn every_body_is_read_against_its_cap_before_it_is_buffered() {
    let good = signed_bundle("net", "0.2.0");
    let manifest = manifest_for(&good, "net", "0.2.0");
    let reference = |l: &Lying| format!("oci://{}/skills/net:0.2.0", l.host());
    let options = options_with(registry::Timeouts::default());
    let endless = |declared| Body::Claim {
        declared,
        sent: u64::MAX,
        fill: b' ',
    };

    // The manifest: a 2 GiB Content-Length (refused before a byte is read), and an
    // endless body with no length at all (cut off at the 4 MiB cap).
    for (case, declared) in [
        ("2 GiB Content-Length", Some(2u64 << 30)),
        ("endless", None),
    ] {
        let lying = Lying::start(move |r| {
            if manifest_route(r) {
                Response {
                    status: 200,
                    headers: vec![("Content-Type".into(), registry::MANIFEST_MEDIA_TYPE.into())],
                    body: endless(declared),
                }
            } else {
                Response::status(404)
            }
        });
        let (code, message, took) = pull_code(&reference(&lying), &options);
        assert_eq!(code, "resource_limit_exceeded", "{case}: {message}");
        assert!(message.contains("manifest"), "{case}: {message}");
        assert!(took < HANG_GUARD, "{case}");
    }

    // The token realm's answer: the same two lies.
    for (case, declared) in [("huge token", Some(1u64 << 30)), ("endless token", None)] {
        let lying = Lying::start(move |r| {
            if r.path.starts_with("/token") {
                Response {
                    status: 200,
                    headers: vec![("Content-Type".into(), "application/json".into())],
                    body: endless(declared),
                }
            } else {
                let realm = format!(
                    "Bearer realm=\"http://{}/token\",service=\"lying\"",
                    r.header("host").unwrap_or("")
                );
                Response::status(401).with_header("WWW-Authenticate", &realm)
            }
        });
        let (code, message, _) = pull_code(&reference(&lying), &options);
        assert_eq!(code, "resource_limit_exceeded", "{case}: {message}");
        assert!(message.contains("token"), "{case}: {message}");
    }

    // An error body that never ends: read to its cap, then the status speaks.
    let lying = Lying::start(move |_| Response {
        status: 404,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: endless(None),
    });
    let (code, _, _) = pull_code(&reference(&lying), &options);
    assert_eq!(code, "artifact_not_found");

    // The layer: its manifest is honest about the layer's size, the blob is not what it
    // declares. Every case is a digest_mismatch, and none is held in memory (the peak
    // RSS of a refused 1 GiB layer is measured in bench/registry).
    let layer = sha256(&good);
    let size = good.len() as u64;
    let blob_cases: Vec<(&str, Body)> = vec![
        (
            "a longer Content-Length than declared",
            Body::Claim {
                declared: Some(size + 1),
                sent: size + 1,
                fill: 0,
            },
        ),
        (
            "no length, more bytes than declared",
            Body::Claim {
                declared: None,
                sent: u64::MAX,
                fill: 0,
            },
        ),
        (
            "the declared size of other bytes",
            Body::Claim {
                declared: Some(size),
                sent: size,
                fill: 0,
            },
        ),
        (
            "a short body",
            Body::Claim {
                declared: None,
                sent: size - 1,
                fill: 0,
            },
        ),
    ];
    for (case, body) in blob_cases {
        let body = Arc::new(Mutex::new(Some(body)));
        let (manifest, layer) = (manifest.clone(), layer.clone());
        let lying = Lying::start(move |r| {
            if manifest_route(r) {
                Response::json(200, &manifest, registry::MANIFEST_MEDIA_TYPE)
            } else if r.path.ends_with(&layer) {
                Response {
                    status: 200,
                    headers: vec![],
                    body: body
                        .lock()
                        .unwrap()
                        .take()
                        .unwrap_or(Body::Bytes(Vec::new())),
                }
            } else {
                Response::status(404)
            }
        });
        let (code, message, _) = pull_code(&reference(&lying), &options);
        assert_eq!(code, "digest_mismatch", "{case}: {message}");
    }

    // A manifest that declares a layer above the bundle size limit: refused before the
    // blob is asked for.
    let mut huge: Value = serde_json::from_slice(&manifest).unwrap();
    huge["layers"][0]["size"] = json!((1u64 << 30) + 1);
    let huge = serde_json::to_vec(&huge).unwrap();
    let lying = Lying::start(move |r| {
        if manifest_route(r) {
            Response::json(200, &huge, registry::MANIFEST_MEDIA_TYPE)
        } else {
            Response::bytes(&[0; 16])
        }
    });
    let (code, _, _) = pull_code(&reference(&lying), &options);
    assert_eq!(code, "resource_limit_exceeded");
    assert!(lying.seen().iter().all(|r| !r.path.contains("/blobs/")));
    assert!(
        lying.seen().iter().all(|r| r.method == "GET"),
        "a pull only reads"
    );
}

#[test]
fn a_registry_that_trickles_or_stalls_is_cut_off_and_the_agent_keeps_its_last_good_bundle() {
    let trust = fixture().trust();
    let good = signed_bundle("net", "0.2.0");
    let manifest = manifest_for(&good, "net", "0.2.0");
    let layer = sha256(&good);
    let honest = {
        let (manifest, good, layer) = (manifest.clone(), good.clone(), layer.clone());
        move |r: &Request| {
            if manifest_route(r) {
                Response::json(200, &manifest, registry::MANIFEST_MEDIA_TYPE)
            } else if r.path.ends_with(&layer) {
                Response::bytes(&good)
            } else {
                Response::status(404)
            }
        }
    };
    let lying = Lying::start(honest);
    let reference = format!("oci://{}/skills/net:stable", lying.host());
    let state = tempfile::tempdir().unwrap();
    let short = registry::Timeouts {
        connect: Duration::from_secs(2),
        read: Duration::from_secs(5),
        total: Duration::from_secs(3),
    };
    let options = fetch::FetchOptions::from(options_with(short));
    let first = fetch::fetch(&reference, &trust, state.path(), &options).unwrap();
    assert!(refused_codes(&first).is_empty());

    // A byte every 2 s: each read is in time, the whole never is. The manifest, then
    // the layer.
    let trickles = [("manifest", true), ("layer", false)];
    for (case, in_manifest) in trickles {
        let (manifest, good, layer) = (manifest.clone(), good.clone(), layer.clone());
        lying.set(move |r| {
            let trickle = |bytes: &[u8]| Response {
                status: 200,
                headers: vec![
                    ("Content-Type".into(), registry::MANIFEST_MEDIA_TYPE.into()),
                    ("Docker-Content-Digest".into(), sha256(bytes)),
                ],
                body: Body::Trickle(bytes.to_vec(), Duration::from_secs(2)),
            };
            if manifest_route(r) {
                if in_manifest {
                    trickle(&manifest)
                } else {
                    Response::json(200, &manifest, registry::MANIFEST_MEDIA_TYPE)
                }
            } else if r.path.ends_with(&layer) {
                trickle(&good)
            } else {
                Response::status(404)
            }
        });
        let started = std::time::Instant::now();
        let kept = fetch::fetch(&reference, &trust, state.path(), &options).unwrap();
        assert!(started.elapsed() < HANG_GUARD, "{case}");
        assert_eq!(kept.bundle.version(), "0.2.0", "{case}");
        let Source::LastGood { refused, .. } = &kept.source else {
            panic!("{case}: expected the last good bundle");
        };
        assert_eq!(refused[0].code.as_str(), "registry_error", "{case}");
        assert!(
            refused[0].message.contains("deadline"),
            "{case}: {}",
            refused[0].message
        );
    }

    // Silence: the per-read timeout fires before the overall deadline.
    lying.set(|_| Response {
        status: 200,
        headers: vec![],
        body: Body::Trickle(b"{}".to_vec(), Duration::from_secs(600)),
    });
    let silent = registry::Timeouts {
        read: Duration::from_secs(1),
        total: Duration::from_secs(30),
        ..short
    };
    let (code, message, took) = pull_code(&reference, &options_with(silent));
    assert_eq!(code, "registry_error", "{message}");
    assert!(
        took < Duration::from_secs(25),
        "the read timeout, not the deadline: {took:?}"
    );

    // And on the command line: --timeout, with the state's last good bundle kept.
    let dir = agent_dir();
    let state_arg = state.path().to_str().unwrap();
    let pulled = pull(
        dir.path(),
        &reference,
        &[
            "--state",
            state_arg,
            "--timeout",
            "2s",
            "--read-timeout",
            "1s",
        ],
    );
    assert_eq!(pulled.status, 2, "{}", pulled.stdout);
    pulled.finding("registry_error");
    assert_eq!(tree(dir.path()), ["trust.jwk.json"]);
}

// --- Credentials only where they belong -------------------------------------------------

#[test]
fn basic_credentials_go_to_the_registry_or_an_https_realm_only() {
    let secret = Credentials::Basic {
        username: "ci".into(),
        password: "s3cret-pass".into(),
    };
    let with_secret = registry::Options {
        plain_http: true,
        credentials: Some(secret),
        ..registry::Options::default()
    };
    let good = signed_bundle("net", "0.2.0");
    let manifest = manifest_for(&good, "net", "0.2.0");
    let layer = sha256(&good);

    // A token realm on another origin over plain HTTP: nothing is sent there.
    let realm = Lying::start(|_| Response::json(200, b"{\"token\":\"t\"}", "application/json"));
    let realm_url = format!("http://localhost:{}/token", realm.port);
    let lying = Lying::start(move |_| {
        Response::status(401).with_header(
            "WWW-Authenticate",
            &format!("Bearer realm=\"{realm_url}\",service=\"lying\""),
        )
    });
    let reference = format!("oci://{}/skills/net:0.2.0", lying.host());
    let (code, message, _) = pull_code(&reference, &with_secret);
    assert_eq!(code, "registry_unauthorized");
    assert!(
        message.contains(&format!("http://localhost:{}", realm.port)),
        "the realm's origin is named: {message}"
    );
    assert!(!message.contains("s3cret") && !message.contains("ci:"));
    assert!(realm.seen().is_empty(), "the foreign realm heard nothing");
    assert!(lying
        .seen()
        .iter()
        .all(|r| r.header("authorization").is_none()));

    // Anonymous, the same realm may be asked for an anonymous token.
    let (code, _, _) = pull_code(
        &reference,
        &registry::Options {
            credentials: Some(Credentials::Anonymous),
            ..with_secret.clone()
        },
    );
    assert_ne!(code, "resource_limit_exceeded");
    assert!(realm
        .seen()
        .iter()
        .all(|r| r.header("authorization").is_none()));

    // A realm on the registry's own origin gets them, and the token is used.
    use base64::Engine as _;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("ci:s3cret-pass")
    );
    let lying = Lying::start(move |r| {
        let host = r.header("host").unwrap_or("").to_string();
        if r.path.starts_with("/token") {
            return if r.header("authorization") == Some(basic.as_str()) {
                Response::json(200, b"{\"token\":\"granted\"}", "application/json")
            } else {
                Response::status(401)
            };
        }
        if r.header("authorization") != Some("Bearer granted") {
            return Response::status(401).with_header(
                "WWW-Authenticate",
                &format!("Bearer realm=\"http://{host}/token\",service=\"lying\""),
            );
        }
        if manifest_route(r) {
            Response::json(200, &manifest, registry::MANIFEST_MEDIA_TYPE)
        } else if r.path.ends_with(&layer) {
            Response::bytes(&good)
        } else {
            Response::status(404)
        }
    });
    let parsed =
        registry::ArtifactRef::parse(&format!("oci://{}/skills/net:0.2.0", lying.host())).unwrap();
    let limit = bundle::archive::ReadLimits::default().max_total_bytes;
    let pulled = registry::block_on(registry::pull(&parsed, &with_secret, limit))
        .unwrap()
        .unwrap();
    assert_eq!(
        sha256(&pulled.bytes),
        sha256(&signed_bundle("net", "0.2.0"))
    );

    // A reference with user information is refused before any request, and not echoed.
    let dir = agent_dir();
    let silent = Lying::start(|_| Response::status(500));
    let with_userinfo = format!("oci://ci:s3cret-pass@{}/skills/net:0.2.0", silent.host());
    let refused = pull(dir.path(), &with_userinfo, &[]);
    assert_eq!(refused.status, 2, "{}", refused.stdout);
    refused.finding("artifact_not_found");
    assert!(!refused.stdout.contains("s3cret") && !refused.stderr.contains("s3cret"));
    assert!(silent.seen().is_empty());
}

// --- Freeze and replay ------------------------------------------------------------------

const DAY: u64 = 86_400;

/// A statement for `bundle` (named `name` `version`), issued `age` seconds ago and valid
/// for `lifetime` seconds from then, by the fixture's key.
fn statement(bundle: &[u8], name: &str, version: &str, age: u64, lifetime: u64) -> Vec<u8> {
    let digest = sha256(bundle);
    let subject = release_statement::Subject {
        name,
        version,
        digest: &digest,
    };
    release_statement::issue(
        subject,
        release_statement::now() - age,
        Duration::from_secs(lifetime),
        std::slice::from_ref(&fixture().key),
    )
}

/// A registry serving `bundle` with `statement` in its manifest.
fn serving_with_release(lying: &Lying, bundle: &[u8], version: &str, statement: Option<Vec<u8>>) {
    let info = registry::BundleInfo {
        name: "net".into(),
        version: version.into(),
        skills: 3,
    };
    let manifest = registry::manifest_with_release(bundle, &info, statement.as_deref());
    let (bundle, layer) = (bundle.to_vec(), sha256(bundle));
    lying.set(move |r| {
        if manifest_route(r) {
            Response::json(200, &manifest, registry::MANIFEST_MEDIA_TYPE)
        } else if r.path.ends_with(&layer) {
            Response::bytes(&bundle)
        } else {
            Response::status(404)
        }
    });
}

#[test]
fn a_frozen_or_replaying_registry_is_refused_once_its_release_statement_is_stale() {
    let trust = fixture().trust();
    let v2 = signed_bundle("net", "0.2.0");
    let v1 = signed_bundle("net", "0.1.0");
    let lying = Lying::start(|_| Response::status(404));
    let reference = format!("oci://{}/skills/net:stable", lying.host());
    let state = tempfile::tempdir().unwrap();
    let week = fetch::FetchOptions {
        max_age: Some(Duration::from_secs(7 * DAY)),
        ..plain()
    };
    let none = plain();
    let fetch = |options: &fetch::FetchOptions| {
        fetch::fetch(&reference, &trust, state.path(), options).unwrap()
    };

    // Fresh: accepted.
    serving_with_release(
        &lying,
        &v2,
        "0.2.0",
        Some(statement(&v2, "net", "0.2.0", 3600, 30 * DAY)),
    );
    let fresh = fetch(&week);
    assert_eq!(fresh.bundle.version(), "0.2.0");
    assert!(refused_codes(&fresh).is_empty());

    // The freeze: the vendor has moved on, the mirror keeps serving 0.2.0 with the
    // statement it had. Still signed, still unexpired — but 8 days old: refused, and the
    // agent runs on what it has, knowing why.
    let cases: Vec<(&str, Option<Vec<u8>>, &fetch::FetchOptions, &str)> = vec![
        (
            "frozen 8 days",
            Some(statement(&v2, "net", "0.2.0", 8 * DAY, 30 * DAY)),
            &week,
            "release_expired",
        ),
        (
            "expired, no --max-age",
            Some(statement(&v2, "net", "0.2.0", 31 * DAY, 30 * DAY)),
            &none,
            "release_expired",
        ),
        (
            "issued in the future",
            Some(statement(&v2, "net", "0.2.0", 0, 30 * DAY)).map(|s| future(&v2, s)),
            &none,
            "release_expired",
        ),
        ("no statement, --max-age", None, &week, "release_expired"),
        (
            "another bundle's statement",
            Some(statement(&v1, "net", "0.1.0", 60, 30 * DAY)),
            &week,
            "digest_mismatch",
        ),
        (
            "a tampered statement",
            Some(tampered(statement(&v2, "net", "0.2.0", 60, 30 * DAY))),
            &week,
            "signature_invalid",
        ),
    ];
    for (case, statement, options, code) in cases {
        serving_with_release(&lying, &v2, "0.2.0", statement);
        let kept = fetch(options);
        assert_eq!(kept.bundle.version(), "0.2.0", "{case}");
        assert_eq!(refused_codes(&kept), [code], "{case}");
    }

    // Without --max-age and without a statement, as before.
    serving_with_release(&lying, &v2, "0.2.0", None);
    assert!(refused_codes(&fetch(&plain())).is_empty());

    // The command line: verify oci:// and pull refuse a replayed statement the same way.
    serving_with_release(
        &lying,
        &v2,
        "0.2.0",
        Some(statement(&v2, "net", "0.2.0", 8 * DAY, 30 * DAY)),
    );
    let dir = agent_dir();
    let verify = run(
        &[
            "verify",
            &reference,
            "--trust",
            "trust.jwk.json",
            "--plain-http",
            "--max-age",
            "7d",
            "--format",
            "json",
        ],
        dir.path(),
    );
    assert_eq!(verify.status, 1, "{}", verify.stdout);
    verify.finding("release_expired");
    let pulled = pull(dir.path(), &reference, &["--max-age", "7d"]);
    assert_eq!(pulled.status, 1, "{}", pulled.stdout);
    pulled.finding("release_expired");
    assert_eq!(tree(dir.path()), ["trust.jwk.json"]);
    let relaxed = pull(dir.path(), &reference, &["--max-age", "9d"]);
    assert_eq!(relaxed.status, 0, "{}{}", relaxed.stdout, relaxed.stderr);
}

/// `statement` re-issued an hour in the future (a signer whose clock runs ahead).
fn future(bundle: &[u8], _statement: Vec<u8>) -> Vec<u8> {
    let digest = sha256(bundle);
    release_statement::issue(
        release_statement::Subject {
            name: "net",
            version: "0.2.0",
            digest: &digest,
        },
        release_statement::now() + 3600,
        Duration::from_secs(30 * DAY),
        std::slice::from_ref(&fixture().key),
    )
}

/// `statement` with its payload's expiry pushed out, the signature left as it was.
fn tampered(statement: Vec<u8>) -> Vec<u8> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut signed: Value = serde_json::from_slice(&statement).unwrap();
    let payload = b64.decode(signed["payload"].as_str().unwrap()).unwrap();
    let mut payload: Value = serde_json::from_slice(&payload).unwrap();
    payload["expires_at"] = json!(payload["expires_at"].as_u64().unwrap() + 365 * DAY);
    signed["payload"] = json!(b64.encode(serde_json::to_vec(&payload).unwrap()));
    serde_json::to_vec(&signed).unwrap()
}
