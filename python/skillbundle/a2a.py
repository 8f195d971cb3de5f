"""Enforce a skill bundle in an a2a-sdk (1.x, A2A protocol 1.0) agent.

`SchemaEnforcingExecutor(bundle, inner, ...)` is an `AgentExecutor` that wraps the
domain executor `inner`. Every decision is the Rust library's (`skillbundle._native`:
`Bundle.route_message` decides what a Message is, a `TaskGuard` what a Task may
publish); this module only adapts a2a-sdk's objects and events to those calls and does
what they answer:

* A Message is routed: a `describe_skill` request is answered from the bundle; a
  domain-skill request is checked (`interface_mismatch`, `input_invalid`, ...; a refused
  one ends `TASK_STATE_REJECTED` with the draft's error object) before `inner` sees it;
  a Message holding a skill request object is always checked, however many Parts it has;
  a follow-up sent into a Task that waits for input or authorization reaches `inner`
  unchecked (the draft applies no schema to it); other Messages are base A2A requests
  (with `base_requests=True`) or refused. In strict mode (`require_extension=True`, the
  card then says `required: true`) a request that does not activate the extension is
  answered with A2A's `ExtensionSupportRequiredError`.
* Everything `inner` publishes — in `execute`, in `cancel`, as Artifact updates, in
  chunks, inside `Task` events — passes a `TaskGuard` first: a complete supporting
  record is checked and released at once, the primary result is held until the
  completing status and checked with everything else, and anything invalid fails the
  Task with `output_invalid` (or `resource_limit_exceeded`) instead of being published.
  The SDK's task store and every subscriber only ever see what the guard released, so
  nothing invalid reaches SendMessage, streaming, resubscription, GetTask or ListTasks.
* An exception from `inner` ends the Task `TASK_STATE_FAILED` with a fixed message; the
  exception goes to this module's logger, never to the caller. One class is the draft's
  own: a value `inner` published past the helpers (the SDK's `TaskUpdater`,
  `new_data_part`, an `Artifact` it built) nested deeper than a Data Part carries makes
  the SDK's protobuf raise inside `inner`'s own call; the Task then fails with the
  draft's `resource_limit_exceeded` error object (the library's, `TaskGuard.uncarried`),
  still without the exception's text.

`inner` is either a plain `AgentExecutor` (its `event_queue` then has a `call`
attribute, the `SkillCall`; the Task exists before it runs, and `context.current_task`
is it, so the SDK's idiom `context.current_task or new_task(...)` makes no second one)
or an object with `async def invoke(self, call)`, which gets
the `SkillCall`: the checked invocation (skill, version, digest, arguments as validated,
integers as `int`) and helpers that publish a record, the result, a domain refusal, or
ask for input.

* What a skill's `interaction` declaration does not allow is refused through the
  binding, before any Task is created or touched and before `inner` is called, with the
  library's decision (`Bundle.check_operation`, the rules in the Rust module
  `agent::interaction`): `cancellable: false` refuses CancelTask with A2A's
  `TaskNotCancelableError`; a stream (SendStreamingMessage, SubscribeToTask) of a skill
  without `stream`, a blocking send (A2A's default) of one without `sync`, a send that
  returns at once of one with none of `poll`, `push`, `stream`, and a push-notification
  config of one without `push` are refused with `UnsupportedOperationError`.

Wire it with `executor.request_handler(card)`: the request handler (a2a-sdk's
`DefaultRequestHandler`, which tells the rules which operation a request is) whose
request-context builder refuses, through the binding and before any Task is created or
touched, what must be refused so (strict mode without activation; a skill request sent
into an existing Task; an operation the skill's interaction declaration does not
allow). `executor.agent_card(base)` returns the card with the extension `required` flag of
the chosen mode. `ExtensionEchoMiddleware` echoes the extension URI in the
`A2A-Extensions` response header when a request activated it, as the draft recommends.
"""

from __future__ import annotations

import logging
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext, SimpleRequestContextBuilder
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCard,
    Artifact,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    A2AError,
    ExtensionSupportRequiredError,
    InvalidParamsError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)
from google.protobuf import json_format
from google.protobuf.message import DecodeError, EncodeError

