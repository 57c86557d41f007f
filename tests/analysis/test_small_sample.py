"""CR2 / Bell-McCaffrey, the wild cluster bootstrap and the skew correction."""

from __future__ import annotations

import itertools
import math

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world import stats
from harness_world.stats import PairedTask, StatsInputError, TaskTally
from harness_world.stats.wild import hall_inverse, hall_transform, wild_cluster_test
from tests.conftest import examples


def _paired(specs):
    return [
        PairedTask(
            task_id=f"t{i:03d}",
            baseline=TaskTally(task_id=f"t{i:03d}", runs=bn, passes=bp),
            candidate=TaskTally(task_id=f"t{i:03d}", runs=cn, passes=cp),
            difference=cp / cn - bp / bn,
        )
        for i, (bn, bp, cn, cp) in enumerate(specs)
    ]


tallies = st.tuples(st.integers(1, 6), st.integers(1, 6)).flatmap(
    lambda nn: st.tuples(
        st.just(nn[0]), st.integers(0, nn[0]), st.just(nn[1]), st.integers(0, nn[1])
    )
)


# ------------------------------------------------------------------ CR2 and Bell-McCaffrey


def _cr2_by_matrices(values, labels):
    """CR2 of a mean from the textbook matrices: (I - H_gg)^(-1/2) applied to residuals."""
    y = np.asarray(values, dtype=float)
    n = y.size
    e = y - y.mean()
    total = 0.0
    for g in sorted(set(labels)):
        idx = [i for i, lab in enumerate(labels) if lab == g]
        m = len(idx)
        block = np.eye(m) - np.full((m, m), 1 / n)
        w, v = np.linalg.eigh(block)
        root = v @ np.diag(w**-0.5) @ v.T
        total += float(np.ones(m) @ root @ e[idx]) ** 2
    return total / n**2


def _contrasts(values, labels):
    """Values as a contrast design over families ``labels`` (variances tiny: no floor)."""
    return stats.Design(
        contrasts=[
            stats.Contrast(task_id=f"t{i:03d}", value=v, variance=1e-30)
            for i, v in enumerate(values)
        ],
        families={f"t{i:03d}": lab for i, lab in enumerate(labels)},
        method="cr2-t",
    )


@settings(max_examples=examples(60, 400), deadline=None)
@given(st.lists(st.tuples(st.floats(-1, 1), st.sampled_from("abcd")), min_size=3, max_size=30))
def test_cr2_matches_the_matrix_definition(items):
    labels = [lab for _, lab in items]
    values = [v for v, _ in items]
    if len(set(labels)) < 2 or max(values) == min(values):
        return
    d = stats.decide(_contrasts(values, labels))
    assert d.empirical_standard_error**2 == pytest.approx(
        _cr2_by_matrices(values, labels), rel=1e-9, abs=1e-15
    )


@settings(max_examples=examples(60, 400), deadline=None)
@given(st.integers(2, 12), st.integers(1, 8), st.data())
def test_cr2_equals_cr1_on_equal_families_and_df_is_g_minus_1(g, size, data):
    values = data.draw(st.lists(st.floats(-5, 5), min_size=g * size, max_size=g * size))
    if max(values) == min(values):
        return
    labels = [f"f{i // size}" for i in range(g * size)]
    cr2 = stats.decide(_contrasts(values, labels))
    cr1 = stats.decide(msgspec.structs.replace(_contrasts(values, labels), method="cr1-t"))
    assert cr2.empirical_standard_error == pytest.approx(
        cr1.empirical_standard_error, rel=1e-12, abs=1e-300
    )
    assert cr2.df == cr1.df == g - 1 and cr2.effective_clusters == g
    assert stats.bell_mccaffrey_df([size] * g) == g - 1


