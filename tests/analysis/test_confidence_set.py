"""The decision's bounds are the test's confidence set: p-value, bounds and verdict agree.

With few clusters and tied per-task differences the bootstrap's p-value is not monotone in the
null value, so bounds found by bisection could say one thing and the printed p-value another.
These tests enumerate 3-task x 5-run suites (every one under HW_FULL=1) and check that the
verdict, the p-value and the bounds never disagree, that more candidate passes never turn a
pass into a fail, and that three clusters say "no decision possible". At four and five
clusters the test decides, and a property over random suites (tasks, or families of tasks with
unequal run counts) checks the same agreement; more passes can still turn a pass into a fail
there (docs/stats.md, "Bounds"), so that part is measured by bench/stats_honesty.py, not tested.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world.stats import Decision, Design, PairedTask, TaskTally, decide, p_values
from tests.conftest import examples
from tests.strategies import improved_verdict

RUNS = 5
CELLS = [(b, c) for b in range(RUNS + 1) for c in range(RUNS + 1)]
SUITES = list(itertools.combinations_with_replacement(CELLS, 3))  # 8,436 up to task order


def _pairs(suite: tuple[tuple[int, int], ...]) -> list[PairedTask]:
    return [
        PairedTask(
            task_id=f"t{i}",
            baseline=TaskTally(task_id=f"t{i}", runs=RUNS, passes=b),
            candidate=TaskTally(task_id=f"t{i}", runs=RUNS, passes=c),
            difference=(c - b) / RUNS,
        )
        for i, (b, c) in enumerate(suite)
    ]


def _sample() -> list[tuple[tuple[int, int], ...]]:
    """Every suite under HW_FULL=1; in CI an evenly spaced subset and every suite one step up."""
    count = examples(300, len(SUITES))
    step = max(1, len(SUITES) // count)
    return SUITES[::step]


def _up(suite: tuple[tuple[int, int], ...]) -> list[tuple[tuple[int, int], ...]]:
    """The suites with one more candidate pass on one task."""
    out = []
    for i, (b, c) in enumerate(suite):
        if c < RUNS:
            out.append(tuple(sorted(suite[:i] + ((b, c + 1),) + suite[i + 1 :])))
    return out


def test_verdict_p_value_and_bounds_never_disagree_and_more_passes_never_hurt() -> None:
    """Every sampled 3 x 5 suite and each suite one candidate pass above it."""
    cache: dict[tuple[tuple[int, int], ...], tuple[bool, bool]] = {}

    def verdicts(suite: tuple[tuple[int, int], ...]) -> tuple[bool, bool]:
        if suite not in cache:
            d = decide(Design(pairs=_pairs(suite), gate="improved"))
            assert (d.lower > 0) == (d.p_increase <= d.alpha), (suite, d)
            assert (d.upper < 0) == (d.p_decrease <= d.alpha), (suite, d)
            assert d.lower <= d.mean <= d.upper, (suite, d)
            assert d.passed == (d.lower > 0)
            cache[suite] = (d.lower > 0, not d.upper < 0)  # improved, no-regression
        return cache[suite]

    violations = []
    for suite in _sample():
        improved, no_regression = verdicts(suite)
        for better in _up(suite):
            up_improved, up_no_regression = verdicts(better)
            if (improved and not up_improved) or (no_regression and not up_no_regression):
                violations.append((suite, better))
    assert violations == []


def test_the_cases_the_bisection_got_wrong_now_agree() -> None:
    """0/5 -> 2, 2, 3 passed at p = 3.2 %; 0/5 -> 5, 5, 5 failed: neither decides now."""
    weak = decide(Design(pairs=_pairs(((0, 2), (0, 2), (0, 3))), gate="improved"))
    strong = decide(Design(pairs=_pairs(((0, 5), (0, 5), (0, 5))), gate="improved"))
    assert weak.p_increase > weak.alpha
    assert not weak.passed
    assert not strong.passed


def test_three_tasks_say_no_decision_is_possible() -> None:
    """Rejects 'at most 0' and 'at most 0.5' yet accepts 0.3: three clusters decide nothing."""
    d = decide(Design(pairs=_pairs(((0, 4), (0, 4), (0, 5))), gate="improved"))
    assert not d.decidable
    assert (d.lower, d.upper, d.p_increase, d.p_decrease) == (-1.0, 1.0, 1.0, 1.0)
    assert not d.passed
    assert d.reason.startswith("no decision possible with 3 tasks")
    mirrored = decide(Design(pairs=_pairs(((4, 0), (4, 0), (5, 0))), gate="no-regression"))
    assert not mirrored.decidable
    assert mirrored.passed  # no-regression cannot fail without a decision
    four = decide(Design(pairs=_pairs(((0, 4), (0, 4), (0, 5), (1, 5))), gate="improved"))
    assert four.decidable


def test_the_composite_p_value_is_the_largest_over_its_null() -> None:
    """p_increase tests 'the mean is at most 0': no null value at or below 0 gives more."""
    pairs = _pairs(((0, 4), (1, 4), (2, 5), (0, 3)))
    d = decide(Design(pairs=pairs))
    for mu0 in (-1.0, -0.5, -0.1, 0.0):
        up, _ = p_values(Design(pairs=pairs), mu0)
        assert up <= d.p_increase
    for mu0 in (0.0, 0.1, 0.5, 1.0):
        assert p_values(Design(pairs=pairs), mu0)[1] <= d.p_decrease


@pytest.mark.parametrize("gate", ["improved", "no-regression"])
def test_a_clear_change_on_many_tasks_still_decides(gate: str) -> None:
    """The grid does not cost the decisions a monotone test makes."""
    suite = tuple((1, 4) if gate == "improved" else (4, 1) for _ in range(12))
    pairs = [
        PairedTask(
            task_id=f"t{i}",
            baseline=TaskTally(task_id=f"t{i}", runs=RUNS, passes=b + i % 2),
            candidate=TaskTally(task_id=f"t{i}", runs=RUNS, passes=c),
            difference=(c - b - i % 2) / RUNS,
        )
        for i, (b, c) in enumerate(suite)
    ]
    d = decide(Design(pairs=pairs, gate=gate))  # type: ignore[arg-type]
    assert d.decidable
    assert d.passed == (gate == "improved")


def _agree(d: Decision) -> None:
    """The verdict, both composite p-values and the bounds say the same thing."""
    assert (d.lower > 0) == (d.p_increase <= d.alpha), d
    assert (d.upper < 0) == (d.p_decrease <= d.alpha), d
    assert d.lower <= d.mean <= d.upper, d
    if d.gate == "improved":
        assert d.passed == improved_verdict(d), d
    else:
        assert d.passed == (not d.upper < 0)


# A task: (baseline passes, candidate change, runs); mostly improving, so that the suites
# reach the level where a bisection's bound and the p-value parted.
_TASK = st.tuples(st.integers(0, 3), st.integers(-1, 5), st.sampled_from([5, 5, 5, 3, 8]))


def _tally_pair(task_id: str, b: int, change: int, runs: int) -> PairedTask:
    b = min(b, runs)
    c = max(0, min(runs, b + change))
    return PairedTask(
        task_id=task_id,
        baseline=TaskTally(task_id=task_id, runs=runs, passes=b),
        candidate=TaskTally(task_id=task_id, runs=runs, passes=c),
        difference=(c - b) / runs,
    )


@settings(max_examples=examples(25, 400), deadline=None)
@given(
    st.lists(_TASK, min_size=4, max_size=5),
    st.sampled_from(["improved", "no-regression"]),
)
def test_four_and_five_tasks_decide_and_verdict_p_value_and_bounds_agree(
    tasks: list[tuple[int, int, int]], gate: str
) -> None:
    """Four or five independent tasks: a decision, and it agrees with itself."""
    sign = 1 if gate == "improved" else -1
    pairs = [
        _tally_pair(f"t{i}", b if sign > 0 else runs - b, sign * change, runs)
        for i, (b, change, runs) in enumerate(tasks)
    ]
    d = decide(Design(pairs=pairs, gate=gate))  # type: ignore[arg-type]
    assert d.decidable
    _agree(d)


@settings(max_examples=examples(15, 200), deadline=None)
@given(st.lists(st.lists(_TASK, min_size=1, max_size=4), min_size=4, max_size=5))
def test_four_and_five_families_agree_too(families: list[list[tuple[int, int, int]]]) -> None:
    """Four or five families of one to four tasks each, unequal run counts."""
    pairs, labels = [], {}
    for f, tasks in enumerate(families):
        for j, (b, change, runs) in enumerate(tasks):
            pairs.append(_tally_pair(f"f{f}t{j}", b, change, runs))
            labels[f"f{f}t{j}"] = f"fam{f}"
    d = decide(Design(pairs=pairs, families=labels, gate="improved"))
    assert d.decidable
    assert d.clusters == len(families)
    _agree(d)


_TWELVE = [_tally_pair(f"t{i:02d}", i % 4, 1 + i % 3, 5) for i in range(12)]


def _curve_from(level: float, bumps: list[tuple[float, float, float]]):
    """A p-value curve for both sides: a step at ``level``, with accepted or rejected bumps."""
    import numpy as np

    def curve(_prepared, mu0s):
        up = np.where(mu0s >= level, 0.5, 0.001)
        down = np.where(mu0s <= level, 0.5, 0.001)
        for centre, width, value in bumps:
            near = np.abs(mu0s - centre) <= width
            up, down = np.where(near, value, up), np.where(near, value, down)
        return up, down

    return curve


_CURVES = given(
    level=st.floats(-0.9, 0.9),
    bumps=st.lists(
        st.tuples(st.floats(-1, 1), st.floats(0, 0.02), st.sampled_from([0.001, 0.5])),
        max_size=3,
    ),
    margin=st.sampled_from([0.3, 0.3137, 0.45, 0.5555]),
    spike_at_margin=st.booleans(),
)


def _verdict_and_p(gate: str, level: float, bumps, margin: float, spike_at_margin: bool):
    """One gate's decision and `gate_p_value` under a made-up p-value curve."""
    from unittest import mock

    from harness_world.stats import decision

    if spike_at_margin:
        bumps = [*bumps, (-margin, 0.0, 0.5)]
    with mock.patch.object(decision, "_curve", _curve_from(level, bumps)):
        design = Design(
            pairs=_TWELVE,
            gate=gate,  # type: ignore[arg-type]
            margin=margin if gate == "non-inferior" else None,
        )
        return decide(design), decision.gate_p_value(design)


