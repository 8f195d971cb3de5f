"""The README's "Loading a bundle in a Python agent" example, run as written."""

from __future__ import annotations

import re
import runpy
import shutil

import httpx
import pytest


from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.client import ClientCallContext
from a2a.extensions.common import HTTP_EXTENSION_HEADER
from a2a.helpers.proto_helpers import new_data_part
from a2a.types import Message, Role, SendMessageRequest, TaskState
from skillbundle import EXTENSION_URI
from skillbundle.a2a import proto_value

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

    # The example's own domain code, served as written, answering the worked example
    # through the SDK's client.
    app = names["serve"]()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000") as http:
        card = await A2ACardResolver(http, "http://127.0.0.1:8000").get_agent_card()
        client = await create_client(card, ClientConfig(httpx_client=http, streaming=False))
        message = Message(role=Role.ROLE_USER, message_id="readme-1", parts=[new_data_part(names["request"])])
        message.extensions.append(EXTENSION_URI)
        activate = ClientCallContext(service_parameters={HTTP_EXTENSION_HEADER: EXTENSION_URI})
        [response] = [r async for r in client.send_message(SendMessageRequest(message=message), context=activate)]
    task = response.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
    by_name = {a.name: proto_value(a.parts[0].data) for a in task.artifacts}
    assert by_name["evaluate_resource_condition"]["result"]["result"] == "condition_not_met"
    assert by_name["resource-observation"]["record_id"] == "observation-7"
