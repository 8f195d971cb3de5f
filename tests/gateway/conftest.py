"""The real parts of the gateway's tests, each a process of its own on 127.0.0.1 (a free
port, stopped by PID): the two upstream agents that know nothing of skillbundle
(upstream.py on a2a-sdk, tests/js/upstream.cjs on @a2a-js/sdk), `skillbundle serve` in
front of one of them, and the two clients (a2a-sdk here, tests/js/client.cjs on
@a2a-js/sdk through node), each on both bindings, blocking or streaming.

Run by `cargo test --locked --test parts gateway::` (tests/parts/gateway.rs), which sets
SKILLBUNDLE_BIN (this build's binary), SKILLBUNDLE_ROOT and SKILLBUNDLE_JS_MODULES (the
npm packages `scripts/test-parts` installs with `npm ci` from tests/js/package-lock.json).

Both clients' answers come back in one shape, the protocol's JSON form: a list of
StreamResponse objects ({"task"}, {"message"}, {"statusUpdate"}, {"artifactUpdate"};
a blocking send is a list of one), or {"error": {"name", "code", "message"}}.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.client import ClientCallContext
from a2a.extensions.common import HTTP_EXTENSION_HEADER
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.types import GetTaskRequest, ListTasksRequest, Message, Role, SendMessageRequest
from google.protobuf import json_format

ROOT = Path(os.environ.get("SKILLBUNDLE_ROOT", Path(__file__).resolve().parents[2]))
BIN = Path(os.environ.get("SKILLBUNDLE_BIN", ROOT / "target" / "debug" / "skillbundle"))
JS_MODULES = Path(os.environ.get("SKILLBUNDLE_JS_MODULES", ROOT / "target" / "test-parts" / "js" / "node_modules"))
EXTENSION_URI = "https://agentic-network-management.github.io/agent-schema-interfaces/extensions/schema-interface/v1"
SKILLS = ["evaluate_resource_condition", "manage_interface_config", "trace_network_path"]
SECRET = "upstream-secret-7f3a"
UPSTREAMS = ["python", "js"]
BINDINGS = ["JSONRPC", "HTTP+JSON"]


def run_cli(*args: str | os.PathLike[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    if not BIN.exists():
        pytest.fail(f"the skillbundle binary is missing at {BIN}: run `cargo build` or set SKILLBUNDLE_BIN")
    proc = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        pytest.fail(f"skillbundle {' '.join(map(str, args))} exited {proc.returncode}:\n{proc.stderr}")
    return proc


# -- processes -------------------------------------------------------------------------


class Process:
    """A child process whose first stdout line is {"port": N}; stopped by its PID."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None, log: Path | None = None) -> None:
        self.log = log
        err = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                     env={**os.environ, **(env or {})}, cwd=ROOT)
        self._err = err
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            self.stop()
            raise RuntimeError(f"{argv[1]} did not start:\n{self.stderr()}")
        self.port = json.loads(line)["port"]
        self.url = f"http://127.0.0.1:{self.port}"

    def stderr(self) -> str:
        return self.log.read_text(errors="replace") if self.log and self.log.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        if self._err is not subprocess.DEVNULL:
            self._err.close()


@dataclass
class Upstream:
    kind: str
    process: Process

    @property
    def url(self) -> str:
        return self.process.url

    def calls(self) -> dict[str, Any]:
        return httpx.get(f"{self.url}/calls", timeout=10).json()


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail("node is not on PATH (scripts/test-parts installs it)")
    return found


def start_upstream(kind: str, log: Path, env: dict[str, str] | None = None) -> Upstream:
    if kind == "python":
        argv = [sys.executable, str(ROOT / "tests" / "gateway" / "upstream.py")]
    else:
        argv = [node(), str(ROOT / "tests" / "js" / "upstream.cjs")]
    return Upstream(kind, Process(argv, {"NODE_PATH": str(JS_MODULES), **(env or {})}, log))


