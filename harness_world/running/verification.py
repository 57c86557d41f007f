"""Verifying record files, folders and run directories: one row per record, and their counts.

`verify_paths` is what ``verify`` does, in order, each step able to refuse before any record
is replayed:

1. plan: which paths are run directories (a ``manifest.json``) and which record files the
   others hold (`plan_verification`); a folder laid out as a run but without its manifest is
   refused unless loose records were asked for;
2. provenance: every run is opened by the one reader (`harness_world.running.reader`: its
   manifest, index, signature and reviews read once each), and with a trusted key each run's
   signature is checked over exactly those bytes (`open_runs`); a run that fails it is
   reported slot by slot as ``ungraded`` and nothing of it is replayed;
3. judge: the one `Verifier` (within the caller's `TrustRoot`, against the caller's tasks,
   read only now) judges every slot of every run from the bytes opened in step 2 (strays
   listed) and every loose file, here or mapped over Ray;
4. pins: with a pin file, records of tasks it does not pin are not graded evidence.

Each record becomes a `VerifyRow`; the `VerifyReport` holds them with their counts (what
``verify --json`` prints).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol

import attrs
import msgspec

from harness_world.engine.limits import REPLAY_CALLS, REPLAY_WORK
from harness_world.engine.world import World
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import RecordError, load_record
from harness_world.grading.grade import CriterionVerdict, PolicyCheck
from harness_world.grading.judgement_cache import JudgementCache
from harness_world.grading.layers import LayeredResult
from harness_world.grading.task import Task
from harness_world.grading.verifier import (
    FileVerdict,
    Measure,
    SlotResult,
    TrustRoot,
    Verifier,
    WorldRefused,
)
from harness_world.grading.verify import Verification
from harness_world.registry import registry, resolve
from harness_world.running.pins import Pins, check_pins, load_pins
from harness_world.running.reader import OpenRun, RunReader, RunReadError, SlotMapper, open_run
from harness_world.running.rundir import MANIFEST, discover_records

__all__ = [
    "EvidenceCounts",
    "GradeCounts",
    "Grading",
    "HarnessCheck",
    "HarnessCounts",
    "RowProgress",
    "VerifyError",
    "VerifyOptions",
    "VerifyPlan",
    "VerifyReport",
    "VerifyRow",
    "file_row",
    "open_runs",
    "plan_verification",
    "slot_row",
    "verify_exit_code",
    "verify_paths",
]

_STRAY_FILE = "not a scheduled slot of this run (a foreign or duplicated record)"
_STRAY_LINE = "an index line for a slot this run does not schedule (the manifest was cut?)"


class VerifyError(HarnessWorldError, ValueError):
    """The paths or options cannot be verified as given: an input error, not evidence."""


class HarnessCheck(msgspec.Struct, frozen=True, kw_only=True):
    """The harness layer of one record's grade.

    Attributes:
        checked: How many harness-layer criteria were checked (0: not graded).
        failed: The failed ones, each ``id: detail``.
    """

    checked: int = 0
    failed: list[str] = []


class VerifyRow(msgspec.Struct, frozen=True, kw_only=True):
    """One record (a slot of a run, a loose file, or a stray) as ``verify`` reports it.

    Attributes:
        path: The record file (a stray index line: the index and its slot).
        task: Its task id (empty when the record could not be read, or for a stray).
        sample: Its sample index (empty when unknown).
        outcome: How execution ended (empty when unknown).
        evidence: ``verified``, ``ungraded`` or ``lost`` (a missing slot is lost).
        grade: ``passed``, ``passed_automated`` (automated criteria passed, prose pending
            review: not a pass), ``failed`` or ``–`` (not graded).
        first_problem: Why it is not verified, why it failed, or why it is not graded.
        reasons: One line per failed criterion, whole (`id: detail`).
        not_reviewed: The prose criteria standing open until a person reviews them.
        harness: Its harness layer.
        policy: Its task's policy sheet, checked and broken rules (unset, and left out of
            JSON, when the task has none or the record was not graded).
        mismatches: What replay found different (the first 20), for loose files.
        verdicts: Every criterion's verdict of the agent grade: for a loose file, and for a run's
            record that failed grading (empty with ``first_problem`` saying why when evidence
            did not verify, the record is not graded, or its verdicts cannot be listed).
        layers: The record read as two score sheets after admission: admission and its
            reasons, both verdict vectors, bypass notes, activated links, the task's dimension
            (null unless the evidence verified and the task is known).
    """

    path: str
    task: str = ""
    sample: int | str = ""
    outcome: str = ""
    evidence: str
    grade: str = "–"
    first_problem: str = ""
    reasons: list[str] = []
    not_reviewed: list[str] = []
    harness: HarnessCheck = msgspec.field(default_factory=HarnessCheck)
    policy: PolicyCheck | msgspec.UnsetType = msgspec.UNSET
    mismatches: list[str] = []
    verdicts: list[CriterionVerdict] = []
    layers: LayeredResult | None = None


class EvidenceCounts(msgspec.Struct, frozen=True, kw_only=True):
    """Rows by evidence.

    Attributes:
        verified: Rows whose record replayed identically.
        ungraded: Rows whose evidence is not to be trusted (mismatch, foreign, unpinned).
        lost: Rows without a readable record.
    """

    verified: int
    ungraded: int
    lost: int


class GradeCounts(msgspec.Struct, frozen=True, kw_only=True):
    """Rows by grade (rows not graded are in neither).

    Attributes:
        passed: Rows whose agent grade passed.
        failed: Rows whose agent grade failed.
        pending: Rows whose agent grade is ``passed_automated`` (prose pending review).
    """

    passed: int
    failed: int
    pending: int = 0


class HarnessCounts(msgspec.Struct, frozen=True, kw_only=True):
    """Rows by harness layer.

    Attributes:
        checked: Rows with harness-layer criteria checked.
        failed: Rows with any of them failed.
    """

    checked: int
    failed: int


class VerifyReport(msgspec.Struct, frozen=True, kw_only=True):
    """Every row ``verify`` reports, with its counts.

    Attributes:
        records: One row per slot, loose file and stray, in the order given.
        duplicates: Loose files left out because an earlier file has their digest.
        evidence: Rows by evidence.
        grades: Rows by grade.
        not_reviewed: Prose criteria not reviewed, over every row.
        harness: Rows by harness layer.
    """

    records: list[VerifyRow]
    duplicates: list[str]
    evidence: EvidenceCounts
    grades: GradeCounts
    not_reviewed: int
    harness: HarnessCounts


@attrs.frozen(slots=True)
class Grading:
    """What records are graded against, read only once something is to be judged.

    Attributes:
        tasks: The verifier's tasks by id (None: evidence only, nothing graded).
        seed_file: A seed file replacing the seed of every world loaded (None: the worlds').
        starts: Worlds the caller built itself, by name (other start states its tasks name).
    """

    tasks: dict[str, Task] | None
    seed_file: Path | None = None
    starts: Mapping[str, World] = attrs.field(factory=dict)


class RowProgress(Protocol):
    """Told of each row the moment its record is judged."""

    def advance(self, note: str, row: VerifyRow) -> None:
        """One more record judged: ``note`` is its file name."""


@attrs.frozen(slots=True)
class VerifyOptions:
    """How records are verified: the reader's trust root, bounds, provenance and executor.

    Attributes:
        grading: Gives the tasks and seed file, called once if anything is to be judged (so
            a run refused for its provenance loads no task).
        world: The verifier's own world (a built-in name or a folder) for every record.
        size: The seed size for ``world``.
        loose: Verify a folder with ``records/`` but no manifest as loose records.
        pin: A pin file the verifier's worlds and tasks must match.
        trust_key: An Ed25519 public key that must have signed every run directory's index.
        max_calls: Records with more calls than this are refused before any replay.
        max_work: Rows a record's replay may examine before it is stopped (lost).
        executor: ``local``, or a verifier an extension registers (``ray``: records judged
            in batches of Ray tasks).
        address: The Ray cluster (``ray`` only; None: a local Ray).
        ray_batch: Records per Ray task (``ray`` only; None: the default).
        cache: The verifier's judgement cache (None: every slot judged afresh; Ray and loose
            files never use it).
        workers: Worker processes judging each run's slots, in batches (1: here).
        keep: Figures taken from each verified final record and cached with its judgement,
            for the readers after this one (the command line keeps the trusted summary that
            ``compare`` and ``gate`` read, so they replay nothing after ``verify``); taken
            only where judgements are cached (the local executor with a cache).
    """

    grading: Callable[[], Grading]
    world: str | None = None
    size: str | None = None
    loose: bool = False
    pin: Path | None = None
    trust_key: Path | None = None
    max_calls: int = REPLAY_CALLS
    max_work: int = REPLAY_WORK
    executor: str = "local"
    address: str | None = None
    ray_batch: int | None = None
    cache: JudgementCache | None = None
    workers: int = 1
    keep: tuple[Measure, ...] = ()


@attrs.frozen(slots=True)
class VerifyPlan:
    """What the given paths hold.

    Attributes:
        runs: Run directories (each with its manifest), in the order given.
        files: Loose record files.
        duplicates: Loose files left out as repeating an earlier file's digest.
    """

    runs: list[Path]
    files: list[Path]
    duplicates: list[Path] = attrs.field(factory=list)


def verify_paths(
    paths: Sequence[Path],
    options: VerifyOptions,
    progress: Callable[[int], RowProgress] | None = None,
) -> VerifyReport:
    """Verify every record under ``paths``: run directories slot by slot, other files loose.

    Args:
        paths: Record files, folders of them, or run directories.
        options: The verifier's trust root, bounds, provenance and executor.
        progress: Gives, for each run directory and then for the loose files, the progress
            told of each of their rows (with how many there will be).

    Raises:
        VerifyError: for paths or options that cannot be used (nothing is reported then).
        WorldRefused: when the verifier's own world does not load.
    """
    plan = plan_verification(paths, loose=options.loose)
    if options.trust_key and plan.files:
        raise VerifyError("--trust-key checks run directories only (their signed index)")
    opened = open_runs(plan.runs, options.trust_key)
    rows, pins = _judge(plan, opened, options, progress)
    if pins is not None:
        rows = [_unpinned(row, pins) for row in rows]
    return _report(rows, plan.duplicates)


def plan_verification(paths: Sequence[Path], *, loose: bool = False) -> VerifyPlan:
    """Sort ``paths`` into run directories and loose record files.

    Args:
        paths: Record files, folders of them, or run directories.
        loose: Whether a folder with ``records/`` but no manifest may be read as loose files
            (records with one digest are then counted once).

    Raises:
        VerifyError: for a path that does not exist, nothing to verify, or a run directory
            whose manifest is gone (without ``loose``).
    """
    runs = [p for p in paths if p.is_dir() and (p / MANIFEST).exists()]
    _refuse_unmanifested(paths, runs, loose=loose)
    try:
        files = discover_records([p for p in paths if p not in runs])
    except FileNotFoundError as exc:
        raise VerifyError(str(exc)) from None
    duplicates: list[Path] = []
    if loose:
        files, duplicates = _once_per_digest(files)
    if not files and not runs:
        raise VerifyError(f"no record files under {', '.join(map(str, paths))}")
    return VerifyPlan(runs=runs, files=files, duplicates=duplicates)


def _refuse_unmanifested(paths: Sequence[Path], runs: list[Path], *, loose: bool) -> None:
    """A folder laid out as a run (``records/``) but without its manifest is refused.

    Its slots, index and signature are what decide which records are graded; without the
    manifest they cannot be checked, so verifying its files loosely would let a forger delete
    the manifest to drop those checks. ``loose`` asks for exactly that, knowingly.
    """
    for path in paths:
        if path in runs or loose or not (path.is_dir() and (path / "records").is_dir()):
            continue
        raise VerifyError(
            f"{path}: has records/ but no {MANIFEST}: not a run directory (its slots, index and "
            "signature cannot be checked); give --loose to verify its files as loose records"
        )


def _once_per_digest(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """Loose records with one digest counted once: the first file kept, the rest listed."""
    seen: set[str] = set()
    kept: list[Path] = []
    duplicates: list[Path] = []
    for path in files:
        try:
            digest = load_record(path).digest
        except RecordError:
            kept.append(path)  # unreadable: verified (and reported lost) on its own
            continue
        if digest in seen:
            duplicates.append(path)
        else:
            seen.add(digest)
            kept.append(path)
    return kept, duplicates


def open_runs(runs: Sequence[Path], trust_key: Path | None) -> list[OpenRun]:
    """Provenance first: every run opened (its files read once) before any record is replayed.

    Every manifest is read and checked against its revision, and with ``trust_key`` each run's
    signature is checked over the bytes read, before any task is loaded or record replayed. A
    run whose signature fails is judged later slot by slot as ``ungraded`` from those bytes.

    Raises:
        VerifyError: for an unreadable run directory or an unusable key.
    """
    from harness_world.evidence.signing import SigningError

    opened: list[OpenRun] = []
    for root in runs:
        try:
            opened.append(open_run(root, trust_key=trust_key))
        except RunReadError as exc:
            raise VerifyError(str(exc)) from None
        except SigningError as exc:
            raise VerifyError(f"--trust-key: {exc}") from None
    return opened


def _judge(
    plan: VerifyPlan,
    opened: list[OpenRun],
    options: VerifyOptions,
    progress: Callable[[int], RowProgress] | None,
) -> tuple[list[VerifyRow], Pins | None]:
    """The rows of every run and file, in order; tasks are loaded only if anything is judged."""
    if not plan.files and all(run.provenance for run in opened) and options.pin is None:
        refused = RunReader(Verifier(tasks=None))
        return [row for run in opened for row in _verify_run(run, refused, progress, None)], None
    for option, value in (("--max-calls", options.max_calls), ("--max-work", options.max_work)):
        if value < 1:
            raise VerifyError(f"{option} must be at least 1, not {value}")
    grading = options.grading()
    root = TrustRoot.of(options.world, options.size, grading.seed_file)
    verifier = Verifier(
        root,
        grading.tasks,
        given=grading.starts,
        max_calls=options.max_calls,
        max_work=options.max_work,
    )
    if options.executor == "local":
        verifier.cache = options.cache
    pins = _pins(options.pin, grading.tasks, verifier)
    reader = RunReader(verifier, trust_key=options.trust_key, workers=options.workers)
    rows: list[VerifyRow] = []
    with _remote(options, verifier) as remote:
        for run in opened:
            rows += _verify_run(run, reader, progress, remote, options.keep)
        rows += _verify_files(plan.files, verifier, progress, remote)
    return rows, pins


class RemoteVerifier(Protocol):
    """Verification performed elsewhere (an extension's executor, such as Ray's)."""

    @property
    def map_slots(self) -> SlotMapper:
        """Where a run's slots are judged (a `harness_world.running.reader.SlotMapper`)."""

    def files(
        self, paths: Sequence[Path], on_verdict: Callable[[int, FileVerdict], None] | None = None
    ) -> list[FileVerdict]:
        """Verify record files outside any run directory, in order."""


