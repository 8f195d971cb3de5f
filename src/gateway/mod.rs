//! `skillbundle serve`: a validating A2A gateway, so that an agent written in any
//! language, with any A2A 1.0 SDK, enforces a bundle without embedding anything.
//!
//! The gateway is an A2A server (the A2A project's Rust SDK, `a2a-server-lf`, on axum:
//! JSON-RPC and HTTP+JSON, SSE streaming) in front of one upstream agent. It applies the
//! one rule set of the agent side ([`crate::agent`]: draft "Agent advertisement",
//! "describe_skill response", "Domain-skill invocation", "Skill output",
//! "Machine-readable error conditions", the intermediate-exchange table of the A2A
//! mapping, "Security Considerations" for the limits), exactly as the Python executor
//! does:
//!
//! - its Agent Card is the operator's base card merged with the bundle (skills, the
//!   extension, describe_skill) and the gateway's own interfaces ([`card`]);
//! - describe_skill is answered from the bundle; every skill request is checked
//!   (activation, `interface_mismatch`, `input_invalid`, limits) before anything reaches
//!   the upstream, and refused with the draft's error object ([`handler`]);
//! - whatever the upstream sends back about a governed Task is shown only as the
//!   library's `TaskGuard` allows ([`view`]), on every path: SendMessage, streaming,
//!   GetTask, ListTasks, CancelTask, SubscribeToTask;
//! - base A2A requests pass through unchanged, unless `require_extension`;
//! - every request body is read strictly and within limits before the SDK parses it,
//!   requests run within a concurrency limit, the upstream within a deadline and size
//!   caps ([`http`], [`upstream`]).
//!
//! The library prints nothing: what the gateway has to say goes to a [`Log`] sink as
//! [`LogRecord`]s (task ids, condition codes, never argument values), which the binary
//! writes as JSON lines.

pub mod card;
pub mod handler;
pub mod http;
pub mod metrics;
pub mod upstream;
pub mod view;

use crate::agent::task::Limits as TaskLimits;
use crate::bundle::{Bundle, TrustedKeys};
use crate::finding::{Code, Finding, Location};
use handler::TaskIndex;
use metrics::Metrics;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use upstream::{Upstream, UpstreamLimits};

/// Limits on what a caller may send, and how many at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLimits {
    /// The largest request body read, in bytes (1 MiB, as the Python request guard).
    pub max_body_bytes: usize,
    /// The deepest nesting of a request body's JSON text (64).
    pub max_depth: usize,
    /// The most JSON values in a request body (20,000).
    pub max_values: usize,
    /// A2A requests handled at once; beyond, 503 (256).
    pub max_concurrency: usize,
}

impl Default for RequestLimits {
    fn default() -> Self {
        RequestLimits {
            max_body_bytes: 1 << 20,
            max_depth: 64,
            max_values: 20_000,
            max_concurrency: 256,
        }
    }
}

/// How the gateway behaves.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Strict mode: the card says the extension is `required: true`, and a request that
    /// does not activate it is refused with A2A's `ExtensionSupportRequiredError`.
    pub require_extension: bool,
    pub requests: RequestLimits,
    pub task_limits: TaskLimits,
    pub upstream: UpstreamLimits,
    /// Tasks remembered (which skill a Task invokes, Tasks the gateway decided).
    pub max_tasks: usize,
    /// In-flight requests get this long to finish after SIGTERM.
    pub shutdown_grace: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            require_extension: false,
            requests: RequestLimits::default(),
            task_limits: TaskLimits::default(),
            upstream: UpstreamLimits::default(),
            max_tasks: 65_536,
            shutdown_grace: Duration::from_secs(30),
        }
    }
}

/// Where the bundle comes from, and how it is trusted.
#[derive(Debug, Clone)]
pub enum BundleSource {
    /// A bundle file, read again on every reload.
    File(PathBuf),
    /// `oci://…`: pulled and verified; with a state directory, with keep-last-good and
    /// anti-rollback across restarts ([`crate::fetch`]).
    Registry {
        reference: String,
        options: crate::fetch::FetchOptions,
        state: Option<PathBuf>,
    },
}

/// A bundle as the gateway serves it: the bundle, its file digest, and the gateway's
/// card built from it.
pub struct Loaded {
    pub bundle: Bundle,
    /// `sha256:<hex>` of the bundle file.
    pub digest: String,
    /// The gateway's Agent Card (merged, signed when asked).
    pub card: Value,
}

