"""Advisories over a run, and their reach: failures they explain, passes they flag.

An advisory that fires on every attempt explains nothing. `reach` counts, per advisory and
overall, the failed attempts that carry at least one (explained) and the passed attempts that
carry one (false alarms), so a report can say "explained 10 of 12 failures, 0 of 10 passes
flagged" instead of listing observations without a denominator. `diagnose_run` (and, for a
run ``report`` already read, `report_advice`) put a run's advisories, their reach and its
failures' attribution together (a `Diagnosis`), from what observers saw during the one read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs
import msgspec

from harness_world.analysis.attribution import (
    ATTRIBUTIONS,
    AttributionReport,
    FailureObserver,
    Kept,
    attribute_scan,
)
from harness_world.analysis.tables import render_table
from harness_world.grading.advice import ADVISORIES, Advisory, advise
from harness_world.grading.task import Task
from harness_world.grading.verifier import Measure, VerifiedRecord
from harness_world.running.reader import RunReader
from harness_world.running.rundir import RunScan

__all__ = [
    "ADVICE",
    "AdviceObserver",
    "Diagnosis",
    "Reach",
    "ReachRow",
    "ReportAdvice",
    "SlotAdvice",
    "SlotAdvisories",
    "advise_scan",
    "diagnose_run",
    "diagnosis",
    "reach",
    "reach_lines",
    "render_definitions",
    "render_diagnosis",
    "report_advice",
    "report_section",
    "slot_advisories",
]


class SlotAdvice(msgspec.Struct, frozen=True, kw_only=True):
    """The advisories one graded attempt of a run carries.

    Attributes:
        task_id: The task.
        sample: The sample index.
        passed: The attempt's grade (advisories never change it).
        advisories: What the verified trace shows, in `ADVISORIES` order.
    """

    task_id: str
    sample: int
    passed: bool
    advisories: list[Advisory]


class ReachRow(msgspec.Struct, frozen=True, kw_only=True):
    """The reach of one advisory.

    Attributes:
        name: The advisory.
        failed: Failed attempts carrying it.
        passed: Passed attempts carrying it (false alarms).
    """

    name: str
    failed: int
    passed: int


class Reach(msgspec.Struct, frozen=True, kw_only=True):
    """How far advisories go, with their denominators.

    Attributes:
        failed: Graded attempts that failed (the denominator of ``explained``).
        passed: Graded attempts that passed (the denominator of ``false_alarms``).
        explained: Failed attempts carrying at least one advisory.
        false_alarms: Passed attempts carrying at least one advisory.
        by_name: One row per advisory, in `ADVISORIES` order (names never seen included, at 0).
    """

    failed: int
    passed: int
    explained: int
    false_alarms: int
    by_name: list[ReachRow]


def _names(found: Sequence[Advisory] | Sequence[str]) -> set[str]:
    return {a if isinstance(a, str) else a.name for a in found}


def reach(attempts: Iterable[tuple[bool, Sequence[Advisory] | Sequence[str]]]) -> Reach:
    """Count, per advisory and overall, failed attempts explained and passed attempts flagged.

    Args:
        attempts: One (passed?, advisories or their names) pair per graded attempt.
    """
    failed = passed = explained = false_alarms = 0
    per_failed: dict[str, int] = dict.fromkeys(ADVISORIES, 0)
    per_passed: dict[str, int] = dict.fromkeys(ADVISORIES, 0)
    for ok, found in attempts:
        names = _names(found)
        tally = per_passed if ok else per_failed
        for name in names:
            tally[name] = tally.get(name, 0) + 1
            (per_failed if ok else per_passed).setdefault(name, 0)
        if ok:
            passed += 1
            false_alarms += bool(names)
        else:
            failed += 1
            explained += bool(names)
    rows = [ReachRow(name=n, failed=per_failed[n], passed=per_passed[n]) for n in per_failed]
    return Reach(
        failed=failed,
        passed=passed,
        explained=explained,
        false_alarms=false_alarms,
        by_name=rows,
    )


def reach_lines(result: Reach) -> list[str]:
    """The reach as text lines for a report: the overall sentence, then advisories that fired."""
    lines = [
        f"Advisories explained {result.explained} of {result.failed} failed attempts; "
        f"{result.false_alarms} of {result.passed} passed attempts carry one (false alarms)."
    ]
    width = max((len(r.name) for r in result.by_name), default=0)
    for row in result.by_name:
        if row.failed or row.passed:
            lines.append(
                f"  {row.name:<{width}}  on {row.failed} of {result.failed} failed, "
                f"{row.passed} of {result.passed} passed"
            )
    return lines


class SlotAdvisories(msgspec.Struct, frozen=True, kw_only=True):
    """The advisories of one graded record, and the task they were found against.

    Attributes:
        task_hash: The hash of the task the record was graded and advised against.
        advisories: What `advise` found.
    """

    task_hash: str
    advisories: list[Advisory]


def slot_advisories(verified: VerifiedRecord) -> SlotAdvisories | None:
    """The advisories of one record verified and graded in its slot (`ADVICE`'s figure)."""
    task = verified.task
    if task is None or verified.verification.grade is None:
        return None
    return SlotAdvisories(
        task_hash=task.hash, advisories=advise(verified.record, task, verified.world)
    )


ADVICE = Measure("advice", slot_advisories, SlotAdvisories)
"""The advisories of each graded final record, cached with its judgement."""


@attrs.define(slots=True)
class AdviceObserver:
    """Takes the advisories of each graded record a run's reader verifies.

    Only the advisories are kept, by (task id, sample); `advise_scan` reads them instead of
    reading those records from disk again. Advisories found against a task other than this
    observer's (another definition under the same id) are left out.
    """

    tasks: Mapping[str, Task]
    advised: dict[tuple[str, int], list[Advisory]] = attrs.field(factory=dict)

    @property
    def measure(self) -> Measure:
        """`ADVICE`."""
        return ADVICE

    def take(self, path: Path, slot: tuple[str, int], figure: SlotAdvisories) -> None:
        """One slot's advisories, kept when found against this observer's task."""
        task = self.tasks.get(slot[0])
        if task is not None and task.hash == figure.task_hash:
            self.advised[slot] = figure.advisories

    def __call__(self, path: Path, verified: VerifiedRecord) -> None:
        """Advise on one verified record when its task is known here and it was graded."""
        record = verified.record
        task = self.tasks.get(record.task_id)
        if task is None or not verified.graded_against(task):
            return
        self.advised[(record.task_id, record.sample)] = advise(record, task, verified.world)


def advise_scan(
    scan: RunScan, advised: Mapping[tuple[str, int], list[Advisory]]
) -> list[SlotAdvice]:
    """The advisories of every graded, valid attempt of a judged run.

    Only slots whose evidence is verified, whose outcome counts and which carry a grade are
    read: on anything else the trace is not evidence. A slot pending review (automated
    criteria passed, prose open) is neither a failure to explain nor a pass to flag, and is
    left out. Their advisories are the ones an
    `AdviceObserver` computed while the run was read (nothing is read again).

    Args:
        scan: The run, judged once by its reader.
        advised: Advisories an `AdviceObserver` computed during that read, by (task id,
            sample).
    """
    return [
        SlotAdvice(
            task_id=slot.task_id,
            sample=slot.sample,
            passed=slot.passed,
            advisories=advised.get((slot.task_id, slot.sample), []),
        )
        for slot in scan.slots
        if slot.counted
        and slot.passed is not None
        and not slot.pending
        and (slot.task_id, slot.sample) in advised
    ]


class Diagnosis(msgspec.Struct, frozen=True, kw_only=True):
    """What ``diagnose`` shows of a run: advisories per attempt, their reach, and attribution.

    Attributes:
        advice: The advisories of every graded, valid attempt (`advise_scan`).
        reach: Their reach over those attempts (`reach`).
        attribution: Where each attempt that did not pass comes from (None when no run was
            read, e.g. for the demo's attempts).
    """

    advice: list[SlotAdvice]
    reach: Reach
    attribution: AttributionReport | None = None


def diagnosis(advice: list[SlotAdvice], attribution: AttributionReport | None = None) -> Diagnosis:
    """The diagnosis of attempts whose advisories are known: their reach computed."""
    found = reach((a.passed, a.advisories) for a in advice)
    return Diagnosis(advice=advice, reach=found, attribution=attribution)


def diagnose_run(run: Path, reader: RunReader) -> Diagnosis:
    """Read a run directory once, then give its advisories, their reach and attribution.

    Args:
        run: The run directory.
        reader: How it is read: the reader's tasks (built-in and its own), its own world
            folders and the key it trusts.

    Raises:
        harness_world.running.reader.RunReadError: for a run directory that cannot be read.
        harness_world.HarnessWorldError: for a world that does not load, or an invalid labels'
            file (`harness_world.analysis.attribution.AttributionError`).
    """
    tasks = reader.verifier.tasks or {}
    advice, failures = AdviceObserver(tasks), FailureObserver(reader.verifier.world)
    scan = reader.read(run, measure=[advice, failures])
    return diagnosis(
        advise_scan(scan, advice.advised), attribute_scan(scan, tasks.values(), failures.kept)
    )


def render_definitions() -> str:
    """``diagnose --definitions``: every advisory with its one-line definition."""
    return "".join(f"{name}: {text}\n" for name, text in ADVISORIES.items())


def render_diagnosis(found: Diagnosis) -> str:
    """``diagnose`` as text: advisories per attempt, their reach, then the attribution."""
    rows = [
        [
            a.task_id,
            str(a.sample),
            "passed" if a.passed else "failed",
            "; ".join(f"{x.name}: {x.detail}" for x in a.advisories) or "-",
        ]
        for a in found.advice
        if a.advisories or not a.passed
    ]
    headers = ["task", "sample", "grade", "advisories (never change grades)"]
    lines = [render_table(headers, rows, 110), ""] if rows else []
    lines += reach_lines(found.reach)
    if found.attribution is not None:
        lines += _attribution_lines(found.attribution)
    return "".join(line + "\n" for line in lines)


def _attribution_lines(attribution: AttributionReport) -> list[str]:
    rows = [
        [a.task_id, str(a.sample), a.source, "reviewed" if a.reviewed else "automatic", a.evidence]
        for a in attribution.attributions
    ]
    lines = [""]
    if rows:
        lines.append(render_table(["task", "sample", "source", "by", "evidence"], rows, 90))
    counts = ", ".join(
        f"{s} {c['automatic'] + c['reviewed']} ({c['reviewed']} reviewed)"
        for s, c in attribution.counts.items()
    )
    lines.append(
        f"\nattribution of {len(attribution.attributions)} attempts that did not pass: {counts}"
    )
    if attribution.unsigned_labels:
        lines.append(
            f"{attribution.unsigned_labels} reviewed label(s) of {ATTRIBUTIONS} not taken: the "
            "run was read with a trusted key, and labels carry no signature"
        )
    return lines


class ReportAdvice(msgspec.Struct, frozen=True, kw_only=True):
    """What ``report`` shows after its figures (``report --json``: its ``advice``).

    Attributes:
        reach: The advisories' reach over the graded valid attempts.
        flagged: The failed attempts that carry an advisory, with them.
        attributed: Attempts that did not pass, each attributed to a source.
        by_source: Source -> ``total``, ``automatic`` and ``reviewed`` attributions (sources
            with at least one).
        details: The command that shows it all, with the reader's own world options.
    """

    reach: Reach
    flagged: list[SlotAdvice]
    attributed: int = 0
    by_source: dict[str, dict[str, int]] = {}
    details: str = ""


def report_advice(
    scan: RunScan,
    tasks: Mapping[str, Task],
    advised: Mapping[tuple[str, int], list[Advisory]],
    kept: Kept,
    reader_options: str = "",
) -> ReportAdvice:
    """The advisories' reach and attribution counts of a run a report already read.

    ``advised`` and ``kept`` are what an `AdviceObserver` and a `FailureObserver` gathered
    during the report's read of the run, graded by ``tasks`` (no record is replayed again).
    ``reader_options`` are the ``--world``/``--tasks`` the reader gave, repeated in the
    closing ``diagnose`` command so that it reads a user world's run as the report did.
    """
    found = diagnosis(advise_scan(scan, advised), attribute_scan(scan, tasks.values(), kept))
    attribution = found.attribution
    by_source: dict[str, dict[str, int]] = {}
    if attribution is not None:
        for source, c in attribution.counts.items():
            if c["automatic"] + c["reviewed"]:
                by_source[source] = {"total": c["automatic"] + c["reviewed"], **c}
    return ReportAdvice(
        reach=found.reach,
        flagged=[a for a in found.advice if a.advisories and not a.passed],
        attributed=0 if attribution is None else len(attribution.attributions),
        by_source=by_source,
        details=f"python -m harness_world diagnose {scan.out}{reader_options}",
    )


def report_section(advice: ReportAdvice) -> list[str]:
    """Lines ``report`` prints after its figures: advisories' reach and attribution counts."""
    lines = ["", *reach_lines(advice.reach)]
    for a in advice.flagged:
        lines.append(
            f"    {a.task_id} sample {a.sample}: {', '.join(x.name for x in a.advisories)}"
        )
    if advice.attributed:
        counts = ", ".join(
            f"{s} {c['total']} ({c['reviewed']} reviewed)" for s, c in advice.by_source.items()
        )
        lines.append(f"Attribution of {advice.attributed} attempts that did not pass: {counts}")
    lines.append(f"Details: {advice.details}")
    return lines
