"""A hidden broken class: non-inferiority needs enough tasks for its margin, and on small
suites ``improved`` needs a gain such a class could not cancel unseen."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_world import stats
from harness_world.stats.decision import gate_p_value
from harness_world.stats.hidden_class import (
    gain_min_tasks,
    min_gain,
    min_margin,
    min_tasks,
    miss_probability,
)
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
        (lambda: min_gain(0, 0.025), "tasks must be >= 1"),
        (lambda: min_gain(10, 0.0), "alpha must be in"),
        (lambda: gain_min_tasks(-0.1, 0.025), "gain must be positive"),
        (lambda: gain_min_tasks(math.inf, 0.025), "gain must be positive"),
    ],
)
def test_bad_arguments_say_which(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@given(st.integers(min_value=1, max_value=500), alphas)
def test_min_gain_is_where_a_cancelling_class_hides_exactly_alpha(tasks, alpha):
    gain = min_gain(tasks, alpha)
    # A share g / (1 + g) broken cancels a gain g; it is absent (1 + g)^-n of the time.
    assert math.isclose(miss_probability(gain / (1 + gain), tasks), alpha, rel_tol=1e-9)
    assert gain_min_tasks(gain * (1 + 1e-9), alpha) <= tasks


@given(st.floats(min_value=1e-3, max_value=10.0), alphas)
def test_gain_min_tasks_is_the_smallest_suite_that_shows_the_gain(gain, alpha):
    n = gain_min_tasks(gain, alpha)
    assert (1 + gain) ** -n <= alpha * (1 + 1e-12)
    assert n == 1 or (1 + gain) ** -(n - 1) > alpha * (1 - 1e-12)


def _gain(n, before=3, after=4):
    """n tasks that each go from ``before`` to ``after`` passes of 5: a uniform gain."""
    return rows_for({f"t{i:02d}": (before, 5, after, 5) for i in range(n)})


def test_a_uniform_gain_of_twenty_points_needs_twenty_one_tasks(compare):
    # 20 tasks gaining 20 points: the bound clears 0, but a class of 16.7 % of tasks, all
    # broken, cancels the gain and is absent from 20 tasks 2.6 % of the time.
    code, out, _ = compare(_gain(20), "--gate", "improved")
    assert code == 1, out
    assert "points: above 0, but 20 tasks are too few to show a gain of +20.0 points" in out
    assert "absent from 20 tasks 2.6% of the time (above 2.5%)" in out
    assert "21 tasks, or a gain of at least 20.3 points, can show it" in out
    code, out, _ = compare(_gain(21), "--gate", "improved", "--json")
    assert code == 0, out
    decision = json.loads(out)["decision"]
    assert decision["min_tasks"] == 21 and decision["observed"]["min_gain"] < 0.2
    # The gain the message offers is one the gate accepts: 20 tasks gaining 40 points.
    code, out, _ = compare(_gain(20, 1, 3), "--gate", "improved")
    assert code == 0, out


def test_thirty_tasks_and_more_have_no_floor(compare):
    # 30 tasks gaining 10 points would need 39 tasks under the floor; from 30 none applies.
    rows = rows_for({f"t{i:02d}": (2, 10, 3, 10) for i in range(30)})
    code, out, _ = compare(rows, "--gate", "improved", "--json")
    assert code == 0, out
    decision = json.loads(out)["decision"]
    assert decision["observed"]["min_gain"] is None and decision["min_tasks"] is None
    code, out, _ = compare(rows[: len(rows) * 29 // 30], "--gate", "improved", "--json")
    decision = json.loads(out)["decision"]
    assert code == 1 and decision["min_tasks"] == 30
    assert decision["observed"]["min_gain"] == pytest.approx(min_gain(29, 0.025))


def test_five_tasks_can_never_show_improved(compare):
    # Even +100 points on every task: half the population broken hides 3.1 % of the time.
    code, out, _ = compare(_gain(5, 0, 5), "--gate", "improved")
    assert code == 1
    assert "6 tasks can show it (on 5, no gain can)" in out


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=4, max_size=29))
def test_the_gate_p_value_orders_the_evidence_as_the_verdict_does(tallies):
    """``improved`` passes exactly when its p-value (the test's and the floor's) is <= alpha."""
    pairs = stats.paired_samples(
        {f"t{i:02d}": [(r < b, r < c) for r in range(5)] for i, (b, c) in enumerate(tallies)}
    )
    design = stats.Design(pairs=pairs, gate="improved")
    d = stats.decide(design)
    p = gate_p_value(design)
    assert d.passed == (p <= d.alpha)
    if d.min_gain is not None and d.mean > 0:
        assert p >= (1 + d.mean) ** -d.tasks * (1 - 1e-12)


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


@pytest.mark.calibration
def test_the_gain_floor_is_what_refuses_the_all_gain_suites_of_a_skewed_null():
    """The null of the calibration's skewed-10, cut down: each of 10 tasks drops 90 points
    with probability 0.1, else gains 10 (mean change 0). About 35 % of suites hold no dropping
    task and show a uniform gain; the bound alone passes some of them, the floor none."""
    rng = np.random.default_rng(11)
    all_gain = bound_alone = floored = 0
    for _ in range(150):
        drops = rng.random(10) < 0.1
        runs = {}
        for i in range(10):
            before, after = (0.95, 0.05) if drops[i] else (0.85, 0.95)
            runs[f"t{i}"] = (int(rng.binomial(5, before)), 5, int(rng.binomial(5, after)), 5)
        _, result = stats.assess(rows_for(runs), "main", "pr", gate="improved")
        if not drops.any():
            all_gain += 1
            bound_alone += result.observed.lower > 0
        floored += result.passed
    assert all_gain > 30
    assert bound_alone > 0  # without the floor these pass, whatever their true mean is 0
    assert floored == 0
