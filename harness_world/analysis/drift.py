"""Drift between the fresh and the sequential track of the same tasks, samples and seed.

A sequential run (`harness_world.running.sequential`) gives one agent instance the tasks one
after another; a fresh run gives every attempt a clean start. Each slot (task, sample) has the
same session and fault seed in both, so the two are paired slot by slot. Per task: the pass
rate on each track, the difference (sequential minus fresh: negative is drift for the worse)
and how many tasks the instance had done before it (its position in each pass). Overall, the
mean drift gets the interval of ``compare``'s gate (Webb-weight wild cluster bootstrap-t over
task families, CR2, skew-corrected, binomial floor; two-sided 95%). The regression list is
``compare``'s: tasks whose drop survives a Holm correction of per-task Fisher exact tests
(family-wise 5%), so two tracks that do not differ list none at the stated rate; the tasks
that merely pass less often on the sequential track are listed apart, as description.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import msgspec

from harness_world.analysis.crossed import paired_slots
from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.running.reader import RunReader
from harness_world.running.rundir import RunScan
from harness_world.running.sequential import TaskSequence, load_sequence
from harness_world.stats import (
    Design,
    PairedTask,
    StatsInputError,
    decide,
    paired_samples,
    task_changes,
)

_ALPHA = 0.025  # each side of the two-sided 95% interval; the Holm list is family-wise 5%

__all__ = ["DriftError", "DriftReport", "TaskDrift", "render_drift", "track_drift"]


class DriftError(HarnessWorldError, ValueError):
    """Two runs that are not a fresh and a sequential track of the same design."""


class TaskDrift(msgspec.Struct, frozen=True, kw_only=True):
    """One task on both tracks.

    Attributes:
        task_id: The task.
        fresh: Pass rate on the fresh track (paired samples only).
        sequential: Pass rate on the sequential track.
        drift: Sequential minus fresh.
        p_adjusted: Two-sided Fisher exact p of the task's two tracks, Holm-adjusted over the
            tasks (null when not computed).
        positions: For each paired sample, how many tasks the instance had done before it
            (earlier passes included).
        pairs: Samples valid and graded on both tracks.
    """

    task_id: str
    fresh: float
    sequential: float
    drift: float
    positions: list[int]
    pairs: int
    p_adjusted: float | None = None


class DriftReport(msgspec.Struct, frozen=True, kw_only=True):
    """Drift per task and overall, and the regression list between the two tracks.

    Attributes:
        fresh_run: The fresh run directory.
        sequential_run: The sequential run directory.
        tasks: One entry per task with paired samples, worst drift first.
        fresh: Mean per-task pass rate on the fresh track.
        sequential: Mean per-task pass rate on the sequential track.
        drift: Mean per-task drift.
        low: Lower end of the two-sided 95% interval of the mean drift (null when there are
            fewer than 2 tasks).
        high: Upper end.
        regressions: Tasks whose drop survives the Holm correction (family-wise 5%).
        lower_on_sequential: Tasks passing less often on the sequential track, significant
            or not (description, not a finding).
        by_pass: Sequential minus fresh pass over the pairs of each pass (sample), as
            ``[pass, pairs, drift]``: the first pass meets each task once, later ones again.
    """

    fresh_run: str
    sequential_run: str
    tasks: list[TaskDrift]
    fresh: float
    sequential: float
    drift: float
    regressions: list[str]
    by_pass: list[tuple[int, int, float]]
    low: float | None = None
    high: float | None = None
    lower_on_sequential: list[str] = []


def _task_rows(
    per_task: dict[str, list[tuple[int, bool, bool]]], sequence: TaskSequence
) -> tuple[list[PairedTask], list[TaskDrift]]:
    """Each task's two tracks as a paired task (fresh as baseline) and as a drift row."""
    paired = paired_samples({t: [(f, s) for _, f, s in v] for t, v in per_task.items()})
    changes = {c.task_id: c for c in task_changes(paired, _ALPHA)}
    at = sequence.done_before
    rows = [
        TaskDrift(
            task_id=p.task_id,
            fresh=p.baseline.passes / p.baseline.runs,
            sequential=p.candidate.passes / p.candidate.runs,
            drift=p.difference,
            positions=[at(p.task_id, sample) for sample, _, _ in per_task[p.task_id]],
            pairs=p.baseline.runs,
            p_adjusted=changes[p.task_id].p_adjusted,
        )
        for p in paired
    ]
    return paired, rows


