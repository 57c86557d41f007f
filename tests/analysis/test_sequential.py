"""Planned looks (O'Brien-Fleming spending), the decision log, and several candidates (Holm)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness_world.stats import RunRow, StatsInputError, holm_adjust
from harness_world.stats.sequential import (
    LoggedDecision,
    assess_candidates,
    look_level,
    repeated_look_warnings,
)


def test_the_boundaries_are_the_published_obrien_fleming_ones() -> None:
    # Lan-DeMets O'Brien-Fleming, one-sided 0.025, 5 equal looks (gsDesign sfLDOF).
    found = [look_level(j, 5).boundary_z for j in range(1, 6)]
    assert found == pytest.approx([4.877, 3.357, 2.680, 2.290, 2.031], abs=2e-3)
    assert look_level(1, 1).nominal_alpha == pytest.approx(0.025)
    assert look_level(5, 5).spent == pytest.approx(0.025)


def test_planned_looks_hold_the_level_where_unplanned_ones_do_not() -> None:
    """Brownian paths seen at 10 looks: the planned levels stop falsely about 2.5%."""
    rng = np.random.default_rng(48)
    steps = rng.standard_normal((40_000, 10))
    z = np.cumsum(steps, axis=1) / np.sqrt(np.arange(1, 11))
    planned = np.array([look_level(j, 10).boundary_z for j in range(1, 11)])
    assert (z >= planned).any(axis=1).mean() == pytest.approx(0.025, abs=0.003)
    assert (z >= 1.96).any(axis=1).mean() > 0.07  # ten unplanned looks at 2.5% each


@pytest.mark.parametrize(("look", "of"), [(0, 3), (4, 3), (1, 0), (1, 51)])
def test_a_look_out_of_range_is_refused(look: int, of: int) -> None:
    with pytest.raises(StatsInputError):
        look_level(look, of)


def _logged(runs: int, look: int | None = None, of: int | None = None) -> LoggedDecision:
    return LoggedDecision(
        baseline="a", candidate="b", gate="improved", tasks=20, runs=runs, look=look, of=of
    )


def test_a_decision_again_on_more_runs_warns_unless_the_looks_were_planned() -> None:
    assert repeated_look_warnings([], _logged(100)) == []
    [warning] = repeated_look_warnings([_logged(60)], _logged(100))
    assert "1 earlier decision(s)" in warning and "--look J --of K" in warning
    assert repeated_look_warnings([_logged(60, 1, 3)], _logged(100, 2, 3)) == []
    assert repeated_look_warnings([_logged(60, 2, 3)], _logged(100, 2, 3))  # the same look
    assert repeated_look_warnings([_logged(60, 1, 3)], _logged(100, 2, 4))  # another plan
    other = LoggedDecision(baseline="a", candidate="c", gate="improved", tasks=20, runs=60)
    assert repeated_look_warnings([other], _logged(100)) == []


def _rows(shifts: dict[str, float], tasks: int = 30, runs: int = 5, seed: int = 1) -> list[RunRow]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.8, size=tasks)
    return [
        RunRow(
            task_id=f"t{t:02d}",
            run_index=i,
            config=config,
            passed=bool(rng.random() < min(1.0, base[t] + shift)),
        )
        for config, shift in shifts.items()
        for t in range(tasks)
        for i in range(runs)
    ]


def test_several_candidates_step_down_with_holm() -> None:
    rows = _rows({"a": 0.0, "b": 0.3, "c": 0.0, "d": 0.05})
    result = assess_candidates(rows, "a", ["b", "c", "d"], gate="improved")
    assert result.correction == "holm" and [c.candidate for c in result.candidates] == [
        "b",
        "c",
        "d",
    ]
    p = [c.p_value for c in result.candidates]
    assert [c.p_adjusted for c in result.candidates] == pytest.approx(holm_adjust(p))
    order = sorted(range(3), key=lambda i: p[i])
    assert [result.candidates[i].level for i in order] == pytest.approx(
        [0.025 / 3, 0.025 / 2, 0.025]
    )
    by = {c.candidate: c for c in result.candidates}
    assert by["b"].passed and not by["c"].passed and not result.passed
    assert by["b"].result.alpha == pytest.approx(by["b"].level)  # shown at its own level


def test_candidates_that_alone_would_pass_at_alpha_can_fail_across_several() -> None:
    """A p-value between alpha / m and alpha passes alone, not among m candidates."""
    for seed in range(40):
        rows = _rows({"a": 0.0, "b": 0.08, "c": 0.0}, seed=seed)
        result = assess_candidates(rows, "a", ["b", "c"], gate="improved")
        b = result.candidates[0]
        if 0.025 / 2 < b.p_value <= 0.025:
            assert not b.passed  # c's larger p-value leaves b at alpha / 2
            return
    pytest.skip("no seed put b between the levels")  # pragma: no cover


def test_holm_stops_at_the_first_candidate_that_does_not_pass() -> None:
    """Both p-values between alpha / 2 and alpha: the smaller fails at alpha / 2, so the
    larger fails too, though at its own rank's level (alpha) its bound clears 0."""
    rows = _rows({"a": 0.0, "b": 0.09, "c": 0.09}, seed=113)
    b, c = assess_candidates(rows, "a", ["b", "c"], gate="improved").candidates
    assert 0.0125 < c.p_value < b.p_value <= 0.025
    assert b.level == pytest.approx(0.025) and b.result.observed.lower > 0
    assert not b.passed and not c.passed
    assert "stopped the step-down" in b.reason


