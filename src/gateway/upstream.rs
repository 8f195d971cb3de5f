//! The gateway's side of the upstream agent: its Agent Card, and each A2A operation over
//! the binding that card declares (JSON-RPC or HTTP+JSON, A2A 1.0), bounded.
//!
//! The upstream is trusted with nothing (draft "Security Considerations", resource
//! limits): one deadline per exchange (a whole stream included), a cap on each body and
//! each stream event, a cap on the events of a stream, no redirects, and every body read
//! with the strict I-JSON reader. This is why the upstream side is not `a2a-client-lf`:
//! that client reads bodies and SSE streams without a size cap and parses with
//! `serde_json` (the last of two duplicate members wins), so a hostile upstream could
//! make the gateway buffer without bound, or have it check one reading of a result while
//! the caller reads another. The HTTP is the same `reqwest` the client side
//! ([`crate::client::transport`]) and the registry client use.
//!
//! Nothing the upstream says goes back to a caller as text: an upstream binding error
//! keeps only its A2A error code ([`UpstreamError::Binding`]).

use crate::client::transport::{event_boundary, percent, sse_data, Binding, Endpoint};
use futures::stream::BoxStream;
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Limits on everything read from the upstream.
#[derive(Debug, Clone, Copy)]
pub struct UpstreamLimits {
    /// The deadline of one exchange (a unary call, or a whole stream).
    pub timeout: Duration,
    /// The largest body, or stream event, accepted.
    pub max_body: usize,
    /// The most events one stream may send.
    pub max_events: usize,
}

impl Default for UpstreamLimits {
    fn default() -> Self {
        UpstreamLimits {
            timeout: Duration::from_secs(60),
            max_body: 8 << 20,
            max_events: 10_000,
        }
    }
}

/// Why an exchange with the upstream produced nothing to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamError {
    /// Connecting or reading failed.
    Unreachable,
    /// The upstream did not answer (or finish its stream) within the deadline.
    Timeout,
    /// A body or event beyond the cap, or more events than the cap.
    TooLarge,
    /// Not A2A: a status, content type, JSON text or envelope the binding does not allow.
    Malformed,
    /// The binding's error: its A2A / JSON-RPC code only.
    Binding(i32),
}

impl UpstreamError {
    /// A word for the logs (no upstream text).
    pub fn as_str(&self) -> &'static str {
        match self {
            UpstreamError::Unreachable => "unreachable",
            UpstreamError::Timeout => "timeout",
            UpstreamError::TooLarge => "too_large",
            UpstreamError::Malformed => "malformed",
            UpstreamError::Binding(_) => "binding_error",
        }
    }
}

/// An A2A operation the gateway forwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
}

impl Op {
    /// The JSON-RPC method name.
    pub fn method(self) -> &'static str {
        match self {
            Op::SendMessage => "SendMessage",
            Op::SendStreamingMessage => "SendStreamingMessage",
            Op::GetTask => "GetTask",
            Op::ListTasks => "ListTasks",
            Op::CancelTask => "CancelTask",
            Op::SubscribeToTask => "SubscribeToTask",
        }
    }
}

/// The upstream agent: where it is and how to reach it.
#[derive(Debug, Clone)]
pub struct Upstream {
    client: reqwest::Client,
    endpoint: Endpoint,
    limits: UpstreamLimits,
}

