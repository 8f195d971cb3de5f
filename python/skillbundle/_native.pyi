"""Type stubs of the native module (src/python/ in the Rust crate).

Every value the module hands back that has a shape of the draft's or of the library's
is a TypedDict of `skillbundle.types` (findings, error objects, bindings, Skill Interface
Documents, describe_skill results, skill request objects, checked Tasks, delegation
hops), as pydantic-core's `_pydantic_core.pyi` types its values with `core_schema`.
tests/python/test_python_face.py holds these stubs to the module with mypy's stubtest
and to the values it returns."""

import os
import pathlib
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, final

from typing_extensions import Self

from skillbundle._errors import InterfaceError
from skillbundle.types import (
    AgentExtension,
    CheckedTask,
    DelegationHop,
    DescribeRequest,
    DescribeResult,
    Finding,
    JsonValue,
    OperationMethod,
    OperationRefusal,
    ResultObject,
    Route,
    SkillBinding,
    SkillInterfaceDocument,
    SkillRequest,
    TrustEntry,
    UpstreamTask,
    Verdict,
)

EXTENSION_URI: Final[str]
__version__: Final[str]
DESCRIBE_SKILL: Final[str]
RESOURCE_LIMIT_EXCEEDED: Final[str]
DEFAULT_MAX_RECORDS: Final[int]
DEFAULT_MAX_ARTIFACT_BYTES: Final[int]
DEFAULT_MAX_BODY_BYTES: Final[int]
DEFAULT_MAX_DEPTH: Final[int]
DEFAULT_MAX_VALUES: Final[int]

def check_body(
    body: bytes, *, max_depth: int, max_values: int
) -> tuple[Literal["parse", "limit"], str] | None:
    """Read a request body with the library's strict I-JSON reader: None when it is one
    I-JSON value within the limits, else ("parse" | "limit", a message that quotes
    nothing of the body). Used by `skillbundle.guard.RequestGuard`."""

def body_too_large(*, max_body_bytes: int) -> tuple[Literal["limit"], str]:
    """The refusal of a body longer than `max_body_bytes`."""

def is_terminal(state: str) -> bool:
    """Whether `state` (an A2A 1.0 wire name, `TASK_STATE_COMPLETED`...) ends a Task."""

def is_interrupted(state: str) -> bool:
    """Whether a Task in `state` (an A2A 1.0 wire name) waits for input or authorization."""

@final
class Describe:
    """A describe_skill request that passed every check."""

    __match_args__ = ("skill_id",)
    @property
    def skill_id(self) -> str: ...
    def __new__(cls, skill_id: str) -> Self: ...

@final
class Invoke:
    """A domain-skill request naming the active interface, with valid arguments
    (the caller's own object, not a copy)."""

    __match_args__ = ("skill_id", "arguments")
    @property
    def skill_id(self) -> str: ...
    @property
    def arguments(self) -> JsonValue: ...
    def __new__(cls, skill_id: str, arguments: JsonValue) -> Self: ...

@final
class Invocation:
    """A domain-skill request that passed every check: the interface it names and its
    arguments as validated (integral numbers as `int`)."""

    @property
    def skill_id(self) -> str: ...
    @property
    def skill_version(self) -> str: ...
    @property
    def interface_digest(self) -> str: ...
    @property
    def arguments(self) -> JsonValue: ...

@final
class TaskGuard:
    """What one Task of one skill may publish, and when (the library's `agent::task`)."""

    @property
    def skill_id(self) -> str: ...
    @property
    def finished(self) -> bool: ...
    @property
    def interrupted(self) -> bool: ...
    def artifact(
        self, artifact_id: str, name: str, parts: Iterable[JsonValue | bytes | None], append: bool, last_chunk: bool
    ) -> Verdict:
        """An Artifact update; `parts` holds each Part's data (`None`: not a Data Part;
        `bytes`: a protobuf `Value` in wire form)."""
    def status(self, state: str, parts: Iterable[JsonValue | bytes | None] | None = None) -> Verdict:
        """A status change to `state` (an A2A 1.0 wire name); `parts`: its status
        Message's Parts' data, when it has a Message."""
    def is_whole(self, artifact_id: str) -> bool:
        """Whether the Artifact was delivered whole (a chunk with `lastChunk`, or
        published): a whole Task event restates it, no update may change it."""
    def task_status(
        self, state: str, parts: Iterable[JsonValue | bytes | None] | None = None
    ) -> Verdict | None:
        """The status of a whole `Task` the domain code published (as `status`): `None`
        when it is the Task as created (`TASK_STATE_SUBMITTED`, or no state), which
        publishes nothing; otherwise the verdict on it as a status change."""
    def data_artifact(self, artifact_id: str, name: str, data: object) -> tuple[bytes, Verdict] | None:
        """`data` as the single Data Part of the whole Artifact `artifact_id` named
        `name`: the `google.protobuf.Value` wire bytes the Part carries and the verdict on
        that Artifact, checked as read back from those bytes; `None` when `data` is not
        JSON of exact built-in types within what a Data Part carries."""
    def refuse_data(self, data: JsonValue) -> Verdict:
        """A value a publishing helper could not turn into a Data Part: `("fail", error)`
        (nested deeper than a Data Part carries: `resource_limit_exceeded`; not I-JSON:
        `output_invalid`), or `("hold", None)` when nothing is wrong with it."""
    def uncarried(self) -> Verdict:
        """The domain code published, past the helpers, a value a2a-sdk's protobuf refused
        for its nesting: `("fail", error)` with `resource_limit_exceeded` (`("hold", None)`
        when the Task had ended already)."""
    def message(self) -> Verdict:
        """The executor answered with a bare Message."""
    def returned(self) -> Verdict:
        """The executor returned."""
    def result_artifact(self, result: JsonValue) -> tuple[str, ResultObject]:
        """The primary result Artifact for `result`: its name and its Data Part's data."""
    def abort(self) -> None: ...
    def adopt(self, artifact_id: str, name: str) -> None: ...
    def set_state(self, state: str) -> None: ...