def _check_design(left: RunScan, right: RunScan, fresh: str | Path, sequential: str | Path) -> None:
    if right.manifest.track != "sequential":
        raise DriftError(f"{sequential}: not a run of the sequential track")
    if left.manifest.track != "fresh":
        raise DriftError(f"{fresh}: not a run of the fresh track")
    for field in ("tasks", "samples", "seed"):
        if getattr(left.manifest, field) != getattr(right.manifest, field):
            raise DriftError(f"the two runs differ in {field}: not paired slot by slot")


def _interval(
    paired: list[PairedTask], families: dict[str, str]
) -> tuple[float | None, float | None]:
    """The mean drift's two-sided 95% interval; none with fewer than 2 tasks."""
    try:
        known = {t: f for t, f in families.items() if f}
        decision = decide(Design(pairs=paired, families=known, alpha=_ALPHA))
    except StatsInputError:
        return None, None
    return decision.lower, decision.upper


def track_drift(
    fresh: str | Path,
    sequential: str | Path,
    tasks: Iterable[Task] | None = None,
    *,
    reader: RunReader | None = None,
) -> DriftReport:
    """Compare a fresh run with a sequential run of the same tasks, samples and seed.

    ``reader`` is how both runs are read (default: by ``tasks``, provenance unchecked).

    Raises:
        DriftError: when the second run is not sequential, the first is not fresh, or their
            tasks, samples or seeds differ.
        FileNotFoundError: when either is not a run directory.
    """
    reader = reader or RunReader.of(tasks)
    left, right = reader.read(fresh), reader.read(sequential)
    sequence = load_sequence(sequential)
    if sequence is None:
        raise DriftError(f"{sequential}: not a run of the sequential track")
    _check_design(left, right, fresh, sequential)
    per_task = paired_slots(left.slots, right.slots)
    paired, rows = _task_rows(per_task, sequence)
    rows.sort(key=lambda r: (r.drift, r.task_id))
    per_pass: dict[int, list[int]] = {}
    for samples in per_task.values():
        for sample, f, s in samples:
            per_pass.setdefault(sample, []).append(int(s) - int(f))
    low, high = _interval(paired, left.families)
    n = len(rows) or 1
    return DriftReport(
        fresh_run=str(fresh),
        sequential_run=str(sequential),
        tasks=rows,
        fresh=sum(r.fresh for r in rows) / n,
        sequential=sum(r.sequential for r in rows) / n,
        drift=sum(r.drift for r in rows) / n,
        regressions=[
            r.task_id
            for r in rows
            if r.drift < 0 and r.p_adjusted is not None and r.p_adjusted <= 2 * _ALPHA
        ],
        by_pass=[(p, len(v), sum(v) / len(v)) for p, v in sorted(per_pass.items())],
        low=low,
        high=high,
        lower_on_sequential=[r.task_id for r in rows if r.drift < 0],
    )


def render_drift(report: DriftReport) -> str:
    """The drift report as text: overall, per task (worst first), per pass, regressions."""
    lines = [
        f"sequential track {report.sequential_run} against fresh {report.fresh_run}: pass "
        f"{report.fresh * 100:.1f}% fresh -> {report.sequential * 100:.1f}% sequential "
        f"(drift {report.drift * 100:+.1f} pts, mean over tasks"
        + (
            f", 95% [{report.low * 100:+.1f}, {report.high * 100:+.1f}] from compare's "
            "wild bootstrap over families)"
            if report.low is not None and report.high is not None
            else ")"
        ),
        "  task                                  fresh   seq.   drift  after N earlier tasks",
    ]
    for r in report.tasks:
        lines.append(
            f"  {r.task_id:<36} {r.fresh * 100:5.0f}% {r.sequential * 100:5.0f}% "
            f"{r.drift * 100:+6.0f}  {', '.join(map(str, r.positions))}"
        )
    passes = ", ".join(f"pass {p + 1}: {d * 100:+.0f} ({n})" for p, n, d in report.by_pass)
    lines.append(f"  drift per pass (pts, pairs): {passes}")
    lines.append(
        "  regressions (sequential below fresh after Holm correction, Fisher exact per task, "
        "family-wise 5%): " + (", ".join(report.regressions) if report.regressions else "none")
    )
    lines.append(
        f"  lower on the sequential track, significant or not: {len(report.lower_on_sequential)}"
        + (f" ({', '.join(report.lower_on_sequential)})" if report.lower_on_sequential else "")
    )
    return "\n".join(lines) + "\n"
