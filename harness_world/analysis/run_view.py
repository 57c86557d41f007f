"""A run report with what its HTML page needs beside it: records, grades, advisories, marks.

The scan behind a `RunReport` already replayed each record; the checker and the advisories are
pure, so computing them again here from the verified records only recovers what the report
did not keep (every criterion's verdict, the advisories, the trusted-completion summary).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import attrs

from harness_world.analysis.process import (
    AttemptProcess,
    ProcessSummary,
    process_of,
    summarize_process,
)
from harness_world.analysis.report import RunReport
from harness_world.analysis.trace_html import AttemptMarks, named_rows
from harness_world.analysis.trace_record import TraceRecord, read_trace
from harness_world.analysis.trusted import TrustedReport, TrustedSummary, trusted_report
from harness_world.engine.world import World, WorldError, load_trusted_world
from harness_world.evidence.record import Record, RecordError, load_record
from harness_world.grading.advice import Advisory, advise
from harness_world.grading.checker import grade as grade_record
from harness_world.grading.grade import Grade
from harness_world.grading.task import Task, load_tasks, select_targets
from harness_world.grading.trusted import trusted_completion
from harness_world.grading.verifier import SlotResult

__all__ = ["FULL_DETAIL_UP_TO", "RunView", "load_run_view"]

FULL_DETAIL_UP_TO = 2_000
"""Up to this many attempts, every verified attempt is graded again for its full verdict list,
its advisories and its trusted-completion summary, and every trace shows results and diff
tables. Above it, advisories are found for the attempts that failed only, and a passed
attempt's trace is one line per call, so that a 10,000-attempt page stays quick to make."""


@attrs.frozen(slots=True)
class RunView:
    """A run report with what the HTML needs beside it, each record read once.

    Attributes:
        name: The configuration's name (the run folder's by default).
        report: The run report.
        tasks: The known tasks by id (instructions, families).
        records: Each attempt's record as the viewer reads it (null when missing or
            unreadable), report order.
        grades: Each attempt's full grade (null when not graded).
        process: Each attempt's process figures (null without a record).
        summary: Process figures over the valid attempts.
        marks: Each attempt's advisories and the rows its grader used, report order.
        trusted: The run's trusted-completion figures (null when no task declares them or
            they were not computed).
    """

    name: str
    report: RunReport
    tasks: Mapping[str, Task]
    records: Sequence[TraceRecord | None]
    grades: Sequence[Grade | None]
    process: Sequence[AttemptProcess | None]
    summary: ProcessSummary
    marks: Sequence[AttemptMarks] = ()
    trusted: TrustedReport | None = None

    @property
    def compact(self) -> bool:
        """Whether passed attempts' traces are one line per call (a large run)."""
        return len(self.report.attempts) > FULL_DETAIL_UP_TO


