"""The client side over the wire: `skillbundle call` against real a2a-sdk agents.

Agents (tests/python/agents.py), all on one uvicorn server on 127.0.0.1, each under its
own path with both bindings (JSON-RPC and HTTP+JSON):

* `enforcing`: SchemaEnforcingExecutor around the Evaluator domain logic;
* `plain`: a hand-written a2a-sdk agent that does not use skillbundle, with a card
  signed by the vendor key;
* one hand-written agent per flaw, each breaking one rule a client can check.

Plus a hostile HTTP server of the test's own that hangs or sends an endless body.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from a2a.types import AgentCard
from google.protobuf import json_format
from skillbundle import Bundle
from skillbundle.a2a import ExtensionEchoMiddleware, SchemaEnforcingExecutor, agent_card

import agents
from agents import SKILL
from conftest import BIN, Signed, run_cli

FLAWS = {
    # flaw: the clause `call` must name
    "wrong-digest": "digest-triple",
    "tampered-document": "digest-triple",
    "misnamed-describe": "describe-response",
    "two-results": "primary-result",
    "invalid-result": "result-valid",
    "invalid-record": "supporting-records",
    "misnamed-record": "supporting-records",
    "error-and-text": "error-object",
}
PROBE_ONLY = ["accepts-stale", "accepts-invalid", "wrong-state", "serves-anything", "refuses", "no-condition"]


@dataclass
class World:
    url: str
    evaluator: agents.Evaluator
    dir: Path
    signed: Signed

    def agent(self, name: str) -> str:
        return f"{self.url}/{name}"


def card_for(signed: Signed, base: dict[str, Any], d: Path, name: str, sign: bool) -> dict[str, Any]:
    """The card a vendor pipeline makes for a hand-written agent: `skillbundle card --base`."""
    base_file = d / f"{name}-base.json"
    base_file.write_text(json.dumps(base))
    extra = ["--sign-key", signed.dir / "vendor.key"] if sign else []
    return json.loads(run_cli("card", signed.bundle, "--trust", signed.jwk, "--base", base_file, *extra).stdout)


@pytest.fixture(scope="module")
def world(signed: Signed, tmp_path_factory: pytest.TempPathFactory, example_request: dict) -> Iterator[World]:
    d = tmp_path_factory.mktemp("wire")
    example_arguments = example_request["arguments"]
    bundle = Bundle.open(signed.bundle, trust=[signed.jwk])
    describes = {
        skill["skill_id"]: json.loads(run_cli("describe", signed.bundle, skill["skill_id"], "--trust", signed.jwk).stdout)
        for skill in bundle.skills
    }
    sock = agents.free_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    mounts: dict[str, list[Any]] = {}
    evaluator = agents.Evaluator()
    base = dict(agents.BASE_CARD, supportedInterfaces=agents.interfaces(f"{url}/enforcing"))
    card = agent_card(bundle, base)
    mounts["enforcing"] = agents.routes(card, SchemaEnforcingExecutor(bundle, evaluator))
    # The same agent, with the extension marked required in its card.
    base = dict(agents.BASE_CARD, supportedInterfaces=agents.interfaces(f"{url}/required"))
    required = json_format.MessageToDict(agent_card(bundle, base))
    required["capabilities"]["extensions"][0]["required"] = True
    required = json_format.ParseDict(required, AgentCard())
    mounts["required"] = agents.routes(required, SchemaEnforcingExecutor(bundle, agents.Evaluator()))
    for name in ["plain", *FLAWS, *PROBE_ONLY]:
        base = dict(agents.BASE_CARD, supportedInterfaces=agents.interfaces(f"{url}/{name}"))
        card = json_format.ParseDict(card_for(signed, base, d, name, sign=name == "plain"), AgentCard())
        executor = agents.HandWritten(describes, None if name == "plain" else name)
        mounts[name] = agents.routes(card, executor)
    # An upstream agent that delegates to `enforcing` (a delegation hop).
    chain = json_format.ParseDict(dict(agents.BASE_CARD, supportedInterfaces=agents.interfaces(f"{url}/chain"),
                                       skills=[]), AgentCard())
    mounts["chain"] = agents.routes(chain, agents.Delegator(f"{url}/chain", f"{url}/enforcing",
                                                            example_arguments))
    with agents.serve(sock, mounts, wrap=ExtensionEchoMiddleware) as served:
        assert served == url
        yield World(url=url, evaluator=evaluator, dir=d, signed=signed)


@pytest.fixture(scope="module")
def arguments(world: World, example_request: dict) -> Path:
    path = world.dir / "arguments.json"
    path.write_text(json.dumps(example_request["arguments"]))
    return path


def call(*args: Any) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([str(BIN), "call", *map(str, args), "--format", "json"], capture_output=True, text=True,
                          timeout=120)
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.parametrize("binding", ["jsonrpc", "http-json"])
@pytest.mark.parametrize("mode", [[], ["--stream"], ["--poll"]], ids=["blocking", "stream", "poll"])
def test_call_checks_and_delivers_from_the_enforcing_agent(world: World, arguments: Path, binding: str,
                                                          mode: list[str]) -> None:
    code, report = call(world.agent("enforcing"), SKILL, "--arguments", arguments, "--binding", binding, *mode)
    assert code == 0, report
    c = report["call"]
    assert c["result"]["result"] == "condition_not_met"
    assert c["result_artifact_id"] == "result-1"
    assert [(r["kind"], r["artifact_id"]) for r in c["records"]] == [("resource-observation", "observation-7")]
    assert c["skill_version"] == "1.0" and c["interface_digest"].startswith("sha256:")
    assert c["activation_echoed"] is True
    assert c["task_id"]


def test_call_prints_the_result_and_records_for_people(world: World, arguments: Path) -> None:
    proc = subprocess.run([str(BIN), "call", world.agent("plain"), SKILL, "--arguments", str(arguments)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"result", "records"}
    assert out["records"][0]["record"]["observed_at"] == "2026-08-11T12:00:01Z"


def test_call_reads_arguments_from_stdin(world: World, arguments: Path) -> None:
    proc = subprocess.run([str(BIN), "call", world.agent("plain"), SKILL, "--arguments", "-", "--format", "json"],
                          input=arguments.read_text(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("flaw", sorted(FLAWS))
def test_call_names_the_clause_each_flawed_agent_breaks(world: World, arguments: Path, flaw: str) -> None:
    for binding in ["jsonrpc", "http-json"]:
        code, report = call(world.agent(flaw), SKILL, "--arguments", arguments, "--binding", binding)
        assert code == 1, report
        failure = report["failure"]
        assert failure["kind"] == "violation", failure
        assert failure["violation"]["clause"] == FLAWS[flaw], failure
        assert failure["requirement"] and failure["section"]
        assert "evidence" in failure["violation"], failure


@pytest.mark.parametrize("binding", ["jsonrpc", "http-json"])
@pytest.mark.parametrize("mode", [[], ["--stream"], ["--poll"]], ids=["blocking", "stream", "poll"])
def test_a_failure_without_a_condition_is_reported_not_called_a_violation(world: World, arguments: Path,
                                                                         binding: str, mode: list[str]) -> None:
    code, report = call(world.agent("no-condition"), SKILL, "--arguments", arguments, "--binding", binding, *mode)
    assert code == 1, report
    assert report["failure"] == {"kind": "refused", "request": "skill", "state": "TASK_STATE_FAILED",
                                 "error": None}, report


def test_a_failure_without_a_condition_is_named_for_people(world: World, arguments: Path) -> None:
    proc = subprocess.run([str(BIN), "call", world.agent("no-condition"), SKILL, "--arguments", str(arguments)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip() == ("error: the skill task ended in TASK_STATE_FAILED with no machine-readable "
                                   "condition")


def test_probe_names_a_refusal_without_the_expected_condition(world: World, arguments: Path) -> None:
    code, out = probe(world.agent("no-condition"), "--arguments", f"{SKILL}={arguments}")
    assert code == 1
    checks = json.loads(out)["checks"]
    stale = next(c for c in checks if c["clause"] == "stale-interface")
    assert stale["status"] == "fail"
    assert "with no machine-readable condition, not interface_mismatch" in stale["message"], stale


def test_human_failure_names_clause_pointer_and_evidence(world: World, arguments: Path) -> None:
    proc = subprocess.run([str(BIN), "call", world.agent("invalid-record"), SKILL, "--arguments", str(arguments)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "error[supporting-records] (output_invalid)" in proc.stderr
    assert "at: /artifacts/" in proc.stderr and "the agent sent:" in proc.stderr


def test_invalid_arguments_are_refused_before_anything_is_sent(world: World, arguments: Path) -> None:
    bad = world.dir / "bad-arguments.json"
    args = json.loads(arguments.read_text())
    del args["condition"]["unit"]
    bad.write_text(json.dumps(args))
    seen = len(world.evaluator.seen)
    code, report = call(world.agent("enforcing"), SKILL, "--arguments", bad)
    assert code == 1
    assert report["failure"] == {"kind": "local", "error": report["failure"]["error"]}
    assert report["failure"]["error"]["error"]["code"] == "input_invalid"
    assert len(world.evaluator.seen) == seen


def test_an_unadvertised_skill_is_never_requested(world: World, arguments: Path) -> None:
    code, report = call(world.agent("enforcing"), "no_such_skill", "--arguments", arguments)
    assert code == 1
    assert report["failure"]["error"]["error"]["code"] == "skill_not_advertised"


def test_card_trust_requires_a_signature_by_the_key(world: World, arguments: Path, tmp_path: Path) -> None:
    jwk = world.signed.jwk
    code, report = call(world.agent("plain"), SKILL, "--arguments", arguments, "--card-trust", jwk)
    assert code == 0, report
    code, report = call(world.agent("enforcing"), SKILL, "--arguments", arguments, "--card-trust", jwk)
    assert code == 1 and report["failure"]["violation"]["clause"] == "card-signed"
    run_cli("keygen", "--out", tmp_path / "other")
    code, report = call(world.agent("plain"), SKILL, "--arguments", arguments, "--card-trust",
                        tmp_path / "other.jwk.json")
    assert code == 1 and report["failure"]["violation"]["clause"] == "card-signed"


class Hostile:
    """An HTTP server of the test's own: serves a good card whose interface points back
    at itself, then answers every POST by hanging or by an endless body."""

    def __init__(self, card: dict[str, Any], behaviour: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        card = dict(card, supportedInterfaces=[{"url": self.url + "/", "protocolBinding": "JSONRPC",
                                                "protocolVersion": "1.0"}])
        self.card = json.dumps(card).encode()
        self.behaviour = behaviour
        self.stop = threading.Event()
        threading.Thread(target=self.run, daemon=True).start()

    def run(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn: socket.socket) -> None:
        with conn:
            head = conn.recv(65536)
            if head.startswith(b"GET"):
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(self.card)).encode() + b"\r\nConnection: close\r\n\r\n" + self.card)
                return
            try:
                if self.behaviour == "hang":
                    self.stop.wait(60)
                else:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
                    chunk = b"[" * 65536
                    while not self.stop.is_set():
                        conn.sendall(chunk)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.mark.parametrize("behaviour", ["hang", "flood"])
def test_a_hostile_agent_neither_hangs_nor_exhausts_the_client(world: World, arguments: Path, signed: Signed,
                                                               tmp_path: Path, behaviour: str) -> None:
    base = dict(agents.BASE_CARD, supportedInterfaces=agents.interfaces("http://127.0.0.1:1"))
    hostile = Hostile(card_for(signed, base, tmp_path, "hostile", sign=False), behaviour)
    try:
        started = time.monotonic()
        code, report = call(hostile.url, SKILL, "--arguments", arguments, "--timeout", "3",
                            "--max-body", "1000000")
        elapsed = time.monotonic() - started
    finally:
        hostile.close()
    assert code == 1, report
    assert elapsed < 30
    failure = report["failure"]
    if behaviour == "hang":
        assert failure == {"kind": "wire", "message": "the agent did not answer within the deadline"}
    else:
        assert failure["violation"]["clause"] == "transport"
        assert failure["violation"]["condition"] == "resource_limit_exceeded"


PROBE_FLAWS = {
    # flaw: the clause `probe` must fail
    **FLAWS,
    "accepts-stale": "stale-interface",
    "accepts-invalid": "invalid-input",
    "wrong-state": "error-state",
    "serves-anything": "unadvertised-skill",
    "refuses": "primary-result",
    # Refusing a stale request without the condition the check expects fails it.
    "no-condition": "stale-interface",
}


def probe(*args: Any, fmt: str = "json") -> tuple[int, str]:
    proc = subprocess.run([str(BIN), "probe", *map(str, args), "--format", fmt], capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, proc.stdout


@pytest.mark.parametrize("name", ["enforcing", "plain", "required"])
@pytest.mark.parametrize("binding", ["jsonrpc", "http-json"])
def test_probe_passes_conforming_agents(world: World, arguments: Path, name: str, binding: str) -> None:
    code, out = probe(world.agent(name), "--arguments", f"{SKILL}={arguments}", "--binding", binding)
    report = json.loads(out)
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert code == 0 and report["ok"] and not failed, failed
    statuses = {(c["clause"], c.get("skill")): c["status"] for c in report["checks"]}
    for clause in ["describe-response", "digest-triple", "document-valid", "stale-interface", "invalid-input",
                   "primary-result", "result-valid", "supporting-records", "unadvertised-skill",
                   "describe-unknown"]:
        assert "pass" in {v for (c, _), v in statuses.items() if c == clause}, clause
    activation = statuses[("activation", None)]
    assert activation == ("pass" if name == "required" else "skip")
    for c in report["checks"]:
        assert c["section"] and c["requirement"] and c["level"] in ("MUST", "SHOULD")


@pytest.mark.parametrize("flaw", sorted(PROBE_FLAWS))
def test_probe_fails_each_flawed_agent_on_its_clause(world: World, arguments: Path, flaw: str) -> None:
    code, out = probe(world.agent(flaw), "--arguments", f"{SKILL}={arguments}")
    report = json.loads(out)
    assert code == 1 and not report["ok"], out
    failed = {c["clause"] for c in report["checks"] if c["status"] == "fail"}
    assert PROBE_FLAWS[flaw] in failed, (flaw, failed)


def test_probe_reports_for_github_and_sarif(world: World, arguments: Path) -> None:
    code, out = probe(world.agent("accepts-stale"), fmt="github")
    assert code == 1
    lines = out.splitlines()
    assert any(line.startswith("::error title=stale-interface::") for line in lines), out
    assert all(line.startswith("::") for line in lines), out
    code, out = probe(world.agent("accepts-stale"), fmt="sarif")
    assert code == 1
    log = json.loads(out)
    run = log["runs"][0]
    rules = {r["id"] for r in run["tool"]["driver"]["rules"]}
    assert "stale-interface" in rules
    fails = [r for r in run["results"] if r["kind"] == "fail"]
    assert any(r["ruleId"] == "stale-interface" and r["level"] == "error" for r in fails)
    assert all(r["kind"] in ("pass", "fail", "notApplicable") for r in run["results"])
    code, out = probe(world.agent("plain"), fmt="human")
    assert code == 0 and "passed every MUST check" in out


def test_probe_of_an_unreachable_agent_exits_2() -> None:
    sock = agents.free_socket()
    port = sock.getsockname()[1]
    sock.close()
    code, out = probe(f"http://127.0.0.1:{port}")
    assert code == 2, out


# The Python client (skillbundle.client.SkillClient) against the same agents.

from skillbundle import InterfaceError  # noqa: E402
from skillbundle._native import CardAdvertisement, InterfaceCache  # noqa: E402
from skillbundle.client import (  # noqa: E402
    DELEGATION_METADATA_KEY,
    ProtocolViolation,
    SkillClient,
    SkillRefused,
)


@pytest.mark.parametrize("bindings", [["JSONRPC"], ["HTTP+JSON"]])
@pytest.mark.parametrize("streaming", [False, True])
async def test_skill_client_calls_and_caches(world: World, example_request: dict, bindings: list[str],
                                             streaming: bool) -> None:
    cache = InterfaceCache(4)
    async with await SkillClient.from_card_url(world.agent("enforcing"), bindings=bindings, streaming=streaming,
                                               cache=cache) as agent:
        first = await agent.call(SKILL, example_request["arguments"])
        second = await agent.call(SKILL, example_request["arguments"])
    assert first.result["result"] == "condition_not_met"
    assert [r["kind"] for r in first.records] == ["resource-observation"]
    assert (first.interface_cached, second.interface_cached) == (False, True)
    assert first.task_id != second.task_id
    assert len(cache) == 1


async def test_skill_client_raises_typed_errors(world: World, example_request: dict) -> None:
    args = example_request["arguments"]
    async with await SkillClient.from_card_url(world.agent("plain")) as agent:
        with pytest.raises(InterfaceError) as e:
            await agent.call(SKILL, {"resource_id": "r"})
        assert e.value.code == "input_invalid" and e.value.task_state is None
        with pytest.raises(InterfaceError) as e:
            await agent.call("no_such_skill", args)
        assert e.value.code == "skill_not_advertised"
    async with await SkillClient.from_card_url(world.agent("refuses")) as agent:
        with pytest.raises(SkillRefused) as refused:
            await agent.call(SKILL, args)
        assert refused.value.code == "authorization_failed"
        assert refused.value.state == "TASK_STATE_REJECTED"
        assert refused.value.error["error"]["code"] == "authorization_failed"
    async with await SkillClient.from_card_url(world.agent("no-condition")) as agent:
        with pytest.raises(SkillRefused) as refused:
            await agent.call(SKILL, args)
        assert (refused.value.code, refused.value.error) == (None, None)
        assert refused.value.state == "TASK_STATE_FAILED"
        assert str(refused.value) == "TASK_STATE_FAILED, no machine-readable condition"


@pytest.mark.parametrize("flaw", sorted(FLAWS))
async def test_skill_client_names_the_clause_each_flawed_agent_breaks(world: World, example_request: dict,
                                                                      flaw: str) -> None:
    async with await SkillClient.from_card_url(world.agent(flaw), cache=InterfaceCache(4)) as agent:
        with pytest.raises(ProtocolViolation) as e:
            await agent.call(SKILL, example_request["arguments"])
    assert e.value.clause == FLAWS[flaw]
    assert e.value.requirement and e.value.section


async def test_the_cache_drops_an_interface_when_the_cards_digest_changes(world: World,
                                                                         example_request: dict) -> None:
    cache = InterfaceCache(4)
    async with await SkillClient.from_card_url(world.agent("plain"), cache=cache) as agent:
        await agent.call(SKILL, example_request["arguments"])
        card = json_format.MessageToDict(agent.card)
        url = agent.card_url
    assert cache.get(url, CardAdvertisement.read(card), SKILL) is not None
    for entry in card["capabilities"]["extensions"][0]["params"]["skills"]:
        if entry["skill_id"] == SKILL:
            entry["interface_digest"] = "sha256:" + "2" * 64
    changed = CardAdvertisement.read(card)
    assert cache.get(url, changed, SKILL) is None  # another digest misses
    assert cache.refresh(url, changed) == 1 and len(cache) == 0
    bounded = InterfaceCache(1)
    async with await SkillClient.from_card_url(world.agent("plain"), cache=bounded) as agent:
        await agent.call(SKILL, example_request["arguments"])
    async with await SkillClient.from_card_url(world.agent("enforcing"), cache=bounded) as agent:
        await agent.call(SKILL, example_request["arguments"])
    assert len(bounded) == 1


async def test_a_delegation_hop_gets_its_own_task_and_separate_correlation(world: World) -> None:
    from a2a.client import A2ACardResolver, ClientConfig, create_client
    from a2a.helpers.proto_helpers import new_text_part
    from a2a.types import Message, Role, SendMessageRequest
    import httpx

    seen = len(world.evaluator.seen)
    async with httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, world.agent("chain")).get_agent_card()
        client = await create_client(card, ClientConfig(httpx_client=http, streaming=False))
        message = Message(role=Role.ROLE_USER, message_id="m-chain", parts=[new_text_part("go")])
        responses = [r async for r in client.send_message(SendMessageRequest(message=message))]
    upstream = responses[-1].task
    assert upstream.status.state == 3, upstream.status  # TASK_STATE_COMPLETED
    data = json_format.MessageToDict(upstream.artifacts[0].parts[0].data)
    hop = data["hop"]
    downstream = world.evaluator.seen[seen]
    assert hop["upstream_task_id"] == upstream.id
    assert hop["downstream_task_id"] == downstream["task_id"]
    assert hop["downstream_task_id"] != hop["upstream_task_id"]
    assert hop["upstream_agent"] == world.agent("chain") and hop["downstream_agent"] == world.agent("enforcing")
    assert hop["terminal_state"] == "TASK_STATE_COMPLETED"
    correlation = downstream["metadata"][DELEGATION_METADATA_KEY]
    assert correlation == {"upstream_agent": world.agent("chain"), "upstream_task_id": upstream.id}


def test_probe_takes_valid_arguments_from_a_workspace(world: World) -> None:
    from conftest import ROOT

    code, out = probe(world.agent("enforcing"), "--workspace", ROOT / "example-skills")
    report = json.loads(out)
    primary = {c["skill"]: c["status"] for c in report["checks"] if c["clause"] == "primary-result"}
    assert primary[SKILL] == "pass", report
    # Every skill had an example: none was left unprobed (the toy domain logic only
    # implements the first skill, so the others fail, whichever clause that breaks).
    unprobed = [c for c in report["checks"] if "no example arguments" in c["message"]]
    assert not unprobed, unprobed
    assert len({c.get("skill") for c in report["checks"] if c.get("skill")}) == 3