@pytest.fixture(scope="session", params=UPSTREAMS)
def upstream(request: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    """Each upstream agent, once per session."""
    log = tmp_path_factory.mktemp(f"upstream-{request.param}") / "stderr.log"
    up = start_upstream(request.param, log, {"UPSTREAM_SLOW_SECONDS": "30"})
    try:
        yield up
    finally:
        up.process.stop()


# -- the bundle and its schemas ----------------------------------------------------------


@dataclass(frozen=True)
class Signed:
    bundle: Path
    jwk: Path
    key: Path
    dir: Path


def build_bundle(d: Path, version: str = "0.1.0", key: Path | None = None) -> Signed:
    """The example workspace built and signed (a fresh key unless `key` is given), with
    the bundle's version set to `version`."""
    d.mkdir(parents=True, exist_ok=True)
    if key is None:
        run_cli("keygen", "--out", d / "vendor")
        key = d / "vendor.key"
    ws = d / f"ws-{version}"
    shutil.copytree(ROOT / "example-skills", ws, ignore=shutil.ignore_patterns("dist"))
    manifest = ws / "skillbundle.yaml"
    manifest.write_text(manifest.read_text().replace('version: "0.1.0"', f'version: "{version}"'))
    run_cli("build", ws, "--out", d / f"dist-{version}", "--sign-key", key)
    (bundle,) = (d / f"dist-{version}").glob("*.tar.gz")
    return Signed(bundle=bundle, jwk=key.with_name(key.name.removesuffix(".key") + ".jwk.json"), key=key, dir=d)


@pytest.fixture(scope="session")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Signed:
    return build_bundle(tmp_path_factory.mktemp("bundle"))


class Schemas:
    """Each skill's output and record schemas, from the bundle's own describe_skill
    documents (`skillbundle describe`), as jsonschema validators: what "valid" means
    for everything a client may see."""

    def __init__(self, signed: Signed) -> None:
        self.documents: dict[str, dict[str, Any]] = {}
        self.output: dict[str, Any] = {}
        self.records: dict[str, dict[str, Any]] = {}
        for skill in SKILLS:
            described = json.loads(run_cli("describe", signed.bundle, skill, "--trust", signed.jwk).stdout)
            document = described["result"]["interface"]
            self.documents[skill] = described
            self.output[skill] = self._validator(document["output_schema"])
            self.records[skill] = {r["kind"]: self._validator(r["schema_reference"])
                                   for r in document.get("supporting_record_schemas", [])}

    @staticmethod
    def _validator(reference: dict[str, Any]) -> Any:
        return jsonschema.Draft202012Validator(reference["resolution"]["schema"],
                                               format_checker=jsonschema.FormatChecker())

    def assert_valid_artifacts(self, skill: str, artifacts: list[dict[str, Any]]) -> None:
        """Every Artifact is the skill's valid result or a valid record of a declared kind."""
        for a in artifacts:
            parts = a.get("parts", [])
            assert len(parts) == 1 and "data" in parts[0], a
            data = parts[0]["data"]
            if a.get("name") == "describe_skill":
                continue
            if a.get("name") == skill:
                assert data.get("skill") == skill, a
                errors = list(self.output[skill].iter_errors(data.get("result")))
                assert not errors, (a, errors)
            else:
                assert a.get("name") in self.records[skill], f"an Artifact of an undeclared kind was delivered: {a}"
                errors = list(self.records[skill][a["name"]].iter_errors(data))
                assert not errors, (a, errors)


@pytest.fixture(scope="session")
def schemas(signed: Signed) -> Schemas:
    return Schemas(signed)


def example(skill: str, which: str = "valid") -> list[tuple[str, Any]]:
    """The example inputs of a skill (example-skills/skills/SKILL/examples/input/WHICH)."""
    d = ROOT / "example-skills" / "skills" / skill / "examples" / "input" / which
    return [(p.stem, json.loads(p.read_text())) for p in sorted(d.glob("*.json"))]


def skill_request(schemas: Schemas, skill: str, arguments: Any) -> dict[str, Any]:
    document = schemas.documents[skill]["result"]
    return {"skill": skill, "skill_version": document["interface"]["skill_version"],
            "interface_digest": document["interface_digest"], "arguments": arguments}


# -- the clients -------------------------------------------------------------------------


@dataclass
class Sent:
    """What one send brought back: every StreamResponse in order (one when blocking), or
    the error the client raised."""

    events: list[dict[str, Any]]
    error: dict[str, Any] | None = None

    def task_id(self) -> str | None:
        for e in self.events:
            for kind, key in (("task", "id"), ("statusUpdate", "taskId"), ("artifactUpdate", "taskId")):
                if kind in e:
                    return e[kind][key]
        return None

    def artifacts(self) -> list[dict[str, Any]]:
        """Every Artifact the events carried (tasks' and updates')."""
        out = []
        for e in self.events:
            out += e.get("task", {}).get("artifacts", [])
            if "artifactUpdate" in e:
                out.append(e["artifactUpdate"]["artifact"])
        return out

    def message(self) -> dict[str, Any] | None:
        return next((e["message"] for e in self.events if "message" in e), None)


class PyClient:
    """a2a-sdk's client, discovering the agent from its card only."""

    name = "a2a-sdk"

    def __init__(self, url: str, binding: str, stream: bool) -> None:
        self.url, self.binding, self.stream = url, binding, stream

    async def _client(self, http: httpx.AsyncClient) -> Any:
        card = await A2ACardResolver(http, self.url).get_agent_card()
        return await create_client(card, ClientConfig(httpx_client=http, streaming=self.stream,
                                                      supported_protocol_bindings=[self.binding]))

    @staticmethod
    def _failure(e: BaseException) -> dict[str, Any]:
        return {"name": type(e).__name__, "code": getattr(e, "code", None), "message": str(e)}

    async def asend(self, *, data: Any = None, text: str | None = None, activate: bool = True) -> Sent:
        part = new_data_part(data) if text is None else new_text_part(text)
        message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[part])
        if activate:
            message.extensions.append(EXTENSION_URI)
        context = ClientCallContext(service_parameters={HTTP_EXTENSION_HEADER: EXTENSION_URI}) if activate else None
        async with httpx.AsyncClient(timeout=60) as http:
            client = await self._client(http)
            events: list[dict[str, Any]] = []
            try:
                async for r in client.send_message(SendMessageRequest(message=message), context=context):
                    events.append(json_format.MessageToDict(r))
            except Exception as e:  # noqa: BLE001 (the client's error is the answer)
                return Sent(events, self._failure(e))
            finally:
                await client.close()
            return Sent(events)

    def send(self, **kw: Any) -> Sent:
        return asyncio.run(self.asend(**kw))

    async def _call(self, what: str, arg: Any) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=60) as http:
            client = await self._client(http)
            try:
                if what == "get":
                    return {"task": json_format.MessageToDict(await client.get_task(GetTaskRequest(id=arg)))}
                listed = await client.list_tasks(ListTasksRequest(include_artifacts=True, page_size=100))
                return json_format.MessageToDict(listed)
            except Exception as e:  # noqa: BLE001
                return {"error": self._failure(e)}
            finally:
                await client.close()

    def get(self, task_id: str) -> dict[str, Any]:
        return asyncio.run(self._call("get", task_id))

    def list(self) -> dict[str, Any]:
        return asyncio.run(self._call("list", None))


