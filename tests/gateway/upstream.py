"""An upstream A2A 1.0 agent on a2a-sdk that knows nothing of skillbundle: it serves the
example skills' domain (example-skills/) as plain A2A skills, over JSON-RPC and
HTTP+JSON, and is what the gateway's real-parts tests put behind `skillbundle serve`.
Its twin on @a2a-js/sdk is tests/js/upstream.cjs; both answer alike.

    target/py-venv/bin/python tests/gateway/upstream.py

It listens on 127.0.0.1 on a free port and prints one line, {"port": N}, when ready.

A request whose single Data Part is a skill request object ({"skill", "arguments", ...})
runs that skill; anything else (a base A2A request) is answered with one text Message,
"echo: " and the texts it was sent. What it does wrong is chosen per request by the
test: a string "misbehave:MODE" anywhere in `arguments` (else $UPSTREAM_MODE, else none).
MODE is one of

    invalid-result     the result breaks its output schema
    undeclared-record  an extra Artifact of a kind the skill does not declare
    invalid-record     a supporting record breaks its schema
    two-results        two primary result Artifacts
    raise              the executor raises (with a secret in the message)
    slow               sleeps $UPSTREAM_SLOW_SECONDS (default 30) before answering well
    chunked            answers well, the result in two Artifact chunks: empty, then its
                       Data Part appended

GET /calls answers {"requests": N, "executions": N, "skills": {skill: N}}: the A2A
requests that reached it (any method, either binding) and the executions it ran, so that
a test can assert that a refused request never reached it.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import uuid
from collections.abc import Callable
from typing import Any

import uvicorn
from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCard, Message, Role
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

SECRET = "upstream-secret-7f3a"
SLOW_SECONDS = float(os.environ.get("UPSTREAM_SLOW_SECONDS", "30"))

CALLS: dict[str, Any] = {"requests": 0, "executions": 0, "skills": {}}


def mode_of(value: Any) -> str | None:
    """The misbehaviour a request asks for: "misbehave:MODE" anywhere in its arguments."""
    if isinstance(value, str):
        return value.removeprefix("misbehave:") if value.startswith("misbehave:") else None
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            if (mode := mode_of(item)) is not None:
                return mode
    return None


class Answer:
    """One skill's answer: supporting records (kind, artifactId, record), the result
    object, and how to break each."""

    def __init__(self, records: list[tuple[str, str, dict[str, Any]]], result: dict[str, Any],
                 break_result: Callable[[dict[str, Any]], None],
                 break_record: Callable[[dict[str, Any]], None]) -> None:
        self.records = records
        self.result = result
        self.break_result = break_result
        self.break_record = break_record


def evaluate_resource_condition(args: dict[str, Any]) -> Answer:
    observed = 42
    c = args.get("condition") or {}
    threshold = c.get("threshold")
    met = {"gt": lambda: observed > threshold, "gte": lambda: observed >= threshold,
           "lt": lambda: observed < threshold, "lte": lambda: observed <= threshold}[c.get("operator")]()
    record = {"record_id": "observation-7", "resource_id": str(args.get("resource_id")), "metric": c.get("metric"),
              "value": observed, "unit": c.get("unit"), "observed_at": "2026-08-11T12:00:01Z"}
    result = {"result": "condition_met" if met else "condition_not_met", "observed_value": observed,
              "unit": c.get("unit"), "supporting_record_refs": ["observation-7"]}
    return Answer([("resource-observation", "observation-7", record)], result,
                  lambda r: r.update(result="maybe"), lambda r: r.pop("observed_at"))


def manage_interface_config(args: dict[str, Any]) -> Answer:
    config = {"admin_state": "up", "oper_state": "up", "description": "uplink to agg-1"}

    def break_result(r: dict[str, Any]) -> None:
        r["config"]["oper_state"] = "sideways"

    if args.get("operation") == "read":
        return Answer([], {"operation": "read", "applied": False, "config": config}, break_result, lambda r: None)
    if args.get("operation") == "set_admin_state":
        before, after = {"admin_state": "up"}, {"admin_state": args.get("admin_state")}
    else:
        before, after = {"description": config["description"]}, {"description": args.get("description")}
    record = {"record_id": "change-1", "change_ticket": args.get("change_ticket"), "approved_by": "noc-lead@example.net",
              "committed_at": "2026-08-11T12:10:00Z", "device": args.get("device"), "interface": args.get("interface"),
              "before": before, "after": after}
    applied = {**config, **after, "oper_state": "down" if after.get("admin_state") == "down" else "up"}
    result = {"operation": args.get("operation"), "applied": True, "config": applied,
              "supporting_record_refs": ["change-1"]}
    return Answer([("config-change", "change-1", record)], result, break_result,
                  lambda r: r.update(change_ticket="not-a-ticket"))


def trace_network_path(args: dict[str, Any]) -> Answer:
    protocol = args.get("protocol", "icmp")

    def probe(n: int, responder: str, rtt: float) -> dict[str, Any]:
        return {"record_id": f"probe-{n}", "sent_at": f"2026-08-11T12:00:0{n}Z", "ttl": n, "protocol": protocol,
                "responder": responder, "rtt_ms": rtt, "producer": "https://agents.example.net/path-tracer"}

    def break_result(r: dict[str, Any]) -> None:
        r["hops"][0]["ttl"] = 0

    result = {"reached": True,
              "hops": [{"ttl": 1, "responder": "192.0.2.1", "rtt_ms": 0.4},
                       {"ttl": 2, "responder": "198.51.100.7", "rtt_ms": 3.1}],
              "supporting_record_refs": ["probe-1", "probe-2"]}
    return Answer([("path-probe", "probe-1", probe(1, "192.0.2.1", 0.4)),
                   ("path-probe", "probe-2", probe(2, "198.51.100.7", 3.1))],
                  result, break_result, lambda r: r.update(sent_at="yesterday"))


SKILLS: dict[str, Callable[[dict[str, Any]], Answer]] = {
    "evaluate_resource_condition": evaluate_resource_condition,
    "manage_interface_config": manage_interface_config,
    "trace_network_path": trace_network_path,
}


def skill_request(message: Message) -> dict[str, Any] | None:
    """The skill request object of a message: its one Data Part, when that is an object
    with `skill` and `arguments`."""
    if len(message.parts) != 1 or not message.parts[0].HasField("data"):
        return None
    data = json_format.MessageToDict(message.parts[0].data)
    if not isinstance(data, dict) or not isinstance(data.get("skill"), str) or "arguments" not in data:
        return None
    return data


class DomainExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, queue: Any) -> None:
        CALLS["executions"] += 1
        message = context.message
        request = skill_request(message)
        if request is None:
            texts = [p.text for p in message.parts if p.HasField("text")]
            await queue.enqueue_event(Message(role=Role.ROLE_AGENT, message_id=uuid.uuid4().hex,
                                              context_id=context.context_id,
                                              parts=[new_text_part("echo: " + " ".join(texts))]))
            return
        skill = request["skill"]
        CALLS["skills"][skill] = CALLS["skills"].get(skill, 0) + 1
        mode = mode_of(request.get("arguments")) or os.environ.get("UPSTREAM_MODE") or None
        task = context.current_task or new_task_from_user_message(message)
        await queue.enqueue_event(task)
        updater = TaskUpdater(queue, task.id, task.context_id)
        await updater.start_work()
        if mode == "raise":
            raise RuntimeError(f"the upstream broke ({SECRET})")
        if mode == "slow":
            await asyncio.sleep(SLOW_SECONDS)
        domain = SKILLS.get(skill)
        if domain is None:
            await updater.reject(updater.new_agent_message(parts=[new_text_part("no such skill")]))
            return
        args = request.get("arguments")
        answer = domain(args if isinstance(args, dict) else {})
        if mode == "invalid-result":
            answer.break_result(answer.result)
        if mode == "invalid-record" and answer.records:
            answer.break_record(answer.records[0][2])
        for kind, artifact_id, record in answer.records:
            await updater.add_artifact([new_data_part(record)], artifact_id=artifact_id, name=kind)
        if mode == "undeclared-record":
            await updater.add_artifact([new_data_part({"secret": SECRET})], artifact_id="debug-1", name="debug-dump")
        result = {"skill": skill, "result": answer.result}
        if mode == "chunked":
            await updater.add_artifact([], artifact_id="result-1", name=skill, last_chunk=False)
            await updater.add_artifact([new_data_part(result)], artifact_id="result-1", name=skill, append=True,
                                       last_chunk=True)
        else:
            await updater.add_artifact([new_data_part(result)], artifact_id="result-1", name=skill)
        if mode == "two-results":
            await updater.add_artifact([new_data_part(result)], artifact_id="result-2", name=skill)
        await updater.complete()

    async def cancel(self, context: RequestContext, queue: Any) -> None:
        task = context.current_task
        if task is not None:
            await TaskUpdater(queue, task.id, task.context_id).cancel()


def card(base: str) -> AgentCard:
    def skill(id_: str, name: str, description: str, tags: list[str]) -> dict[str, Any]:
        return {"id": id_, "name": name, "description": description, "tags": tags,
                "inputModes": ["application/json"], "outputModes": ["application/json"]}

    return json_format.ParseDict({
        "name": "Network agent (a2a-sdk)",
        "description": "Answers network assurance questions; knows nothing of schema interfaces.",
        "supportedInterfaces": [
            {"url": f"{base}/a2a/jsonrpc/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": f"{base}/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "version": "1.0.0",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["application/json", "text/plain"],
        "defaultOutputModes": ["application/json", "text/plain"],
        "skills": [
            skill("evaluate_resource_condition", "Evaluate resource condition",
                  "Checks whether an observed resource metric satisfies a threshold.", ["network", "assurance"]),
            skill("manage_interface_config", "Manage interface configuration",
                  "Reads or changes an interface's configuration.", ["network", "configuration"]),
            skill("trace_network_path", "Trace network path",
                  "Traces the forwarding path between two endpoints.", ["network", "troubleshooting"]),
        ],
    }, AgentCard())


class Counted:
    """ASGI middleware counting the HTTP requests that reach the A2A routes."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            CALLS["requests"] += 1
        await self.app(scope, receive, send)


async def calls(_request: Request) -> JSONResponse:
    return JSONResponse(CALLS)


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    agent_card = card(f"http://127.0.0.1:{port}")
    handler = DefaultRequestHandler(agent_executor=DomainExecutor(), task_store=InMemoryTaskStore(),
                                    agent_card=agent_card)
    app = Starlette(routes=[
        Route("/calls", calls),
        *create_agent_card_routes(agent_card),
        Mount("/a2a/jsonrpc", app=Counted(Starlette(routes=create_jsonrpc_routes(handler, rpc_url="/")))),
        Mount("/a2a/rest", app=Counted(Starlette(routes=create_rest_routes(handler)))),
    ])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            if task.done():
                task.result()
                return
            await asyncio.sleep(0.01)
        print(json.dumps({"port": port}), flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    sys.exit(main())
