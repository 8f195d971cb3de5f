"""The exceptions the native module raises (defined in Python so they pickle, subclass
and print like any other exception).

Each keeps its constructor's arguments and rebuilds itself from them when unpickled
(`__reduce__`): `BaseException` would otherwise call the class with `self.args`, the
one-line text, which these constructors do not take. A refusal raised in a worker
process (multiprocessing, concurrent.futures) so reaches the parent whole."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillbundle.types import ErrorDetail, ErrorObject, Finding

__all__ = ["BundleRefused", "CardInvalid", "InterfaceError"]


class BundleRefused(Exception):
    """`Bundle.open` refused the bundle: nothing of it was loaded.

    `findings` is a list of dicts with the same members and codes as
    `skillbundle verify --format json`: `code`, `message`, and where known `file`,
    `pointer`, `line`, `column`, `condition`, `help`.
    """

    findings: list[Finding]

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        first: Any = findings[0] if findings else {"code": "bundle_invalid", "message": "refused"}
        where = f"{first['file']}: " if first.get("file") else ""
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        super().__init__(
            f"the skill bundle was refused: {where}{first['code']}: {first['message']}{more}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.findings,), self.__dict__)

    @property
    def codes(self) -> list[str]:
        """The distinct finding codes, in order of appearance."""
        return list(dict.fromkeys(f["code"] for f in self.findings))


class InterfaceError(Exception):
    """A request, result or record failed a check of the draft.

    `code` is the draft's condition (`interface_mismatch`, `input_invalid`,
    `output_invalid`, `skill_not_advertised`, ...), `task_state` the A2A 1.0 state the
    task must reach (`"TASK_STATE_REJECTED"` or `"TASK_STATE_FAILED"`), and `to_dict()`
    the draft's error object `{"error": {"code", "message", "details"?}}` to send as the
    status Message's single Data Part.
    """

    code: str
    message: str
    details: list[ErrorDetail]
    task_state: str | None

    def __init__(self, error: ErrorObject, task_state: str | None) -> None:
        body = error["error"]
        self._error = error
        self.code = body["code"]
        self.message = body.get("message", "")
        self.details = body.get("details", [])
        self.task_state = task_state
        super().__init__(f"{self.code}: {self.message}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._error, self.task_state), self.__dict__)

    def to_dict(self) -> ErrorObject:
        """The draft's error object (a fresh copy)."""
        return copy.deepcopy(self._error)


class CardInvalid(ValueError):
    """The base Agent Card cannot take the bundle's extension and skills (the CLI's
    `card_invalid`)."""

    code = "card_invalid"
