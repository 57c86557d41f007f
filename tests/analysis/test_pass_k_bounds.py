"""pass^k with an interval over tasks at every k: the gate's bootstrap over per-task pass^k."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world import stats
from harness_world.stats import TaskTally
from harness_world.stats.decision import pass_k_variance
from tests.conftest import examples

PASSES = (5, 4, 3, 5, 2, 5, 1, 0, 5, 4, 3, 5, 5, 4)


def _tallies(passes: tuple[int, ...] = PASSES, runs: int = 5) -> list[TaskTally]:
    return [TaskTally(task_id=f"t{i:02d}", runs=runs, passes=c) for i, c in enumerate(passes)]


def test_at_k_1_the_interval_is_the_headline_mean_interval() -> None:
    summary = stats.pass_k_bounds(stats.pass_k_summary(_tallies(), 1))
    headline = stats.mean_bounds(_tallies())
    assert summary.lower == pytest.approx(headline.lower)
    assert summary.upper == pytest.approx(headline.upper)
    assert summary.alpha == stats.DEFAULT_ALPHA


def test_every_k_has_an_interval_around_its_estimate_that_narrows_nothing_away() -> None:
    for k in range(1, 6):
        s = stats.pass_k_bounds(stats.pass_k_summary(_tallies(), k))
        assert s.lower is not None and s.upper is not None
        assert 0 <= s.lower < s.pass_hat_k < s.upper <= 1
        assert s.tasks == len(PASSES) and not s.bound_note


def test_tasks_short_of_k_runs_are_excluded_and_counted() -> None:
    tallies = [*_tallies(), TaskTally(task_id="short", runs=2, passes=2)]
    s = stats.pass_k_bounds(stats.pass_k_summary(tallies, 3))
    assert s.tasks == len(PASSES) and [e.task_id for e in s.excluded] == ["short"]
    assert s.lower is not None


def test_the_variance_is_exact_at_the_half_pass_rate() -> None:
    q = (3 + 0.5) / 6
    assert pass_k_variance(5, 3, 1) == pytest.approx(q * (1 - q) / 5)
    assert pass_k_variance(5, 5, 5) == pytest.approx((5.5 / 6) ** 5 - (5.5 / 6) ** 10)
    assert pass_k_variance(4, 0, 2) > 0


def test_weights_move_the_estimate_and_its_interval() -> None:
    tallies = _tallies()
    weights = {t.task_id: (4.0 if t.passes == 5 else 1.0) for t in tallies}
    plain = stats.pass_k_bounds(stats.pass_k_summary(tallies, 2))
    heavy = stats.pass_k_bounds(stats.pass_k_summary(tallies, 2, weights=weights))
    assert heavy.pass_hat_k > plain.pass_hat_k
    assert heavy.lower is not None and plain.lower is not None and heavy.lower > plain.lower
    assert heavy.lower < heavy.pass_hat_k < (heavy.upper or 0)


def test_three_tasks_give_no_interval_and_say_so() -> None:
    s = stats.pass_k_bounds(stats.pass_k_summary(_tallies((5, 3, 1)), 2))
    assert (s.lower, s.upper) == (0.0, 1.0) and "no interval possible" in s.bound_note
    one = stats.pass_k_bounds(stats.pass_k_summary(_tallies((5,)), 2))
    assert one.lower is None and "fewer than 2 tasks" in one.bound_note


@settings(max_examples=examples(15, 60), deadline=None)
@given(st.lists(st.integers(0, 6), min_size=4, max_size=12), st.integers(1, 6))
def test_the_bounds_hold_the_estimate_whatever_the_tallies(passes: list[int], k: int) -> None:
    s = stats.pass_k_bounds(stats.pass_k_summary(_tallies(tuple(passes), runs=6), k))
    assert s.lower is not None and s.upper is not None
    assert 0 <= s.lower <= s.pass_hat_k + 1e-12 and s.pass_hat_k - 1e-12 <= s.upper <= 1


@pytest.mark.calibration
def test_coverage_of_pass_3_over_fresh_task_draws() -> None:
    """The interval covers the population pass^3 about as often as it says (seeded, reduced)."""
    rng = np.random.default_rng(48)
    sims, covered = 120, 0
    for _ in range(sims):
        rates = rng.beta(2.0, 1.0, size=20)  # the population's pass^3: E[p^3] = 0.4
        passes = tuple(int(x) for x in rng.binomial(5, rates))
        s = stats.pass_k_bounds(stats.pass_k_summary(_tallies(passes), 3))
        covered += (s.lower or 0) <= 0.4 <= (s.upper or 1)
    assert covered / sims >= 0.88
