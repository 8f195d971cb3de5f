//! HTTP to an A2A 1.0 agent: the Agent Card, and SendMessage, SendStreamingMessage and
//! GetTask over the JSON-RPC and HTTP+JSON bindings, with hard limits.
//!
//! A client agent talks to agents it does not control (draft "Security Considerations",
//! resource limits: "payload size" among them), so every read here is bounded: one
//! deadline per exchange, a cap on each body and on the bytes and events of a stream,
//! no redirects (a card or an endpoint that moves is reported, not followed — the draft
//! forbids being directed to arbitrary URLs). Every JSON body is read with the strict
//! I-JSON reader ([`crate::wire::json::parse`]): the digest triple is computed over exactly
//! what the agent sent, so a reader that kept the last of two duplicate members or
//! rounded a large integer would check something else.
//!
//! Requests carry `A2A-Version` (the version the card's interface declares; a2a-sdk 1.x
//! servers treat a request without it as 0.3 and refuse it) and, when the extension is
//! activated, `A2A-Extensions` (draft "Agent advertisement"). The A2A project's Rust
//! client (`a2a-client-lf`) was the intended base; it reads bodies and SSE streams
//! without a size cap and parses with `serde_json`, so this module is a small binding
//! of our own on the same `reqwest` the registry client already uses.
//!
//! Nothing here interprets a Task: [`crate::client::final_task`] does.

use crate::card::a2a::EXTENSION_URI;
use crate::client::clause::Clause;
use crate::client::final_task::{excerpt, Assembly, Violation};
use serde_json::{json, Value};
use std::time::Duration;

/// Limits on everything read from an agent.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The deadline of one exchange (a card fetch, a send, a whole stream, a poll loop).
    pub timeout: Duration,
    /// The largest body (or stream, in all) accepted, in bytes.
    pub max_body: usize,
    /// The most events a stream (or polls a poll loop) may take.
    pub max_events: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(30),
            max_body: 8 << 20,
            max_events: 10_000,
        }
    }
}

/// An A2A protocol binding this client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP (`protocolBinding: "JSONRPC"`).
    JsonRpc,
    /// HTTP+JSON (`protocolBinding: "HTTP+JSON"`).
    HttpJson,
}

impl Binding {
    /// The name an Agent Card's `supportedInterfaces[].protocolBinding` uses.
    pub fn card_name(self) -> &'static str {
        match self {
            Binding::JsonRpc => "JSONRPC",
            Binding::HttpJson => "HTTP+JSON",
        }
    }
}

/// How the client waits for the final Task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// SendMessage, which returns when the task is terminal or interrupted.
    Blocking,
    /// SendStreamingMessage: the Task is assembled from the events.
    Stream,
    /// SendMessage with `returnImmediately`, then GetTask until the task is terminal.
    Poll,
}

/// One interface of an Agent Card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The interface's `url`.
    pub url: String,
    /// Its protocol binding.
    pub binding: Binding,
    /// `protocolVersion`, sent as `A2A-Version`.
    pub protocol_version: String,
}

/// Choose the card's interface: the first A2A 1.x JSON-RPC or HTTP+JSON entry of
/// `supportedInterfaces`, or the first with `binding` when given.
pub fn endpoint(card: &Value, binding: Option<Binding>) -> Result<Endpoint, Violation> {
    let interfaces = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for entry in interfaces {
        let text = |k: &str| entry.get(k).and_then(Value::as_str);
        let found = match text("protocolBinding") {
            Some("JSONRPC") => Binding::JsonRpc,
            Some("HTTP+JSON") => Binding::HttpJson,
            _ => continue,
        };
        let version = text("protocolVersion").unwrap_or("1.0");
        if binding.is_some_and(|b| b != found) || !version.starts_with("1.") && version != "1" {
            continue;
        }
        let Some(url) =
            text("url").filter(|u| u.starts_with("http://") || u.starts_with("https://"))
        else {
            continue;
        };
        return Ok(Endpoint {
            url: url.to_string(),
            binding: found,
            protocol_version: version.to_string(),
        });
    }
    Err(Violation::new(
        Clause::CardInterface,
        "/supportedInterfaces",
        match binding {
            Some(b) => format!(
                "the Agent Card names no A2A 1.x {} interface with an http(s) url",
                b.card_name()
            ),
            None => {
                "the Agent Card names no A2A 1.x JSONRPC or HTTP+JSON interface with an http(s) url"
                    .to_string()
            }
        },
    )
    .with_evidence(card.get("supportedInterfaces").unwrap_or(&Value::Null)))
}