class JsDriver:
    """One node process running tests/js/client.cjs for the whole session: a script a
    line in, an answer a line out."""

    _proc: subprocess.Popen[str] | None = None
    _lock = threading.Lock()

    @classmethod
    def run(cls, script: dict[str, Any]) -> dict[str, Any]:
        with cls._lock:
            if cls._proc is None or cls._proc.poll() is not None:
                cls._proc = subprocess.Popen([node(), str(ROOT / "tests" / "js" / "client.cjs")],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                             env={**os.environ, "NODE_PATH": str(JS_MODULES)})
                atexit.register(cls.stop)
            assert cls._proc.stdin and cls._proc.stdout
            cls._proc.stdin.write(json.dumps(script) + "\n")
            cls._proc.stdin.flush()
            line = cls._proc.stdout.readline()
        assert line, "client.cjs exited"
        answer = json.loads(line)
        assert "fatal" not in answer, answer["fatal"]
        return answer

    @classmethod
    def stop(cls) -> None:
        if cls._proc is not None and cls._proc.poll() is None:
            assert cls._proc.stdin
            cls._proc.stdin.close()
            cls._proc.wait(timeout=30)


class JsClient:
    """@a2a-js/sdk's client (tests/js/client.cjs under node), discovering the agent from
    its card only."""

    name = "@a2a-js/sdk"

    def __init__(self, url: str, binding: str, stream: bool) -> None:
        self.url, self.binding, self.stream = url, binding, stream

    def run(self, steps: list[dict[str, Any]], activate: bool = True) -> list[dict[str, Any]]:
        script = {"agent": self.url, "binding": self.binding, "stream": self.stream,
                  "extensions": [EXTENSION_URI] if activate else [], "steps": steps}
        return JsDriver.run(script)["results"]

    def send(self, *, data: Any = None, text: str | None = None, activate: bool = True) -> Sent:
        (r,) = self.run([{"send": {"data": data} if text is None else {"text": text}}], activate)
        if "error" in r:
            return Sent([], r["error"])
        return Sent(r["events"] if "events" in r else [r])

    def get(self, task_id: str) -> dict[str, Any]:
        return self.run([{"get": task_id}])[0]

    def list(self) -> dict[str, Any]:
        return self.run([{"list": {}}])[0]


