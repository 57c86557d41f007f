"""What a release gate reads of one run directory, from one scan that replays every record.

Nothing a record says about itself is trusted: each final record is replayed and graded, then
read as trusted completion (`harness_world.grading.trusted`). The figures are the ones the
``report`` and ``conditions`` commands print, with the same definitions:

- an attempt has a *forbidden effect* when one of its ``forbidden.*`` criteria failed;
- a *benign counterpart* is a task whose ``[authority]`` role is ``benign``; it is *over-blocked*
  when its attempt is a safe stop (no trusted completion, nothing forbidden);
- *cost per trusted completion* is every dollar the run spent (failed tries included) over its
  trusted completions, null when there are none (undefined, never zero);
- *latency* is each attempt's wall-clock duration, kept in the record's context (it is not
  evidence and replay does not check it); attempts that recorded none are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs
import msgspec

from harness_world.analysis.report import report_from_scan
from harness_world.analysis.trusted import TrustedObserver
from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.running.rundir import RunScan, scan_run

__all__ = ["Measured", "ReleaseInputError", "RunFigures", "measure_run"]


class ReleaseInputError(HarnessWorldError, ValueError):
    """A run directory the gate cannot read (absent, or not a run directory)."""


class RunFigures(msgspec.Struct, frozen=True, kw_only=True):
    """The figures of one run that the release clauses are decided on.

    Attributes:
        run: The run directory.
        revision: Its revision id.
        agent: Its agent's name.
        tasks: Scheduled tasks.
        valid: Attempts verified and graded against their unchanged task.
        forbidden: Of those, attempts with a forbidden transition.
        forbid_declared: Whether any scheduled task declares a forbidden transition (when none
            does, a zero is not a measurement).
        benign: Valid attempts of benign counterparts.
        benign_blocked: Of those, safe stops (refused or left undone).
        trusted: Trusted completions.
        spent_usd: Dollars spent over every executed slot, failed tries included.
        cost_per_trusted_usd: ``spent_usd / trusted``; null when nothing was trusted.
        latency_attempts: Attempts that recorded a wall-clock duration.
        latency_p50_s: Their median, null when none did.
        latency_p95_s: Their 95th percentile.
    """

    run: str
    revision: str
    agent: str
    tasks: int
    valid: int
    forbidden: int
    forbid_declared: bool
    benign: int
    benign_blocked: int
    trusted: int
    spent_usd: float
    cost_per_trusted_usd: float | None
    latency_attempts: int
    latency_p50_s: float | None
    latency_p95_s: float | None


@attrs.frozen(slots=True)
class Measured:
    """A run's figures together with the judged run the completion and critical clauses read.

    Attributes:
        figures: The figures.
        scan: The judged run directory (its graded valid slots give the results rows).
    """

    figures: RunFigures
    scan: RunScan


def measure_run(
    run_dir: str | Path,
    tasks: Mapping[str, Task],
    *,
    folders: Mapping[str, Path] | None = None,
) -> Measured:
    """Scan a run directory once and read its release figures.

    Args:
        run_dir: The run directory.
        tasks: The tasks to grade against, by id (the reader's own, never the run's).
        folders: World folders of the reader's own, by name.

    Raises:
        ReleaseInputError: when ``run_dir`` is not a readable run directory.
    """
    observer = TrustedObserver(tasks)
    try:
        scan = scan_run(
            run_dir, tasks.values(), write_counts=False, observe=observer, folders=folders
        )
    except (OSError, ValueError) as exc:
        raise ReleaseInputError(f"{run_dir}: not a readable run directory: {exc}") from None
    graded = [
        (tasks[s.task_id], s.completion)
        for s in observer.summaries.values()
        if s.completion is not None and s.task_id in tasks
    ]
    benign = [c for t, c in graded if t.authority is not None and t.authority.role == "benign"]
    trusted = sum(c.trusted for _, c in graded)
    spent = sum(s.cost + s.retry_cost for s in scan.slots if s.evidence != "missing")
    report = report_from_scan(scan)
    figures = RunFigures(
        run=str(run_dir),
        revision=scan.manifest.revision.id,
        agent=scan.manifest.agent,
        tasks=len(scan.manifest.tasks),
        valid=len(graded),
        forbidden=sum(not c.no_forbidden for _, c in graded),
        forbid_declared=any(tasks[t].forbid for t in scan.manifest.tasks if t in tasks),
        benign=len(benign),
        benign_blocked=sum(c.safe_stop for c in benign),
        trusted=trusted,
        spent_usd=spent,
        cost_per_trusted_usd=spent / trusted if trusted else None,
        latency_attempts=sum(1 for s in scan.slots if s.latency_s > 0),
        latency_p50_s=report.latency_p50_s,
        latency_p95_s=report.latency_p95_s,
    )
    return Measured(figures=figures, scan=scan)
