//! `skillbundle serve` in-process, against small upstream agents of this test's own that
//! misbehave one way each: every kind of bad input is refused before the upstream sees it
//! (its calls are counted), every kind of bad output turns into a failed Task with
//! nothing invalid shown, on both bindings, blocking and streaming, and nothing the
//! upstream or the caller sent comes back in a message.

use crate::common;
use crate::gateway_support::*;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use skillbundle::agent::{Bundle, TrustedKeys};
use skillbundle::gateway::{self, card::CardSettings, BundleSource, Gateway, Settings};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How the upstream misbehaves.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Upstream {
    Valid,
    TwoResults,
    UndeclaredRecord,
    InvalidRecord,
    InvalidResult,
    Raises,
    Slow,
    EndlessBody,
    EndlessStream,
    Echo,
    /// Asks for input first; completes validly on the follow-up.
    AsksInput,
}

struct Fake {
    behavior: Upstream,
    calls: AtomicUsize,
    url: String,
}

fn task(id: &str, state: &str, artifacts: Vec<Value>) -> Value {
    json!({"id": id, "contextId": "ctx", "status": {"state": state}, "artifacts": artifacts})
}

fn final_task(behavior: Upstream) -> Value {
    let ok = artifact("r-1", SKILL, result("condition_met"));
    match behavior {
        Upstream::Valid | Upstream::Slow => task(
            "t-1",
            "TASK_STATE_COMPLETED",
            vec![artifact("o-1", KIND, record()), ok],
        ),
        Upstream::TwoResults => task(
            "t-1",
            "TASK_STATE_COMPLETED",
            vec![ok, artifact("r-2", SKILL, result("condition_not_met"))],
        ),
        Upstream::UndeclaredRecord => task(
            "t-1",
            "TASK_STATE_COMPLETED",
            vec![artifact("d-1", "diary", json!({"x": SECRET})), ok],
        ),
        Upstream::InvalidRecord => task(
            "t-1",
            "TASK_STATE_COMPLETED",
            vec![artifact("o-1", KIND, json!({"record_id": SECRET})), ok],
        ),
        Upstream::InvalidResult => task(
            "t-1",
            "TASK_STATE_COMPLETED",
            vec![artifact("r-1", SKILL, result(SECRET))],
        ),
        _ => task("t-1", "TASK_STATE_COMPLETED", vec![ok]),
    }
}

async fn upstream_rpc(State(fake): State<Arc<Fake>>, headers: HeaderMap, body: String) -> Response {
    fake.calls.fetch_add(1, Ordering::SeqCst);
    let _ = headers;
    let request: Value = serde_json::from_str(&body).unwrap();
    let id = request["id"].clone();
    let method = request["method"].as_str().unwrap_or_default().to_string();
    let reply = |result: Value| {
        axum::Json(json!({"jsonrpc": "2.0", "id": id.clone(), "result": result})).into_response()
    };
    match (fake.behavior, method.as_str()) {
        (Upstream::Raises, _) => axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": format!("Traceback: {SECRET}")}})).into_response(),
        (Upstream::Slow, _) => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            reply(json!({"task": final_task(Upstream::Slow)}))
        }
        (Upstream::EndlessBody, "SendMessage") => {
            let chunks = futures::stream::repeat_with(|| Ok::<_, std::io::Error>(axum::body::Bytes::from(vec![b' '; 64 * 1024])));
            (StatusCode::OK, [("content-type", "application/json")], axum::body::Body::from_stream(chunks)).into_response()
        }
        (Upstream::EndlessStream, "SendStreamingMessage") => {
            let start = format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": id, "result": {"task": task("t-1", "TASK_STATE_WORKING", vec![])}}));
            let ping = format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": id, "result": {"statusUpdate": {"taskId": "t-1", "contextId": "ctx", "status": {"state": "TASK_STATE_WORKING"}}}}));
            let first = futures::stream::once(async move { Ok::<_, std::io::Error>(axum::body::Bytes::from(start)) });
            let rest = futures::stream::repeat_with(move || Ok(axum::body::Bytes::from(ping.clone())));
            use futures::StreamExt;
            (StatusCode::OK, [("content-type", "text/event-stream")], axum::body::Body::from_stream(first.chain(rest))).into_response()
        }
        (Upstream::Echo, _) => reply(json!({"message": {"messageId": "m-up", "role": "ROLE_AGENT", "parts": [{"text": "echo"}]}})),
        (behavior, "SendMessage") | (behavior, "GetTask") => reply(json!({"task": final_task(behavior)})).into_response_task(&method),
        (behavior, "SendStreamingMessage") => {
            let done = final_task(behavior);
            let mut events = vec![json!({"task": task("t-1", "TASK_STATE_SUBMITTED", vec![])})];
            for a in done["artifacts"].as_array().unwrap() {
                events.push(json!({"artifactUpdate": {"taskId": "t-1", "contextId": "ctx", "artifact": a, "lastChunk": true}}));
            }
            events.push(json!({"statusUpdate": {"taskId": "t-1", "contextId": "ctx", "status": {"state": "TASK_STATE_COMPLETED"}}}));
            let text: String = events
                .into_iter()
                .map(|e| format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": id, "result": e})))
                .collect();
            (StatusCode::OK, [("content-type", "text/event-stream")], text).into_response()
        }
        _ => axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}})).into_response(),
    }
}

trait TaskReply {
    fn into_response_task(self, method: &str) -> Response;
}

impl TaskReply for Response {
    fn into_response_task(self, _method: &str) -> Response {
        self
    }
}

