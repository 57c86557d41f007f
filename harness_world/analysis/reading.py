"""One replay of a run for every section ``report`` shows: figures, trusted completion, advice.

`read_run` reads a run directory once through the run reader; while it replays each record,
its process figures, the trusted-completion figures and (when asked) the advisories are
computed from it as measures, so no record is read twice and none is held after its turn, and
a judgement the verifier cached gives them without a replay.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs

from harness_world.analysis.attribution import FailureObserver, Kept
from harness_world.analysis.diagnosis import AdviceObserver
from harness_world.analysis.report import (
    PassKAt,
    ProcessObserver,
    RunReport,
    report_from_scan,
)
from harness_world.analysis.trusted import TrustedObserver, TrustedReport, trusted_report
from harness_world.grading.advice import Advisory
from harness_world.grading.task import Task
from harness_world.running.pending import settle
from harness_world.running.reader import Measuring, OpenRun, RunReader, collector_paused
from harness_world.running.reviews import scan_claims
from harness_world.running.rundir import RunScan

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
        scan: The run as its reader judged it.
        kept: What attribution reads of the verified records that did not pass, with their
            worlds (empty when advisories were not asked for).
        run: The run as the reader opened it (its index's bytes bind the records a page of
            the run shows).
    """

    report: RunReport
    trusted: TrustedReport | None
    advised: Mapping[tuple[str, int], list[Advisory]]
    tasks: Mapping[str, Task]
    scan: RunScan
    kept: Kept
    run: OpenRun


def read_run(
    run: Path,
    reader: RunReader,
    *,
    advise: bool = True,
    count_pending: bool = False,
    pass_k_at: PassKAt = (),
) -> RunReading:
    """Read ``run`` once for the report, the trusted figures and the advisories.

    Args:
        run: The run directory.
        reader: How it is read: the reader's tasks and worlds, and the key it trusts.
        advise: Whether to run the advisories on each graded record.
        count_pending: Count attempts still pending review after the run's review records
            as passed (`harness_world.running.pending.settle`; by default they are not).
        pass_k_at: k at which pass^k is bounded beside the ladder, or ``"all"``.

    Raises:
        harness_world.running.reader.RunReadError: The run directory cannot be read.
        harness_world.running.reader.ProvenanceRefused: The reader's key refuses the run.
        ValueError: Its review file is unreadable
            (`harness_world.running.reviews.ReviewError`).
    """
    tasks = reader.verifier.tasks or {}
    trusted_observer, advice_observer = TrustedObserver(tasks), AdviceObserver(tasks)
    process, failures = ProcessObserver(), FailureObserver(reader.verifier.world)
    measure: list[Measuring] = [process, trusted_observer]
    if advise:
        measure += [advice_observer, failures]
    opened = reader.open(run)
    scan = reader.read(opened, measure=measure)
    scan = settle(scan, count_pending=count_pending, trust_key=reader.trust_key)
    with collector_paused():
        trusted = trusted_report(scan.slots, tasks, trusted_observer.summaries)
        report = report_from_scan(
            scan, process.attempts(), scan_claims(scan, reader.trust_key), pass_k_at=pass_k_at
        )
    advised = advice_observer.advised
    return RunReading(report, trusted, advised, tasks, scan, failures.kept, opened)