@settings(max_examples=examples(30, 300), deadline=None)
@_CURVES
def test_verdict_and_p_values_agree_whatever_the_p_value_curve(
    level: float, bumps: list[tuple[float, float, float]], margin: float, spike_at_margin: bool
) -> None:
    """However the bootstrap's p-value wiggles in the null, every gate agrees with its p."""
    for gate in ("improved", "no-regression", "non-inferior"):
        d, p = _verdict_and_p(gate, level, bumps, margin, spike_at_margin)
        assert (d.lower > 0) == (d.p_increase <= d.alpha), (gate, d)
        assert (d.upper < 0) == (d.p_decrease <= d.alpha), (gate, d)
        shown = not d.passed if gate == "no-regression" else d.passed
        assert shown == (p <= d.alpha), (gate, d.lower, d.upper, p)


def test_non_inferiority_verdict_and_p_value_agree_at_an_off_grid_margin() -> None:
    """Every null below +0.3 rejected except exactly -margin (31.37 points: off the grid).

    The bounds alone (lower -30 points, above -31.37) would pass; the gate's own null is
    accepted (p 0.5), so the gate fails, says why, and its p-value says the same.
    """
    d, p = _verdict_and_p("non-inferior", 0.3, [], 0.3137, spike_at_margin=True)
    assert -d.lower < 0.3137 and not d.passed and p == 0.5
    assert "does not reject a drop of exactly 31.37 points (p = 0.5" in d.reason
    assert d.passed == (p <= d.alpha), (d.lower, p)