/// GetTask answers the bare Task, not `{"task": …}`.
async fn upstream_entry(state: State<Arc<Fake>>, headers: HeaderMap, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let id = request["id"].clone();
    let answer = |result: Value| {
        axum::Json(json!({"jsonrpc": "2.0", "id": id.clone(), "result": result})).into_response()
    };
    match (
        state.behavior,
        request["method"].as_str().unwrap_or_default(),
    ) {
        (Upstream::AsksInput, "GetTask") => {
            state.calls.fetch_add(1, Ordering::SeqCst);
            return answer(task("t-1", "TASK_STATE_INPUT_REQUIRED", vec![]));
        }
        (Upstream::AsksInput, "SendMessage") => {
            state.calls.fetch_add(1, Ordering::SeqCst);
            let follow_up = request.pointer("/params/message/taskId").is_some();
            return answer(json!({"task": if follow_up {
                final_task(Upstream::Valid)
            } else {
                task("t-1", "TASK_STATE_INPUT_REQUIRED", vec![])
            }}));
        }
        (_, "CancelTask") => {
            state.calls.fetch_add(1, Ordering::SeqCst);
            // Canceled, with a result Artifact it may not show.
            return answer(task(
                "t-1",
                "TASK_STATE_CANCELED",
                vec![
                    artifact("o-1", KIND, record()),
                    artifact("r-1", SKILL, result("condition_met")),
                ],
            ));
        }
        (_, "ListTasks") => {
            state.calls.fetch_add(1, Ordering::SeqCst);
            return answer(
                json!({"tasks": [final_task(state.behavior)], "nextPageToken": "", "pageSize": 1, "totalSize": 1}),
            );
        }
        _ => {}
    }
    if request["method"] == "GetTask" {
        state.calls.fetch_add(1, Ordering::SeqCst);
        return axum::Json(
            json!({"jsonrpc": "2.0", "id": request["id"], "result": final_task(state.behavior)}),
        )
        .into_response();
    }
    upstream_rpc(state, headers, body).await
}

async fn start_upstream(behavior: Upstream) -> Arc<Fake> {
    let make = |url| {
        Arc::new(Fake {
            behavior,
            calls: AtomicUsize::new(0),
            url,
        })
    };
    serve_upstream(make, axum::routing::post(upstream_entry)).await
}

type Running = Front<Fake>;

async fn start(behavior: Upstream, configure: impl FnOnce(&mut Settings)) -> Running {
    start_with(behavior, bundle_path().clone(), configure).await
}

async fn start_with(
    behavior: Upstream,
    bundle: PathBuf,
    configure: impl FnOnce(&mut Settings),
) -> Running {
    let upstream = start_upstream(behavior).await;
    let url = upstream.url.clone();
    Front::start(upstream, &url, bundle, configure).await
}

async fn send(url: &str, data: Value) -> Value {
    rpc(url, "SendMessage", json!({"message": message(data)}), true)
        .await
        .0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valid_request_is_forwarded_and_its_checked_result_delivered() {
    let gw = start(Upstream::Valid, |_| {}).await;
    let (answer, headers) = rpc(
        &gw.url,
        "SendMessage",
        json!({"message": message(request_object())}),
        true,
    )
    .await;
    let task = &answer["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{answer}");
    let names: Vec<&str> = task["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [KIND, SKILL]);
    // The SDK writes a unary answer through protobuf's Struct (42 as 42.0): the
    // gateway gives whole numbers back as integers, as the upstream wrote them.
    assert_eq!(
        task["artifacts"][1]["parts"][0]["data"]["result"]["observed_value"],
        json!(42)
    );
    assert_eq!(task["artifacts"][0]["parts"][0]["data"]["value"], json!(42));
    assert_eq!(headers.get("a2a-extensions").unwrap(), URI);
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 1);
    // GetTask shows the same Task.
    let (got, _) = rpc(&gw.url, "GetTask", json!({"id": "t-1"}), true).await;
    assert_eq!(state(&got["result"]), "TASK_STATE_COMPLETED", "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_before_the_upstream_sees_it() {
    let gw = start(Upstream::Valid, |_| {}).await;
    let mut invalid = request_object();
    invalid["arguments"]["condition"]["threshold"] = json!(SECRET);
    let mut stale = request_object();
    stale["interface_digest"] = json!(format!("sha256:{}", "0".repeat(64)));
    let mut extra = request_object();
    extra["unexpected"] = json!(1);
    let unadvertised = json!({"skill": "no_such_skill", "skill_version": "1.0", "arguments": {}});
    for (data, code) in [
        (invalid, "input_invalid"),
        (stale, "interface_mismatch"),
        (extra, "input_invalid"),
        (unadvertised, "skill_not_advertised"),
    ] {
        let answer = send(&gw.url, data).await;
        let task = &answer["result"]["task"];
        assert_eq!(state(task), "TASK_STATE_REJECTED", "{code}: {answer}");
        assert_eq!(error_code(task), code, "{answer}");
        assert!(!answer.to_string().contains(SECRET), "{answer}");
    }
    // A request object beside another Part is checked, not passed on.
    let two_parts = json!({"messageId": "m-2", "role": "ROLE_USER", "parts": [{"data": request_object()}, {"text": "hi"}]});
    let (answer, _) = rpc(&gw.url, "SendMessage", json!({"message": two_parts}), true).await;
    assert_eq!(
        error_code(&answer["result"]["task"]),
        "input_invalid",
        "{answer}"
    );
    // describe_skill is answered from the bundle.
    let answer = send(
        &gw.url,
        json!({"skill": "describe_skill", "arguments": {"skill_id": SKILL}}),
    )
    .await;
    let task = &answer["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED");
    assert_eq!(task["artifacts"][0]["name"], "describe_skill");
    // GetTask shows the same describe_skill Task, answered from the bundle again.
    let (got, _) = rpc(&gw.url, "GetTask", json!({"id": task["id"]}), true).await;
    assert_eq!(
        got["result"]["artifacts"][0]["parts"][0]["data"]["result"]["interface_digest"],
        task["artifacts"][0]["parts"][0]["data"]["result"]["interface_digest"],
        "{got}"
    );
    assert!(
        got["result"]["artifacts"][0]["parts"][0]["data"]["result"]["interface_digest"].is_string()
    );
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_that_are_not_i_json_or_too_large_are_refused_by_the_binding() {
    let gw = start(Upstream::Valid, |s| s.requests.max_body_bytes = 4096).await;
    let client = reqwest::Client::new();
    let dup = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"a","messageId":"b","role":"ROLE_USER","parts":[]}}}"#;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"{}","role":"ROLE_USER","parts":[]}}}}}}"#,
        "x".repeat(5000)
    );
    for (body, code) in [(dup.to_string(), -32700), (big, -32600)] {
        let answer: Value = client
            .post(format!("{}/", gw.url))
            .header("A2A-Version", "1.0")
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(answer["error"]["code"], json!(code), "{answer}");
        assert!(!answer.to_string().contains("messageId"), "{answer}");
    }
    let rest = client
        .post(format!("{}/message:send", gw.url))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body(dup)
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 400);
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 0);
}

