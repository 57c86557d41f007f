"""One comparison verb: every command asks `stats.decide` a `Design`, and what it prints holds."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world import stats
from harness_world.stats import Contrast, Design, PairedTask, StatsInputError, TaskTally
from tests.conftest import REPO, examples, load_bench
from tests.strategies import improved_verdict

PACKAGE = REPO / "harness_world"


def _pairs(specs):
    return [
        PairedTask(
            task_id=f"t{i:02d}",
            baseline=TaskTally(task_id=f"t{i:02d}", runs=bn, passes=bp),
            candidate=TaskTally(task_id=f"t{i:02d}", runs=cn, passes=cp),
            difference=cp / cn - bp / bn,
        )
        for i, (bn, bp, cn, cp) in enumerate(specs)
    ]


tallies = st.tuples(st.integers(1, 6), st.integers(1, 6)).flatmap(
    lambda nn: st.tuples(
        st.just(nn[0]), st.integers(0, nn[0]), st.just(nn[1]), st.integers(0, nn[1])
    )
)


def test_every_comparison_decides_through_the_one_verb():
    """Outside `harness_world/stats/`, nothing reaches the bootstrap itself.

    Crossed runs once ran their own wild bootstrap beside `decide`; a fifth copy of the test
    would show here as an import of `harness_world.stats.wild` or of its test.
    """
    engine = {"wild_cluster_test", "WildClusterTest", "bell_mccaffrey_df", "hall_transform"}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "stats":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = {a.name for a in node.names}
                if node.module == "harness_world.stats.wild" or names & engine:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} {node.module}")
    assert not found, "a comparison that does not ask stats.decide:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"alpha": 0.5}, "alpha must be strictly between 0 and 0.5"),
        ({"alpha": float("nan")}, "alpha must be strictly between 0 and 0.5"),
        ({"pairs": []}, "fewer than 2 paired tasks"),
        ({"gate": "non-inferior"}, "non-inferior needs a positive margin"),
        ({"gate": "non-inferior", "margin": float("inf")}, "non-inferior needs a positive margin"),
        ({"contrasts": [Contrast(task_id="c", value=0.1, variance=0.01)]}, "pairs or contrasts"),
    ],
)
def test_a_design_refuses_what_no_decision_can_answer(fields, message):
    pairs = _pairs([(5, 1, 5, 3), (5, 2, 5, 2)])
    with pytest.raises(StatsInputError, match=message):
        Design(**{"pairs": pairs, **fields})


@pytest.mark.parametrize(
    "contrast",
    [
        Contrast(task_id="b", value=float("nan"), variance=0.01),
        Contrast(task_id="b", value=0.2, variance=0.0),
        Contrast(task_id="b", value=0.2, variance=float("inf")),
    ],
)
def test_a_contrast_needs_a_finite_value_and_a_positive_variance(contrast):
    with pytest.raises(StatsInputError, match="finite value and a positive variance"):
        Design(contrasts=[Contrast(task_id="a", value=0.1, variance=0.01), contrast])


@settings(max_examples=examples(40, 300), deadline=None)
@given(st.lists(tallies, min_size=2, max_size=14), st.sampled_from([0.05, 0.1, 0.3]))
def test_each_gate_is_read_off_the_decisions_own_bounds(specs, margin):
    """The verb's gate is its bounds' rule, and its reason names the bound it read."""
    pairs = _pairs(specs)
    bounds = stats.decide(Design(pairs=pairs))
    improved = stats.decide(Design(pairs=pairs, gate="improved"))
    held = stats.decide(Design(pairs=pairs, gate="no-regression"))
    ni = stats.decide(Design(pairs=pairs, gate="non-inferior", margin=margin))
    for d in (improved, held, ni):
        assert (d.lower, d.upper, d.p_increase) == (bounds.lower, bounds.upper, bounds.p_increase)
    assert improved.passed == improved_verdict(improved)
    assert held.passed == (not bounds.upper < 0)
    enough = len(pairs) >= stats.hidden_class.min_tasks(margin, bounds.alpha)
    below = -bounds.lower < margin and enough
    # The gate's own null, exactly -margin, is tested beside the grid the bounds come from.
    at_margin = stats.p_values(Design(pairs=pairs), -margin)[0] if below else 1.0
    assert ni.passed == (below and at_margin <= bounds.alpha)
    assert ni.margin == margin and improved.margin is None and bounds.reason == "no gate"
    if not bounds.decidable:  # three tasks: the reason says no decision is possible
        assert improved.reason.startswith("no decision possible")
        assert held.reason.startswith("no decision possible")
        return
    assert f"{bounds.lower * 100:+.1f} points" in improved.reason
    assert f"{bounds.upper * 100:+.1f} points" in held.reason


@settings(max_examples=examples(60, 500), deadline=None)
@given(
    st.dictionaries(
        st.text("abc", min_size=1, max_size=3),
        st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8),
        min_size=1,
        max_size=6,
    )
)
def test_paired_samples_are_the_tallies_of_the_samples(samples):
    pairs = stats.paired_samples(samples)
    assert [p.task_id for p in pairs] == sorted(samples)
    for p in pairs:
        runs = samples[p.task_id]
        assert p.baseline.runs == p.candidate.runs == len(runs)
        assert (p.baseline.passes, p.candidate.passes) == (
            sum(b for b, _ in runs),
            sum(c for _, c in runs),
        )
        rates = (p.candidate.passes - p.baseline.passes) / len(runs)
        assert p.difference == pytest.approx(rates)


def test_the_crossed_interaction_keeps_the_numbers_it_was_calibrated_with():
    """A crossed run with unequal families, as `compare CROSSED_RUN` decided it before the verb.

    The contrast design keeps the interaction test's own rule (the bootstrap alone, the floor
    with G - 1 df); decided by the gate's rule instead, this run's `m2` p-value would be 0.1875
    and the INTERACTION line would not be printed. The bounds are compared to 1e-8: the
    search that finds them stops within one last step (a half point cut 16^5 times, 4.8e-9)
    of the test's edge, so their last digits are the search's, not the test's.
    """
    bench = load_bench("stats_calibration")
    check = bench.Check(
        "crossed-fam", "crossed", 20, profiles=3, effect="varied", sizes=(6, 6, 3, 2, 1, 1, 1)
    )
    result, _ = bench.crossed_once(check, np.random.default_rng(15))
    assert result.interaction is not None
    assert result.interaction.p_values == {"m0": 0.125, "m1": 0.53125, "m2": 0.046875}
    assert result.interaction.detected
    lows = [d.low for d in result.profiles]
    highs = [d.high for d in result.profiles]
    assert lows == pytest.approx([-0.2000000004639151, -0.26813804146164316, -1.0], abs=1e-8)
    assert highs == pytest.approx(
        [0.3592401412772597, 0.5534555396530776, 0.24553395781462312], abs=1e-8
    )
    assert (result.aggregate.low, result.aggregate.high) == pytest.approx(
        (-0.17396068464673586, 0.07485241061556736), abs=1e-8
    )
