//! What the gateway's parts share: its settings, the bundle it serves (swapped whole on
//! a reload, draft "Security Considerations" for the limits and "Versioning" for what a
//! reload may move to), the upstream once its card is read, the task index, the
//! metrics and the log sink.

use super::card;
use super::forward::ForwardPolicy;
use super::log::{Log, LogRecord};
use super::metrics::Metrics;
use super::tasks::{InFlight, TaskIndex};
use super::upstream::{self, Upstream, UpstreamLimits};
use crate::agent::body::BodyLimits;
use crate::agent::fetch::Source;
use crate::agent::task::Limits as TaskLimits;
use crate::agent::Bundle;
use crate::crypto::keys::TrustedKeys;
use crate::finding::{Code, Finding, Location};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

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
            max_body_bytes: BodyLimits::DEFAULT_MAX_BODY_BYTES,
            max_depth: BodyLimits::DEFAULT_MAX_DEPTH,
            max_values: BodyLimits::DEFAULT_MAX_VALUES,
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
    /// Which caller headers go to the upstream ([`super::forward`]).
    pub forward: ForwardPolicy,
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
            forward: ForwardPolicy::default(),
        }
    }
}

/// Where the bundle comes from, and how it is trusted.
#[derive(Debug, Clone)]
pub enum BundleSource {
    /// A bundle file, read again on every reload, with its release statement: `release`,
    /// else `NAME.release.json` beside it when there is one (checked, at most `max_age`
    /// old when given), the same on every reload.
    File {
        path: PathBuf,
        release: Option<PathBuf>,
        max_age: Option<Duration>,
    },
    /// `oci://…`: pulled and verified; with a state directory, with keep-last-good and
    /// anti-rollback across restarts ([`crate::agent::fetch`]).
    Registry {
        reference: String,
        options: crate::agent::fetch::FetchOptions,
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

/// CancelTask requests the gateway has under way upstream at once; beyond, a failed
/// Task's upstream cancel is skipped (and counted).
pub const MAX_CANCELS: usize = 64;

/// Everything the gateway's parts share.
pub struct Shared {
    pub settings: Settings,
    loaded: RwLock<Arc<Loaded>>,
    pub(super) upstream: RwLock<Option<Arc<Upstream>>>,
    index: Mutex<TaskIndex>,
    /// Upstream Tasks governed streams follow (cancelled upstream on shutdown).
    pub(super) in_flight: InFlight,
    /// CancelTask requests under way upstream at once, at most.
    pub(super) cancels: Arc<tokio::sync::Semaphore>,
    /// This, for the background work a request leaves (an upstream CancelTask).
    pub(super) me: Weak<Shared>,
    /// The bundle file came with a release statement at the start: every reload must.
    statement_at_start: bool,
    pub metrics: Metrics,
    log: Log,
    card: card::CardSettings,
    source: BundleSource,
    trust: TrustedKeys,
}

/// The gateway: the SDK's request handler, and what the HTTP routes read.
#[derive(Clone)]
pub struct Gateway {
    pub(super) inner: Arc<Shared>,
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

    pub(super) fn index(&self) -> std::sync::MutexGuard<'_, TaskIndex> {
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
    load(source, trust, Purpose::Start).await
}

/// Why the bundle is loaded: to start (a registry's last good bundle, kept in the state
/// directory, serves when the registry's cannot be had or is refused), or to reload (the
/// source's own bundle or nothing: the last good one is what is served already, and a
/// reload that did not get the source's bundle is refused, as it is from a file).
#[derive(Debug, Clone, Copy)]
enum Purpose {
    Start,
    /// With `require_statement`: the bundle file was served with a release statement.
    Reload {
        require_statement: bool,
    },
}

/// The release statement file of a bundle file: `release`, or the one beside `path`.
/// Whether a bundle file from `source` comes with a release statement now (`--release`
/// given, one beside it, or a maximum age asked for): a reload must then have one too.
fn has_statement(source: &BundleSource) -> bool {
    match source {
        BundleSource::File {
            path,
            release,
            max_age,
        } => {
            release.is_some()
                || max_age.is_some()
                || crate::bundle::release_statement::file_beside(path).is_file()
        }
        BundleSource::Registry { .. } => false,
    }
}

/// Load the bundle from `source` for `purpose`; a bundle file's release statement is
/// checked (as `verify` checks it), and required on a reload when the start had one.
async fn load(
    source: &BundleSource,
    trust: &TrustedKeys,
    purpose: Purpose,
) -> Result<(Bundle, String), Vec<Finding>> {
    use crate::bundle::release_statement;
    let require_statement = matches!(
        purpose,
        Purpose::Reload {
            require_statement: true
        }
    );
    match source {
        BundleSource::File {
            path,
            release,
            max_age,
        } => {
            let limit = crate::bundle::archive::ReadLimits::default().max_total_bytes;
            let bytes = crate::bundle::read_file(path, limit).map_err(|f| vec![f])?;
            let digest = release_statement::file_digest(&bytes);
            let bundle = Bundle::open(&bytes, trust).map_err(|mut findings| {
                for f in &mut findings {
                    f.location.file.get_or_insert_with(|| path.clone());
                }
                findings
            })?;
            let (at_path, statement) =
                release_statement::read_for(path, release.as_deref()).map_err(|f| vec![f])?;
            let at = Location::file(&at_path);
            if statement.is_none() && require_statement {
                return Err(vec![Finding::new(
                    Code::SignatureDowngrade,
                    "the bundle was served with a release statement; the reloaded one comes without one",
                    at,
                )]);
            }
            let subject = release_statement::Subject {
                name: bundle.name(),
                version: bundle.version(),
                digest: &digest,
            };
            let freshness = release_statement::Freshness::now(*max_age);
            release_statement::check(statement.as_deref(), subject, trust, freshness, &at)
                .map_err(|f| vec![f])?;
            Ok((bundle, digest))
        }
        BundleSource::Registry {
            reference,
            options,
            state: Some(dir),
        } => {
            let fetched = crate::agent::fetch::fetch_async(reference, trust, dir, options).await?;
            if let (Purpose::Reload { .. }, Source::LastGood { refused, .. }) =
                (purpose, fetched.source)
            {
                return Err(refused);
            }
            let limit = crate::bundle::archive::ReadLimits::default().max_total_bytes;
            let bytes = crate::bundle::read_file(&fetched.file, limit).map_err(|f| vec![f])?;
            Ok((
                fetched.bundle,
                crate::bundle::release_statement::file_digest(&bytes),
            ))
        }
        BundleSource::Registry {
            reference,
            options,
            state: None,
        } => {
            let parsed = crate::registry::ArtifactRef::parse(reference).map_err(|f| vec![f])?;
            let verified = crate::agent::fetch::pull_verified(&parsed, trust, options).await?;
            Ok((verified.bundle, verified.digest))
        }
    }
}

/// A signed bundle is never replaced by one that is not (loaded only because of
/// `--allow-unsigned`): the same trust as at the start.
fn same_signing(current: &Bundle, new: &Bundle) -> Result<(), Finding> {
    use crate::agent::SignatureStatus;
    let verified = |b: &Bundle| matches!(b.signature(), SignatureStatus::Verified { .. });
    if verified(current) && !verified(new) {
        return Err(Finding::new(
            Code::SignatureDowngrade,
            format!(
                "the reloaded bundle's version {} is not signed by a trusted key, and the one served is",
                new.version()
            ),
            Location::default(),
        ));
    }
    Ok(())
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
    match crate::agent::fetch::compare_versions(version, current.bundle.version()) {
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

/// Why the upstream's card did not give the gateway an upstream to forward to (the
/// words name no upstream text: the kind of failure, or the client's own message).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum NotReady {
    /// The HTTP client for the upstream could not be built.
    #[error("{}", .0.as_str())]
    Client(upstream::UpstreamError),
    /// The card could not be fetched or read.
    #[error("the upstream agent's card could not be read ({})", .0.as_str())]
    Card(upstream::UpstreamError),
    /// The card names no interface the gateway can use.
    #[error("{}", .0.message)]
    NoInterface(crate::client::final_task::Violation),
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
            inner: Arc::new_cyclic(|me| Shared {
                settings,
                loaded: RwLock::new(Arc::new(loaded)),
                upstream: RwLock::new(None),
                index: Mutex::new(TaskIndex::new(max_tasks)),
                in_flight: InFlight::default(),
                cancels: Arc::new(tokio::sync::Semaphore::new(MAX_CANCELS)),
                me: me.clone(),
                statement_at_start: has_statement(&source),
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
    pub async fn read_upstream(&self, card_url: &str) -> Result<(), NotReady> {
        let limits = self.settings.upstream;
        let client = upstream::http_client(&limits).map_err(NotReady::Client)?;
        let card = upstream::card(&client, card_url, &limits)
            .await
            .map_err(NotReady::Card)?;
        let endpoint =
            crate::client::transport::endpoint(&card, None).map_err(NotReady::NoInterface)?;
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
                    let why = why.to_string();
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
        let purpose = Purpose::Reload {
            require_statement: self.statement_at_start,
        };
        let outcome = match load(&self.source, &self.trust, purpose).await {
            Err(findings) => Err(findings),
            Ok((bundle, digest)) => {
                match admits(&current, bundle.name(), bundle.version(), &digest)
                    .and_then(|admitted| same_signing(&current.bundle, &bundle).map(|()| admitted))
                {
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
