"""SchemaEnforcingExecutor against careless domain code and hostile callers, on a real
a2a-sdk server (JSON-RPC and HTTP+JSON on one uvicorn, 127.0.0.1, a free port) with the
SDK's own clients, in three modes: blocking SendMessage, streaming, and HTTP+JSON.

Each class of the rule set has a misbehaving `inner` here (`Careless`, chosen by the
request's `resource_id`); whatever it does, every Artifact a client can see — in the
response, in the stream, through GetTask and ListTasks — must be valid, and a Task that
had something invalid must end `TASK_STATE_FAILED` with the draft's error object.
`Domain` uses the domain API (`invoke(call)`), on a second server in strict mode.
"""

from __future__ import annotations

import asyncio
import collections
import copy
import logging
import math
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import uvicorn
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.client import ClientCallContext
from a2a.extensions.common import HTTP_EXTENSION_HEADER, find_extension_by_uri
from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import TaskUpdater
from a2a.utils.errors import (
    ExtensionSupportRequiredError,
    InvalidParamsError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)
from google.protobuf.struct_pb2 import Value
from a2a.types import (
    Artifact,
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)
from skillbundle import EXTENSION_URI, Bundle, InterfaceError
from skillbundle.a2a import INTERNAL_FAILURE, SchemaEnforcingExecutor, SkillCall, proto_value
from starlette.applications import Starlette

SKILL = "evaluate_resource_condition"
KIND = "resource-observation"
MODES = ["blocking", "streaming", "rest"]
SECRET = "token=hunter2 at /srv/agent/secrets.yaml"


def record(record_id: str = "o-1", **extra: Any) -> dict:
    return {"record_id": record_id, "resource_id": "r", "metric": "utilization", "value": 42,
            "unit": "percent", "observed_at": "2026-08-11T12:00:01Z", **extra}


def result(value: str = "condition_met", **extra: Any) -> dict:
    return {"skill": SKILL, "result": {"result": value, "observed_value": 42, "unit": "percent",
                                       "supporting_record_refs": ["o-1"], **extra}}


def data_artifact(name: str, data: Any, artifact_id: str) -> Artifact:
    return Artifact(artifact_id=artifact_id, name=name, parts=[new_data_part(data)])


