"""The gateway's operations against real parts, each test with a gateway of its own:
strict mode (`--require-extension`); reloading a newer bundle (SIGHUP) while 16 clients
keep calling, with no failed request; SIGTERM with a task in flight."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.client import ClientCallContext
from a2a.extensions.common import HTTP_EXTENSION_HEADER
from a2a.helpers.proto_helpers import new_data_part
from a2a.types import Message, Role, SendMessageRequest, TaskState

from conftest import (
    EXTENSION_URI,
    Gateway,
    PyClient,
    Schemas,
    Signed,
    Upstream,
    build_bundle,
    clients,
    label,
    skill_request,
    start_upstream,
)

SKILL = "evaluate_resource_condition"


def test_require_extension_advertises_required_and_refuses_without_activation(
        upstream: Upstream, signed: Signed, schemas: Schemas, example_arguments: dict, tmp_path: Path) -> None:
    g = Gateway(signed.bundle, signed.jwk, upstream.url, tmp_path / "gateway.log", "--require-extension")
    try:
        (ext,) = [e for e in g.card()["capabilities"]["extensions"] if e["uri"] == EXTENSION_URI]
        assert ext["required"] is True
        request = skill_request(schemas, SKILL, example_arguments)
        for client in clients(g.url):
            for what, send in [("a base request", {"text": "hello"}), ("a skill request", {"data": request})]:
                before = upstream.calls()["requests"]
                sent = client.send(**send, activate=False)
                assert upstream.calls()["requests"] == before, f"{label(client)}: {what} reached the upstream"
                assert sent.error is not None, (label(client), what, sent.events)
                assert "ExtensionSupportRequired" in sent.error["name"] or sent.error["code"] == -32008, \
                    (label(client), what, sent.error)
            sent = client.send(data=request)
            assert sent.error is None, (label(client), sent.error)
    finally:
        g.stop()


async def load(url: str, request: dict[str, Any], stop: asyncio.Event, workers: int = 16) -> tuple[int, list[str]]:
    """`workers` a2a-sdk clients (JSON-RPC, blocking) calling until `stop`: the number of
    completed Tasks, and what went wrong otherwise."""
    done, failures = 0, []
    context = ClientCallContext(service_parameters={HTTP_EXTENSION_HEADER: EXTENSION_URI})

    async def worker() -> None:
        nonlocal done
        async with httpx.AsyncClient(timeout=60) as http:
            card = await A2ACardResolver(http, url).get_agent_card()
            client = await create_client(card, ClientConfig(httpx_client=http, streaming=False,
                                                            supported_protocol_bindings=["JSONRPC"]))
            while not stop.is_set():
                message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[new_data_part(request)])
                message.extensions.append(EXTENSION_URI)
                try:
                    async for r in client.send_message(SendMessageRequest(message=message), context=context):
                        if r.HasField("task") and r.task.status.state == TaskState.TASK_STATE_COMPLETED:
                            done += 1
                        else:
                            failures.append(str(r)[:300])
                except Exception as e:  # noqa: BLE001 (every failure is reported)
                    failures.append(f"{type(e).__name__}: {e}"[:300])
            await client.close()

    await asyncio.gather(*(worker() for _ in range(workers)))
    return done, failures


def test_sighup_reloads_a_newer_bundle_under_load_with_no_failed_request(
        upstream: Upstream, signed: Signed, schemas: Schemas, example_arguments: dict, tmp_path: Path) -> None:
    newer = build_bundle(tmp_path / "newer", "0.2.0", key=signed.key)
    serving = tmp_path / "serving" / signed.bundle.name
    serving.parent.mkdir()
    shutil.copy(signed.bundle, serving)
    g = Gateway(serving, signed.jwk, upstream.url, tmp_path / "gateway.log")
    try:
        assert 'version="0.1.0"' in g.metrics()
        request = skill_request(schemas, SKILL, example_arguments)

        async def scenario() -> tuple[int, list[str], float]:
            stop = asyncio.Event()
            running = asyncio.create_task(load(g.url, request, stop))
            await asyncio.sleep(1.5)
            staged = serving.with_suffix(".new")
            shutil.copy(newer.bundle, staged)
            os.replace(staged, serving)
            g.signal(signal.SIGHUP)
            reloaded_at = time.monotonic()
            deadline = reloaded_at + 30
            while 'version="0.2.0"' not in g.metrics():
                assert time.monotonic() < deadline, f"the gateway did not serve 0.2.0 within 30 s:\n{g.stderr()}"
                await asyncio.sleep(0.1)
            took = time.monotonic() - reloaded_at
            await asyncio.sleep(1.5)
            stop.set()
            done, failures = await running
            return done, failures, took

        done, failures, _ = asyncio.run(scenario())
        assert failures == [], f"{len(failures)} request(s) failed during the reload: {failures[:3]}"
        assert done > 16, f"only {done} requests completed"
        assert 'version="0.1.0"' not in g.metrics().split("skillbundle_gateway_bundle_info", 1)[1].split("\n# ", 1)[0]
    finally:
        assert g.stop() == 0, g.stderr()


def test_sigterm_lets_an_in_flight_task_finish_then_exits_0(
        signed: Signed, schemas: Schemas, example_arguments: dict, tmp_path: Path) -> None:
    """An upstream that takes 2 s: SIGTERM half-way, the caller still gets its completed
    Task, the gateway then exits 0 and takes no new connection."""
    for kind in ("python", "js"):
        up = start_upstream(kind, tmp_path / f"upstream-{kind}.log", {"UPSTREAM_SLOW_SECONDS": "2"})
        g = Gateway(signed.bundle, signed.jwk, up.url, tmp_path / f"gateway-{kind}.log")
        try:
            client = PyClient(g.url, "JSONRPC", False)
            arguments = {**example_arguments, "resource_id": "misbehave:slow"}
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pending = pool.submit(client.send, data=skill_request(schemas, SKILL, arguments))
                time.sleep(0.7)
                g.signal(signal.SIGTERM)
                sent = pending.result(timeout=60)
            assert sent.error is None, (kind, sent.error)
            (event,) = sent.events
            assert event["task"]["status"]["state"] == "TASK_STATE_COMPLETED", (kind, event)
            assert g.proc.wait(timeout=60) == 0, g.stderr()
            try:
                httpx.get(f"{g.url}/healthz", timeout=2)
                raise AssertionError(f"{kind}: the gateway still answers after SIGTERM")
            except httpx.HTTPError:
                pass
        finally:
            g.stop()
            up.process.stop()
