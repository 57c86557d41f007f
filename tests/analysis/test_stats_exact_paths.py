"""The report's fast statistics and sheets equal their obvious references to the last bit.

Each reference below is the plain formula: one exact fraction per task, every falling factorial
taken afresh, one residual per record, every figure read off the results' properties. Results
and errors must be identical, not close.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world import stats
from harness_world.analysis import layered
from harness_world.analysis.layered import ClaimLevels, DimensionSheet, layered_tables
from harness_world.grading import DIMENSIONS, JOINT_STATES, LayeredResult
from harness_world.running.reviews import Review, link_name
from harness_world.stats import (
    ExcludedTask,
    PassKSummary,
    StatsInputError,
    TaskPassK,
    TaskTally,
)
from harness_world.stats.decision import _half_rate_pmf, pass_k_variance
from tests.conftest import examples
from tests.strategies import layered_results


def reference_pass_k_summary(
    tallies: Sequence[TaskTally], k: int, weights: Mapping[str, float] | None
) -> PassKSummary:
    """``sum w_t est_t / sum w_t`` with every per-task estimate an exact fraction."""
    if k < 1:
        raise StatsInputError(f"k must be at least 1, got {k}")
    by_id: dict[str, TaskTally] = {}
    for t in tallies:
        if t.runs < 0 or not 0 <= t.passes <= max(t.runs, 0):
            raise StatsInputError(
                f"task {t.task_id!r}: need 0 <= passes <= runs, got {t.passes}/{t.runs}"
            )
        if t.task_id in by_id:
            raise StatsInputError(f"task {t.task_id!r} appears twice")
        by_id[t.task_id] = t
    if weights is not None and (unknown := sorted(set(weights) - set(by_id))):
        raise StatsInputError(f"weights name unknown task(s): {', '.join(unknown)}")
    included = [by_id[t] for t in sorted(by_id) if by_id[t].runs >= k]
    excluded = [
        ExcludedTask(task_id=t, reason=f"{by_id[t].runs} run(s), fewer than k={k}")
        for t in sorted(by_id)
        if by_id[t].runs < k
    ]
    if not included:
        raise StatsInputError(f"no task has at least k={k} runs")
    exact_weights = []
    for t in included:
        if weights is None:
            exact_weights.append(Fraction(1))
            continue
        if t.task_id not in weights:
            raise StatsInputError(f"no weight declared for task {t.task_id!r}")
        declared = weights[t.task_id]
        if not math.isfinite(declared) or declared < 0:
            raise StatsInputError(f"weight of task {t.task_id!r} must be finite and >= 0")
        exact_weights.append(Fraction(declared))
    total = sum(exact_weights, Fraction(0))
    if total == 0:
        raise StatsInputError("the declared weights of the included tasks sum to 0")
    hats = [stats.pass_hat_k_exact(t.runs, t.passes, k) for t in included]
    ats = [stats.pass_at_k_exact(t.runs, t.passes, k) for t in included]
    per_task = [
        TaskPassK(
            task_id=t.task_id,
            runs=t.runs,
            passes=t.passes,
            pass_hat_k=float(hat),
            pass_at_k=float(at),
            weight=float(w),
        )
        for t, hat, at, w in zip(included, hats, ats, exact_weights, strict=True)
    ]
    return PassKSummary(
        k=k,
        tasks=len(included),
        pass_hat_k=float(sum((w * h for w, h in zip(exact_weights, hats)), Fraction(0)) / total),
        pass_at_k=float(sum((w * a for w, a in zip(exact_weights, ats)), Fraction(0)) / total),
        weighted=weights is not None,
        per_task=per_task,
        excluded=excluded,
    )


def _outcome(f: Callable[..., PassKSummary], *args: object, **kwargs: object) -> object:
    """The result, or the error's type and message: both must match the reference's."""
    try:
        return f(*args, **kwargs)
    except StatsInputError as e:
        return (type(e), str(e))


RUNS = st.one_of(st.integers(0, 12), st.integers(150, 320))
WEIGHT = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 0.1, 3.0, 1e-300, 5e-324, 1e300]),
    st.floats(0, 1e6, allow_nan=False),
    st.sampled_from([-1.0, math.nan, math.inf]),  # refused: same message as the reference
)


@st.composite
def tallies_and_weights(
    draw: st.DrawFn,
) -> tuple[list[TaskTally], int, dict[str, float] | None]:
    """Tasks with unequal run counts (some short of k), a k, and weights or none."""
    names = draw(st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=10, unique=True))
    tallies = []
    for name in names:
        runs = draw(RUNS)
        passes = draw(st.one_of(st.integers(0, runs), st.sampled_from([0, runs])))
        tallies.append(TaskTally(task_id=name, runs=runs, passes=passes))
    if draw(st.booleans()):  # a task repeated, or an impossible tally: refused alike
        bad = draw(st.sampled_from(tallies))
        tallies.append(draw(st.sampled_from([bad, TaskTally(task_id="z", runs=3, passes=4)])))
    k = draw(st.one_of(st.integers(0, 14), st.integers(100, 330)))
    weights = None
    if draw(st.booleans()):
        named = draw(st.lists(st.sampled_from([*names, "unknown"]), unique=True))
        weights = {n: draw(WEIGHT) for n in named}
    return draw(st.permutations(tallies)), k, weights


@settings(max_examples=examples(300, 3000), deadline=None)
@given(tallies_and_weights())
def test_pass_k_summary_is_the_exact_per_task_average_to_the_bit(
    case: tuple[list[TaskTally], int, dict[str, float] | None],
) -> None:
    tallies, k, weights = case
    got = _outcome(stats.pass_k_summary, tallies, k, weights=weights)
    assert got == _outcome(reference_pass_k_summary, tallies, k, weights)


def reference_pass_k_variance(runs: int, passes: int, k: int) -> float:
    """The variance's formula with every falling factorial taken afresh."""
    q = (passes + 0.5) / (runs + 1)
    pmf = _half_rate_pmf(runs, passes)
    top = math.perm(runs, k)
    second = math.fsum(p * (math.perm(j, k) / top) ** 2 for j, p in enumerate(pmf) if j >= k)
    return max(second - q ** (2 * k), 1e-300)


