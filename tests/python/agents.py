"""Real a2a-sdk agents on 127.0.0.1 for the client-side tests (test_wire_client.py).

* `Evaluator`: the domain logic of evaluate_resource_condition (a supporting record,
  then the result), to run inside `SchemaEnforcingExecutor`.
* `HandWritten`: an agent written against a2a-sdk alone, without skillbundle: it answers
  describe_skill with the document it was given and checks requests by hand. Given a
  `flaw`, it breaks exactly one rule a client can check (a wrong digest, two result
  Artifacts, an invalid record, a misnamed record Artifact, a stale digest or invalid
  input accepted, ...), so that `skillbundle call`/`probe` and the Python client must
  catch it.
* `serve(mounts)`: one uvicorn server; each agent is mounted under its own path with its
  card at `<path>/.well-known/agent-card.json`, JSON-RPC at `<path>/` and HTTP+JSON at
  `<path>/rest`. Started in a thread, stopped when the context exits.
"""

from __future__ import annotations

import contextlib
import copy
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
import uvicorn
from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCard
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.routing import Mount

SKILL = "evaluate_resource_condition"
EXTENSION_URI = "https://agentic-network-management.github.io/agent-schema-interfaces/extensions/schema-interface/v1"
STALE = "sha256:" + "1" * 64

BASE_CARD = {
    "name": "Network agent",
    "description": "Evaluates resource conditions.",
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["application/json"],
    "defaultOutputModes": ["application/json"],
}