RemoteFactory = Callable[["VerifyOptions", Verifier], AbstractContextManager[RemoteVerifier]]
"""What an extension registers as a verifier (`harness_world.registry.Registry.verifier`):
given the options and the local verifier, a context holding the remote one; it raises
`VerifyError` when it cannot start or loses work, so nothing is reported as verified."""


@contextmanager
def _remote(options: VerifyOptions, verifier: Verifier) -> Iterator[RemoteVerifier | None]:
    """With an extension's executor (``ray``), the verifier it maps; else None (judged here)."""
    if options.executor == "local":
        yield None
        return
    reference = registry().verifiers.get(options.executor)
    if reference is None:
        known = ", ".join(["local", *registry().verifiers])
        raise VerifyError(f"no verify executor {options.executor!r} (known: {known})")
    factory: RemoteFactory = resolve(reference)
    with factory(options, verifier) as remote:
        yield remote


def _pins(path: Path | None, tasks: dict[str, Task] | None, verifier: Verifier) -> Pins | None:
    """The pin file, checked against the verifier's own worlds and tasks before any work."""
    if path is None:
        return None
    try:
        pins = load_pins(path)
    except ValueError as exc:
        raise VerifyError(f"--pin: {exc}") from None
    problems = check_pins(pins, verifier.world, tasks)
    if problems:
        raise VerifyError("refused by --pin: " + "; ".join(problems))
    return pins


