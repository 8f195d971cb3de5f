"""The Python face of the package: what a Python agent relies on besides the checks
themselves. Bundles open in forked children (a preloading server, multiprocessing);
a value is read from its own storage, never through a caller's override; refusals
survive pickling; a JWK Set is a trust file as for the CLI; the stubs name what the
module has."""

from __future__ import annotations

import ast
import copy
import enum
import json
import multiprocessing
import os
import pickle
import select
import signal
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
import skillbundle
import skillbundle._native as native
from skillbundle import Bundle, BundleRefused, InterfaceError, Invoke

from conftest import Signed, run_cli

SKILL = "evaluate_resource_condition"


@pytest.fixture(scope="module")
def bundle(signed: Signed) -> Bundle:
    return Bundle.open(signed.bundle, trust=[signed.jwk])


# --- fork ---------------------------------------------------------------------------------


def _open_and_check(path: str, jwk: str, request: dict, out: Any) -> None:
    """In a forked child: open the bundle and check a request; report what happened."""
    b = Bundle.open(path, trust=[jwk])
    out.put((b.verified, type(b.check_request(request)).__name__))


def test_bundle_opens_in_a_multiprocessing_fork_child(bundle: Bundle, signed: Signed, example_request: dict) -> None:
    # The parent has opened a bundle (its loader threads ran) before forking.
    Bundle.open(signed.bundle, trust=[signed.jwk])
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_open_and_check, args=(str(signed.bundle), str(signed.jwk), example_request, out))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail("Bundle.open hung in a forked child")
    assert child.exitcode == 0
    assert out.get(timeout=5) == (True, "Invoke")


def test_a_preloaded_bundle_works_in_os_fork_children(bundle: Bundle, signed: Signed, example_request: dict) -> None:
    """The gunicorn --preload pattern: the master loads, each forked worker serves
    with the inherited bundle and may open another."""
    preloaded = Bundle.open(signed.bundle, trust=[signed.jwk])
    children = []
    for _ in range(2):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(r)
            try:
                checked = preloaded.check_request(example_request)
                again = Bundle.open(signed.bundle, trust=[signed.jwk])
                report = {"inherited": type(checked).__name__, "reopened": again.verified}
                os.write(w, json.dumps(report).encode())
                os._exit(0)
            except BaseException:
                os._exit(1)
        os.close(w)
        children.append((pid, r))
    for pid, r in children:
        ready, _, _ = select.select([r], [], [], 60)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("a forked worker hung")
        report = os.read(r, 4096)
        os.close(r)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert json.loads(report) == {"inherited": "Invoke", "reopened": True}


# --- values are read from their own storage ---------------------------------------------


class LyingDict(dict):
    """A mapping that shows the validator one thing and its reader another."""

    def __getitem__(self, key: str) -> Any:
        if key == "arguments":
            return {"resource_id": "'; DROP TABLE resources; --"}
        return super().__getitem__(key)

    def items(self) -> Any:
        return [(k, self[k]) for k in self]

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default


class Operator(str, enum.Enum):
    GT = "gt"