/// The Agent Card URL of an agent: `AGENT_URL/.well-known/agent-card.json`, or the URL
/// itself when it already names a `.json` document.
pub fn card_url(agent_url: &str) -> String {
    if agent_url.ends_with(".json") {
        agent_url.to_string()
    } else {
        format!(
            "{}/.well-known/agent-card.json",
            agent_url.trim_end_matches('/')
        )
    }
}

/// An exchange that did not produce a response to interpret.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum WireError {
    /// Connecting or sending failed (the agent is unreachable).
    Unreachable(String),
    /// The agent did not answer within the deadline.
    Timeout,
    /// The agent broke a transport rule (status, content type, size, JSON, stream).
    Violation(Violation),
    /// The binding's error: a JSON-RPC error object, or an HTTP+JSON error status and body.
    /// `condition` is the draft's code when the binding's error exposes one.
    Binding {
        /// The JSON-RPC error code, or the HTTP status.
        code: i64,
        /// The binding error's message.
        message: String,
        /// The draft's condition, when the error exposes one.
        condition: Option<String>,
        /// A bounded excerpt of the error as sent.
        evidence: String,
    },
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Unreachable(m) => write!(f, "the agent cannot be reached: {m}"),
            WireError::Timeout => f.write_str("the agent did not answer within the deadline"),
            WireError::Violation(v) => v.fmt(f),
            WireError::Binding {
                code, condition, ..
            } => match condition {
                Some(c) => write!(f, "the agent answered with a binding error {code} ({c})"),
                None => write!(f, "the agent answered with a binding error {code}"),
            },
        }
    }
}

fn transport(pointer: &str, message: impl Into<String>) -> WireError {
    WireError::Violation(Violation::new(Clause::Transport, pointer, message))
}

/// What an exchange returned: the response in SendMessage form (`{"task"}` or
/// `{"message"}`), and whether the response header echoed the extension.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The response, in SendMessage form.
    pub response: Value,
    /// Whether the response header echoed the extension.
    pub echoed: bool,
    /// Stream events applied (0 unless streamed), or polls made.
    pub events: usize,
}

/// An HTTP client for A2A agents, with its limits.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
    limits: Limits,
}