def _unpinned(row: VerifyRow, pins: Pins) -> VerifyRow:
    """A record of a task the pin file does not pin is not graded evidence under it."""
    if not row.task or row.task in pins.tasks:
        return row
    return msgspec.structs.replace(
        row,
        evidence="ungraded",
        grade="–",
        first_problem=f"task {row.task!r} is not pinned by --pin",
        reasons=[],
        layers=None,
    )


def _verify_files(
    files: list[Path],
    verifier: Verifier,
    progress: Callable[[int], RowProgress] | None,
    remote: RemoteVerifier | None,
) -> list[VerifyRow]:
    tick = progress(len(files)) if progress is not None else None

    def arrived(index: int, verdict: FileVerdict) -> None:
        if tick is not None:
            tick.advance(files[index].name, file_row(verdict))

    if remote is not None:
        return [file_row(v) for v in remote.files(files, arrived)]
    rows: list[VerifyRow] = []
    for index, path in enumerate(files):
        verdict = verifier.check_file(path)
        if verdict.refused:
            raise WorldRefused(verdict.refused)
        arrived(index, verdict)
        rows.append(file_row(verdict))
    return rows


def _verify_run(
    run: OpenRun,
    reader: RunReader,
    progress: Callable[[int], RowProgress] | None,
    remote: RemoteVerifier | None,
    keep: Sequence[Measure] = (),
) -> list[VerifyRow]:
    """Every slot of a run directory, each record checked against its slot; strays listed."""
    manifest = run.manifest
    if not run.provenance:
        reader.verifier.explicit_name()  # the verifier's own world loads, or nothing is judged
    tick = progress(len(manifest.tasks) * manifest.samples) if progress is not None else None

    def judged(slot: SlotResult) -> None:
        if tick is not None:
            tick.advance(Path(slot.path).name, slot_row(slot))

    scan = reader.read(
        run,
        mapper=remote.map_slots if remote is not None else None,
        progress=judged,
        refused="judge",
        # kept for the cache only: figures there is no cache to keep in are not taken
        measure=[_Kept(m) for m in keep]
        if remote is None and reader.verifier.cache is not None
        else [],
    )
    if run.provenance:  # nothing of it counts: no stray walk
        return [slot_row(s) for s in scan.slots]
    rows = [slot_row(s) for s in scan.slots]
    rows += [
        VerifyRow(path=path, evidence="ungraded", first_problem=_STRAY_FILE)
        for path in scan.stray_files
    ]
    rows += [
        VerifyRow(path=where, evidence="ungraded", first_problem=_STRAY_LINE)
        for where in scan.stray_lines
    ]
    return rows


