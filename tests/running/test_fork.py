"""Forks: replay under another policy, live with an edited call or an edited (synthetic) result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.coverage import load_oracles, run_script
from harness_world.running import ContextPolicy
from harness_world.running.fork import (
    ForkAttempt,
    ForkBounds,
    ForkError,
    fork,
    fork_depth,
    fork_file,
    save_fork,
)
from tests.fake_openai import fake_openai

TASK = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.reply_and_solve")
ORACLE = load_oracles("helpdesk")[TASK.id]


@pytest.fixture(scope="module")
def world() -> hw.World:
    return hw.load_world("helpdesk")


@pytest.fixture(scope="module")
def passing(world: hw.World) -> hw.Record:
    record = run_script(world, TASK, ORACLE)
    grade = hw.verify(record, world, TASK).grade
    assert grade is not None and grade.passed and len(record.calls) == 3
    return record


class Continuing:
    """Reads what it was shown; finishes the work unless the ticket already looks solved."""

    name = "continuing"

    def settings(self) -> dict[str, Any]:
        return {"kind": "test"}

    def run(self, attempt: hw.Attempt) -> str:
        assert isinstance(attempt, ForkAttempt)
        _, _, last = attempt.shown[-1]
        if last.ok and last.result.get("status") == "solved":
            return "The ticket is already solved; nothing to do."
        attempt.call("add_comment", {"ticket_id": "T-1001", "body": "Fixed.", "public": True})
        attempt.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
        return "Replied and solved."


def test_replay_fork_under_a_budget_below_the_call_count_ends_budget_limit(
    world: hw.World, passing: hw.Record
) -> None:
    tight = hw.AttemptLimits(tool_calls=len(passing.calls) - 1)
    forked = fork(passing, world=world, task=TASK, limits=tight)
    assert forked.outcome.status == "budget_limit"
    assert len(forked.calls) == len(passing.calls) - 1
    assert forked.context.notes["fork_kind"] == "replay" and fork_depth(forked) == 1
    # the same fork under the record's own budgets is the same attempt again
    same = fork(passing, world=world, task=TASK)
    assert same.outcome.status == "completed" and same.calls == passing.calls
    assert same.final_message == passing.final_message
    grade = hw.verify(same, world, TASK).grade
    assert grade is not None and grade.passed


def test_replay_fork_under_fewer_turns_than_recorded_ends_turn_limit(world: hw.World) -> None:
    busy = run_script(world, TASK, lambda ctx: (ctx.declare_usage(turns=8), ORACLE(ctx))[1])
    forked = fork(busy, world=world, task=TASK, limits=hw.AttemptLimits(turns=5))
    assert forked.outcome.status == "turn_limit"


def test_live_fork_with_an_edited_result_is_synthetic_and_never_evidence(
    world: hw.World, passing: hw.Record, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = passing.calls[0]
    invented = {**first.result, "status": "solved"}
    forked = fork(passing, at=0, world=world, task=TASK, result=invented, agent=Continuing())
    assert forked.synthetic and forked.synthetic[0].seq == 1
    assert forked.synthetic[0].shown["status"] == "solved"
    assert forked.final_message.startswith("The ticket is already solved")  # it believed it
    assert forked.calls[0].result["status"] != "solved"  # the real result stays in the record
    checked = hw.verify(forked, world, TASK)
    assert checked.evidence == "ungraded" and checked.grade is None
    assert "synthetic" in checked.reason
    # stripping the mark does not launder it: the digest covers it
    stripped = msgspec.structs.replace(forked, synthetic=msgspec.UNSET)
    assert hw.verify(stripped, world, TASK).evidence == "ungraded"
    # and `verify` on the saved file refuses it as evidence of an attempt
    path = save_fork(forked, tmp_path / "forks")
    assert main(["verify", str(path)]) != 0
    assert "synthetic" in capsys.readouterr().out


def test_live_fork_with_an_edited_call_runs_it_for_real(
    world: hw.World, passing: hw.Record
) -> None:
    # replace the opening read with a read of another ticket; the agent then does the work
    forked = fork(
        passing,
        at=0,
        world=world,
        task=TASK,
        call=("get_ticket", {"ticket_id": "T-1002"}),
        agent=Continuing(),
    )
    assert forked.calls[0].args == {"ticket_id": "T-1002"} and forked.calls[0].ok
    assert not forked.synthetic
    assert forked.context.notes["fork_kind"] == "edited_call"
    checked = hw.verify(forked, world, TASK)
    assert checked.evidence == "verified"  # a real call really made: evidence of this branch
    assert checked.grade is not None and not checked.grade.passed  # T-1001 never read first


def test_forks_are_bounded_and_stored_apart_from_runs(
    world: hw.World, passing: hw.Record, tmp_path: Path
) -> None:
    once = fork(passing, world=world, task=TASK)
    twice = fork(once, world=world, task=TASK)
    assert fork_depth(twice) == 2
    with pytest.raises(ForkError, match="depth 3"):
        fork(twice, world=world, task=TASK)
    with pytest.raises(ForkError, match="needs an agent"):
        fork(passing, at=0, world=world, task=TASK, result={})
    with pytest.raises(ForkError, match="outside"):
        fork(passing, at=9, world=world, task=TASK)
    with pytest.raises(ForkError, match="not both"):
        fork(passing, at=0, world=world, task=TASK, call=("get_ticket", {}), result={})
    bounds = ForkBounds(max_forks=2)
    save_fork(once, tmp_path / "forks", bounds)
    save_fork(once, tmp_path / "forks", bounds)
    with pytest.raises(ForkError, match="already has 2 forks"):
        save_fork(once, tmp_path / "forks", bounds)
    hw.run([TASK], hw.oracle_agent("helpdesk"), out=tmp_path / "run")
    counts = (tmp_path / "run" / "counts.json").read_bytes()
    with pytest.raises(ForkError, match="inside the run directory"):
        save_fork(once, tmp_path / "run" / "forks")
    assert (tmp_path / "run" / "counts.json").read_bytes() == counts


def test_a_fork_of_an_edited_record_is_refused(world: hw.World, passing: hw.Record) -> None:
    data = msgspec.to_builtins(passing)
    data["calls"][0]["result"]["status"] = "closed"
    forged = msgspec.convert(data, hw.Record)
    with pytest.raises(ForkError, match="does not replay at call 1"):
        fork(forged, world=world, task=TASK)


def test_the_openai_agent_continues_a_fork_from_what_it_was_shown(
    world: hw.World, passing: hw.Record
) -> None:
    from harness_world.integrations.openai import OpenAIAgent

    seen: list[list[dict[str, Any]]] = []

    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        seen.append(messages)
        return {"role": "assistant", "content": "Nothing left to do."}

    with fake_openai(brain) as server:
        agent = OpenAIAgent(model="fake-1", base_url=server["base_url"], max_retries=0)
        invented = {**passing.calls[0].result, "status": "solved"}
        forked = fork(passing, at=0, world=world, task=TASK, result=invented, agent=agent)
    history = seen[0]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "tool"]
    assert json.loads(history[3]["content"])["result"]["status"] == "solved"
    assert forked.synthetic and hw.verify(forked, world, TASK).evidence == "ungraded"


def test_fork_command(
    passing: hw.Record, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = hw.save_record(passing, tmp_path / "parent.json")
    code = main(["fork", str(path), "--tool-calls", "2", "--out", str(tmp_path / "f"), "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert code == 0 and shown["outcome"] == "budget_limit" and shown["kind"] == "replay"
    assert Path(shown["fork"]).is_file()
    code = main(["fork", str(path), "--at", "0", "--result", "{}", "--out", str(tmp_path / "f")])
    assert code == 2 and "needs an agent" in capsys.readouterr().err


def test_replay_fork_measures_a_context_policy_without_a_model(world: hw.World) -> None:
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.vip_two_statuses")
    record = run_script(world, task, load_oracles("helpdesk")[task.id])
    policy = ContextPolicy(max_tokens=3000, keep_recent=1)
    measured = fork(record, world=world, task=task, policy=policy)
    unbounded = int(measured.context.notes["prompt_tokens_estimate"])
    bounded = int(measured.context.notes["prompt_tokens_estimate_bounded"])
    assert bounded < unbounded and measured.outcome.status == "completed"
    # a context budget between the two: the trace fits only with the policy
    budget = hw.AttemptLimits(context_tokens=(bounded + unbounded) // 2)
    without = fork(record, world=world, task=task, limits=budget)
    assert without.outcome.status == "budget_limit" and "context budget" in without.outcome.reason
    with_policy = fork(record, world=world, task=task, limits=budget, policy=policy)
    assert with_policy.outcome.status == "completed"
    assert with_policy.calls == record.calls  # the same calls, only what is resent differs


def test_fork_file_stores_the_fork_verifies_it_and_reports_its_measurements(
    passing: hw.Record, tmp_path: Path
) -> None:
    path = hw.save_record(passing, tmp_path / "parent.json")
    policy = ContextPolicy(max_tokens=3000, keep_recent=1)
    summary = fork_file(path, out=tmp_path / "f", budgets={"turns": None}, policy=policy)
    assert summary.kind == "replay" and summary.at == len(passing.calls)
    assert Path(summary.fork).is_file() and summary.fork.startswith(str(tmp_path / "f"))
    assert set(summary.prompt_tokens) >= {"prompt_tokens_estimate"}
    with pytest.raises(ForkError, match="inside the run directory"):
        (tmp_path / "manifest.json").write_text("{}")
        fork_file(path, out=tmp_path / "g")