/// One HTTP/1.1 exchange as a plain client makes it (the whole request, then read):
/// status, headers (lower-case names), body.
async fn raw_exchange(
    conn: &mut tokio::net::TcpStream,
    head: &str,
    body: &[u8],
) -> (u16, std::collections::HashMap<String, String>, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    conn.write_all(format!("{head}\r\n").as_bytes())
        .await
        .unwrap();
    conn.write_all(body).await.unwrap();
    let mut data = Vec::new();
    let mut buf = vec![0u8; 65536];
    let end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = conn.read(&mut buf).await.expect("an answer, not a reset");
        assert!(n > 0, "the connection ended before an answer");
        data.extend_from_slice(&buf[..n]);
    };
    let (status, headers) = crate::common::response_head(&data[..end]);
    let headers: std::collections::HashMap<String, String> = headers.into_iter().collect();
    let mut rest = data[end + 4..].to_vec();
    let length: usize = headers["content-length"].parse().unwrap();
    while rest.len() < length {
        let n = conn.read(&mut buf).await.expect("an answer, not a reset");
        assert!(n > 0, "the connection ended inside an answer");
        rest.extend_from_slice(&buf[..n]);
    }
    (status, headers, rest)
}

/// A client writes its whole body before it reads. Were the gateway to answer and close
/// while the body was still arriving, the client's kernel would reset the connection and
/// the answer would be lost (now and then, as timing goes). A body up to twice the limit
/// is read to its end instead: the answer arrives every time and the connection is kept.
/// A client that asks `Expect: 100-continue` is answered without sending its body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_body_is_read_to_its_end_so_the_answer_arrives() {
    let gw = start(Upstream::Valid, |s| s.requests.max_body_bytes = 4096).await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"{}","role":"ROLE_USER","parts":[]}}}}}}"#,
        "x".repeat(6000)
    );
    let addr = gw.url.trim_start_matches("http://").to_string();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n"
    );
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    for chunked in [false, true] {
        for _ in 0..10 {
            let (framing, body) = if chunked {
                let mut b = Vec::new();
                for part in big.as_bytes().chunks(1000) {
                    b.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
                    b.extend_from_slice(part);
                    b.extend_from_slice(b"\r\n");
                }
                b.extend_from_slice(b"0\r\n\r\n");
                ("Transfer-Encoding: chunked\r\n".to_string(), b)
            } else {
                (
                    format!("Content-Length: {}\r\n", big.len()),
                    big.clone().into_bytes(),
                )
            };
            let (status, headers, answer) =
                raw_exchange(&mut conn, &format!("{head}{framing}"), &body).await;
            assert_eq!(status, 200);
            assert_ne!(
                headers.get("connection").map(String::as_str),
                Some("close"),
                "{headers:?}"
            );
            let answer: Value = serde_json::from_slice(&answer).unwrap();
            assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
        }
    }
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let huge = "Content-Length: 1000000\r\nExpect: 100-continue\r\n";
    let (status, headers, answer) = raw_exchange(&mut conn, &format!("{head}{huge}"), b"").await;
    assert_eq!(status, 200);
    assert_eq!(
        headers.get("connection").map(String::as_str),
        Some("close"),
        "{headers:?}"
    );
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_bad_output_fails_the_task_with_nothing_invalid_shown() {
    for behavior in [
        Upstream::TwoResults,
        Upstream::UndeclaredRecord,
        Upstream::InvalidRecord,
        Upstream::InvalidResult,
    ] {
        let gw = start(behavior, |_| {}).await;
        for stream in [false, true] {
            let method = if stream {
                "SendStreamingMessage"
            } else {
                "SendMessage"
            };
            let (answer, _) = rpc(
                &gw.url,
                method,
                json!({"message": message(request_object())}),
                true,
            )
            .await;
            let text = answer.to_string();
            assert!(!text.contains(SECRET), "{behavior:?}: {text}");
            let last = if stream {
                answer
                    .as_array()
                    .unwrap_or_else(|| panic!("{answer}"))
                    .last()
                    .unwrap()["result"]["statusUpdate"]
                    .clone()
            } else {
                answer["result"]["task"].clone()
            };
            assert_eq!(
                state(&last),
                "TASK_STATE_FAILED",
                "{behavior:?} stream={stream}: {text}"
            );
            assert_eq!(error_code(&last), "output_invalid", "{behavior:?}: {text}");
            if !stream {
                // No primary result is ever shown.
                let shown = last["artifacts"].as_array().cloned().unwrap_or_default();
                assert!(shown.iter().all(|a| a["name"] != SKILL), "{text}");
            }
        }
        // GetTask shows the failure too.
        let (got, _) = rpc(&gw.url, "GetTask", json!({"id": "t-1"}), true).await;
        assert_eq!(
            state(&got["result"]),
            "TASK_STATE_FAILED",
            "{behavior:?}: {got}"
        );
        // The two sends; GetTask may be answered from what the stream decided.
        assert!((2..=3).contains(&gw.upstream.calls.load(Ordering::SeqCst)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_raises_is_slow_or_endless_fails_the_task_with_a_fixed_text() {
    for behavior in [Upstream::Raises, Upstream::Slow, Upstream::EndlessBody] {
        let gw = start(behavior, |_| {}).await;
        let started = std::time::Instant::now();
        let answer = send(&gw.url, request_object()).await;
        let task = &answer["result"]["task"];
        assert_eq!(state(task), "TASK_STATE_FAILED", "{behavior:?}: {answer}");
        assert!(!answer.to_string().contains(SECRET), "{answer}");
        assert_eq!(
            task.pointer("/status/message/parts/0/text")
                .and_then(Value::as_str),
            Some(gateway::view::UPSTREAM_FAILURE)
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{behavior:?} took {:?}",
            started.elapsed()
        );
        // GetTask answers the gateway's decision, not the upstream's late answer.
        let id = task["id"].as_str().unwrap();
        let (got, _) = rpc(&gw.url, "GetTask", json!({"id": id}), true).await;
        assert_eq!(state(&got["result"]), "TASK_STATE_FAILED", "{got}");
        // And nothing more goes into it: not passed on as a base request.
        let calls = gw.upstream.calls.load(Ordering::SeqCst);
        let into = json!({"messageId": "m-4", "role": "ROLE_USER", "taskId": id, "parts": [{"text": "more"}]});
        let (answer, _) = rpc(&gw.url, "SendMessage", json!({"message": into}), true).await;
        assert_eq!(answer["error"]["code"], json!(-32004), "{answer}");
        assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), calls);
    }
    let gw = start(Upstream::EndlessStream, |_| {}).await;
    let (answer, _) = rpc(
        &gw.url,
        "SendStreamingMessage",
        json!({"message": message(request_object())}),
        true,
    )
    .await;
    let last = &answer.as_array().unwrap().last().unwrap()["result"];
    assert_eq!(state(&last["statusUpdate"]), "TASK_STATE_FAILED", "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base_requests_pass_through_unless_the_extension_is_required() {
    let gw = start(Upstream::Echo, |_| {}).await;
    let plain = json!({"messageId": "m-3", "role": "ROLE_USER", "parts": [{"text": "hello"}]});
    let (answer, headers) = rpc(&gw.url, "SendMessage", json!({"message": plain}), false).await;
    assert_eq!(
        answer["result"]["message"]["parts"][0]["text"], "echo",
        "{answer}"
    );
    assert!(headers.get("a2a-extensions").is_none());
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 1);
    // Not activated, but a skill request object: never passed on.
    let (answer, _) = rpc(
        &gw.url,
        "SendMessage",
        json!({"message": message(request_object())}),
        false,
    )
    .await;
    assert_eq!(
        state(&answer["result"]["task"]),
        "TASK_STATE_REJECTED",
        "{answer}"
    );
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 1);

    let strict = start(Upstream::Echo, |s| s.require_extension = true).await;
    let (answer, _) = rpc(&strict.url, "SendMessage", json!({"message": plain}), false).await;
    assert_eq!(answer["error"]["code"], json!(-32008), "{answer}");
    let card: Value = card_of(&strict.url).await;
    let ext = card["capabilities"]["extensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["uri"] == URI)
        .unwrap()
        .clone();
    assert_eq!(ext["required"], json!(true));
    assert_eq!(strict.upstream.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_json_binding_checks_the_same_way() {
    let gw = start(Upstream::Valid, |_| {}).await;
    let client = reqwest::Client::new();
    let post = |data: Value| {
        client
            .post(format!("{}/message:send", gw.url))
            .header("A2A-Version", "1.0")
            .header("A2A-Extensions", URI)
            .header("Content-Type", "application/json")
            .body(json!({"message": message(data)}).to_string())
            .send()
    };
    let ok: Value = post(request_object()).await.unwrap().json().await.unwrap();
    assert_eq!(state(&ok["task"]), "TASK_STATE_COMPLETED", "{ok}");
    assert_eq!(
        ok["task"]["artifacts"][1]["parts"][0]["data"]["result"]["observed_value"],
        json!(42),
        "{ok}"
    );
    let mut invalid = request_object();
    invalid["arguments"] = json!({});
    let refused: Value = post(invalid).await.unwrap().json().await.unwrap();
    assert_eq!(error_code(&refused["task"]), "input_invalid", "{refused}");
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 1);
    let card: Value = card_of(&gw.url).await;
    let bindings: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "HTTP+JSON"]);
    let metrics = reqwest::get(format!("{}/metrics", gw.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("skillbundle_gateway_refusals_total{code=\"input_invalid\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "skillbundle_gateway_requests_total{binding=\"http+json\",method=\"SendMessage\"} 2"
        ),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_shows_complete_records_at_once_and_the_result_with_the_completion() {
    let gw = start(Upstream::Valid, |_| {}).await;
    let (events, _) = rpc(
        &gw.url,
        "SendStreamingMessage",
        json!({"message": message(request_object())}),
        true,
    )
    .await;
    let kinds: Vec<String> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let r = &e["result"];
            if let Some(a) = r.get("artifactUpdate") {
                format!("artifact:{}", a["artifact"]["name"].as_str().unwrap())
            } else if let Some(s) = r.get("statusUpdate") {
                format!("status:{}", state(s))
            } else if let Some(t) = r.get("task") {
                format!("task:{}", state(t))
            } else {
                format!("other:{r}")
            }
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "task:TASK_STATE_SUBMITTED".to_string(),
            format!("artifact:{KIND}"),
            format!("artifact:{SKILL}"),
            "status:TASK_STATE_COMPLETED".to_string(),
        ],
        "{events}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdks_own_errors_repeat_nothing_the_caller_sent() {
    let gw = start(Upstream::Valid, |_| {}).await;
    let (answer, _) = rpc(&gw.url, SECRET, json!({}), true).await;
    assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
    let (answer, _) = rpc(
        &gw.url,
        "SendMessage",
        json!({"message": {"role": SECRET}}),
        true,
    )
    .await;
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    assert!(!answer.to_string().contains(SECRET), "{answer}");
    let rest = reqwest::Client::new()
        .post(format!("{}/message:send", gw.url))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body(json!({"message": {"role": SECRET, SECRET: 1}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 400);
    let text = rest.text().await.unwrap();
    assert!(!text.contains(SECRET), "{text}");
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_serves_a_newer_bundle_and_refuses_a_rollback() {
    let ws = common::workspace();
    let built = common::run(&["build", "."], ws.path());
    assert_eq!(built.status, 0, "{}", built.stderr);
    let yaml = ws.path().join("skillbundle.yaml");
    let text = common::read(&yaml).replace("version: \"0.1.0\"}", "version: \"0.2.0\"}");
    common::write(&yaml, text);
    let built = common::run(&["build", "."], ws.path());
    assert_eq!(built.status, 0, "{}", built.stderr);
    let dist = ws.path().join("dist");
    let served = ws.path().join("served.tar.gz");
    std::fs::copy(dist.join("example-network-skills-0.1.0.tar.gz"), &served).unwrap();
    let gw = start_with(Upstream::Valid, served.clone(), |_| {}).await;
    let version = |url: String| async move {
        let card: Value = reqwest::get(format!("{url}/.well-known/agent-card.json"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        card["version"].as_str().unwrap().to_string()
    };
    assert_eq!(version(gw.url.clone()).await, "0.1.0");
    std::fs::copy(dist.join("example-network-skills-0.2.0.tar.gz"), &served).unwrap();
    gw.gateway.reload().await;
    assert_eq!(version(gw.url.clone()).await, "0.2.0");
    // Back to the older bundle: refused, the newer one stays.
    std::fs::copy(dist.join("example-network-skills-0.1.0.tar.gz"), &served).unwrap();
    gw.gateway.reload().await;
    assert_eq!(version(gw.url.clone()).await, "0.2.0");
    let metrics = reqwest::get(format!("{}/metrics", gw.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("skillbundle_gateway_reloads_total{outcome=\"loaded\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("skillbundle_gateway_reloads_total{outcome=\"refused\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("version=\"0.2.0\""), "{metrics}");
    // Requests go on against the new bundle.
    let answer = send(&gw.url, request_object()).await;
    assert_eq!(
        state(&answer["result"]["task"]),
        "TASK_STATE_COMPLETED",
        "{answer}"
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_from_a_file_checks_the_release_statement_as_the_start_did() {
    let ws = common::workspace();
    let ok = |r: common::Run| assert_eq!(r.status, 0, "{}", r.stderr);
    ok(common::run(&["keygen", "--out", "keys/release"], ws.path()));
    let build = &[
        "build",
        ".",
        "--sign-key",
        "keys/release.key",
        "--expires",
        "30d",
    ];
    ok(common::run(build, ws.path()));
    let yaml = ws.path().join("skillbundle.yaml");
    let text = common::read(&yaml).replace("version: \"0.1.0\"}", "version: \"0.2.0\"}");
    common::write(&yaml, text);
    ok(common::run(build, ws.path()));
    let dist = ws.path().join("dist");
    let file =
        |version: &str, ext: &str| dist.join(format!("example-network-skills-{version}{ext}"));
    let served = ws.path().join("served.tar.gz");
    let statement = ws.path().join("served.release.json");
    std::fs::copy(file("0.1.0", ".tar.gz"), &served).unwrap();
    std::fs::copy(file("0.1.0", ".release.json"), &statement).unwrap();
    let key =
        skillbundle::crypto::keys::PublicKey::read_file(&ws.path().join("keys/release.jwk.json"))
            .unwrap();
    let upstream = start_upstream(Upstream::Valid).await;
    let source = BundleSource::File {
        path: served.clone(),
        release: None,
        max_age: None,
    };
    let (url, _stop, gw) =
        serve_source(&upstream.url, source, TrustedKeys::new(vec![key]), |_| {}).await;
    let version = || async { card_of(&url).await["version"].as_str().unwrap().to_string() };
    assert_eq!(version().await, "0.1.0");
    // A newer signed bundle without its statement: refused, 0.1.0 stays.
    std::fs::copy(file("0.2.0", ".tar.gz"), &served).unwrap();
    std::fs::remove_file(&statement).unwrap();
    gw.reload().await;
    assert_eq!(version().await, "0.1.0");
    // With the statement of another bundle (0.1.0's): refused.
    std::fs::copy(file("0.1.0", ".release.json"), &statement).unwrap();
    gw.reload().await;
    assert_eq!(version().await, "0.1.0");
    // With its own statement: served.
    std::fs::copy(file("0.2.0", ".release.json"), &statement).unwrap();
    gw.reload().await;
    assert_eq!(version().await, "0.2.0");
    let metrics = reqwest::get(format!("{url}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("skillbundle_gateway_reloads_total{outcome=\"refused\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("skillbundle_gateway_reloads_total{outcome=\"loaded\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_logs_json_lines_and_exits_0_on_sigterm() {
    use std::io::Read;
    let upstream = start_upstream(Upstream::Valid).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_skillbundle"))
        .args(["serve", "--bundle"])
        .arg(bundle_path())
        .args(["--allow-unsigned", "--upstream", &upstream.url, "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["--shutdown-grace", "2s"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let mut ready = false;
    for _ in 0..300 {
        if let Ok(r) = reqwest::get(format!("{url}/readyz")).await {
            if r.status() == 200 {
                ready = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ready, "the gateway never became ready");
    let mut invalid = request_object();
    invalid["arguments"]["resource_id"] = json!(7);
    invalid["arguments"]["condition"]["unit"] = json!(SECRET);
    let answer = send(&url, invalid).await;
    assert_eq!(
        state(&answer["result"]["task"]),
        "TASK_STATE_REJECTED",
        "{answer}"
    );
    // SAFETY: a plain kill(2) of the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no exit after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status.code(), Some(0));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains(SECRET), "{stderr}");
    let events: Vec<String> = stderr
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}"));
            assert!(v["ts"].is_string(), "{l}");
            v["event"].as_str().unwrap().to_string()
        })
        .collect();
    for event in ["listening", "upstream_ready", "decided", "shutting_down"] {
        assert!(
            events.iter().any(|e| e == event),
            "{event} not in {events:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_reaches_the_upstream_unchecked_and_the_final_result_is_checked() {
    let gw = start(Upstream::AsksInput, |_| {}).await;
    let first = send(&gw.url, request_object()).await;
    let task = &first["result"]["task"];
    assert_eq!(state(task), "TASK_STATE_INPUT_REQUIRED", "{first}");
    // The follow-up carries only the requested data: no schema applies to it.
    let follow_up = json!({"messageId": "m-9", "role": "ROLE_USER", "taskId": "t-1", "parts": [{"data": {"credential_ref": "vault:abc"}}]});
    let (answer, _) = rpc(&gw.url, "SendMessage", json!({"message": follow_up}), true).await;
    assert_eq!(
        state(&answer["result"]["task"]),
        "TASK_STATE_COMPLETED",
        "{answer}"
    );
    // A new skill request object into the existing Task is refused through the binding.
    let into_task = json!({"messageId": "m-10", "role": "ROLE_USER", "taskId": "t-1", "parts": [{"data": request_object()}]});
    let (answer, _) = rpc(&gw.url, "SendMessage", json!({"message": into_task}), true).await;
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    assert_eq!(
        answer["error"]["data"][0]["metadata"]["code"], "input_invalid",
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_cancel_show_only_what_the_guard_allows() {
    let gw = start(Upstream::InvalidResult, |_| {}).await;
    send(&gw.url, request_object()).await;
    let (list, _) = rpc(&gw.url, "ListTasks", json!({}), true).await;
    let listed = &list["result"]["tasks"][0];
    assert_eq!(state(listed), "TASK_STATE_FAILED", "{list}");
    assert!(!list.to_string().contains(SECRET), "{list}");
    let (canceled, _) = rpc(&gw.url, "CancelTask", json!({"id": "t-1"}), true).await;
    let task = &canceled["result"];
    assert_eq!(state(task), "TASK_STATE_CANCELED", "{canceled}");
    let names: Vec<&str> = task["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [KIND],
        "a canceled Task shows its valid records, never a result"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_and_depth_limits_refuse_before_the_upstream() {
    let gw = start(Upstream::Slow, |s| {
        s.requests.max_concurrency = 1;
        s.requests.max_depth = 16;
    })
    .await;
    let url = gw.url.clone();
    let slow = tokio::spawn(async move { send(&url, request_object()).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let busy = reqwest::Client::new()
        .post(format!("{}/", gw.url))
        .header("A2A-Version", "1.0")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(busy.status(), 503);
    slow.await.unwrap();
    let mut deep = json!(1);
    for _ in 0..40 {
        deep = json!([deep]);
    }
    let mut request = request_object();
    request["arguments"]["resource_id"] = deep;
    let (answer, _) = rpc(
        &gw.url,
        "SendMessage",
        json!({"message": message(request)}),
        true,
    )
    .await;
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    assert_eq!(
        answer["error"]["data"][0]["metadata"]["code"], "resource_limit_exceeded",
        "{answer}"
    );
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_merges_base_and_bundle_with_the_gateways_interfaces_and_is_signed() {
    let upstream = start_upstream(Upstream::Valid).await;
    let key = skillbundle::crypto::keys::SigningKeyPair::generate().unwrap();
    let trust = TrustedKeys::new(vec![]).and_allow_unsigned();
    let source = BundleSource::File {
        path: bundle_path().clone(),
        release: None,
        max_age: None,
    };
    let (bundle, digest) = gateway::load_bundle(&source, &trust).await.unwrap();
    let base: Value = serde_json::from_str(&common::read(
        &common::example_skills().join("agent-card.json"),
    ))
    .unwrap();
    let card = CardSettings {
        base: Some(base),
        public_url: "https://gateway.example".into(),
        sign_keys: vec![key.clone()],
    };
    let gw = Gateway::new(
        Settings::default(),
        source,
        trust,
        bundle,
        digest,
        card,
        Arc::new(|_| {}),
    )
    .unwrap();
    let card = gw.loaded().card.clone();
    assert_eq!(card["name"], "Network agent");
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        "https://gateway.example/"
    );
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(
        skills.contains(&"describe_skill") && skills.contains(&SKILL),
        "{skills:?}"
    );
    skillbundle::card::signature::verify(&card, &[key.public_key()])
        .expect("signed by the --card-sign-key");
    drop(upstream);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skillbundle_call_and_probe_pass_through_the_gateway() {
    let gw = start(Upstream::Valid, |_| {}).await;
    let dir = tempfile::tempdir().unwrap();
    let args = dir.path().join("args.json");
    common::write(&args, request_object()["arguments"].to_string());
    let url = gw.url.clone();
    let (call, probe) = tokio::task::spawn_blocking(move || {
        let call = std::process::Command::new(env!("CARGO_BIN_EXE_skillbundle"))
            .args(["call", &url, SKILL, "--arguments"])
            .arg(&args)
            .output()
            .unwrap();
        let probe = std::process::Command::new(env!("CARGO_BIN_EXE_skillbundle"))
            .args(["probe", &url])
            .output()
            .unwrap();
        (call, probe)
    })
    .await
    .unwrap();
    let text = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert_eq!(call.status.code(), Some(0), "{}", text(&call));
    assert!(text(&call).contains("condition_met"), "{}", text(&call));
    assert_eq!(probe.status.code(), Some(0), "{}", text(&probe));
}

/// A valid request object for manage_interface_config, whose document declares
/// `supported_response_modes: [sync, push]` and `cancellable: false`.
fn config_request() -> Value {
    let trust = TrustedKeys::new(vec![]).and_allow_unsigned();
    let b = Bundle::open_path(bundle_path(), &trust).unwrap();
    let doc = b.document("manage_interface_config").unwrap();
    json!({
        "skill": "manage_interface_config",
        "skill_version": doc.skill_version.to_string(),
        "interface_digest": doc.digest.as_str(),
        "arguments": {"operation": "read", "device": "core-2", "interface": "xe-0/0/3"},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_a_skill_does_not_declare_are_refused_before_the_upstream() {
    let gw = start(Upstream::AsksInput, |_| {}).await;
    let calls = || gw.upstream.calls.load(Ordering::SeqCst);
    let no_stream = "manage_interface_config does not support this SendStreamingMessage request";
    // A stream of a skill without `stream`: A2A's UnsupportedOperationError, on both
    // bindings; nothing reaches the upstream.
    let (streamed, _) = rpc(
        &gw.url,
        "SendStreamingMessage",
        json!({"message": message(config_request())}),
        true,
    )
    .await;
    let streamed = streamed.as_array().map_or(&streamed, |e| &e[0]).clone();
    assert_eq!(streamed["error"]["code"], json!(-32004), "{streamed}");
    assert!(
        streamed["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with(no_stream),
        "{streamed}"
    );
    let rest = reqwest::Client::new()
        .post(format!("{}/message:stream", gw.url))
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", URI)
        .header("Content-Type", "application/json")
        .body(json!({"message": message(config_request())}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(rest.status(), 400);
    let rest: Value = rest.json().await.unwrap();
    assert_eq!(rest["error"]["status"], "FAILED_PRECONDITION", "{rest}");
    assert!(rest.to_string().contains("UNSUPPORTED_OPERATION"), "{rest}");
    assert!(
        rest["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with(no_stream),
        "{rest}"
    );
    // A push config, for a skill without `push` (evaluate_resource_condition: sync,
    // stream) or with it: the gateway offers no push notifications at all (its card
    // says so), which A2A answers with PushNotificationNotSupportedError.
    let push = json!({"url": "https://caller.example/hook"});
    for (request, code) in [(request_object(), -32003), (config_request(), -32003)] {
        let (answer, _) = rpc(
            &gw.url,
            "SendMessage",
            json!({"message": message(request), "configuration": {"taskPushNotificationConfig": push}}),
            true,
        )
        .await;
        assert_eq!(answer["error"]["code"], json!(code), "{answer}");
    }
    assert_eq!(calls(), 0);
    // Returning at once is allowed when the skill has a way to deliver later (push).
    let (first, _) = rpc(
        &gw.url,
        "SendMessage",
        json!({"message": message(config_request()), "configuration": {"returnImmediately": true}}),
        true,
    )
    .await;
    assert_eq!(
        state(&first["result"]["task"]),
        "TASK_STATE_INPUT_REQUIRED",
        "{first}"
    );
    assert_eq!(calls(), 1);
    // `cancellable: false`: TaskNotCancelableError, and the upstream is not asked to
    // cancel; nor to stream the Task.
    let (canceled, _) = rpc(&gw.url, "CancelTask", json!({"id": "t-1"}), true).await;
    assert_eq!(canceled["error"]["code"], json!(-32002), "{canceled}");
    assert_eq!(
        canceled["error"]["message"],
        "a Task of manage_interface_config cannot be canceled: its Skill Interface Document declares cancellable false"
    );
    let (subscribed, _) = rpc(&gw.url, "SubscribeToTask", json!({"id": "t-1"}), true).await;
    let subscribed = subscribed.as_array().map_or(&subscribed, |e| &e[0]).clone();
    assert_eq!(subscribed["error"]["code"], json!(-32004), "{subscribed}");
    assert_eq!(calls(), 1);
    // A streaming follow-up is a stream too: only the Task is read (GetTask), nothing is sent.
    let follow_up = json!({"messageId": "m-9", "role": "ROLE_USER", "taskId": "t-1", "parts": [{"data": {"credential_ref": "vault:abc"}}]});
    let (answer, _) = rpc(
        &gw.url,
        "SendStreamingMessage",
        json!({"message": follow_up}),
        true,
    )
    .await;
    let answer = answer.as_array().map_or(&answer, |e| &e[0]).clone();
    assert_eq!(answer["error"]["code"], json!(-32004), "{answer}");
    assert_eq!(calls(), 2);
    assert!(!answer.to_string().contains("vault"), "{answer}");
    let metrics = reqwest::get(format!("{}/metrics", gw.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("skillbundle_gateway_refusals_total{code=\"task_not_cancelable\"} 1"),
        "{metrics}"
    );
}

/// The gateway's card says `capabilities.pushNotifications: false`, so no request may
/// leave a push-notification config with it, whatever the request is: A2A's
/// `PushNotificationNotSupportedError` (-32003) for a send that carries one (a base
/// request, a follow-up, describe_skill, a governed request whose skill declares
/// `push`) and for every push-config method, on both bindings, blocking and streaming,
/// and the upstream is never called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_configs_are_refused_as_the_card_says_and_never_reach_the_upstream() {
    let gw = start(Upstream::Valid, |_| {}).await;
    let card: Value = card_of(&gw.url).await;
    assert_eq!(
        card["capabilities"]["pushNotifications"],
        json!(false),
        "{card}"
    );
    let push = json!({"url": "https://caller.example/hook", "token": SECRET});
    let base = json!({"question": "anything"});
    let describe = json!({"skill": "describe_skill", "arguments": {"skill_id": SKILL}});
    let follow_up = json!({"messageId": "m-2", "role": "ROLE_USER", "taskId": "t-1", "parts": [{"text": "more"}]});
    let sends = [
        (message(base.clone()), false),
        (message(base), true),
        (message(describe), true),
        (message(config_request()), true),
        (follow_up, false),
    ];
    let client = reqwest::Client::new();
    for (msg, activate) in &sends {
        let params = json!({"message": msg, "configuration": {"taskPushNotificationConfig": push}});
        for method in ["SendMessage", "SendStreamingMessage"] {
            let (answer, _) = rpc(&gw.url, method, params.clone(), *activate).await;
            let answer = answer.as_array().map_or(&answer, |e| &e[0]).clone();
            assert_eq!(
                answer["error"]["code"],
                json!(-32003),
                "{method} {msg}: {answer}"
            );
            assert!(!answer.to_string().contains(SECRET), "{answer}");
        }
        for path in ["/message:send", "/message:stream"] {
            let mut request = client
                .post(format!("{}{path}", gw.url))
                .header("A2A-Version", "1.0")
                .header("Content-Type", "application/json")
                .body(params.to_string());
            if *activate {
                request = request.header("A2A-Extensions", URI);
            }
            let response = request.send().await.unwrap();
            let status = response.status();
            let text = response.text().await.unwrap();
            assert!(status.is_client_error(), "{path} {msg}: {status} {text}");
            assert!(
                text.contains("PUSH_NOTIFICATION_NOT_SUPPORTED"),
                "{path} {msg}: {text}"
            );
            assert!(!text.contains(SECRET), "{text}");
        }
    }
    // The push-config methods, on both bindings.
    let config = json!({"taskId": "t-1", "url": "https://caller.example/hook", "token": SECRET});
    for (method, params) in [
        ("CreateTaskPushNotificationConfig", config.clone()),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": "t-1", "id": "c-1"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": "t-1"})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": "t-1", "id": "c-1"}),
        ),
    ] {
        let (answer, _) = rpc(&gw.url, method, params, true).await;
        assert_eq!(answer["error"]["code"], json!(-32003), "{method}: {answer}");
    }
    let configs = format!("{}/tasks/t-1/pushNotificationConfigs", gw.url);
    for request in [
        client.post(&configs).body(config.to_string()),
        client.get(format!("{configs}/c-1")),
        client.get(&configs),
        client.delete(format!("{configs}/c-1")),
    ] {
        let response = request
            .header("A2A-Version", "1.0")
            .header("Content-Type", "application/json")
            .send()
            .await
            .unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        assert!(status.is_client_error(), "{status} {text}");
        assert!(text.contains("PUSH_NOTIFICATION_NOT_SUPPORTED"), "{text}");
    }
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), 0);
}

/// What the A2A TCK (`a2aproject/a2a-tck`, 1.0-dev) found the gateway's HTTP+JSON face
/// doing otherwise than A2A 1.0 and a2a-sdk: a CancelTask or SubscribeToTask POST without
/// a body refused as unparsable, no version negotiation, errors as
/// `application/problem+json`, and a card without `ETag` or `Cache-Control`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_json_binding_answers_as_a2a_1_0_says() {
    let gw = start(Upstream::Valid, |_| {}).await;
    let client = reqwest::Client::new();
    let error_of = |body: &Value| body["error"]["details"][0]["reason"].clone();

    // CancelTask and SubscribeToTask have nothing to send: no body is no parse error.
    let post = |op: &str, version: Option<&str>| {
        let mut request = client
            .post(format!("{}/tasks/t-1:{op}", gw.url))
            .header("Content-Type", "application/json");
        if let Some(v) = version {
            request = request.header("A2A-Version", v);
        }
        request.send()
    };
    let cancel = post("cancel", Some("1.0")).await.unwrap();
    assert_eq!(cancel.status(), 200);
    let cancel: Value = cancel.json().await.unwrap();
    assert_eq!(state(&cancel), "TASK_STATE_CANCELED", "{cancel}");
    let subscribe = post("subscribe", Some("1.0")).await.unwrap();
    let subscribe: Value = subscribe.json().await.unwrap();
    assert_ne!(error_of(&subscribe), json!("PARSE_ERROR"), "{subscribe}");
    let upstream_calls = gw.upstream.calls.load(Ordering::SeqCst);

    // Another major version, or none at all (A2A 1.0 reads that as 0.3): refused on
    // every operation before anything reaches the upstream, as an AIP-193 error.
    for version in [Some("99.0"), Some("0.3"), Some(SECRET), None] {
        let mut get = client.get(format!("{}/tasks/t-1", gw.url));
        if let Some(v) = version {
            get = get.header("A2A-Version", v);
        }
        for answer in [
            get.send().await.unwrap(),
            post("cancel", version).await.unwrap(),
        ] {
            assert_eq!(answer.status(), 400, "{version:?}");
            assert_eq!(answer.headers()["content-type"], "application/json");
            let body: Value = answer.json().await.unwrap();
            assert_eq!(error_of(&body), json!("VERSION_NOT_SUPPORTED"), "{body}");
            assert!(!body.to_string().contains(SECRET), "{body}");
        }
    }
    assert_eq!(gw.upstream.calls.load(Ordering::SeqCst), upstream_calls);

    // An error the SDK makes says application/json, as A2A's HTTP+JSON binding does.
    let invalid = client
        .post(format!("{}/message:send", gw.url))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body(json!({"message": {"role": 7}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(invalid.status(), 400);
    assert_eq!(invalid.headers()["content-type"], "application/json");

    // The card: an ETag to ask again with, and how long it may be kept.
    let card_url = format!("{}/.well-known/agent-card.json", gw.url);
    let card = client.get(&card_url).send().await.unwrap();
    assert_eq!(card.headers()["cache-control"], "max-age=60");
    let etag = card.headers()["etag"].to_str().unwrap().to_string();
    let body = card.text().await.unwrap();
    let unchanged = client
        .get(&card_url)
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(unchanged.status(), 304);
    assert_eq!(unchanged.headers()["etag"], etag.as_str());
    let other = client
        .get(&card_url)
        .header("If-None-Match", "\"other\"")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
    assert_eq!(other.text().await.unwrap(), body);
}
