"""`skillbundle serve` in front of upstream agents that know nothing of skillbundle (one
on a2a-sdk, one on @a2a-js/sdk), called by clients on both SDKs, on both bindings,
blocking and streaming, each discovering the gateway from its Agent Card only.

The classes: the gateway's card; valid requests reach the upstream and its valid results
come back; describe_skill is answered from the bundle; each kind of bad input is refused
before the upstream sees it (the upstream counts its calls); each upstream misbehaviour
ends in a failed Task with nothing invalid delivered, whichever way the Task is read
(the response, the stream, GetTask, ListTasks); base requests pass through; metrics and
logs; `skillbundle probe` passes against the gateway.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import time
import uuid
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.client import ClientCallContext
from a2a.extensions.common import HTTP_EXTENSION_HEADER
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.types import Message, Role, SendMessageConfiguration, SendMessageRequest, TaskPushNotificationConfig
from a2a.utils.errors import PushNotificationNotSupportedError

from conftest import (
    BIN,
    EXTENSION_URI,
    ROOT,
    SECRET,
    SKILLS,
    Gateway,
    Schemas,
    Sent,
    Upstream,
    clients,
    example,
    free_port,
    label,
    run_cli,
    skill_request,
)

SKILL = "evaluate_resource_condition"


def seen(client: Any, sent: Sent) -> tuple[dict[str, Any] | None, list[dict[str, Any]], str]:
    """The final Task (GetTask; None when the send ended in a protocol error), every
    Artifact the client could see of it (stream events, the response, GetTask,
    ListTasks), and the text of all of it (to look for what must not leak)."""
    task_id = sent.task_id()
    artifacts = list(sent.artifacts())
    texts = [json.dumps(sent.events), json.dumps(sent.error)]
    if task_id is None:
        return None, artifacts, "\n".join(texts)
    got = client.get(task_id)
    assert "task" in got, (label(client), got)
    task = got["task"]
    artifacts += task.get("artifacts", [])
    listed = client.list()
    assert "error" not in listed, (label(client), listed)
    for t in listed.get("tasks", []):
        if t["id"] == task_id:
            artifacts += t.get("artifacts", [])
    texts += [json.dumps(got), json.dumps(listed)]
    return task, artifacts, "\n".join(texts)


def error_of(task: dict[str, Any]) -> dict[str, Any]:
    """The draft's error object of a refused or failed Task: its status message's one
    Data Part."""
    parts = task["status"]["message"]["parts"]
    assert len(parts) == 1 and "data" in parts[0], task["status"]
    return parts[0]["data"]["error"]


# -- the card ------------------------------------------------------------------------------


def test_the_card_is_the_gateways_with_the_bundle(gateway: Gateway, schemas: Schemas) -> None:
    card = gateway.card()
    bindings = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
    assert set(bindings) >= {"JSONRPC", "HTTP+JSON"}, card["supportedInterfaces"]
    assert all(url.startswith(gateway.url) for url in bindings.values()), bindings
    ids = {s["id"] for s in card["skills"]}
    assert ids >= {*SKILLS, "describe_skill"}, ids
    (ext,) = [e for e in card["capabilities"]["extensions"] if e["uri"] == EXTENSION_URI]
    assert not ext.get("required", False)
    advertised = {s["skill_id"]: (s["skill_version"], s["interface_digest"]) for s in ext["params"]["skills"]}
    for skill in SKILLS:
        interface = schemas.documents[skill]["result"]
        assert advertised[skill] == (interface["interface"]["skill_version"], interface["interface_digest"])


# -- valid requests --------------------------------------------------------------------------


@pytest.mark.parametrize("skill", SKILLS)
def test_valid_requests_reach_the_upstream_and_valid_results_come_back(gateway: Gateway, upstream: Upstream,
                                                                       schemas: Schemas, skill: str) -> None:
    (name, arguments), *_ = example(skill)
    modes = schemas.documents[skill]["result"]["interface"]["interaction"]["supported_response_modes"]
    for client in clients(gateway.url):
        before = upstream.calls()
        sent = client.send(data=skill_request(schemas, skill, arguments))
        if client.stream and "stream" not in modes:
            # The skill's interaction declaration has no `stream` (manage_interface_config):
            # A2A's UnsupportedOperationError, and the upstream never asked.
            assert sent.error is not None, (label(client), sent.events)
            assert (sent.error["code"] == -32004 or "UnsupportedOperation" in sent.error["name"]
                    or "does not support this SendStreamingMessage request" in sent.error["message"]), \
                (label(client), sent.error)
            assert upstream.calls()["skills"].get(skill, 0) == before["skills"].get(skill, 0), label(client)
            continue
        assert sent.error is None, (label(client), sent.error)
        task, artifacts, _ = seen(client, sent)
        assert task is not None and task["status"]["state"] == "TASK_STATE_COMPLETED", (label(client), task)
        schemas.assert_valid_artifacts(skill, artifacts)
        results = [a for a in task["artifacts"] if a["name"] == skill]
        assert len(results) == 1, (label(client), task["artifacts"])
        assert upstream.calls()["skills"].get(skill, 0) == before["skills"].get(skill, 0) + 1


def test_a_chunked_result_is_assembled_and_delivered(gateway: Gateway, schemas: Schemas,
                                                    example_arguments: dict) -> None:
    arguments = {**example_arguments, "resource_id": "misbehave:chunked"}
    for client in clients(gateway.url):
        sent = client.send(data=skill_request(schemas, SKILL, arguments))
        task, artifacts, _ = seen(client, sent)
        assert task is not None and task["status"]["state"] == "TASK_STATE_COMPLETED", (label(client), task)
        schemas.assert_valid_artifacts(SKILL, [a for a in artifacts if a.get("parts")])
        (result,) = [a for a in task["artifacts"] if a["name"] == SKILL]
        assert result["parts"][0]["data"]["result"]["result"] == "condition_not_met"


def test_describe_skill_is_answered_from_the_bundle(gateway: Gateway, upstream: Upstream, schemas: Schemas) -> None:
    for client in clients(gateway.url):
        for skill in SKILLS:
            before = upstream.calls()["requests"]
            sent = client.send(data={"skill": "describe_skill", "arguments": {"skill_id": skill}})
            after = upstream.calls()["requests"]
            task, artifacts, _ = seen(client, sent)
            assert task is not None and task["status"]["state"] == "TASK_STATE_COMPLETED", (label(client), task)
            (described,) = [a for a in task["artifacts"] if a["name"] == "describe_skill"]
            assert described["parts"][0]["data"] == schemas.documents[skill], label(client)
            assert after == before, f"{label(client)}: describe_skill reached the upstream"


# -- bad input never reaches the upstream ------------------------------------------------------


def bad_inputs(schemas: Schemas, example_arguments: dict) -> list[tuple[str, dict[str, Any], str]]:
    """(what, skill request, the error code the draft requires)."""
    cases = []
    for skill in SKILLS:
        for name, arguments in example(skill, "invalid"):
            cases.append((f"{skill}: {name}", skill_request(schemas, skill, arguments), "input_invalid"))
    valid = skill_request(schemas, SKILL, example_arguments)
    cases.append(("a stale interface_digest", {**valid, "interface_digest": "sha256:" + "1" * 64}, "interface_mismatch"))
    cases.append(("another skill_version", {**valid, "skill_version": "0.9"}, "interface_mismatch"))
    cases.append(("no arguments", {k: v for k, v in valid.items() if k != "arguments"}, "input_invalid"))
    cases.append(("arguments not an object", {**valid, "arguments": ["network-resource-123"]}, "input_invalid"))
    deep: Any = "x"
    for _ in range(30):  # past the gateway's --max-depth (conftest), within protobuf's 100
        deep = {"d": deep}
    cases.append(("arguments nested 30 deep", {**valid, "arguments": {**example_arguments, "resource_id": deep}},
                  "resource_limit_exceeded"))
    return cases


def test_each_kind_of_bad_input_is_refused_before_the_upstream(gateway: Gateway, upstream: Upstream,
                                                               schemas: Schemas, example_arguments: dict) -> None:
    configs = list(clients(gateway.url))
    for i, (what, request, code) in enumerate(bad_inputs(schemas, example_arguments)):
        # Refusing is the gateway's alone, whatever the upstream: every client, binding and
        # mode before the a2a-sdk upstream; one of them in turn before the other.
        for client in configs if upstream.kind == "python" else [configs[i % len(configs)]]:
            before = upstream.calls()["requests"]
            sent = client.send(data=request)
            assert upstream.calls()["requests"] == before, f"{label(client)}: {what} reached the upstream"
            task, artifacts, _ = seen(client, sent)
            assert artifacts == [], (label(client), what, artifacts)
            if code == "resource_limit_exceeded" and task is None:
                assert sent.error is not None, (label(client), what)  # refused at the binding
                continue
            assert task is not None, (label(client), what, sent.error)
            assert task["status"]["state"] == "TASK_STATE_REJECTED", (label(client), what, task["status"])
            assert error_of(task)["code"] == code, (label(client), what, task["status"])


def test_a_skill_request_beside_another_part_or_without_activation_is_refused(
        gateway: Gateway, upstream: Upstream, schemas: Schemas, example_arguments: dict) -> None:
    request = skill_request(schemas, SKILL, example_arguments)
    for client in clients(gateway.url):
        before = upstream.calls()["requests"]
        sent = client.send(data=request, activate=False)
        assert upstream.calls()["requests"] == before, f"{label(client)}: reached the upstream"
        task, artifacts, _ = seen(client, sent)
        assert artifacts == []
        assert task is None or task["status"]["state"] == "TASK_STATE_REJECTED", (label(client), task)


def test_an_oversized_body_is_refused_before_the_upstream(gateway: Gateway, upstream: Upstream, schemas: Schemas,
                                                          example_arguments: dict) -> None:
    big = {**example_arguments, "resource_id": "r" * (2 << 20)}
    for client in clients(gateway.url):
        before = upstream.calls()["requests"]
        sent = client.send(data=skill_request(schemas, SKILL, big))
        assert upstream.calls()["requests"] == before, f"{label(client)}: a 2 MiB body reached the upstream"
        assert sent.task_id() is None or seen(client, sent)[0]["status"]["state"] == "TASK_STATE_REJECTED"


# -- upstream misbehaviour never shows -----------------------------------------------------------

OUTPUT_INVALID = ["invalid-result", "undeclared-record", "invalid-record", "two-results"]


@pytest.mark.parametrize("mode", [*OUTPUT_INVALID, "raise", "slow"])
def test_each_upstream_misbehaviour_fails_the_task_with_nothing_invalid_delivered(
        gateway: Gateway, upstream: Upstream, schemas: Schemas, example_arguments: dict, mode: str) -> None:
    arguments = {**example_arguments, "resource_id": f"misbehave:{mode}"}
    configs = list(clients(gateway.url))
    if mode == "slow":  # each waits out the gateway's upstream deadline: one per binding and mode
        configs = [c for i, c in enumerate(configs) if (i // 4) == (i % 2)]
    for client in configs:
        sent = client.send(data=skill_request(schemas, SKILL, arguments))
        task, artifacts, text = seen(client, sent)
        assert task is not None, (label(client), mode, sent.error)
        assert task["status"]["state"] == "TASK_STATE_FAILED", (label(client), mode, task["status"])
        schemas.assert_valid_artifacts(SKILL, artifacts)
        assert not [a for a in artifacts if a["name"] == SKILL], (label(client), mode, "a result was delivered")
        assert SECRET not in text, f"{label(client)}: the upstream's detail leaked ({mode})"
        if mode in OUTPUT_INVALID:
            assert error_of(task)["code"] == "output_invalid", (label(client), mode, task["status"])


# -- base requests -----------------------------------------------------------------------------------


def test_base_requests_pass_through_unchanged(gateway: Gateway, upstream: Upstream) -> None:
    for client in clients(gateway.url):
        for activate in (False, True):
            before = upstream.calls()["executions"]
            sent = client.send(text="hello upstream", activate=activate)
            assert sent.error is None, (label(client), sent.error)
            message = sent.message()
            assert message is not None, (label(client), sent.events)
            assert message["parts"][0]["text"] == "echo: hello upstream"
            assert upstream.calls()["executions"] == before + 1


async def send_with_push(url: str, binding: str, stream: bool, part: Any, activate: bool) -> Any:
    """a2a-sdk's client sending `part` with a push-notification config: its events, or the
    exception it raised."""
    message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[part])
    if activate:
        message.extensions.append(EXTENSION_URI)
    context = ClientCallContext(service_parameters={HTTP_EXTENSION_HEADER: EXTENSION_URI}) if activate else None
    push = TaskPushNotificationConfig(url="https://caller.example/hook", token=SECRET)
    request = SendMessageRequest(message=message,
                                 configuration=SendMessageConfiguration(task_push_notification_config=push))
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        client = await create_client(card, ClientConfig(httpx_client=http, streaming=stream,
                                                        supported_protocol_bindings=[binding]))
        try:
            return [r async for r in client.send_message(request, context=context)]
        except Exception as e:  # noqa: BLE001 (the client's error is the answer)
            return e
        finally:
            await client.close()


def test_push_configs_are_refused_as_the_card_says(gateway: Gateway, upstream: Upstream, schemas: Schemas,
                                                   example_arguments: dict) -> None:
    """The card says `pushNotifications: false`: a send with a push config, a base request
    or a skill request, is refused with PushNotificationNotSupportedError before the
    upstream, through a2a-sdk's client on both bindings, blocking and streaming."""
    card = httpx.get(f"{gateway.url}/.well-known/agent-card.json", timeout=10).json()
    assert card["capabilities"]["pushNotifications"] is False, card
    governed = new_data_part(skill_request(schemas, SKILL, example_arguments))
    before = upstream.calls()
    for binding in ("JSONRPC", "HTTP+JSON"):
        for stream in (False, True):
            for part, activate in ((new_text_part("hello upstream"), False), (governed, True)):
                answer = asyncio.run(send_with_push(gateway.url, binding, stream, part, activate))
                where = (binding, stream, activate)
                assert isinstance(answer, PushNotificationNotSupportedError), (where, answer)
                assert SECRET not in str(answer), (where, answer)
    assert upstream.calls() == before