impl Http {
    /// A client with `limits`; no redirects are followed.
    pub fn new(limits: Limits) -> Result<Self, WireError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(limits.timeout)
            .user_agent(concat!("skillbundle/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| WireError::Unreachable(format!("no HTTP client: {e}")))?;
        Ok(Http { client, limits })
    }

    /// The limits it applies.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// GET the Agent Card at `url`, read strictly.
    pub async fn card(&self, url: &str) -> Result<Value, WireError> {
        let request = self.client.get(url).header("Accept", "application/json");
        self.deadline(async {
            let response = send(request).await?;
            let (status, _, body) = self.body(response).await?;
            if !(200..300).contains(&status) {
                return Err(transport(
                    "",
                    format!("the Agent Card URL answered HTTP {status}"),
                ));
            }
            parse(&body, "the Agent Card")
        })
        .await
    }

    async fn deadline<T>(
        &self,
        f: impl std::future::Future<Output = Result<T, WireError>>,
    ) -> Result<T, WireError> {
        tokio::time::timeout(self.limits.timeout, f)
            .await
            .unwrap_or(Err(WireError::Timeout))
    }

    fn request(
        &self,
        endpoint: &Endpoint,
        path: &str,
        activate: bool,
        post: Option<Value>,
    ) -> reqwest::RequestBuilder {
        // JSON-RPC posts to the interface URL exactly as the card gives it; HTTP+JSON
        // appends the operation's path.
        let url = if path.is_empty() {
            endpoint.url.clone()
        } else {
            format!("{}{path}", endpoint.url.trim_end_matches('/'))
        };
        let mut request = match post {
            Some(body) => self
                .client
                .post(url)
                .header("Content-Type", "application/json")
                .body(body.to_string()),
            None => self.client.get(url),
        };
        request = request.header("A2A-Version", &endpoint.protocol_version);
        if activate {
            request = request.header("A2A-Extensions", EXTENSION_URI);
        }
        request
    }

    /// Send `message` (an A2A 1.0 Message in JSON form) and return the response once the
    /// task is terminal or interrupted, by `mode`. With `activate`, the request carries
    /// the `A2A-Extensions` header (the Message's own `extensions` are the caller's).
    pub async fn send(
        &self,
        endpoint: &Endpoint,
        message: &Value,
        activate: bool,
        mode: Mode,
    ) -> Result<Exchange, WireError> {
        let mut params = json!({"message": message});
        if mode == Mode::Poll {
            params["configuration"] = json!({"returnImmediately": true});
        }
        self.deadline(async {
            match mode {
                Mode::Blocking => {
                    self.unary(endpoint, "SendMessage", "/message:send", params, activate)
                        .await
                }
                Mode::Stream => self.stream(endpoint, params, activate).await,
                Mode::Poll => {
                    let first = self
                        .unary(endpoint, "SendMessage", "/message:send", params, activate)
                        .await?;
                    self.poll(endpoint, first, activate).await
                }
            }
        })
        .await
    }

    /// GetTask: the task's current state.
    pub async fn get_task(
        &self,
        endpoint: &Endpoint,
        id: &str,
        activate: bool,
    ) -> Result<Value, WireError> {
        let exchange = match endpoint.binding {
            Binding::JsonRpc => {
                self.unary(endpoint, "GetTask", "", json!({"id": id}), activate)
                    .await?
            }
            Binding::HttpJson => {
                let path = format!("/tasks/{}", percent(id));
                let response = send(self.request(endpoint, &path, activate, None)).await?;
                let (status, echoed, body) = self.body(response).await?;
                if !(200..300).contains(&status) {
                    return Err(http_error(status, &body));
                }
                Exchange {
                    response: parse(&body, "the GetTask response")?,
                    echoed,
                    events: 0,
                }
            }
        };
        Ok(exchange.response)
    }

    async fn poll(
        &self,
        endpoint: &Endpoint,
        first: Exchange,
        activate: bool,
    ) -> Result<Exchange, WireError> {
        let Some(task) = first.response.get("task") else {
            return Ok(first);
        };
        let Some(id) = task.get("id").and_then(Value::as_str).map(str::to_string) else {
            return Err(transport("/task/id", "the returned Task has no string id"));
        };
        let mut task = task.clone();
        let mut wait = Duration::from_millis(50);
        let mut polls = 0;
        while !settled(&task) {
            if polls >= self.limits.max_events {
                return Err(transport(
                    "",
                    "the task did not settle within the client's limit on polls",
                ));
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(1));
            polls += 1;
            task = self.get_task(endpoint, &id, activate).await?;
            if task.get("id").and_then(Value::as_str) != Some(&id) {
                return Err(WireError::Violation(
                    Violation::new(Clause::Transport, "/id", "GetTask returned another task")
                        .with_evidence(task.get("id").unwrap_or(&Value::Null)),
                ));
            }
        }
        Ok(Exchange {
            response: json!({"task": task}),
            echoed: first.echoed,
            events: polls,
        })
    }

    async fn unary(
        &self,
        endpoint: &Endpoint,
        method: &str,
        path: &str,
        params: Value,
        activate: bool,
    ) -> Result<Exchange, WireError> {
        let (request, id) = match endpoint.binding {
            Binding::JsonRpc => {
                let id = request_id();
                let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                (self.request(endpoint, "", activate, Some(body)), Some(id))
            }
            Binding::HttpJson => (self.request(endpoint, path, activate, Some(params)), None),
        };
        let response = send(request).await?;
        let (status, echoed, body) = self.body(response).await?;
        let value = match endpoint.binding {
            Binding::JsonRpc
                if !(200..300).contains(&status) && crate::wire::json::parse(&body).is_err() =>
            {
                return Err(http_error(status, &body));
            }
            Binding::JsonRpc => rpc_result(&parse(&body, "the JSON-RPC response")?, id.as_deref())?,
            Binding::HttpJson if !(200..300).contains(&status) => {
                return Err(http_error(status, &body));
            }
            Binding::HttpJson => parse(&body, "the HTTP+JSON response")?,
        };
        Ok(Exchange {
            response: value,
            echoed,
            events: 0,
        })
    }

    async fn stream(
        &self,
        endpoint: &Endpoint,
        params: Value,
        activate: bool,
    ) -> Result<Exchange, WireError> {
        let (request, id) = match endpoint.binding {
            Binding::JsonRpc => {
                let id = request_id();
                let body = json!({"jsonrpc": "2.0", "id": id, "method": "SendStreamingMessage", "params": params});
                (self.request(endpoint, "", activate, Some(body)), Some(id))
            }
            Binding::HttpJson => (
                self.request(endpoint, "/message:stream", activate, Some(params)),
                None,
            ),
        };
        let mut response = send(request.header("Accept", "text/event-stream")).await?;
        let is_stream = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream {
            let (status, _, body) = self.body(response).await?;
            // A binding error answers a streaming call as an ordinary body.
            return Err(match endpoint.binding {
                Binding::JsonRpc => {
                    match rpc_result(&parse(&body, "the JSON-RPC response")?, id.as_deref()) {
                        Err(e) => e,
                        Ok(_) => {
                            transport("", "a streaming call was answered without an event stream")
                        }
                    }
                }
                Binding::HttpJson if !(200..300).contains(&status) => http_error(status, &body),
                Binding::HttpJson => {
                    transport("", "a streaming call was answered without an event stream")
                }
            });
        }
        let echoed = echoes(&response);
        let mut assembly = Assembly::new();
        let mut buffer: Vec<u8> = Vec::new();
        let mut total = 0usize;
        loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| WireError::Unreachable(format!("the stream broke: {e}")))?;
            let Some(chunk) = chunk else { break };
            total += chunk.len();
            if total > self.limits.max_body {
                return Err(too_large("the event stream"));
            }
            buffer.extend_from_slice(&chunk);
            while let Some((end, next)) = event_boundary(&buffer) {
                let event: Vec<u8> = buffer.drain(..next).take(end).collect();
                if let Some(data) = sse_data(&event)? {
                    if assembly.events() >= self.limits.max_events {
                        return Err(transport(
                            "",
                            "the stream sent more events than the client's limit",
                        ));
                    }
                    let value = parse(&data, "a stream event")?;
                    let value = match endpoint.binding {
                        Binding::JsonRpc => rpc_result(&value, id.as_deref())?,
                        Binding::HttpJson => value,
                    };
                    assembly.apply(&value).map_err(WireError::Violation)?;
                    if settled_event(&value) {
                        let events = assembly.events();
                        return Ok(Exchange {
                            response: assembly.finish(),
                            echoed,
                            events,
                        });
                    }
                }
            }
        }
        if !buffer.iter().all(u8::is_ascii_whitespace) {
            if let Some(data) = sse_data(&buffer)? {
                let value = parse(&data, "a stream event")?;
                let value = match endpoint.binding {
                    Binding::JsonRpc => rpc_result(&value, id.as_deref())?,
                    Binding::HttpJson => value,
                };
                assembly.apply(&value).map_err(WireError::Violation)?;
            }
        }
        let events = assembly.events();
        Ok(Exchange {
            response: assembly.finish(),
            echoed,
            events,
        })
    }

    /// Read a body up to the cap: the HTTP status, whether the response echoed the
    /// extension, and the bytes. A redirect is refused (never followed).
    async fn body(
        &self,
        mut response: reqwest::Response,
    ) -> Result<(u16, bool, Vec<u8>), WireError> {
        let status = response.status().as_u16();
        if response.status().is_redirection() {
            return Err(transport(
                "",
                format!("the agent answered HTTP {status} (a redirect): this client does not follow redirects"),
            ));
        }
        if response
            .content_length()
            .is_some_and(|n| n > self.limits.max_body as u64)
        {
            return Err(too_large("the response body"));
        }
        let echoed = echoes(&response);
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| WireError::Unreachable(format!("the response broke off: {e}")))?
        {
            if body.len() + chunk.len() > self.limits.max_body {
                return Err(too_large("the response body"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, echoed, body))
    }
}