/// How serious a log record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// One structured log record: what happened, to which Task, with which code. Never an
/// argument value, a result, or anything else a caller or the upstream sent beyond ids.
#[derive(Debug, Clone, Serialize)]
pub struct LogRecord {
    pub level: Level,
    pub event: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl LogRecord {
    fn new(level: Level, event: &'static str) -> Self {
        LogRecord {
            level,
            event,
            task_id: None,
            skill_id: None,
            state: None,
            code: None,
            message: None,
        }
    }
    pub fn info(event: &'static str) -> Self {
        Self::new(Level::Info, event)
    }
    pub fn warn(event: &'static str) -> Self {
        Self::new(Level::Warn, event)
    }
    pub fn error(event: &'static str) -> Self {
        Self::new(Level::Error, event)
    }
    pub fn with_task(mut self, id: &str) -> Self {
        self.task_id = Some(id.to_string());
        self
    }
    pub fn with_skill(mut self, id: &str) -> Self {
        self.skill_id = Some(id.to_string());
        self
    }
    pub fn with_state(mut self, state: &a2a_types::TaskState) -> Self {
        self.state = serde_json::to_value(state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string));
        self
    }
    pub fn with_code(mut self, code: &str) -> Self {
        self.code = Some(code.to_string());
        self
    }
    /// A message of the gateway's own words (never a peer's).
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Where log records go.
pub type Log = Arc<dyn Fn(&LogRecord) + Send + Sync>;

/// Everything the gateway's parts share.
pub struct Shared {
    pub settings: Settings,
    loaded: RwLock<Arc<Loaded>>,
    upstream: RwLock<Option<Arc<Upstream>>>,
    index: Mutex<TaskIndex>,
    pub metrics: Metrics,
    log: Log,
    card: card::CardSettings,
    source: BundleSource,
    trust: TrustedKeys,
}

/// The gateway: the SDK's request handler, and what the HTTP routes read.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Shared>,
}

impl std::ops::Deref for Gateway {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.inner
    }
}

impl Shared {
    /// The bundle being served (a request keeps the one it started with).
    pub fn loaded(&self) -> Arc<Loaded> {
        self.loaded
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn index(&self) -> std::sync::MutexGuard<'_, TaskIndex> {
        self.index.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn log(&self, record: LogRecord) {
        (self.log)(&record);
    }

    /// Bundle loaded and upstream card read.
    pub fn is_ready(&self) -> bool {
        self.upstream
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }
}

/// Load the bundle from `source`: `(bundle, file digest)`.
pub async fn load_bundle(
    source: &BundleSource,
    trust: &TrustedKeys,
) -> Result<(Bundle, String), Vec<Finding>> {
    match source {
        BundleSource::File(path) => {
            let limit = crate::bundle::archive::ReadLimits::default().max_total_bytes;
            let bytes = crate::bundle::read_file(path, limit).map_err(|f| vec![f])?;
            let digest = crate::release::file_digest(&bytes);
            let bundle = Bundle::open(&bytes, trust).map_err(|mut findings| {
                for f in &mut findings {
                    f.location.file.get_or_insert_with(|| path.clone());
                }
                findings
            })?;
            Ok((bundle, digest))
        }
        BundleSource::Registry {
            reference,
            options,
            state: Some(dir),
        } => {
            let fetched = crate::fetch::fetch_async(reference, trust, dir, options).await?;
            let limit = crate::bundle::archive::ReadLimits::default().max_total_bytes;
            let bytes = crate::bundle::read_file(&fetched.file, limit).map_err(|f| vec![f])?;
            Ok((fetched.bundle, crate::release::file_digest(&bytes)))
        }
        BundleSource::Registry {
            reference,
            options,
            state: None,
        } => {
            let parsed = crate::registry::ArtifactRef::parse(reference).map_err(|f| vec![f])?;
            let verified = crate::fetch::pull_verified(&parsed, trust, options).await?;
            Ok((verified.bundle, verified.digest))
        }
    }
}

/// Whether a newly loaded bundle may replace the one served: the same bundle name, and a
/// higher version, or the same version with the same content (then nothing changes).
/// Anything else is a rollback, or another product, and is refused.
pub fn admits(current: &Loaded, name: &str, version: &str, digest: &str) -> Result<bool, Finding> {
    use std::cmp::Ordering;
    if name != current.bundle.name() {
        return Err(Finding::new(
            Code::RollbackRefused,
            format!(
                "the reloaded bundle is named {name}, not {}: a gateway keeps serving one bundle name",
                current.bundle.name()
            ),
            Location::default(),
        ));
    }
    match crate::fetch::compare_versions(version, current.bundle.version()) {
        Ordering::Greater => Ok(true),
        Ordering::Equal if digest == current.digest => Ok(false),
        Ordering::Equal => Err(Finding::new(
            Code::RollbackRefused,
            format!("the reloaded bundle has version {version} with other content than the one served: release versions are immutable"),
            Location::default(),
        )),
        Ordering::Less => Err(Finding::new(
            Code::RollbackRefused,
            format!(
                "the reloaded bundle's version {version} is below the served {}: a rollback is refused",
                current.bundle.version()
            ),
            Location::default(),
        )),
    }
}

impl Gateway {
    /// A gateway serving `bundle` (loaded from `source`, `digest` its file digest).
    pub fn new(
        settings: Settings,
        source: BundleSource,
        trust: TrustedKeys,
        bundle: Bundle,
        digest: String,
        card: card::CardSettings,
        log: Log,
    ) -> Result<Gateway, Finding> {
        let built = card.build(&bundle, settings.require_extension)?;
        let loaded = Loaded {
            bundle,
            digest,
            card: built,
        };
        let max_tasks = settings.max_tasks;
        Ok(Gateway {
            inner: Arc::new(Shared {
                settings,
                loaded: RwLock::new(Arc::new(loaded)),
                upstream: RwLock::new(None),
                index: Mutex::new(TaskIndex::new(max_tasks)),
                metrics: Metrics::default(),
                log,
                card,
                source,
                trust,
            }),
        })
    }