@final
class Bundle:
    """A verified, loaded skill bundle. Immutable; share it between tasks and threads."""

    @staticmethod
    def open(
        path: str | os.PathLike[str],
        *,
        trust: Iterable[TrustEntry] | None = None,
        allow_unsigned: bool = False,
    ) -> Bundle:
        """Open, verify and load a bundle; raises `BundleRefused`. `trust` takes paths of
        JWK, JWK Set or SPKI PEM files and JWK or JWK Set dicts, as the CLI's `--trust`;
        a signature by any one of their keys suffices. Works in a forked child; raises
        `RuntimeError` saying why when no loader thread can be started."""
    @staticmethod
    def fetch(
        reference: str,
        *,
        trust: Iterable[TrustEntry],
        state: str | os.PathLike[str],
        max_age: float | None = None,
        timeout: float | None = None,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
        plain_http: bool = False,
        allow_rollback: bool = False,
        require_referrer_signature: bool = False,
    ) -> Fetched:
        """Pull `[oci://]REGISTRY/REPOSITORY(:TAG|@sha256:DIGEST)`, verify and load it, with
        keep-last-good and anti-rollback kept in the `state` directory (as `skillbundle
        pull --state`). `max_age` (seconds, as `pull --max-age`) requires a signed release
        statement issued at most that long ago (`release_expired`). Deadlines in seconds: `timeout` for the whole pull (default 120),
        `connect_timeout` (10), `read_timeout` between reads (30). Credentials come from
        the standard files (`REGISTRY_AUTH_FILE`, containers' auth.json, Docker's
        config.json). Raises `BundleRefused` only when there is nothing to start on (no
        acceptable bundle from the registry and none kept); `ValueError` for an empty
        `trust` or a non-positive timeout."""
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def signature(self) -> str:
        """What the signature check established, in words."""
    @property
    def verified(self) -> bool:
        """Whether a trusted key vouches for the bundle."""
    @property
    def skills(self) -> list[SkillBinding]:
        """`skill_id`, `skill_version` and `interface_digest` of each skill."""
    def extension(self) -> AgentExtension:
        """The AgentExtension for the Agent Card's `capabilities.extensions`, as the bundle
        signs it (`interface_version` and the skills' bindings); `agent_card` adds each
        skill's capability descriptors (`interfaces`) to it."""
    def agent_skills(self) -> list[dict[str, Any]]:
        """The AgentSkill entries (describe_skill first)."""
    def card_fragment(self) -> dict[str, Any]: ...
    def agent_card(self, base: Mapping[str, Any], *, require_extension: bool = False) -> dict[str, Any]:
        """`base` with the extension (`required` as given) and skills merged in; raises
        `CardInvalid`."""
    def interface(self, skill_id: str) -> SkillInterfaceDocument | None: ...
    def describe_skill(self, skill_id: str) -> DescribeResult:
        """The describe_skill result object; raises `InterfaceError`."""
    def check_request(self, data: JsonValue) -> Describe | Invoke:
        """Check a skill request object; raises `InterfaceError`. Only exact `dict`,
        `list`, `tuple`, `str`, `int`, `float`, `bool` and `None` are JSON here (a
        subclass is a `TypeError`), so what was validated is what the caller reads."""
    def check_result(self, skill_id: str, value: JsonValue) -> None:
        """Validate a domain output; raises `InterfaceError` (`output_invalid`)."""
    def check_result_object(self, skill_id: str, data: JsonValue) -> None:
        """Validate a result Artifact's data `{"skill", "result"}`; raises `InterfaceError`."""
    def check_record(self, skill_id: str, kind: str, value: JsonValue) -> None:
        """Validate a supporting record of `kind`; raises `InterfaceError`."""
    def route_message(
        self,
        parts: Iterable[JsonValue | bytes | None],
        *,
        metadata: Mapping[str, Any] | None = None,
        activated: bool,
        task: tuple[str | None, bool] | None = None,
        require_extension: bool = False,
        base_requests: bool = False,
    ) -> Route:
        """What a Message is (the library's `agent::message`); `task` is `(skill_id or
        None, interrupted)` of the Task it is sent into."""
    def invoked_skill(self, data: JsonValue | bytes) -> str | None:
        """The domain skill a Task invokes, from its first Message's Data Part (`None`
        for describe_skill or anything else)."""
    def task_guard(
        self, skill_id: str, *, max_records: int = ..., max_artifact_bytes: int = ...
    ) -> TaskGuard: ...
    def check_operation(
        self,
        skill_id: str | None,
        method: OperationMethod,
        *,
        return_immediately: bool = False,
        push_config: bool = False,
    ) -> OperationRefusal | None:
        """Whether a Task of `skill_id` may take the A2A operation `method` by the skill's
        `interaction` declaration (the library's `agent::interaction`): `None`, or the
        A2A error to raise and its message. `None` skill_id (a base Task): allowed."""
    def domain_refusal(self, code: str, message: str) -> InterfaceError:
        """The error (not raised) for `constraint_rejected`, `authorization_failed` or
        `resource_limit_exceeded`; any other code is a `ValueError`."""

