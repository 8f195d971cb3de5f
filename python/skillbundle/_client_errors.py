"""The exceptions of the client side (`skillbundle.client`), raised by the native
module's client checks (src/python/client.rs). Defined in Python so they pickle,
subclass and print like any other exception."""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["ClientError", "ProtocolViolation", "SkillRefused", "TaskStopped"]


class ClientError(Exception):
    """Base class: the call did not deliver a checked result."""


class ProtocolViolation(ClientError):
    """The agent broke a requirement of the draft.

    `clause` is the requirement's stable id (`digest-triple`, `primary-result`, ...),
    `section` and `requirement` the draft's words, `pointer` a JSON Pointer into what
    the agent sent, `evidence` a bounded excerpt of it, and `condition` the condition
    the client reports locally (`interface_invalid`, `output_invalid`) where one applies.
    """

    clause: str
    condition: str | None
    pointer: str
    evidence: str | None
    section: str
    requirement: str

    def __init__(self, violation: dict[str, Any], extra: dict[str, Any]) -> None:
        self.clause = violation["clause"]
        self.condition = violation.get("condition")
        self.pointer = violation.get("pointer", "")
        self.evidence = violation.get("evidence")
        self.message = violation.get("message", "")
        self.section = extra.get("section", "")
        self.requirement = extra.get("requirement", "")
        super().__init__(f"{self.clause}: {self.message}")


class SkillRefused(ClientError):
    """The agent rejected or failed the task: `state` (TASK_STATE_REJECTED or
    TASK_STATE_FAILED), `code` and `error` (the draft's error object, a copy) — both
    None when the agent reported no machine-readable condition, which the draft allows
    for a failure that is none of its conditions — and `describe` (whether the
    describe_skill request was refused)."""

    code: str | None
    state: str
    describe: bool

    def __init__(self, error: dict[str, Any] | None, state: str, describe: bool) -> None:
        self._error = error
        self.code = None if error is None else error["error"]["code"]
        self.state = state
        self.describe = describe
        super().__init__(f"{self.code} ({state})" if self.code is not None
                         else f"{state}, no machine-readable condition")

    @property
    def error(self) -> dict[str, Any] | None:
        return copy.deepcopy(self._error)


class TaskStopped(ClientError):
    """The task stopped in a state with nothing to validate (canceled, input-required,
    auth-required, or still working)."""

    def __init__(self, state: str, describe: bool) -> None:
        self.state = state
        self.describe = describe
        super().__init__(f"the task stopped in {state}")