    /// Read the upstream's Agent Card at `card_url` and choose its interface; retried
    /// by [`Gateway::connect`] until it succeeds.
    pub async fn read_upstream(&self, card_url: &str) -> Result<(), String> {
        let limits = self.settings.upstream;
        let client = upstream::http_client(&limits).map_err(|e| e.as_str().to_string())?;
        let card = upstream::card(&client, card_url, &limits)
            .await
            .map_err(|e| {
                format!(
                    "the upstream agent's card could not be read ({})",
                    e.as_str()
                )
            })?;
        let endpoint = crate::transport::endpoint(&card, None).map_err(|v| v.message)?;
        let chosen = Upstream::new(client, endpoint, limits);
        *self.upstream.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(chosen));
        Ok(())
    }

    /// Read the upstream's card, retrying every second (logged once per distinct
    /// failure) until it is read.
    pub async fn connect(&self, card_url: String) {
        let mut last: Option<String> = None;
        loop {
            match self.read_upstream(&card_url).await {
                Ok(()) => {
                    self.log(LogRecord::info("upstream_ready"));
                    return;
                }
                Err(why) => {
                    if last.as_deref() != Some(why.as_str()) {
                        self.log(LogRecord::warn("upstream_not_ready").with_message(why.clone()));
                        last = Some(why);
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    /// Load the bundle again from its source and serve it if it is admitted
    /// ([`admits`]); otherwise keep serving the current one. In-flight requests finish
    /// with the bundle they started with.
    pub async fn reload(&self) {
        let current = self.loaded();
        let outcome = match load_bundle(&self.source, &self.trust).await {
            Err(findings) => Err(findings),
            Ok((bundle, digest)) => {
                match admits(&current, bundle.name(), bundle.version(), &digest) {
                    Err(f) => Err(vec![f]),
                    Ok(false) => Ok(None),
                    Ok(true) => match self.card.build(&bundle, self.settings.require_extension) {
                        Err(f) => Err(vec![f]),
                        Ok(card) => Ok(Some(Loaded {
                            bundle,
                            digest,
                            card,
                        })),
                    },
                }
            }
        };
        match outcome {
            Ok(None) => self.metrics.reload("unchanged"),
            Ok(Some(loaded)) => {
                let version = loaded.bundle.version().to_string();
                *self.loaded.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(loaded);
                self.metrics.reload("loaded");
                self.log(
                    LogRecord::info("bundle_reloaded")
                        .with_message(format!("now serving version {version}")),
                );
            }
            Err(findings) => {
                self.metrics.reload("refused");
                for f in findings {
                    self.log(
                        LogRecord::warn("bundle_reload_refused")
                            .with_code(f.code.as_str())
                            .with_message(f.message),
                    );
                }
            }
        }
    }
}

/// Serve `gateway` on `listener` until `shutdown` completes: the upstream's card is
/// read in the background (readiness), the bundle reloaded every `poll`; after
/// `shutdown`, no new connection is accepted and in-flight requests get
/// [`Settings::shutdown_grace`] to finish.
pub async fn serve(
    gateway: Gateway,
    listener: tokio::net::TcpListener,
    upstream_card_url: String,
    poll: Option<Duration>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let connecting = gateway.clone();
    let connector = tokio::spawn(async move { connecting.connect(upstream_card_url).await });
    let poller = poll.map(|every| {
        let polling = gateway.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                polling.reload().await;
            }
        })
    });
    let grace = gateway.settings.shutdown_grace;
    let (stopping, stopped) = tokio::sync::oneshot::channel::<()>();
    let logger = gateway.clone();
    let server = axum::serve(listener, http::router(gateway)).with_graceful_shutdown(async move {
        shutdown.await;
        logger.log(LogRecord::info("shutting_down"));
        let _ = stopping.send(());
    });
    let result = tokio::select! {
        served = server => served,
        _ = async {
            if stopped.await.is_ok() {
                tokio::time::sleep(grace).await;
            } else {
                std::future::pending::<()>().await;
            }
        } => Ok(()),
    };
    connector.abort();
    if let Some(p) = poller {
        p.abort();
    }
    result
}