from skillbundle import EXTENSION_URI, Bundle, InterfaceError
from skillbundle._native import (
    DEFAULT_MAX_ARTIFACT_BYTES,
    DEFAULT_MAX_RECORDS,
    DESCRIBE_SKILL,
    Invocation,
    is_interrupted,
)
from skillbundle.client import SkillClient
from skillbundle.guard import Limits, RequestGuard
from skillbundle.task_store import BoundedTaskStore
from skillbundle.types import OperationMethod

__all__ = [
    "DEFAULT_MAX_ARTIFACT_BYTES",
    "DEFAULT_MAX_RECORDS",
    "EXTENSION_URI",
    "BoundedTaskStore",
    "ExtensionEchoMiddleware",
    "Invocation",
    "Limits",
    "RequestGuard",
    "SchemaEnforcingExecutor",
    "SkillCall",
    "SkillClient",
    "agent_card",
    "proto_value",
]

log = logging.getLogger(__name__)

#: The status text of a Task whose domain code raised. Fixed: nothing of the exception
#: reaches the caller.
INTERNAL_FAILURE = "the agent failed while processing this request"

#: The key of `ServerCallContext.state` under which the request handler tells the
#: request-context builder which operation a send is: `(method, return_immediately,
#: push_config)`.
_OPERATION = "skillbundle.operation"

#: The key of `ServerCallContext.state` under which the request-context builder leaves
#: its routing of the request's Message, `(message, kind, payload)`, so that `execute`
#: does not route the same Message again.
_ROUTED = "skillbundle.routed"

#: Interrupted Tasks whose guard is kept in memory between turns (beyond, the oldest is
#: rebuilt from the stored Task when its follow-up arrives).
_MAX_OPEN = 10_000

# protobuf's enum wrapper looks each name up in Python: the states read on every event
# are looked up once.
_STATE_NAMES: dict[int, str] = {value: name for name, value in TaskState.items()}
_FAILED = TaskState.TASK_STATE_FAILED


def _state_name(state: int) -> str:
    """The wire name of a task state (protobuf's error for a value it does not know)."""
    name = _STATE_NAMES.get(state)
    return name if name is not None else TaskState.Name(state)


def agent_card(
    bundle: Bundle, base: Mapping[str, Any] | AgentCard, *, require_extension: bool = False
) -> AgentCard:
    """The SDK's `AgentCard`: `base` (a dict in A2A 1.0 JSON form, or an `AgentCard`)
    with the bundle's extension (`required` as given) and skills merged in. Raises
    `skillbundle.CardInvalid`."""
    if isinstance(base, AgentCard):
        base = json_format.MessageToDict(base)
    merged = bundle.agent_card(dict(base), require_extension=require_extension)
    return json_format.ParseDict(merged, AgentCard())


def proto_value(v: Any) -> Any:
    """A protobuf `Value` (a Data Part's `data`) as a Python object, exactly: numbers are
    floats as the binding carried them, and a NaN stays a NaN for the library to refuse
    (`json_format` would raise instead)."""
    kind = v.WhichOneof("kind")
    if kind == "struct_value":
        return {k: proto_value(x) for k, x in v.struct_value.fields.items()}
    if kind == "list_value":
        return [proto_value(x) for x in v.list_value.values]
    if kind == "number_value":
        return v.number_value
    if kind == "string_value":
        return v.string_value
    if kind == "bool_value":
        return v.bool_value
    return None


def _parts(parts: Any) -> list[bytes | None]:
    """Each Part's data as the wire bytes of its protobuf `Value` (the library reads them
    exactly, a NaN included), or `None` for a Part that is not a Data Part."""
    return [p.data.SerializeToString() if p.HasField("data") else None for p in parts]


def _refuse_operation(refusal: tuple[str, str] | None) -> None:
    """Raise the A2A error `Bundle.check_operation` answered, if it refused."""
    if refusal is None:
        return
    kind, message = refusal
    if kind == "task_not_cancelable":
        raise TaskNotCancelableError(message=message)
    raise UnsupportedOperationError(message=message)


#: What protobuf says when it refuses a message for its nesting: upb's decoder (which
#: a2a-sdk's constructors and copies go through) past its depth limit, and `json_format`
#: (a2a-sdk's `new_data_part`) past its recursion limit, a cycle included.
_NESTING_REFUSALS = ("upb_DecodeOptions_MaxDepth", "Message too deep")


