//! `skillbundle serve` in front of an upstream of this test's own that keeps its Tasks,
//! as A2A agents do: Tasks the gateway has forgotten (its index holds one entry here)
//! are still checked on GetTask, ListTasks and SubscribeToTask, or withheld when nothing
//! tells whether they are governed; every upstream call is counted by method.

use crate::gateway_support::{
    artifact, bundle_path, error_code, message, record, request_object, result, rpc,
    serve_upstream, state, Front, KIND, SECRET, SKILL, URI,
};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{json, Value};
use skillbundle::gateway::Settings;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the keeper's governed Tasks end with.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ending {
    /// A record and a valid result.
    Valid,
    /// A result Artifact with an invalid output.
    InvalidResult,
    /// An Artifact of another name, with content no schema allowed.
    Unnamed,
    /// An invalid supporting record while the Task keeps working (it never ends).
    InvalidWhileWorking,
    /// Working, and nothing more (it never ends).
    Stalls,
}

impl Ending {
    fn never_ends(self) -> bool {
        matches!(self, Ending::InvalidWhileWorking | Ending::Stalls)
    }
}

struct Keeper {
    url: String,
    /// The bearer token every request must carry, if any (else HTTP 401).
    token: Option<&'static str>,
    /// The method and headers of every request, in order.
    seen: Mutex<Vec<(String, HeaderMap)>>,
    /// Whether Tasks keep their history (A2A SDKs do).
    keep_history: bool,
    ending: Ending,
    tasks: Mutex<Vec<Value>>,
    calls: Mutex<HashMap<String, usize>>,
}

impl Keeper {
    fn calls(&self, method: &str) -> usize {
        self.calls.lock().unwrap().get(method).copied().unwrap_or(0)
    }

    /// A stored Task as the upstream answers it: governed Tasks have ended with
    /// `ending`, base Tasks with an answer.
    fn answer(&self, stored: &Value, history_length: Option<u64>, artifacts: bool) -> Value {
        let mut task = stored.clone();
        let governed = stored["history"][0]["parts"][0]["data"]["skill"].is_string();
        task["status"] = match (stored["status"]["state"].as_str(), self.ending.never_ends()) {
            (Some("TASK_STATE_CANCELED"), _) => json!({"state": "TASK_STATE_CANCELED"}),
            (_, true) => json!({"state": "TASK_STATE_WORKING"}),
            (_, false) => json!({"state": "TASK_STATE_COMPLETED"}),
        };
        task["artifacts"] = match (governed, self.ending) {
            (false, _) => json!([artifact("b-1", "answer", json!({"text": "base answer"}))]),
            (true, Ending::Valid) => json!([
                artifact("o-1", KIND, record()),
                artifact("r-1", SKILL, result("condition_met"))
            ]),
            (true, Ending::InvalidResult) => json!([artifact("r-1", SKILL, result(SECRET))]),
            (true, Ending::Unnamed) => json!([artifact("d-1", "diary", json!({"x": SECRET}))]),
            (true, Ending::InvalidWhileWorking) => {
                json!([artifact("o-1", KIND, json!({"record_id": SECRET}))])
            }
            (true, Ending::Stalls) => json!([]),
        };
        if !artifacts {
            task.as_object_mut().unwrap().remove("artifacts");
        }
        let history = task["history"].as_array().cloned().unwrap_or_default();
        match (self.keep_history, history_length) {
            (false, _) | (true, Some(0)) => {
                task.as_object_mut().unwrap().remove("history");
            }
            (true, Some(n)) => {
                let skip = history.len().saturating_sub(n as usize);
                task["history"] = Value::Array(history[skip..].to_vec());
            }
            (true, None) => {}
        }
        task
    }
}

