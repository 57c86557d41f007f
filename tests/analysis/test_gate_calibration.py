"""The calibration bench, reduced: its plumbing end to end and the gate's level by simulation.

Kept apart from ``test_gate.py`` (the gate's numbered cases and invariants) so that the two
files, the core tier's longest, run on different test workers.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import examples

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.calibration


# ------------------------------------------------------- the calibration bench (reduced)


def _bench():
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import stats_calibration
    finally:
        sys.path.pop(0)
    return stats_calibration


def test_calibration_bench_runs_reduced_and_ends_with_json(capsys, monkeypatch):
    monkeypatch.delenv("HW_FULL", raising=False)
    bench = _bench()
    assert bench.main(["--sims", "2"]) == 0  # every cell and check once or twice: the plumbing
    out = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(out[-1])
    assert summary["sims"] == 2
    assert set(summary["results"]) == {s.name for s in bench.SCENARIOS}
    assert set(summary["checks"]) == {c.name for c in bench.CHECKS}
    assert out[0].startswith("| scenario | gate | false: **gate**")
    assert "| scenario | interval | label | coverage |" in out
    assert "| scenario | finding | level | rate |" in out
    rare = [line for line in out if line.startswith(("| skewed-", "| ni-solid-broken-"))]
    assert any(line.count("|") == 7 for line in rare)  # the rare-class table's rows
    for name in (
        "gate_cells_at_most_1_point_over",
        "gate_max_abs_gap_points",
        "interaction_max_abs_gap_points",
        "coverage_min_gap_points",
        "drift_false_list_rate_max",
        "headline_coverage_min",
        "lost_failures_improved_rate",
    ):
        assert name in summary


def test_calibration_bench_measures_one_scenario_with_only(capsys):
    bench = _bench()
    assert bench.main(["--sims", "4", "--only", "skewed-10"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert set(json.loads(out[-1])["results"]) == {"skewed-10"}
    assert any(line.startswith("| scenario | gate | suites holding no rare task") for line in out)
    with pytest.raises(SystemExit):
        bench.main(["--sims", "4", "--only", "no-such-scenario"])
    assert "matches no scenario" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--only", "skewed-10", "--write-docs"])


def test_calibration_bench_reads_the_worlds_family_sizes():
    bench = _bench()
    sizes = bench.world_family_sizes()
    assert sizes == bench.KNOWN_SIZES  # the fallback constants match the task files
    names = {s.name for s in bench.SCENARIOS}
    assert f"payments-{sum(sizes['payments'])}" in names
    assert any(n.startswith("helpdesk/inventory-") or n.startswith("inventory-") for n in names)


def test_calibration_bench_decides_crossed_runs_and_drift_with_the_library():
    from harness_world.analysis.crossed import render_crossed
    from harness_world.analysis.drift import render_drift

    bench = _bench()
    rng = np.random.default_rng(4)
    check = next(c for c in bench.CHECKS if c.name == "crossed-3p-varied-20")
    result, truth = bench.crossed_once(check, rng)
    assert [d.profile for d in result.profiles] == ["m0", "m1", "m2"]
    assert result.aggregate.tasks == 20 and result.interaction is not None
    assert all(
        d.low is not None and d.confidence == pytest.approx(1 - 0.05 / 3) for d in result.profiles
    )
    assert truth.shape == (3,) and "interaction" in render_crossed(result).lower()
    drift = next(c for c in bench.CHECKS if c.name == "drift-12x3")
    report = bench.drift_once(drift, rng)
    assert len(report.tasks) == 12 and report.low is not None and report.low <= report.high
    assert "regressions (sequential below fresh" in render_drift(report)


def test_crossed_interaction_holds_its_level_without_an_interaction():
    """The bench's 3-profile crossed null, reduced: the sign rule's ~73% is gone."""
    bench = _bench()
    check = next(c for c in bench.CHECKS if c.name == "crossed-3p-none-20")
    sims = examples(80, 2000)
    figures = bench.run_check(check, sims, seed=5)
    assert figures["interaction"] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / sims)
    assert figures["aggregate_coverage"] >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / sims)


def test_case_4_false_alarm_rate_with_families_is_near_nominal():
    """The bench's families scenario, reduced: the old band's false alarms vs the gate's."""
    bench = _bench()
    sc = next(s for s in bench.SCENARIOS if s.name == "families-8x5")
    cell = bench.run_cell(sc, "improved", "null", examples(200, 2000), seed=12)
    assert cell["band"] >= 0.06  # the band ignores families
    assert cell["gate"] <= 0.045  # within 2 points of the nominal one-sided 2.5%