# The client side (src/python/client.rs; used by skillbundle.client).

DELEGATION_METADATA_KEY: Final[str]

@final
class CardAdvertisement:
    """An Agent Card's schema-interface advertisement, read by the library."""

    @staticmethod
    def read(card: Mapping[str, Any]) -> CardAdvertisement:
        """Raises `InterfaceError` (skill_not_advertised, unsupported_interface_version,
        interface_invalid)."""
    @property
    def skills(self) -> list[SkillBinding]: ...
    @property
    def describe_skill(self) -> bool: ...
    @property
    def extension_required(self) -> bool: ...
    def describe_request(self, skill_id: str) -> DescribeRequest: ...
    def verify_describe(self, skill_id: str, task: Mapping[str, Any]) -> VerifiedInterface:
        """Check a describe_skill Task and verify its document; raises `ProtocolViolation`,
        `SkillRefused`, `TaskStopped` or `InterfaceError`."""

@final
class VerifiedInterface:
    @property
    def skill_id(self) -> str: ...
    @property
    def skill_version(self) -> str: ...
    @property
    def interface_digest(self) -> str: ...
    @property
    def document(self) -> SkillInterfaceDocument: ...
    def request(self, arguments: JsonValue) -> SkillRequest:
        """The skill request object; raises `InterfaceError` (input_invalid)."""
    def check_task(self, task: Mapping[str, Any]) -> CheckedTask:
        """`{"result", "result_artifact_id", "records"}`; raises `ProtocolViolation`,
        `SkillRefused` or `TaskStopped`."""

@final
class InterfaceCache:
    def __new__(cls, capacity: int = 64) -> Self: ...
    def get(self, agent: str, card: CardAdvertisement, skill_id: str) -> VerifiedInterface | None: ...
    def insert(self, agent: str, interface: VerifiedInterface) -> None: ...
    def refresh(self, agent: str, card: CardAdvertisement) -> int: ...
    def __len__(self) -> int: ...

def delegation_metadata(agent: str, task_id: str, context_id: str | None = None) -> dict[str, UpstreamTask]: ...
def delegation_hop(
    upstream_agent: str,
    upstream_task_id: str,
    downstream_agent: str,
    downstream_task_id: str,
    interface: VerifiedInterface,
    terminal_state: str,
) -> DelegationHop: ...
def task_of(response: Mapping[str, Any], *, describe: bool) -> dict[str, Any]:
    """The Task of a SendMessage response (`{"task": ...}`, A2A 1.0 JSON form); raises
    `ProtocolViolation` for anything else (a bare Message)."""

@final
class Fetched:
    """What `Bundle.fetch` loaded, and from where."""

    @property
    def bundle(self) -> Bundle:
        """The verified bundle."""
    @property
    def source(self) -> Literal["registry", "last_good"]:
        """`"registry"`: pulled just now and recorded as the last good bundle;
        `"last_good"`: the registry's bundle could not be had or was refused (see
        `refused`), and the bundle kept in the state directory was verified again."""
    @property
    def pinned(self) -> str:
        """`registry/repository@sha256:...` of the manifest the bundle came from."""
    @property
    def previous_version(self) -> str | None:
        """The version accepted before this one for the same bundle name."""
    @property
    def refused(self) -> list[Finding]:
        """Why the registry's bundle was not loaded (findings as `BundleRefused.findings`
        holds them: `code`, `message`, ...); empty when `source` is `"registry"`."""
    @property
    def file(self) -> pathlib.Path:
        """The verified bundle file, as kept in the state directory."""
