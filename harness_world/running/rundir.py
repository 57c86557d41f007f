"""The run directory: its layout, its manifest, and what a judged run holds.

A run directory holds ``manifest.json`` (the revision and its components, plus context),
``records/<task>/<sample>.json`` (one record per scheduled slot, written atomically the moment
the attempt ends; tries whose infrastructure failed beside it as ``<sample>.failed-<n>.json``),
``index.jsonl`` (the append-only binding of each record, final or earlier try, to its slot,
written ahead of the record), ``pins.json`` (world and task hashes, for ``verify --pin``),
optionally ``index.sig.json`` (an Ed25519 signature over the index), ``counts.json`` (what
happened to every scheduled slot) and ``layered.jsonl`` (one
`harness_world.grading.LayeredResult` a line, in slot order, for every slot whose record
verified against a known task: derived, like the counts, and written beside them by the
process that wrote the run). Reading a run is `harness_world.running.reader`'s alone.
"""

from __future__ import annotations

import hashlib
import os
import platform
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import msgspec

from harness_world.engine.limits import task_id_problem
from harness_world.evidence.runfiles import MANIFEST_BYTES, RunFileError, read_run_file
from harness_world.grading.verifier import SlotResult
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
    "check_resumable",
    "count_slots",
    "decode_manifest",
    "discover_records",
    "load_manifest",
    "open_run_directory",
    "read_json",
    "record_path",
    "sample_seed",
    "write_counts",
    "write_json",
    "write_lines",
]

MANIFEST = "manifest.json"
COUNTS = "counts.json"
LAYERED = "layered.jsonl"
MAX_SAMPLES = 1_000_000
MAX_TASKS = 100_000
MAX_SLOTS = 10_000_000


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
    track: str = "fresh"


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
        passed: Valid records whose grade passed (prose reviewed, or none).
        failed: Valid records whose grade failed.
        not_graded: Valid records without a grade: their task is unknown or has changed since
            (a changed task is a different task).
        pending: Valid records whose grade is ``passed_automated``: automated criteria passed,
            prose unreviewed. ``passed + pending + failed + not_graded == valid``.
        pending_counted: Whether the reader counted the pending records as passed
            (``--count-pending``); by default they are not passes.
        reviewed: Valid records whose prose criteria review records decided (pass or fail).
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
    pending: int = 0
    pending_counted: bool = False
    reviewed: int = 0

    @property
    def counted_passed(self) -> int:
        """The numerator of pass rates: passed, and pending only when counted as passed."""
        return self.passed + (self.pending if self.pending_counted else 0)


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
        provenance: Why the run's provenance was refused (every slot is then ``ungraded``);
            empty when it was accepted or not checked.
        trusted: Whether the reader's trusted key signed the bytes every slot was judged from.
        stray_files: Record files that are no scheduled slot and no kept try of one.
        stray_lines: Index lines (``index.jsonl [task/sample]``) for slots the run does not
            schedule.
        reviews: The bytes of the run's ``reviews.jsonl`` as read with the rest (None: none).
        reviews_head: The bytes of its head (``reviews.head.json``; None: none).
    """

    out: str
    manifest: RunManifest
    slots: list[SlotResult]
    counts: RunCounts
    families: dict[str, str]
    weights: dict[str, float] = {}
    critical: list[str] = []
    provenance: str = ""
    trusted: bool = False
    stray_files: list[str] = []
    stray_lines: list[str] = []
    reviews: bytes | None = None
    reviews_head: bytes | None = None


def record_path(out: Path, task_id: str, sample: int) -> Path:
    """Where the final record of one attempt lives (ValueError for an unsafe task id)."""
    if task_id_problem(task_id):  # the last line: callers validate ids where they are read
        raise ValueError(f"{out}: no record path for {task_id_problem(task_id)}")
    return out / "records" / task_id / f"{sample}.json"


NOT_RECORDS = frozenset(
    {"manifest.json", "inventory.json", "revision.json", COUNTS, "pins.json", "index.sig.json"}
)
"""Files of a run directory that are not records, whatever folder they are found in."""


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


def load_manifest(out: str | Path) -> RunManifest:
    """Read a run directory's manifest (a reader of the whole run opens it with the rest).

    Raises:
        FileNotFoundError: when there is no manifest.
        ValueError: when it is not a valid manifest, or cannot be read safely.
    """
    path = Path(out) / MANIFEST
    try:
        data = read_run_file(Path(out), MANIFEST, MANIFEST_BYTES)
    except RunFileError as exc:
        raise ValueError(f"{path}: invalid manifest: {exc}") from None
    if data is None:
        raise FileNotFoundError(f"{out}: not a run directory (no {MANIFEST})")
    return decode_manifest(data, path)


def decode_manifest(data: bytes, path: Path) -> RunManifest:
    """A manifest from its bytes, checked as every reader checks it (``path`` names it).

    Raises:
        ValueError: when it is not a valid manifest.
    """
    try:
        manifest = msgspec.json.decode(data, type=RunManifest)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise ValueError(f"{path}: invalid manifest: {exc}") from None
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


def count_slots(slots: Sequence[SlotResult]) -> RunCounts:
    """The counts over judged slots: every scheduled slot lands in exactly one denominator."""
    by_outcome: dict[str, int] = {}
    by_evidence: dict[str, int] = {}
    executed = valid = invalid = passed = failed = not_graded = retried = pending = 0
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
        elif slot.pending:
            pending += 1
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
        pending=pending,
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


def write_counts(scan: RunScan) -> None:
    """Write ``counts.json`` and ``layered.jsonl`` beside the run a writer just judged."""
    root = Path(scan.out)
    write_json(root / COUNTS, scan.counts)
    write_lines(root / LAYERED, [s.layers for s in scan.slots if s.layers is not None])
