"""The OpenAI agent with ``tool_calling="text"``: a model without tool calling, end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.integrations.openai import OpenAIAgent
from harness_world.running import drive, load_manifest
from tests.conftest import requires
from tests.fake_openai import fake_openai, text_brain

pytestmark = [
    pytest.mark.integrations,
    requires("openai", "the OpenAI agent needs the [openai] extra"),
]

FIXTURES = json.loads((Path(__file__).parent / "data" / "text_replies.json").read_text())
RECORDED = {r["id"]: r["text"] for r in FIXTURES["replies"]}


def task(task_id: str) -> hw.Task:
    return {t.id: t for t in hw.load_tasks("helpdesk")}[task_id]


# Reply and solve, the way Qwen2.5-Coder wrote it: a tagged call, a fenced one, a bare one.
REPLY_AND_SOLVE = [
    RECORDED["tagged_after_prose"],
    '```json\n{"name": "add_comment", "arguments": {"ticket_id": "T-1001", '
    '"body": "The outage is fixed.", "public": true}}\n```',
    'Now I will mark it solved.\n{"name": "update_ticket", "arguments": '
    '{"ticket_id": "T-1001", "status": "solved"}}',
    "Replied and solved.",
]


def _run(steps: list[str], task_id: str) -> tuple[hw.Record, list[dict[str, Any]]]:
    with fake_openai(text_brain(steps)) as server:
        agent = OpenAIAgent(model="qwen", base_url=server["base_url"], tool_calling="text")
        record = drive(agent, hw.Attempt(hw.load_world("helpdesk"), task(task_id)))
        return record, list(server["requests"])


def test_calls_written_in_text_are_executed_recorded_and_graded() -> None:
    record, requests = _run(REPLY_AND_SOLVE, "helpdesk.reply_and_solve")
    assert [c.tool for c in record.calls] == ["get_ticket", "add_comment", "update_ticket"]
    assert record.calls[2].args == {"ticket_id": "T-1001", "status": "solved"}
    assert record.final_message == "Replied and solved." and record.usage.turns == 4
    verdict = hw.verify(record, task=task("helpdesk.reply_and_solve"))
    assert verdict.evidence == "verified" and verdict.grade is not None and verdict.grade.passed
    # the tools were offered in the system prompt, not in the API's `tools` parameter
    assert all("tools" not in body for body in requests)
    system = requests[0]["messages"][0]
    assert system["role"] == "system" and '"name": "update_ticket"' in system["content"]
    # results came back as user text, in a shape a chat template without tools accepts
    last = requests[-1]["messages"]
    assert {m["role"] for m in last} == {"system", "user", "assistant"}
    assert last[3]["role"] == "user"
    assert last[3]["content"].startswith('<tool_response name="get_ticket">\n{"ok": true')
    assert last[2]["content"] == REPLY_AND_SOLVE[0]  # the model's own text, unchanged


def test_a_reply_of_unknown_or_malformed_calls_is_a_final_message_and_fails() -> None:
    record, requests = _run([RECORDED["unknown_tool_tagged"]], "helpdesk.reply_and_solve")
    assert record.calls == [] and len(requests) == 1
    assert record.final_message == RECORDED["unknown_tool_tagged"]
    verdict = hw.verify(record, task=task("helpdesk.reply_and_solve"))
    assert verdict.evidence == "verified" and verdict.grade is not None
    assert not verdict.grade.passed


def test_rejected_calls_are_reported_back_beside_the_results() -> None:
    steps = [RECORDED["good_and_unknown"], "There is one ticket."]
    record, requests = _run(steps, "helpdesk.reply_and_solve")
    assert [c.tool for c in record.calls] == ["get_ticket"]
    feedback = requests[1]["messages"][-1]
    assert (
        feedback["role"] == "user"
        and "</tool_response>\nNot run: unknown tool" in (feedback["content"])
    )


def test_the_mode_is_pinned_in_the_revision_and_the_default_is_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness_world.cli import main

    base = ["run", "--world", "helpdesk", "--tasks", "helpdesk.reply_and_solve"]
    base += ["--agent", "openai", "--model", "qwen", "--json"]
    with fake_openai(text_brain(REPLY_AND_SOLVE)) as server:
        argv = [*base, "--base-url", server["base_url"], "--tool-calling", "text"]
        assert main([*argv, "--out", str(tmp_path / "text")]) == 0
    counts = json.loads(capsys.readouterr().out)["counts"]
    assert counts["passed"] + counts["pending"] == 1  # an unreviewed reply is pending
    assert load_manifest(tmp_path / "text").revision.values["agent"]["tool_calling"] == "text"
    native = OpenAIAgent(model="qwen", base_url="http://127.0.0.1:9").settings()
    assert "tool_calling" not in native  # revisions made before the option keep their id
    refused = ["--agent", "anthropic", "--model", "m", "--tool-calling", "text"]
    assert main([*base[:5], *refused]) == 2
    assert "--tool-calling text is for --agent openai" in capsys.readouterr().err
    with pytest.raises(ValueError):
        OpenAIAgent(model="m", base_url="x", tool_calling="xml")  # type: ignore[arg-type]


def test_the_async_client_reads_text_calls_the_same_way(tmp_path: Path) -> None:
    from harness_world.integrations.openai import AsyncOpenAIAgent

    tasks = [task("helpdesk.reply_and_solve")]
    with fake_openai(text_brain(REPLY_AND_SOLVE)) as server:
        config = OpenAIAgent(model="qwen", base_url=server["base_url"], tool_calling="text")
        sequential = hw.run(tasks, config, samples=2, out=tmp_path / "seq")
        concurrent = hw.run(
            tasks,
            AsyncOpenAIAgent(config),
            samples=2,
            out=tmp_path / "async",
            executor=hw.Concurrent(2),
        )
    assert sequential.revision == concurrent.revision
    assert sequential.counts.passed + sequential.counts.pending == 2
    assert concurrent.counts.passed + concurrent.counts.pending == 2
