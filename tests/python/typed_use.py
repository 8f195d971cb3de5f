"""An agent's typed use of the package: checked by `mypy --strict`
(test_python_face.py), never run. Each function indexes a value the native module
returns through its TypedDict, so a stub that loses a member or a type fails here."""

from __future__ import annotations

from skillbundle import Bundle, BundleRefused, InterfaceError
from skillbundle._native import TaskGuard, VerifiedInterface
from skillbundle.types import CheckedTask, DescribeResult, SkillInterfaceDocument


def digests(bundle: Bundle) -> dict[str, str]:
    return {b["skill_id"]: b["interface_digest"] for b in bundle.skills}


def input_schema_digest(bundle: Bundle, skill_id: str) -> str:
    described: DescribeResult = bundle.describe_skill(skill_id)
    assert described["result"]["interface_digest"].startswith("sha256:")
    document: SkillInterfaceDocument = described["result"]["interface"]
    return document["input_schema"]["digest"]


def record_kinds(document: SkillInterfaceDocument) -> list[str]:
    return [r["kind"] for r in document.get("supporting_record_schemas", [])]


def cancellable(bundle: Bundle, skill_id: str) -> bool:
    document = bundle.interface(skill_id)
    return document is not None and document["interaction"]["cancellable"]


def first_pointer(error: InterfaceError) -> str | None:
    details = error.to_dict()["error"].get("details", [])
    return details[0]["instance_path"] if details else None


def where(refused: BundleRefused) -> list[str]:
    return [f"{f.get('file', '?')}:{f.get('line', 0)}: {f['code']}" for f in refused.findings]


def complete(guard: TaskGuard, output: object) -> str:
    name, data = guard.result_artifact(output)
    assert data["skill"] == guard.skill_id
    _, payload = guard.returned()
    if isinstance(payload, InterfaceError):
        return f"{name}: {payload.code} ({payload.task_state})"
    return name


def records(interface: VerifiedInterface, task: dict[str, object]) -> list[str]:
    checked: CheckedTask = interface.check_task(task)
    return [f"{r['kind']}:{r['artifact_id']}" for r in checked["records"]] + [checked["result_artifact_id"]]