def _nesting_refused(exc: BaseException) -> bool:
    """Whether `exc` is a2a-sdk's protobuf refusing to hold a value for its nesting — the
    domain code published, past the executor's helpers, a value deeper than a Data Part
    carries. Any other exception (a protobuf one included) is not."""
    if not isinstance(exc, (DecodeError, EncodeError, json_format.ParseError)):
        return False
    text = str(exc)
    return any(marker in text for marker in _NESTING_REFUSALS)


def _error_message(error: dict[str, Any]) -> Message:
    message = Message(
        role=Role.ROLE_AGENT, message_id=str(uuid.uuid4()), parts=[new_data_part(error)]
    )
    message.extensions.append(EXTENSION_URI)
    return message


def _text_message(text: str) -> Message:
    return Message(role=Role.ROLE_AGENT, message_id=str(uuid.uuid4()), parts=[new_text_part(text)])


class _Open:
    """What is kept of an invocation between its turns: its guard and invocation, and
    the Artifact updates its guard still holds."""

    __slots__ = ("artifacts", "guard", "invocation")

    def __init__(self, guard: Any, invocation: Invocation,
                 artifacts: dict[str, TaskArtifactUpdateEvent] | None = None) -> None:
        self.guard = guard
        self.invocation = invocation
        self.artifacts = artifacts if artifacts is not None else {}


