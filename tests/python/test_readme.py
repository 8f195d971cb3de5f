"""The README's "Loading a bundle in a Python agent" example, run as written."""

from __future__ import annotations

import re
import runpy
import shutil

import httpx
import pytest


from conftest import ROOT, Signed
from test_a2a_server import ToyEvaluator


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Loading a bundle in a Python agent\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the section has one complete Python example"
    return blocks[0]


async def test_readme_example_runs(signed: Signed, tmp_path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    shutil.copy(signed.bundle, tmp_path / "example-network-skills-0.1.0.tar.gz")
    (tmp_path / "keys").mkdir()
    shutil.copy(signed.jwk, tmp_path / "keys" / "vendor.jwk.json")
    (tmp_path / "example.py").write_text(readme_example())
    monkeypatch.chdir(tmp_path)
    names = runpy.run_path(str(tmp_path / "example.py"), run_name="readme_example")
    out = capsys.readouterr().out
    assert "evaluate_resource_condition" in out
    assert names["result"]["result"] == "condition_not_met"

    app = names["serve"](ToyEvaluator())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agent") as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
    assert card["capabilities"]["extensions"][0]["uri"] == names["skillbundle"].EXTENSION_URI
