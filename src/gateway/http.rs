//! The gateway's HTTP face: the SDK's JSON-RPC (`POST /`) and HTTP+JSON routers around
//! the [`Gateway`] handler, the Agent Card, `/healthz`, `/readyz` and `/metrics`; and
//! what stands in front of the SDK on every A2A request:
//!
//! - a concurrency limit (beyond it, 503 at once: a gateway sheds load rather than
//!   queue without bound);
//! - the raw-body guard: the body is read at most [`RequestLimits::max_body_bytes`] of
//!   it, then by the library's strict I-JSON reader ([`crate::agent::body`], the Python
//!   request guard's:
//!   UTF-8 only, no duplicate members, integers within ±(2^53−1), nesting and value
//!   limits) before the SDK parses it, so the request checked is the request forwarded
//!   (draft "Security Considerations"; the Python request guard's rules). A body that is
//!   not I-JSON gets the binding's parse error (JSON-RPC −32700, HTTP+JSON 400), a body
//!   beyond a limit the binding's invalid-request error with the draft's
//!   `resource_limit_exceeded` in its `google.rpc.ErrorInfo` metadata. Messages give the
//!   class of fault and its line and column, never the body's text. A refused body up to
//!   twice the limit is read to its end and dropped first (`read_capped`), so that a
//!   client writing its whole body before reading gets the answer, not a reset;
//! - on HTTP+JSON, A2A's version negotiation (the SDK's JSON-RPC router does it itself):
//!   a request whose `A2A-Version` header names another major version than 1, or that
//!   has none (which A2A 1.0 reads as 0.3), gets `VersionNotSupportedError` (400), as
//!   a2a-sdk answers on both bindings. A POST without a body (CancelTask and
//!   SubscribeToTask have nothing to send) is not read as JSON: the SDK's router decides
//!   whether the operation needs one;
//! - the `A2A-Extensions` echo: a request that activated the extension gets its URI
//!   back in the response header (draft "Agent advertisement");
//! - on the way out, every binding error that does not carry the draft's condition
//!   (the SDK's own: a malformed request, an unknown method, a task not found, ...)
//!   gets a fixed message for its code, and loses any detail but its
//!   `google.rpc.ErrorInfo`: the SDK's messages quote what the caller sent (a method
//!   name, a task id, serde's reading of a member), and nothing a caller sent is
//!   repeated back ([`fixed_message`]);
//! - on the way out, an HTTP+JSON error says `Content-Type: application/json`, as A2A
//!   1.0's HTTP+JSON binding (§11.6, AIP-193) and a2a-sdk do (the SDK says
//!   `application/problem+json`, for a body that is not RFC 9457's);
//! - on the way out, a unary answer's Data Parts get their whole numbers back as
//!   integers: the SDK writes them through protobuf's `Struct` (`42` as `42.0`), SSE
//!   events do not, and the caller of an integer output reads the integer on every path
//!   (`integral_parts`).

use super::state::{Gateway, RequestLimits};
use crate::agent::body::{self, BodyFault, BodyLimits};
use crate::card::a2a::EXTENSION_URI;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::StreamExt;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::sync::Semaphore;

#[derive(Clone)]
struct Guarding {
    gateway: Gateway,
    limits: RequestLimits,
    permits: Arc<Semaphore>,
}

/// The gateway's router (all routes, all layers).
pub fn router(gateway: Gateway) -> axum::Router {
    let handler = Arc::new(gateway.clone());
    let a2a = a2a_server::jsonrpc::jsonrpc_router(handler.clone())
        .merge(a2a_server::rest::rest_router(handler));
    let guarding = Guarding {
        limits: gateway.settings.requests,
        permits: Arc::new(Semaphore::new(gateway.settings.requests.max_concurrency)),
        gateway: gateway.clone(),
    };
    let a2a = a2a
        .layer(axum::middleware::from_fn(echo_extension))
        .layer(axum::middleware::from_fn_with_state(guarding, guard));
    axum::Router::new()
        .route(a2a_server::WELL_KNOWN_AGENT_CARD_PATH, get(agent_card))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(gateway)
        .merge(a2a)
}