# -- operations -------------------------------------------------------------------------------------------


def test_metrics_count_requests_refusals_and_name_the_bundle(gateway: Gateway, schemas: Schemas,
                                                             example_arguments: dict) -> None:
    client = next(clients(gateway.url))
    client.send(data=skill_request(schemas, SKILL, {**example_arguments, "condition": {}}))
    text = gateway.metrics()
    for name in ["skillbundle_gateway_requests_total", "skillbundle_gateway_refusals_total",
                 "skillbundle_gateway_upstream_seconds", "skillbundle_gateway_bundle_info"]:
        assert name in text, f"/metrics has no {name}"
    assert 'code="input_invalid"' in text
    assert 'version="0.1.0"' in text
    assert httpx.get(f"{gateway.url}/healthz", timeout=10).status_code == 200


def test_the_log_is_json_lines_without_argument_values(gateway: Gateway, schemas: Schemas,
                                                       example_arguments: dict) -> None:
    marker = "argument-value-5d1e"
    client = next(clients(gateway.url))
    client.send(data=skill_request(schemas, SKILL, {**example_arguments, "resource_id": marker}))
    client.send(data=skill_request(schemas, SKILL, {**example_arguments, "resource_id": marker, "extra": marker}))
    lines = [line for line in gateway.stderr().splitlines() if line.strip()]
    assert lines, "the gateway logged nothing"
    for line in lines:
        json.loads(line)
    assert marker not in gateway.stderr()


def test_skillbundle_probe_passes_against_the_gateway(gateway: Gateway) -> None:
    for binding in ("jsonrpc", "http-json"):
        proc = run_cli("probe", gateway.url, "--workspace", ROOT / "example-skills", "--binding", binding,
                       check=False)
        assert proc.returncode == 0, f"probe --binding {binding} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"


def test_an_unreachable_upstream_keeps_readyz_503(signed: Any, tmp_path: Any) -> None:
    """The contract: an upstream whose card cannot be read is not fatal at start; the
    gateway is alive but not ready."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    port = free_port()
    proc = subprocess.Popen([str(BIN), "serve", "--bundle", str(signed.bundle), "--trust", str(signed.jwk),
                             "--upstream", f"http://127.0.0.1:{dead}", "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and proc.poll() is None, "the gateway did not come up"
                time.sleep(0.05)
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 503
    finally:
        proc.terminate()
        proc.wait(timeout=30)