fn too_large(what: &str) -> WireError {
    WireError::Violation(
        Violation::new(
            Clause::Transport,
            "",
            format!("{what} exceeds the client's size limit"),
        )
        .with_condition(crate::interface::condition::Condition::ResourceLimitExceeded),
    )
}

async fn send(request: reqwest::RequestBuilder) -> Result<reqwest::Response, WireError> {
    request.send().await.map_err(|e| {
        if e.is_timeout() {
            WireError::Timeout
        } else {
            WireError::Unreachable(without_url(&e))
        }
    })
}

/// reqwest's error text without the URL (which the caller already knows).
fn without_url(e: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut text = if e.is_connect() {
        "connection failed".to_string()
    } else {
        "the request failed".to_string()
    };
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

fn echoes(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get_all("A2A-Extensions")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| v.trim() == EXTENSION_URI)
}

fn parse(body: &[u8], what: &str) -> Result<Value, WireError> {
    crate::wire::json::parse(body).map_err(|e| {
        WireError::Violation(Violation::new(
            Clause::Transport,
            "",
            format!("{what} is not I-JSON: {}", e.message),
        ))
    })
}

fn request_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("skillbundle-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The `result` of a JSON-RPC response, or its error as [`WireError::Binding`].
fn rpc_result(response: &Value, id: Option<&str>) -> Result<Value, WireError> {
    if response.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(WireError::Violation(
            Violation::new(
                Clause::Transport,
                "/jsonrpc",
                "the response is not JSON-RPC 2.0",
            )
            .with_evidence(response),
        ));
    }
    if let Some(error) = response.get("error") {
        return Err(binding_error(
            error.get("code").and_then(Value::as_i64).unwrap_or(0),
            error,
        ));
    }
    if id.is_some_and(|id| response.get("id").and_then(Value::as_str) != Some(id)) {
        return Err(WireError::Violation(
            Violation::new(
                Clause::Transport,
                "/id",
                "the JSON-RPC response answers another request id",
            )
            .with_evidence(response.get("id").unwrap_or(&Value::Null)),
        ));
    }
    response.get("result").cloned().ok_or_else(|| {
        WireError::Violation(
            Violation::new(
                Clause::Transport,
                "/result",
                "the JSON-RPC response has neither result nor error",
            )
            .with_evidence(response),
        )
    })
}

