"""Runs: every selected task × k samples, each a fresh session with its own seed, saved as it ends.

A run directory holds ``manifest.json`` (the revision and its components, plus context),
``records/<task>/<sample>.json`` (one record per attempt, written atomically the moment it
ends) and ``inventory.json`` (scheduled, executed, valid, invalid and retried attempts).
Re-running into the same directory resumes: records already saved are kept, the rest executed;
a changed component refuses to resume and names what changed.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import multiprocessing
import os
import platform
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world._agents import Agent, drive
from harness_world._attempt import Attempt, AttemptLimits
from harness_world._record import Record, RecordContext, RecordError, load_record, save_record
from harness_world._replay import verify
from harness_world._revision import (
    Revision,
    RevisionMismatch,
    describe_mismatch,
    diff_revisions,
    make_revision,
)
from harness_world._task import Task
from harness_world._world import World, load_world

__all__ = [
    "Inventory",
    "RunContext",
    "RunManifest",
    "RunProgress",
    "RunResult",
    "compute_inventory",
    "load_manifest",
    "run",
    "sample_seed",
]

MANIFEST = "manifest.json"
INVENTORY = "inventory.json"
COUNTED = ("completed", "turn_limit", "budget_limit")


class RunContext(msgspec.Struct, frozen=True, kw_only=True):
    """Where and how a run executed: recorded, never part of the revision.

    Attributes:
        out: The run directory as given.
        started_at: Wall-clock start (UTC).
        host: Host name.
        pid: Process id of the driver.
        workers: Parallelism (changes error rates and latency, so it is written down).
        python: The interpreter version.
    """

    out: str
    started_at: str
    host: str
    pid: int
    workers: int
    python: str


class RunManifest(msgspec.Struct, frozen=True, kw_only=True):
    """``manifest.json``.

    Attributes:
        format: Manifest format version.
        revision: The pinned revision.
        agent: The agent's name.
        tasks: Task ids, sorted.
        samples: Samples per task.
        seed: The base seed (each sample's seed derives from it).
        sizes: The seed size used per world.
        limits: Budget overrides applied on top of each task's budgets.
        contexts: One context per execution of the run (the first, then each resume).
    """

    format: int = 1
    revision: Revision
    agent: str
    tasks: list[str]
    samples: int
    seed: int
    sizes: dict[str, str]
    limits: dict[str, Any] = {}
    contexts: list[RunContext] = []


class Inventory(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to every scheduled attempt: explicit denominators.

    Attributes:
        scheduled: Tasks × samples.
        executed: Attempts with a final record on disk.
        valid: Verified records whose outcome counts as an attempt (completed, turn_limit,
            budget_limit): the denominator of quality figures.
        invalid: Records that are not verified, or ended as error or interrupted.
        retried: Attempts executed again after an ``error`` outcome (the failed tries are kept
            as ``<sample>.failed-<n>.json``).
        missing: Scheduled attempts without a record (an interrupted run).
        by_outcome: Final records per outcome.
        by_evidence: Final records per evidence state.
        passed: Valid records whose grade passed.
        failed: Valid records whose grade failed.
        not_graded: Valid records without a grade: their task is unknown or has changed since
            (a changed task is a different task).
    """

    scheduled: int
    executed: int
    valid: int
    invalid: int
    retried: int
    missing: int
    by_outcome: dict[str, int]
    by_evidence: dict[str, int]
    passed: int
    failed: int
    not_graded: int = 0


@attrs.frozen(slots=True)
class RunProgress:
    """A progress report: done out of total, with pass, fail and ungraded counts so far."""

    done: int
    total: int
    passed: int
    failed: int
    ungraded: int


@attrs.frozen(slots=True)
class RunResult:
    """What `run` returns.

    Attributes:
        out: The run directory.
        revision: The pinned revision.
        inventory: The inventory after the run.
        resumed: How many records were already on disk and kept.
    """

    out: Path
    revision: Revision
    inventory: Inventory
    resumed: int


def sample_seed(seed: int, task_id: str, sample: int) -> int:
    """A sample's own seed: a pure function of the base seed, the task and the sample index."""
    digest = hashlib.sha256(f"{seed}/{task_id}/{sample}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def record_path(out: Path, task_id: str, sample: int) -> Path:
    """Where the final record of one attempt lives."""
    return out / "records" / task_id / f"{sample}.json"


def load_manifest(out: str | Path) -> RunManifest:
    """Read a run directory's manifest.

    Raises:
        FileNotFoundError: when there is no manifest.
        ValueError: when it is not a valid manifest.
    """
    path = Path(out) / MANIFEST
    try:
        return msgspec.json.decode(path.read_bytes(), type=RunManifest)
    except FileNotFoundError:
        raise FileNotFoundError(f"{out}: not a run directory (no {MANIFEST})") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ValueError(f"{path}: invalid manifest: {exc}") from None


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(
        msgspec.json.format(msgspec.json.encode(value, order="sorted"), indent=1) + b"\n"
    )
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    tmp.replace(path)


def _execute(
    agent: Agent,
    world: World,
    task: Task,
    sample: int,
    seed: int,
    revision: str,
    limits: AttemptLimits,
    workers: int,
) -> Record:
    attempt = Attempt(
        world,
        task,
        seed=sample_seed(seed, task.id, sample),
        sample=sample,
        revision=revision,
        limits=limits,
    )
    context = RecordContext(host=socket.gethostname(), pid=os.getpid(), workers=workers)
    return drive(agent, attempt, context)


Verdict = tuple[str, str, bool | None]
"""(outcome, evidence, passed) of one record, as the inventory counts it."""


def _judge(record: Record, world: World, task: Task) -> Verdict:
    result = verify(record, world=world, task=task)
    passed = None if result.grade is None else result.grade.passed
    return record.outcome.status, result.evidence, passed


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


def _perform(unit: _Unit) -> tuple[Path, Verdict | None]:
    """Execute, save atomically, replay and grade one attempt; all in the calling process.

    Returns the saved path and its verdict, or a None verdict when the attempt ended in error
    and must be executed again (its record is kept as ``<sample>.failed-<n>.json``).
    """
    world = load_world(unit.world, size=unit.size)
    record = _execute(
        unit.agent,
        world,
        unit.task,
        unit.sample,
        unit.seed,
        unit.revision,
        unit.limits,
        unit.workers,
    )
    path = record_path(unit.out, unit.task.id, unit.sample)
    if record.outcome.status == "error" and unit.try_number < unit.retries:
        failed = path.with_name(f"{unit.sample}.failed-{unit.try_number + 1}.json")
        save_record(record, failed)
        return failed, None
    save_record(record, path)
    return path, _judge(record, world, unit.task)


def run(
    tasks: Sequence[Task],
    agent: Agent,
    *,
    samples: int = 1,
    seed: int = 0,
    workers: int = 1,
    out: str | Path,
    size: str = "small",
    limits: dict[str, int | float | None] | None = None,
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
        retries: Extra executions of an attempt whose outcome is ``error``.
        progress: Called after each attempt.

    Raises:
        RevisionMismatch: when ``out`` holds a run of another revision.
    """
    if samples < 1:
        raise ValueError("samples must be at least 1")
    if not tasks:
        raise ValueError("no tasks selected")
    overrides = {k: v for k, v in (limits or {}).items() if v is not None}
    worlds = {name: load_world(name, size=size) for name in sorted({t.world for t in tasks})}
    revision = make_revision(
        worlds=worlds,
        tasks=tasks,
        agent_settings=agent.settings(),
        budgets=overrides,
        samples=samples,
        seed=seed,
    )
    root = Path(out)
    context = RunContext(
        out=str(out),
        started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        host=socket.gethostname(),
        pid=os.getpid(),
        workers=workers,
        python=platform.python_version(),
    )
    manifest_path = root / MANIFEST
    if manifest_path.is_file():
        check_resumable(root, revision)
        previous = load_manifest(root)
        manifest = msgspec.structs.replace(previous, contexts=[*previous.contexts, context])
    else:
        root.mkdir(parents=True, exist_ok=True)
        manifest = RunManifest(
            revision=revision,
            agent=agent.name,
            tasks=sorted(t.id for t in tasks),
            samples=samples,
            seed=seed,
            sizes={n: size for n in worlds},
            limits=overrides,
            contexts=[context],
        )
    _write_json(manifest_path, manifest)

    by_id = {t.id: t for t in tasks}
    pending: list[tuple[str, int]] = []
    resumed = 0
    for task in sorted(tasks, key=lambda t: t.id):
        for sample in range(samples):
            path = record_path(root, task.id, sample)
            if path.is_file():
                try:
                    load_record(path)
                    resumed += 1
                    continue
                except RecordError:
                    pass
            pending.append((task.id, sample))

    counts = {"passed": 0, "failed": 0, "ungraded": 0}
    total = len(pending)
    done = 0
    verdicts: dict[Path, Verdict] = {}

    def unit(key: tuple[str, int], try_number: int) -> _Unit:
        task = by_id[key[0]]
        return _Unit(
            agent=agent,
            world=task.world,
            size=size,
            task=task,
            sample=key[1],
            seed=seed,
            revision=revision.id,
            limits=AttemptLimits.from_task(task.budgets, **overrides),
            workers=workers,
            out=root,
            try_number=try_number,
            retries=retries,
        )

    def count(path: Path, verdict: Verdict) -> None:
        nonlocal done
        verdicts[path] = verdict
        _, evidence, passed = verdict
        if evidence != "verified" or passed is None:
            counts["ungraded"] += 1
        elif passed:
            counts["passed"] += 1
        else:
            counts["failed"] += 1
        done += 1
        if progress is not None:
            progress(RunProgress(done=done, total=total, **counts))

    if workers <= 1:
        queue = [unit(key, 0) for key in pending]
        while queue:
            current = queue.pop(0)
            path, verdict = _perform(current)
            if verdict is None:
                queue.insert(0, attrs.evolve(current, try_number=current.try_number + 1))
            else:
                count(path, verdict)
    else:
        # Workers execute, save, replay and grade; the parent only counts. Fork keeps plug-in
        # modules (oracles, scripts) importable by name in the children.
        context_mp = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=context_mp
        ) as pool:
            futures = {pool.submit(_perform, u): u for u in (unit(key, 0) for key in pending)}
            while futures:
                ready, _ = concurrent.futures.wait(
                    futures, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for future in ready:
                    current = futures.pop(future)
                    path, verdict = future.result()
                    if verdict is None:
                        again = attrs.evolve(current, try_number=current.try_number + 1)
                        futures[pool.submit(_perform, again)] = again
                    else:
                        count(path, verdict)
    inventory = compute_inventory(root, tasks, known=verdicts)
    return RunResult(out=root, revision=revision, inventory=inventory, resumed=resumed)


def compute_inventory(
    out: str | Path,
    tasks: Sequence[Task] | None = None,
    *,
    known: dict[Path, Verdict] | None = None,
) -> Inventory:
    """Recount a run directory from what is on disk (and write ``inventory.json``).

    Every record is loaded and replayed, except those in ``known`` (verdicts this process just
    computed for records it saved itself).
    """
    root = Path(out)
    manifest = load_manifest(root)
    if tasks is None:
        from harness_world._task import load_tasks

        every = {t.id: t for t in load_tasks()}
        tasks = [every[i] for i in manifest.tasks if i in every]
    by_id = {t.id: t for t in tasks}
    worlds: dict[str, World] = {}
    by_outcome: dict[str, int] = {}
    by_evidence: dict[str, int] = {}
    executed = valid = invalid = passed = failed = not_graded = 0
    for task_id in manifest.tasks:
        for sample in range(manifest.samples):
            path = record_path(root, task_id, sample)
            if not path.is_file():
                continue
            executed += 1
            verdict = (known or {}).get(path)
            if verdict is None:
                try:
                    record = load_record(path)
                except RecordError:
                    by_evidence["lost"] = by_evidence.get("lost", 0) + 1
                    invalid += 1
                    continue
                world_name = record.world.name
                if world_name not in worlds:
                    size = manifest.sizes.get(world_name, "small")
                    worlds[world_name] = load_world(world_name, size=size)
                task = by_id.get(task_id)
                if task is not None and (
                    task.hash != record.task_hash or task.world != record.world.name
                ):
                    task = None  # edited since the record was made: a different task
                if task is None:
                    unknown = verify(record, world=worlds[world_name])
                    verdict = (record.outcome.status, unknown.evidence, None)
                else:
                    verdict = _judge(record, worlds[world_name], task)
            outcome, evidence, grade_passed = verdict
            by_outcome[outcome] = by_outcome.get(outcome, 0) + 1
            by_evidence[evidence] = by_evidence.get(evidence, 0) + 1
            if evidence == "verified" and outcome in COUNTED:
                valid += 1
                if grade_passed is None:
                    not_graded += 1
                elif grade_passed:
                    passed += 1
                else:
                    failed += 1
            else:
                invalid += 1
    retried = (
        len(list((root / "records").rglob("*.failed-*.json"))) if (root / "records").is_dir() else 0
    )
    scheduled = len(manifest.tasks) * manifest.samples
    inventory = Inventory(
        scheduled=scheduled,
        executed=executed,
        valid=valid,
        invalid=invalid,
        retried=retried,
        missing=scheduled - executed,
        by_outcome=by_outcome,
        by_evidence=by_evidence,
        passed=passed,
        not_graded=not_graded,
        failed=failed,
    )
    _write_json(root / INVENTORY, inventory)
    return inventory


def check_resumable(out: str | Path, revision: Revision) -> None:
    """Raise `RevisionMismatch` if ``out`` holds a run of another revision."""
    root = Path(out)
    if (root / MANIFEST).is_file():
        previous = load_manifest(root)
        changed = diff_revisions(previous.revision, revision)
        if changed:
            raise RevisionMismatch(
                changed, f"{root}: {describe_mismatch(previous.revision, revision)}"
            )
