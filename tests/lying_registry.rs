//! Pulling from a registry that lies: a small HTTP/1.1 server of the test's own on
//! 127.0.0.1, where every answer is what the test says — bundles signed over names the
//! builder refuses, renamed and downgraded bundles, endless or oversized bodies, a
//! declared layer that is not what it says, a server that trickles a byte at a time, a
//! token realm on another origin over plain HTTP. Each class is refused with its own
//! finding, nothing is written outside `--out`, and an agent keeps its last good bundle.
//! (The same classes against the real CNCF Distribution registry are in
//! `tests/registry.rs`.)
#![cfg(feature = "oci")]

mod common;

use common::crafted::{fixture, pack};
use common::*;
use serde_json::Value;
use skillbundle::bundle::{self, Bundle};
use skillbundle::credentials::Credentials;
use skillbundle::fetch::{self, Source};
use skillbundle::registry;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the lying registry saw it.
#[derive(Debug, Clone)]
#[allow(dead_code)] // read by the bounded-body and credential tests (next commit)
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
#[allow(dead_code)] // the bounded-body tests (next commit)
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

    #[allow(dead_code)] // the credential tests (next commit)
    fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A lying server on 127.0.0.1; it lives as long as the test process (its threads end
/// when their connections do).
#[allow(dead_code)] // `seen`: the credential tests (next commit)
struct Lying {
    port: u16,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Lying {
    fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Lying {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (handler, log) = (handler.clone(), log.clone());
                std::thread::spawn(move || serve(stream, &*handler, &log));
            }
        });
        Lying { port, seen }
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    #[allow(dead_code)] // the credential tests (next commit)
    fn seen(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, handler: &Handler, log: &Mutex<Vec<Request>>) {
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
    let checked = skillbundle::pipeline::check(&example_skills());
    let interfaces: Vec<_> = checked.skills.iter().map(|s| &s.interface).collect();
    let schema = skillbundle::interface_schema::InterfaceSchema::packaged().unwrap();
    let mut contents = bundle::contents(
        name,
        version,
        schema.digest(),
        &interfaces,
        &skillbundle::pipeline::card_fragment(&checked.skills),
    );
    bundle::sign::sign(&mut contents, std::slice::from_ref(&fixture().key));
    let files: BTreeMap<String, Vec<u8>> = contents
        .files
        .into_iter()
        .map(|(path, body)| (path, body.bytes().to_vec()))
        .collect();
    pack(&files, 0)
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
    let checked = skillbundle::pipeline::check(&example_skills());
    let interfaces: Vec<_> = checked.skills.iter().map(|s| &s.interface).collect();
    let schema = skillbundle::interface_schema::InterfaceSchema::packaged().unwrap();
    let mut contents = bundle::contents(
        name,
        version,
        schema.digest(),
        &interfaces,
        &skillbundle::pipeline::card_fragment(&checked.skills),
    );
    let other = skillbundle::keys::SigningKeyPair::from_seed(&[9; 32]);
    bundle::sign::sign(&mut contents, &[fixture().key.clone(), other]);
    let files: BTreeMap<String, Vec<u8>> = contents
        .files
        .into_iter()
        .map(|(path, body)| (path, body.bytes().to_vec()))
        .collect();
    pack(&files, 0)
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