/// A binding error; its draft condition, when the error's data or details carry an
/// error object (`{"error":{"code": <condition>}}`) or a bare condition code.
fn binding_error(code: i64, error: &Value) -> WireError {
    let condition = find_condition(error);
    WireError::Binding {
        code,
        message: error
            .get("message")
            .and_then(Value::as_str)
            .map(|_| "the binding's error message".to_string())
            .unwrap_or_default(),
        condition,
        evidence: excerpt(error),
    }
}

fn find_condition(value: &Value) -> Option<String> {
    let known = |s: &str| {
        crate::interface::condition::Condition::ALL
            .iter()
            .any(|c| c.as_str() == s)
            .then(|| s.to_string())
    };
    match value {
        Value::String(s) => known(s),
        Value::Object(o) => o.values().find_map(find_condition),
        Value::Array(a) => a.iter().find_map(find_condition),
        _ => None,
    }
}

fn http_error(status: u16, body: &[u8]) -> WireError {
    let value = crate::wire::json::parse(body).unwrap_or(Value::Null);
    let error = value.get("error").cloned().unwrap_or(value);
    binding_error(i64::from(status), &error)
}

/// Whether a task is terminal or interrupted (a blocking send returns then).
fn settled(task: &Value) -> bool {
    matches!(
        task.pointer("/status/state").and_then(Value::as_str),
        Some(
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
                | "TASK_STATE_INPUT_REQUIRED"
                | "TASK_STATE_AUTH_REQUIRED"
        )
    )
}

