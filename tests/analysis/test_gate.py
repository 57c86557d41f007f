"""The honest gate of issue 12: each numbered case as a test, with the corrected exit code.

Each case first shows what the old decision (the band of `compare_results` with its defaults)
said, then what ``compare`` says now.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world import stats
from harness_world.analysis.results_csv import ResultsCsvError, format_results, parse_results
from harness_world.cli import main
from harness_world.stats import PairedTask, RunRow, StatsInputError, TaskTally
from tests.conftest import examples
from tests.strategies import improved_verdict

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "stats.md"
HEADER = "task_id,run_index,config,passed"


def rows_for(spec, families=None):
    """spec: {task: (baseline passes, baseline runs, candidate passes, candidate runs)}.

    Passing runs come first; a side with 0 runs has no rows.
    """
    out = []
    for task, (bp, bn, cp, cn) in spec.items():
        family = (families or {}).get(task, "")
        for cfg, passes, runs in (("main", bp, bn), ("pr", cp, cn)):
            out.extend(
                RunRow(task_id=task, run_index=r, config=cfg, passed=r < passes, family=family)
                for r in range(runs)
            )
    return out


@pytest.fixture
def compare(tmp_path, capsys):
    """Run ``compare`` on rows written as a CSV; returns (exit code, stdout, stderr)."""

    def _compare(rows, *options):
        path = tmp_path / "results.csv"
        path.write_text(format_results(rows), encoding="utf-8")
        # the gate's statistics, decided on typed rows: a CSV gate must be allowed explicitly
        argv = ["compare", str(path), "--baseline", "main", "--candidate", "pr"]
        code = main([*argv, "--allow-unverified", *options])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return _compare


def old_gate(rows, gate, min_runs=5):
    """The decision compare took before issue 12 (exit code)."""
    verdict = stats.compare_results(rows, "main", "pr", min_runs=min_runs).band.verdict
    ok = verdict == "above" if gate == "improved" else verdict != "below"
    return 0 if ok else 1


# ------------------------------------------------------- case 1: the gate passed on partial data

# Thirty steady tasks, plus ten whose baseline is solid.
STEADY = {f"s{i:02d}": (3, 5, 3, 5) for i in range(30)}


def test_case_1a_ten_tasks_losing_a_run_and_failing_the_rest_fail_the_gate(compare):
    spec = STEADY | {f"x{i}": (5, 5, 0, 4) for i in range(10)}
    rows = rows_for(spec)
    assert old_gate(rows, "no-regression") == 0  # the ten were dropped under --min-runs 5
    code, out, err = compare(rows, "--gate", "no-regression")
    assert (code, err) == (1, "")
    assert "Missing data: 10 task(s) short of runs" in out
    for i in range(10):
        assert f"  x{i}: 4 of 5 runs in 'pr'" in out
    assert "Gate no-regression: FAILED" in out
    # Allowing the missing runs does not drop the tasks: their drop is seen and fails the gate.
    code, out, _ = compare(rows, "--gate", "no-regression", "--allow-missing")
    assert code == 1
    assert "significant drop" in out


def test_case_1b_failing_rows_simply_missing_fail_the_gate_and_show_a_worst_case(compare):
    # The candidate really went 1/5 on ten tasks, but only its passing row was kept.
    spec = STEADY | {f"x{i}": (5, 5, 1, 1) for i in range(10)}
    rows = rows_for(spec)
    assert old_gate(rows, "no-regression") == 0
    assert old_gate(rows, "no-regression", min_runs=1) == 0
    code, out, _ = compare(rows, "--gate", "no-regression")
    assert code == 1
    assert "  x0: 1 of 5 runs in 'pr'" in out
    # On the observed runs nothing changed; the worst case says what the gap could hide.
    code, out, _ = compare(rows, "--gate", "no-regression", "--allow-missing")
    assert code == 0
    assert "Worst case (candidate's missing runs counted as failures" in out
    assert "gate no-regression would FAIL" in out
    # The tipping point: how many of the 40 lost runs, counted adversely, flip the outcome.
    _, result = stats.assess(rows, "main", "pr", gate="no-regression", allow_missing=True)
    k = result.tipping_point
    assert result.lost_runs == 40 and k is not None and 1 <= k <= 40
    assert f"Tipping point: {k} of the 40 lost run(s), counted adversely" in out


def test_case_1c_three_solid_tasks_broken_on_three_of_five_runs(compare):
    spec = {f"t{i}": (5, 5, 3, 3) for i in range(2)} | {f"u{i}": (5, 5, 0, 3) for i in range(3)}
    rows = rows_for(spec)
    assert old_gate(rows, "no-regression", min_runs=3) == 0  # "inside the band"
    code, out, _ = compare(rows, "--gate", "no-regression", "--min-runs", "3")
    assert code == 1
    assert "Missing data: 5 task(s)" in out  # 3 runs where the baseline has 5
    for i in range(3):
        assert f"  u{i}: solid -> broken (5/5 -> 0/3)" in out
    code, out, _ = compare(rows, "--gate", "no-regression", "--min-runs", "3", "--allow-missing")
    assert "gate no-regression would FAIL" in out  # worst case


def test_scheduled_tasks_absent_from_both_sides_of_a_csv_cannot_be_seen_but_one_side_can(
    compare,
):
    spec = STEADY | {"gone": (5, 5, 0, 0)}
    code, out, _ = compare(rows_for(spec), "--gate", "improved", "--allow-missing")
    assert "  gone: absent in 'pr'" in out
    assert code == 1


# ------------------------------------------------------- case 2: zero spread was certainty


def test_case_2_three_tasks_from_0_of_5_to_1_of_5_do_not_pass_improved(compare):
    from scipy import stats as sps

    rows = rows_for({f"t{i}": (0, 5, 1, 5) for i in range(3)})
    band = stats.compare_results(rows, "main", "pr").band
    assert band.half_width == 0.0 and old_gate(rows, "improved") == 0
    code, out, _ = compare(rows, "--gate", "improved", "--json")
    assert code == 1
    decision = json.loads(out)["decision"]["observed"]
    assert decision["empirical_standard_error"] == 0.0
    assert decision["floor_applied"] is True
    assert decision["lower"] < 0 < decision["upper"]
    # The pooled comparison (0/15 vs 3/15) agrees: nowhere near significant.
    assert sps.fisher_exact([[3, 12], [0, 15]], alternative="greater")[1] > 0.1


def test_a_suite_with_no_variation_at_all_is_not_certainty_either(compare):
    rows = rows_for({f"t{i}": (5, 5, 5, 5) for i in range(3)})
    code, out, _ = compare(rows, "--gate", "non-inferior", "--margin", "10", "--json")
    decision = json.loads(out)["decision"]["observed"]
    assert decision["floor_standard_error"] > 0
    assert code == 1  # three tasks cannot bound a drop below 10 points


# ------------------------------------------------------- case 3: the multiplier jumped at 30


def test_case_3_t_of_1_99_with_30_tasks_does_not_pass_improved(compare):
    from scipy import stats as sps

    # 10 runs a side: 8 tasks gain 20 points, 2 lose 20, 20 stay solid. Paired t = 1.989.
    spec = (
        {f"up{i}": (8, 10, 10, 10) for i in range(8)}
        | {f"dn{i}": (10, 10, 8, 10) for i in range(2)}
        | {f"eq{i:02d}": (10, 10, 10, 10) for i in range(20)}
    )
    rows = rows_for(spec)
    band = stats.compare_results(rows, "main", "pr", min_runs=10).band
    t_stat = band.mean / (band.sd / math.sqrt(30))
    assert 1.96 < t_stat < sps.t.ppf(0.975, 29)
    assert old_gate(rows, "improved", min_runs=10) == 0
    code, out, _ = compare(rows, "--gate", "improved", "--min-runs", "10", "--json")
    assert code == 1
    decision = json.loads(out)["decision"]["observed"]
    assert decision["floor_applied"] is False  # the multiplier alone decides here
    assert decision["df"] == 29
    assert decision["t_quantile"] == pytest.approx(sps.t.ppf(0.975, 29))


@settings(max_examples=examples(60, 300), deadline=None)
@given(st.integers(2, 200))
def test_the_gate_multiplier_is_t_with_n_minus_1_df_at_every_n(n):
    from scipy import stats as sps

    paired = [
        PairedTask(
            task_id=f"t{i:03d}",
            baseline=TaskTally(task_id=f"t{i:03d}", runs=5, passes=2),
            candidate=TaskTally(task_id=f"t{i:03d}", runs=5, passes=2 + (i % 3) - 1),
            difference=((i % 3) - 1) / 5,
        )
        for i in range(n)
    ]
    decision = stats.decide(stats.Design(pairs=paired))
    assert decision.df == n - 1
    assert decision.t_quantile == pytest.approx(sps.t.ppf(0.975, n - 1), rel=1e-9)


# ------------------------------------------------------- case 4: task families were ignored

FAMILY_SPEC = {
    f"f{g}t{i}": (1, 5, 4, 5) if g < 6 else (4, 5, 1, 5) for g in range(8) for i in range(5)
}
FAMILIES = {task: task.split("t")[0] for task in FAMILY_SPEC}


def test_case_4_correlated_families_use_a_cluster_robust_se(compare):
    # Six families gain 60 points on every task, two lose 60: one draw of family effects.
    rows = rows_for(FAMILY_SPEC, FAMILIES)
    assert old_gate(rows, "improved") == 0
    code, out, _ = compare(rows, "--gate", "improved")
    assert code == 1
    assert "Webb-weight wild bootstrap-t over 8 families (CR2, skew-corrected" in out
    assert "Families: cluster-robust over 8 families (CR2 standard error" in out
    # --no-clusters opts out and says so.
    code, out, _ = compare(rows, "--gate", "improved", "--no-clusters")
    assert code == 0
    assert "families present but ignored (--no-clusters)" in out


def test_cluster_robust_with_singleton_families_equals_the_paired_test():
    paired = stats.pair_tallies(
        stats.tally_runs(rows_for(FAMILY_SPEC), "main"),
        stats.tally_runs(rows_for(FAMILY_SPEC), "pr"),
    )[0]
    plain = stats.decide(stats.Design(pairs=paired))
    singletons = stats.decide(
        stats.Design(pairs=paired, families={p.task_id: p.task_id for p in paired})
    )
    assert singletons.clusters == len(paired) and plain.clusters is None
    assert singletons.standard_error == pytest.approx(plain.standard_error, rel=1e-12)
    assert singletons.df == plain.df == len(paired) - 1
    assert (singletons.lower, singletons.upper) == (plain.lower, plain.upper)


def test_a_task_with_two_families_is_an_input_error(compare):
    rows = rows_for({"a": (5, 5, 5, 5), "b": (5, 5, 5, 5)}, {"a": "x", "b": "y"})
    rows.append(RunRow(task_id="a", run_index=9, config="pr", passed=True, family="z"))
    with pytest.raises(StatsInputError, match="task 'a' has two families"):
        stats.assess(rows, "main", "pr")


# ------------------------------------------------------- case 5: noisy regressions, tasks_needed


@pytest.mark.calibration
def test_case_5a_identical_agents_rarely_list_a_task():
    rng = np.random.default_rng(5)
    listed_old = listed_new = 0
    trials = examples(150, 1000)
    for _ in range(trials):
        rates = np.clip(rng.beta(0.7, 0.5, 40), 0, 1)
        spec = {
            f"t{i:02d}": (int(rng.binomial(5, p)), 5, int(rng.binomial(5, p)), 5)
            for i, p in enumerate(rates)
        }
        comparison, result = stats.assess(rows_for(spec), "main", "pr")
        listed_old += bool(comparison.regressions)
        listed_new += any(c.difference < 0 for c in result.significant_changes)
    assert listed_old / trials > 0.4  # the old list: solid baseline, any failed run
    assert listed_new / trials <= 0.025 + 0.02


def test_case_5a_a_real_per_task_regression_is_listed(compare):
    spec = STEADY | {"bad": (20, 20, 0, 20)}
    code, out, _ = compare(rows_for(spec), "--min-runs", "5", "--allow-missing")
    assert code == 0
    assert "  bad: 20/20 -> 0/20 (regression, adjusted p" in out
    assert "the other 30 task(s): within noise" in out


def test_holm_adjustment_by_hand():
    assert stats.holm_adjust([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert stats.holm_adjust([]) == []


@settings(max_examples=examples(100, 1000), deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_never_lowers_a_p_value_and_keeps_the_order(ps):
    adjusted = stats.holm_adjust(ps)
    assert all(a >= p for a, p in zip(adjusted, ps, strict=True))
    assert all(a <= 1 for a in adjusted)
    order = sorted(range(len(ps)), key=lambda i: (ps[i], i))
    assert all(adjusted[i] <= adjusted[j] for i, j in itertools.pairwise(order))


def test_case_5b_plan_prints_tasks_by_runs_for_80_percent_power(compare):
    spec = {f"t{i:02d}": (i % 6, 5, (i * 7) % 6, 5) for i in range(20)}
    code, out, _ = compare(rows_for(spec), "--plan", "--mde", "10")
    assert code == 0
    assert "Plan: power to detect a change of 10 points at one-sided 2.5% with 20 tasks" in out
    assert "tasks needed for 80% power" in out
    lines = [ln for ln in out.splitlines() if "run(s) per task per side:" in ln]
    assert [int(ln.split()[0]) for ln in lines] == [1, 3, 5, 10, 20]
    needed = [int(ln.split(": ")[1].split()[0]) for ln in lines]
    assert needed == sorted(needed, reverse=True)  # more runs never need more tasks
    code, _, err = compare(rows_for(spec), "--plan")
    assert code == 2 and "--plan needs --mde" in err


def test_plan_power_now_matches_a_direct_noncentral_t():
    from scipy import stats as sps

    spec = {f"t{i:02d}": (i % 6, 5, (i * 7) % 6, 5) for i in range(20)}
    _, result = stats.assess(rows_for(spec), "main", "pr", mde=0.1)
    plan = result.plan
    assert plan is not None
    d = result.observed
    se = d.standard_error
    # On 20 tasks the estimate must also reach the gain floor (20.3 points): a +10-point
    # change clears it only by noise, so the threshold is the floor's, not the t's.
    threshold = max(sps.t.ppf(0.975, 19), stats.hidden_class.min_gain(20, 0.025) / se)
    expected = sps.nct.sf(threshold, 19, 0.1 / se)
    assert plan.power_now == pytest.approx(expected, rel=1e-9)
    assert threshold > sps.t.ppf(0.975, 19)


# ------------------------------------------------------- case 6: docs and stated sidedness


def test_case_6_every_output_states_the_one_sided_level(compare, capsys):
    rows = rows_for(STEADY)
    code, out, _ = compare(rows, "--gate", "no-regression")
    assert code == 0
    assert "one-sided alpha 2.5% per direction" in out
    assert "Gate no-regression: PASSED (one-sided 2.5%;" in out
    code, out, _ = compare(rows, "--gate", "improved", "--alpha", "0.05", "--json")
    data = json.loads(out)
    assert (data["alpha"], data["sidedness"]) == (0.05, "one-sided")
    assert data["decision"]["observed"]["sidedness"] == "one-sided"
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    assert "one-sided" in capsys.readouterr().out


def test_case_6_docs_match_behaviour():
    text = DOCS.read_text(encoding="utf-8")
    assert "not yet supported" not in text
    assert "comparing run directories needs the runs feature" not in text
    assert "one-sided" in text and "--allow-missing" in text and "non-inferior" in text
    assert "<!-- calibration:begin -->" in text and "<!-- calibration:end -->" in text
    table = text.split("<!-- calibration:begin -->")[1].split("<!-- calibration:end -->")[0]
    assert "| families-8x5 | improved |" in table


# ------------------------------------------------------- non-inferiority (seed 000's gate)


def test_non_inferior_exit_codes(compare):
    same = rows_for({f"t{i:02d}": (i % 6, 5, i % 6, 5) for i in range(40)})
    worse = rows_for({f"t{i:02d}": (5, 5, 2, 5) for i in range(40)})
    code, out, _ = compare(same, "--gate", "non-inferior", "--margin", "20")
    assert code == 0
    assert "Gate non-inferior --margin 20: PASSED" in out
    assert "upper bound of the drop is" in out
    code, _, _ = compare(worse, "--gate", "non-inferior", "--margin", "20")
    assert code == 1
    code, _, err = compare(same, "--gate", "non-inferior")
    assert code == 2 and "needs --margin" in err
    code, _, err = compare(same, "--gate", "improved", "--margin", "5")
    assert code == 2 and "--margin only applies" in err
    code, _, err = compare(same, "--gate", "non-inferior", "--margin", "-1")
    assert code == 2


def test_non_inferior_passes_exactly_when_the_drop_bound_is_below_the_margin():
    paired = stats.pair_tallies(
        stats.tally_runs(rows_for({f"t{i:02d}": (4, 5, 3 + i % 2, 5) for i in range(30)}), "main"),
        stats.tally_runs(rows_for({f"t{i:02d}": (4, 5, 3 + i % 2, 5) for i in range(30)}), "pr"),
    )[0]
    drop_bound = -stats.decide(stats.Design(pairs=paired)).lower

    def passes(margin):
        design = stats.Design(pairs=paired, gate="non-inferior", margin=margin)
        return stats.decide(design).passed

    assert passes(drop_bound * 1.0001)
    assert not passes(drop_bound)


@pytest.mark.parametrize(
    "options",
    [
        ["--alpha", "0"],
        ["--alpha", "0.5"],
        ["--alpha", "0.05", "--z", "2"],
        ["--mde", "5"],
        ["--plan", "--mde", "0"],
        ["--min-runs", "0"],
    ],
)
def test_bad_options_exit_2(options, compare):
    code, out, err = compare(rows_for(STEADY), *options)
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1


# ------------------------------------------------------- invariants of the decision

tallies = st.tuples(st.integers(1, 8), st.integers(1, 8)).flatmap(
    lambda nn: st.tuples(
        st.just(nn[0]), st.integers(0, nn[0]), st.just(nn[1]), st.integers(0, nn[1])
    )
)


def _paired(specs):
    return [
        PairedTask(
            task_id=f"t{i:02d}",
            baseline=TaskTally(task_id=f"t{i:02d}", runs=bn, passes=bp),
            candidate=TaskTally(task_id=f"t{i:02d}", runs=cn, passes=cp),
            difference=cp / cn - bp / bn,
        )
        for i, (bn, bp, cn, cp) in enumerate(specs)
    ]


@settings(max_examples=examples(150, 1000), deadline=None)
@given(
    st.lists(tallies, min_size=2, max_size=25),
    st.lists(st.sampled_from("abc"), min_size=25, max_size=25),
    st.randoms(use_true_random=False),
)
def test_decision_invariants(specs, labels, rnd):
    paired = _paired(specs)
    families = {p.task_id: labels[i] for i, p in enumerate(paired)}
    for fam in ({}, families):
        d = stats.decide(stats.Design(pairs=paired, families=fam, gate="improved"))
        # The floor replaces a degenerate spread (and only then); bounds around the mean.
        if d.floor_applied:
            assert d.standard_error == d.floor_standard_error > d.empirical_standard_error
        else:
            assert d.standard_error == d.empirical_standard_error
        if d.empirical_standard_error == 0 and d.floor_standard_error > 0:
            assert d.floor_applied  # zero spread is never certainty
        assert d.lower <= d.mean <= d.upper
        # Ties of a randomization distribution count on both sides.
        assert d.p_increase + d.p_decrease >= 1 - 1e-9 or d.standard_error == 0
        assert 0 <= d.p_increase <= 1 and 0 <= d.p_decrease <= 1
        # Order does not matter.
        shuffled = paired[:]
        rnd.shuffle(shuffled)
        assert stats.decide(stats.Design(pairs=shuffled, families=fam, gate="improved")) == d
        # Swapping the configurations mirrors the decision.
        swapped = [
            PairedTask(
                task_id=p.task_id,
                baseline=p.candidate,
                candidate=p.baseline,
                difference=-p.difference,
            )
            for p in paired
        ]
        mirrored = stats.decide(stats.Design(pairs=swapped, families=fam))
        assert mirrored.mean == pytest.approx(-d.mean, abs=1e-12)
        assert mirrored.lower == pytest.approx(-d.upper, abs=1e-12)
        assert mirrored.p_increase == pytest.approx(d.p_decrease, abs=1e-12)
        # A gate can never both pass improved and fail no-regression (an upper bound below 0).
        assert d.passed == improved_verdict(d)
        assert not (d.passed and d.upper < 0)


@settings(max_examples=examples(100, 500), deadline=None)
@given(st.lists(tallies, min_size=2, max_size=20), st.floats(0.005, 0.2))
def test_a_smaller_alpha_never_passes_more(specs, alpha):
    paired = _paired(specs)
    loose = stats.decide(stats.Design(pairs=paired, alpha=alpha))
    strict = stats.decide(stats.Design(pairs=paired, alpha=alpha / 2))
    assert strict.lower <= loose.lower + 1e-12
    assert strict.upper >= loose.upper - 1e-12


# ------------------------------------------------------- the family column of the results CSV


def test_family_column_reads_writes_and_round_trips():
    text = HEADER + ",family\na,0,main,1,billing\na,0,pr,0,billing\nb,0,main,1,\n"
    rows = parse_results(text.splitlines())
    assert [r.family for r in rows] == ["billing", "billing", ""]
    assert parse_results(format_results(rows).splitlines()) == rows
    assert format_results(rows).splitlines()[0] == HEADER + ",family"
    plain = [RunRow(task_id="a", run_index=0, config="main", passed=True)]
    assert format_results(plain).splitlines()[0] == HEADER


def test_family_column_errors_name_the_line():
    with pytest.raises(ResultsCsvError, match="line 3: task 'a' has family 'y' here but 'x'"):
        parse_results([HEADER + ",family", "a,0,main,1,x", "a,1,main,1,y"])
    with pytest.raises(ResultsCsvError, match="line 2: expected 5 cells"):
        parse_results([HEADER + ",family", "a,0,main,1"])