@settings(max_examples=examples(300, 3000), deadline=None)
@given(st.data())
def test_pass_k_variance_is_its_formula_to_the_bit(data: st.DataObject) -> None:
    runs = data.draw(RUNS.filter(lambda n: n > 0))
    passes = data.draw(st.integers(0, runs))
    k = data.draw(st.integers(1, runs + 2))
    expected = reference_pass_k_variance(runs, passes, k)
    assert pass_k_variance(runs, passes, k) == expected
    assert pass_k_variance(runs, passes, k) == expected  # again, from the cache


# ---------------------------------------------------------------- the layered sheets


def reference_cluster_bounds(
    values: Sequence[float], weights: Sequence[float], tasks: Sequence[str], estimate: float
) -> tuple[float, float] | None:
    """CR1 bounds with one residual per record, summed per task."""
    residuals: dict[str, list[float]] = {}
    for v, w, t in zip(values, weights, tasks, strict=True):
        residuals.setdefault(t, []).append(v - estimate * w)
    g = len(residuals)
    total = math.fsum(weights)
    if g < 2 or total == 0:
        return None
    sums = sorted(math.fsum(r) for r in residuals.values())
    se = math.sqrt(math.fsum(u * u for u in sums) * g / (g - 1)) / total
    return max(0.0, estimate - layered._Z * se), min(1.0, estimate + layered._Z * se)


