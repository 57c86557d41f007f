"""The weighted suite pass rate: the task files' weights, computed as by hand, shown beside."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis.report import report_from_scan
from harness_world.analysis.report_text import render_report
from harness_world.analysis.weighted import weighted_mean
from harness_world.running.agents import ScriptedAgent
from harness_world.running.oracles import load_oracles
from harness_world.running.pending import settle
from harness_world.running.reader import RunReader
from harness_world.stats import RunRow
from tests.conftest import accept_prose

PASSES = ("helpdesk.reply_and_solve", "helpdesk.security_count")
FAILS = "helpdesk.assign_on_hold_unowned"


def _rows(results: dict[str, list[bool]]) -> list[RunRow]:
    return [
        RunRow(task_id=task, run_index=i, config="run", passed=passed)
        for task, outcomes in results.items()
        for i, passed in enumerate(outcomes)
    ]


def test_the_weighted_mean_is_the_weighted_average_of_per_task_rates() -> None:
    rows = _rows({"a": [True, False], "b": [True, True, True], "c": [False]})
    found = weighted_mean(rows, {"a": 2.0, "b": 0.5})
    assert found is not None
    # a: 1/2 at weight 2, b: 3/3 at weight 0.5, c: 0/1 at weight 1
    assert found.mean == pytest.approx((2 * 0.5 + 0.5 * 1 + 1 * 0) / 3.5)
    assert found.unweighted == pytest.approx((0.5 + 1 + 0) / 3)
    assert found.tasks == 3 and found.weights == {"a": 2.0, "b": 0.5}


def test_no_weighted_figure_when_every_weight_is_one() -> None:
    rows = _rows({"a": [True], "b": [False]})
    assert weighted_mean(rows, {}) is None
    assert weighted_mean(rows, {"a": 1.0}) is None
    assert weighted_mean(rows, {"not_run": 3.0}) is None  # weighs nothing that was averaged
    assert weighted_mean([], {"a": 2.0}) is None


def test_report_prints_the_weighted_rate_beside_the_unweighted(tmp_path: Path) -> None:
    shipped = {t.id: t for t in hw.load_tasks("helpdesk")}
    oracles = load_oracles("helpdesk")
    scripts = {t: oracles[t] for t in PASSES} | {FAILS: lambda ctx: "nothing done"}
    tasks = [shipped[t] for t in (*PASSES, FAILS)]
    out = tmp_path / "run"
    hw.run(tasks, ScriptedAgent(name="half", scripts=scripts), samples=2, out=out)
    assert accept_prose(out) == 2  # reply_and_solve's replies, read and accepted
    plain = report_from_scan(settle(RunReader.of(tasks).read(out)))
    assert isinstance(plain.weighted_mean, msgspec.UnsetType)
    assert "weighted" not in render_report(plain)
    assert "weighted_mean" not in msgspec.json.encode(plain).decode()
    # Weights are labels outside the task hash: the same records, read with weights declared.
    weighted = [msgspec.structs.replace(t, weight=3.0) if t.id == FAILS else t for t in tasks]
    report = report_from_scan(settle(RunReader.of(weighted).read(out)))
    figure = report.weighted_mean
    assert not isinstance(figure, msgspec.UnsetType)
    assert figure.mean == pytest.approx((1 + 1 + 3 * 0) / 5)
    assert figure.unweighted == pytest.approx(2 / 3)
    assert report.suite_mean is not None and report.suite_mean.mean == pytest.approx(2 / 3)
    assert (
        "weighted suite mean pass rate over 3 tasks: 0.400 (the task files' weights; "
        "unweighted 0.667)" in render_report(report)
    )


def test_weighted_suites_weigh_pass_k_at_every_k_with_its_interval(tmp_path: Path) -> None:
    shipped = {t.id: t for t in hw.load_tasks("helpdesk")}
    oracles = load_oracles("helpdesk")
    scripts = {t: oracles[t] for t in PASSES} | {FAILS: lambda ctx: "nothing done"}
    tasks = [shipped[t] for t in (*PASSES, FAILS)]
    out = tmp_path / "run"
    hw.run(tasks, ScriptedAgent(name="half", scripts=scripts), samples=2, out=out)
    accept_prose(out)
    plain = report_from_scan(settle(RunReader.of(tasks).read(out)))
    assert plain.weighted_pass_k == []
    weighted = [msgspec.structs.replace(t, weight=3.0) if t.id == FAILS else t for t in tasks]
    report = report_from_scan(settle(RunReader.of(weighted).read(out)))
    assert [p.k for p in report.weighted_pass_k] == [1, 2]
    for p in report.weighted_pass_k:
        assert p.weighted and p.pass_hat_k == pytest.approx(2 / 5)  # 1, 1 and 0 at 1, 1, 3
        assert p.lower == 0.0 and p.upper == 1.0  # 3 tasks: no interval possible, said so
        assert p.bound_note
    text = render_report(report)
    assert "weighted pass^k" in text and "pass^k interval over tasks: 3 clusters" in text
