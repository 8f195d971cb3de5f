//! `skillbundle serve`: the validating A2A gateway in front of any A2A agent.
//!
//! Wiring only: flags become [`skillbundle::gateway::Settings`], the library's
//! [`Gateway`] does everything, and this file writes its log records as JSON lines on
//! stderr and turns SIGTERM/SIGINT into a graceful shutdown and SIGHUP into a reload.

use super::{duration, fail_with, TrustArgs};
use crate::render::Format;
use skillbundle::crypto::keys::SigningKeyPair;
use skillbundle::finding::{Code, Finding, Location};
use skillbundle::gateway::{
    self, card::CardSettings, upstream::UpstreamLimits, BundleSource, Gateway, LogRecord,
    RequestLimits, Settings,
};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

const AFTER_HELP: &str = "Examples:\n  skillbundle serve --bundle dist/net-0.2.0.tar.gz --trust keys/release.jwk.json --upstream http://127.0.0.1:9999\n  skillbundle serve --bundle oci://registry.example.com/skills/net:stable --trust k.jwk.json --state /var/lib/gateway \\\n      --upstream http://127.0.0.1:9999 --listen 0.0.0.0:8080 --public-url https://agent.example --poll 60s\n  skillbundle serve --bundle b.tar.gz --trust k.jwk.json --upstream http://127.0.0.1:9999 --card-base card.json --card-sign-key card.pem --require-extension\n\nAn A2A 1.0 server (JSON-RPC at /, HTTP+JSON beside it, SSE streaming) in front of the agent at\n--upstream, which needs no extension and knows nothing of the bundle. The gateway serves its\nown Agent Card at /.well-known/agent-card.json (the --card-base card, or one named after the\nbundle, with the gateway's interfaces, the bundle's skills, describe_skill and the extension;\nsigned with --card-sign-key; with an ETag, and Cache-Control max-age=60), answers\ndescribe_skill from the bundle, checks every skill request before the upstream sees it\n(interface_mismatch, input_invalid, limits: the draft's error object, exactly as the Python\nexecutor answers), and shows the upstream's Artifacts only when the result and every record\nconform (output_invalid otherwise, nothing invalid delivered), on every path: SendMessage,\nstreaming, GetTask, ListTasks, CancelTask, SubscribeToTask. Requests without a skill request\nobject pass through unchanged, unless --require-extension. Every A2A request must carry the\nheader A2A-Version: 1.0 (A2A reads none as 0.3); another major version gets\nVersionNotSupportedError.\n\nCaller headers: Authorization goes on to the upstream with every call a request leads to, and\nso does A2A-Extensions (less the schema-interface extension, which the gateway implements);\nname more with --forward-header. Hop-by-hop headers (Connection and those it names, TE,\nUpgrade, Proxy-*, ...) never go on, and no header value is ever logged.\n\nOperations: GET /healthz (alive), GET /readyz (200 once the upstream's card was read; until\nthen A2A requests get 503), GET /metrics (Prometheus). One JSON object per line on stderr:\nevents, task ids and condition codes, never argument values. SIGHUP (or every --poll) loads the\nbundle again and serves it if it is the same bundle name at a higher version (a lower version\nor other content for the same version is refused: the current bundle stays). A bundle file's\nrelease statement (--release, or NAME.release.json beside it) is checked at the start and on\nevery reload, with --max-age; once served with one, a reload without one is refused, and so is\nan unsigned bundle after a signed one. SIGTERM or Ctrl-C\nstops accepting, lets in-flight requests finish for --shutdown-grace, and exits 0.\n\nExit status 2 when the gateway cannot start (bundle refused, key unreadable, address in use).";

/// Serve a validating A2A gateway in front of an agent.
#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The bundle (.tar.gz), or oci://REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST) to pull it.
    #[arg(long, value_name = "BUNDLE|oci://REF")]
    pub bundle: PathBuf,
    #[command(flatten)]
    pub trust: TrustArgs,
    /// The upstream agent's base URL; its card is URL/.well-known/agent-card.json (or the
    /// URL itself when it ends in .json).
    #[arg(long, value_name = "URL")]
    pub upstream: String,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The URL callers reach the gateway at, for its card's interfaces [default:
    /// http://ADDR, the address listened on].
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// The base Agent Card (A2A 1.0 JSON) to merge the bundle into [default: one named
    /// after the bundle].
    #[arg(long, value_name = "FILE")]
    pub card_base: Option<PathBuf>,
    /// Sign the gateway's card with this Ed25519 key (PKCS#8 PEM). Repeatable.
    #[arg(long = "card-sign-key", value_name = "KEY", value_parser = super::signing_key)]
    pub card_sign_key: Vec<SigningKeyPair>,
    /// Strict mode: the card says the extension is required, and a request that does
    /// not activate it is refused with A2A's ExtensionSupportRequiredError (-32008).
    #[arg(long)]
    pub require_extension: bool,
    /// Load the bundle again this often (e.g. 60s); SIGHUP does it at once.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub poll: Option<Duration>,
    /// With --bundle oci://…: keep the last good bundle here and refuse rollbacks across
    /// restarts (as `pull --state`).
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// The largest request body accepted, in bytes.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = RequestLimits::default().max_body_bytes)]
    pub max_body_bytes: usize,
    /// The deepest nesting of a request body's JSON.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = RequestLimits::default().max_depth)]
    pub max_depth: usize,
    /// The most JSON values in a request body.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = RequestLimits::default().max_values)]
    pub max_values: usize,
    /// A2A requests handled at once; beyond, 503.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = RequestLimits::default().max_concurrency)]
    pub max_concurrency: usize,
    /// The deadline of one exchange with the upstream (a whole stream included).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration)]
    pub upstream_timeout: Duration,
    /// The largest upstream body, or stream event, accepted, in bytes.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = UpstreamLimits::default().max_body)]
    pub upstream_max_body: usize,
    /// Supporting records one Task may publish.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = skillbundle::agent::task::Limits::DEFAULT_MAX_RECORDS)]
    pub max_records: usize,
    /// Bytes of data one Artifact may hold.
    #[arg(long, value_name = "N", value_parser = positive, default_value_t = skillbundle::agent::task::Limits::DEFAULT_MAX_ARTIFACT_BYTES)]
    pub max_artifact_bytes: usize,
    /// How long in-flight requests may take to finish after SIGTERM.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub shutdown_grace: Duration,
    /// Pass this caller request header on to the upstream too (repeatable; e.g.
    /// X-Tenant). Authorization and A2A-Extensions always are; hop-by-hop headers never.
    #[arg(long = "forward-header", value_name = "NAME", value_parser = gateway::forward::header_name)]
    pub forward_header: Vec<reqwest::header::HeaderName>,
}