/// How long a caller may use the card without asking again (A2A 1.0 §8.6.1: `max-age`,
/// and an `ETag` to ask with). The card changes only when a bundle is reloaded, and a
/// caller that asks again with `If-None-Match` gets 304 while it has not.
const CARD_MAX_AGE: &str = "max-age=60";

async fn agent_card(State(gateway): State<Gateway>, headers: HeaderMap) -> Response {
    let body = gateway.loaded().card.to_string();
    let digest = crate::wire::digest::Digest::of_bytes(body.as_bytes());
    let etag = format!("\"{}\"", &digest.as_str()["sha256:".len()..]);
    let cache = [
        (header::ETAG, etag.clone()),
        (header::CACHE_CONTROL, CARD_MAX_AGE.to_string()),
    ];
    let unchanged = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == etag || tag == "*");
    if unchanged {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (cache, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn readyz(State(gateway): State<Gateway>) -> Response {
    if gateway.is_ready() {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: the upstream agent's card was not read yet\n",
        )
            .into_response()
    }
}

async fn metrics(State(gateway): State<Gateway>) -> Response {
    let loaded = gateway.loaded();
    let info = super::metrics::BundleInfo {
        name: loaded.bundle.name(),
        version: loaded.bundle.version(),
        digest: &loaded.digest,
    };
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        gateway.metrics.render(&info, gateway.is_ready()),
    )
        .into_response()
}

/// Echo the extension's URI when the request activated it.
async fn echo_extension(request: Request, next: Next) -> Response {
    let activated = request
        .headers()
        .get_all("a2a-extensions")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.trim() == EXTENSION_URI);
    let mut response = next.run(request).await;
    if activated {
        response
            .headers_mut()
            .append("a2a-extensions", HeaderValue::from_static(EXTENSION_URI));
    }
    response
}

/// Which binding and A2A method a request is (fixed names only, for the metrics).
fn operation(method: &Method, path: &str, body: Option<&Value>) -> (&'static str, &'static str) {
    const METHODS: &[&str] = &[
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
    ];
    if path == "/" {
        let name = body
            .and_then(|b| b.get("method"))
            .and_then(Value::as_str)
            .and_then(|m| METHODS.iter().find(|k| **k == m).copied())
            .unwrap_or("other");
        return ("jsonrpc", name);
    }
    let name = if path.ends_with("/message:send") {
        "SendMessage"
    } else if path.ends_with("/message:stream") {
        "SendStreamingMessage"
    } else if path.ends_with(":cancel") {
        "CancelTask"
    } else if path.ends_with(":subscribe") || path.ends_with("/subscribe") {
        "SubscribeToTask"
    } else if path == "/tasks" && method == Method::GET {
        "ListTasks"
    } else if path.starts_with("/tasks/")
        && method == Method::GET
        && !path.contains("pushNotificationConfigs")
    {
        "GetTask"
    } else {
        "other"
    };
    ("http+json", name)
}