/// Whether a stream event ends the exchange: a Message, a settled Task or status.
fn settled_event(event: &Value) -> bool {
    event.get("message").is_some()
        || event.get("task").is_some_and(settled)
        || event.get("statusUpdate").is_some_and(settled)
}

/// The end of the first SSE event in `buffer` (before its blank line) and where the
/// next begins.
pub(crate) fn event_boundary(buffer: &[u8]) -> Option<(usize, usize)> {
    for i in 0..buffer.len() {
        let rest = &buffer[i..];
        if rest.starts_with(b"\r\n\r\n") {
            return Some((i, i + 4));
        }
        if rest.starts_with(b"\n\n") || rest.starts_with(b"\r\r") {
            return Some((i, i + 2));
        }
    }
    None
}

/// The joined `data:` lines of one SSE event (None for an event without data, such as
/// a comment or keep-alive).
pub(crate) fn sse_data(event: &[u8]) -> Result<Option<Vec<u8>>, WireError> {
    let text =
        std::str::from_utf8(event).map_err(|_| transport("", "a stream event is not UTF-8"))?;
    let mut data: Vec<&str> = Vec::new();
    for line in text.split(['\n', '\r']) {
        if let Some(rest) = line.strip_prefix("data:") {
            data.push(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    Ok((!data.is_empty()).then(|| data.join("\n").into_bytes()))
}

/// Percent-encode a task id for a URL path segment.
pub(crate) fn percent(id: &str) -> String {
    id.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chooses_an_a2a_1_interface_of_the_card() {
        let card = json!({"supportedInterfaces": [
            {"url": "grpc://x", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "http://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ]});
        assert_eq!(endpoint(&card, None).unwrap().binding, Binding::JsonRpc);
        let rest = endpoint(&card, Some(Binding::HttpJson)).unwrap();
        assert_eq!(
            (rest.url.as_str(), rest.protocol_version.as_str()),
            ("http://a/rest", "1.0")
        );
        let v = endpoint(&json!({}), None).unwrap_err();
        assert_eq!(v.clause, Clause::CardInterface);
    }

    #[test]
    fn card_urls_follow_the_well_known_path() {
        assert_eq!(
            card_url("http://a:1/"),
            "http://a:1/.well-known/agent-card.json"
        );
        assert_eq!(card_url("http://a/card.json"), "http://a/card.json");
    }

    #[test]
    fn sse_events_split_and_join_data_lines() {
        let buffer = b"data: {\"a\":\ndata: 1}\n\n: keep-alive\r\n\r\nrest";
        let (end, next) = event_boundary(buffer).unwrap();
        assert_eq!(sse_data(&buffer[..end]).unwrap().unwrap(), b"{\"a\":\n1}");
        let (end2, _) = event_boundary(&buffer[next..]).unwrap();
        assert_eq!(sse_data(&buffer[next..next + end2]).unwrap(), None);
    }

    #[test]
    fn binding_errors_expose_the_drafts_condition() {
        let e = binding_error(
            -32602,
            &json!({"code": -32602, "message": "m", "data": [{"error": {"code": "input_invalid"}}]}),
        );
        let WireError::Binding { condition, .. } = e else {
            panic!()
        };
        assert_eq!(condition.as_deref(), Some("input_invalid"));
        assert_eq!(percent("a/b c"), "a%2Fb%20c");
    }
}
