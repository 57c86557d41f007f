"""Queue time: how long an attempt waited before it opened, kept as context, never evidence."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis.queue import queue_line, queue_times
from harness_world.cli import main
from harness_world.engine.world import load_world
from harness_world.evidence.record import load_record, record_digest
from harness_world.running.attempt import AttemptLimits
from harness_world.running.reader import RunReader
from harness_world.running.reference_agents import reference_agent
from harness_world.running.rundir import record_path
from harness_world.running.units import Unit, open_attempt

TASK = next(t for t in hw.load_tasks("payments") if t.id == "payments.refund_timeout")


def _unit(scheduled: float, out: Path) -> Unit:
    return Unit(
        agent=reference_agent("payments", "oracle"),
        world="payments",
        size="small",
        task=TASK,
        sample=0,
        seed=0,
        revision="r",
        limits=AttemptLimits(),
        workers=1,
        out=out,
        try_number=0,
        retries=0,
        scheduled=scheduled,
    )


def test_an_attempt_counts_its_wait_from_when_it_was_scheduled(tmp_path: Path) -> None:
    world = load_world("payments")
    _, waited = open_attempt(_unit(time.time() - 30.0, tmp_path), world)
    assert waited.queue_s >= 30.0
    _, unknown = open_attempt(_unit(0.0, tmp_path), world)  # not scheduled by a run
    assert unknown.queue_s == 0.0
    _, skewed = open_attempt(_unit(time.time() + 3600.0, tmp_path), world)  # another clock
    assert skewed.queue_s == 0.0


def test_a_run_records_queue_time_as_context_outside_the_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    hw.run([TASK], reference_agent("payments", "oracle"), samples=3, out=out)
    records = [load_record(record_path(out, TASK.id, s)) for s in range(3)]
    assert all(r.context.queue_s > 0 for r in records)
    for r in records:  # a different wait is the same evidence
        moved = msgspec.structs.replace(r, context=msgspec.structs.replace(r.context, queue_s=99.0))
        assert record_digest(moved) == r.digest
    slots = RunReader.of([TASK]).read(out).slots
    assert [s.queue_s for s in slots] == [r.context.queue_s for r in records]
    times = queue_times(slots)
    assert times is not None and times.attempts == 3 and 0 < times.p50_s <= times.p95_s
    assert main(["report", str(out), "--full"]) == 0  # queue times are on the full page
    assert queue_line(slots) in capsys.readouterr().out
    assert queue_times([msgspec.structs.replace(s, queue_s=0.0) for s in slots]) is None
