"""Shared fixtures of the Python tests: the CLI binary, and a signed bundle of the
example workspace built by it (session-scoped, in a temporary directory).

Run through `cargo test --locked` (tests/parts/python.rs), which sets SKILLBUNDLE_BIN and
SKILLBUNDLE_ROOT; run directly, they default to target/debug/skillbundle and the
repository this file is in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("SKILLBUNDLE_ROOT", Path(__file__).resolve().parents[2]))
BIN = Path(os.environ.get("SKILLBUNDLE_BIN", ROOT / "target" / "debug" / "skillbundle"))


def run_cli(*args: str | os.PathLike[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the skillbundle binary; with check, fail the test on a non-zero exit."""
    if not BIN.exists():
        pytest.fail(f"the skillbundle binary is missing at {BIN}: run `cargo build` or set SKILLBUNDLE_BIN")
    proc = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True)
    if check and proc.returncode != 0:
        pytest.fail(f"skillbundle {' '.join(map(str, args))} exited {proc.returncode}:\n{proc.stderr}")
    return proc


def cli_json(*args: str | os.PathLike[str], check: bool = True) -> dict:
    return json.loads(run_cli(*args, "--format", "json", check=check).stdout)


@dataclass(frozen=True)
class Signed:
    """A signed bundle of the example workspace and its keys."""

    bundle: Path
    jwk: Path
    pem: Path
    dir: Path

    def jwk_dict(self) -> dict:
        return json.loads(self.jwk.read_text())


@pytest.fixture(scope="session")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Signed:
    d = tmp_path_factory.mktemp("bundle")
    run_cli("keygen", "--out", d / "vendor", "--pem")
    shutil.copytree(ROOT / "example-skills", d / "ws", ignore=shutil.ignore_patterns("dist"))
    run_cli("build", d / "ws", "--out", d / "dist", "--sign-key", d / "vendor.key")
    (bundle,) = (d / "dist").glob("*.tar.gz")
    return Signed(bundle=bundle, jwk=d / "vendor.jwk.json", pem=d / "vendor.pub.pem", dir=d)


@pytest.fixture(scope="session")
def example_request() -> dict:
    """The draft's worked-example invocation (example-skills/requests/evaluate.json)."""
    return json.loads((ROOT / "example-skills" / "requests" / "evaluate.json").read_text())