@attrs.define(slots=True)
class _Examiner:
    """Grades and advises verified records, loading each world once (within the trust root)."""

    tasks: Mapping[str, Task]
    worlds: dict[tuple[str, str], World] = attrs.field(factory=dict)
    targets: dict[str, frozenset[str]] = attrs.field(factory=dict)
    key_fields: dict[str, frozenset[str]] = attrs.field(factory=dict)
    summaries: dict[tuple[str, int], TrustedSummary] = attrs.field(factory=dict)

    def load(self, slot: SlotResult) -> tuple[Record, Task, World] | None:
        task = self.tasks.get(slot.task_id)
        if task is None:
            return None
        try:
            record = load_record(slot.path)
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
        keys = {str(k) for t in task.targets for k in select_targets(world, task, t.name)}
        self.targets[task.id] = frozenset(keys)
        self.key_fields[task.id] = frozenset(e.key for e in world.contract.entities)

    def grade(self, slot: SlotResult) -> tuple[Grade | None, list[Advisory]]:
        """The full grade and advisories of one verified attempt (its trusted summary kept)."""
        loaded = self.load(slot)
        if loaded is None:
            return None, []
        record, task, world = loaded
        grade = grade_record(record, task, world)
        seed = record.faults.seed if record.faults is not None else record.seed
        self.summaries[(slot.task_id, slot.sample)] = TrustedSummary(
            slot.cost, task.id, trusted_completion(record, task, grade), seed
        )
        return grade, advise(record, task, world)

    def advise(self, slot: SlotResult) -> list[Advisory]:
        """The advisories of one verified attempt (no grade)."""
        loaded = self.load(slot)
        return [] if loaded is None else advise(*loaded)

    def marks(self, slot: SlotResult, advisories: list[Advisory]) -> AttemptMarks:
        rows = self.targets.get(slot.task_id, frozenset()) | named_rows(slot.failed)
        return AttemptMarks(
            advisories=advisories,
            rows=rows,
            key_fields=self.key_fields.get(slot.task_id, frozenset()),
        )


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while many records are decoded and kept.

    Decoded records hold no reference cycles, so the collector has nothing to free in them; left
    on, it walks the growing list of kept records again at every full collection (reading 10,000
    records took 2.5 × as long). Reference counting still frees everything as usual.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _examine(
    report: RunReport,
    examiner: _Examiner,
    advised: Mapping[tuple[str, int], list[Advisory]] | None,
) -> tuple[list[Grade | None], list[list[Advisory]]]:
    """Every attempt's full grade (small runs) and advisories (given, or found here)."""
    full = len(report.attempts) <= FULL_DETAIL_UP_TO
    grades: list[Grade | None] = []
    found: list[list[Advisory]] = []
    for slot in report.attempts:
        grade: Grade | None = None
        advisories: list[Advisory] = []
        if slot.evidence == "verified" and full:
            grade, advisories = examiner.grade(slot)
        elif slot.evidence == "verified" and slot.passed is False and advised is None:
            advisories = examiner.advise(slot)
        if advised is not None:
            advisories = advised.get((slot.task_id, slot.sample), [])
        grades.append(grade)
        found.append(advisories)
    return grades, found


def load_run_view(
    report: RunReport,
    name: str | None = None,
    tasks: Iterable[Task] | None = None,
    *,
    advised: Mapping[tuple[str, int], list[Advisory]] | None = None,
    trusted: TrustedReport | None = None,
) -> RunView:
    """Read every attempt's record; grade and advise the verified ones again (pure, no replay).

    Up to `FULL_DETAIL_UP_TO` attempts every verified attempt is graded again (every
    criterion's verdict, its advisories, its trusted-completion summary); above it only the
    failed ones are advised, and traces show the failed criteria and reasons the scan found.

    Args:
        report: The run's report.
        name: The configuration's name (the run folder's by default).
        tasks: The tasks known to the reader (the built-in ones by default).
        advised: Advisories an `AdviceObserver` found during the report's scan, by (task id,
            sample): used instead of finding them again.
        trusted: The trusted-completion figures, when the caller computed them; by default
            computed here for runs up to `FULL_DETAIL_UP_TO` attempts.
    """
    by_id = {t.id: t for t in (tasks if tasks is not None else load_tasks())}
    examiner = _Examiner(by_id)
    with _collector_paused():
        records = [read_trace(a.path) if a.evidence != "missing" else None for a in report.attempts]
        grades, advisories = _examine(report, examiner, advised)
        process = [
            None if r is None else process_of(r, a.passed if a.counted else None)
            for a, r in zip(report.attempts, records, strict=True)
        ]
    valid = [
        p for a, p in zip(report.attempts, process, strict=True) if p is not None and a.counted
    ]
    if trusted is None and examiner.summaries:
        try:
            trusted = trusted_report(report.attempts, by_id, examiner.summaries)
        except (OSError, ValueError):
            trusted = None
    return RunView(
        name=name or Path(report.out).resolve().name,
        report=report,
        tasks=by_id,
        records=records,
        grades=grades,
        process=process,
        summary=summarize_process(valid),
        marks=[examiner.marks(s, a) for s, a in zip(report.attempts, advisories, strict=True)],
        trusted=trusted,
    )
