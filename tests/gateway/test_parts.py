"""The gateway tests' own parts, without the gateway: each upstream agent answers every
example skill's valid inputs with valid results and records, through both clients on
both bindings, blocking and streaming; each misbehaviour mode does what it says (so that
a gateway test passing means the gateway caught it, not that the upstream behaved); base
requests are echoed; and the call counters count."""

from __future__ import annotations

import pytest

from conftest import SECRET, SKILLS, Schemas, Sent, Upstream, clients, example, label, skill_request


def final_task(client, sent: Sent) -> dict:
    task_id = sent.task_id()
    assert task_id, (label(client), sent)
    got = client.get(task_id)
    assert "task" in got, (label(client), got)
    return got["task"]


@pytest.mark.parametrize("skill", SKILLS)
def test_each_valid_example_is_answered_validly(upstream: Upstream, schemas: Schemas, skill: str) -> None:
    for i, client in enumerate(clients(upstream.url)):
        for name, arguments in example(skill)[i % 2:][:1]:  # the configurations take turns
            before = upstream.calls()
            sent = client.send(data=skill_request(schemas, skill, arguments))
            assert sent.error is None, (label(client), name, sent.error)
            task = final_task(client, sent)
            assert task["status"]["state"] == "TASK_STATE_COMPLETED", (label(client), name, task["status"])
            schemas.assert_valid_artifacts(skill, task["artifacts"])
            assert [a["name"] for a in task["artifacts"]].count(skill) == 1
            after = upstream.calls()
            assert after["skills"].get(skill, 0) == before["skills"].get(skill, 0) + 1


BROKEN = {
    "invalid-result": lambda s, arts: any(a["name"] == s for a in arts),
    "undeclared-record": lambda s, arts: any(a["name"] == "debug-dump" for a in arts),
    "invalid-record": lambda s, arts: any(a["name"] not in (s,) for a in arts),
    "two-results": lambda s, arts: [a["name"] for a in arts].count(s) == 2,
}


@pytest.mark.parametrize("mode", sorted(BROKEN))
def test_each_misbehaviour_delivers_what_it_says(upstream: Upstream, schemas: Schemas, example_arguments: dict,
                                                 mode: str) -> None:
    skill = "evaluate_resource_condition"
    arguments = {**example_arguments, "resource_id": f"misbehave:{mode}"}
    for client in clients(upstream.url):
        sent = client.send(data=skill_request(schemas, skill, arguments))
        task = final_task(client, sent)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", (label(client), task["status"])
        assert BROKEN[mode](skill, task["artifacts"]), (label(client), mode, task["artifacts"])
        if mode == "two-results":
            continue
        with pytest.raises(AssertionError):
            schemas.assert_valid_artifacts(skill, task["artifacts"])


def test_raising_never_completes(upstream: Upstream, schemas: Schemas, example_arguments: dict) -> None:
    """The task fails, or the call answers a protocol error (a2a-sdk's HTTP+JSON binding
    answers 500); the JS SDK puts the exception's text in the failed Task's status, which
    the gateway must not pass on."""
    arguments = {**example_arguments, "resource_id": "misbehave:raise"}
    for client in clients(upstream.url):
        sent = client.send(data=skill_request(schemas, "evaluate_resource_condition", arguments))
        if sent.task_id() is None:
            assert sent.error is not None, (label(client), sent)
            continue
        task = final_task(client, sent)
        assert task["status"]["state"] == "TASK_STATE_FAILED", (label(client), task["status"])
        if upstream.kind == "js":
            assert SECRET in str(task["status"]), (label(client), task["status"])


def test_chunked_results_assemble_to_a_valid_result(upstream: Upstream, schemas: Schemas,
                                                    example_arguments: dict) -> None:
    arguments = {**example_arguments, "resource_id": "misbehave:chunked"}
    for client in clients(upstream.url):
        sent = client.send(data=skill_request(schemas, "evaluate_resource_condition", arguments))
        task = final_task(client, sent)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        schemas.assert_valid_artifacts("evaluate_resource_condition", task["artifacts"])
        if client.stream:
            chunks = [e["artifactUpdate"] for e in sent.events if "artifactUpdate" in e
                      and e["artifactUpdate"]["artifact"]["artifactId"] == "result-1"]
            assert len(chunks) == 2 and chunks[1].get("append") is True, (label(client), chunks)


def test_base_requests_are_echoed_and_counted(upstream: Upstream) -> None:
    for client in clients(upstream.url):
        before = upstream.calls()
        sent = client.send(text="hello there", activate=False)
        assert sent.error is None, (label(client), sent.error)
        message = sent.message()
        assert message is not None, (label(client), sent.events)
        assert message["parts"][0]["text"] == "echo: hello there"
        after = upstream.calls()
        assert after["requests"] > before["requests"] and after["executions"] == before["executions"] + 1


def test_list_tasks_answers_on_both_bindings(upstream: Upstream, schemas: Schemas, example_arguments: dict) -> None:
    for client in clients(upstream.url):
        sent = client.send(data=skill_request(schemas, "evaluate_resource_condition", example_arguments))
        listed = client.list()
        assert "tasks" in listed, (label(client), listed)
        assert sent.task_id() in {t["id"] for t in listed["tasks"]}
