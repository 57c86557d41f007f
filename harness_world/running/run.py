"""Runs: every selected task × k samples, each a fresh session with its own seed, saved as it ends.

The run directory's layout and the one pass that judges it live in `harness_world.running.rundir`.
Re-running into the same directory resumes: records already saved are kept, the rest executed;
a changed component refuses to resume and names what changed.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import attrs

from harness_world.engine.world import World, load_world
from harness_world.evidence.binding import append_index, read_index
from harness_world.evidence.record import (
    Record,
    RecordContext,
    RecordError,
    load_record,
    save_record,
)
from harness_world.grading.task import Task
from harness_world.running.agents import Agent, drive
from harness_world.running.attempt import Attempt, AttemptLimits
from harness_world.running.pins import PINS, make_pins
from harness_world.running.revision import Revision, make_revision
from harness_world.running.rundir import (
    RunCounts,
    RunManifest,
    SlotResult,
    judge_record,
    open_run_directory,
    record_path,
    sample_seed,
    scan_run,
    write_json,
)

__all__ = ["RunProgress", "RunResult", "open_external_run", "run", "sample_seed"]


@attrs.frozen(slots=True)
class RunProgress:
    """A progress report: done out of total, with pass, fail and ungraded counts so far."""

    done: int
    total: int
    passed: int
    failed: int
    ungraded: int
    task_id: str = ""  # issue 20: the task whose attempt just finished (live progress)


@attrs.frozen(slots=True)
class RunResult:
    """What `run` returns.

    Attributes:
        out: The run directory.
        revision: The pinned revision.
        counts: What happened to every scheduled attempt, after the run.
        resumed: How many records were already on disk and kept.
        slots: Every scheduled slot as judged after the run (failure reasons, invalid ones).
    """

    out: Path
    revision: Revision
    counts: RunCounts
    resumed: int
    slots: list[SlotResult] = attrs.field(factory=list)


@attrs.frozen(slots=True)
class _Unit:
    """One execution of one attempt, self-contained so a worker process can run it."""

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


def _execute(unit: _Unit, world: World) -> Record:
    attempt = Attempt(
        world,
        unit.task,
        seed=sample_seed(unit.seed, unit.task.id, unit.sample),
        sample=unit.sample,
        revision=unit.revision,
        limits=unit.limits,
    )
    context = RecordContext(host=socket.gethostname(), pid=os.getpid(), workers=unit.workers)
    return drive(unit.agent, attempt, context)


def _perform(unit: _Unit) -> tuple[Path, SlotResult | None]:
    """Execute, save atomically, replay and grade one attempt; all in the calling process.

    Returns the saved path and its result, or a None result when the infrastructure failed
    and the attempt must be executed again (its record is kept as ``<sample>.failed-<n>.json``).
    """
    world = load_world(unit.world, size=unit.size)
    record = _execute(unit, world)
    path = record_path(unit.out, unit.task.id, unit.sample)
    if record.outcome.status == "infrastructure" and unit.try_number < unit.retries:
        failed = path.with_name(f"{unit.sample}.failed-{unit.try_number + 1}.json")
        save_record(record, failed)
        return failed, None
    # Write-ahead: the index line (fsync'd) before the record, so a crash between the two
    # leaves a bound slot without a file (executed again on resume), never an unbound record.
    append_index(unit.out, record)
    save_record(record, path)
    earlier = [
        path.with_name(f"{unit.sample}.failed-{n}.json") for n in range(1, unit.try_number + 1)
    ]
    return path, judge_record(record, world, unit.task, path, retries=earlier)


@attrs.define(slots=True)
class _Tally:
    """Counts results as they arrive and reports progress."""

    total: int
    progress: Callable[[RunProgress], None] | None
    results: dict[Path, SlotResult] = attrs.field(factory=dict)
    passed: int = 0
    failed: int = 0
    ungraded: int = 0

    def add(self, path: Path, result: SlotResult) -> None:
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
                    task_id=result.task_id,  # issue 20
                )
            )


def _execute_serially(units: Sequence[_Unit], tally: _Tally) -> None:
    queue = list(units)
    while queue:
        current = queue.pop(0)
        path, result = _perform(current)
        if result is None:
            queue.insert(0, attrs.evolve(current, try_number=current.try_number + 1))
        else:
            tally.add(path, result)


def _execute_in_processes(units: Sequence[_Unit], workers: int, tally: _Tally) -> None:
    # Workers execute, save, replay and grade; the parent only counts. Fork keeps plug-in
    # modules (oracles, scripts) importable by name in the children.
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(_perform, u): u for u in units}
        while futures:
            ready, _ = concurrent.futures.wait(
                futures, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in ready:
                current = futures.pop(future)
                path, result = future.result()
                if result is None:
                    again = attrs.evolve(current, try_number=current.try_number + 1)
                    futures[pool.submit(_perform, again)] = again
                else:
                    tally.add(path, result)


def _pending_slots(root: Path, tasks: Sequence[Task], samples: int) -> Iterator[tuple[Task, int]]:
    """Scheduled slots without a readable final record bound in the index.

    Resuming skips the others; a record saved but never indexed (a crash between the two) is
    executed again.
    """
    index, _ = read_index(root)
    for task in sorted(tasks, key=lambda t: t.id):
        for sample in range(samples):
            path = record_path(root, task.id, sample)
            entry = index.get((task.id, sample))
            if path.is_file() and entry is not None:
                try:
                    if load_record(path).digest == entry.digest:
                        continue
                except RecordError:
                    pass
            yield task, sample


def _pin(
    tasks: Sequence[Task],
    agent: Agent,
    overrides: Mapping[str, int | float],
    *,
    samples: int,
    seed: int,
    size: str,
) -> tuple[dict[str, World], Revision, RunManifest]:
    """Load the worlds and pin the revision and the manifest of a new run."""
    worlds = {name: load_world(name, size=size) for name in sorted({t.world for t in tasks})}
    revision = make_revision(
        worlds=worlds,
        tasks=tasks,
        agent_settings=agent.settings(),
        budgets=overrides,
        samples=samples,
        seed=seed,
    )
    fresh = RunManifest(
        revision=revision,
        agent=agent.name,
        tasks=sorted(t.id for t in tasks),
        samples=samples,
        seed=seed,
        sizes=dict.fromkeys(worlds, size),
        limits=dict(overrides),
    )
    return worlds, revision, fresh


def _units(
    template: _Unit, pending: Sequence[tuple[Task, int]], overrides: Mapping[str, int | float]
) -> list[_Unit]:
    """One unit per pending slot, each with its task's budgets and the overrides applied."""
    return [
        attrs.evolve(
            template,
            world=task.world,
            task=task,
            sample=sample,
            limits=AttemptLimits.from_task(task.budgets, **overrides),
        )
        for task, sample in pending
    ]