/// The binding's refusal of a body: `parse` (not I-JSON) or a limit.
fn refuse(jsonrpc: bool, limit: bool, message: &str) -> Response {
    let (code, reason) = if limit {
        (a2a_types::error_code::INVALID_REQUEST, "INVALID_REQUEST")
    } else {
        (a2a_types::error_code::PARSE_ERROR, "PARSE_ERROR")
    };
    let mut info = json!({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": a2a_types::PROTOCOL_DOMAIN,
    });
    if limit {
        info["metadata"] = json!({"code": "resource_limit_exceeded"});
    }
    if !jsonrpc {
        return bad_request("INVALID_ARGUMENT", message, info);
    }
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message, "data": [info]}});
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// An HTTP+JSON error of status 400 (AIP-193): `status`, `message` and one
/// `google.rpc.ErrorInfo`.
fn bad_request(status: &str, message: &str, info: Value) -> Response {
    let body =
        json!({"error": {"code": 400, "status": status, "message": message, "details": [info]}});
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Whether an HTTP+JSON request speaks A2A 1.x: its `A2A-Version` header's major
/// version, the header absent meaning 0.3 (A2A 1.0 §3.6.2, as the SDK's JSON-RPC router
/// reads it).
fn speaks_a2a_1(headers: &HeaderMap) -> bool {
    let requested = headers
        .get("a2a-version")
        .map_or(Some("0.3"), |v| v.to_str().ok());
    requested
        .and_then(|v| v.trim().split('.').next())
        .and_then(|major| major.parse::<u32>().ok())
        == Some(1)
}

/// HTTP+JSON's `VersionNotSupportedError`: 400, with the fixed message for its code.
fn refuse_version() -> Response {
    let info = json!({
        "@type": a2a_types::ERROR_INFO_TYPE,
        "reason": "VERSION_NOT_SUPPORTED",
        "domain": a2a_types::PROTOCOL_DOMAIN,
    });
    let message = fixed_message(a2a_types::error_code::VERSION_NOT_SUPPORTED);
    bad_request("FAILED_PRECONDITION", &message, info)
}

/// A body refused by the library's reader ([`body::check_body`]), in the binding's form.
/// The refusal of a request body; `read` says whether the body was read to its end (if
/// not, the connection is closed after the answer).
fn refuse_body(g: &Guarding, jsonrpc: bool, fault: &BodyFault, read: bool) -> Response {
    let limit = matches!(fault, BodyFault::Limit(_));
    g.gateway.metrics.refusal(if limit {
        "resource_limit_exceeded"
    } else {
        "parse_error"
    });
    let mut response = refuse(jsonrpc, limit, fault.message());
    if !read {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A request body of at most `limit` bytes, or `Err(read)` for a longer one: the rest is
/// read and dropped up to twice the limit in all ([`drain`]), `read` saying whether it
/// ended there.
async fn read_capped(body: Body, limit: usize) -> Result<Bytes, bool> {
    let mut stream = body.into_data_stream();
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut size = 0usize;
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else { return Err(false) };
        size += chunk.len();
        if size > limit {
            return Err(drain(stream, (2 * limit).saturating_sub(size)).await);
        }
        chunks.push(chunk);
    }
    Ok(match chunks.len() {
        1 => chunks.remove(0),
        _ => chunks.concat().into(),
    })
}

/// Read and drop the rest of a refused body, at most `budget` bytes: whether it ended.
/// A server that answers and closes while the client is still sending makes the client's
/// kernel reset the connection, and the client loses the answer; a body read to its end
/// gets its answer and the connection is kept. Beyond the budget the connection is closed
/// instead: a refused body costs at most twice the limit to read, and no memory.
async fn drain(mut stream: axum::body::BodyDataStream, mut budget: usize) -> bool {
    while let Some(chunk) = stream.next().await {
        match chunk.map(|c| budget.checked_sub(c.len())) {
            Ok(Some(left)) => budget = left,
            _ => return false,
        }
    }
    true
}

/// The concurrency limit and the raw-body guard (see the module documentation).
async fn guard(State(g): State<Guarding>, request: Request, next: Next) -> Response {
    let Ok(_permit) = g.permits.clone().try_acquire_owned() else {
        g.gateway.metrics.refusal("concurrency");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "1")],
            "the gateway is at its concurrency limit\n",
        )
            .into_response();
    };
    if !g.gateway.is_ready() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "1")],
            "not ready: the upstream agent's card was not read yet\n",
        )
            .into_response();
    }
    let path = request.uri().path().to_string();
    let method = request.method().clone();
    let jsonrpc = path == "/";
    if !jsonrpc && !speaks_a2a_1(request.headers()) {
        let (binding, name) = operation(&method, &path, None);
        g.gateway.metrics.request(binding, name);
        g.gateway.metrics.refusal("version_not_supported");
        return refuse_version();
    }
    if matches!(
        method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::DELETE
    ) {
        let (binding, name) = operation(&method, &path, None);
        g.gateway.metrics.request(binding, name);
        return scrub(next.run(request).await, false).await;
    }
    let limits = BodyLimits {
        max_body_bytes: g.limits.max_body_bytes,
        max_depth: g.limits.max_depth,
        max_values: g.limits.max_values,
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    // A client that sent `Expect: 100-continue` sends no body until told to.
    let expects_continue = request
        .headers()
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let (parts, request_body) = request.into_parts();
    if let Some(n) = declared.filter(|&n| n > limits.max_body_bytes as u64) {
        // Read the rest only if the client is sending it anyway and it is not huge.
        let read = !expects_continue
            && n <= 2 * limits.max_body_bytes as u64
            && drain(request_body.into_data_stream(), 2 * limits.max_body_bytes).await;
        return refuse_body(&g, jsonrpc, &body::too_large(&limits), read);
    }
    let bytes: Bytes = match read_capped(request_body, limits.max_body_bytes).await {
        Ok(b) => b,
        Err(read) => return refuse_body(&g, jsonrpc, &body::too_large(&limits), read),
    };
    // CancelTask and SubscribeToTask POST nothing: no body is not a parse error, the
    // SDK's router knows whether the operation needs one.
    let value = if bytes.is_empty() && !jsonrpc {
        None
    } else {
        // The library's reader, once; on a refusal, the library's wording of it.
        match crate::wire::json::parse_with_limits(&bytes, limits.max_depth, limits.max_values) {
            Ok(v) => Some(v),
            Err(_) => {
                let fault = body::check_body(&bytes, &limits)
                    .err()
                    .unwrap_or_else(|| body::too_large(&limits));
                return refuse_body(&g, jsonrpc, &fault, true);
            }
        }
    };
    let (binding, name) = operation(&method, &path, value.as_ref());
    g.gateway.metrics.request(binding, name);
    scrub(
        next.run(Request::from_parts(parts, Body::from(bytes)))
            .await,
        jsonrpc,
    )
    .await
}

