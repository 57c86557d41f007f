"""Lost runs at the end of the run order, or on one side, are named beside --allow-missing."""

from __future__ import annotations

import numpy as np

from harness_world.stats import RunRow, assess

TASKS = [f"t{i:02d}" for i in range(20)]


def _rows(lost: dict[tuple[str, str], set[int]], runs: int = 5) -> list[RunRow]:
    rng = np.random.default_rng(7)
    return [
        RunRow(task_id=t, run_index=i, config=config, passed=bool(rng.random() < 0.6))
        for config in ("base", "cand")
        for t in TASKS
        for i in range(runs)
        if i not in lost.get((config, t), set())
    ]


def _warnings(lost: dict[tuple[str, str], set[int]]) -> list[str]:
    _, result = assess(_rows(lost), "base", "cand", gate="improved", allow_missing=True)
    return result.warnings


def test_a_candidate_cut_off_at_the_end_is_named() -> None:
    cut = {("cand", t): {4} for t in TASKS[10:]} | {("cand", t): {3, 4} for t in TASKS[16:]}
    found = _warnings(cut)
    assert any("cluster at the end of the run order in 'cand'" in w for w in found)
    assert any("lost runs fall on one side: 14 of 14 in 'cand'" in w for w in found)


def test_losses_at_random_positions_on_both_sides_raise_nothing() -> None:
    rng = np.random.default_rng(3)
    lost = {
        (config, t): {int(rng.integers(0, 5))} for config in ("base", "cand") for t in TASKS[::3]
    }
    found = _warnings(lost)
    assert not any("run order" in w or "one side" in w for w in found)


def test_two_lost_last_runs_alone_are_not_an_excess() -> None:
    lost = {("cand", "t01"): {4}, ("base", "t02"): {4}}
    assert not any("run order" in w for w in _warnings(lost))
