"""The run directory: its layout, its manifest, and the one pass that judges every slot.

A run directory holds ``manifest.json`` (the revision and its components, plus context),
``records/<task>/<sample>.json`` (one record per scheduled slot, written atomically the moment
the attempt ends; tries whose infrastructure failed beside it as ``<sample>.failed-<n>.json``),
``index.jsonl`` (the append-only binding of each slot to its record's digest, written ahead of
the record), ``pins.json`` (world and task hashes, for ``verify --pin``), optionally
``index.sig.json`` (an Ed25519 signature over the index) and ``counts.json`` (what happened to
every scheduled slot). Each record is judged against its slot: task, sample, derived seed, the
manifest's revision and the slot's indexed digest. `scan_run` is the only walk over a run
directory: `run`'s final counts, `report`, `compare` and `verify` read its result, so each
record is replayed once per command.
"""

from __future__ import annotations

import hashlib
import os
import platform
import socket
import stat
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import attrs
import msgspec

from harness_world.engine.limits import task_id_problem
from harness_world.engine.world import World, WorldError, load_trusted_world
from harness_world.evidence.binding import IndexEntry, binding_problem, read_index
from harness_world.evidence.record import Record, RecordError, load_record
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verify import Verification, verify
from harness_world.running.revision import (
    Revision,
    RevisionMismatch,
    describe_mismatch,
    diff_revisions,
)

__all__ = [
    "COUNTED",
    "COUNTS",
    "MANIFEST",
    "RunContext",
    "RunCounts",
    "RunManifest",
    "RunScan",
    "SlotResult",
    "VerifiedRecord",
    "bound_records",
    "check_resumable",
    "count_slots",
    "judge_record",
    "load_manifest",
    "open_run_directory",
    "record_path",
    "sample_seed",
    "scan_run",
    "write_json",
]

MANIFEST = "manifest.json"
COUNTS = "counts.json"
COUNTED = ("completed", "error", "turn_limit", "budget_limit")
"""Outcomes that count as attempts: a budget cut-off is part of the task's conditions, and
``error`` (an exception in the agent's own code) is the system under test failing."""
MAX_SAMPLES = 1_000_000
MAX_TASKS = 100_000
MAX_SLOTS = 10_000_000
_MAX_MANIFEST_BYTES = 64 * 1024 * 1024


