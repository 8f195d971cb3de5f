"""Enforce a skill bundle in an a2a-sdk (1.x, A2A protocol 1.0) agent.

`SchemaEnforcingExecutor(bundle, inner)` is an `AgentExecutor` that wraps any other:

* the schema-interface extension must be activated (the `A2A-Extensions` header, which
  the SDK exposes as `RequestContext.requested_extensions`); a request that does not
  activate it is rejected with a text explaining how, or, with `base_requests=True`, a
  request that is not a skill request object is passed to `inner` unchecked as a base
  A2A request (the extension is advertised `required: false`);
* a `describe_skill` request is answered from the bundle: a completed Task with one
  Artifact named `describe_skill` whose single Data Part is the describe result;
* a request that fails a check (`skill_not_advertised`, `interface_mismatch`,
  `input_invalid`, ...) ends `TASK_STATE_REJECTED` with the draft's error object as the
  status Message's single Data Part;
* a valid invocation is delegated to `inner` through an event queue that holds every
  Artifact back until the completing status update, then checks the result Artifact
  (named after the skill) and each supporting-record Artifact (named after its kind);
  only if all conform do they pass, followed by the completion. Otherwise nothing of it
  is published and the task ends `TASK_STATE_FAILED` with `output_invalid`.

`agent_card(bundle, base)` returns the SDK's `AgentCard` with the extension and skills
merged in (the same merge as `skillbundle card --base`). `ExtensionEchoMiddleware` echoes
the extension URI in the `A2A-Extensions` response header when a request activated it,
as the draft recommends (the SDK has no hook for response headers).

Every check runs in the Rust library; nothing here re-implements one. `a2a` is imported
when this module is, so `import skillbundle` works without a2a-sdk installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.tasks import TaskUpdater
from a2a.types import (
    AgentCard,
    Artifact,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from google.protobuf import json_format

from skillbundle import EXTENSION_URI, Bundle, Describe, InterfaceError
from skillbundle.client import SkillClient
from skillbundle.guard import Limits, RequestGuard
from skillbundle.task_store import BoundedTaskStore

__all__ = [
    "EXTENSION_URI",
    "BoundedTaskStore",
    "ExtensionEchoMiddleware",
    "Limits",
    "RequestGuard",
    "SchemaEnforcingExecutor",
    "SkillClient",
    "agent_card",
]

DESCRIBE_SKILL = "describe_skill"

_INTERRUPTED = {
    TaskState.TASK_STATE_INPUT_REQUIRED,
    TaskState.TASK_STATE_AUTH_REQUIRED,
}
_TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}


def agent_card(bundle: Bundle, base: Mapping[str, Any] | AgentCard) -> AgentCard:
    """The SDK's `AgentCard`: `base` (a dict in A2A 1.0 JSON form, or an `AgentCard`)
    with the bundle's extension and skills merged in. Raises `skillbundle.CardInvalid`."""
    if isinstance(base, AgentCard):
        base = json_format.MessageToDict(base)
    merged = bundle.agent_card(dict(base))
    return json_format.ParseDict(merged, AgentCard())


def _data(value: Any) -> Any:
    """A protobuf `Value` as a Python object (numbers come back as floats)."""
    return json_format.MessageToDict(value)


def _request_data(message: Message | None) -> Any:
    """The skill request object: the data of the Message's single Data Part, or None
    when the Message is not shaped that way (the library then refuses it)."""
    if message is None or len(message.parts) != 1 or not message.parts[0].HasField("data"):
        return None
    return _data(message.parts[0].data)


def _single_data(artifact: Artifact) -> tuple[bool, Any]:
    if len(artifact.parts) != 1 or not artifact.parts[0].HasField("data"):
        return False, None
    return True, _data(artifact.parts[0].data)


