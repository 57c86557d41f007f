"""A run report's completion, latency, family and review figures over three small runs."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.analysis.report import RunReport, report_from_scan
from harness_world.running.reader import RunReader
from harness_world.running.reference_agents import reference_agent
from tests.trust.test_one_reader import _ChargesThenDies

LOST = ("payments.charge_lost_response", "payments.refund_timeout")
HELPDESK = ("helpdesk.reply_and_solve", "helpdesk.security_count")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("report-figures")
    lost = [t for t in hw.load_tasks("payments") if t.id in LOST]
    helpdesk = [t for t in hw.load_tasks("helpdesk") if t.id in HELPDESK]
    hw.run(lost, _ChargesThenDies(), samples=1, out=base / "retried", retries=1)
    hw.run(helpdesk, reference_agent("helpdesk", "oracle"), samples=2, out=base / "oracle")
    hw.run(helpdesk, reference_agent("helpdesk", "do-nothing"), samples=2, out=base / "nothing")
    return {name: base / name for name in ("retried", "oracle", "nothing")}


def _report(out: Path) -> RunReport:
    return report_from_scan(RunReader.of().read(out))


def test_a_retried_slot_completes_eventually_not_on_its_first_try(runs: dict[str, Path]) -> None:
    report = _report(runs["retried"])
    assert (report.first_try_completed, report.eventually_completed) == (0, 2)
    assert report.completed_but_failed == 0 and report.tries == {"2": 2}
    assert len(report.first_try_pass_k) == 1 and report.first_try_pass_k[0].pass_hat_k == 0
    assert report.task_families == {LOST[0]: "charge", LOST[1]: "refund"}


def test_prose_left_to_review_counts_once_per_attempt(runs: dict[str, Path]) -> None:
    report = _report(runs["oracle"])
    assert (report.not_reviewed_criteria, report.not_reviewed_attempts) == (2, 2)
    assert (report.first_try_completed, report.eventually_completed) == (4, 4)
    assert report.completed_but_failed == 2  # pending prose is not passed
    assert report.tries == {"1": 4} and report.first_try_pass_k == []
    assert report.task_families == {HELPDESK[0]: "reply", HELPDESK[1]: "question"}


def test_doing_nothing_completes_and_fails(runs: dict[str, Path]) -> None:
    report = _report(runs["nothing"])
    assert (report.completed_but_failed, report.eventually_completed) == (4, 4)


def test_the_latency_percentiles_are_of_the_attempts_that_took_time(
    runs: dict[str, Path],
) -> None:
    for out in runs.values():
        report = _report(out)
        took = [s.latency_s for s in report.attempts if s.latency_s > 0]
        assert report.latency_p50_s == pytest.approx(statistics.median(took))
        assert report.latency_p95_s is not None and report.latency_p50_s <= report.latency_p95_s
        assert report.latency_p95_s <= max(took)
