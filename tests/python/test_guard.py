"""RequestGuard, Limits and BoundedTaskStore in front of a real a2a-sdk server.

One agent serves both bindings (JSON-RPC at /rpc, HTTP+JSON at the SDK's REST paths)
behind `RequestGuard` with small limits, wired as the README's server example wires it
(the executor's own request handler, `SchemaEnforcingExecutor.request_handler`); the requests are raw bytes sent with httpx, as
a hostile caller sends them. Each class of body the SDK would read loosely (duplicate
members, integers beyond 2^53, UTF-16 text) is refused with the binding's parse error,
each body beyond a limit with the binding's invalid-request error carrying
`resource_limit_exceeded`, the same on both bindings, before the executor is reached;
valid bodies pass through unchanged.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from skillbundle import EXTENSION_URI, Bundle
from skillbundle.a2a import BoundedTaskStore, Limits, RequestGuard, SchemaEnforcingExecutor, agent_card
from starlette.applications import Starlette

from conftest import Signed
from test_a2a_server import BASE_CARD, ToyEvaluator

LIMITS = Limits(max_body_bytes=16 * 1024, max_depth=24, max_values=600)
MAX_FINISHED = 4
HEADERS = {"A2A-Version": "1.0", "A2A-Extensions": EXTENSION_URI, "Content-Type": "application/json"}
BINDINGS = ["jsonrpc", "http+json"]


class Agent:
    def __init__(self, url: str, toy: ToyEvaluator, store: BoundedTaskStore) -> None:
        self.url = url
        self.toy = toy
        self.store = store


@pytest.fixture(scope="module")
def agent(signed: Signed) -> Iterator[Agent]:
    yield from serve_guarded(signed, LIMITS)


@pytest.fixture(scope="module")
def default_agent(signed: Signed) -> Iterator[Agent]:
    """The README's defaults: `Limits()`."""
    yield from serve_guarded(signed, Limits())