class Threshold(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


def test_the_arguments_returned_are_the_arguments_validated(bundle: Bundle, example_request: dict) -> None:
    checked = bundle.check_request(copy.deepcopy(example_request))
    assert isinstance(checked, Invoke)
    assert checked.arguments == example_request["arguments"]


@pytest.mark.parametrize(
    "disguise",
    [
        lambda r: LyingDict(r),
        lambda r: dict(r, arguments=LyingDict(r["arguments"])),
        lambda r: dict(r, arguments=OrderedDict(r["arguments"])),
        lambda r: dict(r, arguments=dict(r["arguments"], condition=dict(r["arguments"]["condition"], operator=Operator.GT))),
        lambda r: dict(r, arguments=dict(r["arguments"], condition=dict(r["arguments"]["condition"], threshold=Threshold(80)))),
    ],
    ids=["request-dict-subclass", "arguments-dict-subclass", "ordered-dict", "str-enum", "int-subclass"],
)
def test_subclasses_are_refused_not_read_through(bundle: Bundle, example_request: dict, disguise: Any) -> None:
    with pytest.raises(TypeError, match="subclasses are refused"):
        bundle.check_request(disguise(copy.deepcopy(example_request)))
    with pytest.raises(TypeError, match="subclasses are refused"):
        bundle.check_result(SKILL, LyingDict(result="condition_met"))


# --- refusals pickle ------------------------------------------------------------------------


def test_interface_error_pickles(bundle: Bundle, example_request: dict) -> None:
    bad = copy.deepcopy(example_request)
    del bad["arguments"]["condition"]["unit"]
    with pytest.raises(InterfaceError) as e:
        bundle.check_request(bad)
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is InterfaceError
    assert (back.code, back.message, back.details, back.task_state) == (
        e.value.code, e.value.message, e.value.details, e.value.task_state)
    assert back.to_dict() == e.value.to_dict() and str(back) == str(e.value)


def test_bundle_refused_pickles(signed: Signed) -> None:
    with pytest.raises(BundleRefused) as e:
        Bundle.open(signed.bundle)
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is BundleRefused
    assert back.findings == e.value.findings and back.codes == e.value.codes
    assert str(back) == str(e.value)


def _refuse_in_worker(path: str) -> None:
    Bundle.open(path)


def test_a_refusal_crosses_a_process_pool(signed: Signed) -> None:
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        with pytest.raises(BundleRefused) as e:
            pool.submit(_refuse_in_worker, str(signed.bundle)).result(timeout=60)
    assert e.value.codes and e.value.findings[0]["code"] == e.value.codes[0]


# --- JWK Sets ---------------------------------------------------------------------------------


def test_a_jwk_set_is_a_trust_file_as_for_the_cli(signed: Signed) -> None:
    other = signed.dir / "rotated"
    run_cli("keygen", "--out", other)
    keys = [json.loads(Path(f"{other}.jwk.json").read_text()), signed.jwk_dict()]
    jwks = signed.dir / "trusted.jwks.json"
    jwks.write_text(json.dumps({"keys": keys}))
    run_cli("verify", signed.bundle, "--trust", jwks)  # the CLI trusts the set
    for trust in ([jwks], [str(jwks)], [{"keys": keys}]):
        assert Bundle.open(signed.bundle, trust=trust).verified
    # A set of only the other key trusts only that key, file or dict.
    only_other = signed.dir / "other.jwks.json"
    only_other.write_text(json.dumps({"keys": keys[:1]}))
    for trust in ([only_other], [{"keys": keys[:1]}]):
        with pytest.raises(BundleRefused) as e:
            Bundle.open(signed.bundle, trust=trust)
        assert e.value.codes == ["untrusted_key"]
    # What the CLI refuses as a trust file, the package refuses too.
    empty = signed.dir / "empty.jwks.json"
    empty.write_text('{"keys": []}')
    assert run_cli("verify", signed.bundle, "--trust", empty, check=False).returncode != 0
    for trust in ([empty], [{"keys": []}]):
        with pytest.raises(ValueError, match="empty"):
            Bundle.open(signed.bundle, trust=trust)


# --- the stubs --------------------------------------------------------------------------------

def _stub() -> ast.Module:
    return ast.parse((Path(skillbundle.__file__).parent / "_native.pyi").read_text())


def _typed_dicts() -> dict[str, ast.ClassDef]:
    """The TypedDicts of `skillbundle.types`, by name."""
    module = ast.parse((Path(skillbundle.__file__).parent / "types.py").read_text())
    return {
        node.name: node
        for node in module.body
        if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == "TypedDict" for b in node.bases)
    }


