"""Units: one attempt of a run as a self-contained piece of work, and how one is performed.

A `Unit` carries everything a worker process (or a Ray task) needs to execute one attempt of
one slot. Performing it executes, replays and grades the attempt where it runs; its record,
encoded once, goes to the run's commit (`harness_world.running.commit`), and it is counted (and
reported, `Tally`) only once its batch is durable. How many units run at once, and where, is
the executor's business (`harness_world.running.executors`).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from harness_world.engine.world import World, load_world
from harness_world.evidence.binding import save_try
from harness_world.evidence.record import Record, RecordContext
from harness_world.grading.task import Task
from harness_world.grading.verifier import SlotResult, judge_record
from harness_world.running.agents import Agent, drive, end_by
from harness_world.running.attempt import Attempt, AttemptLimits
from harness_world.running.commit import Finished, finished
from harness_world.running.rundir import record_path, sample_seed

__all__ = [
    "RunProgress",
    "Tally",
    "Unit",
    "drive_async",
    "execute",
    "fresh_start",
    "is_async_agent",
    "open_attempt",
    "perform",
    "settle",
]


@attrs.frozen(slots=True)
class RunProgress:
    """A progress report: done out of total, with pass, fail and ungraded counts so far."""

    done: int
    total: int
    passed: int
    failed: int
    ungraded: int
    task_id: str = ""  # the task whose attempt just finished (live progress)


@attrs.frozen(slots=True)
class Unit:
    """One execution of one attempt, self-contained so a worker process can run it.

    ``scheduled`` is when the run scheduled it (wall clock, seconds since the epoch; 0: not
    known): the attempt's queue time, until it opens, is measured from it.
    """

    agent: Agent
    world: str
    size: str
    task: Task
    sample: int
    seed: int
    revision: str
    limits: AttemptLimits
    workers: int
    out: Path
    try_number: int
    retries: int
    track: str = "fresh"
    scheduled: float = 0.0


def fresh_start(unit: Unit) -> None:
    """On the fresh track an agent keeping memory (a ``reset()`` method) forgets it first."""
    reset = getattr(unit.agent, "reset", None)
    if unit.track == "fresh" and callable(reset):
        reset()


def open_attempt(unit: Unit, world: World) -> tuple[Attempt, RecordContext]:
    """The attempt of one unit (its slot's seed, sample, revision, limits) and its context.

    The context's queue time is how long the unit waited from being scheduled to this call
    (loading its world included); 0 when its schedule time is not known. On another host it
    is read off another clock: a negative difference (clock skew) counts as 0.
    """
    waited = max(0.0, time.time() - unit.scheduled) if unit.scheduled else 0.0
    attempt = Attempt(
        world,
        unit.task,
        seed=sample_seed(unit.seed, unit.task.id, unit.sample),
        sample=unit.sample,
        revision=unit.revision,
        limits=unit.limits,
    )
    context = RecordContext(
        host=socket.gethostname(),
        pid=os.getpid(),
        workers=unit.workers,
        queue_s=round(waited, 6),
    )
    return attempt, context


def settle(unit: Unit, record: Record, world: World) -> Finished | Path:
    """Judge a unit's record and make it ready for the commit.

    Returns the path of a failed try instead (saved at once) when the infrastructure failed
    and the attempt must be executed again.
    """
    path = record_path(unit.out, unit.task.id, unit.sample)
    if record.outcome.status == "infrastructure" and unit.try_number < unit.retries:
        return save_try(unit.out, record, path, "failed")  # bound: its effects count
    return finished(record, path, lambda sealed: judge_record(sealed, world, unit.task, path))


def is_async_agent(agent: Agent) -> bool:
    """Whether the agent's ``run`` is a coroutine function (``async def run(attempt)``)."""
    return inspect.iscoroutinefunction(getattr(agent, "run", None))


async def drive_async(
    agent: Agent, attempt: Attempt, context: RecordContext | None = None
) -> Record:
    """`drive` for an agent whose ``run`` is ``async``: the same outcomes, the same record."""
    message: Any = ""
    try:
        message = await agent.run(attempt)  # type: ignore[misc]
    except Exception as exc:
        end_by(attempt, exc)
    return attempt.finish(message if isinstance(message, str) else str(message), context)


def execute(unit: Unit) -> tuple[Record, World]:
    """Execute one attempt in the calling process (an async agent on its own event loop).

    Returns its sealed record, not yet judged, and the world it ran in.
    """
    world = load_world(unit.world, size=unit.size)
    attempt, context = open_attempt(unit, world)
    fresh_start(unit)
    if is_async_agent(unit.agent):  # one attempt at a time here: its own event loop
        return asyncio.run(drive_async(unit.agent, attempt, context)), world
    return drive(unit.agent, attempt, context), world


def perform(unit: Unit) -> Finished | Path:
    """Execute, replay and grade one attempt in the calling process (not yet saved)."""
    return settle(unit, *execute(unit))


@attrs.define(slots=True)
class Tally:
    """Counts results as they become durable and reports progress."""

    total: int
    progress: Callable[[RunProgress], None] | None
    results: dict[Path, SlotResult] = attrs.field(factory=dict)
    passed: int = 0
    failed: int = 0
    ungraded: int = 0

    def add(self, path: Path, result: SlotResult) -> None:
        """Count one durable record."""
        self.results[path] = result
        if result.evidence != "verified" or result.passed is None:
            self.ungraded += 1
        elif result.passed:
            self.passed += 1
        else:
            self.failed += 1
        if self.progress is not None:
            self.progress(
                RunProgress(
                    done=len(self.results),
                    total=self.total,
                    passed=self.passed,
                    failed=self.failed,
                    ungraded=self.ungraded,
                    task_id=result.task_id,
                )
            )

    def count(self, durable: Sequence[Finished]) -> None:
        """Count every record of a committed batch (a `GroupCommit`'s ``durable`` callback)."""
        for item in durable:
            self.add(item.path, item.result)