def test_non_inferiority_p_value_counts_a_bound_found_between_grid_points() -> None:
    """An accepted null between two grid values, below -margin, fails the gate and its p.

    The grid and -margin (31.37 points) are all rejected, but the refinement between -31.5
    and -31.0 points finds -31.47 accepted: the lower bound is below -margin, so the gate
    fails, and the p-value reads that bound as well (else it would say 0.001 and pass).
    """
    d, p = _verdict_and_p("non-inferior", -0.312, [(-0.3145, 0.0002, 0.5)], 0.3137, False)
    assert -0.315 < d.lower <= -0.3137 and not d.passed
    assert p == 0.5


@settings(max_examples=examples(12, 120), deadline=None)
@given(
    tasks=st.sampled_from([12, 24, 29, 30, 36, 40]),
    drop=st.sampled_from([0.0, 0.05, 0.1, 0.2]),
    margin=st.sampled_from([0.1, 0.15, 0.3137]),
    seed=st.integers(0, 2**16),
)
def test_non_inferiority_p_value_decides_at_every_holm_level(
    tasks: int, drop: float, margin: float, seed: int
) -> None:
    """The p-value Holm orders by says the verdict at the levels Holm decides at, too.

    A suite too small for the margin at half the level (29 tasks of a 10-point margin pass
    the task count at 5 % but not at 2.5 %) has a p-value above that level: the count is the
    chance ``(1 - margin)^n`` that a broken class hides, part of the p-value.
    """
    import random

    from harness_world.stats.decision import gate_p_value

    rng = random.Random(seed)
    suite = []
    for _ in range(tasks):
        rate = rng.random()
        b = sum(rng.random() < rate for _ in range(RUNS))
        c = sum(rng.random() < max(0.0, rate - drop) for _ in range(RUNS))
        suite.append((b, c))
    pairs = _pairs(tuple(suite))
    p = gate_p_value(Design(pairs=pairs, gate="non-inferior", margin=margin, alpha=0.05))
    for level in (0.05, 0.025, 0.0125):
        d = decide(Design(pairs=pairs, gate="non-inferior", margin=margin, alpha=level))
        assert d.passed == (p <= level), (level, p, d.lower, d.reason)