def run(
    tasks: Sequence[Task],
    agent: Agent,
    *,
    samples: int = 1,
    seed: int = 0,
    workers: int = 1,
    out: str | Path,
    size: str = "small",
    limits: Mapping[str, int | float | None] | None = None,
    retries: int = 1,
    progress: Callable[[RunProgress], None] | None = None,
) -> RunResult:
    """Run every task ``samples`` times and save each record the moment it ends.

    Args:
        tasks: The tasks (from any built-in world).
        agent: The agent; with ``workers > 1`` it must be picklable.
        samples: Samples per task (k).
        seed: The base seed; sample seeds derive from it, the task and the sample index.
        workers: Processes running attempts in parallel (context, not revision).
        out: The run directory; an existing one is resumed if its revision matches.
        size: The seed size of each world.
        limits: Budget overrides (turns, tool_calls, context_tokens, requests, cost).
        retries: Extra executions of an attempt whose outcome is ``infrastructure`` (an
            agent's own ``error`` is its result and is never retried).
        progress: Called after each attempt.

    Raises:
        RevisionMismatch: when ``out`` holds a run of another revision.
        ValueError: for no tasks or fewer than one sample.
    """
    if samples < 1:
        raise ValueError("samples must be at least 1")
    if not tasks:
        raise ValueError("no tasks selected")
    overrides = {k: v for k, v in (limits or {}).items() if v is not None}
    worlds, revision, fresh = _pin(tasks, agent, overrides, samples=samples, seed=seed, size=size)
    root = Path(out)
    open_run_directory(root, revision, fresh, workers)
    write_json(root / PINS, make_pins(worlds, tasks))  # for `verify --pin`
    pending = list(_pending_slots(root, tasks, samples))
    template = _Unit(
        agent=agent,
        world="",
        size=size,
        task=tasks[0],
        sample=0,
        seed=seed,
        revision=revision.id,
        limits=AttemptLimits(),
        workers=workers,
        out=root,
        try_number=0,
        retries=retries,
    )
    units = _units(template, pending, overrides)
    tally = _Tally(total=len(units), progress=progress)
    if workers <= 1:
        _execute_serially(units, tally)
    else:
        _execute_in_processes(units, workers, tally)
    scan = scan_run(root, tasks, known=tally.results, worlds=worlds)
    resumed = len(tasks) * samples - len(pending)
    return RunResult(
        out=root, revision=revision, counts=scan.counts, resumed=resumed, slots=scan.slots
    )


def open_external_run(
    out: str | Path,
    *,
    worlds: Mapping[str, World],
    tasks: Sequence[Task],
    kind: str,
    label: str,
    samples: int,
    seed: int,
    overrides: Mapping[str, int | float],
) -> Revision:
    """Create (or resume) a run directory for attempts driven from outside `run`.

    MCP clients and inspect_ai drive attempts themselves; their runs have the same layout and
    revision as `run`'s, so ``verify``, ``report`` and ``compare`` read them like any other. Only
    the agent component differs: it names the driver (``{"kind": kind, "name": label}``),
    because the model behind it is not ours to see.

    Raises:
        RevisionMismatch: when ``out`` holds a run of another revision.
    """
    revision = make_revision(
        worlds=worlds,
        tasks=tasks,
        agent_settings={"kind": kind, "name": label},
        budgets=dict(overrides),
        samples=samples,
        seed=seed,
    )
    fresh = RunManifest(
        revision=revision,
        agent=label,
        tasks=sorted(t.id for t in tasks),
        samples=samples,
        seed=seed,
        sizes={name: world.size for name, world in worlds.items()},
        limits=dict(overrides),
    )
    open_run_directory(Path(out), revision, fresh, workers=1)
    return revision