def test_the_stubs_name_what_the_module_has() -> None:
    stub = _stub()
    declared: dict[str, ast.AST] = {}
    for node in stub.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            declared[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared[node.target.id] = node
        elif isinstance(node, ast.Assign):
            declared.update((t.id, node) for t in node.targets if isinstance(t, ast.Name))
    runtime = {n for n in dir(native) if not n.startswith("_") or n == "__version__"}
    assert set(declared) == runtime
    for name, node in declared.items():
        if isinstance(node, ast.ClassDef):
            members = {n.name for n in node.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
            members |= {t.id for n in node.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
            actual = {m for m in dir(getattr(native, name)) if not m.startswith("_") or m == "__match_args__"}
            assert members - {"__match_args__"} == actual - {"__match_args__"}, name


ALLOWLIST = Path(__file__).parent / "stubtest-allowlist.txt"


def test_stubtest_finds_the_stubs_true_to_the_module() -> None:
    """mypy's stubtest imports the installed module and compares every name, signature
    (pyo3's `__text_signature__`), default and class member with `_native.pyi`."""
    import subprocess
    import sys

    # pyo3 gives the module an `__all__` of everything it added; the stubs declare the
    # names themselves (test_the_stubs_name_what_the_module_has compares the two).
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "skillbundle._native", "--allowlist", str(ALLOWLIST)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_accepts_a_typed_use_of_the_package() -> None:
    """The TypedDicts are usable: a small agent-side file that indexes describe results,
    documents, bindings, error objects and findings passes `mypy --strict`."""
    import subprocess
    import sys

    use = Path(__file__).parent / "typed_use.py"
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, str(use)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _fields(node: ast.ClassDef) -> tuple[dict[str, ast.expr], set[str]]:
    """A TypedDict's members (name -> annotation) and which are required."""
    members = {s.target.id: s.annotation for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    optional = {
        k for k, a in members.items() if isinstance(a, ast.Subscript) and isinstance(a.value, ast.Name) and a.value.id == "NotRequired"
    }
    return members, set(members) - optional


def _conforms(value: Any, annotation: ast.expr, dicts: dict[str, ast.ClassDef], at: str) -> None:
    """`value` has the shape `annotation` gives (TypedDicts, lists, str/int/bool,
    Literals); anything else (Any, JsonValue) is not checked."""
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name):
        outer = annotation.value.id
        if outer == "NotRequired":
            _conforms(value, annotation.slice, dicts, at)
        elif outer == "list":
            assert isinstance(value, list), at
            for i, item in enumerate(value):
                _conforms(item, annotation.slice, dicts, f"{at}/{i}")
        elif outer == "Literal":
            options = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            assert value in [ast.literal_eval(o) for o in options], at
        return
    if isinstance(annotation, ast.Name):
        if annotation.id in dicts:
            members, required = _fields(dicts[annotation.id])
            assert isinstance(value, dict), at
            assert required <= set(value) <= set(members), (at, annotation.id, sorted(value))
            for k, v in value.items():
                _conforms(v, members[k], dicts, f"{at}/{k}")
        elif annotation.id in ("str", "int", "bool"):
            assert type(value).__name__ == annotation.id, at


def _check(value: Any, name: str) -> None:
    dicts = _typed_dicts()
    _conforms(value, ast.Name(id=name), dicts, name)


def test_the_typed_dicts_describe_what_comes_back(bundle: Bundle, signed: Signed, example_request: dict) -> None:
    for binding in bundle.skills:
        _check(binding, "SkillBinding")
        _check(bundle.describe_skill(binding["skill_id"]), "DescribeResult")
        _check(bundle.interface(binding["skill_id"]), "SkillInterfaceDocument")
    _check(bundle.extension(), "AgentExtension")
    bad = copy.deepcopy(example_request)
    bad["arguments"]["condition"]["threshold"] = "high"
    with pytest.raises(InterfaceError) as e:
        bundle.check_request(bad)
    _check(e.value.to_dict(), "ErrorObject")
    assert e.value.details, "the refusal has details to check"
    with pytest.raises(BundleRefused) as r:
        Bundle.open(signed.bundle)
    for finding in r.value.findings:
        _check(finding, "Finding")
    guard = bundle.task_guard(SKILL)
    name, data = guard.result_artifact({"result": "condition_met"})
    assert name == SKILL
    _check(data, "ResultObject")
    kind, error = guard.returned()
    assert kind == "fail" and isinstance(error, InterfaceError)
    _check(error.to_dict(), "ErrorObject")


def test_task_states_are_the_librarys() -> None:
    from a2a.types import TaskState

    names = list(TaskState.keys())
    assert {n for n in names if native.is_terminal(n)} == {
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_REJECTED",
    }
    assert {n for n in names if native.is_interrupted(n)} == {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}
    assert not native.is_terminal("completed") and not native.is_interrupted("")


def test_a_message_answer_breaks_the_clause_of_its_exchange() -> None:
    from skillbundle.client import ProtocolViolation

    task = {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}
    assert native.task_of({"task": task}, describe=False) == task
    message = {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "secret"}]}}
    for describe, clause in ((True, "describe-response"), (False, "primary-result")):
        with pytest.raises(ProtocolViolation) as v:
            native.task_of(message, describe=describe)
        assert v.value.clause == clause
        assert v.value.section and v.value.requirement, "the draft's words come with the clause"
        assert "secret" not in str(v.value)


def test_the_request_limits_are_the_librarys() -> None:
    from skillbundle.limits import Limits

    assert Limits() == Limits(
        max_body_bytes=native.DEFAULT_MAX_BODY_BYTES, max_depth=native.DEFAULT_MAX_DEPTH, max_values=native.DEFAULT_MAX_VALUES
    )
    kind, message = native.body_too_large(max_body_bytes=100)
    assert kind == "limit" and "(100 bytes)" in message
    assert native.check_body(b'{"a": 1, "a": 2}', max_depth=8, max_values=8) == (
        "parse",
        "the request body is not I-JSON: an object repeats a member name (at line 1, column 10)",
    )
