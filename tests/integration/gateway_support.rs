//! What the gateway tests share (gateway_hostile, gateway_keeper): the example bundle,
//! requests and Artifacts, an upstream agent of a test's own on 127.0.0.1 (its card, and
//! its JSON-RPC handler at `/`), `skillbundle serve` started in-process in front of it,
//! and a JSON-RPC client.

use crate::common;

use axum::http::HeaderMap;
use serde_json::{json, Value};
use skillbundle::agent::{Bundle, TrustedKeys};
use skillbundle::gateway::{self, card::CardSettings, BundleSource, Gateway, Settings};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

pub(crate) const SKILL: &str = "evaluate_resource_condition";
pub(crate) const KIND: &str = "resource-observation";
pub(crate) const SECRET: &str = "s3cr3t-/etc/shadow";
pub(crate) const URI: &str = skillbundle::card::a2a::EXTENSION_URI;

/// The example workspace's bundle, built once.
pub(crate) fn bundle_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let ws = common::workspace();
        let built = common::run(&["build", "."], ws.path());
        assert_eq!(built.status, 0, "{}", built.stderr);
        let path = ws.path().join("dist/example-network-skills-0.1.0.tar.gz");
        let kept = std::env::temp_dir().join(format!("gateway-test-{}.tar.gz", std::process::id()));
        std::fs::copy(&path, &kept).unwrap();
        kept
    })
}

pub(crate) fn request_object() -> Value {
    let mut r: Value = serde_json::from_str(&common::read(
        &common::example_skills().join("requests/evaluate.json"),
    ))
    .unwrap();
    // The digest of the bundle actually built.
    let trust = TrustedKeys::new(vec![]).and_allow_unsigned();
    let b = Bundle::open_path(bundle_path(), &trust).unwrap();
    r["interface_digest"] = json!(b.document(SKILL).unwrap().digest.as_str());
    r
}

pub(crate) fn result(r: &str) -> Value {
    json!({"skill": SKILL, "result": {"result": r, "observed_value": 42, "unit": "percent", "supporting_record_refs": ["o-1"]}})
}

pub(crate) fn record() -> Value {
    json!({"record_id": "o-1", "resource_id": "r", "metric": "utilization", "value": 42, "unit": "percent", "observed_at": "2026-08-11T12:00:01Z"})
}

pub(crate) fn artifact(id: &str, name: &str, data: Value) -> Value {
    json!({"artifactId": id, "name": name, "parts": [{"data": data}]})
}

/// The gateway serving `bundle` in front of the upstream at `upstream_url`, ready: its
/// URL, what stops it, and the gateway.
pub(crate) async fn serve_in_front(
    upstream_url: &str,
    bundle: PathBuf,
    configure: impl FnOnce(&mut Settings),
) -> (String, tokio::sync::oneshot::Sender<()>, Gateway) {
    let trust = TrustedKeys::new(vec![]).and_allow_unsigned();
    let source = BundleSource::File {
        path: bundle,
        release: None,
        max_age: None,
    };
    serve_source(upstream_url, source, trust, configure).await
}

/// The gateway serving the bundle from `source`, trusting `trust`, in front of the
/// upstream at `upstream_url`, ready.
pub(crate) async fn serve_source(
    upstream_url: &str,
    source: BundleSource,
    trust: TrustedKeys,
    configure: impl FnOnce(&mut Settings),
) -> (String, tokio::sync::oneshot::Sender<()>, Gateway) {
    let mut settings = Settings::default();
    settings.upstream.timeout = Duration::from_secs(2);
    settings.upstream.max_body = 1 << 20;
    settings.upstream.max_events = 100;
    settings.shutdown_grace = Duration::from_millis(100);
    configure(&mut settings);
    let (bundle, digest) = gateway::load_bundle(&source, &trust).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let card = CardSettings {
        base: None,
        public_url: url.clone(),
        sign_keys: vec![],
    };
    let gw = Gateway::new(
        settings,
        source,
        trust,
        bundle,
        digest,
        card,
        Arc::new(|_| {}),
    )
    .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let card_url = format!("{upstream_url}/.well-known/agent-card.json");
    tokio::spawn(gateway::serve(
        gw.clone(),
        listener,
        card_url,
        None,
        async move {
            let _ = stopped.await;
        },
    ));
    let client = reqwest::Client::new();
    for _ in 0..200 {
        if let Ok(r) = client.get(format!("{url}/readyz")).send().await {
            if r.status() == 200 {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (url, stop, gw)
}

pub(crate) fn message(data: Value) -> Value {
    json!({"messageId": "m-1", "role": "ROLE_USER", "parts": [{"data": data}]})
}

pub(crate) async fn rpc(
    url: &str,
    method: &str,
    params: Value,
    activate: bool,
) -> (Value, HeaderMap) {
    let mut request = reqwest::Client::new()
        .post(format!("{url}/"))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body(json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string());
    if activate {
        request = request.header("A2A-Extensions", URI);
    }
    let response = request.send().await.unwrap();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    if text.starts_with("data:") || text.contains("\ndata:") || text.starts_with("id:") {
        let events: Vec<Value> = text
            .split("\n\n")
            .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data:")))
            .map(|d| serde_json::from_str(d.trim()).unwrap())
            .collect();
        return (Value::Array(events), headers);
    }
    (serde_json::from_str(&text).unwrap(), headers)
}

/// The gateway's Agent Card, as a client reads it.
pub(crate) async fn card_of(url: &str) -> Value {
    reqwest::get(format!("{url}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

pub(crate) fn state(task: &Value) -> &str {
    task.pointer("/status/state")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub(crate) fn error_code(task: &Value) -> &str {
    task.pointer("/status/message/parts/0/data/error/code")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// An upstream agent of the test's own, serving: its Agent Card (one JSON-RPC interface,
/// streaming) and `rpc` at `/`, whose state `make` builds from the agent's URL.
pub(crate) async fn serve_upstream<S: Send + Sync + 'static>(
    make: impl FnOnce(String) -> Arc<S>,
    rpc: axum::routing::MethodRouter<Arc<S>>,
) -> Arc<S> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let upstream = make(url.clone());
    let card = json!({
        "name": "upstream", "description": "an agent of the test's own: it knows nothing of skillbundle",
        "version": "1.0.0",
        "supportedInterfaces": [{"url": format!("{url}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}, "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"], "skills": []
    });
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || async move { axum::Json(card.clone()) }),
        )
        .route("/", rpc)
        .with_state(upstream.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    upstream
}

/// The gateway, in-process, in front of an upstream of the test's own; dropping it stops
/// the gateway.
pub(crate) struct Front<U> {
    pub(crate) url: String,
    pub(crate) upstream: Arc<U>,
    pub(crate) gateway: Gateway,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl<U> Front<U> {
    /// Stop the gateway now (SIGTERM's path: in-flight work gets `shutdown_grace`).
    pub(crate) fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// The gateway serving `bundle` in front of `upstream`, reached at `upstream_url`.
    pub(crate) async fn start(
        upstream: Arc<U>,
        upstream_url: &str,
        bundle: PathBuf,
        configure: impl FnOnce(&mut Settings),
    ) -> Front<U> {
        let (url, stop, gateway) = serve_in_front(upstream_url, bundle, configure).await;
        Front {
            url,
            upstream,
            gateway,
            stop: Some(stop),
        }
    }
}

impl<U> Drop for Front<U> {
    fn drop(&mut self) {
        self.stop();
    }
}