def serve_guarded(signed: Signed, limits: Limits) -> Iterator[Agent]:
    bundle = Bundle.open(signed.bundle, trust=[signed.jwk])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    base = dict(BASE_CARD, supportedInterfaces=[
        {"url": f"{url}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ])
    card = agent_card(bundle, base)
    toy = ToyEvaluator()
    store = BoundedTaskStore(max_finished=MAX_FINISHED)
    executor = SchemaEnforcingExecutor(bundle, toy)
    handler = executor.request_handler(card, task_store=store)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/rpc") + create_rest_routes(handler)
    app = RequestGuard(Starlette(routes=routes), jsonrpc_paths=["/rpc"], limits=limits)
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the a2a-sdk server did not start")
        time.sleep(0.02)
    try:
        yield Agent(url, toy, store)
    finally:
        srv.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as c:
        yield c


def message(data_json: str) -> str:
    """A request Message in A2A 1.0 JSON with `data_json` (raw text) as its Data Part."""
    return (
        '{"role": "ROLE_USER", "messageId": "m-%d", "extensions": ["%s"], "parts": [{"data": %s}]}'
        % (time.monotonic_ns(), EXTENSION_URI, data_json)
    )


def body(binding: str, data_json: str, method: str = "SendMessage") -> str:
    if binding == "jsonrpc":
        return '{"jsonrpc": "2.0", "id": 7, "method": "%s", "params": {"message": %s}}' % (method, message(data_json))
    return '{"message": %s}' % message(data_json)


def endpoint(agent: Agent, binding: str, streaming: bool = False) -> str:
    if binding == "jsonrpc":
        return f"{agent.url}/rpc"
    return f"{agent.url}/message:stream" if streaming else f"{agent.url}/message:send"


async def post(http: httpx.AsyncClient, agent: Agent, binding: str, content: Any) -> httpx.Response:
    return await http.post(endpoint(agent, binding), content=content, headers=HEADERS)


def task_of(binding: str, response: httpx.Response) -> dict:
    assert response.status_code == 200, response.text
    payload = response.json()
    return payload["result"]["task"] if binding == "jsonrpc" else payload["task"]


def assert_parse_error(binding: str, response: httpx.Response) -> None:
    if binding == "jsonrpc":
        assert response.status_code == 200
        error = response.json()["error"]
        assert error["code"] == -32700, error
        assert response.json()["id"] is None
    else:
        assert response.status_code == 400, response.text
        assert response.json()["error"]["status"] == "INVALID_ARGUMENT"


def assert_limit(binding: str, response: httpx.Response) -> None:
    payload = response.json()
    if binding == "jsonrpc":
        assert response.status_code == 200
        assert payload["error"]["code"] == -32600, payload
        details = payload["error"]["data"]
    else:
        assert response.status_code == 400, response.text
        assert payload["error"]["status"] == "INVALID_ARGUMENT"
        details = payload["error"]["details"]
    assert details[0]["metadata"] == {"code": "resource_limit_exceeded"}, details


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_valid_body_passes_unchanged(agent: Agent, http: httpx.AsyncClient, binding: str, example_request: dict) -> None:
    calls = agent.toy.calls
    task = task_of(binding, await post(http, agent, binding, body(binding, json.dumps(example_request))))
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    assert agent.toy.calls == calls + 1


def with_arguments_text(example_request: dict, arguments_text: str) -> str:
    """The example request's JSON text with `arguments` replaced by raw text."""
    head = json.dumps({k: v for k, v in example_request.items() if k != "arguments"})
    return head[:-1] + ', "arguments": ' + arguments_text + "}"


def loose_bodies(example_request: dict) -> dict[str, Any]:
    """Bodies Python's json module (and so the SDK's JSON-RPC binding) would accept."""
    args = example_request["arguments"]
    dup = json.dumps(args)[:-1] + ', "resource_id": "secret-resource-name"}'
    cond = dict(args["condition"])
    big = json.dumps(dict(args, condition=dict(cond, threshold=12345))).replace("12345", str(2**53))
    return {
        "duplicate-member": lambda binding: body(binding, with_arguments_text(example_request, dup)).encode(),
        "integer-beyond-2^53": lambda binding: body(binding, with_arguments_text(example_request, big)).encode(),
        "utf-16": lambda binding: body(binding, json.dumps(example_request)).encode("utf-16"),
        "utf-8-bom": lambda binding: b"\xef\xbb\xbf" + body(binding, json.dumps(example_request)).encode(),
        "lone-surrogate": lambda binding: body(binding, json.dumps(dict(example_request, skill="\\ud800")).replace("\\\\ud800", "\\ud800")).encode(),
        "trailing-data": lambda binding: body(binding, json.dumps(example_request)).encode() + b" {}",
    }


LOOSE = ["duplicate-member", "integer-beyond-2^53", "utf-16", "utf-8-bom", "lone-surrogate", "trailing-data"]


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("kind", LOOSE)
async def test_bodies_that_are_not_ijson_get_the_parse_error(agent: Agent, http: httpx.AsyncClient, binding: str, kind: str, example_request: dict) -> None:
    content = loose_bodies(example_request)[kind](binding)
    if kind in ("duplicate-member", "integer-beyond-2^53", "lone-surrogate"):
        # The SDK's own JSON-RPC reader would have taken it: the guard is what refuses.
        assert isinstance(json.loads(content), dict)
    calls = agent.toy.calls
    response = await post(http, agent, binding, content)
    assert_parse_error(binding, response)
    assert "secret-resource-name" not in response.text and str(2**53) not in response.text
    assert agent.toy.calls == calls


def deep(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("kind", ["too-deep", "too-many-values", "too-large", "too-large-chunked"])
async def test_bodies_beyond_a_limit_are_resource_limit_exceeded(agent: Agent, http: httpx.AsyncClient, binding: str, kind: str, example_request: dict) -> None:
    calls = agent.toy.calls
    args = example_request["arguments"]
    if kind == "too-deep":
        content = body(binding, with_arguments_text(example_request, json.dumps(args)[:-1] + ', "x": ' + deep(LIMITS.max_depth) + "}"))
    elif kind == "too-many-values":
        extra = ", ".join(f'"m{i}": {i}' for i in range(LIMITS.max_values))
        content = body(binding, with_arguments_text(example_request, json.dumps(args)[:-1] + ", " + extra + "}"))
        assert len(content) < LIMITS.max_body_bytes  # the value count refuses it, not the size
    else:
        content = body(binding, json.dumps(dict(example_request, arguments=dict(args, resource_id="r" * LIMITS.max_body_bytes))))
    if kind == "too-large-chunked":
        raw = content.encode()

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: read with the cap
            for i in range(0, len(raw), 1024):
                yield raw[i : i + 1024]

        response = await http.post(endpoint(agent, binding), content=chunks(), headers=HEADERS)
    else:
        response = await post(http, agent, binding, content)
    assert_limit(binding, response)
    assert agent.toy.calls == calls


@pytest.mark.parametrize("binding", BINDINGS)
async def test_just_within_the_limits_passes(agent: Agent, http: httpx.AsyncClient, binding: str, example_request: dict) -> None:
    """The limits refuse what exceeds them, not what reaches them: a body of the maximum
    depth is served (the schema then refuses the unexpected member)."""
    args = example_request["arguments"]
    depth_of_arguments = 7 if binding == "jsonrpc" else 6
    nested = deep(LIMITS.max_depth - depth_of_arguments)  # exactly max_depth containers
    content = body(binding, with_arguments_text(example_request, json.dumps(args)[:-1] + ', "x": ' + nested + "}"))
    task = task_of(binding, await post(http, agent, binding, content))
    assert task["status"]["state"] == "TASK_STATE_REJECTED"
    assert task["status"]["message"]["parts"][0]["data"]["error"]["code"] == "input_invalid"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_streaming_requests_are_guarded_alike(agent: Agent, http: httpx.AsyncClient, binding: str, example_request: dict) -> None:
    """SendStreamingMessage (JSON-RPC) and message:stream (HTTP+JSON) bodies get the same
    answers as their blocking forms, as JSON, before any event stream starts."""
    calls = agent.toy.calls
    args = example_request["arguments"]
    dup = json.dumps(args)[:-1] + ', "resource_id": "x"}'
    loose = body(binding, with_arguments_text(example_request, dup), method="SendStreamingMessage")
    response = await http.post(endpoint(agent, binding, streaming=True), content=loose, headers=HEADERS)
    assert_parse_error(binding, response)
    big = body(binding, json.dumps(dict(example_request, arguments=dict(args, resource_id="r" * LIMITS.max_body_bytes))), method="SendStreamingMessage")
    response = await http.post(endpoint(agent, binding, streaming=True), content=big, headers=HEADERS)
    assert_limit(binding, response)
    assert agent.toy.calls == calls


def raw_exchange(conn: socket.socket, head: str, content: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send one HTTP/1.1 request as a plain client does (the whole body, then read) and
    read its answer: status, headers (lower-case names), body."""
    conn.sendall(head.encode() + b"\r\n" + content)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, "the connection ended before an answer"
        data += chunk
    header_text, rest = data.split(b"\r\n\r\n", 1)
    lines = header_text.decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    while len(rest) < int(headers["content-length"]):
        chunk = conn.recv(65536)
        assert chunk, "the connection ended inside an answer"
        rest += chunk
    return int(lines[0].split()[1]), headers, rest


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_refused_body_is_read_to_its_end_so_the_answer_arrives(agent: Agent, binding: str, example_request: dict) -> None:
    """A client writes its whole body before it reads. Were the server to answer and close
    while the body was still arriving, the client's kernel would reset the connection and
    the answer would be lost (now and then, as timing goes). A body up to twice the limit
    is read to its end instead, so the answer arrives every time and the connection is
    kept; a client that asks `Expect: 100-continue` is answered without sending its body."""
    args = example_request["arguments"]
    content = body(binding, json.dumps(dict(example_request, arguments=dict(args, resource_id="r" * LIMITS.max_body_bytes)))).encode()
    assert LIMITS.max_body_bytes < len(content) <= 2 * LIMITS.max_body_bytes
    path = "/rpc" if binding == "jsonrpc" else "/message:send"
    host, port = agent.url.removeprefix("http://").split(":")
    extensions = HEADERS["A2A-Extensions"]
    head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nA2A-Version: 1.0\r\nA2A-Extensions: {extensions}\r\nContent-Type: application/json\r\n"
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        for _ in range(20):  # one connection, kept
            status, headers, answer = raw_exchange(conn, head + f"Content-Length: {len(content)}\r\n", content)
            assert headers.get("connection") != "close", headers
            assert_limit(binding, httpx.Response(status, content=answer))
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        huge = f"Content-Length: {100 * LIMITS.max_body_bytes}\r\nExpect: 100-continue\r\n"
        status, headers, answer = raw_exchange(conn, head + huge)
        assert headers.get("connection") == "close", headers
        assert_limit(binding, httpx.Response(status, content=answer))


async def test_both_bindings_answer_alike(agent: Agent, http: httpx.AsyncClient, example_request: dict) -> None:
    """What each binding's own reader would do differs (protobuf refuses duplicates,
    Python's json keeps the last); behind the guard both refuse the same bodies."""
    for kind, make in loose_bodies(example_request).items():
        verdicts = []
        for binding in BINDINGS:
            r = await post(http, agent, binding, make(binding))
            verdicts.append("error" in r.json())
        assert verdicts == [True, True], kind


async def test_bodyless_requests_are_not_touched(agent: Agent, http: httpx.AsyncClient) -> None:
    card = await http.get(f"{agent.url}/.well-known/agent-card.json")
    assert card.status_code == 200 and card.json()["name"] == BASE_CARD["name"]


async def test_the_bounded_store_keeps_only_the_latest_finished_tasks(agent: Agent, http: httpx.AsyncClient, example_request: dict) -> None:
    ids = []
    for _ in range(MAX_FINISHED + 3):
        task = task_of("jsonrpc", await post(http, agent, "jsonrpc", body("jsonrpc", json.dumps(example_request))))
        ids.append(task["id"])

    async def get(task_id: str) -> dict:
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
        return (await http.post(f"{agent.url}/rpc", json=rpc, headers=HEADERS)).json()

    for task_id in ids[-MAX_FINISHED:]:
        got = await get(task_id)
        assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED", got
    for task_id in ids[:3]:
        got = await get(task_id)
        assert got["error"]["code"] == -32001, got  # TaskNotFoundError
    r = await http.get(f"{agent.url}/tasks/{ids[0]}", headers=HEADERS)
    assert r.status_code == 404


def test_limits_refuse_nonsense() -> None:
    for bad in ({"max_body_bytes": 0}, {"max_depth": -1}, {"max_values": 1.5}, {"max_depth": True}):
        with pytest.raises(ValueError):
            Limits(**bad)
    with pytest.raises(ValueError):
        BoundedTaskStore(max_finished=0)
    assert Limits() == Limits(max_body_bytes=1 << 20, max_depth=37, max_values=20_000)


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("levels", [28, 31, 50])
async def test_the_default_depth_is_what_a2a_sdk_can_carry(default_agent: Agent, http: httpx.AsyncClient, binding: str,
                                                            levels: int, example_request: dict) -> None:
    """a2a-sdk's protobuf parser carries a Data Part nested at most 32 levels. With the
    default limits, a request within that is checked as any other; one beyond it is
    `resource_limit_exceeded` (by the guard, or, 33 deep in HTTP+JSON, by the executor
    at the binding), never the SDK's own parse error naming protobuf."""
    calls = default_agent.toy.calls
    args = example_request["arguments"]
    content = body(binding, with_arguments_text(example_request, json.dumps(args)[:-1] + ', "x": ' + deep(levels) + "}"))
    response = await post(http, default_agent, binding, content)
    if levels == 28:
        task = task_of(binding, response)
        assert task["status"]["state"] == "TASK_STATE_REJECTED"
        assert task["status"]["message"]["parts"][0]["data"]["error"]["code"] == "input_invalid"
    else:
        assert "resource_limit_exceeded" in response.text, response.text
        assert "too deep. Max recursion" not in response.text, response.text
    assert default_agent.toy.calls == calls
