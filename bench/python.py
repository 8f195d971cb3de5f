#!/usr/bin/env python3
"""bench/python.py: `Bundle.check_request` against jsonschema-rs (the Python binding of the
very validator crate skillbundle uses), fastjsonschema and python-jsonschema, on the same
schemas and requests, interleaved in one process.

  scripts/bench-env && target/py-venv/bin/python bench/python.py [--seconds S] [--rounds R]

Workloads (one bundle built for the occasion: the example workspace plus one skill,
`bench_bulk`, whose input is an array of records with a pattern, an enum, a date-time
format, numbers and tags):
  small      the draft's worked example (evaluate_resource_condition), valid
  50 KB      a bench_bulk request of about 50 KB, valid
  invalid    the worked example with a threshold of the wrong type: check_request raises
             InterfaceError carrying the draft's error object; the peer row is
             jsonschema-rs `iter_errors` turned into a list of dicts of the same members
  mismatch   the worked example with a stale interface_digest (validates nothing)
For each workload, every implementation is measured in each of R rounds (default 5) of
about S seconds (default 0.5), rounds interleaved so a change in machine load hits all
alike; the table gives the median calls per second and per-call microseconds. The peers
validate only the arguments against the input schema; check_request also walks the whole
request under the I-JSON rules, checks skill, version and digest, and builds the Invoke. Formats are asserted by all (fastjsonschema
has no draft 2020-12: the schema is given to it without `$schema`).
Also: `check_result` on the worked example's output, and the wall time of `Bundle.open`.
The bundle is built with the CLI (target/release/skillbundle, else target/debug/).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fastjsonschema
import jsonschema
import jsonschema_rs
import skillbundle

ROOT = Path(__file__).resolve().parents[1]
SKILL = "evaluate_resource_condition"
BULK = "bench_bulk"

BULK_SKILL_YAML = """\
skill_id: bench_bulk
skill_version: "1.0"
card: {name: Bench bulk, description: Takes a list of observations (benchmark only).}
input:  {file: schemas/input.json,  schema_uri: "urn:example:bench-bulk:input:1.0",  version: "1.0"}
output: {file: schemas/output.json, schema_uri: "urn:example:bench-bulk:output:1.0", version: "1.0"}
interaction: {supported_response_modes: [sync], cancellable: false}
authority: {default_mode: observe_only, approval_may_be_required: false}
"""
BULK_INPUT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "batch_id": {"type": "string", "pattern": "^[a-z0-9-]{1,40}$"},
        "observations": {
            "type": "array",
            "maxItems": 10000,
            "items": {
                "type": "object",
                "properties": {
                    "resource_id": {"type": "string", "pattern": "^[a-z][a-z0-9-]{0,62}$"},
                    "metric": {"enum": ["utilization", "latency", "loss", "errors"]},
                    "value": {"type": "number", "minimum": 0},
                    "samples": {"type": "integer", "minimum": 1},
                    "observed_at": {"type": "string", "format": "date-time"},
                    "tags": {"type": "array", "items": {"type": "string", "maxLength": 32}, "maxItems": 8},
                },
                "required": ["resource_id", "metric", "value", "observed_at"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["batch_id", "observations"],
    "additionalProperties": False,
}
BULK_OUTPUT = {"type": "object", "properties": {"accepted": {"type": "integer"}}, "required": ["accepted"]}


def observation(i: int) -> dict:
    return {
        "resource_id": f"router-{i:05d}",
        "metric": ["utilization", "latency", "loss", "errors"][i % 4],
        "value": i * 0.5,
        "samples": 1 + i % 7,
        "observed_at": f"2026-08-11T12:{i % 60:02d}:{(i * 7) % 60:02d}Z",
        "tags": ["core", "edge"][: 1 + i % 2],
    }


def rate_once(fn, seconds: float, n: int) -> float:
    count = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(n):
            fn()
        count += n
    return count / (time.perf_counter() - start)


def batch_size(fn, seconds: float) -> int:
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start > seconds / 20:
            return n
        n *= 2


def timed(fn, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def raises(fn, exc):
    def call():
        try:
            fn()
        except exc:
            return
        raise AssertionError("expected a refusal")

    return call


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bin", default=None, help="the skillbundle binary that builds the bundle")
    args = parser.parse_args()
    if args.bin is None:
        built = [p for p in (ROOT / "target" / "release" / "skillbundle", ROOT / "target" / "debug" / "skillbundle") if p.exists()]
        if not built:
            subprocess.run(["cargo", "build", "--locked", "--quiet", "--bin", "skillbundle"], cwd=ROOT, check=True)
        args.bin = str(built[0] if built else ROOT / "target" / "debug" / "skillbundle")
    load_start = os.getloadavg()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([args.bin, "keygen", "--out", tmp / "k"], check=True, capture_output=True)
        ws = tmp / "ws"
        shutil.copytree(ROOT / "example-skills", ws, ignore=shutil.ignore_patterns("dist", "skillbundle.lock"))
        bulk = ws / "skills" / BULK
        (bulk / "schemas").mkdir(parents=True)
        (bulk / "skill.yaml").write_text(BULK_SKILL_YAML)
        (bulk / "schemas" / "input.json").write_text(json.dumps(BULK_INPUT, indent=2))
        (bulk / "schemas" / "output.json").write_text(json.dumps(BULK_OUTPUT, indent=2))
        subprocess.run([args.bin, "build", ws, "--out", tmp / "dist", "--sign-key", tmp / "k.key"], check=True, capture_output=True)
        (path,) = (tmp / "dist").glob("*.tar.gz")
        trust = [tmp / "k.jwk.json"]
        bundle = skillbundle.Bundle.open(path, trust=trust)
        binding = {s["skill_id"]: s for s in bundle.skills}

        small = json.loads((ROOT / "example-skills" / "requests" / "evaluate.json").read_text())
        observations = []
        request_bulk = {"skill": BULK, "skill_version": "1.0", "interface_digest": binding[BULK]["interface_digest"],
                        "arguments": {"batch_id": "batch-1", "observations": observations}}
        while len(json.dumps(request_bulk)) < 50_000:
            observations.append(observation(len(observations)))
        invalid = json.loads(json.dumps(small))
        invalid["arguments"]["condition"]["threshold"] = "high"
        mismatch = dict(small, interface_digest="sha256:" + "1" * 64)

        peers = {}
        for skill, request in ((SKILL, small), (BULK, request_bulk)):
            schema = bundle.interface(skill)["input_schema"]["resolution"]["schema"]
            rs = jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
            fast = fastjsonschema.compile({k: v for k, v in schema.items() if k != "$schema"})
            py = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
            peers[skill] = (rs, fast, py)
            assert isinstance(bundle.check_request(request), skillbundle.Invoke)
            rs.validate(request["arguments"])
            fast(request["arguments"])
            py.validate(request["arguments"])

        def cases(name, request, skill):
            rs, fast, py = peers[skill]
            a = request["arguments"]
            return [
                (name, "check_request", lambda: bundle.check_request(request)),
                (name, "jsonschema-rs validate", lambda: rs.validate(a)),
                (name, "jsonschema-rs is_valid", lambda: rs.is_valid(a)),
                (name, "fastjsonschema", lambda: fast(a)),
                (name, "python-jsonschema", lambda: py.validate(a)),
            ]

        rs_small = peers[SKILL][0]

        def rs_error_object():
            errors = [{"instance_path": "/" + "/".join(map(str, e.instance_path)),
                       "schema_path": "/" + "/".join(map(str, e.schema_path)),
                       "keyword": e.kind.__class__.__name__} for e in rs_small.iter_errors(invalid["arguments"])]
            assert errors
            return {"error": {"code": "input_invalid", "message": errors and "invalid", "details": errors}}

        table = (
            cases("small (worked example)", small, SKILL)
            + cases(f"{len(json.dumps(request_bulk)) // 1000} KB ({len(observations)} records)", request_bulk, BULK)
            + [
                ("invalid (error object)", "check_request", raises(lambda: bundle.check_request(invalid), skillbundle.InterfaceError)),
                ("invalid (error object)", "jsonschema-rs iter_errors + dict", rs_error_object),
                ("interface_mismatch", "check_request", raises(lambda: bundle.check_request(mismatch), skillbundle.InterfaceError)),
                ("check_result", "check_result", lambda: bundle.check_result(SKILL, {"result": "condition_not_met", "observed_value": 42, "unit": "percent", "supporting_record_refs": ["observation-7"]})),
            ]
        )
        sizes = [batch_size(fn, args.seconds) for _, _, fn in table]
        rates: list[list[float]] = [[] for _ in table]
        for _ in range(args.rounds):
            for i, (_, _, fn) in enumerate(table):
                rates[i].append(rate_once(fn, args.seconds, sizes[i]))
        medians = [statistics.median(r) for r in rates]
        open_s = timed(lambda: skillbundle.Bundle.open(path, trust=trust))

    load_end = os.getloadavg()
    print(f"skillbundle {skillbundle.__version__}; jsonschema-rs {importlib.metadata.version('jsonschema-rs')}, "
          f"fastjsonschema {importlib.metadata.version('fastjsonschema')}, python-jsonschema {importlib.metadata.version('jsonschema')}; "
          f"Python {platform.python_version()}, {os.cpu_count()} cores; load average (1, 5, 15 min) "
          f"{' '.join(f'{x:.2f}' for x in load_start)} at start, {' '.join(f'{x:.2f}' for x in load_end)} at end; "
          f"medians of {args.rounds} interleaved rounds of {args.seconds} s")
    print()
    print("| workload | implementation | calls/s | µs/call | check_request ÷ this (throughput) |")
    print("|---|---|---:|---:|---:|")
    ours = {}
    for (workload, impl, _), r in zip(table, medians):
        if impl in ("check_request", "check_result"):
            ours[workload] = r
    for (workload, impl, _), r in zip(table, medians):
        ratio = "" if impl in ("check_request", "check_result") or workload not in ours else f"{ours[workload] / r:.2f} ×"
        print(f"| {workload} | {impl} | {r:,.0f} | {1e6 / r:.2f} | {ratio} |")
    print()
    print(f"`Bundle.open` ({len(binding)} skills, signed): {open_s * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