@settings(max_examples=examples(300, 3000), deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdefg"), st.booleans()), min_size=1, max_size=400))
def test_flag_bounds_are_the_per_record_residual_bounds_to_the_bit(
    records: list[tuple[str, bool]],
) -> None:
    tasks = [t for t, _ in records]
    flags = [f for _, f in records]
    estimate = sum(flags) / len(flags)
    expected = reference_cluster_bounds(
        [float(f) for f in flags], [1.0] * len(flags), tasks, estimate
    )
    assert layered._flag_bounds(flags, tasks, estimate) == expected
    values = [float(f) for f in flags]
    assert layered._cluster_bounds(values, [1.0] * len(flags), tasks, estimate) == expected


def reference_sheet(
    results: Sequence[LayeredResult], dimension: str, claims: Sequence[Review]
) -> DimensionSheet:
    """One sheet with every figure read off the results' properties where it is used."""
    scored = sorted(
        (r for r in results if r.admitted), key=lambda r: (r.task_id, r.sample, r.dimension or "")
    )
    tasks = [r.task_id for r in scored]
    failed_h = [r.harness_failed for r in scored]
    adjusted = [r.harness_adjusted for r in scored]
    joint = [r.joint_state for r in scored]
    joint_failed = [r for r in scored if r.joint_state == "both"]
    activated = [bool(r.activated) for r in joint_failed]
    found: dict[tuple[str, int], tuple[set[str], set[str]]] = {}
    for r in scored:
        failed, known = found.setdefault((r.task_id, r.sample), (set(), set()))
        failed.update(r.harness_failed)
        known.update(link_name(x.harness, x.agent) for x in r.activated)
    levels = {"confirmed-defect": 0, "validated-link": 0, "unmatched": 0}
    for task, sample, level, name in {(c.task, c.sample, c.claim, c.criterion) for c in claims}:
        failed, links = found.get((task, sample), (set(), set()))
        if name in {"confirmed-defect": failed, "validated-link": links}.get(level, ()):
            levels[level] += 1
        elif level != "verdict":
            levels["unmatched"] += 1
    proportion = layered._proportion
    return DimensionSheet(
        dimension=dimension,
        records=len(results),
        admitted=len(scored),
        tasks=len(set(tasks)),
        agent_success=proportion([j in ("clean", "harness_only") for j in joint], tasks),
        agent_score=layered._mean([r.agent_score for r in scored], tasks),
        harness_micro=layered._micro(scored),
        harness_macro=layered._mean([r.harness_score for r in scored], tasks),
        layered_score=layered._mean([r.layered_score for r in scored], tasks),
        joint={s: proportion([j == s for j in joint], tasks) for s in JOINT_STATES},
        joint_failures=len(joint_failed),
        linked=sum(activated),
        link_rate=proportion(activated, [r.task_id for r in joint_failed]),
        harness_failed=layered._tally(failed_h),
        bypassed=layered._tally(r.bypassed for r in scored),
        harness_adjusted=layered._tally(adjusted),
        with_harness_failure=proportion([bool(f) for f in failed_h], tasks),
        with_adjusted_failure=proportion([bool(f) for f in adjusted], tasks),
        claims=ClaimLevels(
            failed_verdicts=sum(len(v[0]) for v in found.values()),
            activated_links=sum(len(v[1]) for v in found.values()),
            confirmed_defects=levels["confirmed-defect"],
            validated_links=levels["validated-link"],
            unmatched=levels["unmatched"],
        ),
    )


CLAIMS = st.builds(
    lambda task, sample, claim, criterion: Review(
        task=task,
        sample=sample,
        criterion=criterion,
        verdict="pass",
        note="",
        reviewer="",
        time="",
        record_digest="",
        claim=claim,
    ),
    st.sampled_from(("t.a", "t.b", "t.c", "t.gone")),
    st.integers(0, 3),
    st.sampled_from(("confirmed-defect", "validated-link", "verdict")),
    st.sampled_from(
        ("harness.same_key_retry", "budget.tool_calls", "harness.same_key_retry -> state.required")
    ),
)


@settings(max_examples=examples(150, 1500), deadline=None)
@given(st.lists(layered_results(), max_size=30), st.lists(CLAIMS, max_size=8))
def test_layered_tables_are_each_dimensions_sheet_read_off_the_results(
    results: list[LayeredResult], claims: list[Review]
) -> None:
    tables = layered_tables(results, claims)
    groups: dict[str, list[LayeredResult]] = {}
    for r in results:
        groups.setdefault(r.dimension or layered.UNASSIGNED, []).append(r)
    expected = []
    for d in (*DIMENSIONS, layered.UNASSIGNED):
        if d in groups:
            slots = {(r.task_id, r.sample) for r in groups[d]}
            mine = [c for c in claims if (c.task, c.sample) in slots]
            expected.append(reference_sheet(groups[d], d, mine))
    assert tables.dimensions == expected
    assert tables.pooled == reference_sheet(results, layered.ALL, claims)
