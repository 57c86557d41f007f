"""The run directory: its layout, its manifest, and the one pass that judges every slot.

A run directory holds ``manifest.json`` (the revision and its components, plus context),
``records/<task>/<sample>.json`` (one record per scheduled slot, written atomically the moment
the attempt ends; tries whose infrastructure failed beside it as ``<sample>.failed-<n>.json``),
``index.jsonl`` (the append-only binding of each slot to its record's digest, written ahead of
the record), ``pins.json`` (world and task hashes, for ``verify --pin``), optionally
``index.sig.json`` (an Ed25519 signature over the index), ``counts.json`` (what happened to
every scheduled slot) and ``layered.jsonl`` (one `harness_world.grading.LayeredResult` a line,
in slot order, for every slot whose record verified against a known task: derived, like the
counts, and written beside them). `plan_slots` reads what binds each record to its slot
(task, sample, derived seed, the manifest's revision and the slot's indexed digest); the one
`Verifier` (`harness_world.grading.verifier`) judges it. `scan_run` is the only walk over a run
directory: `run`'s final counts, `report`, `compare` and `verify` read its result, so each
record is replayed once per command.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import socket
import stat
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from harness_world.engine.limits import task_id_problem
from harness_world.engine.world import World
from harness_world.evidence.binding import IndexEntry, read_index
from harness_world.evidence.record import Usage
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verifier import (
    Observer,
    Slot,
    SlotResult,
    TrustRoot,
    Verifier,
    tries_usage,
)
from harness_world.running.revision import (
    Revision,
    RevisionMismatch,
    describe_mismatch,
    diff_revisions,
    revision_problem,
)

__all__ = [
    "COUNTS",
    "LAYERED",
    "MANIFEST",
    "NOT_RECORDS",
    "RunContext",
    "RunCounts",
    "RunManifest",
    "RunScan",
    "SlotMapper",
    "bound_records",
    "check_resumable",
    "count_slots",
    "discover_records",
    "judge_here",
    "load_manifest",
    "open_run_directory",
    "plan_slots",
    "read_json",
    "record_path",
    "sample_seed",
    "scan_run",
    "slot_for",
    "stray_records",
    "write_json",
    "write_lines",
]

MANIFEST = "manifest.json"
COUNTS = "counts.json"
LAYERED = "layered.jsonl"
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
            instance given the tasks one after another).
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


class RunCounts(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to every scheduled attempt: explicit denominators.

    Attributes:
        scheduled: Tasks × samples.
        executed: Attempts with a final record on disk.
        valid: Verified records whose outcome counts as an attempt (every outcome but
            ``infrastructure``: `harness_world.grading.verifier.COUNTED`): the denominator of
            quality figures.
        invalid: Records that are not verified, or ended as ``infrastructure``.
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
        weights: The declared weight of each scheduled task whose weight is not 1 (the
            reader's task files; see `harness_world.grading.Task.weight`).
        critical: The scheduled tasks the reader's task files mark ``critical``, sorted.
    """

    out: str
    manifest: RunManifest
    slots: list[SlotResult]
    counts: RunCounts
    families: dict[str, str]
    weights: dict[str, float] = {}
    critical: list[str] = []


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


NOT_RECORDS = frozenset(
    {"manifest.json", "inventory.json", "revision.json", COUNTS, "pins.json", "index.sig.json"}
)
"""Files of a run directory that are not records, whatever folder they are found in."""
_KEPT_TRIES = re.compile(r"(\d+)\.failed-\d+\.json")
_FINAL = re.compile(r"(\d+)\.json")


def discover_records(paths: Iterable[Path]) -> list[Path]:
    """Expand files and folders into record files, sorted within each folder.

    A folder's ``records/`` is searched when it has one; hidden files and a run directory's
    own files (`NOT_RECORDS`) are left out.

    Raises:
        FileNotFoundError: for a path that does not exist.
    """
    found: list[Path] = []
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"no such file or folder: {path}")
        if path.is_file():
            found.append(path)
            continue
        root = path / "records" if (path / "records").is_dir() else path
        found += sorted(
            p
            for p in root.rglob("*")
            if p.is_file()
            and p.suffix in (".json", ".msgpack")
            and not p.name.startswith(".")
            and p.name not in NOT_RECORDS
        )
    return found


