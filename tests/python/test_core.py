"""The core API of the Python package, against the CLI on the same bundle."""

from __future__ import annotations

import copy
import json
import math

import pytest
import skillbundle
from skillbundle import Bundle, BundleRefused, CardInvalid, Describe, InterfaceError, Invoke

from conftest import Signed, cli_json, run_cli

SKILL = "evaluate_resource_condition"
DIGEST = "sha256:4dedea3f7ddf19e94d9fd0b30886624f50afb5aadc1b407508a05dd3c40f380d"
BASE_CARD = {
    "name": "Network agent",
    "description": "Answers network questions.",
    "version": "1.0.0",
    "supportedInterfaces": [
        {"url": "http://127.0.0.1:1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {"streaming": False},
    "defaultInputModes": ["application/json"],
    "defaultOutputModes": ["application/json"],
    "skills": [],
}
RESULT = {
    "result": "condition_not_met",
    "observed_value": 42,
    "unit": "percent",
    "supporting_record_refs": ["observation-7"],
}
RECORD = {
    "record_id": "observation-7",
    "resource_id": "network-resource-123",
    "metric": "utilization",
    "value": 42,
    "unit": "percent",
    "observed_at": "2026-08-11T12:00:01Z",
}


@pytest.fixture(scope="module")
def bundle(signed: Signed) -> Bundle:
    return Bundle.open(signed.bundle, trust=[signed.jwk])


def test_opens_with_every_kind_of_trusted_key(signed: Signed) -> None:
    for trust in ([signed.jwk], [str(signed.pem)], [signed.jwk_dict()]):
        b = Bundle.open(str(signed.bundle), trust=trust)
        assert b.verified
        assert b.name == "example-network-skills" and b.version == "0.1.0"


def test_skills_match_verify(bundle: Bundle, signed: Signed) -> None:
    verify = cli_json("verify", signed.bundle, "--trust", signed.jwk)
    assert bundle.skills == verify["skills"]
    assert {"skill_id": SKILL, "skill_version": "1.0", "interface_digest": DIGEST} in bundle.skills


def test_extension_and_agent_skills(bundle: Bundle) -> None:
    ext = bundle.extension()
    assert ext["uri"] == skillbundle.EXTENSION_URI
    assert ext["params"]["interface_version"] == "1.0"
    assert ext["params"]["skills"] == bundle.skills
    skills = bundle.agent_skills()
    assert [s["id"] for s in skills][0] == "describe_skill"
    assert {s["id"] for s in skills} == {"describe_skill"} | {s["skill_id"] for s in bundle.skills}


def test_agent_card_is_the_cli_merge(bundle: Bundle, signed: Signed) -> None:
    base = signed.dir / "base.json"
    base.write_text(json.dumps(BASE_CARD))
    cli = json.loads(run_cli("card", signed.bundle, "--trust", signed.jwk, "--base", base).stdout)
    assert bundle.agent_card(BASE_CARD) == cli
    assert BASE_CARD["skills"] == []  # the caller's dict is not modified
    with pytest.raises(CardInvalid) as e:
        bundle.agent_card(cli)  # already carries the extension
    assert e.value.code == "card_invalid"


def test_describe_skill_is_the_cli_describe(bundle: Bundle, signed: Signed) -> None:
    cli = json.loads(run_cli("describe", signed.bundle, SKILL, "--trust", signed.jwk).stdout)
    assert bundle.describe_skill(SKILL) == cli
    assert bundle.interface(SKILL) == cli["result"]["interface"]
    assert bundle.interface("nope") is None
    with pytest.raises(InterfaceError) as e:
        bundle.describe_skill("nope")
    assert e.value.code == "skill_not_advertised"


def test_valid_invocation_returns_the_callers_arguments(bundle: Bundle, example_request: dict) -> None:
    checked = bundle.check_request(example_request)
    assert isinstance(checked, Invoke)
    assert checked == Invoke(SKILL, example_request["arguments"])
    assert checked.arguments is example_request["arguments"]  # not a copy
    match checked:
        case Invoke(skill_id, arguments):
            assert skill_id == SKILL and arguments["resource_id"] == "network-resource-123"
        case _:
            pytest.fail("not an Invoke")


def test_describe_request(bundle: Bundle) -> None:
    checked = bundle.check_request({"skill": "describe_skill", "arguments": {"skill_id": SKILL}})
    assert checked == Describe(SKILL)
    with pytest.raises(InterfaceError) as e:
        bundle.check_request({"skill": "describe_skill", "arguments": {"skill_id": SKILL, "version": "1.0"}})
    assert (e.value.code, e.value.task_state) == ("input_invalid", "TASK_STATE_REJECTED")


def test_request_errors_are_the_drafts(bundle: Bundle, example_request: dict) -> None:
    stale = dict(example_request, interface_digest="sha256:" + "0" * 64)
    with pytest.raises(InterfaceError) as e:
        bundle.check_request(stale)
    assert e.value.code == "interface_mismatch"
    assert e.value.task_state == "TASK_STATE_REJECTED"
    assert e.value.to_dict()["error"]["code"] == "interface_mismatch"

    invalid = copy.deepcopy(example_request)
    del invalid["arguments"]["condition"]["unit"]
    with pytest.raises(InterfaceError) as e:
        bundle.check_request(invalid)
    assert (e.value.code, e.value.task_state) == ("input_invalid", "TASK_STATE_REJECTED")
    assert e.value.details[0]["instance_path"] == "/condition"
    assert e.value.details[0]["keyword"] == "required"
    # The same error object as the CLI's `validate`.
    assert set(e.value.to_dict()) == {"error"}

    with pytest.raises(InterfaceError) as e:
        bundle.check_request({"skill": "unknown_skill"})
    assert e.value.code == "skill_not_advertised"


def test_cli_validate_agrees(bundle: Bundle, signed: Signed, example_request: dict) -> None:
    invalid = copy.deepcopy(example_request)
    invalid["arguments"]["condition"]["operator"] = "between"
    path = signed.dir / "invalid-request.json"
    path.write_text(json.dumps(invalid))
    proc = run_cli("validate", signed.bundle, "--trust", signed.jwk, "--request", path, check=False)
    assert proc.returncode == 1
    with pytest.raises(InterfaceError) as e:
        bundle.check_request(invalid)
    assert e.value.to_dict() == json.loads(proc.stdout)


def _variants(request: dict) -> list[dict]:
    """Requests of every class check_request tells apart: valid, not I-JSON, not a request
    object, stale, extra members, describe_skill, and arguments wrong in each keyword the
    input_schema has (one fault, several, nested, typed)."""

    def args(**changes: object) -> dict:
        a = copy.deepcopy(request["arguments"])
        for path, value in changes.items():
            target = a
            *parents, last = path.split("__")
            for p in parents:
                target = target[p]
            if value is _DELETE:
                del target[last]
            else:
                target[last] = value
        return dict(request, arguments=a)

    return [
        request,
        args(condition__threshold=80.0),
        args(condition__threshold=-0.5),
        args(condition__threshold="high"),
        args(condition__threshold=None),
        args(condition__threshold=True),
        args(condition__operator="between"),
        args(condition__unit=_DELETE),
        args(condition__extra=1, condition__unit=_DELETE),
        args(resource_id=["a", ("b", 1)], condition=[1, {"x": None}]),
        args(unexpected={"deep": [1, 2, {"k": "v"}]}),
        dict(request, arguments=[]),
        dict(request, arguments="x"),
        {k: v for k, v in request.items() if k != "arguments"},
        dict(request, extra=1),
        dict(request, interface_digest="sha256:" + "1" * 64, extra=1),
        dict(request, skill_version=1.0),
        dict(request, skill_version="1.00"),
        dict(request, skill_version="01.0"),
        dict(request, skill_version="1.0 "),
        # Member names made at run time (not the interned literals) and a name that has
        # no UTF-8 form, next to the request's own members.
        {"".join(("sk", "ill")) if k == "skill" else k: v for k, v in request.items()},
        {**request, "".join(("argu", "ments")): {}},
        {"\ud800": 1, **request},
        {k: v for k, v in request.items() if k != "skill_version"},
        dict(request, skill=7),
        {"skill": "unknown_skill", "arguments": {}},
        {"skill": "describe_skill", "arguments": {"skill_id": SKILL}},
        {"skill": "describe_skill", "arguments": {"skill_id": "describe_skill"}},
        {"skill": "describe_skill", "arguments": {"skill_id": 1}},
        {"skill": "describe_skill", "arguments": {}},
        {"skill": "describe_skill", "skill_version": "1.0", "arguments": {"skill_id": SKILL}},
        {"skill": "describe_skill"},
        args(condition__threshold=math.nan),
        args(condition__threshold=2**53),
        args(resource_id="\ud800"),
        dict(request, extra=math.inf),
        [request],
        "request",
    ]


_DELETE = object()


def test_check_request_judges_as_the_request_check_on_json(bundle: Bundle, example_request: dict) -> None:
    # check_request validates the caller's objects in place; route_message converts a
    # Part's data to JSON and checks that. Both must come to the same verdict and the
    # same error object, to the byte, for every class of request.
    for request in _variants(example_request):
        try:
            checked = bundle.check_request(request)
        except InterfaceError as e:
            ours = ("reject", e.to_dict())
        else:
            ours = ("describe", checked.skill_id) if isinstance(checked, Describe) else ("invoke", checked.skill_id)
        kind, payload = bundle.route_message([request], activated=True)
        if kind in ("reject", "binding"):
            theirs = ("reject", payload.to_dict())
        else:
            theirs = (kind, payload if kind == "describe" else payload.skill_id)
        assert ours == theirs, json.dumps(request, default=repr)


def test_results_and_records(bundle: Bundle) -> None:
    bundle.check_result(SKILL, RESULT)
    bundle.check_record(SKILL, "resource-observation", RECORD)
    bundle.check_result_object(SKILL, {"skill": SKILL, "result": RESULT})
    with pytest.raises(InterfaceError) as e:
        bundle.check_result(SKILL, dict(RESULT, result="maybe"))
    assert (e.value.code, e.value.task_state) == ("output_invalid", "TASK_STATE_FAILED")
    with pytest.raises(InterfaceError) as e:
        bundle.check_record(SKILL, "resource-observation", {k: v for k, v in RECORD.items() if k != "observed_at"})
    assert e.value.code == "output_invalid"
    with pytest.raises(InterfaceError) as e:
        bundle.check_record(SKILL, "resource-observation", dict(RECORD, observed_at="yesterday"))
    assert e.value.details[0]["keyword"] == "format"
    with pytest.raises(InterfaceError) as e:
        bundle.check_record(SKILL, "no-such-kind", RECORD)
    assert e.value.code == "output_invalid"
    with pytest.raises(InterfaceError) as e:
        bundle.check_result_object(SKILL, RESULT)
    assert e.value.code == "output_invalid"


@pytest.mark.parametrize(
    "bad, pointer",
    [
        (2**53, "/value"),
        (-(2**53), "/value"),
        (2**80, "/value"),
        (math.nan, "/value"),
        (math.inf, "/value"),
        (1e20, "/value"),
    ],
)
def test_numbers_beyond_ijson_are_refused(bundle: Bundle, bad: object, pointer: str) -> None:
    with pytest.raises(InterfaceError) as e:
        bundle.check_record(SKILL, "resource-observation", dict(RECORD, value=bad))
    assert e.value.code == "output_invalid"
    assert e.value.details == [{"instance_path": pointer}]
    if isinstance(bad, int):
        assert str(bad) not in e.value.message  # the value is never echoed


def test_the_largest_safe_integer_passes(bundle: Bundle) -> None:
    bundle.check_record(SKILL, "resource-observation", dict(RECORD, value=2**53 - 1))
    bundle.check_record(SKILL, "resource-observation", dict(RECORD, value=-(2**53 - 1)))


def test_an_integral_float_is_an_integer(bundle: Bundle) -> None:
    """A protobuf `Struct` (the SDK's Data Part) turns 16 into 16.0; draft 2020-12 counts
    16.0 as an integer, so an `integer` member still passes, and the caller's value is
    what comes back."""
    skill = next(s for s in bundle.skills if s["skill_id"] == "trace_network_path")
    arguments = {
        "source": {"address": "192.0.2.10"},
        "destination": {"device": "edge-router-7", "vrf": "mgmt"},
        "protocol": "udp",
        "max_hops": 16.0,
    }
    request = {
        "skill": "trace_network_path",
        "skill_version": skill["skill_version"],
        "interface_digest": skill["interface_digest"],
        "arguments": arguments,
    }
    checked = bundle.check_request(request)
    assert isinstance(checked, skillbundle.Invoke)
    assert checked.arguments == arguments
    with pytest.raises(skillbundle.InterfaceError) as e:
        bundle.check_request(dict(request, arguments=dict(arguments, max_hops=16.5)))
    assert e.value.code == "input_invalid"


def test_non_json_objects_are_type_errors(bundle: Bundle, example_request: dict) -> None:
    with pytest.raises(TypeError, match="member name must be a str"):
        bundle.check_request(dict(example_request, arguments={1: "x"}))
    with pytest.raises(TypeError, match="has no JSON form"):
        bundle.check_result(SKILL, {"result": {1, 2}})
    with pytest.raises(InterfaceError) as e:
        bundle.check_result(SKILL, {"unit": "\ud800"})
    assert e.value.code == "output_invalid"


def test_deep_values_are_a_resource_limit(bundle: Bundle) -> None:
    deep: object = 0
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(InterfaceError) as e:
        bundle.check_result(SKILL, deep)
    assert e.value.code == "resource_limit_exceeded"
    assert e.value.task_state == "TASK_STATE_FAILED"


def test_tampered_bundle_is_refused_with_the_clis_code(signed: Signed) -> None:
    data = bytearray(signed.bundle.read_bytes())
    data[len(data) // 2] ^= 0x55
    tampered = signed.dir / "tampered.tar.gz"
    tampered.write_bytes(bytes(data))
    cli = cli_json("verify", tampered, "--trust", signed.jwk, check=False)
    with pytest.raises(BundleRefused) as e:
        Bundle.open(tampered, trust=[signed.jwk])
    assert e.value.codes == list(dict.fromkeys(f["code"] for f in cli["findings"]))
    assert [f["code"] for f in e.value.findings] == [f["code"] for f in cli["findings"]]


def test_untrusted_and_unsigned(signed: Signed) -> None:
    other = signed.dir / "other"
    run_cli("keygen", "--out", other)
    with pytest.raises(BundleRefused) as e:
        Bundle.open(signed.bundle, trust=[f"{other}.jwk.json"])
    cli = cli_json("verify", signed.bundle, "--trust", f"{other}.jwk.json", check=False)
    assert e.value.codes == ["untrusted_key"] == list(dict.fromkeys(f["code"] for f in cli["findings"]))
    with pytest.raises(BundleRefused):
        Bundle.open(signed.bundle)  # no key, unsigned not allowed
    b = Bundle.open(signed.bundle, allow_unsigned=True)
    assert not b.verified and "NOT VERIFIED" in b.signature


def test_bad_trust_arguments(signed: Signed) -> None:
    with pytest.raises(TypeError):
        Bundle.open(signed.bundle, trust=str(signed.jwk))  # a single key, not a list
    with pytest.raises(OSError):
        Bundle.open(signed.bundle, trust=[signed.dir / "missing.jwk.json"])
    with pytest.raises(ValueError):
        Bundle.open(signed.bundle, trust=[{"kty": "RSA"}])