/// The message a binding error of A2A / JSON-RPC `code` carries to a caller.
pub fn fixed_message(code: i32) -> String {
    use a2a_types::error_code as c;
    match code {
        c::PARSE_ERROR => "the request body is not JSON".into(),
        c::INVALID_REQUEST => "the request is not a JSON-RPC 2.0 request".into(),
        c::METHOD_NOT_FOUND => "the method is not an A2A 1.0 method".into(),
        c::INVALID_PARAMS => "the request's params are not an A2A 1.0 request of this method".into(),
        c::TASK_NOT_FOUND => "the task is not found".into(),
        c::TASK_NOT_CANCELABLE => "the task cannot be canceled".into(),
        c::PUSH_NOTIFICATION_NOT_SUPPORTED => "push notifications are not supported".into(),
        c::UNSUPPORTED_OPERATION => "the operation is not supported".into(),
        c::CONTENT_TYPE_NOT_SUPPORTED => "the content type is not supported".into(),
        c::INVALID_AGENT_RESPONSE => "the agent's response was not valid".into(),
        c::EXTENDED_CARD_NOT_CONFIGURED => "no extended agent card is configured".into(),
        c::EXTENSION_SUPPORT_REQUIRED => format!(
            "this agent requires the extension {EXTENSION_URI}: activate it with the A2A-Extensions request header"
        ),
        c::VERSION_NOT_SUPPORTED => {
            "this agent speaks A2A 1.0: send the request header A2A-Version: 1.0".into()
        }
        _ => super::view::UPSTREAM_FAILURE.into(),
    }
}