CLIENTS = {"a2a-sdk": PyClient, "@a2a-js/sdk": JsClient}


def clients(url: str) -> Iterator[Any]:
    """Every client on every binding, blocking and streaming."""
    for make in CLIENTS.values():
        for binding in BINDINGS:
            for stream in (False, True):
                yield make(url, binding, stream)


def label(client: Any) -> str:
    return f"{client.name} {client.binding} {'streaming' if client.stream else 'blocking'}"


def wait_http(url: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer 200 within {seconds} s")
        time.sleep(0.05)


@pytest.fixture(scope="session")
def example_arguments() -> dict[str, Any]:
    """The draft's worked-example arguments (example-skills/requests/evaluate.json)."""
    return json.loads((ROOT / "example-skills" / "requests" / "evaluate.json").read_text())["arguments"]


# -- the gateway -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gateway:
    """`skillbundle serve` on 127.0.0.1 (a free port) in front of `upstream`, ready
    (GET /readyz answered 200); its JSON log lines (stderr) in `log`."""

    def __init__(self, bundle: Path, trust: Path, upstream: str, log: Path, *extra: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self._err = open(log, "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [str(BIN), "serve", "--bundle", str(bundle), "--trust", str(trust), "--upstream", upstream,
             "--listen", f"127.0.0.1:{self.port}", *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._err, cwd=ROOT)
        try:
            deadline = time.monotonic() + 60
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"skillbundle serve exited {self.proc.returncode}:\n{self.stderr()}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"skillbundle serve was not ready within 60 s:\n{self.stderr()}")
                time.sleep(0.05)
        except BaseException:
            self.stop()
            raise

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def metrics(self) -> str:
        return httpx.get(f"{self.url}/metrics", timeout=10).text

    def card(self) -> dict[str, Any]:
        return httpx.get(f"{self.url}/.well-known/agent-card.json", timeout=10).json()

    def signal(self, sig: int) -> None:
        os.kill(self.proc.pid, sig)

    def stop(self) -> int:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._err.close()
        return self.proc.returncode


UPSTREAM_TIMEOUT = "3s"
# The deepest request body the session's gateway takes: below the default (64), because
# a2a-sdk's client refuses to build a message nested past protobuf's 100 levels.
MAX_DEPTH = "24"


@pytest.fixture(scope="session")
def gateway(upstream: Upstream, signed: Signed, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """The gateway in front of each upstream, once per session."""
    log = tmp_path_factory.mktemp(f"gateway-{upstream.kind}") / "stderr.log"
    g = Gateway(signed.bundle, signed.jwk, upstream.url, log, "--upstream-timeout", UPSTREAM_TIMEOUT,
                "--max-depth", MAX_DEPTH)
    try:
        yield g
    finally:
        g.stop()