/// Write one log record as a JSON line on stderr, with a timestamp.
fn log_line(record: &LogRecord) {
    let mut line = serde_json::to_value(record).unwrap_or_default();
    if let Some(members) = line.as_object_mut() {
        members.insert(
            "ts".into(),
            chrono::Utc::now()
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                .into(),
        );
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// A positive whole number.
fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err("write a positive whole number".to_string()),
    }
}

fn settings(args: &Args) -> Settings {
    Settings {
        require_extension: args.require_extension,
        requests: RequestLimits {
            max_body_bytes: args.max_body_bytes,
            max_depth: args.max_depth,
            max_values: args.max_values,
            max_concurrency: args.max_concurrency,
        },
        task_limits: skillbundle::agent::task::Limits {
            max_records: args.max_records,
            max_artifact_bytes: args.max_artifact_bytes,
        },
        upstream: UpstreamLimits {
            timeout: args.upstream_timeout,
            max_body: args.upstream_max_body,
            ..UpstreamLimits::default()
        },
        shutdown_grace: args.shutdown_grace,
        forward: gateway::forward::ForwardPolicy::new(args.forward_header.clone()),
        ..Settings::default()
    }
}

fn source(args: &Args) -> BundleSource {
    let text = args.bundle.to_string_lossy();
    if skillbundle::registry::strip_scheme(&text).is_some() {
        BundleSource::Registry {
            reference: text.into_owned(),
            options: skillbundle::agent::fetch::FetchOptions {
                registry: args.trust.registry_options(),
                max_age: args.trust.max_age,
                ..Default::default()
            },
            state: args.state.clone(),
        }
    } else {
        BundleSource::File {
            path: args.bundle.clone(),
            release: args.trust.release.clone(),
            max_age: args.trust.max_age,
        }
    }
}

pub fn run(format: Format, args: Args) -> ExitCode {
    let not_started = "the gateway did not start";
    let settings = settings(&args);
    let base = match &args.card_base {
        None => None,
        Some(path) => match super::read_json(path) {
            Ok(v) => Some(v),
            Err(f) => return fail_with(format, &[f], not_started),
        },
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let f = Finding::new(
                Code::Io,
                format!("cannot start the runtime: {e}"),
                Location::default(),
            );
            return fail_with(format, &[f], not_started);
        }
    };
    let source = source(&args);
    let trust = args.trust.keys();
    let (bundle, digest) = match runtime.block_on(gateway::load_bundle(&source, &trust)) {
        Ok(loaded) => loaded,
        Err(findings) => return fail_with(format, &findings, not_started),
    };
    if let Some(warning) = super::unverified_warning(&bundle) {
        log_line(&LogRecord::warn("bundle_unverified").with_message(warning));
    }
    let listener = match runtime.block_on(tokio::net::TcpListener::bind(args.listen)) {
        Ok(l) => l,
        Err(e) => {
            let f = Finding::new(
                Code::Io,
                format!("cannot listen on {}: {e}", args.listen),
                Location::default(),
            );
            return fail_with(format, &[f], not_started);
        }
    };
    let bound = listener.local_addr().unwrap_or(args.listen);
    let card = CardSettings {
        base,
        public_url: args
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{bound}")),
        sign_keys: args.card_sign_key.clone(),
    };
    let log: gateway::Log = Arc::new(log_line);
    let gw = match Gateway::new(settings, source, trust, bundle, digest, card, log) {
        Ok(g) => g,
        Err(f) => return fail_with(format, &[f], not_started),
    };
    let card_url = skillbundle::client::transport::card_url(&args.upstream);
    let poll = args.poll;
    let served = runtime.block_on(async move {
        gw.log(LogRecord::info("listening").with_message(format!("http://{bound}")));
        let reloader = gw.clone();
        tokio::spawn(async move { reload_on_sighup(reloader).await });
        gateway::serve(gw, listener, card_url, poll, shutdown_signal()).await
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let f = Finding::new(
                Code::Io,
                format!("the gateway stopped: {e}"),
                Location::default(),
            );
            fail_with(format, &[f], "the gateway stopped")
        }
    }
}

/// SIGTERM or SIGINT.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Reload the bundle on every SIGHUP.
async fn reload_on_sighup(gw: Gateway) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut hup) = signal(SignalKind::hangup()) else {
            return;
        };
        while hup.recv().await.is_some() {
            gw.log(LogRecord::info("reload_requested"));
            gw.reload().await;
        }
    }
    #[cfg(not(unix))]
    {
        let _ = gw;
    }
}