@attrs.frozen(slots=True)
class _Kept:
    """A measure taken for the cache only: its figures are not read here."""

    measure: Measure

    def take(self, path: Path, slot: tuple[str, int], figure: object) -> None:
        """Nothing: the figure is in the cache with its judgement."""


def slot_row(slot: SlotResult) -> VerifyRow:
    """The row of one judged slot of a run directory (a missing slot is ``lost``)."""
    evidence = "lost" if slot.evidence == "missing" else slot.evidence
    grade = slot.state or "–"
    problem = slot.reason if evidence != "verified" else ""
    if slot.evidence == "missing":
        problem = f"missing: {slot.reason}"
    if slot.not_graded:
        problem = f"not graded: {slot.not_graded}"
    return VerifyRow(
        path=slot.path,
        task=slot.task_id,
        sample=slot.sample,
        outcome=slot.outcome,
        evidence=evidence,
        grade=grade,
        first_problem=problem or ", ".join(r.split(":", 1)[0] for r in slot.failed),
        reasons=list(slot.failed),
        not_reviewed=slot.not_reviewed,
        harness=HarnessCheck(checked=slot.harness_checked, failed=slot.harness_failed),
        policy=slot.policy,
        verdicts=list(slot.verdicts),
        layers=slot.layers,
    )


