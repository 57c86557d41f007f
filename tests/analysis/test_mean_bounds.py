"""`mean_bounds`: the gate's bootstrap-t on one configuration's mean pass rate."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world.stats import StatsInputError, TaskTally, mean_bounds


def _tallies(counts: list[tuple[int, int]]) -> list[TaskTally]:
    return [TaskTally(task_id=f"t{i:02d}", runs=r, passes=p) for i, (p, r) in enumerate(counts)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 5).flatmap(lambda r: st.tuples(st.integers(0, r), st.just(r))),
                min_size=2, max_size=12))  # fmt: skip
def test_the_interval_holds_the_mean_and_stays_a_rate(counts: list[tuple[int, int]]) -> None:
    d = mean_bounds(_tallies(counts))
    mean = sum(p / r for p, r in counts) / len(counts)
    assert d.mean == pytest.approx(mean)
    assert d.lower <= mean <= d.upper
    assert d.upper > d.lower  # never certainty, not even when every task agrees


def test_one_run_per_task_and_equal_rates_still_give_an_interval() -> None:
    d = mean_bounds(_tallies([(1, 1)] * 6))
    assert d.floor_applied and d.lower < 1.0


def test_families_are_the_clusters() -> None:
    tallies = _tallies([(5, 5), (4, 5), (0, 5), (1, 5), (3, 5), (2, 5)])
    families = {"t00": "a", "t01": "a", "t02": "b", "t03": "b", "t04": "c", "t05": "c"}
    assert mean_bounds(tallies, families=families).clusters == 3
    assert mean_bounds(tallies).clusters is None


def test_a_task_without_runs_is_refused() -> None:
    with pytest.raises(StatsInputError, match="at least one run"):
        mean_bounds(_tallies([(1, 2), (0, 0)]))
