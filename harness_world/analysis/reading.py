"""One replay of a run for every section ``report`` shows: figures, trusted completion, advice.

`read_run` scans a run directory once; while the scan replays each record, its process
figures, the trusted-completion figures and (when asked) the advisories are computed from it,
so no record is read twice and none is held after its turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs

from harness_world.analysis.diagnosis import AdviceObserver
from harness_world.analysis.report import ProcessObserver, RunReport, report_from_scan
from harness_world.analysis.trusted import TrustedObserver, TrustedReport, trusted_report
from harness_world.engine.world import World
from harness_world.grading.advice import Advisory
from harness_world.grading.task import Task
from harness_world.grading.verifier import VerifiedRecord
from harness_world.running.reviews import standing_claims
from harness_world.running.rundir import scan_run

__all__ = ["RunReading", "read_run"]


@attrs.frozen(slots=True)
class RunReading:
    """What one scan of a run gives ``report``.

    Attributes:
        report: The run's figures.
        trusted: Its trusted-completion figures (None when no task declares a fault, a
            forbidden transition or a receipt, or when they cannot be read).
        advised: The advisories of each graded attempt by (task id, sample); empty when not
            asked for.
        tasks: The reader's tasks by id, that the scan graded by (a page of the run grades
            and advises by them too).
    """

    report: RunReport
    trusted: TrustedReport | None
    advised: Mapping[tuple[str, int], list[Advisory]]
    tasks: Mapping[str, Task]


def read_run(
    run: Path,
    tasks: Mapping[str, Task],
    *,
    folders: Mapping[str, Path] | None = None,
    worlds: Mapping[str, World] | None = None,
    advise: bool = True,
) -> RunReading:
    """Scan ``run`` once, graded by ``tasks``, for the report, trusted figures and advisories.

    Args:
        run: The run directory.
        tasks: The reader's tasks by id.
        folders: The reader's own world folders by name, as in `scan_run`.
        worlds: Loaded worlds by name that records replay on instead (a world's outside data).
        advise: Whether to run the advisories on each graded record.

    Raises:
        OSError: The run directory cannot be read.
        ValueError: Its manifest or index is invalid, or its review file
            (`harness_world.running.reviews.ReviewError`).
    """
    trusted_observer, advice_observer = TrustedObserver(tasks), AdviceObserver(tasks)
    process = ProcessObserver()

    def observe(path: Path, verified: VerifiedRecord) -> None:
        process(path, verified)
        trusted_observer(path, verified)
        if advise:
            advice_observer(path, verified)

    scan = scan_run(run, tasks.values(), observe=observe, folders=folders, worlds=worlds)
    try:
        trusted = trusted_report(run, tasks, summaries=trusted_observer.summaries)
    except (OSError, ValueError):
        trusted = None
    report = report_from_scan(scan, process.attempts(), standing_claims(run))
    return RunReading(report, trusted, advice_observer.advised, tasks)
