"""The wall-time budget: an attempt over it ends ``budget_limit``, and its record still verifies."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import attrs
import pytest

import harness_world as hw
from harness_world.analysis.attribution import automatic_source, oracle_check
from harness_world.cli import main
from harness_world.running import load_manifest
from harness_world.running.reader import RunReader

TASK = "helpdesk.reply_and_solve"


def _task() -> hw.Task:
    return {t.id: t for t in hw.load_tasks("helpdesk")}[TASK]


@attrs.define
class FakeClock:
    """A clock that moves only when told to."""

    now: float = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_call_past_the_wall_time_ends_the_attempt(small: hw.World) -> None:
    clock = FakeClock()
    limits = hw.AttemptLimits(wall_time=5)
    attempt = hw.Attempt(small, _task(), limits=limits, clock=clock)
    clock.now += 5  # at the budget, not over it
    attempt.call("get_ticket", {"ticket_id": "T-1001"})
    clock.now += 0.5
    with pytest.raises(hw.AttemptEnded):
        attempt.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    record = attempt.finish("done")
    assert record.outcome.status == "budget_limit"
    assert record.outcome.reason == "wall_time budget of 5 s exceeded"
    assert len(record.calls) == 1 and record.context.latency_s == 5.5
    result = hw.verify(record, world=small, task=_task())
    assert result.evidence == "verified" and result.grade is not None


def test_a_turn_and_a_settled_request_past_the_wall_time_end_it_too(small: hw.World) -> None:
    clock = FakeClock()
    attempt = hw.Attempt(small, _task(), limits=hw.AttemptLimits(wall_time=1), clock=clock)
    reservation = attempt.reserve(0.01)
    clock.now += 2
    with pytest.raises(hw.AttemptEnded):
        attempt.settle(reservation, cost=0.01, input_tokens=10, output_tokens=5)
    record = attempt.finish()
    assert record.outcome.status == "budget_limit" and record.usage.cost == 0.01
    late = hw.Attempt(small, _task(), limits=hw.AttemptLimits(wall_time=1), clock=clock)
    clock.now += 2
    with pytest.raises(hw.AttemptEnded):
        late.begin_turn()
    assert late.finish().outcome.status == "budget_limit"


def test_finishing_past_the_wall_time_is_a_budget_stop_not_a_completion(small: hw.World) -> None:
    clock = FakeClock()
    attempt = hw.Attempt(small, _task(), limits=hw.AttemptLimits(wall_time=1), clock=clock)
    attempt.call("get_ticket", {"ticket_id": "T-1001"})
    clock.now += 3
    assert attempt.finish("done").outcome.status == "budget_limit"
    unlimited = hw.Attempt(small, _task(), clock=clock)
    clock.now += 3
    assert unlimited.finish("done").outcome.status == "completed"


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("inf"), float("nan")])
def test_a_wall_time_budget_is_a_positive_number(seconds: float) -> None:
    with pytest.raises(ValueError, match="wall_time budget must be a positive number"):
        hw.AttemptLimits(wall_time=seconds)


@attrs.frozen
class SleepyAgent:
    """Reads a ticket, sleeps past any small wall-time budget, then tries to write."""

    pause_s: float

    @property
    def name(self) -> str:
        return "sleepy"

    def settings(self) -> dict[str, Any]:
        return {"kind": "sleepy", "pause_s": self.pause_s}

    def run(self, attempt: hw.Attempt) -> str:
        attempt.call("get_ticket", {"ticket_id": "T-1001"})
        time.sleep(self.pause_s)
        attempt.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
        return "done"


def test_a_run_counts_wall_time_stops_and_its_records_verify(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = hw.run([_task()], SleepyAgent(0.05), samples=2, out=out, limits={"wall_time": 0.01})
    assert result.counts.by_outcome == {"budget_limit": 2}
    scan = RunReader.of([_task()]).read(out)
    assert scan.counts.by_outcome == {"budget_limit": 2} and scan.counts.valid == 2
    assert {s.evidence for s in scan.slots} == {"verified"}
    assert {s.outcome_reason for s in scan.slots} == {"wall_time budget of 0.01 s exceeded"}
    assert load_manifest(out).limits == {"wall_time": 0.01}
    record = hw.load_record(scan.slots[0].path)
    assert len(record.calls) == 1  # the write after the pause never ran
    world = hw.load_world("helpdesk")
    limits = hw.AttemptLimits.from_task(_task().budgets, wall_time=0.01)
    source, why = automatic_source(
        scan.slots[0], record, _task(), world, oracle_check(None), limits
    )
    assert source == "agent", why  # the budget it reports was reached: no mis-accounting


def test_run_takes_wall_time_from_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    argv = ["run", "--world", "helpdesk", "--tasks", TASK, "--agent", "oracle"]
    assert main([*argv, "--wall-time", "3600", "--out", str(out), "--quiet"]) == 0
    assert load_manifest(out).limits == {"wall_time": 3600.0}
