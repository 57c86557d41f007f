"""A run report with what its HTML page needs beside it: summaries now, records on demand.

The page is built from the report (every slot's judgement) and, per task, the records of that
task's attempts, read when its traces are written and let go after: a 10,000-attempt page holds
one task's records at a time. Each record is read through the run reader, as the bytes its index
line binds (`harness_world.running.reader.read_bound`): a file changed since the scan judged it
is not shown. The checker and the advisories are pure, so computing them again here from a
verified record only recovers what the report did not keep (every criterion's verdict of a
passed attempt, on small runs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from harness_world.analysis.process import (
    AttemptProcess,
    ProcessSummary,
    process_of,
    summarize_process,
)
from harness_world.analysis.report import RunReport
from harness_world.analysis.trace_html import AttemptMarks, Planted, named_rows
from harness_world.analysis.trace_record import TraceRecord, decode_trace
from harness_world.analysis.trusted import TrustedReport, TrustedSummary, trusted_report
from harness_world.engine.canonical import to_json
from harness_world.engine.world import Key, World, WorldError, load_trusted_world
from harness_world.evidence.record import Record, RecordError, decode_record
from harness_world.grading.advice import Advisory, advise
from harness_world.grading.checker import grade as grade_record
from harness_world.grading.grade import Grade
from harness_world.grading.rows import Change
from harness_world.grading.rules.state import Effect, missing_required, net_effects
from harness_world.grading.task import Task, load_tasks, select_targets
from harness_world.grading.trace import trace_view
from harness_world.grading.trusted import trusted_completion
from harness_world.grading.verifier import Slot, SlotResult
from harness_world.running.reader import (
    OpenRun,
    RunReadError,
    collector_paused,
    open_run,
    plan_slots,
    read_bound,
)

__all__ = ["FULL_DETAIL_UP_TO", "Judged", "RunView", "Shown", "TraceSource", "load_run_view"]

FULL_DETAIL_UP_TO = 2_000
"""Up to this many attempts, every verified attempt is graded again for its full verdict list,
its advisories and its trusted-completion summary, and every trace shows results and diff
tables. Above it, advisories are found for the attempts that failed only, and a passed
attempt's trace is one line per call, so that a 10,000-attempt page stays quick to make."""


@attrs.frozen(slots=True)
class Shown:
    """One attempt as its trace is shown: its record (read once) and its full grade.

    Attributes:
        record: The record as the viewer reads it (None: missing, unreadable, or not the file
            its index binds).
        grade: Its full grade, on small runs (None: not graded again here).
    """

    record: TraceRecord | None
    grade: Grade | None = None


@attrs.frozen(slots=True)
class Judged:
    """What one verified attempt did to the world, judged as the state criteria judge it.

    Attributes:
        effects: Every atom of delta and its verdict (required, allowed, unauthorized), the
            checker's own judgement (`harness_world.grading.rules.state.net_effects`).
        missing: The required effects delta lacks, as ``state.required`` names them.
        changes: delta's rows (start and final images), for the values shown beside.
    """

    effects: Sequence[Effect]
    missing: Sequence[str]
    changes: Sequence[Change]


@attrs.define(slots=True)
class TraceSource:
    """Each attempt's record file, read through the run reader: the bytes its index binds.

    Attributes:
        run: The run as its reader opened it (None: nothing to read).
        slots: Its scheduled slots by (task id, sample), bound from that reading of the index.
    """

    run: OpenRun | None
    slots: dict[tuple[str, int], Slot] = attrs.field(factory=dict)

    @classmethod
    def of(cls, run: OpenRun | None) -> TraceSource:
        """The source of ``run``'s records (its slots planned from the index it read)."""
        if run is None:
            return cls(None)
        return cls(run, {(s.task_id, s.sample): s for s in plan_slots(run)})

    def data(self, slot: SlotResult) -> bytes | None:
        """The bytes of a slot's final record, when they are the bytes its index binds."""
        planned = self.slots.get((slot.task_id, slot.sample))
        if self.run is None or planned is None or slot.evidence == "missing":
            return None
        return read_bound(self.run, planned).data


