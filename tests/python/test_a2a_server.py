"""A real a2a-sdk server and client around SchemaEnforcingExecutor.

The server is the SDK's own Starlette app (Agent Card route + JSON-RPC route, the
default request handler, an in-memory task store) under uvicorn on 127.0.0.1 with a
port the OS picks, started and stopped by a fixture. The client is the SDK's: it
resolves the Agent Card with A2ACardResolver and talks JSON-RPC with the
`A2A-Extensions` header set.
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
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.client import ClientCallContext
from a2a.extensions.common import HTTP_EXTENSION_HEADER, find_extension_by_uri
from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import Message, Part, Role, SendMessageRequest, Task, TaskState
from google.protobuf import json_format
from skillbundle import EXTENSION_URI, Bundle
from skillbundle.a2a import ExtensionEchoMiddleware, SchemaEnforcingExecutor, agent_card
from starlette.applications import Starlette

from conftest import Signed, run_cli

SKILL = "evaluate_resource_condition"


class ToyEvaluator(AgentExecutor):
    """The domain logic of evaluate_resource_condition, as an agent developer writes it:
    it trusts its arguments (the wrapper checked them) and publishes a supporting record
    and the result. For resource "broken-resource" it returns an invalid result."""

    def __init__(self) -> None:
        self.calls = 0

    async def execute(self, context: RequestContext, event_queue: Any) -> None:
        self.calls += 1
        request = json_format.MessageToDict(context.message.parts[0].data)
        args = request["arguments"]
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        observed = 42
        ops = {"gt": observed > args["condition"]["threshold"], "gte": observed >= args["condition"]["threshold"],
               "lt": observed < args["condition"]["threshold"], "lte": observed <= args["condition"]["threshold"]}
        record = {
            "record_id": "observation-7",
            "resource_id": args["resource_id"],
            "metric": args["condition"]["metric"],
            "value": observed,
            "unit": args["condition"]["unit"],
            "observed_at": "2026-08-11T12:00:01Z",
        }
        result = {
            "result": "condition_met" if ops[args["condition"]["operator"]] else "condition_not_met",
            "observed_value": observed,
            "unit": args["condition"]["unit"],
            "supporting_record_refs": ["observation-7"],
        }
        if args["resource_id"] == "broken-resource":
            result["result"] = "maybe"
        await updater.add_artifact([new_data_part(record)], artifact_id="observation-7", name="resource-observation")
        await updater.add_artifact([new_data_part({"skill": SKILL, "result": result})], artifact_id="result-1", name=SKILL)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: Any) -> None:
        raise NotImplementedError


BASE_CARD = {
    "name": "Network agent",
    "description": "Evaluates resource conditions.",
    "version": "1.0.0",
    "capabilities": {"streaming": False},
    "defaultInputModes": ["application/json"],
    "defaultOutputModes": ["application/json"],
}


class Server:
    def __init__(self, url: str, toy: ToyEvaluator) -> None:
        self.url = url
        self.toy = toy


@pytest.fixture(scope="module")
def bundle(signed: Signed) -> Bundle:
    return Bundle.open(signed.bundle, trust=[signed.jwk])


@pytest.fixture(scope="module")
def server(bundle: Bundle) -> Iterator[Server]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    base = dict(BASE_CARD, supportedInterfaces=[{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}])
    card = agent_card(bundle, base)
    toy = ToyEvaluator()
    handler = DefaultRequestHandler(
        agent_executor=SchemaEnforcingExecutor(bundle, toy),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    app = Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/"))
    srv = uvicorn.Server(uvicorn.Config(ExtensionEchoMiddleware(app), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the a2a-sdk server did not start")
        time.sleep(0.02)
    try:
        yield Server(url, toy)
    finally:
        srv.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture
async def client(server: Server) -> AsyncIterator[Any]:
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, server.url).get_agent_card()
        c = await create_client(card, ClientConfig(httpx_client=http, streaming=False))
        yield c


ACTIVATE = ClientCallContext(service_parameters={HTTP_EXTENSION_HEADER: EXTENSION_URI})


async def send(client: Any, data: Any, *, activate: bool = True) -> Task:
    message = Message(role=Role.ROLE_USER, message_id=f"m-{time.monotonic_ns()}", parts=[new_data_part(data)])
    message.extensions.append(EXTENSION_URI)
    responses = [r async for r in client.send_message(SendMessageRequest(message=message), context=ACTIVATE if activate else None)]
    assert responses and responses[-1].HasField("task"), responses
    return responses[-1].task


def only_data(parts: Any) -> Any:
    assert len(parts) == 1 and parts[0].HasField("data"), parts
    return json_format.MessageToDict(parts[0].data)


async def test_card_resolves_with_the_extension(server: Server, bundle: Bundle) -> None:
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, server.url).get_agent_card()
    ext = find_extension_by_uri(card, EXTENSION_URI)
    assert ext is not None and not ext.required
    params = json_format.MessageToDict(ext.params)
    # What the card serves: the bundle's signed entries, each with the capability
    # descriptors the card merge adds.
    for entry in params["skills"]:
        descriptors = entry.pop("interfaces")
        assert [d["id"] for d in descriptors] == [f'{entry["skill_id"]}@{entry["skill_version"]}']
    assert params == bundle.extension()["params"]
    assert [s.id for s in card.skills] == [s["id"] for s in bundle.agent_skills()]


async def test_describe_skill_equals_the_cli(client: Any, signed: Signed) -> None:
    task = await send(client, {"skill": "describe_skill", "arguments": {"skill_id": SKILL}})
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert len(task.artifacts) == 1 and task.artifacts[0].name == "describe_skill"
    cli = json.loads(run_cli("describe", signed.bundle, SKILL, "--trust", signed.jwk).stdout)
    assert only_data(task.artifacts[0].parts) == cli


async def test_valid_invocation_completes_with_checked_artifacts(client: Any, server: Server, example_request: dict) -> None:
    calls = server.toy.calls
    task = await send(client, example_request)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
    by_name = {a.name: only_data(a.parts) for a in task.artifacts}
    assert by_name[SKILL]["result"]["result"] == "condition_not_met"
    assert by_name["resource-observation"]["observed_at"] == "2026-08-11T12:00:01Z"
    assert server.toy.calls == calls + 1


async def test_invalid_input_is_rejected(client: Any, server: Server, example_request: dict) -> None:
    calls = server.toy.calls
    bad = copy.deepcopy(example_request)
    del bad["arguments"]["condition"]["unit"]
    task = await send(client, bad)
    assert task.status.state == TaskState.TASK_STATE_REJECTED
    error = only_data(task.status.message.parts)["error"]
    assert error["code"] == "input_invalid"
    assert error["details"][0]["instance_path"] == "/condition"
    assert server.toy.calls == calls  # the inner executor never saw it


async def test_stale_digest_is_an_interface_mismatch(client: Any, example_request: dict) -> None:
    task = await send(client, dict(example_request, interface_digest="sha256:" + "1" * 64))
    assert task.status.state == TaskState.TASK_STATE_REJECTED
    assert only_data(task.status.message.parts)["error"]["code"] == "interface_mismatch"


async def test_invalid_result_fails_the_task(client: Any, example_request: dict) -> None:
    broken = copy.deepcopy(example_request)
    broken["arguments"]["resource_id"] = "broken-resource"
    task = await send(client, broken)
    assert task.status.state == TaskState.TASK_STATE_FAILED
    error = only_data(task.status.message.parts)["error"]
    assert error["code"] == "output_invalid"
    assert error["details"][0]["instance_path"] == "/result"
    assert list(task.artifacts) == []  # nothing invalid was published


async def test_without_activation_the_request_is_rejected(client: Any, server: Server, example_request: dict) -> None:
    calls = server.toy.calls
    task = await send(client, example_request, activate=False)
    assert task.status.state == TaskState.TASK_STATE_REJECTED
    assert HTTP_EXTENSION_HEADER in task.status.message.parts[0].text
    assert server.toy.calls == calls


async def test_activation_is_echoed(server: Server) -> None:
    async with httpx.AsyncClient() as http:
        on = await http.get(f"{server.url}/.well-known/agent-card.json", headers={HTTP_EXTENSION_HEADER: EXTENSION_URI})
        off = await http.get(f"{server.url}/.well-known/agent-card.json")
    assert on.headers.get(HTTP_EXTENSION_HEADER) == EXTENSION_URI
    assert HTTP_EXTENSION_HEADER not in off.headers