def test_bell_mccaffrey_df_of_the_issue_designs():
    assert stats.bell_mccaffrey_df([1] * 10) == 9
    assert stats.bell_mccaffrey_df([16, 1, 1, 1, 1]) == pytest.approx(1.394, abs=1e-3)
    assert stats.bell_mccaffrey_df([6, 6, 6, 3, 3, 2, 2, 1, 1]) == pytest.approx(5.644, abs=1e-3)
    assert stats.bell_mccaffrey_df([1, 1, 16, 1, 1]) == stats.bell_mccaffrey_df([16, 1, 1, 1, 1])
    with pytest.raises(StatsInputError):
        stats.bell_mccaffrey_df([5])


# ------------------------------------------------------------------ the skew correction


@settings(max_examples=examples(100, 1000), deadline=None)
@given(st.floats(-8, 8), st.floats(-0.9, 0.9))
def test_hall_transform_is_monotone_and_inverted(t, gamma):
    y = float(hall_transform(np.array([t]), gamma)[0])
    assert hall_inverse(y, gamma) == pytest.approx(t, abs=1e-7)
    up = float(hall_transform(np.array([t + 1e-3]), gamma)[0])
    assert up >= y


# ------------------------------------------------------------------ the wild cluster bootstrap


def test_exhaustive_sign_flips_are_the_exact_randomization_test():
    # Five clusters of one task each: the p-value is the share of the 32 sign patterns whose
    # studentized mean is at least the observed one (no skew correction, no floor).
    values = [0.4, 0.2, 0.6, -0.2, 0.8]
    test = wild_cluster_test(values, [1] * 5, skew_correction=False)
    assert test.exhaustive and test.patterns == 32

    def t_of(xs):
        xs = np.asarray(xs)
        return xs.mean() / (xs.std(ddof=1) / math.sqrt(xs.size))

    observed = t_of(values)
    flips = [t_of(np.array(values) * s) for s in itertools.product([-1, 1], repeat=5)]
    expected = sum(f >= observed - 1e-12 for f in flips) / 32
    assert test.p_values(0.0)[0] == pytest.approx(expected)


@settings(max_examples=examples(40, 300), deadline=None)
@given(
    st.lists(tallies, min_size=2, max_size=18),
    st.lists(st.sampled_from("abcdef"), min_size=18, max_size=18),
    st.randoms(use_true_random=False),
)
def test_bootstrap_p_values_lie_in_0_1_and_decisions_ignore_task_order(specs, labels, rnd):
    paired = _paired(specs)
    families = {p.task_id: labels[i] for i, p in enumerate(paired)}
    for method in ("sign-flip", "webb"):
        d = stats.decide(stats.Design(pairs=paired, families=families, method=method))
        assert 0 < d.p_increase <= 1 and 0 < d.p_decrease <= 1
        assert d.lower <= d.mean <= d.upper
        if d.resampling != "none":  # inverted bootstraps stay on the scale of a change
            assert d.lower >= -1 and d.upper <= 1
        shuffled = paired[:]
        rnd.shuffle(shuffled)
        assert stats.decide(stats.Design(pairs=shuffled, families=families, method=method)) == d
        relabelled = {t: f"x{f}" for t, f in families.items()}
        assert (
            stats.decide(stats.Design(pairs=paired, families=relabelled, method=method)).lower
            == d.lower
        )


def test_p_value_agrees_with_the_bounds():
    paired = _paired([(5, i % 6, 5, (i * 5 + 2) % 6) for i in range(20)])
    design = stats.Design(pairs=paired)
    d = stats.decide(design)
    assert stats.p_values(design, d.lower - 1e-6)[0] <= d.alpha
    assert stats.p_values(design, d.lower + 1e-3)[0] > d.alpha
    assert stats.p_values(design, d.upper + 1e-6)[1] <= d.alpha
    assert stats.p_values(design) == (d.p_increase, d.p_decrease)


