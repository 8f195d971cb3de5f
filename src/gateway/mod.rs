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
pub mod forward;
pub mod handler;
pub mod http;
pub mod log;
pub mod metrics;
pub mod recognise;
pub mod state;
pub mod tasks;
pub mod upstream;
pub mod view;

pub use log::{Level, Log, LogRecord};
pub use state::{
    admits, load_bundle, BundleSource, Gateway, Loaded, RequestLimits, Settings, Shared,
};
use std::time::Duration;

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
    let cancelling = gateway.clone();
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
                // What is still in flight ends failed for its callers: stop it upstream.
                cancelling.cancel_in_flight().await;
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