def evaluate(args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The record and the result object of evaluate_resource_condition."""
    observed = 42
    threshold = args["condition"]["threshold"]
    met = {"gt": observed > threshold, "gte": observed >= threshold, "lt": observed < threshold,
           "lte": observed <= threshold}[args["condition"]["operator"]]
    record = {
        "record_id": "observation-7",
        "resource_id": args["resource_id"],
        "metric": args["condition"]["metric"],
        "value": observed,
        "unit": args["condition"]["unit"],
        "observed_at": "2026-08-11T12:00:01Z",
    }
    result = {
        "result": "condition_met" if met else "condition_not_met",
        "observed_value": observed,
        "unit": args["condition"]["unit"],
        "supporting_record_refs": ["observation-7"],
    }
    return record, {"skill": SKILL, "result": result}


def request_of(context: RequestContext) -> Any:
    message = context.message
    if message is None or len(message.parts) != 1 or not message.parts[0].HasField("data"):
        return None
    return json_format.MessageToDict(message.parts[0].data)


async def start(context: RequestContext, queue: Any) -> TaskUpdater:
    task = context.current_task or new_task_from_user_message(context.message)
    await queue.enqueue_event(task)
    return TaskUpdater(queue, task.id, task.context_id)


class Evaluator(AgentExecutor):
    """Domain logic only; SchemaEnforcingExecutor checks around it. Records the
    correlation metadata of each request it sees (`seen`)."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def execute(self, context: RequestContext, queue: Any) -> None:
        request = request_of(context)
        self.seen.append({"task_id": context.task_id, "metadata": json_format.MessageToDict(context.message.metadata)})
        record, result = evaluate(request["arguments"])
        updater = await start(context, queue)
        await updater.start_work()
        await updater.add_artifact([new_data_part(record)], artifact_id="observation-7", name="resource-observation")
        await updater.add_artifact([new_data_part(result)], artifact_id="result-1", name=SKILL)
        await updater.complete()

    async def cancel(self, context: RequestContext, queue: Any) -> None:
        raise NotImplementedError


def error(code: str, message: str) -> Any:
    return new_data_part({"error": {"code": code, "message": message}})


class HandWritten(AgentExecutor):
    """A schema-interface agent written by hand on a2a-sdk (no skillbundle import).

    `describes` maps each skill_id to the describe_skill result object to serve; the
    binding and input_schema come from it (validated with the `jsonschema` package).
    Only evaluate_resource_condition has domain logic. `flaw` names the one rule it
    breaks (None: none); `no-condition` breaks none, but reports every refusal with a
    text reason only and fails every skill request so (the draft asks for its error
    object only when the agent reports one of its conditions)."""

    def __init__(self, describes: dict[str, dict[str, Any]], flaw: str | None = None) -> None:
        self.describes = describes
        self.flaw = flaw
        self.validators = {
            skill: jsonschema.Draft202012Validator(d["result"]["interface"]["input_schema"]["resolution"]["schema"],
                                                   format_checker=jsonschema.FormatChecker())
            for skill, d in describes.items()
        }

    async def refuse(self, updater: TaskUpdater, code: str, message: str, failed: bool = False) -> None:
        part = new_text_part(message) if self.flaw == "no-condition" else error(code, message)
        status = updater.new_agent_message(parts=[part])
        await (updater.failed(status) if failed else updater.reject(status))

    async def execute(self, context: RequestContext, queue: Any) -> None:
        request = request_of(context)
        updater = await start(context, queue)
        if not isinstance(request, dict):
            await self.refuse(updater, "input_invalid", "send one Data Part")
            return
        if request.get("skill") == "describe_skill":
            asked = (request.get("arguments") or {}).get("skill_id")
            if asked not in self.describes:
                await self.refuse(updater, "skill_not_advertised", "unknown skill")
                return
            describe = copy.deepcopy(self.describes[asked])
            if self.flaw == "wrong-digest":
                describe["result"]["interface_digest"] = STALE
            if self.flaw == "tampered-document":
                describe["result"]["interface"]["authority"]["default_mode"] = "execute"
            name = "describe" if self.flaw == "misnamed-describe" else "describe_skill"
            await updater.add_artifact([new_data_part(describe)], name=name)
            await updater.complete()
            return
        skill = request.get("skill")
        if self.flaw == "refuses" and skill in self.describes:
            await self.refuse(updater, "authorization_failed", "not allowed")
            return
        if skill not in self.describes:
            if self.flaw == "serves-anything":
                await updater.complete()
                return
            await self.refuse(updater, "skill_not_advertised", "unknown skill")
            return
        active = self.describes[skill]["result"]
        stale = (request.get("skill_version") != active["interface"]["skill_version"]
                 or request.get("interface_digest") != active["interface_digest"])
        if stale and self.flaw != "accepts-stale":
            await self.refuse(updater, "interface_mismatch", "stale interface")
            return
        args = request.get("arguments")
        valid = self.validators[skill].is_valid(args)
        if not valid and self.flaw != "accepts-invalid":
            await self.refuse(updater, "input_invalid", "invalid input", failed=self.flaw == "wrong-state")
            return
        if self.flaw == "no-condition":
            await updater.failed(updater.new_agent_message(
                parts=[new_text_part("the agent failed while processing this request")]))
            return
        if not valid or skill != SKILL:
            await updater.complete()  # accepted what it had to refuse, and produced nothing
            return
        record, result = evaluate(args)
        if self.flaw == "invalid-record":
            del record["observed_at"]
        if self.flaw == "invalid-result":
            result["result"]["result"] = "maybe"
        record_name = "observation" if self.flaw == "misnamed-record" else "resource-observation"
        await updater.add_artifact([new_data_part(record)], artifact_id="observation-7", name=record_name)
        await updater.add_artifact([new_data_part(result)], artifact_id="result-1", name=SKILL)
        if self.flaw == "two-results":
            await updater.add_artifact([new_data_part(result)], artifact_id="result-2", name=SKILL)
        if self.flaw == "error-and-text":
            # The draft's error object, but not as the only Part of the status Message.
            parts = [error("authorization_failed", "no"), new_text_part("no")]
            await updater.reject(updater.new_agent_message(parts=parts))
            return
        await updater.complete()

    async def cancel(self, context: RequestContext, queue: Any) -> None:
        raise NotImplementedError


def routes(card: AgentCard, executor: AgentExecutor) -> list[Any]:
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    return (create_agent_card_routes(card) + create_rest_routes(handler, path_prefix="/rest")
            + create_jsonrpc_routes(handler, rpc_url="/"))


def interfaces(url: str) -> list[dict[str, str]]:
    """Both bindings of an agent mounted at `url`."""
    return [
        {"url": url + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": url + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def serve(sock: socket.socket, mounts: dict[str, list[Any]], wrap: Callable[[Any], Any] = lambda a: a) -> Iterator[str]:
    """Serve each route list under `/<name>` on `sock`; yields the base URL."""
    app = Starlette(routes=[Mount(f"/{name}", routes=r) for name, r in mounts.items()])
    server = uvicorn.Server(uvicorn.Config(wrap(app), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the a2a-sdk server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


class Delegator(AgentExecutor):
    """An upstream agent (plain a2a-sdk) whose task delegates to a downstream agent
    through `skillbundle.client.SkillClient`, as a delegation hop; it completes with
    the hop record as its one Data Part."""

    def __init__(self, me: str, downstream: str, arguments: dict[str, Any]) -> None:
        self.me = me
        self.downstream = downstream
        self.arguments = arguments

    async def execute(self, context: RequestContext, queue: Any) -> None:
        from skillbundle.client import SkillClient

        updater = await start(context, queue)
        async with await SkillClient.from_card_url(self.downstream) as agent:
            called = await agent.call(SKILL, self.arguments, upstream=(self.me, context.task_id))
        await updater.add_artifact([new_data_part({"hop": called.hop, "result": called.result})], name="hop")
        await updater.complete()

    async def cancel(self, context: RequestContext, queue: Any) -> None:
        raise NotImplementedError