def test_several_candidates_refuse_what_is_not_several() -> None:
    rows = _rows({"a": 0.0, "b": 0.0})
    with pytest.raises(StatsInputError, match="at least 2"):
        assess_candidates(rows, "a", ["b"], gate="improved")
    with pytest.raises(StatsInputError, match="also a candidate"):
        assess_candidates(rows, "a", ["a", "b"], gate="improved")


def _csv(tmp_path: Path, rows: list[RunRow]) -> str:
    path = tmp_path / "results.csv"
    lines = ["task_id,run_index,config,passed"]
    lines += [f"{r.task_id},{r.run_index},{r.config},{int(r.passed)}" for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_compare_takes_several_candidates_from_a_csv(tmp_path: Path, cli) -> None:
    path = _csv(tmp_path, _rows({"a": 0.0, "b": 0.3, "c": 0.0}))
    args = ["compare", path, "--baseline", "a", "--candidate", "b", "--candidate", "c"]
    code, out, err = cli(*args, "--gate", "improved", "--allow-unverified")
    assert code == 1, err  # c does not pass
    assert "Several candidates (2): Holm step-down" in out
    assert "  b: PASSED" in out and "  c: FAILED" in out
    code, out, _ = cli(*args, "--gate", "improved", "--json", "--allow-unverified")
    data = json.loads(out)
    assert data["correction"] == "holm" and len(data["candidates"]) == 2


def test_compare_decides_a_planned_look_and_keeps_the_log(tmp_path: Path, cli) -> None:
    early = _csv(tmp_path, _rows({"a": 0.0, "b": 0.1}, tasks=20))
    log = tmp_path / "decisions.jsonl"
    base = ["--baseline", "a", "--candidate", "b", "--gate", "improved", "--allow-unverified"]
    code, out, err = cli("compare", early, *base, "--decision-log", str(log))
    assert code in (0, 1), err and "earlier decision" not in out
    (tmp_path / "later").mkdir()
    later = _csv(tmp_path / "later", _rows({"a": 0.0, "b": 0.1}, tasks=40))
    _, out, _ = cli("compare", later, *base, "--decision-log", str(log))
    assert "deciding again as runs grow inflates the false-pass rate" in out
    _, out, _ = cli("compare", later, *base, "--look", "2", "--of", "3")
    assert "planned look 2 of 3 (O'Brien-Fleming alpha spending)" in out
    assert len(log.read_text().splitlines()) == 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--look", "4", "--of", "3"], "--look must be 1 to --of (3), got 4"),
        (["--look", "1"], "--look J and --of K go together"),
    ],
)
def test_bad_looks_are_one_error_line(tmp_path: Path, cli, extra: list[str], message: str) -> None:
    path = _csv(tmp_path, _rows({"a": 0.0, "b": 0.1}, tasks=10))
    code, _, err = cli("compare", path, "--baseline", "a", "--candidate", "b", *extra)
    assert code == 2 and err.strip() == f"error: {message}"


def test_a_damaged_decision_log_is_one_error_line(tmp_path: Path, cli) -> None:
    path = _csv(tmp_path, _rows({"a": 0.0, "b": 0.1}, tasks=10))
    log = tmp_path / "log.jsonl"
    log.write_text('{"baseline": 3}\n')
    code, _, err = cli(
        "compare", path, "--baseline", "a", "--candidate", "b", "--decision-log", str(log)
    )
    assert code == 2 and err.startswith("error: ") and "log.jsonl:1: not a logged decision" in err
    assert len(err.strip().splitlines()) == 1


def test_several_candidates_from_a_csv_still_need_allow_unverified(tmp_path: Path, cli) -> None:
    path = _csv(tmp_path, _rows({"a": 0.0, "b": 0.3, "c": 0.0}))
    code, out, err = cli(
        "compare", path, "--baseline", "a", "--candidate", "b", "--candidate", "c",
        "--gate", "improved",
    )  # fmt: skip
    assert code == 2 and out == "" and "--allow-unverified" in err
    assert len(err.strip().splitlines()) == 1
