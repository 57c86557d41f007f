"""Tests for harness_world.stats: worked numbers, brute-force checks and invariants."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world import stats
from harness_world.stats import RunRow, StatsInputError, TaskTally

FAST = settings(max_examples=200, deadline=None)
SLOW = settings(max_examples=40, deadline=None)


# ---------------------------------------------------------------- worked numbers from the seeds


def test_eight_of_ten_pass_hat_three_is_56_over_120():
    exact = stats.pass_hat_k_exact(10, 8, 3)
    assert exact == Fraction(56, 120)
    assert round(stats.pass_hat_k(10, 8, 3) * 100, 1) == 46.7


def test_eight_of_ten_pass_at_three_is_one():
    assert stats.pass_at_k_exact(10, 8, 3) == 1
    assert stats.pass_at_k(10, 8, 3) == 1.0


def test_band_of_6_7_over_89_tasks_means_sd_of_about_32_points():
    # Run band = z * sd / sqrt(n) backwards.
    sd = 0.067 * math.sqrt(89) / 1.96
    assert round(sd * 100) == 32
    # And forwards: 89 differences with exactly that sd give the +/-6.7 band and z = 1.96.
    raw = np.random.default_rng(0).normal(size=89)
    diffs = -0.025 + (raw - raw.mean()) / raw.std(ddof=1) * sd
    band = stats.noise_band(diffs.tolist())
    assert band.multiplier.kind == "z"
    assert band.multiplier.value == 1.96
    assert band.half_width == pytest.approx(0.067, abs=1e-12)
    assert band.sd == pytest.approx(sd, rel=1e-12)
    assert band.verdict == "inside"


def test_independent_coin_at_62_9_percent_passes_five_of_five_about_ten_percent():
    assert round(0.629**5 * 100) == 10
    # pass^5 of a task with many runs at that rate approaches the same number.
    assert stats.pass_hat_k(100_000, 62_900, 5) == pytest.approx(0.629**5, rel=1e-3)


def test_shrinking_the_harness_swap_band_to_2_5_points_needs_about_650_tasks():
    # The seed's "roughly 650 tasks": the fewest tasks whose band, at the sd above, is 2.5
    # points wide at most; docs/stats.md prints ceil((1.96 sd / 2.5)^2) = 640.
    sd = 0.067 * math.sqrt(89) / 1.96

    def half_width(n: int) -> float:
        raw = np.random.default_rng(n).normal(size=n)
        diffs = (raw - raw.mean()) / raw.std(ddof=1) * sd
        return stats.noise_band(diffs.tolist()).half_width

    needed = math.ceil((1.96 * sd / 0.025) ** 2)
    assert needed == 640 and 600 <= needed <= 700
    assert half_width(needed) <= 0.025 < half_width(needed - 1)


# ---------------------------------------------------------------- pass^k and pass@k


@FAST
@given(st.data())
def test_estimators_equal_brute_force_over_all_k_subsets(data):
    n = data.draw(st.integers(1, 9))
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    all_pass = Fraction(sum(all(s) for s in subsets), len(subsets))
    any_pass = Fraction(sum(any(s) for s in subsets), len(subsets))
    assert stats.pass_hat_k_exact(n, c, k) == all_pass
    assert stats.pass_at_k_exact(n, c, k) == any_pass
    assert stats.pass_hat_k(n, c, k) == float(all_pass)
    assert stats.pass_at_k(n, c, k) == float(any_pass)


def test_estimators_stay_exact_for_large_n():
    n, k = 10**6, 1000
    # C(n-1, k) / C(n, k) = (n - k) / n exactly.
    assert stats.pass_hat_k_exact(n, n - 1, k) == Fraction(n - k, n)
    assert stats.pass_at_k_exact(n, 1, k) == Fraction(k, n)
    assert stats.pass_hat_k(n, n // 2, k) > 0.0
    assert stats.pass_hat_k(n, n // 2, k) < 0.5**k * 1.01


@pytest.mark.parametrize(("n", "c", "k"), [(2, 1, 3), (5, 6, 1), (5, -1, 1), (5, 2, 0)])
def test_estimators_refuse_bad_counts(n, c, k):
    with pytest.raises(StatsInputError):
        stats.pass_hat_k(n, c, k)
    with pytest.raises(StatsInputError):
        stats.pass_at_k(n, c, k)


def test_pass_k_summary_excludes_and_reports_tasks_with_fewer_than_k_runs():
    tallies = [
        TaskTally(task_id="b", runs=10, passes=8),
        TaskTally(task_id="a", runs=2, passes=2),
        TaskTally(task_id="c", runs=3, passes=0),
    ]
    summary = stats.pass_k_summary(tallies, 3)
    assert [t.task_id for t in summary.per_task] == ["b", "c"]
    assert [e.task_id for e in summary.excluded] == ["a"]
    assert "fewer than k=3" in summary.excluded[0].reason
    assert summary.tasks == 2
    assert summary.pass_hat_k == pytest.approx((56 / 120 + 0) / 2)
    assert summary.pass_at_k == pytest.approx((1 + 0) / 2)


def test_pass_k_summary_uses_declared_weights():
    tallies = [TaskTally(task_id="x", runs=4, passes=4), TaskTally(task_id="y", runs=4, passes=0)]
    summary = stats.pass_k_summary(tallies, 2, weights={"x": 3.0, "y": 1.0})
    assert summary.weighted
    assert summary.pass_hat_k == 0.75
    with pytest.raises(StatsInputError, match="unknown task"):
        stats.pass_k_summary(tallies, 2, weights={"x": 1.0, "y": 1.0, "z": 1.0})
    with pytest.raises(StatsInputError, match="no weight declared"):
        stats.pass_k_summary(tallies, 2, weights={"x": 1.0})
    with pytest.raises(StatsInputError, match="sum to 0"):
        stats.pass_k_summary(tallies, 2, weights={"x": 0.0, "y": 0.0})


def test_pass_k_summary_with_no_eligible_task_is_an_error():
    with pytest.raises(StatsInputError, match="no task has at least k=5"):
        stats.pass_k_summary([TaskTally(task_id="a", runs=4, passes=4)], 5)


@FAST
@given(
    st.lists(st.tuples(st.integers(1, 8), st.integers(0, 8)), min_size=1, max_size=8),
    st.randoms(use_true_random=False),
)
def test_pass_k_summary_ignores_task_order(counts, rnd):
    tallies = [
        TaskTally(task_id=f"t{i}", runs=n, passes=min(c, n)) for i, (n, c) in enumerate(counts)
    ]
    tallies.append(TaskTally(task_id="anchor", runs=8, passes=3))
    shuffled = tallies[:]
    rnd.shuffle(shuffled)
    assert stats.pass_k_summary(tallies, 2) == stats.pass_k_summary(shuffled, 2)


# ---------------------------------------------------------------- intervals for a proportion


def test_wilson_and_exact_match_scipy():
    from scipy import stats as sps

    for x, n in [(8, 10), (0, 7), (7, 7), (31, 89), (1, 2)]:
        ref_w = sps.binomtest(x, n).proportion_ci(method="wilson")
        ref_e = sps.binomtest(x, n).proportion_ci(method="exact")
        w = stats.wilson_interval(x, n)
        e = stats.clopper_pearson_interval(x, n)
        assert (w.low, w.high) == pytest.approx((ref_w.low, ref_w.high), abs=1e-12)
        assert (e.low, e.high) == pytest.approx((ref_e.low, ref_e.high), abs=1e-10)


@FAST
@given(
    st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.floats(0.5, 0.999),
)
def test_wilson_interval_contains_the_point_estimate(xn, confidence):
    x, n = xn
    w = stats.wilson_interval(x, n, confidence)
    assert 0.0 <= w.low <= x / n <= w.high <= 1.0
    e = stats.clopper_pearson_interval(x, n, confidence)
    assert 0.0 <= e.low <= x / n <= e.high <= 1.0


def test_proportion_intervals_refuse_bad_input():
    for args in [(0, 0), (3, 2), (-1, 2)]:
        with pytest.raises(StatsInputError):
            stats.wilson_interval(*args)
        with pytest.raises(StatsInputError):
            stats.clopper_pearson_interval(*args)
    with pytest.raises(StatsInputError):
        stats.wilson_interval(1, 2, confidence=1.0)


# ---------------------------------------------------------------- the noise band

diff_lists = st.lists(
    st.floats(-1, 1, allow_nan=False, allow_infinity=False), min_size=2, max_size=60
)


@FAST
@given(diff_lists, st.floats(1.0, 50.0))
def test_scaling_the_differences_up_never_narrows_the_band(diffs, factor):
    before = stats.noise_band(diffs)
    after = stats.noise_band([d * factor for d in diffs])
    # Equal mathematically at factor 1; allow only float rounding in the other direction.
    assert after.half_width >= before.half_width * (1 - 1e-12)


@FAST
@given(diff_lists, st.randoms(use_true_random=False))
def test_band_ignores_the_order_of_the_differences(diffs, rnd):
    shuffled = diffs[:]
    rnd.shuffle(shuffled)
    assert stats.noise_band(diffs) == stats.noise_band(shuffled)


def test_band_formula_and_verdicts():
    diffs = [0.2] * 20 + [0.0] * 20
    band = stats.noise_band(diffs)
    sd = float(np.std(diffs, ddof=1))
    assert band.sd == pytest.approx(sd)
    assert band.half_width == pytest.approx(1.96 * sd / math.sqrt(40))
    assert band.verdict == "above"
    assert stats.noise_band([-d for d in diffs]).verdict == "below"
    assert stats.noise_band([0.2, -0.2] * 20).verdict == "inside"


def test_a_mean_exactly_on_the_edge_is_inside():
    # All differences zero: mean 0 sits exactly on both edges of a zero-width band.
    assert stats.noise_band([0.0, 0.0, 0.0]).verdict == "inside"
    # A non-zero mean exactly equal to the half-width: find z that makes it exact in floats.
    diffs = [0.2] * 10 + [0.0] * 20
    mean = math.fsum(diffs) / 30
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / 29)
    z = mean * math.sqrt(30) / sd
    for _ in range(100):
        if z * sd / math.sqrt(30) == mean:
            break
        z = math.nextafter(z, math.inf if z * sd / math.sqrt(30) < mean else 0.0)
    band = stats.noise_band(diffs, z=z)
    assert band.half_width == band.mean
    assert band.verdict == "inside"
    assert stats.noise_band(diffs, z=math.nextafter(z, 0.0) * (1 - 1e-9)).verdict == "above"


def test_multiplier_is_z_from_30_tasks_and_t_below():
    from scipy import stats as sps

    assert stats.band_multiplier(30) == stats.Multiplier(value=1.96, kind="z", df=None, z=1.96)
    assert stats.band_multiplier(89, z=2.5).value == 2.5
    small = stats.band_multiplier(12)
    assert small.kind == "t"
    assert small.df == 11
    assert small.value == pytest.approx(sps.t.ppf(sps.norm.cdf(1.96), 11))
    assert small.value == pytest.approx(2.201, abs=1e-3)
    # An explicit z below 30 picks the level: same as the default for 1.96.
    assert stats.band_multiplier(12, z=1.96) == small
    assert stats.band_multiplier(12, z=2.5).value == pytest.approx(sps.t.ppf(sps.norm.cdf(2.5), 11))


@FAST
@given(st.integers(2, 29), st.floats(0.5, 4.0))
def test_t_multiplier_is_wider_than_z_below_30_tasks(n, z):
    m = stats.band_multiplier(n, z)
    assert m.kind == "t"
    assert m.value > z


@pytest.mark.parametrize("diffs", [[], [0.5]])
def test_fewer_than_two_paired_tasks_is_a_clear_error(diffs):
    with pytest.raises(StatsInputError, match="fewer than 2 paired tasks") as info:
        stats.noise_band(diffs)
    assert isinstance(info.value, ValueError)


def test_bad_z_is_refused():
    for z in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(StatsInputError):
            stats.noise_band([0.0, 1.0], z=z)


# ---------------------------------------------------------------- classes, flips, McNemar


def test_pair_tallies_sorts_by_task_id_whatever_the_input_order():
    base = [TaskTally(task_id=t, runs=5, passes=2) for t in ("c", "a", "b")]
    cand = [TaskTally(task_id=t, runs=5, passes=3) for t in ("b", "d", "c", "a")]
    paired, excluded = stats.pair_tallies(base, cand, min_runs=5)
    assert [p.task_id for p in paired] == ["a", "b", "c"]
    assert [(e.task_id, e.reason) for e in excluded] == [("d", "only in 'candidate'")]
    assert paired[0].difference == pytest.approx(0.2)


def test_classes_flips_and_regressions():
    def pair(task, bp, cp, runs=5):
        return stats.PairedTask(
            task_id=task,
            baseline=TaskTally(task_id=task, runs=runs, passes=bp),
            candidate=TaskTally(task_id=task, runs=runs, passes=cp),
            difference=(cp - bp) / runs,
        )

    paired = [
        pair("s2b", 5, 0),
        pair("b2s", 0, 5),
        pair("s2f", 5, 4),
        pair("f2b", 3, 0),
        pair("same", 5, 5),
    ]
    assert stats.classify(paired[0].baseline) == "solid"
    assert stats.classify(paired[3].baseline) == "flaky"
    assert stats.classify(paired[3].candidate) == "broken"
    counts = stats.count_classes(p.baseline for p in paired)
    assert counts == stats.ClassCounts(solid=3, flaky=1, broken=1)
    flips = stats.flipped_tasks(paired)
    assert [(f.task_id, f.baseline_class, f.candidate_class) for f in flips] == [
        ("b2s", "broken", "solid"),
        ("s2b", "solid", "broken"),
    ]
    assert stats.regressions(paired) == ["s2b", "s2f"]
    # With one run per task a regression is exactly "baseline passed, candidate failed".
    single = [pair("p", 1, 0, runs=1), pair("q", 0, 1, runs=1), pair("r", 1, 1, runs=1)]
    assert stats.regressions(single) == ["p"]


def test_mcnemar_midp_by_hand():
    res = stats.mcnemar_midp([False] * 5 + [True] * 3, [True] * 5 + [True] * 3)
    assert (res.baseline_only, res.candidate_only) == (0, 5)
    # exact p = 2 / 32; mid-p subtracts P(X = 0) = 1 / 32.
    assert res.p_value == pytest.approx(1 / 32)
    assert stats.mcnemar_midp([True, False], [False, True]).p_value == 1.0
    assert stats.mcnemar_midp([True, True], [True, True]).p_value == 1.0
    with pytest.raises(StatsInputError, match="fewer than 2 paired tasks"):
        stats.mcnemar_midp([True], [False])


@FAST
@given(st.integers(0, 40), st.integers(0, 40))
def test_mcnemar_midp_is_exact_p_minus_the_point_mass(b, c):
    from scipy import stats as sps

    base = [True] * b + [False] * c + [True, False]
    cand = [False] * b + [True] * c + [True, False]
    mid = stats.mcnemar_midp(base, cand).p_value
    n, m = b + c, min(b, c)
    if n == 0:
        assert mid == 1.0
        return
    exact = min(1.0, 2 * sps.binom.cdf(m, n, 0.5))
    expected = min(1.0, 2 * sps.binom.cdf(m, n, 0.5) - sps.binom.pmf(m, n, 0.5))
    assert mid == pytest.approx(expected, abs=1e-12)
    assert mid <= exact + 1e-12


# ---------------------------------------------------------------- compare_results


def rows_for(spec):
    """spec: {task: (baseline passes, baseline runs, candidate passes, candidate runs)}."""
    out = []
    for task, (bp, bn, cp, cn) in spec.items():
        for cfg, passes, runs in (("main", bp, bn), ("pr", cp, cn)):
            out.extend(
                RunRow(task_id=task, run_index=r, config=cfg, passed=r < passes)
                for r in range(runs)
            )
    return out


SPEC = {
    "a": (5, 5, 5, 5),
    "b": (5, 5, 0, 5),
    "c": (0, 5, 5, 5),
    "d": (3, 5, 4, 5),
    "e": (5, 5, 4, 5),
    "only-main": (5, 5, 0, 0),
    "short": (5, 5, 3, 3),
}


def test_compare_results_pairs_excludes_and_names_tasks():
    res = stats.compare_results(rows_for(SPEC), "main", "pr")
    assert [p.task_id for p in res.paired] == ["a", "b", "c", "d", "e"]
    assert [(e.task_id, e.reason) for e in res.excluded] == [
        ("only-main", "only in 'main'"),
        ("short", "fewer than 5 runs (5 in 'main', 3 in 'pr')"),
    ]
    assert res.baseline_mean == pytest.approx((1 + 1 + 0 + 0.6 + 1) / 5)
    assert res.candidate_mean == pytest.approx((1 + 0 + 1 + 0.8 + 0.8) / 5)
    assert res.band.mean == pytest.approx(res.candidate_mean - res.baseline_mean)
    assert [f.task_id for f in res.flips] == ["b", "c"]
    assert res.regressions == ["b", "e"]
    assert res.small_sample
    assert res.mcnemar is None
    assert res.band.multiplier.kind == "t"


@SLOW
@given(st.permutations(rows_for(SPEC)))
def test_reordering_rows_never_changes_the_comparison(rows):
    assert stats.compare_results(rows, "main", "pr") == stats.compare_results(
        rows_for(SPEC), "main", "pr"
    )


def test_compare_results_adds_mcnemar_for_single_runs():
    spec = {f"t{i}": (1, 1, int(i < 6), 1) for i in range(4)}
    spec.update({f"u{i}": (0, 1, 1, 1) for i in range(5)})
    res = stats.compare_results(rows_for(spec), "main", "pr", min_runs=1)
    assert res.mcnemar is not None
    assert (res.mcnemar.baseline_only, res.mcnemar.candidate_only) == (0, 5)


def test_compare_results_refuses_bad_input():
    rows = rows_for(SPEC)
    with pytest.raises(StatsInputError, match="unknown candidate config 'nope'"):
        stats.compare_results(rows, "main", "nope")
    with pytest.raises(StatsInputError, match="same config"):
        stats.compare_results(rows, "main", "main")
    with pytest.raises(StatsInputError, match="fewer than 2 paired tasks"):
        stats.compare_results(rows_for({"a": (5, 5, 5, 5), "b": (5, 5, 1, 2)}), "main", "pr")
    dup = [*rows, rows[0]]
    with pytest.raises(StatsInputError, match="duplicate run"):
        stats.compare_results(dup, "main", "pr")
