"""The shapes of the values `skillbundle` hands back, as `TypedDict`s (pydantic-core's
habit: its `core_schema` types what `_pydantic_core` takes and returns).

The draft's values: Skill Interface Documents and their Schema References, describe_skill
results, skill request and result objects, error objects; the library's: findings (the
members and codes of `skillbundle verify --format json`), checked Tasks, delegation hops.
Import them for annotations: `from skillbundle.types import DescribeResult`. The native
module's stubs (`_native.pyi`) return them, and the tests hold both to what the module
returns (tests/python/test_python_face.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Union

from skillbundle._errors import InterfaceError
from skillbundle._native import Invocation

if TYPE_CHECKING:
    from typing_extensions import NotRequired

__all__ = [
    "AgentExtension",
    "Authority",
    "CheckedTask",
    "DelegationHop",
    "DescribeArguments",
    "DescribeRequest",
    "DescribeResult",
    "DescribeResultBody",
    "ErrorBody",
    "ErrorDetail",
    "ErrorObject",
    "ExtensionParams",
    "Finding",
    "InlineSchema",
    "Interaction",
    "JsonValue",
    "OperationMethod",
    "OperationRefusal",
    "Record",
    "ResultObject",
    "Route",
    "SchemaReference",
    "SkillBinding",
    "SkillInterfaceDocument",
    "SkillRequest",
    "SupportingRecordSchema",
    "TrustEntry",
    "UpstreamTask",
    "Verdict",
]

#: Any JSON value (exact `dict`, `list`, `tuple`, `str`, `int`, `float`, `bool`, `None`).
JsonValue = Any
#: One `trust=` entry: a path to a JWK, JWK Set or SPKI PEM file, or a JWK or JWK Set dict.
TrustEntry = Union[str, "os.PathLike[str]", Mapping[str, Any]]


class Finding(TypedDict):
    """One finding of `BundleRefused.findings`: the members and codes of
    `skillbundle verify --format json`."""

    code: str
    message: str
    severity: NotRequired[Literal["warning"]]
    condition: NotRequired[str]
    file: NotRequired[str]
    pointer: NotRequired[str]
    line: NotRequired[int]
    column: NotRequired[int]
    help: NotRequired[str]


class ErrorDetail(TypedDict):
    """One entry of an error object's `details`: where, never the value."""

    instance_path: str
    schema_path: NotRequired[str]
    keyword: NotRequired[str]
    expected: NotRequired[JsonValue]
    actual: NotRequired[JsonValue]


class ErrorBody(TypedDict):
    code: str
    message: NotRequired[str]
    details: NotRequired[list[ErrorDetail]]


class ErrorObject(TypedDict):
    """The draft's error object, `{"error": {"code", "message"?, "details"?}}`."""

    error: ErrorBody


class SkillBinding(TypedDict):
    """A skill's binding as the extension's params list it."""

    skill_id: str
    skill_version: str
    interface_digest: str


class ExtensionParams(TypedDict):
    interface_version: Literal["1.0"]
    skills: list[SkillBinding]


class AgentExtension(TypedDict):
    """The schema-interface AgentExtension of `capabilities.extensions`."""

    uri: str
    description: NotRequired[str]
    required: NotRequired[bool]
    params: ExtensionParams


class InlineSchema(TypedDict):
    type: Literal["inline"]
    schema: dict[str, Any] | bool


class SchemaReference(TypedDict):
    """A Schema Reference: portable identity, digest and the inline schema."""

    schema_uri: str
    version: str
    dialect: str
    digest: str
    resolution: InlineSchema


class SupportingRecordSchema(TypedDict):
    kind: str
    schema_reference: SchemaReference


class Interaction(TypedDict):
    supported_response_modes: list[Literal["sync", "stream", "poll", "push"]]
    cancellable: bool


class Authority(TypedDict):
    """Descriptive metadata, not a permission grant."""

    default_mode: Literal["observe_only", "recommend_only", "execute"]
    approval_may_be_required: bool


class SkillInterfaceDocument(TypedDict):
    """A Skill Interface Document, interface version 1.0."""

    interface_version: Literal["1.0"]
    skill_id: str
    skill_version: str
    input_schema: SchemaReference
    output_schema: SchemaReference
    supporting_record_schemas: NotRequired[list[SupportingRecordSchema]]
    interaction: Interaction
    authority: Authority


class DescribeResultBody(TypedDict):
    interface_digest: str
    interface: SkillInterfaceDocument


class DescribeResult(TypedDict):
    """The describe_skill result object: the data of the describe_skill Artifact."""

    skill: Literal["describe_skill"]
    result: DescribeResultBody


class DescribeArguments(TypedDict):
    skill_id: str


class DescribeRequest(TypedDict):
    """A describe_skill request object."""

    skill: Literal["describe_skill"]
    arguments: DescribeArguments


class SkillRequest(TypedDict):
    """A domain-skill request object."""

    skill: str
    skill_version: str
    interface_digest: str
    arguments: JsonValue


class ResultObject(TypedDict):
    """The skill result object: the data of the primary result Artifact."""

    skill: str
    result: JsonValue


class Record(TypedDict):
    """A supporting record received in its own Artifact."""

    artifact_id: str
    kind: str
    record: JsonValue


class CheckedTask(TypedDict):
    """What a completed domain-skill Task delivered, checked."""

    result: JsonValue
    result_artifact_id: str
    records: list[Record]


class UpstreamTask(TypedDict):
    """The delegation correlation under `DELEGATION_METADATA_KEY`."""

    upstream_agent: str
    upstream_task_id: str
    upstream_context_id: NotRequired[str]


class DelegationHop(TypedDict):
    """One delegation hop: two distinct tasks, related by separately named metadata."""

    upstream_agent: str
    upstream_task_id: str
    downstream_agent: str
    downstream_task_id: str
    skill_id: str
    skill_version: str
    interface_digest: str
    terminal_state: str

#: What a `TaskGuard` answers: hold, release these Artifacts, or fail the Task.
Verdict = Union[
    tuple[Literal["hold"], None], tuple[Literal["release"], list[str]], tuple[Literal["fail"], InterfaceError]
]
#: What `Bundle.route_message` answers.
Route = Union[
    tuple[Literal["describe"], str],
    tuple[Literal["invoke"], Invocation],
    tuple[Literal["follow_up", "base", "extension_required", "not_activated"], None],
    tuple[Literal["binding", "reject"], InterfaceError],
]
#: The A2A 1.0 operations a skill's `interaction` declaration governs
#: (`Bundle.check_operation`).
OperationMethod = Literal[
    "SendMessage", "SendStreamingMessage", "SubscribeToTask", "CreateTaskPushNotificationConfig", "CancelTask"
]
#: Why `Bundle.check_operation` refuses: A2A's `TaskNotCancelableError` or
#: `UnsupportedOperationError`, and the message to send with it.
OperationRefusal = tuple[Literal["task_not_cancelable", "unsupported_operation"], str]