def stray_records(root: Path, manifest: RunManifest) -> list[Path]:
    """Record files of a run directory that are no scheduled slot and no kept earlier try.

    Kept tries are those beside a scheduled slot: ``<sample>.failed-<n>.json`` (an
    infrastructure failure ``run`` executed again). An attempt an MCP client abandoned is its
    slot's final record, never set aside. One walk over ``records/``, whatever the run's size.
    """
    scheduled = set(manifest.tasks)
    strays: list[Path] = []
    for path in discover_records([root]):
        try:
            task_id, name = path.relative_to(root / "records").parts
        except ValueError:  # deeper or shallower than records/<task>/<file>
            strays.append(path)
            continue
        match = _FINAL.fullmatch(name) or _KEPT_TRIES.fullmatch(name)
        sample = match[1] if match is not None else ""
        canonical = sample == str(int(sample)) if sample else False  # "007.json" is no slot
        if task_id not in scheduled or not canonical or int(sample) >= manifest.samples:
            strays.append(path)
    return strays


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
    problem = revision_problem(
        manifest.revision, tasks=manifest.tasks, samples=manifest.samples, seed=manifest.seed
    )
    if problem:
        raise ValueError(f"{path}: invalid manifest: {problem}")
    return manifest


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    tmp.replace(path)


T = TypeVar("T")


def write_json(path: Path, value: Any) -> None:
    """Write canonical, indented JSON atomically (temp file, fsync, rename)."""
    _write_atomic(
        path, msgspec.json.format(msgspec.json.encode(value, order="sorted"), indent=1) + b"\n"
    )


def read_json(path: Path, kind: type[T], what: str, error: Callable[[str], Exception]) -> T:
    """A JSON file decoded as ``kind``; a failure is ``error(message)`` naming the file.

    Args:
        path: The file.
        kind: What it holds.
        what: Its name in words, for the message (``crossed manifest``).
        error: Makes the exception raised.
    """
    try:
        return msgspec.json.decode(path.read_bytes(), type=kind)
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise error(f"{path}: invalid {what}: {exc}") from None


def write_lines(path: Path, values: Sequence[Any]) -> None:
    """Write one compact JSON value a line atomically (temp file, fsync, rename)."""
    _write_atomic(path, b"".join(msgspec.json.encode(v) + b"\n" for v in values))


SlotMapper = Callable[[Verifier, Sequence[Slot], Mapping[str, str]], list[SlotResult]]
"""How a scan's slots are judged: every slot through `Verifier.judge`, in any order or place,
the results in the slots' order (`judge_here` in this process; Ray maps it over workers)."""


def plan_slots(root: Path, manifest: RunManifest) -> list[Slot]:
    """Every scheduled slot of a run directory in manifest order, with what binds its record.

    The index is read once and each task's folder listed once (its failed tries); the slot's
    tool-call budget override is the run's own (``manifest.limits``).
    """
    index, _ = read_index(root)
    slots: list[Slot] = []
    for task_id in manifest.tasks:
        tries = failed_tries_by_sample(record_path(root, task_id, 0).parent)
        for sample in range(manifest.samples):
            entry = index.get((task_id, sample))
            slots.append(_slot(root, manifest, task_id, sample, entry, tries.get(str(sample))))
    return slots


def slot_for(root: Path, manifest: RunManifest, task_id: str, sample: int) -> Slot | None:
    """One slot of a run directory, planned as `plan_slots` plans it (None: not scheduled)."""
    if task_id not in manifest.tasks or not 0 <= sample < manifest.samples:
        return None
    index, _ = read_index(root)
    tries = failed_tries_by_sample(record_path(root, task_id, 0).parent).get(str(sample))
    return _slot(root, manifest, task_id, sample, index.get((task_id, sample)), tries)