async fn keeper_rpc(State(k): State<Arc<Keeper>>, headers: HeaderMap, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap();
    let method = request["method"].as_str().unwrap_or_default().to_string();
    *k.calls.lock().unwrap().entry(method.clone()).or_default() += 1;
    k.seen
        .lock()
        .unwrap()
        .push((method.clone(), headers.clone()));
    if let Some(token) = k.token {
        let bearer = format!("Bearer {token}");
        if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(bearer.as_str()) {
            return (
                axum::http::StatusCode::UNAUTHORIZED,
                [("www-authenticate", "Bearer")],
                "unauthorized",
            )
                .into_response();
        }
    }
    let params = &request["params"];
    let reply = |result: Value| {
        axum::Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).into_response()
    };
    let history_length = params["historyLength"].as_u64();
    match method.as_str() {
        "SendMessage" => {
            let mut tasks = k.tasks.lock().unwrap();
            let id = format!("k-{}", tasks.len() + 1);
            let mut sent = params["message"].clone();
            sent["taskId"] = json!(id);
            sent["contextId"] = json!("ctx");
            let task = json!({"id": id, "contextId": "ctx",
                "status": {"state": "TASK_STATE_WORKING"}, "history": [sent]});
            tasks.push(task.clone());
            if k.ending == Ending::InvalidWhileWorking {
                return reply(json!({"task": k.answer(&task, Some(0), true)}));
            }
            let mut shown = task;
            if !k.keep_history {
                shown.as_object_mut().unwrap().remove("history");
            }
            reply(json!({ "task": shown }))
        }
        "SendStreamingMessage" => {
            let mut tasks = k.tasks.lock().unwrap();
            let id = format!("k-{}", tasks.len() + 1);
            let mut sent = params["message"].clone();
            sent["taskId"] = json!(id);
            sent["contextId"] = json!("ctx");
            let stored = json!({"id": id, "contextId": "ctx",
                "status": {"state": "TASK_STATE_WORKING"}, "history": [sent]});
            tasks.push(stored.clone());
            let done = k.answer(&stored, Some(0), true);
            let mut events = vec![json!({"task": {"id": id, "contextId": "ctx",
                "status": {"state": "TASK_STATE_SUBMITTED"}}})];
            for a in done["artifacts"].as_array().unwrap() {
                events.push(json!({"artifactUpdate": {"taskId": id, "contextId": "ctx",
                    "artifact": a, "lastChunk": true}}));
            }
            events.push(json!({"statusUpdate": {"taskId": id, "contextId": "ctx",
                "status": done["status"]}}));
            let text: String = events
                .into_iter()
                .map(|e| {
                    format!(
                        "data: {}\n\n",
                        json!({"jsonrpc": "2.0", "id": request["id"], "result": e})
                    )
                })
                .collect();
            // A Task that never ends keeps its stream open.
            let open = k.ending.never_ends();
            let body = futures::stream::once(async move {
                Ok::<_, std::io::Error>(axum::body::Bytes::from(text))
            })
            .chain(futures::stream::pending().take_while(move |_| futures::future::ready(open)));
            (
                axum::http::StatusCode::OK,
                [("content-type", "text/event-stream")],
                axum::body::Body::from_stream(body),
            )
                .into_response()
        }
        "GetTask" => {
            let tasks = k.tasks.lock().unwrap();
            match tasks.iter().find(|t| t["id"] == params["id"]) {
                Some(t) => reply(k.answer(t, history_length, true)),
                None => axum::Json(json!({"jsonrpc": "2.0", "id": request["id"],
                    "error": {"code": -32001, "message": "no such task"}}))
                .into_response(),
            }
        }
        "CancelTask" => {
            let mut tasks = k.tasks.lock().unwrap();
            match tasks.iter_mut().find(|t| t["id"] == params["id"]) {
                Some(t) => {
                    t["status"] = json!({"state": "TASK_STATE_CANCELED"});
                    reply(k.answer(t, Some(0), true))
                }
                None => axum::Json(json!({"jsonrpc": "2.0", "id": request["id"],
                    "error": {"code": -32001, "message": "no such task"}}))
                .into_response(),
            }
        }
        "ListTasks" => {
            let tasks = k.tasks.lock().unwrap();
            let artifacts = params["includeArtifacts"] == json!(true);
            let listed: Vec<Value> = tasks
                .iter()
                .map(|t| k.answer(t, history_length, artifacts))
                .collect();
            let n = listed.len();
            reply(json!({"tasks": listed, "nextPageToken": "", "pageSize": n, "totalSize": n}))
        }
        _ => axum::Json(json!({"jsonrpc": "2.0", "id": request["id"],
            "error": {"code": -32601, "message": "no"}}))
        .into_response(),
    }
}

