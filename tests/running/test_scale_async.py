"""Async agents and concurrency in one process (issue 19)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.coverage import load_oracles, run_script
from harness_world.evidence import RecordContext
from harness_world.running import oracle_agent
from harness_world.running.executors import is_async_agent

TASKS = hw.load_tasks("helpdesk")[:4]


class PlanAgent:
    """Replays each task's oracle calls, awaiting a (tiny) model turn before each."""

    name = "plans"

    def __init__(self, fail_on: str = "") -> None:
        world = hw.load_world("helpdesk")
        oracles = load_oracles("helpdesk")
        self.plans = {
            t.id: [(c.tool, c.args) for c in run_script(world, t, oracles[t.id]).calls]
            for t in TASKS
        }
        self.fail_on = fail_on
        self.in_flight = 0
        self.most_in_flight = 0

    def settings(self) -> dict[str, Any]:
        return {"kind": "test-async", "fail_on": self.fail_on}

    async def run(self, attempt: hw.Attempt) -> str:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            for tool, args in self.plans[attempt.task.id]:
                await asyncio.sleep(0.001 * (1 + attempt.sample % 3))  # finish out of order
                attempt.call(tool, args)
            if attempt.task.id == self.fail_on:
                raise RuntimeError("the model went away")
            return "done"
        finally:
            self.in_flight -= 1


def _records(result: hw.RunResult) -> dict[tuple[str, int], hw.Record]:
    return {
        (s.task_id, s.sample): msgspec.structs.replace(
            hw.load_record(s.path), context=RecordContext()
        )
        for s in result.slots
    }


def test_async_records_are_identical_at_any_concurrency(tmp_path: Path) -> None:
    agent = PlanAgent()
    assert is_async_agent(agent) and not is_async_agent(oracle_agent("helpdesk"))
    one = hw.run(TASKS, agent, samples=3, out=tmp_path / "one", executor=hw.Concurrent(1))
    assert agent.most_in_flight == 1
    many = hw.run(TASKS, agent, samples=3, out=tmp_path / "many", executor=hw.Concurrent(8))
    assert agent.most_in_flight == 8
    assert one.counts == many.counts and many.counts.valid == 12
    assert _records(one) == _records(many)
    for slot in many.slots:  # the files differ only in context
        a = Path(slot.path).read_bytes()
        b = Path(slot.path.replace(str(tmp_path / "many"), str(tmp_path / "one"))).read_bytes()
        assert a.split(b'"context"')[0] == b.split(b'"context"')[0]


def test_a_synchronous_agent_with_concurrency_runs_in_threads_alike(tmp_path: Path) -> None:
    agent = oracle_agent("helpdesk")
    serial = hw.run(TASKS, agent, samples=2, out=tmp_path / "serial")
    threaded = hw.run(TASKS, agent, samples=2, out=tmp_path / "threads", executor=hw.Concurrent(4))
    assert threaded.counts.passed == 8
    assert _records(serial) == _records(threaded)


def test_an_async_agent_failing_is_an_error_outcome(tmp_path: Path) -> None:
    agent = PlanAgent(fail_on=TASKS[1].id)
    result = hw.run(TASKS, agent, out=tmp_path / "r", executor=hw.Concurrent(4))
    outcomes = {s.task_id: (s.outcome, s.outcome_reason) for s in result.slots}
    assert outcomes[TASKS[1].id] == ("error", "RuntimeError: the model went away")
    assert result.counts.by_outcome == {"completed": 3, "error": 1}


def test_an_async_agent_runs_in_worker_processes_too(tmp_path: Path) -> None:
    result = hw.run(TASKS, PlanAgent(), out=tmp_path / "w", executor=hw.Processes(2))
    assert result.counts.valid == 4
    contexts = [hw.load_record(s.path).context for s in result.slots]
    assert {c.workers for c in contexts} == {2} and os.getpid() not in {c.pid for c in contexts}
    alone = hw.run(TASKS, PlanAgent(), out=tmp_path / "s")  # Serial: one event loop, here
    assert {hw.load_record(s.path).context.pid for s in alone.slots} == {os.getpid()}
    assert _records(alone) == _records(result)


def test_concurrency_with_workers_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id, "--out", str(tmp_path / "r")]
    assert main([*argv, "--concurrency", "4", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --workers 2 and --concurrency 4: choose one way to execute")
    assert err.count("\n") == 1  # one usage error, one line
    assert main([*argv, "--concurrency", "0"]) == 2
    assert "--concurrency 0: Concurrent: attempts must be at least 1" in capsys.readouterr().err
    assert main([*argv, "--concurrency", "3", "--json"]) == 0