@attrs.frozen(slots=True)
class RunView:
    """A run report with what the HTML needs beside it; records are read task by task.

    Attributes:
        name: The configuration's name (the run folder's by default).
        report: The run report.
        tasks: The known tasks by id (instructions, families).
        summary: Process figures over the valid attempts.
        marks: Each attempt's advisories and the rows its grader used, report order.
        trusted: The run's trusted-completion figures (null when no task declares them or
            they were not computed).
        source: Where each attempt's record is read from, when its trace is written.
        examiner: Grades verified records again for their full verdicts (small runs).
    """

    name: str
    report: RunReport
    tasks: Mapping[str, Task]
    summary: ProcessSummary
    marks: Sequence[AttemptMarks]
    trusted: TrustedReport | None
    source: TraceSource
    examiner: _Examiner

    @property
    def compact(self) -> bool:
        """Whether passed attempts' traces are one line per call (a large run)."""
        return len(self.report.attempts) > FULL_DETAIL_UP_TO

    def shown(self, indices: Iterable[int]) -> list[Shown]:
        """The attempts at ``indices`` (report order) as their traces show them.

        Each record file is read once, here; on small runs a verified record is graded
        again from the same bytes for every criterion's verdict.
        """
        out = []
        for i in indices:
            slot = self.report.attempts[i]
            data = self.source.data(slot)
            trace = None if data is None else decode_trace(data)
            grade = None
            if data is not None and not self.compact and slot.evidence == "verified":
                loaded = self.examiner.load(slot, data)
                grade = None if loaded is None else grade_record(*loaded)
            out.append(Shown(trace, grade))
        return out

    def targets_of(self, task_id: str) -> Mapping[str, tuple[Key, ...]] | None:
        """Each target set of a task and its keys on the start state (None: world not loaded)."""
        return self.examiner.target_sets.get(task_id)

    def judged(self, i: int) -> Judged | None:
        """The attempt at ``i``, its record read and judged against its task and start world.

        None when it has no verified record this reader can load (its world included).
        """
        slot = self.report.attempts[i]
        data = self.source.data(slot) if slot.evidence == "verified" else None
        loaded = None if data is None else self.examiner.load(slot, data)
        if loaded is None:
            return None
        view = trace_view(*loaded)
        return Judged(net_effects(view), missing_required(view), view.changes)


@attrs.define(slots=True)
class _Examiner:
    """Grades and advises verified records, loading each world once (within the trust root)."""

    tasks: Mapping[str, Task]
    worlds: dict[tuple[str, str], World] = attrs.field(factory=dict)
    targets: dict[str, frozenset[str]] = attrs.field(factory=dict)
    target_sets: dict[str, dict[str, tuple[Key, ...]]] = attrs.field(factory=dict)
    planted: dict[str, Planted] = attrs.field(factory=dict)
    key_fields: dict[str, frozenset[str]] = attrs.field(factory=dict)
    summaries: dict[tuple[str, int], TrustedSummary] = attrs.field(factory=dict)

    def load(self, slot: SlotResult, data: bytes) -> tuple[Record, Task, World] | None:
        """A verified slot's record decoded from ``data``, its task and its world."""
        task = self.tasks.get(slot.task_id)
        if task is None:
            return None
        try:
            record = decode_record(data, "json")
            if record.task_hash != task.hash:
                return None
            # A record's world name is never a path or import target: only the trust root.
            ref = (record.world.name, record.world.size)
            world = self.worlds.get(ref) or load_trusted_world(*ref)
        except (RecordError, WorldError):
            return None
        self.worlds[ref] = world
        self._know(task, world)
        return record, task, world

    def _know(self, task: Task, world: World) -> None:
        if task.id in self.targets:
            return
        sets = {t.name: select_targets(world, task, t.name) for t in task.targets}
        self.target_sets[task.id] = sets
        self.targets[task.id] = frozenset(str(k) for keys in sets.values() for k in keys)
        planted = _planted(task, world)
        if planted is not None:
            self.planted[task.id] = planted
        self.key_fields[task.id] = frozenset(e.key for e in world.contract.entities)

    def examine(self, slot: SlotResult, data: bytes, full: bool) -> list[Advisory]:
        """The advisories of one verified attempt (and, ``full``, its trusted summary kept)."""
        loaded = self.load(slot, data)
        if loaded is None:
            return []
        record, task, world = loaded
        if full:
            grade = grade_record(record, task, world)
            seed = record.faults.seed if record.faults is not None else record.seed
            completion = trusted_completion(record, task, grade)
            self.summaries[(slot.task_id, slot.sample)] = TrustedSummary(
                slot.cost, task.id, completion, seed, task.hash
            )
        return advise(record, task, world)

    def target_rows(self, slot: SlotResult, sizes: Mapping[str, str]) -> None:
        """Know the task's target rows (for its marks) without a record: its world by name."""
        task = self.tasks.get(slot.task_id)
        if task is None or task.id in self.targets:
            return
        ref = (task.world, sizes.get(task.world, "small"))
        world = self.worlds.get(ref)
        if world is None:
            try:
                world = load_trusted_world(*ref)
            except WorldError:
                return
            self.worlds[ref] = world
        self._know(task, world)

    def marks(self, slot: SlotResult, advisories: list[Advisory]) -> AttemptMarks:
        rows = self.targets.get(slot.task_id, frozenset()) | named_rows(slot.failed)
        return AttemptMarks(
            advisories=advisories,
            rows=rows,
            key_fields=self.key_fields.get(slot.task_id, frozenset()),
            planted=self.planted.get(slot.task_id),
        )


