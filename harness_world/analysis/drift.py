"""Drift between the fresh and the sequential track of the same tasks, samples and seed.

A sequential run (`harness_world.running.sequential`) gives one agent instance the tasks one
after another; a fresh run gives every attempt a clean start. Each slot (task, sample) has the
same session and fault seed in both, so the two are paired slot by slot. Per task: the pass
rate on each track, the difference (sequential minus fresh: negative is drift for the worse)
and how many tasks the instance had done before it (its position in each pass). The regression
list names the tasks that pass less often on the sequential track.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import msgspec

from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.grading.verifier import SlotResult
from harness_world.running.rundir import scan_run
from harness_world.running.sequential import load_sequence

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


class DriftReport(msgspec.Struct, frozen=True, kw_only=True):
    """Drift per task and overall, and the regression list between the two tracks.

    Attributes:
        fresh_run: The fresh run directory.
        sequential_run: The sequential run directory.
        tasks: One entry per task with paired samples, worst drift first.
        fresh: Mean per-task pass rate on the fresh track.
        sequential: Mean per-task pass rate on the sequential track.
        drift: Mean per-task drift.
        regressions: Tasks passing less often on the sequential track.
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


def _graded(slots: Iterable[SlotResult]) -> dict[tuple[str, int], bool]:
    return {
        (s.task_id, s.sample): bool(s.passed) for s in slots if s.counted and s.passed is not None
    }


def track_drift(
    fresh: str | Path, sequential: str | Path, tasks: Iterable[Task] | None = None
) -> DriftReport:
    """Compare a fresh run with a sequential run of the same tasks, samples and seed.

    Raises:
        DriftError: when the second run is not sequential, the first is not fresh, or their
            tasks, samples or seeds differ.
        FileNotFoundError: when either is not a run directory.
    """
    task_list = list(tasks) if tasks is not None else None
    left = scan_run(fresh, task_list, write_counts=False)
    right = scan_run(sequential, task_list, write_counts=False)
    sequence = load_sequence(sequential)
    if right.manifest.track != "sequential" or sequence is None:
        raise DriftError(f"{sequential}: not a run of the sequential track")
    if left.manifest.track != "fresh":
        raise DriftError(f"{fresh}: not a run of the fresh track")
    design = ("tasks", "samples", "seed")
    for field in design:
        if getattr(left.manifest, field) != getattr(right.manifest, field):
            raise DriftError(f"the two runs differ in {field}: not paired slot by slot")
    a, b = _graded(left.slots), _graded(right.slots)
    per_task: dict[str, list[tuple[int, bool, bool]]] = {}
    for task_id, sample in sorted(a.keys() & b.keys()):
        done = sequence.done_before(task_id, sample)
        per_task.setdefault(task_id, []).append((done, a[task_id, sample], b[task_id, sample]))
    rows = [
        TaskDrift(
            task_id=task_id,
            fresh=sum(f for _, f, _ in pairs) / len(pairs),
            sequential=sum(s for _, _, s in pairs) / len(pairs),
            drift=(sum(s for _, _, s in pairs) - sum(f for _, f, _ in pairs)) / len(pairs),
            positions=[p for p, _, _ in pairs],
            pairs=len(pairs),
        )
        for task_id, pairs in per_task.items()
    ]
    rows.sort(key=lambda r: (r.drift, r.task_id))
    per_pass: dict[int, list[int]] = {}
    for task_id, sample in sorted(a.keys() & b.keys()):
        per_pass.setdefault(sample, []).append(int(b[task_id, sample]) - int(a[task_id, sample]))
    n = len(rows) or 1
    return DriftReport(
        fresh_run=str(fresh),
        sequential_run=str(sequential),
        tasks=rows,
        fresh=sum(r.fresh for r in rows) / n,
        sequential=sum(r.sequential for r in rows) / n,
        drift=sum(r.drift for r in rows) / n,
        regressions=[r.task_id for r in rows if r.drift < 0],
        by_pass=[(p, len(v), sum(v) / len(v)) for p, v in sorted(per_pass.items())],
    )


def render_drift(report: DriftReport) -> str:
    """The drift report as text: overall, per task (worst first), per pass, regressions."""
    lines = [
        f"sequential track {report.sequential_run} against fresh {report.fresh_run}: pass "
        f"{report.fresh * 100:.1f}% fresh -> {report.sequential * 100:.1f}% sequential "
        f"(drift {report.drift * 100:+.1f} pts, mean over tasks)",
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
        "  regressions (sequential below fresh): "
        + (", ".join(report.regressions) if report.regressions else "none")
    )
    return "\n".join(lines) + "\n"
