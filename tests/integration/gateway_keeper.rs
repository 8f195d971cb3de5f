//! `skillbundle serve` in front of an upstream of this test's own that keeps its Tasks,
//! as A2A agents do: Tasks the gateway has forgotten (its index holds one entry here)
//! are still checked on GetTask, ListTasks and SubscribeToTask, or withheld when nothing
//! tells whether they are governed; every upstream call is counted by method.

use super::gateway_hostile::{
    artifact, bundle_path, error_code, message, record, request_object, result, rpc,
    serve_in_front, state, KIND, SECRET, SKILL,
};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use skillbundle::gateway::{Gateway, Settings};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What the keeper's governed Tasks end with.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ending {
    /// A record and a valid result.
    Valid,
    /// A result Artifact with an invalid output.
    InvalidResult,
    /// An Artifact of another name, with content no schema allowed.
    Unnamed,
}

struct Keeper {
    url: String,
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
        task["status"] = json!({"state": "TASK_STATE_COMPLETED"});
        task["artifacts"] = match (governed, self.ending) {
            (false, _) => json!([artifact("b-1", "answer", json!({"text": "base answer"}))]),
            (true, Ending::Valid) => json!([
                artifact("o-1", KIND, record()),
                artifact("r-1", SKILL, result("condition_met"))
            ]),
            (true, Ending::InvalidResult) => json!([artifact("r-1", SKILL, result(SECRET))]),
            (true, Ending::Unnamed) => json!([artifact("d-1", "diary", json!({"x": SECRET}))]),
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

async fn keeper_rpc(State(k): State<Arc<Keeper>>, _headers: HeaderMap, body: String) -> Response {
    let request: Value = serde_json::from_str(&body).unwrap();
    let method = request["method"].as_str().unwrap_or_default().to_string();
    *k.calls.lock().unwrap().entry(method.clone()).or_default() += 1;
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
            let mut shown = task;
            if !k.keep_history {
                shown.as_object_mut().unwrap().remove("history");
            }
            reply(json!({ "task": shown }))
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

async fn start_keeper(keep_history: bool, ending: Ending) -> Arc<Keeper> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let keeper = Arc::new(Keeper {
        url: url.clone(),
        keep_history,
        ending,
        tasks: Mutex::new(Vec::new()),
        calls: Mutex::new(HashMap::new()),
    });
    let card = json!({
        "name": "keeper", "description": "keeps its tasks", "version": "1.0.0",
        "supportedInterfaces": [{"url": format!("{url}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}, "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"], "skills": []
    });
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || async move { axum::Json(card.clone()) }),
        )
        .route("/", axum::routing::post(keeper_rpc))
        .with_state(keeper.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    keeper
}

struct Front {
    url: String,
    _stop: tokio::sync::oneshot::Sender<()>,
    _gateway: Gateway,
    keeper: Arc<Keeper>,
}

/// A gateway that remembers one Task, in front of a keeper.
async fn front(keep_history: bool, ending: Ending, configure: impl FnOnce(&mut Settings)) -> Front {
    let keeper = start_keeper(keep_history, ending).await;
    let (url, stop, gateway) = serve_in_front(&keeper.url, bundle_path().clone(), |s| {
        s.max_tasks = 1;
        configure(s);
    })
    .await;
    Front {
        url,
        _stop: stop,
        _gateway: gateway,
        keeper,
    }
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
    assert_eq!(f.keeper.calls("GetTask"), 1);
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
    let sends = f.keeper.calls("SendMessage");
    let follow_up = json!({"messageId": "m-9", "role": "ROLE_USER", "taskId": governed,
        "parts": [{"data": {"more": 1}}]});
    let (answer, _) = rpc(&f.url, "SendMessage", json!({"message": follow_up}), true).await;
    assert_eq!(answer["error"]["code"], json!(-32004), "{answer}");
    assert_eq!(f.keeper.calls("SendMessage"), sends);
}