class _GuardedQueue:
    """The event queue `inner` writes to: every event goes through the Task's guard,
    and only what it releases reaches the SDK's queue.

    The checks are plain functions that answer the events to publish, in order; only
    `enqueue_event`, `answer` and the calls that end a turn await the SDK's queue."""

    __slots__ = ("_artifacts", "_context_id", "_guard", "_queue", "_task_id", "call", "failure")

    def __init__(self, queue: Any, guard: Any, task_id: str, context_id: str,
                 artifacts: dict[str, TaskArtifactUpdateEvent] | None = None) -> None:
        self._queue = queue
        self._guard = guard
        self._task_id = task_id
        self._context_id = context_id
        # The Artifacts the guard holds, each as the update event (its own copy of what
        # `inner` sent, chunks appended) published as it is when released.
        self._artifacts: dict[str, TaskArtifactUpdateEvent] = artifacts if artifacts is not None else {}
        self.failure: InterfaceError | None = None
        self.call: SkillCall | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._queue, name)

    @property
    def finished(self) -> bool:
        return self._guard.finished

    def result_artifact(self, result: Any) -> tuple[str, dict[str, Any]]:
        """The primary result Artifact's name and data for `result` (the library's)."""
        return self._guard.result_artifact(result)

    def _apply(self, verdict: tuple[str, Any], events: list[Any]) -> bool:
        """Add to `events` what the guard's answer publishes; False when the Task failed
        (`events` then ends with the failing status)."""
        kind, payload = verdict
        if kind == "fail":
            self._artifacts.clear()
            self.failure = payload
            events.append(self._status(TaskState.Value(payload.task_state), _error_message(payload.to_dict())))
            return False
        if kind == "release":
            for artifact_id in payload:
                update = self._artifacts.pop(artifact_id, None)
                if update is not None:
                    events.append(update)
        return True

    def _status(self, state: int, message: Message | None) -> TaskStatusUpdateEvent:
        status = TaskStatus(state=state)
        if message is not None:
            status.message.CopyFrom(message)
        status.timestamp.GetCurrentTime()
        return TaskStatusUpdateEvent(task_id=self._task_id, context_id=self._context_id, status=status)

    async def answer(self, verdict: tuple[str, Any]) -> None:
        """Publish what the guard's answer `verdict` publishes."""
        events: list[Any] = []
        self._apply(verdict, events)
        for event in events:
            await self._queue.enqueue_event(event)

    async def fail_internally(self, exc: BaseException) -> None:
        """The domain code raised `exc`: the Task fails with the fixed message, or with
        `resource_limit_exceeded` when the SDK refused a value it published for its
        nesting. Nothing of `exc` is published."""
        if self._guard.finished:
            return
        if _nesting_refused(exc):
            await self.answer(self._guard.uncarried())
            return
        self._guard.abort()
        self._artifacts.clear()
        await self._queue.enqueue_event(self._status(_FAILED, _text_message(INTERNAL_FAILURE)))

    async def returned(self) -> None:
        await self.answer(self._guard.returned())

    def _artifact(self, artifact: Artifact, append: bool, last_chunk: bool, events: list[Any]) -> None:
        held = self._artifacts.get(artifact.artifact_id)
        if append and held is not None:
            held.artifact.parts.extend(artifact.parts)
        else:
            # Copied once, into the event that is published when released: what `inner`
            # still holds and changes later is not what was checked.
            update = TaskArtifactUpdateEvent(
                task_id=self._task_id, context_id=self._context_id, append=False, last_chunk=True
            )
            update.artifact.CopyFrom(artifact)
            self._artifacts[artifact.artifact_id] = update
        verdict = self._guard.artifact(
            artifact.artifact_id, artifact.name, _parts(artifact.parts), append, last_chunk
        )
        self._apply(verdict, events)

    async def publish_data(self, artifact_id: str, name: str, data: Any) -> bool:
        """Publish `data` as the single Data Part of the whole Artifact `artifact_id`
        named `name`, made from the bytes the library checked (not through protobuf's
        `json_format`, which walks the value in Python). False when the library does not
        read `data` as plain JSON: the caller then goes through the SDK's helpers."""
        if self._guard.finished:
            return True  # nothing more of the Task is published
        read = self._guard.data_artifact(artifact_id, name, data)
        if read is None:
            return False
        encoded, verdict = read
        update = TaskArtifactUpdateEvent(
            task_id=self._task_id, context_id=self._context_id, append=False, last_chunk=True
        )
        update.artifact.artifact_id = artifact_id
        update.artifact.name = name
        update.artifact.parts.add().data.ParseFromString(encoded)
        self._artifacts[artifact_id] = update
        await self.answer(verdict)
        return True

    def _state(self, status: TaskStatus, events: list[Any], *, whole_task: bool = False) -> None:
        parts = _parts(status.message.parts) if status.HasField("message") else None
        state = _state_name(status.state)
        if whole_task:
            verdict = self._guard.task_status(state, parts)
            if verdict is None:
                return  # the Task as it was created: no status change
        else:
            verdict = self._guard.status(state, parts)
        if self._apply(verdict, events):
            events.append(TaskStatusUpdateEvent(task_id=self._task_id, context_id=self._context_id, status=status))

    async def enqueue_event(self, event: Any) -> None:
        if self._guard.finished:
            return  # the Task ended or failed: nothing more of it is published
        events: list[Any] = []
        if isinstance(event, TaskArtifactUpdateEvent):
            self._artifact(event.artifact, event.append, event.last_chunk, events)
        elif isinstance(event, TaskStatusUpdateEvent):
            self._state(event.status, events)
        elif isinstance(event, Task):
            # The Task exists already (the executor created it): its Artifacts and state
            # are updates like any other, each checked; an Artifact delivered whole
            # already is restated, not changed (as the gateway reads a Task event).
            for artifact in event.artifacts:
                if self._guard.is_whole(artifact.artifact_id):
                    continue
                self._artifact(artifact, False, True, events)
                if self._guard.finished:
                    break
            else:
                self._state(event.status, events, whole_task=True)
        elif isinstance(event, Message):
            self._apply(self._guard.message(), events)
        else:
            events.append(event)
        for update in events:
            await self._queue.enqueue_event(update)


