"""The OpenAI agent against a loopback fake that makes the seed's three recurring mistakes.

Narrow search then stop, one status of two, a skipped step: each failure must carry the
advisory that names it, in a run directory read like any other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.analysis import AdviceObserver, advise_scan, reach
from harness_world.cli import main
from harness_world.integrations.openai import OpenAIAgent
from harness_world.running.reader import RunReader
from tests.fake_openai import fake_openai, tool_call

pytestmark = pytest.mark.integrations

NAMES = {
    "helpdesk.escalate_outage": "unfollowed_page",  # narrow search, then stop
    "helpdesk.vip_two_statuses": "partial_filter",  # one status of two
    "helpdesk.reply_and_solve": "skipped_step",  # the requested reply omitted
}


def _last_result(messages: list[dict[str, Any]]) -> Any:
    tools = [m for m in messages if m["role"] == "tool"]
    return json.loads(tools[-1]["content"])["result"] if tools else None


def _calls(turn: int, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    made = [tool_call(turn * 10 + i, name, args) for i, (name, args) in enumerate(calls)]
    return {"role": "assistant", "content": None, "tool_calls": made}


def mistaken_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A model that reads its results but makes one recurring mistake per task."""
    instruction = next(m["content"] for m in messages if m["role"] == "user")
    turn = sum(1 for m in messages if m["role"] == "assistant")
    last = _last_result(messages)
    if "tagged `outage`" in instruction:
        if turn == 0:  # a page of one: total and next_offset say there are more
            return _calls(0, [("list_tickets", {"status": "open", "tag": "outage", "limit": 1})])
        if turn == 1:
            first = last["tickets"][0]["id"]
            return _calls(1, [("update_ticket", {"ticket_id": first, "priority": "urgent"})])
        return {"role": "assistant", "content": "The outage ticket is urgent now."}
    if "vip" in instruction:
        if turn == 0:  # the filter takes one status: only `new` is ever listed
            return _calls(0, [("list_tickets", {"status": "new", "tag": "vip", "limit": 100})])
        if turn == 1:
            ids = [t["id"] for t in last["tickets"] if t["priority"] != "high"]
            return _calls(1, [("update_ticket", {"ticket_id": i, "priority": "high"}) for i in ids])
        return {"role": "assistant", "content": "VIP tickets are high priority."}
    if turn == 0:  # reply_and_solve: read, solve, and never reply
        return _calls(0, [("get_ticket", {"ticket_id": "T-1001"})])
    if turn == 1:
        return _calls(1, [("update_ticket", {"ticket_id": "T-1001", "status": "solved"})])
    return {"role": "assistant", "content": "Ticket T-1001 is solved."}


def test_each_recurring_mistake_carries_the_advisory_that_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id in NAMES]
    with fake_openai(mistaken_model) as server:
        agent = OpenAIAgent(model="fake-mistaken", base_url=server["base_url"])
        result = hw.run(tasks, agent, out=tmp_path / "run")
    assert result.counts.failed == 3 and result.counts.by_outcome == {"completed": 3}
    observer = AdviceObserver({t.id: t for t in tasks})
    scan = RunReader.of(tasks).read(tmp_path / "run", observe=observer)
    advice = {a.task_id: a for a in advise_scan(scan, observer.advised)}
    for task_id, name in NAMES.items():
        carried = {x.name for x in advice[task_id].advisories}
        assert name in carried, (task_id, carried)
        assert advice[task_id].passed is False
    measured = reach((a.passed, a.advisories) for a in advice.values())
    assert (measured.explained, measured.failed) == (3, 3)
    # the command shows the same: advisories, reach, and every failure attributed to the agent
    assert main(["diagnose", str(tmp_path / "run")]) == 0
    shown = capsys.readouterr().out
    assert "Advisories explained 3 of 3 failed attempts" in shown
    assert all(name in shown for name in NAMES.values())
    assert "agent 3 (0 reviewed)" in shown
    # and `report` shows the reach and the attribution after its figures
    assert main(["report", str(tmp_path / "run")]) == 0
    shown = capsys.readouterr().out
    assert "Advisories explained 3 of 3 failed attempts; 0 of 0 passed" in shown
    assert "helpdesk.vip_two_statuses sample 0: partial_filter" in shown
    assert "Attribution of 3 attempts that did not pass: agent 3 (0 reviewed)" in shown