def _planted(task: Task, world: World) -> Planted | None:
    """Where a task's planted request sits and its text as a tool result carries it.

    ``authority.source`` is ``entity.key.field``; the text is that field of the start row, as
    JSON (how a result holds it). A source this world does not hold still marks the first
    result carrying the row's key (an empty needle: `Planted.needle`).
    """
    authority = task.authority
    if authority is None or authority.source.count(".") < 2:
        return None
    entity, rest = authority.source.split(".", 1)
    key, field = rest.rsplit(".", 1)
    keys: list[Key] = [key, int(key)] if key.isdigit() else [key]
    row = next((r for k in keys if (r := _row(world, entity, k)) is not None), None)
    value = None if row is None else row.get(field)
    needle = to_json(value) if isinstance(value, str) and value else b""
    return Planted(authority.source, authority.role, entity, key, needle)


def _row(world: World, entity: str, key: Key) -> dict[str, object] | None:
    try:
        return world.get(entity, key)
    except (KeyError, WorldError):  # an entity the world does not have
        return None


def _examine(
    report: RunReport, source: TraceSource, examiner: _Examiner
) -> tuple[list[list[Advisory]], list[AttemptProcess]]:
    """Every attempt's advisories and the counted attempts' process figures, read here.

    For callers without the report's own advisories (a report built by `build_report`): each
    verified attempt's record is read once (small runs: advised and its trusted summary kept;
    large runs: the failed ones advised).
    """
    full = len(report.attempts) <= FULL_DETAIL_UP_TO
    found: list[list[Advisory]] = []
    process: list[AttemptProcess] = []
    for slot in report.attempts:
        advisories: list[Advisory] = []
        wanted = slot.evidence == "verified" and (full or slot.passed is False)
        data = source.data(slot) if wanted or slot.counted else None
        if data is not None and wanted:
            advisories = examiner.examine(slot, data, full)
        if data is not None and slot.counted:
            trace = decode_trace(data)
            if trace is not None:
                process.append(process_of(trace, slot.passed))
        found.append(advisories)
    return found, process


def load_run_view(
    report: RunReport,
    name: str | None = None,
    tasks: Iterable[Task] | None = None,
    *,
    advised: Mapping[tuple[str, int], list[Advisory]] | None = None,
    trusted: TrustedReport | None = None,
    run: OpenRun | None = None,
) -> RunView:
    """The page's view of a run: summaries now, each task's records when its traces are written.

    With the report's own advisories (``advised``), nothing is read here: the records are
    read task by task as the page writes their traces (`RunView.shown`). Without them, every
    verified attempt's record is read once here for its advisories (up to
    `FULL_DETAIL_UP_TO` attempts also its full grade and trusted-completion summary; above,
    the failed ones only).

    Args:
        report: The run's report.
        name: The configuration's name (the run folder's by default).
        tasks: The tasks known to the reader (the built-in ones by default).
        advised: Advisories an `AdviceObserver` found during the report's scan, by (task id,
            sample): used instead of finding them again.
        trusted: The trusted-completion figures, when the caller computed them; by default
            computed here for runs up to `FULL_DETAIL_UP_TO` attempts.
        run: The run as the report's reader opened it (its index's bytes bind the records
            shown); None: opened here (the index read again).

    Raises:
        harness_world.running.reader.RunReadError: when the run directory cannot be read.
    """
    by_id = {t.id: t for t in (tasks if tasks is not None else load_tasks())}
    examiner = _Examiner(by_id)
    source = TraceSource.of(run if run is not None else _open(report))
    process: list[AttemptProcess] = []
    with collector_paused():
        if advised is None or report.process is None:
            advisories, process = _examine(report, source, examiner)
        if advised is not None:
            advisories = [advised.get((a.task_id, a.sample), []) for a in report.attempts]
    sizes = source.run.manifest.sizes if source.run is not None else {}
    for slot in report.attempts:
        examiner.target_rows(slot, sizes)
    if trusted is None and examiner.summaries:
        try:
            trusted = trusted_report(report.attempts, by_id, examiner.summaries)
        except (OSError, ValueError):
            trusted = None
    return RunView(
        name=name or Path(report.out).resolve().name,
        report=report,
        tasks=by_id,
        summary=report.process if report.process is not None else summarize_process(process),
        marks=[examiner.marks(s, a) for s, a in zip(report.attempts, advisories, strict=True)],
        trusted=trusted,
        source=source,
        examiner=examiner,
    )


def _open(report: RunReport) -> OpenRun | None:
    """The report's run directory, opened by the one reader (None: it is gone)."""
    try:
        return open_run(report.out)
    except RunReadError:
        return None