class SkillCall:
    """One turn of a checked skill invocation, as the domain code sees it.

    `invocation` is the checked request (`skill_id`, `skill_version`,
    `interface_digest`, `arguments` as validated, integral numbers as `int`); `context`
    the SDK's `RequestContext`; `follow_up` the caller's Message when this turn answers
    an input-required or auth-required status (not checked against any schema, as the
    draft says), else None. Publish only through the helpers (or `updater`, the SDK's
    `TaskUpdater` on the guarded queue): each publication is checked, and one that is
    refused fails the Task and raises `InterfaceError`.
    """

    __slots__ = ("_bundle", "_queue", "_updater", "context", "follow_up", "invocation")

    def __init__(self, invocation: Invocation, context: RequestContext, queue: _GuardedQueue,
                 bundle: Bundle, follow_up: Message | None) -> None:
        self.invocation = invocation
        self.context = context
        self.follow_up = follow_up
        self._queue = queue
        self._bundle = bundle
        self._updater: TaskUpdater | None = None

    @property
    def updater(self) -> TaskUpdater:
        """The SDK's `TaskUpdater` on the guarded queue (made when first used)."""
        if self._updater is None:
            self._updater = TaskUpdater(self._queue, self.context.task_id, self.context.context_id)
        return self._updater

    @property
    def skill_id(self) -> str:
        return self.invocation.skill_id

    @property
    def arguments(self) -> Any:
        return self.invocation.arguments

    @property
    def task_id(self) -> str:
        return self.context.task_id

    def _raise_if_failed(self) -> None:
        if self._queue.finished and self._queue.failure is not None:
            raise self._queue.failure

    async def working(self, text: str | None = None) -> None:
        """A progress status (`TASK_STATE_WORKING`), with an optional text."""
        await self.updater.start_work(_text_message(text) if text else None)

    async def _publish(self, data: Any, *, name: str, artifact_id: str) -> None:
        """Publish `data` as the single Data Part of Artifact `artifact_id` named `name`.
        When a2a-sdk cannot carry it (nested deeper than protobuf's parser takes, a cycle,
        an object that is not JSON), the library says why: the Task fails with the
        draft's error object (`resource_limit_exceeded`, `output_invalid`) and
        `InterfaceError` is raised, as for any refused publication."""
        if await self._queue.publish_data(artifact_id, name, data):
            self._raise_if_failed()
            return
        try:
            part = new_data_part(data)
            await self.updater.add_artifact([part], artifact_id=artifact_id, name=name, last_chunk=True)
        except InterfaceError:
            raise
        except Exception:
            if self._queue.finished:
                raise
            verdict = self._queue._guard.refuse_data(data)
            if verdict[0] == "fail":
                await self._queue.answer(verdict)
                self._raise_if_failed()
            raise
        self._raise_if_failed()

    async def publish_record(self, kind: str, record: Any, *, artifact_id: str | None = None) -> str:
        """Publish one complete supporting record of `kind` now (checked, then released
        at once). Returns its artifactId, which the result may reference."""
        artifact_id = artifact_id or str(uuid.uuid4())
        await self._publish(record, name=kind, artifact_id=artifact_id)
        return artifact_id

    async def complete(self, result: Any, *, artifact_id: str | None = None) -> None:
        """Publish the primary result `{"skill", "result": result}` and complete the Task
        (both only if everything the Task holds is valid)."""
        name, data = self._queue.result_artifact(result)
        await self._publish(data, name=name, artifact_id=artifact_id or str(uuid.uuid4()))
        await self.updater.complete()
        self._raise_if_failed()

    async def refuse(self, code: str, message: str) -> None:
        """End the Task with a domain refusal, the draft's error object:
        `constraint_rejected` or `authorization_failed` (`TASK_STATE_REJECTED`), or
        `resource_limit_exceeded` (`TASK_STATE_FAILED`). The message goes to the caller:
        put nothing in it the caller may not see."""
        error = self._bundle.domain_refusal(code, message)
        await self.updater.update_status(
            TaskState.Value(error.task_state), _error_message(error.to_dict())
        )

    async def require_input(self, text: str) -> None:
        """Ask the caller for more input (`TASK_STATE_INPUT_REQUIRED`). Its follow-up comes
        back as the next turn's `follow_up`."""
        await self.updater.requires_input(_text_message(text))

    async def require_auth(self, text: str) -> None:
        """Ask the caller to authorize (`TASK_STATE_AUTH_REQUIRED`)."""
        await self.updater.requires_auth(_text_message(text))