def test_five_families_cannot_reach_2_5_percent_by_sign_flips_and_the_gate_says_so():
    rows = []
    for g in range(5):
        for i in range(4):
            for cfg, passes in (("main", 1), ("pr", 5)):
                rows.extend(
                    stats.RunRow(
                        task_id=f"f{g}t{i}",
                        run_index=r,
                        config=cfg,
                        passed=r < passes,
                        family=f"f{g}",
                    )
                    for r in range(5)
                )
    _, flips = stats.assess(rows, "main", "pr", gate="improved", method="sign-flip")
    assert not flips.passed  # every family gained 80 points, yet 1/32 > 2.5%
    assert flips.observed.smallest_p == 1 / 32
    assert "only 5 families: the smallest p-value" in flips.warnings[0]
    # Webb's six-point weights can decide with 5 families; the gate warns that few are left.
    _, webb = stats.assess(rows, "main", "pr", gate="improved")
    assert webb.passed and webb.observed.method == "webb"
    assert "effective number of clusters 5.0 of 5" in webb.warnings[0]


def test_random_patterns_are_seeded_and_reported():
    paired = _paired([(5, i % 6, 5, (i * 5 + 1) % 6) for i in range(30)])
    a, b = (
        stats.decide(stats.Design(pairs=paired)),
        stats.decide(stats.Design(pairs=paired, seed=7)),
    )
    assert a.resampling == "random" and a.seed == stats.DEFAULT_SEED and b.seed == 7
    assert stats.decide(stats.Design(pairs=paired)) == a


