"""Advisories over a run, and their reach: failures they explain, passes they flag.

An advisory that fires on every attempt explains nothing. `reach` counts, per advisory and
overall, the failed attempts that carry at least one (explained) and the passed attempts that
carry one (false alarms), so a report can say "explained 10 of 12 failures, 0 of 10 passes
flagged" instead of listing observations without a denominator. `diagnose_run` and
`diagnose_report` put a run's advisories, their reach and its failures' attribution together
(a `Diagnosis`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs
import msgspec

from harness_world.analysis.attribution import AttributionReport, attribute_scan
from harness_world.analysis.report import RunReport
from harness_world.analysis.tables import render_table
from harness_world.engine.world import World, WorldError, load_trusted_world
from harness_world.evidence.record import RecordError, load_record
from harness_world.grading.advice import ADVISORIES, Advisory, advise
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verifier import VerifiedRecord
from harness_world.running.rundir import RunScan, load_manifest, scan_run

__all__ = [
    "AdviceObserver",
    "Diagnosis",
    "Reach",
    "ReachRow",
    "ReportAdvice",
    "SlotAdvice",
    "advise_scan",
    "diagnose_report",
    "diagnose_run",
    "diagnosis",
    "reach",
    "reach_lines",
    "render_definitions",
    "render_diagnosis",
    "report_advice",
    "report_section",
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


@attrs.define(slots=True)
class AdviceObserver:
    """Runs the advisories on each graded record `scan_run` verifies (its ``observe``).

    Only the advisories are kept, by (task id, sample); `advise_scan` reads them instead of
    reading those records from disk again.
    """

    tasks: Mapping[str, Task]
    advised: dict[tuple[str, int], list[Advisory]] = attrs.field(factory=dict)

    def __call__(self, path: Path, verified: VerifiedRecord) -> None:
        """Advise on one verified record when its task is known here and it was graded."""
        record = verified.record
        task = self.tasks.get(record.task_id)
        if task is None or not verified.graded_against(task):
            return
        self.advised[(record.task_id, record.sample)] = advise(record, task, verified.world)


def advise_scan(
    scan: RunScan,
    tasks: Iterable[Task],
    *,
    worlds: Mapping[str, World] | None = None,
    advised: Mapping[tuple[str, int], list[Advisory]] | None = None,
) -> list[SlotAdvice]:
    """The advisories of every graded, valid attempt of a scanned run.

    Only slots whose evidence is verified, whose outcome counts and which carry a grade are
    read: on anything else the trace is not evidence. Records that cannot be read again are
    left out (the scan already counted them).

    Args:
        scan: The run, judged once by `scan_run`.
        tasks: The tasks graded against (as given to `scan_run`).
        worlds: Worlds by name (default: each record's world loaded at the run's size).
        advised: Advisories an `AdviceObserver` computed during the scan, by (task id,
            sample): those slots' records are not read again.
    """
    by_id = {t.id: t for t in tasks}
    loaded: dict[str, World] = dict(worlds or {})
    out: list[SlotAdvice] = []
    for slot in scan.slots:
        task = by_id.get(slot.task_id)
        if not slot.counted or slot.passed is None or task is None:
            continue
        known = (advised or {}).get((slot.task_id, slot.sample))
        if known is not None:
            out.append(
                SlotAdvice(
                    task_id=slot.task_id, sample=slot.sample, passed=slot.passed, advisories=known
                )
            )
            continue
        try:
            record = load_record(Path(slot.path))
            name = record.world.name
            if name not in loaded:
                loaded[name] = load_trusted_world(name, scan.manifest.sizes.get(name, "small"))
        except (RecordError, WorldError, OSError):
            continue
        found = advise(record, task, loaded[name])
        out.append(
            SlotAdvice(
                task_id=slot.task_id, sample=slot.sample, passed=slot.passed, advisories=found
            )
        )
    return out


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


def diagnose_run(
    run: Path, tasks: Sequence[Task], folders: Mapping[str, Path] | None = None
) -> Diagnosis:
    """Scan a run directory once, then give its advisories, their reach and attribution.

    Args:
        run: The run directory.
        tasks: The reader's tasks (built-in and its own).
        folders: The reader's own world folders by world name.

    Raises:
        OSError: for a run directory that cannot be read.
        ValueError: for an unreadable manifest.
        harness_world.HarnessWorldError: for a world that does not load, or an invalid labels'
            file (`harness_world.analysis.attribution.AttributionError`).
    """
    scan = scan_run(run, tasks, write_counts=False, folders=folders)
    return diagnosis(advise_scan(scan, tasks), attribute_scan(scan, tasks))


def diagnose_report(
    report: RunReport, advised: Mapping[tuple[str, int], list[Advisory]] | None = None
) -> Diagnosis:
    """The diagnosis of a run a report already judged, against the built-in tasks.

    Reads the slots the report judged (no record is replayed again) and the advisories its
    scan computed (``advised``; other records are read once more from disk); each failing
    task's reference solution runs once.
    """
    scan = RunScan(
        out=report.out,
        manifest=load_manifest(report.out),
        slots=report.attempts,
        counts=report.counts,
        families={},
    )
    tasks = load_tasks()
    return diagnosis(advise_scan(scan, tasks, advised=advised), attribute_scan(scan, tasks))


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
    report: RunReport,
    advised: Mapping[tuple[str, int], list[Advisory]] | None = None,
    reader_options: str = "",
) -> ReportAdvice:
    """The advisories' reach and attribution counts of a run a report already judged.

    ``reader_options`` are the ``--world``/``--tasks`` the reader gave, repeated in the closing
    ``diagnose`` command so that it reads a user world's run as the report did. The figures are
    `diagnose_report` (no record is replayed again).
    """
    found = diagnose_report(report, advised)
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
        details=f"python -m harness_world diagnose {report.out}{reader_options}",
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