class SchemaEnforcingExecutor(AgentExecutor):
    """An `AgentExecutor` that answers describe_skill from the bundle and enforces its
    interfaces around `inner` (see the module documentation).

    `base_requests`: Messages without a skill request object go to `inner` as base A2A
    requests. `require_extension`: strict mode, the card says `required: true` and a
    request that does not activate the extension is refused with
    `ExtensionSupportRequiredError`. `max_records_per_task`, `max_artifact_bytes`: the
    per-Task limits (beyond, `resource_limit_exceeded`).
    """

    def __init__(
        self,
        bundle: Bundle,
        inner: Any,
        *,
        base_requests: bool = False,
        require_extension: bool = False,
        max_records_per_task: int = DEFAULT_MAX_RECORDS,
        max_artifact_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES,
    ) -> None:
        self.bundle = bundle
        self.inner = inner
        self.base_requests = base_requests
        self.require_extension = require_extension
        self.max_records_per_task = max_records_per_task
        self.max_artifact_bytes = max_artifact_bytes
        self._running: dict[str, _GuardedQueue] = {}
        self._open: OrderedDict[str, _Open] = OrderedDict()

    # -- wiring -------------------------------------------------------------------------

    def agent_card(self, base: Mapping[str, Any] | AgentCard) -> AgentCard:
        """`base` with the extension (`required` per this executor's mode) and skills."""
        return agent_card(self.bundle, base, require_extension=self.require_extension)

    def request_handler(self, agent_card: AgentCard, *, task_store: Any = None, **kwargs: Any) -> DefaultRequestHandler:
        """The SDK's request handler around this executor, with the request-context
        builder that refuses through the binding what must not create or touch a Task."""
        if task_store is None:
            task_store = InMemoryTaskStore()
        return _EnforcingRequestHandler(
            self,
            agent_executor=self,
            task_store=task_store,
            agent_card=agent_card,
            request_context_builder=_RoutingContextBuilder(self, task_store),
            **kwargs,
        )

    # -- routing ------------------------------------------------------------------------

    def check_operation(self, task: Task | None, method: OperationMethod) -> None:
        """Raise A2A's error when the skill of `task` (a governed Task) does not allow the
        operation `method` on it (`Bundle.check_operation`)."""
        existing = self._task_of(task)
        if existing is not None:
            _refuse_operation(self.bundle.check_operation(existing[0], method))

    def _task_of(self, task: Task | None) -> tuple[str | None, bool] | None:
        """`(skill_id or None, interrupted)` of an existing Task, for the router."""
        if task is None:
            return None
        interrupted = is_interrupted(TaskState.Name(task.status.state))
        kept = self._open.get(task.id)
        if kept is not None:
            return kept.guard.skill_id, interrupted
        running = self._running.get(task.id)
        if running is not None:
            return running._guard.skill_id, interrupted
        return self._skill_of_history(task), interrupted

    def _skill_of_history(self, task: Task) -> str | None:
        """The domain skill a stored Task invokes: the one its first Message requests."""
        for message in task.history[:1]:
            for data in _parts(message.parts):
                if data is not None:
                    skill = self.bundle.invoked_skill(data)
                    if skill is not None:
                        return skill
        return None

    def route(self, message: Message | None, activated: bool, task: Task | None,
              *, in_task: bool = False) -> tuple[str, Any]:
        parts = _parts(message.parts) if message is not None else []
        metadata = json_format.MessageToDict(message.metadata) if message is not None and message.HasField("metadata") else None
        existing = self._task_of(task)
        if existing is None and in_task:
            existing = (None, False)
        return self.bundle.route_message(
            parts,
            metadata=metadata,
            activated=activated,
            task=existing,
            require_extension=self.require_extension,
            base_requests=self.base_requests,
        )

    # -- execution ----------------------------------------------------------------------

    async def execute(self, context: RequestContext, event_queue: Any) -> None:
        try:
            await self._execute(context, event_queue)
        except A2AError:
            raise
        except Exception:
            # The domain code of a base request, or a defect here: the caller learns only
            # that the Task failed.
            log.exception("executing task %s raised", context.task_id)
            updater = await self._start(context, event_queue)
            await updater.failed(_text_message(INTERNAL_FAILURE))

    async def _execute(self, context: RequestContext, event_queue: Any) -> None:
        call = context.call_context
        routed = call.state.pop(_ROUTED, None) if call is not None else None
        if routed is not None and routed[0] is context.message:
            _, kind, payload = routed  # the request-context builder's routing of it
        else:
            activated = EXTENSION_URI in context.requested_extensions
            kind, payload = self.route(context.message, activated, context.current_task)
        if kind == "base":
            await self.inner.execute(context, event_queue)
            return
        if kind == "follow_up":
            await self._follow_up(context, event_queue)
            return
        if kind == "binding":
            # Only reached when the request handler was built without this executor's
            # context builder: the Task is left untouched, the request ignored.
            log.warning("a Message that must be refused through the binding reached execute; "
                        "build the request handler with SchemaEnforcingExecutor.request_handler")
            return
        if kind == "extension_required":
            raise ExtensionSupportRequiredError(message=f"activate the extension {EXTENSION_URI}")
        if kind == "invoke":
            # The Task exists before the domain code runs: whatever it publishes, and
            # whatever the guard answers, is about a Task the SDK knows.
            await self._create_task(context, event_queue)
            guard = self.bundle.task_guard(
                payload.skill_id,
                max_records=self.max_records_per_task,
                max_artifact_bytes=self.max_artifact_bytes,
            )
            await self._run(context, event_queue, guard, payload, None)
            return
        updater = await self._start(context, event_queue)
        if kind == "not_activated":
            await updater.reject(_text_message(
                "this agent's skills are schema-governed: activate the extension "
                f"{EXTENSION_URI} with the {HTTP_EXTENSION_HEADER} request header "
                "and send a skill request object as the Message's single Data Part"
            ))
        elif kind == "reject":
            await updater.update_status(TaskState.Value(payload.task_state), _error_message(payload.to_dict()))
        elif kind == "describe":
            result = self.bundle.describe_skill(payload)
            await updater.add_artifact([new_data_part(result)], name=DESCRIBE_SKILL, extensions=[EXTENSION_URI])
            await updater.complete()

    async def _follow_up(self, context: RequestContext, event_queue: Any) -> None:
        task = context.current_task
        kept = self._open.pop(task.id, None) or self._rebuild(task)
        if kept is None:
            log.error("task %s waits for input but its invocation cannot be re-checked", task.id)
            await TaskUpdater(event_queue, task.id, task.context_id).failed(_text_message(INTERNAL_FAILURE))
            return
        await self._run(context, event_queue, kept.guard, kept.invocation, context.message, kept.artifacts)

    def _rebuild(self, task: Task) -> _Open | None:
        """A guard for a stored interrupted Task whose guard is no longer in memory: its
        invocation re-checked from its first Message, its Artifacts counted as published."""
        if not task.history:
            return None
        kind, invocation = self.route(task.history[0], True, None)
        if kind != "invoke":
            return None
        guard = self.bundle.task_guard(
            invocation.skill_id, max_records=self.max_records_per_task, max_artifact_bytes=self.max_artifact_bytes
        )
        for artifact in task.artifacts:
            guard.adopt(artifact.artifact_id, artifact.name)
        guard.set_state(TaskState.Name(task.status.state))
        return _Open(guard, invocation)

    async def _run(self, context: RequestContext, event_queue: Any, guard: Any,
                   invocation: Invocation, follow_up: Message | None,
                   artifacts: dict[str, Artifact] | None = None) -> None:
        queue = _GuardedQueue(event_queue, guard, context.task_id, context.context_id, artifacts)
        call = SkillCall(invocation, context, queue, self.bundle, follow_up)
        queue.call = call
        self._running[context.task_id] = queue
        try:
            invoke = getattr(self.inner, "invoke", None)
            if invoke is not None:
                await invoke(call)
            else:
                await self.inner.execute(context, queue)
            await queue.returned()
        except InterfaceError as e:
            if not queue.finished:  # not a refusal by the guard: the domain code's own
                log.exception("the domain executor raised for task %s", context.task_id)
                await queue.fail_internally(e)
        except Exception as e:
            log.exception("the domain executor raised for task %s", context.task_id)
            await queue.fail_internally(e)
        finally:
            self._running.pop(context.task_id, None)
            # The queue and the call refer to each other: unlinked, both (and the request
            # context, the guard and the Task they hold) are freed when the turn ends, not
            # left for the cycle collector, whose every pass in a busy agent costs time.
            queue.call = None
        if guard.interrupted and not guard.finished:
            self._open[context.task_id] = _Open(guard, invocation, queue._artifacts)
            while len(self._open) > _MAX_OPEN:
                self._open.popitem(last=False)

    async def cancel(self, context: RequestContext, event_queue: Any) -> None:
        task_id = context.task_id
        queue = self._running.get(task_id)
        if queue is None:
            task = context.current_task
            kept = self._open.pop(task_id, None) or (self._rebuild(task) if task is not None else None)
            if kept is None:
                # Not a skill invocation: a base request's Task, or describe_skill's.
                await self.inner.cancel(context, event_queue)
                return
            queue = _GuardedQueue(event_queue, kept.guard, task_id, context.context_id, kept.artifacts)
        # The request handler refused it already; this guards a handler built without it.
        _refuse_operation(self.bundle.check_operation(queue._guard.skill_id, "CancelTask"))
        if queue.finished:
            return
        try:
            await self.inner.cancel(context, queue)
        except Exception as e:
            log.exception("the domain executor's cancel raised for task %s", task_id)
            await queue.fail_internally(e)

    @staticmethod
    async def _create_task(context: RequestContext, event_queue: Any) -> Task:
        """The request's Task: the existing one, or a new one (published)."""
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
            context.current_task = task
        return task

    @classmethod
    async def _start(cls, context: RequestContext, event_queue: Any) -> TaskUpdater:
        """An updater on the request's Task (created if new)."""
        task = await cls._create_task(context, event_queue)
        return TaskUpdater(event_queue, task.id, task.context_id)