/// An error object (JSON-RPC `error`, or HTTP+JSON's `error`) made safe to send: its
/// message fixed by `code` and its details only `google.rpc.ErrorInfo`, unless it
/// carries the draft's condition (`metadata.code`) or names the `interaction`
/// declaration that refused the operation (`metadata.declaration`): the gateway's own,
/// whose message is written never to repeat the caller.
fn scrub_error(error: &mut Value, code: i32, details: &str) -> bool {
    let is_info =
        |d: &Value| d.get("@type").and_then(Value::as_str) == Some(a2a_types::ERROR_INFO_TYPE);
    let ours = error
        .get(details)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|d| {
            is_info(d)
                && (d.pointer("/metadata/code").is_some()
                    || d.pointer("/metadata/declaration").is_some())
        });
    if ours {
        return false;
    }
    error["message"] = json!(fixed_message(code));
    if let Some(list) = error.get_mut(details).and_then(Value::as_array_mut) {
        list.retain(is_info);
    }
    true
}

/// Every Data Part's value under `value` with whole numbers as integers
/// ([`super::view::integral`]): the SDK writes a unary answer through protobuf, whose
/// `Struct` holds every number as a double (`42` would go out as `42.0`); SSE events
/// keep the upstream's spelling, and so, now, does every answer. Whether anything was
/// rewritten.
fn integral_parts(value: &mut Value, depth: usize) -> bool {
    // The gateway's own answer, nested as A2A nests it; the bound only keeps the walk's
    // stack finite.
    if depth > 128 {
        return false;
    }
    let mut changed = false;
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(parts)) = map.get_mut("parts") {
                for part in parts.iter_mut() {
                    if let Some(data) = part.get_mut("data") {
                        *data = super::view::integral(data.take());
                        changed = true;
                    }
                }
            }
            for (key, v) in map.iter_mut() {
                if key != "parts" {
                    changed |= integral_parts(v, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                changed |= integral_parts(v, depth + 1);
            }
        }
        _ => {}
    }
    changed
}

/// Fix the SDK's binding errors, and its spelling of whole numbers in Data Parts, on
/// the way out (see the module documentation).
async fn scrub(mut response: Response, jsonrpc: bool) -> Response {
    let headers = response.headers_mut();
    if headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v == "application/problem+json")
    {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    if !json {
        return response;
    }
    let errors_possible = jsonrpc || !response.status().is_success();
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let has_error = errors_possible && bytes.windows(7).any(|w| w == b"\"error\"");
    let has_doubles = bytes.windows(2).any(|w| w == b".0");
    if !has_error && !has_doubles {
        return Response::from_parts(parts, Body::from(bytes));
    }
    let mut value: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        _ => return Response::from_parts(parts, Body::from(bytes)),
    };
    let numbers = has_doubles && integral_parts(&mut value, 0);
    let changed = has_error
        && if jsonrpc {
            let code = value
                .pointer("/error/code")
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok());
            match (code, value.get_mut("error")) {
                (Some(code), Some(error)) => scrub_error(error, code, "data"),
                _ => false,
            }
        } else {
            let code = value
                .pointer("/error/details")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find_map(|d| d.get("reason").and_then(Value::as_str))
                .and_then(a2a_types::reason_to_error_code)
                .unwrap_or(a2a_types::error_code::INTERNAL_ERROR);
            match value.get_mut("error") {
                Some(error) if error.is_object() => scrub_error(error, code, "details"),
                _ => false,
            }
        };
    if !changed && !numbers {
        return Response::from_parts(parts, Body::from(bytes));
    }
    let mut parts = parts;
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_named_from_fixed_sets() {
        let post = Method::POST;
        assert_eq!(
            operation(&post, "/", Some(&json!({"method": "SendMessage"}))),
            ("jsonrpc", "SendMessage")
        );
        assert_eq!(
            operation(&post, "/", Some(&json!({"method": "<script>"}))),
            ("jsonrpc", "other")
        );
        assert_eq!(
            operation(&post, "/message:send", None),
            ("http+json", "SendMessage")
        );
        assert_eq!(
            operation(&Method::GET, "/tasks/abc", None),
            ("http+json", "GetTask")
        );
        assert_eq!(
            operation(&Method::GET, "/tasks", None),
            ("http+json", "ListTasks")
        );
    }
}