class Careless(AgentExecutor):
    """Domain code that publishes what its `resource_id` says, valid or not, through the
    raw SDK events (TaskUpdater, Task events, chunks, Messages, exceptions)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.follow_ups: list[Any] = []
        self.base: list[str] = []
        self.current: list[tuple[str, int] | None] = []

    async def execute(self, context: RequestContext, queue: Any) -> None:
        call: SkillCall | None = getattr(queue, "call", None)
        up = TaskUpdater(queue, context.task_id, context.context_id)
        if call is None:  # a base A2A request
            self.base.append(context.task_id)
            await queue.enqueue_event(Message(role=Role.ROLE_AGENT, message_id="base-1", parts=[new_text_part("base ok")]))
            return
        how = call.arguments["resource_id"]
        self.calls.append(how)
        if call.follow_up is not None:
            self.follow_ups.append(proto_value(call.follow_up.parts[0].data))
            await up.add_artifact([new_data_part(result("maybe" if how == "ask-then-invalid" else "condition_met"))], name=SKILL)
            await up.complete()
            return
        await up.start_work()
        if how == "valid":
            await up.add_artifact([new_data_part(record())], artifact_id="o-1", name=KIND)
            await up.add_artifact([new_data_part(result())], name=SKILL)
            await up.complete()
        elif how == "sdk-idiom":
            # The SDK examples' opening: a Task is made and published only when the
            # request has none.
            task = context.current_task
            self.current.append((task.id, task.status.state) if task is not None else None)
            if task is None:
                task = new_task_from_user_message(context.message)
                await queue.enqueue_event(task)
            up = TaskUpdater(queue, task.id, task.context_id)
            await up.add_artifact([new_data_part(record())], artifact_id="o-1", name=KIND)
            await up.add_artifact([new_data_part(result())], name=SKILL)
            await up.complete()
        elif how == "task-restates-whole":
            # Ending with the whole Task, as SDK examples do: it restates what was
            # delivered whole already.
            await up.add_artifact([new_data_part(record())], artifact_id="o-1", name=KIND, last_chunk=True)
            await up.add_artifact([new_data_part(result())], artifact_id="r", name=SKILL, last_chunk=True)
            task = Task(id=context.task_id, context_id=context.context_id,
                        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
            task.artifacts.append(data_artifact(KIND, record(), "o-1"))
            task.artifacts.append(data_artifact(SKILL, result(), "r"))
            await queue.enqueue_event(task)
        elif how == "two-results":
            await up.add_artifact([new_data_part(result("condition_met"))], artifact_id="a", name=SKILL)
            await up.add_artifact([new_data_part(result("condition_not_met"))], artifact_id="b", name=SKILL)
            await up.complete()
        elif how in ("task-working-invalid", "task-working-undeclared", "task-completed-invalid"):
            task = Task(id=context.task_id, context_id=context.context_id,
                        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED if how == "task-completed-invalid" else TaskState.TASK_STATE_WORKING))
            if how == "task-working-invalid":
                task.artifacts.append(data_artifact(SKILL, result("maybe"), "r"))
            elif how == "task-working-undeclared":
                task.artifacts.append(data_artifact("diary", {"note": "x"}, "d"))
            else:
                task.artifacts.append(data_artifact(KIND, record(value="high"), "o-1"))
                task.artifacts.append(data_artifact(SKILL, result(), "r"))
            await queue.enqueue_event(task)
            if how != "task-completed-invalid":
                await up.add_artifact([new_data_part(result())], name=SKILL)
                await up.complete()
        elif how == "non-finite":
            await up.add_artifact([new_data_part(result(observed_value=math.inf))], name=SKILL)
            await up.complete()
        elif how == "chunks":
            await up.add_artifact([], artifact_id="o-1", name=KIND)
            await up.add_artifact([new_data_part(record())], artifact_id="o-1", name=KIND, append=True, last_chunk=True)
            await up.add_artifact([], artifact_id="r", name=SKILL)
            await up.add_artifact([new_data_part(result())], artifact_id="r", name=SKILL, append=True, last_chunk=True)
            await up.complete()
        elif how == "chunks-invalid":
            await up.add_artifact([new_data_part(result())], artifact_id="r", name=SKILL)
            await up.add_artifact([new_data_part(result())], artifact_id="r", name=SKILL, append=True, last_chunk=True)
            await up.complete()
        elif how == "raise":
            await up.add_artifact([new_data_part(result())], name=SKILL)
            raise RuntimeError(f"cannot reach the device: {SECRET}")
        elif how == "message":
            await queue.enqueue_event(Message(role=Role.ROLE_AGENT, message_id="m", parts=[new_data_part(result())]))
        elif how == "return":
            await up.add_artifact([new_data_part(result())], name=SKILL)
        elif how == "too-many-records":
            for i in range(4):
                await up.add_artifact([new_data_part(record(f"o-{i}"))], artifact_id=f"o-{i}", name=KIND, last_chunk=True)
            await up.add_artifact([new_data_part(result())], name=SKILL)
            await up.complete()
        elif how == "too-big":
            await up.add_artifact([new_data_part(record(resource_id="x" * 70_000))], artifact_id="o-1", name=KIND, last_chunk=True)
            await up.add_artifact([new_data_part(result())], name=SKILL)
            await up.complete()
        elif how in ("ask", "ask-then-invalid"):
            await up.requires_input(Message(role=Role.ROLE_AGENT, message_id="q", parts=[new_text_part("which credential?")]))
        elif how == "authorize":
            await up.requires_auth(Message(role=Role.ROLE_AGENT, message_id="q", parts=[new_text_part("approve the read")]))
        elif how == "misplaced-error":
            # A rejection whose error object names a condition that fails, beside a text.
            await up.reject(Message(role=Role.ROLE_AGENT, message_id="e", parts=[
                new_data_part({"error": {"code": "output_invalid", "message": "no"}}), new_text_part("sorry")]))
        elif how == "slow":
            await asyncio.sleep(30)
        elif how in RAW_DEEP:
            # Published past the helpers: the SDK's protobuf raises inside this very call.
            await up.add_artifact([new_data_part(record())], artifact_id="o-1", name=KIND, last_chunk=True)
            await RAW_DEEP[how](up)
            await up.complete()
        elif how == "protobuf-own":
            # Domain code whose own protobuf parsing fails: not a value it published.
            Value.FromString(b"\x12\x01")
        elif how == "deep-mutated":
            # Built in place (no constructor copies it), nested deeper than a Data Part carries.
            event = TaskArtifactUpdateEvent(task_id=context.task_id, context_id=context.context_id, last_chunk=True)
            event.artifact.artifact_id, event.artifact.name = "r", SKILL
            value = event.artifact.parts.add().data
            for _ in range(40):
                value = value.struct_value.fields["d"]
            value.string_value = SECRET
            await queue.enqueue_event(event)
            await up.complete()

    async def cancel(self, context: RequestContext, queue: Any) -> None:
        """A careless cancel: it "completes" the Task with an invalid result."""
        up = TaskUpdater(queue, context.task_id, context.context_id)
        await up.add_artifact([new_data_part(result("maybe"))], name=SKILL)
        await up.complete()


def nest(levels: int) -> Any:
    value: Any = SECRET
    for _ in range(levels):
        value = {"d": value}
    return value


def cycle() -> Any:
    looped: dict[str, Any] = {"result": "condition_met"}
    looped["self"] = looped
    return looped


async def _deep_status(up: TaskUpdater) -> None:
    await up.complete(Message(role=Role.ROLE_AGENT, message_id="d", parts=[new_data_part(nest(33))]))


#: Values no Data Part can carry, published through the raw SDK (`TaskUpdater`,
#: `new_data_part`): protobuf refuses them inside the domain code's own call, with upb's
#: DecodeError (33 levels in an Artifact or a status Message; 34 to 100 in `new_data_part`) or json_format's
#: ParseError (beyond 100, or a cycle).
RAW_DEEP = {
    "raw-deep-33": lambda up: up.add_artifact([new_data_part(nest(33))], name=SKILL),
    "raw-deep-40": lambda up: up.add_artifact([new_data_part(nest(40))], name=SKILL),
    "raw-deep-1000": lambda up: up.add_artifact([new_data_part(nest(1000))], name=SKILL),
    "raw-cycle": lambda up: up.add_artifact([new_data_part(cycle())], name=SKILL),
    "raw-deep-status": _deep_status,
}


#: Results the domain code hands to `call.complete` that no Data Part can carry.
DEEP = {"deep-40": lambda: nest(40), "deep-1000": lambda: nest(1000), "cycle": cycle}


class Domain:
    """Domain code written against the domain API: `invoke(call)`."""

    def __init__(self) -> None:
        self.arguments: list[Any] = []
        self.follow_ups: list[Any] = []

    async def invoke(self, call: SkillCall) -> None:
        self.arguments.append(call.arguments)
        how = call.arguments["resource_id"]
        if call.follow_up is not None:
            self.follow_ups.append(proto_value(call.follow_up.parts[0].data))
        elif how == "ask":
            await call.require_input("which credential reference?")
            return
        elif how == "constraint":
            await call.refuse("constraint_rejected", "the observation window cannot be honoured")
            return
        elif how == "authorization":
            await call.refuse("authorization_failed", "this caller may not read that resource")
            return
        elif how in DEEP:
            await call.complete(DEEP[how]())
            return
        elif how == "invalid-record":
            try:
                await call.publish_record(KIND, record(value="high"))
            except InterfaceError as e:
                assert e.code == "output_invalid"
                raise
        if how == "sdk-types":
            # What only a2a-sdk's json_format reads (a dict subclass), beside plain JSON.
            ref = await call.publish_record(KIND, collections.OrderedDict(record("obs")), artifact_id="obs")
            await call.complete({"result": "condition_met", "observed_value": 80.5, "unit": "percent",
                                 "supporting_record_refs": (ref,)})
            return
        ref = await call.publish_record(KIND, record("obs"), artifact_id="obs")
        if how == "early":
            await asyncio.sleep(1.5)
        threshold = call.arguments["condition"]["threshold"]
        await call.complete({"result": "condition_met", "observed_value": threshold, "unit": "percent",
                             "supporting_record_refs": [ref]})

    async def cancel(self, context: RequestContext, queue: Any) -> None:
        await TaskUpdater(queue, context.task_id, context.context_id).cancel()


@dataclass
class Server:
    url: str
    inner: Any
    bundle: Bundle


def serve(bundle: Bundle, inner: Any, **options: Any) -> Iterator[Server]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    executor = SchemaEnforcingExecutor(bundle, inner, **options)
    card = executor.agent_card({
        "name": "Network agent", "description": "Evaluates resource conditions.", "version": "1.0.0",
        "capabilities": {"streaming": True}, "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                                {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
    })
    handler = executor.request_handler(card)
    app = Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/") + create_rest_routes(handler))
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the a2a-sdk server did not start")
        time.sleep(0.02)
    try:
        yield Server(url, inner, bundle)
    finally:
        srv.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture(scope="module")
def bundle(signed: Any) -> Bundle:
    return Bundle.open(signed.bundle, trust=[signed.jwk])


@pytest.fixture(scope="module")
def careless(bundle: Bundle) -> Iterator[Server]:
    yield from serve(bundle, Careless(), base_requests=True, max_records_per_task=3, max_artifact_bytes=64 * 1024)


@pytest.fixture(scope="module")
def strict(bundle: Bundle) -> Iterator[Server]:
    yield from serve(bundle, Domain(), require_extension=True)


ACTIVATE = ClientCallContext(service_parameters={HTTP_EXTENSION_HEADER: EXTENSION_URI})


@dataclass
class Outcome:
    task: Task
    seen: list[Artifact] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)


class Caller:
    """The SDK's client in one mode, and everything it saw."""

    def __init__(self, server: Server, mode: str, http: httpx.AsyncClient) -> None:
        self.server, self.mode, self.http = server, mode, http

    async def client(self) -> Any:
        card = await A2ACardResolver(self.http, self.server.url).get_agent_card()
        binding = "HTTP+JSON" if self.mode == "rest" else "JSONRPC"
        return await create_client(card, ClientConfig(httpx_client=self.http, streaming=self.mode == "streaming",
                                                      supported_protocol_bindings=[binding]))

    async def send(self, data: Any, *, parts: list | None = None, activate: bool = True, task_id: str = "") -> Outcome:
        message = Message(role=Role.ROLE_USER, message_id=f"m-{time.monotonic_ns()}",
                          parts=parts if parts is not None else [new_data_part(data)], task_id=task_id)
        message.extensions.append(EXTENSION_URI)
        client = await self.client()
        events = []
        async for r in client.send_message(SendMessageRequest(message=message), context=ACTIVATE if activate else None):
            events.append((time.monotonic(), r))
        task_ids = {r.task.id for _, r in events if r.HasField("task")} | {r.status_update.task_id for _, r in events if r.HasField("status_update")}
        assert len(task_ids) == 1, events
        task = await client.get_task(GetTaskRequest(id=task_ids.pop()))
        outcome = Outcome(task=task, events=events)
        for _, r in events:
            if r.HasField("task"):
                outcome.seen += list(r.task.artifacts)
            if r.HasField("artifact_update"):
                outcome.seen.append(r.artifact_update.artifact)
        listed = await client.list_tasks(ListTasksRequest(include_artifacts=True, page_size=100))
        for t in listed.tasks:
            assert_all_valid(self.server.bundle, list(t.artifacts))
            if t.id == task.id:
                outcome.seen += list(t.artifacts)
        outcome.seen += list(task.artifacts)
        assert_all_valid(self.server.bundle, outcome.seen)
        return outcome