class _RoutingContextBuilder(SimpleRequestContextBuilder):
    """Refuses, before any Task is created or touched, what the router says must be
    refused through the binding: `ExtensionSupportRequiredError` in strict mode, and
    `InvalidParamsError` (with the draft's code in its details) for a skill request sent
    into an existing Task."""

    def __init__(self, executor: SchemaEnforcingExecutor, task_store: Any) -> None:
        super().__init__()
        self._executor = executor
        self._store = task_store

    async def build(self, context: Any, params: Any = None, task_id: str | None = None,
                    context_id: str | None = None, task: Task | None = None) -> RequestContext:
        if params is not None:
            activated = EXTENSION_URI in context.requested_extensions
            stored = task
            if stored is None and task_id and self._store is not None:
                stored = await self._store.get(task_id, context)
            kind, payload = self._executor.route(params.message, activated, stored, in_task=bool(task_id))
            if kind == "extension_required":
                raise ExtensionSupportRequiredError(message=f"activate the extension {EXTENSION_URI}")
            if kind == "binding":
                raise InvalidParamsError(message=payload.message, data={"code": payload.code})
            operation = context.state.get(_OPERATION) if context is not None else None
            if operation is not None and kind in ("invoke", "follow_up"):
                method, return_immediately, push_config = operation
                existing = self._executor._task_of(stored) if kind == "follow_up" else None
                skill = payload.skill_id if kind == "invoke" else (existing[0] if existing else None)
                _refuse_operation(self._executor.bundle.check_operation(
                    skill, method, return_immediately=return_immediately, push_config=push_config))
            if context is not None:
                context.state[_ROUTED] = (params.message, kind, payload)
        return await super().build(context, params, task_id, context_id, task)