async fn start_keeper(
    keep_history: bool,
    ending: Ending,
    token: Option<&'static str>,
) -> Arc<Keeper> {
    let make = |url| {
        Arc::new(Keeper {
            url,
            token,
            seen: Mutex::new(Vec::new()),
            keep_history,
            ending,
            tasks: Mutex::new(Vec::new()),
            calls: Mutex::new(HashMap::new()),
        })
    };
    serve_upstream(make, axum::routing::post(keeper_rpc)).await
}

/// A gateway that remembers one Task, in front of a keeper.
async fn front(
    keep_history: bool,
    ending: Ending,
    configure: impl FnOnce(&mut Settings),
) -> Front<Keeper> {
    let keeper = start_keeper(keep_history, ending, None).await;
    let url = keeper.url.clone();
    Front::start(keeper, &url, bundle_path().clone(), |s| {
        s.max_tasks = 1;
        configure(s);
    })
    .await
}

/// A governed Task, then a base Task that makes the gateway forget the first: their ids.
async fn governed_then_base(url: &str) -> (String, String) {
    let (governed, _) = rpc(
        url,
        "SendMessage",
        json!({"message": message(request_object())}),
        true,
    )
    .await;
    let governed = governed["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (base, _) = rpc(
        url,
        "SendMessage",
        json!({"message": message(json!({"question": "anything"}))}),
        false,
    )
    .await;
    let base = base["result"]["task"]["id"].as_str().unwrap().to_string();
    (governed, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_governed_task_is_recognised_from_its_history_and_checked() {
    let f = front(true, Ending::InvalidResult, |_| {}).await;
    let (governed, base) = governed_then_base(&f.url).await;
    // The caller asks for no history: the gateway asks the upstream for the whole Task
    // (one call) and recognises the skill request in it.
    let (got, _) = rpc(
        &f.url,
        "GetTask",
        json!({"id": governed, "historyLength": 0}),
        true,
    )
    .await;
    let task = &got["result"];
    assert_eq!(state(task), "TASK_STATE_FAILED", "{got}");
    assert_eq!(error_code(task), "output_invalid", "{got}");
    assert!(task.get("history").is_none(), "{got}");
    assert!(!got.to_string().contains(SECRET), "{got}");
    assert_eq!(f.upstream.calls("GetTask"), 1);
    // ListTasks, no Artifacts asked, no history: the same verdict; the base Task as the
    // upstream has it.
    let (list, _) = rpc(&f.url, "ListTasks", json!({"historyLength": 0}), true).await;
    assert!(!list.to_string().contains(SECRET), "{list}");
    let tasks = list["result"]["tasks"].as_array().unwrap();
    let by_id = |id: &str| tasks.iter().find(|t| t["id"] == id).unwrap();
    assert_eq!(state(by_id(&governed)), "TASK_STATE_FAILED", "{list}");
    assert_eq!(state(by_id(&base)), "TASK_STATE_COMPLETED", "{list}");
    assert!(tasks.iter().all(|t| t.get("artifacts").is_none()), "{list}");
    let (base_task, _) = rpc(&f.url, "GetTask", json!({"id": base}), true).await;
    assert_eq!(
        base_task["result"]["artifacts"][0]["parts"][0]["data"]["text"], "base answer",
        "{base_task}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_valid_task_shows_its_checked_result_with_the_history_asked_for() {
    let f = front(true, Ending::Valid, |_| {}).await;
    let (governed, _) = governed_then_base(&f.url).await;
    let (got, _) = rpc(
        &f.url,
        "GetTask",
        json!({"id": governed, "historyLength": 1}),
        true,
    )
    .await;
    let task = &got["result"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{got}");
    assert_eq!(task["artifacts"].as_array().unwrap().len(), 2, "{got}");
    assert_eq!(task["history"].as_array().unwrap().len(), 1, "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_task_nothing_tells_about_is_withheld_on_every_path() {
    // The upstream keeps no history, and names its Artifact after nothing the bundle
    // declares: the gateway cannot tell a governed Task from a base one.
    let f = front(false, Ending::Unnamed, |_| {}).await;
    let (governed, _) = governed_then_base(&f.url).await;
    let (got, _) = rpc(&f.url, "GetTask", json!({"id": governed}), true).await;
    let task = &got["result"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{got}");
    assert!(task.get("artifacts").is_none(), "{got}");
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"],
        skillbundle::gateway::recognise::UNCHECKABLE
    );
    let (list, _) = rpc(&f.url, "ListTasks", json!({"includeArtifacts": true}), true).await;
    assert!(!list.to_string().contains(SECRET), "{list}");
    let (sub, _) = rpc(&f.url, "SubscribeToTask", json!({"id": governed}), true).await;
    assert!(!sub.to_string().contains(SECRET), "{sub}");
    assert!(sub.to_string().contains("-32004"), "{sub}");
    // Nor does a follow-up reach the upstream as a base Message.
    let sends = f.upstream.calls("SendMessage");
    let follow_up = json!({"messageId": "m-9", "role": "ROLE_USER", "taskId": governed,
        "parts": [{"data": {"more": 1}}]});
    let (answer, _) = rpc(&f.url, "SendMessage", json!({"message": follow_up}), true).await;
    assert_eq!(answer["error"]["code"], json!(-32004), "{answer}");
    assert_eq!(f.upstream.calls("SendMessage"), sends);
}

/// A request to the gateway on either binding, blocking or streaming, with `headers`:
/// the state the caller reads last.
async fn call(url: &str, binding: &str, streaming: bool, headers: &[(&str, &str)]) -> String {
    let client = reqwest::Client::new();
    let params = json!({"message": message(request_object())});
    let mut request = match (binding, streaming) {
        ("jsonrpc", _) => client.post(format!("{url}/")).body(
            json!({"jsonrpc": "2.0", "id": 1, "params": params,
                "method": if streaming { "SendStreamingMessage" } else { "SendMessage" }})
            .to_string(),
        ),
        (_, false) => client
            .post(format!("{url}/message:send"))
            .body(params.to_string()),
        (_, true) => client
            .post(format!("{url}/message:stream"))
            .body(params.to_string()),
    };
    request = request
        .header("A2A-Version", "1.0")
        .header("A2A-Extensions", URI)
        .header("Content-Type", "application/json");
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let text = request.send().await.unwrap().text().await.unwrap();
    let states: Vec<String> = text
        .match_indices("TASK_STATE_")
        .map(|(i, _)| {
            text[i..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                .collect()
        })
        .collect();
    states.last().cloned().unwrap_or(text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_authenticates_callers_sees_their_authorization_on_every_binding() {
    let keeper = start_keeper(true, Ending::Valid, Some("tok-123")).await;
    let tenant = skillbundle::gateway::forward::header_name("X-Tenant").unwrap();
    let upstream_url = keeper.url.clone();
    let f = Front::start(keeper.clone(), &upstream_url, bundle_path().clone(), |s| {
        s.forward = skillbundle::gateway::forward::ForwardPolicy::new(vec![tenant]);
    })
    .await;
    let url = f.url.clone();
    let headers = [
        ("Authorization", "Bearer tok-123"),
        ("X-Tenant", "acme"),
        ("Cookie", "session=1"),
        ("X-Other", "no"),
    ];
    for binding in ["jsonrpc", "http+json"] {
        for streaming in [false, true] {
            // The keeper answers a blocking send with its Task still working, and
            // streams it to completion.
            let shown = call(&url, binding, streaming, &headers).await;
            let expected = if streaming {
                "TASK_STATE_COMPLETED"
            } else {
                "TASK_STATE_WORKING"
            };
            assert_eq!(shown, expected, "{binding} streaming={streaming}");
            let shown = call(&url, binding, streaming, &[]).await;
            assert_eq!(
                shown, "TASK_STATE_FAILED",
                "{binding} streaming={streaming}: refused upstream without the token"
            );
        }
    }
    let seen = keeper.seen.lock().unwrap();
    let with_token: Vec<&HeaderMap> = seen
        .iter()
        .map(|(_, h)| h)
        .filter(|h| h.get("authorization").is_some())
        .collect();
    assert_eq!(with_token.len(), 4);
    for h in with_token {
        assert_eq!(h.get("x-tenant").unwrap(), "acme");
        assert!(h.get("cookie").is_none() && h.get("x-other").is_none());
        // The schema-interface extension is the gateway's, not the upstream's.
        assert!(h.get("a2a-extensions").is_none());
        assert_eq!(h.get("a2a-version").unwrap(), "1.0");
    }
}

/// Wait (up to 5 s) until the keeper has answered `n` calls of `method`.
async fn calls_reach(keeper: &Keeper, method: &str, n: usize) {
    for _ in 0..100 {
        if keeper.calls(method) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{method}: {} calls, not {n}", keeper.calls(method));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_the_gateway_fails_is_cancelled_upstream_with_the_callers_authorization() {
    let f = front(true, Ending::InvalidWhileWorking, |s| s.max_tasks = 16).await;
    let auth = [("Authorization", "Bearer caller-7")];
    // Blocking: the upstream answers a working Task with an invalid record.
    assert_eq!(
        call(&f.url, "jsonrpc", false, &auth).await,
        "TASK_STATE_FAILED"
    );
    calls_reach(&f.upstream, "CancelTask", 1).await;
    // Streaming: the invalid record comes while the upstream's stream stays open.
    assert_eq!(
        call(&f.url, "http+json", true, &auth).await,
        "TASK_STATE_FAILED"
    );
    calls_reach(&f.upstream, "CancelTask", 2).await;
    let seen = f.upstream.seen.lock().unwrap().clone();
    let cancels: Vec<&HeaderMap> = seen
        .iter()
        .filter(|(m, _)| m == "CancelTask")
        .map(|(_, h)| h)
        .collect();
    assert_eq!(cancels.len(), 2);
    assert!(cancels
        .iter()
        .all(|h| h.get("authorization").unwrap() == "Bearer caller-7"));
    // The gateway keeps its verdict: GetTask shows the failure, not the upstream's
    // cancelled Task.
    let (got, _) = rpc(&f.url, "GetTask", json!({"id": "k-1"}), true).await;
    assert_eq!(state(&got["result"]), "TASK_STATE_FAILED", "{got}");
    assert_eq!(error_code(&got["result"]), "output_invalid", "{got}");
    let metrics = reqwest::get(format!("{}/metrics", f.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("skillbundle_gateway_upstream_cancels_total{outcome=\"ok\"} 2"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_too_slow_or_still_running_at_shutdown_is_cancelled_upstream() {
    let f = front(true, Ending::Stalls, |s| {
        s.upstream.timeout = Duration::from_millis(500);
    })
    .await;
    let started = std::time::Instant::now();
    assert_eq!(
        call(&f.url, "jsonrpc", true, &[]).await,
        "TASK_STATE_FAILED"
    );
    calls_reach(&f.upstream, "CancelTask", 1).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    // SIGTERM (the stop future) with a stream in flight: once the grace is over, its
    // upstream Task is cancelled.
    let mut f = front(true, Ending::Stalls, |s| {
        s.upstream.timeout = Duration::from_secs(60);
        s.shutdown_grace = Duration::from_millis(200);
    })
    .await;
    let url = f.url.clone();
    tokio::spawn(async move { call(&url, "jsonrpc", true, &[]).await });
    calls_reach(&f.upstream, "SendStreamingMessage", 1).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(f.upstream.calls("CancelTask"), 0);
    f.stop();
    calls_reach(&f.upstream, "CancelTask", 1).await;
}