def assert_all_valid(bundle: Bundle, artifacts: list[Artifact]) -> None:
    """The invariant: every Artifact any client saw is a valid result or record."""
    for a in artifacts:
        assert len(a.parts) == 1 and a.parts[0].HasField("data"), a
        data = proto_value(a.parts[0].data)
        if a.name == "describe_skill":
            continue
        if a.name == SKILL:
            bundle.check_result_object(SKILL, data)
        else:
            bundle.check_record(SKILL, a.name, data)


def error_of(task: Task) -> dict:
    parts = task.status.message.parts
    assert len(parts) == 1 and parts[0].HasField("data"), task.status
    return proto_value(parts[0].data)["error"]


@pytest.fixture(params=MODES)
async def caller(request: Any, careless: Server) -> Any:
    async with httpx.AsyncClient(timeout=30) as http:
        yield Caller(careless, request.param, http)


@pytest.fixture(params=MODES)
async def strict_caller(request: Any, strict: Server) -> Any:
    async with httpx.AsyncClient(timeout=30) as http:
        yield Caller(strict, request.param, http)


def invoke(example_request: dict, how: str, **arguments: Any) -> dict:
    req = copy.deepcopy(example_request)
    req["arguments"]["resource_id"] = how
    req["arguments"].update(arguments)
    return req