def test_the_gate_holds_its_level_with_a_dominant_family():
    """The bench's dominant-family null, reduced: CR1 t's 26% becomes at most a few percent."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        import stats_calibration as bench
    finally:
        sys.path.pop(0)
    sc = next(s for s in bench.SCENARIOS if s.name == "dominant-20")
    cell = bench.run_cell(sc, "improved", "null", examples(40, 1000), seed=3)
    assert cell["gate"] <= 0.035
    assert cell["cr1"] >= cell["gate"]


def test_decisions_against_scipy_t_when_the_method_is_cr2_t():
    from scipy import stats as sps

    paired = _paired([(5, i % 6, 5, (i * 7 + 3) % 6) for i in range(25)])
    d = stats.decide(stats.Design(pairs=paired, method="cr2-t", skew_correction=False))
    diffs = np.array([p.difference for p in paired])
    res = sps.ttest_1samp(diffs, 0.0, alternative="greater")
    assert d.p_increase == pytest.approx(res.pvalue, rel=1e-9)
    assert d.df == 24


def test_plan_uses_the_gates_df_and_design_effect():
    from scipy import stats as sps

    spec = [(5, (g * 2 + i) % 6, 5, (g * 3 + 2 * i) % 6) for g in range(9) for i in range(3)]
    paired = _paired(spec)
    families = {p.task_id: f"f{i // 3}" for i, p in enumerate(paired)}
    plan = stats.plan_power(paired, 0.1, families=families)
    d = stats.decide(stats.Design(pairs=paired, families=families))
    assert plan.df == d.df and plan.effective_clusters == d.effective_clusters
    assert plan.design_effect == max(1.0, d.design_effect)
    expected = sps.nct.sf(
        sps.t.ppf(0.975, d.df), d.df, 0.1 / d.standard_error
    )  # the gate's SE and df
    assert plan.power_t == pytest.approx(expected, rel=1e-9)
    assert plan.power_method == "simulated" and plan.simulations == 200
    assert 0 <= plan.power_now <= 1
    few = stats.plan_power(
        paired, 0.1, families={p.task_id: f"f{i % 4}" for i, p in enumerate(paired)}
    )
    assert few.power_now == 0.0  # 4 families: the gate cannot decide at 2.5%


def test_plan_with_families_simulates_the_gates_own_decision():
    spec = [(5, (g * 2 + i) % 6, 5, (g * 3 + 2 * i) % 6) for g in range(10) for i in range(3)]
    paired = _paired(spec)
    families = {p.task_id: f"f{i // 3}" for i, p in enumerate(paired)}
    large = stats.plan_power(paired, 0.6, families=families)
    tiny = stats.plan_power(paired, 0.001, families=families)
    assert large.power_method == "simulated" and large.power_now > 0.9
    assert tiny.power_now < 0.15  # near the level: the change is next to none
    assert stats.plan_power(paired, 0.6, families=families).power_now == large.power_now
    plain = stats.plan_power(paired, 0.6)
    assert plain.power_method == "t" and plain.power_now == plain.power_t


def test_plan_rows_with_families_search_the_gates_own_power():
    """Each tasks-needed row is a count at which the gate's bootstrap reaches the target.

    Six families: the bootstrap decides, but less often than the t expects, so the t's counts
    are not the gate's; every row within the simulated range says the power it measured there.
    """
    spec = [(5, (g * 2 + i) % 6, 5, (g * 3 + 2 * i) % 6) for g in range(6) for i in range(4)]
    paired = _paired(spec)
    families = {p.task_id: f"f{i // 4}" for i, p in enumerate(paired)}
    plan = stats.plan_power(paired, 0.3, families=families)
    again = stats.plan_power(paired, 0.3, families=families)
    assert plan.rows == again.rows  # seeded by the design's seed
    t_only = stats.plan_power(paired, 0.3)
    simulated = [r for r in plan.rows if r.method == "simulated"]
    assert simulated, plan.rows
    for row in simulated:
        assert row.tasks is not None and row.power is not None
        assert row.total_runs == row.tasks * row.runs * 2
        assert row.power >= plan.power_target  # this design reaches it within the steps
    for row in t_only.rows:
        assert row.method == "t" and row.power is None


def test_plan_rows_print_how_they_were_found():
    """The text names the simulated power of each simulated row."""
    from harness_world.analysis.compare_report import _plan_lines

    spec = [(5, (g * 2 + i) % 6, 5, (g * 3 + 2 * i) % 6) for g in range(6) for i in range(4)]
    paired = _paired(spec)
    families = {p.task_id: f"f{i // 4}" for i, p in enumerate(paired)}
    lines = _plan_lines(stats.plan_power(paired, 0.3, families=families))
    assert any("the gate's power there on simulated suites" in line for line in lines), lines
    plain = _plan_lines(stats.plan_power(paired, 0.3))
    assert not any("simulated" in line for line in plain), plain


def test_a_simulated_plan_suite_draws_whole_families():
    """Each family of a simulated suite is one of the data's families, whole (the last may be cut)."""
    import numpy as np

    from harness_world.stats.planning import _suite, _template

    sizes = [3, 3, 2, 1, 1]
    paired = _paired([(5, 2, 5, 3)] * sum(sizes))
    labels = [f"f{g}" if size > 1 else "" for g, size in enumerate(sizes) for _ in range(size)]
    families = {p.task_id: f for p, f in zip(paired, labels, strict=True) if f}
    template = _template(paired, families, 0.1, 0.5)
    idx, ids, drawn = _suite(template, 40, np.random.default_rng(3))
    assert len(idx) == len(ids) == 40
    groups: dict[str, list[int]] = {}
    for task_id, i in zip(ids, idx, strict=True):
        if task_id in drawn:
            groups.setdefault(drawn[task_id], []).append(i)
        else:
            assert not labels[i]  # a task without a family stays alone
    assert len(groups) >= 5
    whole = [sorted(g) for g in groups.values()]
    for members in whole[:-1]:
        source = {labels[i] for i in members}
        assert len(source) == 1
        assert len(members) == sizes[int(source.pop()[1:])]


def test_plan_with_families_simulates_the_small_suite_gain_floor():
    """20 tasks in 7 families, each gaining 10 points over 20 runs a side: the bound alone
    would often clear 0, but the gain floor on 20 tasks is 20.3 points, so suites shifted to
    +10 points almost never pass the gate; shifted to +30 they clear it."""
    paired = _paired([(20, 8 + i % 4, 20, 10 + i % 4) for i in range(20)])
    families = {p.task_id: f"f{i // 3}" for i, p in enumerate(paired)}
    below = stats.plan_power(paired, 0.10, families=families)
    above = stats.plan_power(paired, 0.30, families=families)
    assert below.power_method == above.power_method == "simulated"
    assert below.power_now < 0.05 and below.power_t < 0.1
    assert above.power_now > 0.8