def _slot(
    root: Path,
    manifest: RunManifest,
    task_id: str,
    sample: int,
    entry: IndexEntry | None,
    tries: list[Path] | None,
) -> Slot:
    override = manifest.limits.get("tool_calls")
    calls = override if isinstance(override, int) and not isinstance(override, bool) else None
    earlier = tries or []
    spent = tries_usage(earlier) if earlier else Usage()
    return Slot(
        path=str(record_path(root, task_id, sample)),
        task_id=task_id,
        sample=sample,
        seed=sample_seed(manifest.seed, task_id, sample),
        revision=manifest.revision.id,
        entry=entry,
        tool_calls=calls,
        retried=len(earlier),
        retry_cost=spent.cost + spent.uncertain_cost,
        earlier=spent,
    )


def judge_here(
    verifier: Verifier,
    slots: Sequence[Slot],
    sizes: Mapping[str, str],
    *,
    observe: Observer | None = None,
    progress: Callable[[SlotResult], None] | None = None,
) -> list[SlotResult]:
    """Judge slots one after another in this process (the `SlotMapper` a scan uses by default)."""
    results: list[SlotResult] = []
    for slot in slots:
        results.append(verifier.judge(slot, sizes, observe=observe))
        if progress is not None:
            progress(results[-1])
    return results


def scan_run(
    out: str | Path,
    tasks: Iterable[Task] | None = None,
    *,
    known: Mapping[Path, SlotResult] | None = None,
    write_counts: bool = True,
    worlds: Mapping[str, World] | None = None,
    observe: Observer | None = None,
    folders: Mapping[str, Path] | None = None,
    verifier: Verifier | None = None,
    mapper: SlotMapper | None = None,
    progress: Callable[[SlotResult], None] | None = None,
) -> RunScan:
    """Judge every scheduled slot of a run directory once, each record against its slot.

    Args:
        out: The run directory.
        tasks: The tasks to grade against (default: the built-in tasks).
        known: Results this process computed for records it saved itself (not replayed again).
        write_counts: Also write ``counts.json`` and ``layered.jsonl``.
        worlds: Worlds the caller vouches for, by name; other names resolve only to built-in
            worlds at sizes they declare (never a path from the run directory).
        observe: Called with every record verified in its slot (and its path) while the
            scan goes on, so readers computing figures of their own (trusted completion,
            advisories, conditions) replay nothing again and hold no record after it.
        folders: World folders the caller passes as its own trust root, by world name
            (loaded at the run's sizes); never a path from the run directory.
        verifier: The verifier to judge with (replaces ``tasks``, ``worlds`` and ``folders``).
        mapper: Where the slots are judged (default: here, one after another; ``observe``
            and ``progress`` apply only then).
        progress: Called with each slot's result as it is judged here.

    Raises:
        FileNotFoundError: when ``out`` is not a run directory.
        ValueError: when its manifest is invalid.
    """
    root = Path(out)
    manifest = load_manifest(root)
    if verifier is None:
        by_id = {t.id: t for t in (tasks if tasks is not None else load_tasks())}
        verifier = Verifier(TrustRoot.of(folders=folders), by_id, given=dict(worlds or {}))
    done = known or {}
    planned = plan_slots(root, manifest)
    todo = [slot for slot in planned if Path(slot.path) not in done]
    if mapper is None:
        judged = judge_here(verifier, todo, manifest.sizes, observe=observe, progress=progress)
    else:
        judged = mapper(verifier, todo, manifest.sizes)
    fresh = iter(judged)
    slots = [done.get(Path(s.path)) or next(fresh) for s in planned]
    counts = count_slots(slots)
    if write_counts:
        write_json(root / COUNTS, counts)
        write_lines(root / LAYERED, [s.layers for s in slots if s.layers is not None])
    labels = _task_labels(manifest.tasks, verifier.tasks or {})
    return RunScan(out=str(root), manifest=manifest, slots=slots, counts=counts, **labels)


def _task_labels(scheduled: Sequence[str], known: Mapping[str, Task]) -> dict[str, Any]:
    """What the reader's task files say of the scheduled tasks: families, weights, critical."""
    labelled = [known[t] for t in scheduled if t in known]
    return {
        "families": {t: known[t].family if t in known else "" for t in scheduled},
        "weights": {t.id: t.weight for t in labelled if t.weight != 1},
        "critical": sorted(t.id for t in labelled if t.critical),
    }


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