# -- output that is not valid never shows --------------------------------------------------


@pytest.mark.parametrize("how", ["valid", "task-restates-whole"])
async def test_valid_output_completes(caller: Caller, example_request: dict, how: str) -> None:
    out = await caller.send(invoke(example_request, how))
    assert out.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert sorted(a.name for a in out.task.artifacts) == sorted([KIND, SKILL])


async def test_inner_gets_the_task_made_for_it_and_the_message_is_routed_once(
        caller: Caller, example_request: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    routed = []
    route = SchemaEnforcingExecutor.route

    def counted(self: SchemaEnforcingExecutor, message: Any, *args: Any, **kwargs: Any) -> Any:
        routed.append(message.message_id)
        return route(self, message, *args, **kwargs)

    monkeypatch.setattr(SchemaEnforcingExecutor, "route", counted)
    out = await caller.send(invoke(example_request, "sdk-idiom"))
    assert out.task.status.state == TaskState.TASK_STATE_COMPLETED
    # The Task exists before the domain code runs, and `context.current_task` is it: the
    # SDK's idiom makes no second one.
    assert caller.server.inner.current[-1] == (out.task.id, TaskState.TASK_STATE_SUBMITTED)
    # The request-context builder routed the Message; execute took its answer.
    assert len(routed) == 1, routed


@pytest.mark.parametrize("how", [
    "two-results", "task-working-invalid", "task-working-undeclared", "task-completed-invalid",
    "non-finite", "chunks-invalid", "message", "return", "misplaced-error",
])
async def test_invalid_output_fails_the_task_and_never_shows(caller: Caller, example_request: dict, how: str) -> None:
    out = await caller.send(invoke(example_request, how))
    assert out.task.status.state == TaskState.TASK_STATE_FAILED, out.task.status
    assert error_of(out.task)["code"] == "output_invalid"
    assert not any(a.name == SKILL for a in out.seen)


async def test_chunked_artifacts_are_assembled_then_checked(caller: Caller, example_request: dict) -> None:
    out = await caller.send(invoke(example_request, "chunks"))
    assert out.task.status.state == TaskState.TASK_STATE_COMPLETED, out.task.status
    assert sorted(a.artifact_id for a in out.task.artifacts) == ["o-1", "r"]


@pytest.mark.parametrize("how", ["too-many-records", "too-big"])
async def test_task_limits_end_in_resource_limit_exceeded(caller: Caller, example_request: dict, how: str) -> None:
    out = await caller.send(invoke(example_request, how))
    assert out.task.status.state == TaskState.TASK_STATE_FAILED
    assert error_of(out.task)["code"] == "resource_limit_exceeded"
    assert not any(a.name == SKILL for a in out.seen)


async def test_an_exception_leaks_nothing(caller: Caller, example_request: dict, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="skillbundle.a2a"):
        out = await caller.send(invoke(example_request, "raise"))
    assert out.task.status.state == TaskState.TASK_STATE_FAILED
    assert [p.text for p in out.task.status.message.parts] == [INTERNAL_FAILURE]
    assert "hunter2" not in str(out.events) and "hunter2" not in str(out.task)
    assert "hunter2" in caplog.text  # the agent's own log has it


async def test_cancel_cannot_complete_with_an_invalid_result(careless: Server, example_request: dict) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        client = await Caller(careless, "blocking", http).client()
        message = Message(role=Role.ROLE_USER, message_id="slow-1", parts=[new_data_part(invoke(example_request, "slow"))])
        message.extensions.append(EXTENSION_URI)
        request = SendMessageRequest(message=message)
        request.configuration.return_immediately = True
        [response] = [r async for r in client.send_message(request, context=ACTIVATE)]
        task_id = response.task.id
        await asyncio.sleep(0.3)
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
        stored = await client.get_task(GetTaskRequest(id=task_id))
    for task in (canceled, stored):
        assert task.status.state == TaskState.TASK_STATE_FAILED, task.status
        assert error_of(task)["code"] == "output_invalid"
        assert list(task.artifacts) == []


# -- input --------------------------------------------------------------------------------


async def test_a_request_object_beside_another_part_is_checked(caller: Caller, example_request: dict) -> None:
    calls = len(caller.server.inner.calls)
    for parts in ([new_data_part(invoke(example_request, "valid")), new_text_part("hello")],
                  [new_text_part("hello"), new_data_part(invoke(example_request, "valid"))]):
        out = await caller.send(None, parts=parts)
        assert out.task.status.state == TaskState.TASK_STATE_REJECTED
        assert error_of(out.task)["code"] == "input_invalid"
        # Not activated: still not passed on as a base request.
        out = await caller.send(None, parts=parts, activate=False)
        assert out.task.status.state == TaskState.TASK_STATE_REJECTED
    assert len(caller.server.inner.calls) == calls and not caller.server.inner.base


async def test_base_requests_pass_through_when_served(careless: Server) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        client = await Caller(careless, "blocking", http).client()
        message = Message(role=Role.ROLE_USER, message_id="base", parts=[new_text_part("hi")])
        [response] = [r async for r in client.send_message(SendMessageRequest(message=message))]
    assert response.message.parts[0].text == "base ok"


async def test_instance_paths_of_non_ijson_arguments_are_relative_to_arguments(bundle: Bundle, example_request: dict) -> None:
    bad = copy.deepcopy(example_request)
    bad["arguments"]["condition"]["threshold"] = math.nan
    with pytest.raises(InterfaceError) as e:
        bundle.check_request(bad)
    assert e.value.code == "input_invalid"
    assert e.value.details == [{"instance_path": "/condition/threshold"}]


# -- intermediate exchanges ---------------------------------------------------------------


@pytest.mark.parametrize("how, final", [
    ("ask", TaskState.TASK_STATE_COMPLETED),
    ("ask-then-invalid", TaskState.TASK_STATE_FAILED),
    ("authorize", TaskState.TASK_STATE_COMPLETED),
])
async def test_follow_ups_reach_inner_unchecked(caller: Caller, example_request: dict, how: str, final: int) -> None:
    """Input-required and auth-required: the caller's reply is not a skill request and
    not the input_schema's; it reaches inner as is; the final result is still checked."""
    out = await caller.send(invoke(example_request, how))
    assert out.task.status.state in (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED)
    reply = {"credential_ref": "vault:network/ro"}  # not a skill request, not input_schema
    follow = await caller.send(reply, task_id=out.task.id)
    assert follow.task.id == out.task.id
    assert follow.task.status.state == final, follow.task.status
    assert caller.server.inner.follow_ups[-1] == reply


async def test_describe_skill_into_an_existing_task_leaves_it_untouched(caller: Caller, example_request: dict) -> None:
    out = await caller.send(invoke(example_request, "ask"))
    before = out.task
    with pytest.raises(InvalidParamsError) as refused:
        await caller.send({"skill": "describe_skill", "arguments": {"skill_id": SKILL}}, task_id=before.id)
    assert "existing Task" in str(refused.value)
    client = await caller.client()
    after = await client.get_task(GetTaskRequest(id=before.id))
    assert after.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert len(after.history) == len(before.history) and list(after.artifacts) == []


async def test_resubscribing_shows_only_checked_artifacts(careless: Server, example_request: dict) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        caller = Caller(careless, "streaming", http)
        out = await caller.send(invoke(example_request, "ask-then-invalid"))
        client = await caller.client()
        stream = client.subscribe(SubscribeToTaskRequest(id=out.task.id))
        seen: list[Artifact] = []

        async def follow() -> None:
            async for r in stream:
                if r.HasField("task"):
                    seen.extend(r.task.artifacts)
                if r.HasField("artifact_update"):
                    seen.append(r.artifact_update.artifact)

        watcher = asyncio.create_task(follow())
        await asyncio.sleep(0.3)
        follow_up = await caller.send({"credential_ref": "x"}, task_id=out.task.id)
        await asyncio.wait_for(watcher, 10)
    assert follow_up.task.status.state == TaskState.TASK_STATE_FAILED
    assert_all_valid(careless.bundle, seen)


# -- strict mode and the domain API -------------------------------------------------------


async def test_strict_mode_card_says_required_and_refuses_without_activation(strict_caller: Caller, example_request: dict) -> None:
    card = await A2ACardResolver(strict_caller.http, strict_caller.server.url).get_agent_card()
    assert find_extension_by_uri(card, EXTENSION_URI).required
    with pytest.raises(ExtensionSupportRequiredError):  # the client's form of -32008
        await strict_caller.send(invoke(example_request, "valid"), activate=False)
    client = await strict_caller.client()
    listed = await client.list_tasks(ListTasksRequest(page_size=100))
    assert all(t.status.state != TaskState.TASK_STATE_FAILED for t in listed.tasks)


async def test_the_domain_api_gets_checked_arguments_with_ints(strict_caller: Caller, example_request: dict) -> None:
    out = await strict_caller.send(invoke(example_request, "plain"))
    assert out.task.status.state == TaskState.TASK_STATE_COMPLETED, out.task.status
    arguments = strict_caller.server.inner.arguments[-1]
    threshold = arguments["condition"]["threshold"]
    assert threshold == 80 and type(threshold) is int
    by_name = {a.name: proto_value(a.parts[0].data) for a in out.task.artifacts}
    assert by_name[SKILL]["result"]["supporting_record_refs"] == ["obs"]


async def test_the_domain_api_publishes_what_was_checked(strict_caller: Caller, example_request: dict) -> None:
    # Plain JSON goes through the library's own encoder; a value only the SDK reads goes
    # through the SDK's. Either way the Artifacts hold the values, numbers as doubles.
    for how in ("plain", "sdk-types"):
        out = await strict_caller.send(invoke(example_request, how))
        assert out.task.status.state == TaskState.TASK_STATE_COMPLETED, out.task.status
        by_name = {a.name: proto_value(a.parts[0].data) for a in out.task.artifacts}
        assert by_name[KIND] == {**record("obs"), "value": 42.0}
        assert by_name[SKILL]["skill"] == SKILL
        assert by_name[SKILL]["result"]["supporting_record_refs"] == ["obs"]
        assert [len(a.parts) for a in out.task.artifacts] == [1, 1]


async def test_records_are_streamed_before_the_result(strict: Server, example_request: dict) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        out = await Caller(strict, "streaming", http).send(invoke(example_request, "early"))
    times = {r.artifact_update.artifact.name: t for t, r in out.events if r.HasField("artifact_update")}
    assert times[SKILL] - times[KIND] > 1.0, times


@pytest.mark.parametrize("how, code", [("constraint", "constraint_rejected"), ("authorization", "authorization_failed")])
async def test_domain_refusals_are_the_drafts(strict_caller: Caller, example_request: dict, how: str, code: str) -> None:
    out = await strict_caller.send(invoke(example_request, how))
    assert out.task.status.state == TaskState.TASK_STATE_REJECTED
    assert error_of(out.task)["code"] == code


async def test_an_invalid_record_through_the_api_fails_the_task(strict_caller: Caller, example_request: dict) -> None:
    out = await strict_caller.send(invoke(example_request, "invalid-record"))
    assert out.task.status.state == TaskState.TASK_STATE_FAILED
    assert error_of(out.task)["code"] == "output_invalid"


async def test_the_domain_api_follow_up(strict_caller: Caller, example_request: dict) -> None:
    out = await strict_caller.send(invoke(example_request, "ask"))
    assert out.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    follow = await strict_caller.send({"credential_ref": "vault:x"}, task_id=out.task.id)
    assert follow.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert strict_caller.server.inner.follow_ups[-1] == {"credential_ref": "vault:x"}




# -- interaction declarations -------------------------------------------------------------
#
# manage_interface_config declares `supported_response_modes: [sync, push]` and
# `cancellable: false`; trace_network_path `[sync, stream, poll]`, cancellable;
# evaluate_resource_condition `[sync, stream]`, cancellable. What a declaration does not
# allow is refused through the binding with A2A's error, and `inner` never sees it.

CONFIG = "manage_interface_config"
CONFIG_READ = {"operation": "read", "device": "core-2", "interface": "xe-0/0/3"}


RESULTS = {
    CONFIG: {"operation": "read", "applied": False, "config": {"admin_state": "up", "oper_state": "up"}},
    "trace_network_path": {"reached": True, "hops": [], "supporting_record_refs": []},
}


class Interactive:
    """Domain code for every example skill through the domain API: it answers each valid
    request validly (after `delay` seconds when asked), and counts what reached it."""

    def __init__(self) -> None:
        self.invoked: list[str] = []
        self.canceled: list[str] = []

    async def invoke(self, call: SkillCall) -> None:
        self.invoked.append(call.skill_id)
        if call.follow_up is None and call.arguments.get("interface") == "ask":
            await call.require_input("which change ticket?")
            return
        arguments = call.arguments
        if "slow" in (arguments.get("device"), arguments.get("destination", {}).get("device")):
            await asyncio.sleep(1.0)
        await call.complete(RESULTS[call.skill_id])

    async def cancel(self, context: RequestContext, queue: Any) -> None:
        self.canceled.append(context.task_id)
        await TaskUpdater(queue, context.task_id, context.context_id).cancel()


@pytest.fixture(scope="module")
def interactive(bundle: Bundle) -> Iterator[Server]:
    yield from serve(bundle, Interactive())


def skill_request(bundle: Bundle, skill: str, arguments: dict) -> dict:
    document = bundle.describe_skill(skill)["result"]
    return {"skill": skill, "skill_version": document["interface"]["skill_version"],
            "interface_digest": document["interface_digest"], "arguments": arguments}


def config_request(bundle: Bundle, **arguments: Any) -> dict:
    return skill_request(bundle, CONFIG, {**CONFIG_READ, **arguments})


async def client_for(server: Server, http: httpx.AsyncClient, binding: str, streaming: bool) -> Any:
    card = await A2ACardResolver(http, server.url).get_agent_card()
    return await create_client(card, ClientConfig(httpx_client=http, streaming=streaming,
                                                  supported_protocol_bindings=[binding]))


def activated_message(data: Any, task_id: str = "") -> Message:
    message = Message(role=Role.ROLE_USER, message_id=f"m-{time.monotonic_ns()}",
                      parts=[new_data_part(data)], task_id=task_id)
    message.extensions.append(EXTENSION_URI)
    return message


BINDINGS = ["JSONRPC", "HTTP+JSON"]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_stream_of_a_skill_without_stream_is_refused_before_inner(interactive: Server, binding: str) -> None:
    inner = interactive.inner
    async with httpx.AsyncClient(timeout=30) as http:
        streaming = await client_for(interactive, http, binding, True)
        before = list(inner.invoked)
        with pytest.raises(UnsupportedOperationError) as refused:
            async for _ in streaming.send_message(SendMessageRequest(message=activated_message(
                    config_request(interactive.bundle))), context=ACTIVATE):
                pass
        assert "does not support this SendStreamingMessage request" in str(refused.value)
        assert "core-2" not in str(refused.value)
        assert inner.invoked == before
        # The same request, blocking (sync is declared), is served.
        blocking = await client_for(interactive, http, binding, False)
        [answer] = [r async for r in blocking.send_message(SendMessageRequest(message=activated_message(
            config_request(interactive.bundle))), context=ACTIVATE)]
        assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED, answer.task.status
        assert inner.invoked == [*before, CONFIG]
        # A skill that declares stream streams.
        out = [r async for r in streaming.send_message(SendMessageRequest(message=activated_message(
            skill_request(interactive.bundle, "trace_network_path", {
                "source": {"address": "192.0.2.10"}, "destination": {"device": "edge-router-7"},
                "protocol": "udp"}))), context=ACTIVATE)]
        assert out, "the stream was empty"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_task_of_a_skill_that_is_not_cancellable_is_not_canceled(interactive: Server, binding: str) -> None:
    inner = interactive.inner
    async with httpx.AsyncClient(timeout=30) as http:
        client = await client_for(interactive, http, binding, False)
        # Returning at once: allowed, the skill declares push.
        request = SendMessageRequest(message=activated_message(config_request(interactive.bundle, device="slow")))
        request.configuration.return_immediately = True
        [started] = [r async for r in client.send_message(request, context=ACTIVATE)]
        task_id = started.task.id
        with pytest.raises(TaskNotCancelableError) as refused:
            await client.cancel_task(CancelTaskRequest(id=task_id))
        assert "cannot be canceled" in str(refused.value)
        assert task_id not in inner.canceled
        # A subscription is a stream: the skill has none.
        streaming = await client_for(interactive, http, binding, True)
        with pytest.raises(UnsupportedOperationError):
            async for _ in streaming.subscribe(SubscribeToTaskRequest(id=task_id)):
                pass
        deadline = time.monotonic() + 10
        while (task := await client.get_task(GetTaskRequest(id=task_id))).status.state != TaskState.TASK_STATE_COMPLETED:
            assert time.monotonic() < deadline, task.status
            await asyncio.sleep(0.1)
        # A cancellable skill's Task is canceled through inner.
        request = SendMessageRequest(message=activated_message(skill_request(interactive.bundle, "trace_network_path", {
            "source": {"address": "192.0.2.10"}, "destination": {"device": "slow"}, "protocol": "udp"})))
        request.configuration.return_immediately = True
        [started] = [r async for r in client.send_message(request, context=ACTIVATE)]
        canceled = await client.cancel_task(CancelTaskRequest(id=started.task.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED, canceled.status


async def test_a_push_config_or_a_return_at_once_the_skill_cannot_serve_is_refused(interactive: Server, example_request: dict) -> None:
    inner = interactive.inner
    async with httpx.AsyncClient(timeout=30) as http:
        for binding in BINDINGS:
            client = await client_for(interactive, http, binding, False)
            before = list(inner.invoked)
            # evaluate_resource_condition declares no push.
            request = SendMessageRequest(message=activated_message(invoke(example_request, "valid")))
            request.configuration.task_push_notification_config.url = "https://caller.example/hook"
            with pytest.raises(UnsupportedOperationError) as refused:
                [r async for r in client.send_message(request, context=ACTIVATE)]
            assert "the response mode push" in str(refused.value)
            assert inner.invoked == before


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_follow_up_is_judged_by_its_own_operation(interactive: Server, streaming: bool) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        blocking = await client_for(interactive, http, "JSONRPC", False)
        [asked] = [r async for r in blocking.send_message(SendMessageRequest(message=activated_message(
            config_request(interactive.bundle, interface="ask"))), context=ACTIVATE)]
        assert asked.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, asked.task.status
        reply = activated_message({"change_ticket": "CHG0012345"}, task_id=asked.task.id)
        client = await client_for(interactive, http, "JSONRPC", streaming)
        if streaming:
            with pytest.raises(UnsupportedOperationError):
                [r async for r in client.send_message(SendMessageRequest(message=reply), context=ACTIVATE)]
            task = await blocking.get_task(GetTaskRequest(id=asked.task.id))
            assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        else:
            [done] = [r async for r in client.send_message(SendMessageRequest(message=reply), context=ACTIVATE)]
            assert done.task.status.state == TaskState.TASK_STATE_COMPLETED, done.task.status


# -- values nested deeper than a Data Part carries ----------------------------------------
#
# a2a-sdk copies its messages through protobuf's parser, which refuses nesting beyond 100
# message levels: a Data Part value nested more than 32 levels (skillbundle._native's
# limit, the library's proto::CARRIED_DEPTH) is refused before the SDK or the domain code
# holds it, with the draft's resource_limit_exceeded, never a fixed internal failure.


async def test_the_deepest_request_a_data_part_carries_is_checked_as_any_other(caller: Caller, example_request: dict) -> None:
    out = await caller.send(invoke(example_request, nest(30)))  # the Data Part: 32 levels
    assert out.task.status.state == TaskState.TASK_STATE_REJECTED, out.task.status
    assert error_of(out.task)["code"] == "input_invalid"


async def post_raw(server: Server, http: httpx.AsyncClient, data: Any, *, rest: bool, stream: bool) -> tuple[int, str]:
    """A hostile caller's request, written as JSON by hand (a2a-sdk's client cannot build
    a Message nested this deep): the HTTP status and the body."""
    message = {"messageId": "deep-1", "role": "ROLE_USER", "parts": [{"data": data}], "extensions": [EXTENSION_URI]}
    headers = {HTTP_EXTENSION_HEADER: EXTENSION_URI, "A2A-Version": "1.0"}
    if rest:
        url = server.url + ("/message:stream" if stream else "/message:send")
        response = await http.post(url, json={"message": message}, headers=headers)
    else:
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage" if stream else "SendMessage",
                "params": {"message": message}}
        response = await http.post(server.url + "/", json=body, headers=headers)
    return response.status_code, response.text


@pytest.mark.parametrize("levels", [31, 40])
@pytest.mark.parametrize("rest", [False, True], ids=["jsonrpc", "http+json"])
@pytest.mark.parametrize("stream", [False, True], ids=["blocking", "streaming"])
async def test_arguments_nested_too_deep_are_refused_through_the_binding(
        careless: Server, example_request: dict, levels: int, rest: bool, stream: bool) -> None:
    calls = len(careless.inner.calls)
    async with httpx.AsyncClient(timeout=30) as http:
        status, text = await post_raw(careless, http, invoke(example_request, nest(levels)), rest=rest, stream=stream)
    assert "nested more than 32 levels deep" in text, text
    assert "resource_limit_exceeded" in text, text
    assert "-32602" in text if not rest else status == 400, (status, text)
    assert SECRET not in text
    assert len(careless.inner.calls) == calls


async def test_an_event_nested_too_deep_fails_the_task(caller: Caller, example_request: dict) -> None:
    out = await caller.send(invoke(example_request, "deep-mutated"))
    assert out.task.status.state == TaskState.TASK_STATE_FAILED, out.task.status
    assert error_of(out.task)["code"] == "resource_limit_exceeded"
    assert not any(a.name == SKILL for a in out.seen)
    assert SECRET not in str(out.events)


@pytest.mark.parametrize("how", sorted(RAW_DEEP))
async def test_a_value_too_deep_published_through_the_raw_sdk_fails_the_task_with_the_drafts_error(
        caller: Caller, example_request: dict, how: str) -> None:
    out = await caller.send(invoke(example_request, how))
    assert out.task.status.state == TaskState.TASK_STATE_FAILED, out.task.status
    error = error_of(out.task)
    assert error["code"] == "resource_limit_exceeded", error
    assert "upb" not in error["message"] and "protobuf" not in error["message"].lower(), error
    assert not any(a.name == SKILL for a in out.seen)
    assert SECRET not in str(out.events) and SECRET not in str(out.task)


async def test_a_protobuf_error_of_the_domain_codes_own_keeps_the_fixed_failure(
        caller: Caller, example_request: dict) -> None:
    out = await caller.send(invoke(example_request, "protobuf-own"))
    assert out.task.status.state == TaskState.TASK_STATE_FAILED, out.task.status
    assert [p.text for p in out.task.status.message.parts] == [INTERNAL_FAILURE]


@pytest.mark.parametrize("how", sorted(DEEP))
async def test_a_result_no_data_part_carries_fails_the_task_with_the_drafts_error(
        strict_caller: Caller, example_request: dict, how: str) -> None:
    out = await strict_caller.send(invoke(example_request, how))
    assert out.task.status.state == TaskState.TASK_STATE_FAILED, out.task.status
    assert error_of(out.task)["code"] == "resource_limit_exceeded", out.task.status
    assert not any(a.name == SKILL for a in out.seen)