def sample_seed(seed: int, task_id: str, sample: int) -> int:
    """A sample's own seed: a pure function of the base seed, the task and the sample index."""
    digest = hashlib.sha256(f"{seed}/{task_id}/{sample}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


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
        track: ``fresh`` (every attempt from nothing kept) or ``sequential`` (one agent
            instance given the tasks one after another; issue 19).
    """

    format: int = 1
    revision: Revision
    agent: str
    tasks: Annotated[list[str], msgspec.Meta(max_length=MAX_TASKS)]
    samples: Annotated[int, msgspec.Meta(ge=1, le=MAX_SAMPLES)]
    seed: Annotated[int, msgspec.Meta(ge=-(2**53), le=2**53)]
    sizes: dict[str, str]
    limits: dict[str, Any] = {}
    contexts: list[RunContext] = []
    track: Literal["fresh", "sequential"] = "fresh"


SlotEvidence = Literal["verified", "ungraded", "lost", "missing"]


class SlotResult(msgspec.Struct, frozen=True, kw_only=True):
    """What one scheduled slot (task, sample) of a run holds, judged once.

    Attributes:
        task_id: The task.
        sample: The sample index.
        path: The final record's path (it may not exist).
        outcome: How execution ended (empty when there is no readable record).
        outcome_reason: Why it ended that way, in words (the record's outcome reason).
        evidence: ``verified``, ``ungraded``, ``lost`` (unreadable record or world) or
            ``missing`` (no record for a scheduled slot).
        passed: The grade; null when not graded.
        failed: The failed automated criteria, each ``id: detail``.
        not_graded: Why a verified record has no grade (its task unknown or changed).
        not_reviewed: The prose criteria standing open until a person reviews them.
        reason: Why the evidence is not verified (or, for a missing slot, that it is missing).
        tool_calls: Tool calls in the record.
        requests: Provider requests (retries included).
        input_tokens: Prompt tokens.
        output_tokens: Completion tokens.
        cost: US dollars, uncertain exposure included.
        retried: Tries of this slot that ended in error and were executed again.
        retry_cost: What those tries cost.
        latency_s: Wall-clock duration (context).
        user_turns: Exchanges with a simulated user; unset (left out of JSON) for a record
            without any, so runs without a user report as before.
    """

    task_id: str
    sample: int
    path: str
    outcome: str = ""
    outcome_reason: str = ""
    evidence: SlotEvidence
    passed: bool | None = None
    failed: list[str] = []
    not_graded: str = ""
    not_reviewed: list[str] = []
    reason: str = ""
    tool_calls: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    retried: int = 0
    retry_cost: float = 0.0
    latency_s: float = 0.0
    user_turns: int | msgspec.UnsetType = msgspec.UNSET  # tau2: user channel

    @property
    def counted(self) -> bool:
        """Whether this slot is a valid attempt: verified evidence and a counted outcome."""
        return self.evidence == "verified" and self.outcome in COUNTED


class RunCounts(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to every scheduled attempt: explicit denominators.

    Attributes:
        scheduled: Tasks × samples.
        executed: Attempts with a final record on disk.
        valid: Verified records whose outcome counts as an attempt (completed, turn_limit,
            budget_limit): the denominator of quality figures.
        invalid: Records that are not verified, or ended as error or interrupted.
        retried: Executions of attempts whose outcome was ``error``, run again (the failed
            tries are kept as ``<sample>.failed-<n>.json``).
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


class RunScan(msgspec.Struct, frozen=True, kw_only=True):
    """Every scheduled slot of a run directory, judged once.

    Attributes:
        out: The run directory.
        manifest: Its manifest.
        slots: One result per scheduled (task, sample), in manifest order.
        counts: The counts over those slots.
        families: Each scheduled task's family (empty when the task is unknown here).
    """

    out: str
    manifest: RunManifest
    slots: list[SlotResult]
    counts: RunCounts
    families: dict[str, str]


def record_path(out: Path, task_id: str, sample: int) -> Path:
    """Where the final record of one attempt lives (ValueError for an unsafe task id)."""
    if task_id_problem(task_id):  # the last line: callers validate ids where they are read
        raise ValueError(f"{out}: no record path for {task_id_problem(task_id)}")
    return out / "records" / task_id / f"{sample}.json"


def failed_tries(path: Path) -> list[Path]:
    """The tries of a slot that ended in error and were executed again, oldest first."""
    sample = path.stem
    return sorted(path.parent.glob(f"{sample}.failed-*.json"))


def failed_tries_by_sample(folder: Path) -> dict[str, list[Path]]:
    """`failed_tries` for every sample of one task's folder, from one listing of it.

    Keys are the sample indices as written in the names (``"3"`` for ``3.failed-*.json``);
    each list is oldest first, as `failed_tries` gives it. A scan calls this once per task
    instead of globbing the folder once per sample (quadratic in the samples).
    """
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    found: dict[str, list[Path]] = {}
    for name in names:
        sample, marker, rest = name.partition(".failed-")
        if marker and rest.endswith(".json"):
            found.setdefault(sample, []).append(folder / name)
    for paths in found.values():
        paths.sort()
    return found


def load_manifest(out: str | Path) -> RunManifest:
    """Read a run directory's manifest.

    Raises:
        FileNotFoundError: when there is no manifest.
        ValueError: when it is not a valid manifest.
    """
    path = Path(out) / MANIFEST
    try:
        info = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"{out}: not a run directory (no {MANIFEST})") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_MANIFEST_BYTES:
        raise ValueError(f"{path}: invalid manifest: not a regular file of sensible size")
    try:
        manifest = msgspec.json.decode(path.read_bytes(), type=RunManifest)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise ValueError(f"{path}: invalid manifest: {exc}") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(manifest.tasks) * manifest.samples > MAX_SLOTS:
        raise ValueError(f"{path}: invalid manifest: more than {MAX_SLOTS} slots")
    unsafe = next((p for p in map(task_id_problem, manifest.tasks) if p), "")
    if unsafe:
        raise ValueError(f"{path}: invalid manifest: tasks: {unsafe}")
    return manifest


def write_json(path: Path, value: Any) -> None:
    """Write canonical, indented JSON atomically (temp file, fsync, rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(
        msgspec.json.format(msgspec.json.encode(value, order="sorted"), indent=1) + b"\n"
    )
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    tmp.replace(path)


@attrs.frozen(slots=True)
class VerifiedRecord:
    """A final record `scan_run` verified in its slot, kept in memory for readers of the run.

    Attributes:
        record: The record as loaded.
        world: The world it was replayed against.
        task: The slot's task (None when the task is not known here).
        verification: Its verification (``verified``; graded when the task is known).
    """

    record: Record
    world: World
    task: Task | None
    verification: Verification

    def graded_against(self, task: Task) -> bool:
        """Whether it was graded against ``task`` (the same definition, whichever object)."""
        return (
            self.verification.grade is not None
            and self.task is not None
            and self.task.hash == task.hash
        )


Observer = Callable[[Path, VerifiedRecord], None]
"""What `scan_run` calls with each record it verified in its slot, and the record's path. A
verified record is bound to its slot, so its ``task_id`` and ``sample`` name the slot."""


def judge_record(
    record: Record,
    world: World,
    task: Task | None,
    path: Path,
    *,
    retries: Sequence[Path] = (),
    observe: Observer | None = None,
) -> SlotResult:
    """Replay one record of a slot and grade it against its task (when that task is known).

    With ``observe``, a verified record is also shown to it, with its path.
    """
    result = verify(record, world=world, task=task)
    if observe is not None and result.evidence == "verified":
        observe(path, VerifiedRecord(record, world, task, result))
    grade = result.grade
    usage = record.usage
    retry_cost = 0.0  # tries that ended in error cost money too
    for earlier in retries:
        try:
            spent = load_record(earlier).usage
        except RecordError:
            continue
        retry_cost += spent.cost + spent.uncertain_cost
    not_graded = result.not_graded
    if result.evidence == "verified" and task is None:
        not_graded = f"task {record.task_id!r} is not known here"
    return SlotResult(
        task_id=record.task_id,
        sample=record.sample,
        path=str(path),
        outcome=record.outcome.status,
        outcome_reason=record.outcome.reason,
        evidence=result.evidence,
        passed=None if grade is None else grade.passed,
        failed=[]
        if grade is None
        else [f"{v.id}: {v.detail}" for v in grade.verdicts if v.status == "failed"],
        not_graded=not_graded,
        not_reviewed=[] if grade is None else grade.not_reviewed,
        reason=result.reason,
        tool_calls=len(record.calls),
        requests=usage.requests,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost=usage.cost + usage.uncertain_cost,
        retried=len(retries),
        retry_cost=retry_cost,
        latency_s=record.context.latency_s,
        user_turns=len(record.user_turns) if record.user_turns else msgspec.UNSET,  # tau2
    )


@attrs.frozen(slots=True)
class _Slot:
    """One scheduled slot and what binds a record to it."""

    task_id: str
    sample: int
    seed: int
    revision: str
    entry: IndexEntry | None
    task: Task | None
    retries: Sequence[Path] = ()


def _slot_result(slot: _Slot, path: Path, evidence: SlotEvidence, **fields: Any) -> SlotResult:
    return SlotResult(
        task_id=slot.task_id, sample=slot.sample, path=str(path), evidence=evidence, **fields
    )


def _judge_slot(
    path: Path, slot: _Slot, worlds: _Worlds, observe: Observer | None
) -> SlotResult:
    if not path.is_file():
        return _slot_result(slot, path, "missing", reason="no record for this slot")
    retries = slot.retries
    try:
        record = load_record(path)
    except (RecordError, OSError) as exc:
        return _slot_result(slot, path, "lost", reason=str(exc), retried=len(retries))
    unbound = binding_problem(
        record,
        task_id=slot.task_id,
        sample=slot.sample,
        seed=slot.seed,
        revision=slot.revision,
        entry=slot.entry,
    )
    if unbound:
        return _slot_result(slot, path, "ungraded", outcome=record.outcome.status, reason=unbound)
    try:
        world = worlds.get(slot.task.world if slot.task else record.world.name)
        return judge_record(record, world, slot.task, path, retries=retries, observe=observe)
    except (WorldError, OSError) as exc:
        return _slot_result(slot, path, "lost", reason=str(exc), retried=len(retries))
    except Exception as exc:  # one hostile record never ends the scan
        return _slot_result(slot, path, "lost", reason=f"{type(exc).__name__}: {exc}")


class _Worlds:
    """Worlds by name at the run's sizes, loaded once per scan, within the trust root."""

    def __init__(
        self,
        sizes: Mapping[str, str],
        given: Mapping[str, World] | None,
        folders: Mapping[str, Path] | None = None,
    ) -> None:
        self.sizes = sizes
        self.loaded: dict[str, World] = dict(given or {})
        self.folders = dict(folders or {})

    def get(self, name: str) -> World:
        if name not in self.loaded:
            size = self.sizes.get(name, "small")
            self.loaded[name] = load_trusted_world(name, size, folders=self.folders)
        return self.loaded[name]


def scan_run(
    out: str | Path,
    tasks: Iterable[Task] | None = None,
    *,
    known: Mapping[Path, SlotResult] | None = None,
    write_counts: bool = True,
    worlds: Mapping[str, World] | None = None,
    observe: Observer | None = None,
    folders: Mapping[str, Path] | None = None,
) -> RunScan:
    """Judge every scheduled slot of a run directory once, each record against its slot.

    Args:
        out: The run directory.
        tasks: The tasks to grade against (default: the built-in tasks).
        known: Results this process computed for records it saved itself (not replayed again).
        write_counts: Also write ``counts.json``.
        worlds: Worlds the caller vouches for, by name; other names resolve only to built-in
            worlds at sizes they declare (never a path from the run directory).
        observe: Called with every record verified in its slot (and its path) while the
            scan goes on, so readers computing figures of their own (trusted completion,
            advisories, conditions) replay nothing again and hold no record after it.
        folders: World folders the caller passes as its own trust root, by world name
            (loaded at the run's sizes); never a path from the run directory.

    Raises:
        FileNotFoundError: when ``out`` is not a run directory.
        ValueError: when its manifest is invalid.
    """
    root = Path(out)
    manifest = load_manifest(root)
    by_id = {t.id: t for t in (tasks if tasks is not None else load_tasks())}
    loader = _Worlds(manifest.sizes, worlds, folders)
    index, _ = read_index(root)
    slots: list[SlotResult] = []
    for task_id in manifest.tasks:
        tries = failed_tries_by_sample(record_path(root, task_id, 0).parent)
        for sample in range(manifest.samples):
            path = record_path(root, task_id, sample)
            done = (known or {}).get(path)
            if done is None:
                slot = _Slot(
                    task_id=task_id,
                    sample=sample,
                    seed=sample_seed(manifest.seed, task_id, sample),
                    revision=manifest.revision.id,
                    entry=index.get((task_id, sample)),
                    task=by_id.get(task_id),
                    retries=tries.get(str(sample), ()),
                )
                done = _judge_slot(path, slot, loader, observe)
            slots.append(done)
    counts = count_slots(slots)
    if write_counts:
        write_json(root / COUNTS, counts)
    families = {t: by_id[t].family if t in by_id else "" for t in manifest.tasks}
    return RunScan(out=str(root), manifest=manifest, slots=slots, counts=counts, families=families)


def count_slots(slots: Sequence[SlotResult]) -> RunCounts:
    """The counts over judged slots: every scheduled slot lands in exactly one denominator."""
    by_outcome: dict[str, int] = {}
    by_evidence: dict[str, int] = {}
    executed = valid = invalid = passed = failed = not_graded = retried = 0
    for slot in slots:
        retried += slot.retried
        if slot.evidence == "missing":
            continue
        executed += 1
        if slot.outcome:
            by_outcome[slot.outcome] = by_outcome.get(slot.outcome, 0) + 1
        by_evidence[slot.evidence] = by_evidence.get(slot.evidence, 0) + 1
        if not slot.counted:
            invalid += 1
            continue
        valid += 1
        if slot.passed is None:
            not_graded += 1
        elif slot.passed:
            passed += 1
        else:
            failed += 1
    return RunCounts(
        scheduled=len(slots),
        executed=executed,
        valid=valid,
        invalid=invalid,
        retried=retried,
        missing=len(slots) - executed,
        by_outcome=by_outcome,
        by_evidence=by_evidence,
        passed=passed,
        failed=failed,
        not_graded=not_graded,
    )


def open_run_directory(
    root: Path, revision: Revision, fresh: RunManifest, workers: int
) -> RunManifest:
    """Write the manifest of a new run, or add this execution's context to a resumed one."""
    context = RunContext(
        out=str(root),
        started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        host=socket.gethostname(),
        pid=os.getpid(),
        workers=workers,
        python=platform.python_version(),
    )
    if (root / MANIFEST).is_file():
        check_resumable(root, revision)
        previous = load_manifest(root)
        manifest = msgspec.structs.replace(previous, contexts=[*previous.contexts, context])
    else:
        root.mkdir(parents=True, exist_ok=True)
        manifest = msgspec.structs.replace(fresh, contexts=[context])
    write_json(root / MANIFEST, manifest)
    return manifest


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


def bound_records(out: str | Path, tasks: Iterable[Task] | None = None) -> frozenset[Path]:
    """Resolved paths of the records `scan_run` verifies in their slots (bound, replayed)."""
    paths: set[Path] = set()
    scan_run(out, tasks, write_counts=False, observe=lambda path, _: paths.add(path.resolve()))
    return frozenset(paths)
