#!/usr/bin/env python3
"""bench/python.py: the Python package against python-jsonschema, on the draft's worked
example (example-skills, skill evaluate_resource_condition).

  scripts/python-env && target/py-venv/bin/python bench/python.py [--seconds S]

Measures, in this process, medians of 5 rounds of about S seconds each (default 1):
  check_request   Bundle.check_request on the worked-example request: strict conversion
                  of the request, skill/version/digest checks, arguments validated
                  against input_schema with format assertion
  jsonschema      python-jsonschema Draft202012Validator with FORMAT_CHECKER, validate()
                  of the same arguments against the same input schema (nothing else)
  check_result    Bundle.check_result on the worked-example output
and the wall time of Bundle.open against `skillbundle verify` (release binary, a process
per run) on a bundle signed for the occasion. Prints a Markdown table.
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

import jsonschema
import skillbundle

ROOT = Path(__file__).resolve().parents[1]
SKILL = "evaluate_resource_condition"


def rate(fn, seconds: float) -> float:
    """Calls per second of fn(), median of 5 rounds."""
    n = 1
    while True:  # calibrate a batch of about 1/20 of a round
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start > seconds / 20:
            break
        n *= 2
    rounds = []
    for _ in range(5):
        count = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(n):
                fn()
            count += n
        rounds.append(count / (time.perf_counter() - start))
    return statistics.median(rounds)


def timed(fn, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "skillbundle"))
    args = parser.parse_args()
    if not Path(args.bin).exists():
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--bin", "skillbundle"], cwd=ROOT, check=True)

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([args.bin, "keygen", "--out", tmp / "k"], check=True, capture_output=True)
        shutil.copytree(ROOT / "example-skills", tmp / "ws", ignore=shutil.ignore_patterns("dist"))
        subprocess.run([args.bin, "build", tmp / "ws", "--out", tmp / "dist", "--sign-key", tmp / "k.key"], check=True, capture_output=True)
        (path,) = (tmp / "dist").glob("*.tar.gz")
        trust = [tmp / "k.jwk.json"]

        bundle = skillbundle.Bundle.open(path, trust=trust)
        request = json.loads((ROOT / "example-skills" / "requests" / "evaluate.json").read_text())
        schema = bundle.interface(SKILL)["input_schema"]["resolution"]["schema"]
        output = {"result": "condition_not_met", "observed_value": 42, "unit": "percent", "supporting_record_refs": ["observation-7"]}
        validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
        arguments = request["arguments"]
        assert isinstance(bundle.check_request(request), skillbundle.Invoke)
        validator.validate(arguments)

        ours = rate(lambda: bundle.check_request(request), args.seconds)
        theirs = rate(lambda: validator.validate(arguments), args.seconds)
        result = rate(lambda: bundle.check_result(SKILL, output), args.seconds)
        open_s = timed(lambda: skillbundle.Bundle.open(path, trust=trust))
        verify_s = timed(lambda: subprocess.run([args.bin, "verify", path, "--trust", trust[0]], check=True, capture_output=True))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"skillbundle {skillbundle.__version__}, python-jsonschema {importlib.metadata.version('jsonschema')}, "
          f"Python {platform.python_version()}, {os.cpu_count()} cores, 1-minute load average {load:.2f}")
    print()
    print("| measurement | result |")
    print("|---|---:|")
    print(f"| `check_request` (worked example), requests/s | {ours:,.0f} |")
    print(f"| python-jsonschema `Draft202012Validator` + format, validations/s | {theirs:,.0f} |")
    print(f"| ratio | **{ours / theirs:.1f} ×** |")
    print(f"| `check_result` (worked example), results/s | {result:,.0f} |")
    print(f"| `Bundle.open` (3 skills, signed), ms | {open_s * 1000:.2f} |")
    print(f"| `skillbundle verify` (same bundle, own process), ms | {verify_s * 1000:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
