"""Runs: every selected task × k samples, each a fresh session with its own seed, saved as it ends.

The run directory's layout and the one pass that judges it live in `harness_world.running.rundir`.
Re-running into the same directory resumes: records already saved are kept, the rest executed;
a changed component refuses to resume and names what changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs
import msgspec

from harness_world.engine.world import World, load_world
from harness_world.evidence.binding import read_index
from harness_world.evidence.record import RecordError, load_record
from harness_world.evidence.signing import SigningError, resume_key_problem, sign_run
from harness_world.grading.task import Task
from harness_world.grading.verifier import SlotResult
from harness_world.grading.worlds import WorldChoice, choose_worlds
from harness_world.running.agents import Agent
from harness_world.running.attempt import AttemptLimits
from harness_world.running.commit import GroupCommit, remove_temporaries
from harness_world.running.executors import Executor, Serial
from harness_world.running.lock import RunLock, lock_run_directory
from harness_world.running.pins import PINS, make_pins
from harness_world.running.reader import RunReader
from harness_world.running.revision import Revision, make_revision
from harness_world.running.rundir import (
    RunCounts,
    RunManifest,
    open_run_directory,
    record_path,
    sample_seed,
    write_counts,
    write_json,
)
from harness_world.running.tracks import Fresh, Track
from harness_world.running.units import RunProgress, Tally, Unit

__all__ = [
    "RunHook",
    "RunPlan",
    "RunProgress",
    "RunResult",
    "RunSummary",
    "default_out",
    "finish_run",
    "open_external_run",
    "prepare_run",
    "run",
    "run_summary",
    "sample_seed",
    "slot_line",
]


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
    track: Track,
    choice: WorldChoice,
) -> tuple[dict[str, World], Revision, RunManifest]:
    """Load the worlds and pin the revision and the manifest of a new run.

    The track is part of the revision (results depend on it: `Track.pin`); the executor and
    where a world was loaded from are context, never part of it.
    """
    names = sorted({t.world for t in tasks})
    worlds = {name: load_world(choice.source(name), size=size) for name in names}
    revision = make_revision(
        worlds=worlds,
        tasks=tasks,
        agent_settings=track.pin(agent.settings()),
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
        track=track.name,
    )
    return worlds, revision, fresh


def _units(
    template: Unit,
    pending: Sequence[tuple[Task, int]],
    overrides: Mapping[str, int | float],
    choice: WorldChoice,
) -> list[Unit]:
    """One unit per pending slot, each with its task's budgets and the overrides applied.

    A unit names its world by what a worker loads it from: a built-in name, or the folder the
    runner was given (the runner's own argument, never a record's).
    """
    return [
        attrs.evolve(
            template,
            world=choice.source(task.world),
            task=task,
            sample=sample,
            limits=AttemptLimits.from_task(task.budgets, **overrides),
        )
        for task, sample in pending
    ]


class RunHook(Protocol):
    """What an extension does around a run (`run`'s ``hooks``), such as a held-out ledger."""

    def check(self, tasks: Sequence[Task]) -> None:
        """Refuse the run (a `HarnessWorldError`) before anything is written."""

    def opened(
        self,
        tasks: Sequence[Task],
        revision: Revision,
        agent: str,
        root: Path,
        signer: Path | None,
    ) -> None:
        """Act once the run directory is open and pinned, before any attempt runs."""


def run(
    tasks: Sequence[Task],
    agent: Agent,
    *,
    samples: int = 1,
    seed: int = 0,
    out: str | Path,
    size: str = "small",
    limits: Mapping[str, int | float | None] | None = None,
    retries: int = 1,
    progress: Callable[[RunProgress], None] | None = None,
    executor: Executor = Serial(),
    track: Track = Fresh(),
    group_commit: bool = True,
    world: str | Path | Sequence[str | Path] | None = None,
    hooks: Sequence[RunHook] = (),
    sign_key: Path | None = None,
) -> RunResult:
    """Run every task ``samples`` times and save each record durably as it ends.

    Args:
        tasks: The tasks (of built-in worlds, or of the worlds given as ``world``).
        agent: The agent; for `Processes` or `Ray` it must be picklable.
        samples: Samples per task (k).
        seed: The base seed; sample seeds derive from it, the task and the sample index.
        out: The run directory; an existing one is resumed if its revision matches.
        size: The seed size of each world.
        limits: Budget overrides (turns, tool_calls, context_tokens, requests, cost).
        retries: Extra executions of an attempt whose outcome is ``infrastructure`` (an
            agent's own ``error`` is its result and is never retried).
        progress: Called after each attempt, once its record is durable.
        executor: How many attempts execute at once, and where: `Serial` (one at a time
            here), `Processes`, `Concurrent` or `Ray` (`harness_world.running.executors`).
            Context, not revision: any executor makes the same records and resumes a run
            another one began.
        track: `Fresh`, or `Sequential`: one agent instance given the tasks one after another,
            one pass per sample in a seeded order (`harness_world.running.tracks`; it runs
            only with `Serial`). Part of the revision.
        group_commit: Make the records finished within a short window durable together
            (`harness_world.running.commit`); False saves each on its own. A way of saving,
            so it goes with every executor: all of them hand their records to this process.
        world: World folders of your own (or built-in names): tasks of a world given here run
            against that folder. Paths are context: the revision pins the worlds' hashes.
        hooks: What extensions do around the run (`RunHook`), such as held-out split locks
            (`harness_world.running.heldout.HeldOutSplits`: the run appends itself to each
            one's ledger before any attempt runs, and is refused when it schedules none of a
            split's tasks).
        sign_key: An Ed25519 private key (PEM): the run is signed with it at the end (and
            handed to the hooks, which sign what they write with it). A run directory
            already signed is resumed only with the key that signed it.

    Raises:
        RevisionMismatch: when ``out`` holds a run of another revision.
        SigningError: when ``out`` is signed and ``sign_key`` is not its signer's key (or
            cannot be read).
        HarnessWorldError: when a hook refuses the run (a `SplitError` for a split lock that
            is unreadable, whose tasks the run schedules none of, or whose ledger is broken).
        AttemptsLost: when an executor lost some attempts (the rest is committed).
        ValueError: for no tasks, fewer than one sample, or a track that does not run with
            the executor (`Sequential` with anything but `Serial`).
    """
    plan = prepare_run(
        tasks,
        agent,
        samples=samples,
        seed=seed,
        out=out,
        size=size,
        limits=limits,
        retries=retries,
        executor=executor,
        track=track,
        worlds=choose_worlds(world),
        hooks=hooks,
        sign_key=sign_key,
    )
    try:  # the lock goes with this call, whatever ends it
        tally = Tally(total=len(plan.units), progress=progress)
        executor.execute(plan.units, GroupCommit(plan.root, tally.count, group=group_commit))
        result = finish_run(plan, tally.results)
        if sign_key is not None:
            sign_run(result.out, result.revision.id, sign_key)
        return result
    finally:
        if plan.lock is not None:
            plan.lock.release()


def default_out(
    tasks: Sequence[Task],
    agent: Agent,
    *,
    samples: int = 1,
    seed: int = 0,
    size: str = "small",
    limits: Mapping[str, int | float | None] | None = None,
    track: Track = Fresh(),
    world: str | Path | Sequence[str | Path] | None = None,
) -> Path:
    """Where a run goes when no directory is given: ``runs/<revision prefix>``.

    The arguments are `run`'s; the revision is pinned exactly as `run` pins it, so running
    again with the same arguments resumes the same directory.

    Raises:
        WorldError: for a world that does not load at ``size``.
    """
    overrides = {k: v for k, v in (limits or {}).items() if v is not None}
    _, revision, _ = _pin(
        tasks,
        agent,
        overrides,
        samples=samples,
        seed=seed,
        size=size,
        track=track,
        choice=choose_worlds(world),
    )
    return Path("runs") / revision.id[:12]


class RunSummary(msgspec.Struct, frozen=True, kw_only=True):
    """What a finished run says of itself (what ``run --json`` prints).

    Attributes:
        out: The run directory.
        revision: The revision id.
        resumed: Records already saved and kept.
        counts: What happened to every scheduled slot.
        invalid: Executed slots that are not valid attempts, one line each (`slot_line`).
        failed: The failed criteria of each failed attempt, by ``task/sample``.
        not_reviewed: The prose criteria standing open, by ``task/sample`` (slots with any).
    """

    out: str
    revision: str
    resumed: int
    counts: RunCounts
    invalid: list[str]
    failed: dict[str, list[str]]
    not_reviewed: dict[str, list[str]]


def slot_line(slot: SlotResult) -> str:
    """One slot in words: ``task/sample: outcome (why)``."""
    why = slot.reason or slot.outcome_reason or slot.not_graded
    return f"{slot.task_id}/{slot.sample}: {slot.outcome or slot.evidence}" + (
        f" ({why})" if why else ""
    )


def run_summary(result: RunResult) -> RunSummary:
    """The summary of a finished run: its counts, invalid slots, failures and open prose."""
    slots = result.slots
    return RunSummary(
        out=str(result.out),
        revision=result.revision.id,
        resumed=result.resumed,
        counts=result.counts,
        invalid=[slot_line(s) for s in slots if s.evidence != "missing" and not s.counted],
        failed={
            f"{s.task_id}/{s.sample}": s.failed
            for s in slots
            if s.counted and s.passed is False and not s.pending
        },
        not_reviewed={f"{s.task_id}/{s.sample}": s.not_reviewed for s in slots if s.not_reviewed},
    )


@attrs.frozen(slots=True)
class RunPlan:
    """A run directory opened (or resumed) and the attempts it still needs.

    Attributes:
        root: The run directory.
        tasks: Its tasks.
        worlds: Their worlds, loaded.
        revision: The pinned revision.
        units: One unit per pending slot, in the order its track gives them.
        resumed: Slots whose records were already on disk and kept.
        lock: The run directory's lock, held until `finish_run` (None: not held here).
    """

    root: Path
    tasks: Sequence[Task]
    worlds: dict[str, World]
    revision: Revision
    units: list[Unit]
    resumed: int
    lock: RunLock | None = attrs.field(default=None, eq=False, repr=False)


def prepare_run(
    tasks: Sequence[Task],
    agent: Agent,
    *,
    samples: int,
    seed: int,
    out: str | Path,
    size: str = "small",
    limits: Mapping[str, int | float | None] | None = None,
    retries: int = 1,
    executor: Executor = Serial(),
    track: Track = Fresh(),
    worlds: WorldChoice | None = None,
    hooks: Sequence[RunHook] = (),
    sign_key: Path | None = None,
) -> RunPlan:
    """Pin the revision, open (or resume) the run directory, and list the pending attempts.

    The executor is taken only to be written down as context and checked against the track,
    before anything is written; so is ``sign_key`` against a run directory already signed
    (see `run`), and it is handed to the hooks.

    Raises:
        RevisionMismatch: when ``out`` holds a run of another revision.
        SigningError: when ``out`` is signed by another key than ``sign_key`` (or by any,
            without one).
        HarnessWorldError: when a hook refuses the run (see `run`).
        ValueError: for no tasks, fewer than one sample, or a track that does not run with
            the executor.
    """
    track.check(executor)
    if samples < 1 or not tasks:
        raise ValueError("samples must be at least 1" if tasks else "no tasks selected")
    overrides = {k: v for k, v in (limits or {}).items() if v is not None}
    choice = worlds or WorldChoice()
    loaded, revision, fresh = _pin(
        tasks, agent, overrides, samples=samples, seed=seed, size=size, track=track, choice=choice
    )
    for hook in hooks:  # before anything is written
        hook.check(tasks)
    root = _resumable(Path(out), sign_key)
    lock = lock_run_directory(root)
    open_run_directory(root, revision, fresh, executor.workers)
    write_json(root / PINS, make_pins(loaded, tasks))  # for `verify --pin`
    for hook in hooks:
        hook.opened(tasks, revision, agent.name, root, sign_key)
    remove_temporaries(root)  # left by a run killed in the middle of a batch
    pending = list(_pending_slots(root, tasks, samples))
    template = Unit(
        agent=agent,
        world="",
        size=size,
        task=tasks[0],
        sample=0,
        seed=seed,
        revision=revision.id,
        limits=AttemptLimits(),
        workers=executor.workers,
        out=root,
        try_number=0,
        retries=retries,
        track=track.name,
        scheduled=time.time(),  # context: queue times are measured from here
    )
    units = _units(template, pending, overrides, choice)
    return RunPlan(
        root=root,
        tasks=tasks,
        worlds=loaded,
        revision=revision,
        units=track.order(units, root, tasks, samples, seed),
        resumed=len(tasks) * samples - len(pending),
        lock=lock,
    )


def _resumable(root: Path, sign_key: Path | None) -> Path:
    """``root``, unless it is a signed run and ``sign_key`` not its signer's key.

    Raises:
        SigningError: naming why (`resume_key_problem`).
    """
    if problem := resume_key_problem(root, sign_key):
        raise SigningError(problem)
    return root


def finish_run(plan: RunPlan, known: Mapping[Path, SlotResult]) -> RunResult:
    """Judge the run directory once, reusing the results this process computed; unlock it.

    The counts and layered results are written beside the run from that judgement.
    """
    try:
        reader = RunReader.of(plan.tasks, worlds=plan.worlds)
        scan = reader.read(plan.root, known=known)
        write_counts(scan)
    finally:
        if plan.lock is not None:
            plan.lock.release()
    return RunResult(
        out=plan.root,
        revision=plan.revision,
        counts=scan.counts,
        resumed=plan.resumed,
        slots=scan.slots,
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
        SigningError: when ``out`` is a signed run (such a driver has no key to sign with).
    """
    _resumable(Path(out), None)
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