class _EnforcingRequestHandler(DefaultRequestHandler):
    """a2a-sdk's request handler, telling the rules which operation each request is:
    a send's method and configuration go to the request-context builder (through
    `ServerCallContext.state`), and CancelTask, SubscribeToTask and
    CreateTaskPushNotificationConfig on a governed Task are refused, before the SDK
    acts, when the skill's interaction declaration does not allow them."""

    def __init__(self, executor: SchemaEnforcingExecutor, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._executor = executor
        self._store = kwargs["task_store"]

    async def _check(self, task_id: str, method: OperationMethod, context: Any) -> None:
        task = await self._store.get(task_id, context) if task_id else None
        self._executor.check_operation(task, method)

    async def on_message_send(self, params: Any, context: Any) -> Any:
        configuration = params.configuration
        context.state[_OPERATION] = ("SendMessage", configuration.return_immediately,
                                     configuration.HasField("task_push_notification_config"))
        return await super().on_message_send(params, context)

    async def on_message_send_stream(self, params: Any, context: Any) -> Any:
        context.state[_OPERATION] = ("SendStreamingMessage", False,
                                     params.configuration.HasField("task_push_notification_config"))
        async for event in super().on_message_send_stream(params, context):
            yield event

    async def on_cancel_task(self, params: Any, context: Any) -> Any:
        await self._check(params.id, "CancelTask", context)
        return await super().on_cancel_task(params, context)

    async def on_subscribe_to_task(self, params: Any, context: Any) -> Any:
        await self._check(params.id, "SubscribeToTask", context)
        async for event in super().on_subscribe_to_task(params, context):
            yield event

    async def on_create_task_push_notification_config(self, params: Any, context: Any) -> Any:
        await self._check(params.task_id, "CreateTaskPushNotificationConfig", context)
        return await super().on_create_task_push_notification_config(params, context)


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

