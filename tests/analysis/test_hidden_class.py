"""Non-inferiority needs enough tasks that a broken class the size of the margin would show."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_world import stats
from harness_world.stats.hidden_class import min_margin, min_tasks, miss_probability
from tests.analysis import test_gate
from tests.analysis.test_gate import rows_for

compare = test_gate.compare  # the fixture that runs `compare` on rows written as a CSV

margins = st.floats(min_value=1e-3, max_value=0.999)
alphas = st.floats(min_value=1e-4, max_value=0.5)


@given(margins, alphas)
def test_min_tasks_is_the_smallest_suite_where_the_class_hides_at_most_alpha(margin, alpha):
    n = min_tasks(margin, alpha)
    assert miss_probability(margin, n) <= alpha
    assert n == 1 or miss_probability(margin, n - 1) > alpha


@given(st.integers(min_value=1, max_value=500), alphas)
def test_min_margin_is_where_the_class_hides_exactly_alpha(tasks, alpha):
    margin = min_margin(tasks, alpha)
    assert math.isclose(miss_probability(margin, tasks), alpha, rel_tol=1e-9)
    assert min_tasks(margin * (1 + 1e-9), alpha) <= tasks


def test_the_figures_the_messages_quote():
    assert min_tasks(0.10, 0.025) == 36  # 0.9^35 = 2.503 %, 0.9^36 = 2.25 %
    assert min_tasks(0.15, 0.025) == 23
    assert min_tasks(1.0, 0.025) == 1
    assert round(min_margin(12, 0.025), 4) == 0.2646


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: min_tasks(0.0, 0.025), "margin must be positive"),
        (lambda: min_tasks(math.nan, 0.025), "margin must be positive"),
        (lambda: min_tasks(0.1, 1.0), "alpha must be in"),
        (lambda: min_margin(0, 0.025), "tasks must be >= 1"),
        (lambda: miss_probability(0.1, -1), "tasks must be >= 0"),
    ],
)
def test_bad_arguments_say_which(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _same(n):
    """n tasks, identical on both sides: a drop bound near 0, far below any margin."""
    return rows_for({f"t{i:02d}": (i % 6, 5, i % 6, 5) for i in range(n)})


def test_twelve_identical_tasks_cannot_show_non_inferiority_at_twenty_points(compare):
    # The drop's bound (15.5 points, the binomial floor) is below 20: only the floor fails it.
    code, out, _ = compare(_same(12), "--gate", "non-inferior", "--margin", "20")
    assert code == 1
    assert "upper bound of the drop is 15.5 points: below the margin of 20 points" in out
    assert "12 tasks are too few to show it" in out
    assert "17 tasks, or a margin of at least 26.5 points" in out
    # The margin the message offers is one the gate accepts.
    code, out, _ = compare(_same(12), "--gate", "non-inferior", "--margin", "26.5")
    assert code == 0, out


def test_enough_tasks_pass_and_the_json_states_the_floor(compare):
    code, out, _ = compare(_same(36), "--gate", "non-inferior", "--margin", "10", "--json")
    assert code == 0
    assert json.loads(out)["decision"]["min_tasks"] == 36
    code, out, _ = compare(_same(35), "--gate", "non-inferior", "--margin", "10", "--json")
    assert code == 1
    assert json.loads(out)["decision"]["min_tasks"] == 36
    code, out, _ = compare(_same(36), "--gate", "improved", "--json")
    assert json.loads(out)["decision"]["min_tasks"] is None


@pytest.mark.calibration
def test_the_floor_is_what_holds_the_level_where_a_tenth_of_tasks_break():
    """The null of the calibration's ni-solid-broken-12, cut down: 12 tasks, each broken
    (1.0 -> 0.0) with probability 0.1, the rest unchanged. About 28 % of suites hold no broken
    task, and there the bound alone often passes; the floor refuses all of them."""
    rng = np.random.default_rng(7)
    bound_alone = floored = 0
    sims = 150
    for _ in range(sims):
        broken = rng.random(12) < 0.1
        base = rng.uniform(0.3, 0.95, 12)
        runs = {}
        for i in range(12):
            b = 5 if broken[i] else int(rng.binomial(5, base[i]))
            c = 0 if broken[i] else int(rng.binomial(5, base[i]))
            runs[f"t{i:02d}"] = (b, 5, c, 5)
        rows = rows_for(runs)
        _, result = stats.assess(rows, "main", "pr", gate="non-inferior", margin=0.10)
        bound_alone += -result.observed.lower < 0.10
        floored += result.passed
    assert floored == 0
    # Without the floor this null would pass well above the 2.5 % the gate states.
    assert bound_alone / sims > 0.05