/// An HTTP client that follows no redirect.
pub fn http_client(limits: &UpstreamLimits) -> Result<reqwest::Client, UpstreamError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(limits.timeout)
        .user_agent(concat!("skillbundle-gateway/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|_| UpstreamError::Unreachable)
}

fn request_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("gw-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Read a response body up to `max` bytes.
async fn read_body(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, UpstreamError> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(UpstreamError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|_| UpstreamError::Unreachable)?
    {
        if body.len() + chunk.len() > max {
            return Err(UpstreamError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The Agent Card at `card_url`, read strictly and within `limits`.
pub async fn card(
    client: &reqwest::Client,
    card_url: &str,
    limits: &UpstreamLimits,
) -> Result<Value, UpstreamError> {
    let exchange = async {
        let response = client
            .get(card_url)
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|_| UpstreamError::Unreachable)?;
        if !response.status().is_success() {
            return Err(UpstreamError::Malformed);
        }
        let body = read_body(response, limits.max_body).await?;
        crate::wire::json::parse(&body).map_err(|_| UpstreamError::Malformed)
    };
    tokio::time::timeout(limits.timeout, exchange)
        .await
        .unwrap_or(Err(UpstreamError::Timeout))
}

/// The `result` of a JSON-RPC response to request `id`.
fn rpc_result(response: Value, id: &str) -> Result<Value, UpstreamError> {
    if response.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(UpstreamError::Malformed);
    }
    if let Some(error) = response.get("error") {
        let code = error
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(a2a_types::error_code::INTERNAL_ERROR);
        return Err(UpstreamError::Binding(code));
    }
    if response.get("id").and_then(Value::as_str) != Some(id) {
        return Err(UpstreamError::Malformed);
    }
    let mut response = response;
    response
        .get_mut("result")
        .map(Value::take)
        .ok_or(UpstreamError::Malformed)
}

/// An HTTP+JSON error response's A2A code: from its `google.rpc.ErrorInfo` reason when
/// it names one, else from the HTTP status.
fn http_error(status: u16, body: &[u8]) -> UpstreamError {
    use a2a_types::error_code as c;
    let reason = crate::wire::json::parse(body).ok().and_then(|v| {
        v.pointer("/error/details")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|d| d.get("reason").and_then(Value::as_str).map(str::to_string))
    });
    if let Some(code) = reason.as_deref().and_then(a2a_types::reason_to_error_code) {
        return UpstreamError::Binding(code);
    }
    UpstreamError::Binding(match status {
        404 => c::TASK_NOT_FOUND,
        400 => c::INVALID_PARAMS,
        _ => c::INTERNAL_ERROR,
    })
}

fn query(pairs: &[(&str, Option<String>)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={}", percent(v))))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

fn text(params: &Value, name: &str) -> Option<String> {
    match params.get(name)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

impl Upstream {
    /// The upstream reached through `endpoint` (an interface of its Agent Card).
    pub fn new(client: reqwest::Client, endpoint: Endpoint, limits: UpstreamLimits) -> Self {
        Upstream {
            client,
            endpoint,
            limits,
        }
    }

    /// The binding the gateway talks to the upstream with.
    pub fn binding(&self) -> Binding {
        self.endpoint.binding
    }

    /// The HTTP request of `op` with `params` (the A2A request message in JSON form) and
    /// the JSON-RPC id, if any; `headers` are the caller's headers passed on
    /// ([`super::forward`]).
    fn request(
        &self,
        op: Op,
        params: &Value,
        headers: &HeaderMap,
    ) -> (reqwest::RequestBuilder, Option<String>) {
        let base = self.endpoint.url.trim_end_matches('/');
        let with_version = |r: reqwest::RequestBuilder| {
            r.headers(headers.clone())
                .header("A2A-Version", &self.endpoint.protocol_version)
        };
        match self.endpoint.binding {
            Binding::JsonRpc => {
                let id = request_id();
                let body =
                    json!({"jsonrpc": "2.0", "id": id, "method": op.method(), "params": params});
                let request = self
                    .client
                    .post(&self.endpoint.url)
                    .header("Content-Type", "application/json")
                    .body(body.to_string());
                (with_version(request), Some(id))
            }
            Binding::HttpJson => {
                let id = text(params, "id").map(|s| percent(&s)).unwrap_or_default();
                let request = match op {
                    Op::SendMessage | Op::SendStreamingMessage => {
                        let path = if op == Op::SendMessage {
                            "/message:send"
                        } else {
                            "/message:stream"
                        };
                        self.client
                            .post(format!("{base}{path}"))
                            .header("Content-Type", "application/json")
                            .body(params.to_string())
                    }
                    Op::GetTask => self.client.get(format!(
                        "{base}/tasks/{id}{}",
                        query(&[("historyLength", text(params, "historyLength"))])
                    )),
                    Op::ListTasks => self.client.get(format!(
                        "{base}/tasks{}",
                        query(&[
                            ("contextId", text(params, "contextId")),
                            ("status", text(params, "status")),
                            ("pageSize", text(params, "pageSize")),
                            ("pageToken", text(params, "pageToken")),
                            ("historyLength", text(params, "historyLength")),
                            ("statusTimestampAfter", text(params, "statusTimestampAfter")),
                            ("includeArtifacts", text(params, "includeArtifacts")),
                        ])
                    )),
                    Op::CancelTask => self
                        .client
                        .post(format!("{base}/tasks/{id}:cancel"))
                        .header("Content-Type", "application/json")
                        .body(params.to_string()),
                    Op::SubscribeToTask => self.client.get(format!("{base}/tasks/{id}:subscribe")),
                };
                (with_version(request), None)
            }
        }
    }

    /// A unary operation: its result (the response message in JSON form).
    pub async fn unary(
        &self,
        op: Op,
        params: &Value,
        headers: &HeaderMap,
    ) -> Result<Value, UpstreamError> {
        let (request, id) = self.request(op, params, headers);
        let exchange = async {
            let response = request
                .header("Accept", "application/json")
                .send()
                .await
                .map_err(|_| UpstreamError::Unreachable)?;
            let status = response.status().as_u16();
            if response.status().is_redirection() {
                return Err(UpstreamError::Malformed);
            }
            let body = read_body(response, self.limits.max_body).await?;
            match id {
                Some(id) => {
                    let value =
                        crate::wire::json::parse(&body).map_err(|_| UpstreamError::Malformed)?;
                    rpc_result(value, &id)
                }
                None if !(200..300).contains(&status) => Err(http_error(status, &body)),
                None => crate::wire::json::parse(&body).map_err(|_| UpstreamError::Malformed),
            }
        };
        tokio::time::timeout(self.limits.timeout, exchange)
            .await
            .unwrap_or(Err(UpstreamError::Timeout))
    }

    /// A streaming operation: each event's payload (a StreamResponse in JSON form), in
    /// order. The whole stream shares one deadline; an error ends it.
    pub async fn stream(
        &self,
        op: Op,
        params: &Value,
        headers: &HeaderMap,
    ) -> Result<BoxStream<'static, Result<Value, UpstreamError>>, UpstreamError> {
        let deadline = Instant::now() + self.limits.timeout;
        let (request, id) = self.request(op, params, headers);
        let limits = self.limits;
        let response = tokio::time::timeout_at(
            deadline.into(),
            request.header("Accept", "text/event-stream").send(),
        )
        .await
        .map_err(|_| UpstreamError::Timeout)?
        .map_err(|_| UpstreamError::Unreachable)?;
        let status = response.status().as_u16();
        let is_stream = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream {
            // A binding error answers a streaming call as an ordinary body.
            let body =
                tokio::time::timeout_at(deadline.into(), read_body(response, limits.max_body))
                    .await
                    .map_err(|_| UpstreamError::Timeout)??;
            return Err(match &id {
                Some(id) => match crate::wire::json::parse(&body).map(|v| rpc_result(v, id)) {
                    Ok(Err(e)) => e,
                    _ => UpstreamError::Malformed,
                },
                None if !(200..300).contains(&status) => http_error(status, &body),
                None => UpstreamError::Malformed,
            });
        }
        struct Reading {
            response: Option<reqwest::Response>,
            buffer: Vec<u8>,
            events: usize,
            id: Option<String>,
        }
        let state = Reading {
            response: Some(response),
            buffer: Vec::new(),
            events: 0,
            id,
        };
        let events = futures::stream::unfold(state, move |mut s| async move {
            loop {
                let response = s.response.as_mut()?;
                if let Some((end, next)) = event_boundary(&s.buffer) {
                    let event: Vec<u8> = s.buffer.drain(..next).take(end).collect();
                    let data = match sse_data(&event) {
                        Ok(Some(data)) => data,
                        Ok(None) => continue,
                        Err(_) => {
                            s.response = None;
                            return Some((Err(UpstreamError::Malformed), s));
                        }
                    };
                    s.events += 1;
                    if s.events > limits.max_events {
                        s.response = None;
                        return Some((Err(UpstreamError::TooLarge), s));
                    }
                    let value =
                        crate::wire::json::parse(&data).map_err(|_| UpstreamError::Malformed);
                    let value = match (&s.id, value) {
                        (Some(id), Ok(v)) => rpc_result(v, id),
                        (None, v) => v,
                        (_, Err(e)) => Err(e),
                    };
                    if value.is_err() {
                        s.response = None;
                    }
                    return Some((value, s));
                }
                if s.buffer.len() > limits.max_body {
                    s.response = None;
                    return Some((Err(UpstreamError::TooLarge), s));
                }
                match tokio::time::timeout_at(deadline.into(), response.chunk()).await {
                    Err(_) => {
                        s.response = None;
                        return Some((Err(UpstreamError::Timeout), s));
                    }
                    Ok(Err(_)) => {
                        s.response = None;
                        return Some((Err(UpstreamError::Unreachable), s));
                    }
                    Ok(Ok(None)) => return None,
                    Ok(Ok(Some(chunk))) => s.buffer.extend_from_slice(&chunk),
                }
            }
        });
        Ok(Box::pin(events))
    }
}

/// The upstream as one caller's request reaches it: every call carries the headers
/// passed on from that caller ([`super::forward`]).
#[derive(Debug, Clone)]
pub struct OnBehalf {
    upstream: std::sync::Arc<Upstream>,
    headers: HeaderMap,
}

impl OnBehalf {
    pub fn new(upstream: std::sync::Arc<Upstream>, headers: HeaderMap) -> Self {
        OnBehalf { upstream, headers }
    }

    /// [`Upstream::unary`] with the caller's headers.
    pub async fn unary(&self, op: Op, params: &Value) -> Result<Value, UpstreamError> {
        self.upstream.unary(op, params, &self.headers).await
    }

    /// [`Upstream::stream`] with the caller's headers.
    pub async fn stream(
        &self,
        op: Op,
        params: &Value,
    ) -> Result<BoxStream<'static, Result<Value, UpstreamError>>, UpstreamError> {
        self.upstream.stream(op, params, &self.headers).await
    }
}

/// An A2A value the upstream sent, read into the SDK's types. ProtoJSON (what SDKs on
/// protobuf write, a2a-sdk's included) leaves out a repeated field that is empty, so an
/// Artifact's first chunk with no Parts yet arrives without `parts`; the SDK's types
/// require the member. An empty list is what the omission means, and nothing else is
/// filled in.
pub fn decode<T: serde::de::DeserializeOwned>(mut value: Value) -> serde_json::Result<T> {
    fill_empty_parts(&mut value, 0);
    serde_json::from_value(value)
}

fn fill_empty_parts(value: &mut Value, depth: usize) {
    // The upstream's answer went through the gateway's depth limit already; this bound
    // only keeps the walk's own stack finite.
    if depth > 128 {
        return;
    }
    match value {
        Value::Object(map) => {
            let part_holder = map.contains_key("artifactId") || map.contains_key("messageId");
            if part_holder && !map.contains_key("parts") {
                map.insert("parts".to_string(), Value::Array(Vec::new()));
            }
            for v in map.values_mut() {
                fill_empty_parts(v, depth + 1);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| fill_empty_parts(v, depth + 1)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_percent_encoded_and_skip_absent_members() {
        let params = json!({"contextId": "a b", "pageSize": 5, "x": {}});
        assert_eq!(
            query(&[
                ("contextId", text(&params, "contextId")),
                ("status", text(&params, "status")),
                ("pageSize", text(&params, "pageSize")),
            ]),
            "?contextId=a%20b&pageSize=5"
        );
        assert_eq!(query(&[("x", None)]), "");
    }

    #[test]
    fn upstream_errors_keep_only_their_code() {
        let e = rpc_result(
            json!({"jsonrpc": "2.0", "id": "1", "error": {"code": -32001, "message": "secret /etc/passwd"}}),
            "1",
        );
        assert_eq!(e, Err(UpstreamError::Binding(-32001)));
        assert_eq!(
            rpc_result(json!({"jsonrpc": "2.0", "id": "2", "result": 1}), "1"),
            Err(UpstreamError::Malformed)
        );
        assert_eq!(
            http_error(500, b"{\"error\":{\"message\":\"trace\"}}"),
            UpstreamError::Binding(a2a_types::error_code::INTERNAL_ERROR)
        );
    }

    #[test]
    fn an_artifact_chunk_without_parts_reads_as_empty() {
        let event = json!({"artifactUpdate": {"taskId": "t", "contextId": "c",
            "artifact": {"artifactId": "a", "name": "skill"}, "lastChunk": false}});
        let read: a2a_types::StreamResponse = decode(event).expect("a chunk with no Parts yet");
        match read {
            a2a_types::StreamResponse::ArtifactUpdate(e) => assert!(e.artifact.parts.is_empty()),
            other => panic!("read as {other:?}"),
        }
    }
}