class _EnforcingQueue:
    """The event queue `inner` sees for one accepted invocation: Artifacts are held
    until the completing status update, checked, then released (or the task fails)."""

    def __init__(self, queue: Any, bundle: Bundle, skill_id: str, context: RequestContext):
        self._queue = queue
        self._bundle = bundle
        self._skill_id = skill_id
        self._context = context
        self._held: dict[str, TaskArtifactUpdateEvent] = {}
        self._task_sent = False
        self.finished = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._queue, name)

    def _check(self, artifact: Artifact) -> None:
        """Raise `InterfaceError` unless the Artifact is a valid result or record."""
        one, data = _single_data(artifact)
        if artifact.name == self._skill_id:
            if not one:
                data = None  # the library refuses it with the expected shape
            self._bundle.check_result_object(self._skill_id, data)
        else:
            if not one:
                data = float("nan")  # no I-JSON value: refused as output_invalid
            self._bundle.check_record(self._skill_id, artifact.name, data)

    def _check_all(self, task: Task | None) -> InterfaceError | None:
        artifacts = [e.artifact for e in self._held.values()]
        if task is not None:
            artifacts += list(task.artifacts)
        try:
            for artifact in artifacts:
                self._check(artifact)
        except InterfaceError as error:
            return error
        if not any(a.name == self._skill_id for a in artifacts):
            try:
                self._bundle.check_result_object(self._skill_id, None)
            except InterfaceError as error:
                return error
        return None

    async def _fail(self, task_id: str, context_id: str, error: InterfaceError) -> None:
        self._held.clear()
        updater = TaskUpdater(self._queue, task_id, context_id)
        message = updater.new_agent_message(parts=[new_data_part(error.to_dict())])
        message.extensions.append(EXTENSION_URI)
        await updater.failed(message)
        self.finished = True

    async def _release(self, only_valid: bool) -> None:
        for event in list(self._held.values()):
            if only_valid:
                try:
                    self._check(event.artifact)
                except InterfaceError:
                    continue
            await self._queue.enqueue_event(event)
        self._held.clear()

    async def enqueue_event(self, event: Any) -> None:
        if self.finished:
            return  # the task already failed; nothing more of it is published
        if isinstance(event, TaskArtifactUpdateEvent):
            held = self._held.get(event.artifact.artifact_id)
            if event.append and held is not None:
                held.artifact.parts.extend(event.artifact.parts)
                held.last_chunk = event.last_chunk
            else:
                copy = TaskArtifactUpdateEvent()
                copy.CopyFrom(event)
                copy.append = False
                self._held[event.artifact.artifact_id] = copy
            return
        if isinstance(event, TaskStatusUpdateEvent):
            state = event.status.state
            if state == TaskState.TASK_STATE_COMPLETED:
                error = self._check_all(None)
                if error is not None:
                    await self._fail(event.task_id, event.context_id, error)
                    return
                await self._release(only_valid=False)
            elif state in _TERMINAL or state in _INTERRUPTED:
                await self._release(only_valid=True)
            await self._queue.enqueue_event(event)
            if state in _TERMINAL:
                self.finished = True
            return
        if isinstance(event, Task):
            if event.status.state == TaskState.TASK_STATE_COMPLETED:
                error = self._check_all(event)
                if error is not None:
                    submitted = Task()
                    submitted.CopyFrom(event)
                    del submitted.artifacts[:]
                    submitted.status.state = TaskState.TASK_STATE_SUBMITTED
                    await self._queue.enqueue_event(submitted)
                    self._task_sent = True
                    await self._fail(event.id, event.context_id, error)
                    return
            self._task_sent = True
            await self._queue.enqueue_event(event)
            return
        if isinstance(event, Message):
            # A bare Message has no result Artifact: a schema-governed skill must answer
            # with a Task, so the task fails.
            task = self._context.current_task or new_task_from_user_message(self._context.message)
            if not self._task_sent:
                await self._queue.enqueue_event(task)
                self._task_sent = True
            try:
                self._bundle.check_result_object(self._skill_id, None)
            except InterfaceError as error:
                await self._fail(task.id, task.context_id, error)
            return
        await self._queue.enqueue_event(event)

    async def close_out(self) -> None:
        """After `inner` returned: publish what is still held and valid."""
        if not self.finished:
            await self._release(only_valid=True)


class SchemaEnforcingExecutor(AgentExecutor):
    """An `AgentExecutor` that answers describe_skill from the bundle and enforces its
    interfaces around `inner` (see the module documentation)."""

    def __init__(self, bundle: Bundle, inner: AgentExecutor, *, base_requests: bool = False):
        self.bundle = bundle
        self.inner = inner
        self.base_requests = base_requests
        self._skill_ids = {DESCRIBE_SKILL} | {s["skill_id"] for s in bundle.skills}

    def _is_skill_request(self, data: Any) -> bool:
        return isinstance(data, dict) and data.get("skill") in self._skill_ids

    async def execute(self, context: RequestContext, event_queue: Any) -> None:
        data = _request_data(context.message)
        if EXTENSION_URI not in context.requested_extensions:
            if self.base_requests and not self._is_skill_request(data):
                await self.inner.execute(context, event_queue)
                return
            updater = await self._start(context, event_queue)
            message = updater.new_agent_message(
                parts=[
                    new_text_part(
                        "this agent's skills are schema-governed: activate the extension "
                        f"{EXTENSION_URI} with the {HTTP_EXTENSION_HEADER} request header "
                        "and send a skill request object as the Message's single Data Part"
                    )
                ]
            )
            await updater.reject(message)
            return
        try:
            request = self.bundle.check_request(data)
        except InterfaceError as error:
            updater = await self._start(context, event_queue)
            message = updater.new_agent_message(parts=[new_data_part(error.to_dict())])
            message.extensions.append(EXTENSION_URI)
            await updater.update_status(_state(error.task_state), message)
            return
        if isinstance(request, Describe):
            updater = await self._start(context, event_queue)
            result = self.bundle.describe_skill(request.skill_id)
            await updater.add_artifact(
                [new_data_part(result)], name=DESCRIBE_SKILL, extensions=[EXTENSION_URI]
            )
            await updater.complete()
            return
        queue = _EnforcingQueue(event_queue, self.bundle, request.skill_id, context)
        await self.inner.execute(context, queue)
        await queue.close_out()

    async def cancel(self, context: RequestContext, event_queue: Any) -> None:
        await self.inner.cancel(context, event_queue)

    @staticmethod
    async def _start(context: RequestContext, event_queue: Any) -> TaskUpdater:
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        return TaskUpdater(event_queue, task.id, task.context_id)


def _state(name: str | None) -> int:
    return TaskState.Value(name or "TASK_STATE_REJECTED")


class ExtensionEchoMiddleware:
    """ASGI middleware: when a request's `A2A-Extensions` header activates the
    schema-interface extension, the response's `A2A-Extensions` header echoes its URI."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        header = HTTP_EXTENSION_HEADER.lower().encode()
        values = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == header]
        if EXTENSION_URI not in get_requested_extensions(values):
            await self.app(scope, receive, send)
            return

        async def echo(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((header, EXTENSION_URI.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, echo)