def file_row(verdict: FileVerdict) -> VerifyRow:
    """The row of one loose record file (task, sample and outcome only when it was read)."""
    result: Verification = verdict.verification
    grade = result.grade
    problem = result.reason if result.evidence != "verified" else ""
    if result.mismatches:
        problem = str(result.mismatches[0])
    if result.not_graded:
        problem = f"not graded: {result.not_graded}"
    if grade is not None and not grade.passed:
        problem = ", ".join(grade.failed)
    return VerifyRow(
        path=verdict.path,
        task=verdict.task_id if verdict.read else "",
        sample=verdict.sample if verdict.read else "",
        outcome=verdict.outcome if verdict.read else "",
        evidence=result.evidence,
        grade="–" if grade is None else grade.state,
        first_problem=problem,
        reasons=grade.reasons() if grade else [],
        not_reviewed=grade.not_reviewed if grade else [],
        harness=HarnessCheck(
            checked=len(grade.harness) if grade else 0,
            failed=grade.harness_failed if grade else [],
        ),
        policy=grade.policy_check() if grade else msgspec.UNSET,
        mismatches=[str(m) for m in result.mismatches[:20]],
        verdicts=list(grade.verdicts) if grade else [],
        layers=verdict.layers,
    )


def _report(rows: list[VerifyRow], duplicates: list[Path]) -> VerifyReport:
    return VerifyReport(
        records=rows,
        duplicates=[str(p) for p in duplicates],
        evidence=EvidenceCounts(
            verified=sum(r.evidence == "verified" for r in rows),
            ungraded=sum(r.evidence == "ungraded" for r in rows),
            lost=sum(r.evidence == "lost" for r in rows),
        ),
        grades=GradeCounts(
            passed=sum(r.grade == "passed" for r in rows),
            failed=sum(r.grade == "failed" for r in rows),
            pending=sum(r.grade == "passed_automated" for r in rows),
        ),
        not_reviewed=sum(len(r.not_reviewed) for r in rows),
        harness=HarnessCounts(
            checked=sum(bool(r.harness.checked) for r in rows),
            failed=sum(bool(r.harness.failed) for r in rows),
        ),
    )


def verify_exit_code(
    report: VerifyReport, *, require_pass: bool = False, require_harness: bool = False
) -> int:
    """``verify``'s exit code: 1 for evidence not verified, else 0 unless a requirement fails.

    Args:
        report: What was verified.
        require_pass: Also 1 unless there was something to grade and every record passed its
            automated criteria (a ``passed_automated`` row does: ``verify`` reads no review,
            and names those rows; rates count them in ``report``, ``compare`` and ``gate``).
        require_harness: As ``require_pass``, and 1 too when any harness-layer criterion failed.
    """
    rows = report.records
    if report.evidence.ungraded or report.evidence.lost:
        return 1
    strict = require_pass or require_harness
    passed = report.grades.passed + report.grades.pending
    if strict and (not rows or report.grades.failed or passed < len(rows)):
        return 1
    return 1 if require_harness and any(r.harness.failed for r in rows) else 0
