"""Call schema-governed skills of other agents from Python, on a2a-sdk's own client.

    async with await SkillClient.from_card_url("https://agent.example") as agent:
        called = await agent.call("evaluate_resource_condition", arguments)
        called.result, called.records

`SkillClient` runs the draft's client procedure ("Client-agent behavior"): it reads the
Agent Card's schema-interface advertisement, calls describe_skill with the extension
activated (the `A2A-Extensions` header and `Message.extensions`), verifies the describe
task, the digest triple and the document, validates the arguments before sending, sends
the skill request object and checks the final Task (retrieved with GetTask after a
streamed send). Every check is the Rust library's, the same `skillbundle call` makes
(`CardAdvertisement`, `VerifiedInterface`, `InterfaceCache` from the native module);
this file only moves messages with a2a-sdk.

Failures raise typed exceptions: `InterfaceError` for a condition the client detects
itself (`skill_not_advertised`, `input_invalid`, ...; nothing was sent for it),
`ProtocolViolation` when the agent broke a rule (with the clause, pointer and bounded
evidence), `SkillRefused` when it rejected or failed the task (`.state`, and `.error`, the
draft's error object, or None when it reported no machine-readable condition), and
`TaskStopped` otherwise.

Verified interfaces are cached per target (card URL), skill, version and digest; a
newly read card whose binding changed drops the entry ("Operational Considerations").
A call made on behalf of an upstream task (`upstream=(agent, task_id)`) carries the
correlation in separately named Message metadata, never a task id, and returns the
delegation hop (draft "Design Principles").
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.client import ClientCallContext
from a2a.extensions.common import HTTP_EXTENSION_HEADER
from a2a.helpers.proto_helpers import new_data_part
from a2a.types import GetTaskRequest, Message, Role, SendMessageRequest, Task, TaskState
from google.protobuf import json_format

from skillbundle._client_errors import ClientError, ProtocolViolation, SkillRefused, TaskStopped
from skillbundle._errors import InterfaceError
from skillbundle._native import (
    DELEGATION_METADATA_KEY,
    EXTENSION_URI,
    CardAdvertisement,
    InterfaceCache,
    VerifiedInterface,
    delegation_hop,
    delegation_metadata,
    task_of,
)

__all__ = [
    "DELEGATION_METADATA_KEY",
    "Called",
    "ClientError",
    "InterfaceCache",
    "InterfaceError",
    "ProtocolViolation",
    "SkillClient",
    "SkillRefused",
    "TaskStopped",
]

_ACTIVATE = ClientCallContext(service_parameters={HTTP_EXTENSION_HEADER: EXTENSION_URI})
_SHARED_CACHE = InterfaceCache(64)


@dataclass(frozen=True)
class Called:
    """A delivered and checked result."""

    skill_id: str
    skill_version: str
    interface_digest: str
    task_id: str
    context_id: str
    result: Any
    result_artifact_id: str
    records: list[dict[str, Any]] = field(default_factory=list)
    interface_cached: bool = False
    hop: dict[str, Any] | None = None


def _to_dict(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(message)


class SkillClient:
    """One target agent: its card, an a2a-sdk client for it, and the interface cache."""

    def __init__(self, card_url: str, card: Any, client: Any, http: httpx.AsyncClient, owns_http: bool,
                 cache: InterfaceCache) -> None:
        self.card_url = card_url
        self.card = card
        self.advertisement = CardAdvertisement.read(_to_dict(card))
        self._client = client
        self._http = http
        self._owns_http = owns_http
        self._cache = cache
        cache.refresh(card_url, self.advertisement)

    @classmethod
    async def from_card_url(cls, url: str, *, httpx_client: httpx.AsyncClient | None = None,
                            streaming: bool = False, bindings: list[str] | None = None,
                            timeout: float = 30.0, cache: InterfaceCache | None = None) -> SkillClient:
        """Fetch the Agent Card of the agent at `url` (its base URL) and read its
        advertisement; raises `InterfaceError` when it offers no schema-interface
        procedure. `bindings` restricts the protocol bindings ("JSONRPC", "HTTP+JSON")."""
        http = httpx_client or httpx.AsyncClient(timeout=timeout)
        card = await A2ACardResolver(http, url).get_agent_card()
        config = ClientConfig(httpx_client=http, streaming=streaming)
        if bindings:
            config.supported_protocol_bindings = list(bindings)
        client = await create_client(card, config)
        return cls(url.rstrip("/"), card, client, http, httpx_client is None, _SHARED_CACHE if cache is None else cache)

    async def __aenter__(self) -> SkillClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        await self._client.close()
        if self._owns_http:
            await self._http.aclose()

    async def _send(self, data: Any, *, describe: bool, metadata: dict[str, Any] | None = None) -> Task:
        message = Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[new_data_part(data)])
        message.extensions.append(EXTENSION_URI)
        if metadata:
            message.metadata.update(metadata)
        last = None
        task_id = None
        async for event in self._client.send_message(SendMessageRequest(message=message), context=_ACTIVATE):
            last = event
            for kind in ("task", "status_update", "artifact_update"):
                if event.HasField(kind):
                    inner = getattr(event, kind)
                    task_id = task_id or (inner.id if kind == "task" else inner.task_id)
        if last is not None and last.HasField("task") and not any(
                last.HasField(k) for k in ("status_update", "artifact_update")):
            return last.task
        if task_id is None:
            # A bare Message (or nothing): the library names the clause it breaks.
            task_of(_to_dict(last) if last is not None else {}, describe=describe)
            raise AssertionError("task_of accepts only a response holding a Task")
        # A streamed answer: the final Task, retrieved with GetTask (the draft allows it).
        return await self._client.get_task(GetTaskRequest(id=task_id), context=_ACTIVATE)

    async def interface(self, skill_id: str) -> tuple[VerifiedInterface, bool]:
        """The verified interface of `skill_id` and whether it came from the cache."""
        cached = self._cache.get(self.card_url, self.advertisement, skill_id)
        if cached is not None:
            return cached, True
        request = self.advertisement.describe_request(skill_id)
        task = await self._send(request, describe=True)
        verified = self.advertisement.verify_describe(skill_id, _to_dict(task))
        self._cache.insert(self.card_url, verified)
        return verified, False

    async def call(self, skill_id: str, arguments: Any, *,
                   upstream: tuple[str, str] | None = None) -> Called:
        """Call `skill_id` with `arguments` and return the checked result and records.
        With `upstream=(agent, task_id)` the call is a delegation hop."""
        verified, cached = await self.interface(skill_id)
        request = verified.request(arguments)
        metadata = delegation_metadata(*upstream) if upstream else None
        task = await self._send(request, describe=False, metadata=metadata)
        checked = verified.check_task(_to_dict(task))
        hop = None
        if upstream:
            state = TaskState.Name(task.status.state)
            hop = delegation_hop(upstream[0], upstream[1], self.card_url, task.id, verified, state)
        return Called(
            skill_id=verified.skill_id,
            skill_version=verified.skill_version,
            interface_digest=verified.interface_digest,
            task_id=task.id,
            context_id=task.context_id,
            result=checked["result"],
            result_artifact_id=checked["result_artifact_id"],
            records=checked["records"],
            interface_cached=cached,
            hop=hop,
        )
