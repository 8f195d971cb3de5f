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


def test_the_stubs_name_what_the_module_has() -> None:
    stub = _stub()
    typing_only = {"JsonValue", "TrustEntry", "Finding", "ErrorDetail", "ErrorBody", "ErrorObject", "SkillBinding", "Verdict", "Route"}
    declared: dict[str, ast.AST] = {}
    for node in stub.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            declared[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared[node.target.id] = node
        elif isinstance(node, ast.Assign):
            declared.update((t.id, node) for t in node.targets if isinstance(t, ast.Name))
    runtime = {n for n in dir(native) if not n.startswith("_") or n == "__version__"}
    assert set(declared) - typing_only == runtime
    for name, node in declared.items():
        if isinstance(node, ast.ClassDef) and name not in typing_only:
            members = {n.name for n in node.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
            members |= {t.id for n in node.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
            actual = {m for m in dir(getattr(native, name)) if not m.startswith("_") or m == "__match_args__"}
            assert members - {"__match_args__"} == actual - {"__match_args__"}, name


def test_the_typed_dicts_describe_what_comes_back(bundle: Bundle, signed: Signed, example_request: dict) -> None:
    stub = _stub()
    fields = {
        node.name: {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
        for node in stub.body
        if isinstance(node, ast.ClassDef)
    }
    assert all(set(b) == fields["SkillBinding"] for b in bundle.skills)
    bad = copy.deepcopy(example_request)
    bad["arguments"]["condition"]["threshold"] = "high"
    with pytest.raises(InterfaceError) as e:
        bundle.check_request(bad)
    error = e.value.to_dict()
    assert set(error) == fields["ErrorObject"]
    assert set(error["error"]) <= fields["ErrorBody"]
    assert all(set(d) <= fields["ErrorDetail"] for d in error["error"]["details"])
    with pytest.raises(BundleRefused) as r:
        Bundle.open(signed.bundle)
    assert all(set(f) <= fields["Finding"] for f in r.value.findings)
