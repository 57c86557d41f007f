"""The decision ``compare --gate`` takes, built to hold its stated error rate.

The descriptive noise band of `harness_world.stats` answers "how wide is this eval's noise?".
A CI gate needs more: a decision whose false-alarm rate is what it says at every suite size,
with task families of any sizes, with skewed changes, with degenerate spread and with missing
runs. This module provides it:

* `decide`: a one-sided test on the mean per-task difference. Clusters are the task families
  (every task its own when there are none). The standard error is CR2 (bias-reduced,
  `harness_world.stats.cluster`); the decision is a wild cluster bootstrap-t with the null
  imposed and Webb's six-point weights (`harness_world.stats.wild`), of a statistic corrected
  for skewness by Hall's Edgeworth transformation (`harness_world.stats.skew`). When the
  spread is *degenerate* (its variance below the 1% point of what the run-to-run noise of the
  tasks alone would give) a *binomial variance floor* replaces it, so a suite whose
  differences happen to be all equal cannot claim certainty. Rademacher sign flips and the
  CR1 / CR2 t tests are kept as ``method`` choices so that the calibration bench measures
  them beside the gate (they were the candidates the gate was chosen from).
* `gate_passes`: ``improved`` / ``no-regression`` / ``non-inferior`` / ``none`` from a decision.
* `assess`: the whole gate over run rows: missing and short tasks, the observed decision and a
  worst case (candidate's missing runs counted as failures, baseline's as passes), per-task
  changes that survive a Holm correction, solid <-> broken flips, warnings when few or
  dominant families leave no test reliable, and optionally a power plan.
* `plan_power` / `tasks_for_power`: tasks and runs needed for 80% power at a given change.

Everything is order-independent (tasks and clusters are put in a canonical order first) and
deterministic: with 4 clusters or fewer every Webb pattern is enumerated (12 or fewer for sign
flips); above, the patterns come from a fixed, reported seed.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Final, Literal

import attrs
import msgspec

from harness_world.stats.cluster import bell_mccaffrey_df
from harness_world.stats.estimators import (
    Comparison,
    Flip,
    PairedTask,
    RunRow,
    StatsInputError,
    TaskTally,
    compare_results,
    flipped_tasks,
    pair_tallies,
    tally_runs,
)
from harness_world.stats.hidden_class import min_margin, min_tasks, miss_probability
from harness_world.stats.skew import cluster_skewness, hall_inverse, hall_transform
from harness_world.stats.wild import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    WildClusterTest,
    wild_cluster_test,
)

__all__ = [
    "Decision",
    "GateName",
    "GateResult",
    "MissingTask",
    "Plan",
    "PlanRow",
    "TaskChange",
    "assess",
    "decide",
    "gate_passes",
    "holm_adjust",
    "mean_bounds",
    "p_value",
    "plan_power",
    "task_changes",
    "task_families",
    "tasks_for_power",
]

GateName = Literal["improved", "no-regression", "non-inferior", "none"]
"""The gates ``compare`` can apply."""

Method = Literal["sign-flip", "webb", "cr2-t", "cr1-t"]
"""How the decision was computed (see `decide`): ``webb`` is what ``compare`` uses."""

Resampling = Literal["exhaustive", "random", "none"]
"""Whether a bootstrap used every weight pattern, seeded random ones, or none (a t test)."""

_DEFAULT_ALPHA: Final = 0.025
_TARGET_POWER: Final = 0.8
_DEGENERATE_QUANTILE: Final = 0.01
_PLAN_RUNS: Final = (1, 3, 5, 10, 20)
_MAX_TASKS: Final = 10_000_000
_FEW_CLUSTERS: Final = 8.0


# --------------------------------------------------------------------------------------------
# Records


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """A one-sided test on the mean per-task difference (candidate - baseline).

    Attributes:
        method: ``webb`` (the gate: a wild cluster bootstrap-t with Webb's six-point weights
            and the null imposed), ``sign-flip`` (the same with Rademacher weights), ``cr2-t``
            (CR2 standard error, t with Bell-McCaffrey df) or ``cr1-t`` (CR1, t with ``G - 1``
            df; the gate before the small-sample methods). Without families every task is its
            own cluster.
        skew_corrected: Whether Hall's Edgeworth transformation corrected the statistic for
            skewed differences.
        alpha: One-sided level of each bound and of each gate.
        sidedness: Always ``one-sided``: each gate tests one direction at ``alpha``.
        tasks: Paired tasks n.
        clusters: Families G (a task without a family counts as its own), or null when no task
            has a family (then every task is its own cluster).
        effective_clusters: Bell-McCaffrey df + 1: how many equal families would give the same
            degrees of freedom (n for independent tasks).
        df: Degrees of freedom of the reference t: Bell-McCaffrey (``G - 1`` for ``cr1-t``).
        mean: Mean per-task difference, a fraction.
        standard_error: The standard error used: the floor when ``floor_applied``, else the
            empirical one.
        empirical_standard_error: From the spread of the differences (CR2 over the clusters;
            CR1 for ``cr1-t``). Without families it is the paired ``sd / sqrt(n)``.
        paired_standard_error: ``sd / sqrt(n)`` with tasks treated as independent.
        design_effect: ``(empirical / paired)^2``: the variance families add (1 without them).
        floor_standard_error: The binomial floor, ``sqrt(sum_i v_i) / n`` with
            ``v_i = s_i^2 (1/n_b + 1/n_c)`` and ``s_i^2 = x (N - x) / (N (N - 1))`` for the
            x passes in N runs of task i pooled over both sides (when every ``s_i^2`` is 0:
            ``q (1 - q)`` with ``q = (x + 0.5) / (N + 1)``).
        floor_applied: Whether the spread was degenerate, i.e. ``SE_empirical^2 <
            floor^2 * chi2_df^-1(0.01) / df``, so the floor was used.
        skewness: ``gamma_n``, the clusters' skewness that the correction used (0 without it).
        t_quantile: ``t_df^-1(1 - alpha)``, the reference critical value (the bootstrap's own
            is implied by the bounds).
        lower: One-sided lower confidence bound of the change (the test inverted).
        upper: One-sided upper confidence bound of the change.
        p_increase: One-sided p-value against "no increase" (small: the change is > 0).
        p_decrease: One-sided p-value against "no decrease" (small: the change is < 0).
        resampling: ``exhaustive`` (every weight pattern: no randomness), ``random`` or
            ``none`` (a t test).
        patterns: Weight patterns used (0 for a t test).
        seed: Seed of random patterns, or null when none were drawn.
        smallest_p: The smallest p-value the bootstrap can give (``1 / patterns`` when
            exhaustive); above ``alpha`` no gate can be decided against the null.

    """

    method: Method
    skew_corrected: bool
    alpha: float
    sidedness: Literal["one-sided"]
    tasks: int
    clusters: int | None
    effective_clusters: float
    df: float
    mean: float
    standard_error: float
    empirical_standard_error: float
    paired_standard_error: float
    design_effect: float
    floor_standard_error: float
    floor_applied: bool
    skewness: float
    t_quantile: float
    lower: float
    upper: float
    p_increase: float
    p_decrease: float
    resampling: Resampling
    patterns: int
    seed: int | None
    smallest_p: float


class MissingTask(msgspec.Struct, frozen=True, kw_only=True):
    """A task with fewer runs than expected on at least one side.

    Attributes:
        task_id: The task.
        expected_runs: Runs expected per side (the larger of ``--min-runs``, the runs the
            schedule asked for, and the most runs the task has on either side).
        baseline_runs: Runs found under the baseline.
        candidate_runs: Runs found under the candidate.
        reason: Human-readable description.

    """

    task_id: str
    expected_runs: int
    baseline_runs: int
    candidate_runs: int
    reason: str


class TaskChange(msgspec.Struct, frozen=True, kw_only=True):
    """A per-task change tested on its own (two-sided Fisher exact test on the runs).

    Attributes:
        task_id: The task.
        baseline: Its baseline tally.
        candidate: Its candidate tally.
        difference: Candidate pass rate minus baseline pass rate.
        p_value: Two-sided Fisher exact p-value of the task's 2x2 table.
        p_adjusted: Holm-adjusted p-value over all paired tasks.
        significant: ``p_adjusted <= 2 * alpha`` (each direction at ``alpha``).

    """

    task_id: str
    baseline: TaskTally
    candidate: TaskTally
    difference: float
    p_value: float
    p_adjusted: float
    significant: bool


class PlanRow(msgspec.Struct, frozen=True, kw_only=True):
    """Tasks needed for the target power at one number of runs per task and side.

    Attributes:
        runs: Runs per task per configuration.
        tasks: Paired tasks needed (null when no count up to 10 million reaches the power).
        total_runs: ``tasks * runs * 2`` (both configurations), or null.

    """

    runs: int
    tasks: int | None
    total_runs: int | None


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """A power plan for detecting a change of ``mde`` with the one-sided test of `decide`.

    Attributes:
        mde: The smallest change worth detecting, a fraction (``--mde`` points / 100).
        alpha: One-sided level.
        power_target: The power the table targets (0.8).
        tasks_now: Paired tasks in the data.
        runs_now: Median runs per task and side in the data.
        power_now: Power of the current design (tasks_now x runs_now) at ``mde``.
        between_task_variance: Estimated variance of true per-task changes (tau^2 >= 0).
        run_variance: Mean per-run Bernoulli variance ``q (1 - q)`` of the tasks.
        design_effect: Variance inflation from families, ``max(1, (SE_CR2 / SE_paired)^2)``
            (1 without families): the gate's own.
        df: The gate's degrees of freedom (Bell-McCaffrey) for the current design.
        effective_clusters: ``df + 1``.
        rows: Tasks needed at several run counts.

    """

    mde: float
    alpha: float
    power_target: float
    tasks_now: int
    runs_now: int
    power_now: float
    between_task_variance: float
    run_variance: float
    design_effect: float
    df: float
    effective_clusters: float
    rows: list[PlanRow]


class GateResult(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the ``compare`` gate decided, and why.

    Attributes:
        gate: The gate applied.
        margin: Non-inferiority margin (a fraction) for ``non-inferior``, else null.
        alpha: One-sided level of the gate.
        sidedness: ``one-sided``.
        passed: Whether the gate passed.
        reason: One sentence saying why it passed or failed.
        allow_missing: Whether missing runs were allowed (otherwise they fail the gate).
        missing: Tasks short of runs or absent on one side, sorted by task id.
        expected_runs: The fewest runs expected per task and side (``--min-runs``, or the run
            directories' samples); a task is missing data below it, or below the other side's
            count.
        observed: The decision on the runs that exist (every task with a run on both sides).
        worst_case: The decision with the candidate's missing runs counted as failures and the
            baseline's as passes; null when nothing is missing.
        worst_case_passed: Whether the gate would pass on the worst case (null when nothing
            is missing).
        families_used: Whether the decision clustered over families.
        cluster_note: Why families were or were not used.
        warnings: When few or dominant families make the decision unreliable (or impossible),
            with the effective number of clusters.
        correction: The multiple-comparison correction of per-task changes (``holm``).
        significant_changes: Per-task changes significant after the correction.
        flips: Solid <-> broken flips (listed for reading, whatever their significance).
        plan: The power plan, when ``--plan`` was asked.
        lost_runs: Runs missing against the expected counts, over both sides.
        tipping_point: How many lost runs, counted adversely (the candidate's as
            failures, the baseline's as passes, the ones that move the mean change most
            first), change the gate's outcome on the observed runs; null when even all of
            them do not, or without a gate. ``--allow-missing`` assumes losses are
            uninformative (unrelated to whether the run would have passed); this says how
            much that assumption carries.
        min_tasks: ``non-inferior``: the fewest paired tasks that can show non-inferiority
            at this margin and level (`hidden_class.min_tasks`); the gate fails below it
            whatever the bound; null for the other gates.

    """

    gate: GateName
    margin: float | None
    alpha: float
    sidedness: Literal["one-sided"]
    passed: bool
    reason: str
    allow_missing: bool
    missing: list[MissingTask]
    expected_runs: int
    observed: Decision
    worst_case: Decision | None
    worst_case_passed: bool | None
    families_used: bool
    cluster_note: str
    warnings: list[str]
    correction: Literal["holm"]
    significant_changes: list[TaskChange]
    flips: list[Flip]
    plan: Plan | None
    lost_runs: int = 0
    tipping_point: int | None = None
    min_tasks: int | None = None


# --------------------------------------------------------------------------------------------
# The test on the mean


def _check_alpha(alpha: float) -> None:
    if not (math.isfinite(alpha) and 0 < alpha < 0.5):
        raise StatsInputError(f"alpha must be strictly between 0 and 0.5, got {alpha}")


def _shrunk_rate(passes: int, runs: int) -> float:
    return (passes + 0.5) / (runs + 1)


def _run_variance(p: PairedTask, *, shrink: bool) -> float:
    """Per-run Bernoulli variance of task p, pooled over both sides.

    Unbiased ``x (N - x) / (N (N - 1))`` by default (0 when every run agreed); with ``shrink``
    the half-pass rate ``q = (x + 0.5) / (N + 1)`` gives ``q (1 - q)``, never 0.
    """
    x = p.baseline.passes + p.candidate.passes
    total = p.baseline.runs + p.candidate.runs
    if shrink:
        q = _shrunk_rate(x, total)
        return q * (1 - q)
    if total < 2:  # one run in all (`mean_bounds` with one run): no unbiased estimate
        return 0.0
    return x * (total - x) / (total * (total - 1))


def _floor_variances(items: Sequence[PairedTask]) -> list[float]:
    """Sampling variance of each task's difference under its pooled rate (the floor's terms).

    ``v_i = s_i^2 (1/n_b + 1/n_c)`` with ``s_i^2`` the unbiased pooled run variance; when every
    task's runs all agreed (all zero), the half-pass shrunk variance is used instead, so a suite
    with no variation at all never reads as certainty.
    """
    inverse = [sum(1 / t.runs for t in (p.baseline, p.candidate) if t.runs) for p in items]
    plain = [_run_variance(p, shrink=False) * w for p, w in zip(items, inverse, strict=True)]
    if any(v > 0 for v in plain):
        return plain
    return [_run_variance(p, shrink=True) * w for p, w in zip(items, inverse, strict=True)]


def _cluster_labels(
    paired: Sequence[PairedTask], families: Mapping[str, str] | None
) -> list[str] | None:
    """One cluster label per task, or None when no task has a family."""
    if not families or not any(families.get(p.task_id, "") for p in paired):
        return None
    # A task without a family is its own cluster; the prefix keeps it apart from family names.
    return [families.get(p.task_id, "") or f"\x00task:{p.task_id}" for p in paired]


@attrs.frozen(slots=True)
class _Prepared:
    """What `decide` and `p_value` share: the Decision's common fields and the test itself."""

    common: dict[str, Any]
    test: WildClusterTest | None  # None: decided by the t reference alone (t methods)


def _rate(t: TaskTally) -> Fraction:
    """A side's exact pass rate; a side with no runs (`mean_bounds`'s baseline) counts 0."""
    return Fraction(t.passes, t.runs) if t.runs else Fraction(0)


def _grouped(
    items: Sequence[PairedTask], families: Mapping[str, str] | None
) -> tuple[list[Fraction], list[Fraction], list[int], bool]:
    """Exact per-task differences, and their sums and sizes per cluster (families or tasks).

    Exact arithmetic on the per-task rates: equal differences leave no rounding residue.
    """
    diffs = [_rate(p.candidate) - _rate(p.baseline) for p in items]
    labels = _cluster_labels(items, families)
    clustered = labels is not None and len(set(labels)) >= 2
    groups: dict[str, list[Fraction]] = {}
    for label, d in zip(
        labels if clustered and labels else [p.task_id for p in items], diffs, strict=True
    ):
        groups.setdefault(label, []).append(d)
    sums = [sum(ds, Fraction(0)) for ds in groups.values()]
    return diffs, sums, [len(ds) for ds in groups.values()], clustered


def _moments(
    diffs: Sequence[Fraction], sums: Sequence[Fraction], sizes: Sequence[int]
) -> tuple[Fraction, list[Fraction], Fraction]:
    """The exact mean, each cluster's residual sum and the paired variance of the mean."""
    n = len(diffs)
    mean = sum(diffs, Fraction(0)) / n
    residual_sums = [s - k * mean for s, k in zip(sums, sizes, strict=True)]
    paired_var = sum(((d - mean) ** 2 for d in diffs), Fraction(0)) / (n * (n - 1))
    return mean, residual_sums, paired_var


def _exact_variance(
    method: Method, residual_sums: Sequence[Fraction], sizes: Sequence[int], n: int
) -> tuple[Fraction, float]:
    """The mean's variance (exact) and its df: CR1 with ``G - 1``, else CR2 with Bell-McCaffrey."""
    g = len(sizes)
    if method == "cr1-t":
        return Fraction(g, g - 1) * sum((u * u for u in residual_sums), Fraction(0)) / n**2, float(
            g - 1
        )
    terms = (u * u * Fraction(n, n - k) for u, k in zip(residual_sums, sizes, strict=True))
    return sum(terms, Fraction(0)) / n**2, bell_mccaffrey_df(sizes)


def _prepare(
    paired: Sequence[PairedTask],
    *,
    alpha: float,
    families: Mapping[str, str] | None,
    method: Method,
    skew_correction: bool,
    draws: int,
    seed: int,
) -> _Prepared:
    from scipy import special

    _check_alpha(alpha)
    items = sorted(paired, key=lambda p: p.task_id)
    if (n := len(items)) < 2:
        raise StatsInputError(f"fewer than 2 paired tasks ({n})")
    diffs, sums, sizes, clustered = _grouped(items, families)
    exact_mean, residual_sums, paired_var = _moments(diffs, sums, sizes)
    exact_var, df = _exact_variance(method, residual_sums, sizes, n)
    variance = float(exact_var)
    floor = math.sqrt(math.fsum(_floor_variances(items))) / n
    # The spread is degenerate when its variance is below the 1% point of what run-to-run
    # noise alone would give (floor^2 * chi2_df / df); then the floor replaces it.
    threshold = floor**2 * float(special.chdtri(df, 1 - _DEGENERATE_QUANTILE)) / df
    degenerate = variance < threshold
    root_h = [math.sqrt(n / (n - k)) for k in sizes]
    adjusted = [float(u) * r for u, r in zip(residual_sums, root_h, strict=True)]
    common: dict[str, Any] = {
        "method": method,
        "skew_corrected": skew_correction,
        "alpha": alpha,
        "sidedness": "one-sided",
        "tasks": n,
        "clusters": len(sizes) if clustered else None,
        "effective_clusters": bell_mccaffrey_df(sizes) + 1,
        "df": df,
        "mean": float(exact_mean),
        "standard_error": floor if degenerate else math.sqrt(variance),
        "empirical_standard_error": math.sqrt(variance),
        "paired_standard_error": math.sqrt(float(paired_var)),
        "design_effect": variance / float(paired_var) if paired_var > 0 else 1.0,
        "floor_standard_error": floor,
        "floor_applied": degenerate,
        "skewness": cluster_skewness(adjusted) if skew_correction else 0.0,
        "t_quantile": float(special.stdtrit(df, 1 - alpha)),
    }
    if method in ("cr2-t", "cr1-t"):
        return _Prepared(common, None)
    test = wild_cluster_test(
        [float(s) for s in sums],
        sizes,
        floor_variance=floor**2,
        threshold=threshold,
        weights="rademacher" if method == "sign-flip" else "webb",
        skew_correction=skew_correction,
        draws=draws,
        seed=seed,
        observed_variance=variance,
    )
    return _Prepared(common, test)


def _t_reference(common: Mapping[str, Any], mu0: float) -> tuple[float, float]:
    """One-sided p-values of the (skew-corrected) t reference at ``mu0``."""
    import numpy as np
    from scipy import special

    t0 = float(
        hall_transform(
            np.array([(common["mean"] - mu0) / common["standard_error"]]), common["skewness"]
        )[0]
    )
    return float(special.stdtr(common["df"], -t0)), float(special.stdtr(common["df"], t0))


def p_value(
    paired: Sequence[PairedTask],
    mu0: float,
    *,
    direction: Literal["increase", "decrease"],
    alpha: float = _DEFAULT_ALPHA,
    families: Mapping[str, str] | None = None,
    method: Method = "webb",
    skew_correction: bool = True,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
) -> float:
    """The one-sided p-value of `decide`'s test at the null value ``mu0``.

    ``direction="increase"`` tests "the change is at most mu0" (small: it is larger);
    ``decrease`` the mirror. `decide`'s bounds are where this crosses ``alpha``; this is the
    cheaper call when only one null matters (e.g. ``-margin`` for non-inferiority).

    Raises:
        StatsInputError: As `decide`.

    """
    prepared = _prepare(
        paired,
        alpha=alpha,
        families=families,
        method=method,
        skew_correction=skew_correction,
        draws=draws,
        seed=seed,
    )
    up, down = _t_reference(prepared.common, mu0)
    if prepared.test is not None:
        flip_up, flip_down = prepared.test.p_values(mu0)
        if prepared.common["floor_applied"]:
            up, down = max(up, flip_up), max(down, flip_down)
        else:
            up, down = flip_up, flip_down
    return up if direction == "increase" else down


def decide(
    paired: Sequence[PairedTask],
    *,
    alpha: float = _DEFAULT_ALPHA,
    families: Mapping[str, str] | None = None,
    method: Method = "webb",
    skew_correction: bool = True,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
) -> Decision:
    """Test the mean per-task difference one-sidedly at ``alpha`` in each direction.

    Clusters are the families (a task without a family is its own cluster; with no families,
    or only one, every task is its own). With per-task differences ``d_i``, the cluster
    residual sums ``U_g = sum_{i in g} (d_i - mean)`` and sizes ``n_g``:

    * The standard error is CR2, ``SE^2 = sum_g U_g^2 / (1 - n_g / n) / n^2``
      (`harness_world.stats.cluster`): the paired ``sd^2 / n`` without families, CR1 with
      equal families. ``cr1-t`` uses ``G / (G - 1) sum_g U_g^2 / n^2`` instead.
    * Degenerate spread: when ``SE^2 < floor^2 * chi2_df^-1(0.01) / df`` (below the 1% point
      of what run-to-run noise alone gives; always so when every difference is equal), the
      floor ``sqrt(sum_i v_i) / n`` is used instead (see `Decision.floor_standard_error`),
      in the data and in every bootstrap sample alike.
    * ``webb`` (the default, what ``compare`` decides with) and ``sign-flip``: a wild cluster
      bootstrap-t with the null imposed (`harness_world.stats.wild`), Webb's six-point or
      Rademacher weights; bounds by inverting it. Sign flips with every pattern enumerated
      (12 clusters or fewer) are an exact randomization test when the clusters' differences
      are symmetric under the null, but cannot reject at 2.5% with 5 clusters or fewer; Webb
      weights can, and measured closer to the nominal level in more of the bench's cells.
    * ``cr2-t`` / ``cr1-t``: t with Bell-McCaffrey df (``G - 1`` for CR1); closed-form bounds.
      On a degenerate spread a bootstrap method takes the more cautious of itself and the t
      test on the floor: a wild bootstrap of differences that hardly vary cannot show the
      run-to-run noise the floor stands for, and the floor's t cannot see how few clusters
      there are.
    * ``skew_correction``: every statistic goes through Hall's monotone Edgeworth
      transformation with the clusters' skewness (`harness_world.stats.skew`), which keeps a
      one-sided test at its level when a few tasks move a lot in one direction.

    Args:
        paired: Paired tasks (at least 2), e.g. from `harness_world.stats.pair_tallies`.
        alpha: One-sided level, in (0, 0.5).
        families: Task id -> family; None or all-empty for independent tasks.
        method: The inference (see above).
        skew_correction: Apply the Edgeworth correction.
        draws: Random weight patterns when there are too many to enumerate.
        seed: Seed of those patterns.

    Returns:
        The decision.

    Raises:
        StatsInputError: Fewer than 2 tasks or a bad alpha.

    """
    prepared = _prepare(
        paired,
        alpha=alpha,
        families=families,
        method=method,
        skew_correction=skew_correction,
        draws=draws,
        seed=seed,
    )
    common, test = prepared.common, prepared.test
    t_lower, t_upper = _t_bounds(common)
    if test is None:
        p_increase, p_decrease = _t_reference(common, 0.0)
        return Decision(
            **common,
            lower=t_lower,
            upper=t_upper,
            p_increase=p_increase,
            p_decrease=p_decrease,
            resampling="none",
            patterns=0,
            seed=None,
            smallest_p=0.0,
        )
    p_increase, p_decrease = test.p_values(0.0)
    lower, upper = test.lower_bound(alpha), test.upper_bound(alpha)
    if common["floor_applied"]:
        # A wild bootstrap of differences that hardly vary cannot show the run-to-run noise the
        # floor stands for, and the floor's t cannot see how few clusters there are: on a
        # degenerate spread the more cautious of the two decides.
        t_up, t_down = _t_reference(common, 0.0)
        p_increase, p_decrease = max(p_increase, t_up), max(p_decrease, t_down)
        # Still on the scale of a change, like the inverted bootstrap's bounds.
        lower = max(-1.0, min(lower, t_lower))
        upper = min(1.0, max(upper, t_upper))
    return Decision(
        **common,
        lower=lower,
        upper=upper,
        p_increase=p_increase,
        p_decrease=p_decrease,
        resampling="exhaustive" if test.exhaustive else "random",
        patterns=test.patterns,
        seed=None if test.exhaustive else seed,
        smallest_p=1 / test.patterns,
    )


def mean_bounds(
    tallies: Sequence[TaskTally],
    *,
    alpha: float = _DEFAULT_ALPHA,
    families: Mapping[str, str] | None = None,
    seed: int = DEFAULT_SEED,
) -> Decision:
    """`decide` on one configuration's mean per-task pass rate instead of a change.

    Each task's rate stands where `decide` puts a difference (its floor term is the task's own
    run variance ``s_i^2 / n_i``), so the suite's headline interval is the gate's bootstrap-t
    with Webb weights, CR2-studentized and skew-corrected: ``[lower, upper]`` covers the mean a
    fresh draw of tasks like these would give with ``1 - 2 alpha`` confidence.

    Args:
        tallies: One tally per task (at least 2, each with at least one run).
        alpha: Level of each one-sided bound (0.025 for a 95 % interval).
        families: Task families (clusters), or None.
        seed: Seed of the random weight patterns (used only with many clusters).

    Returns:
        The decision, its bounds on the scale of a rate.

    Raises:
        StatsInputError: Fewer than 2 tasks, a task without runs, or a bad alpha.

    """
    if any(t.runs < 1 for t in tallies):
        raise StatsInputError("every task needs at least one run")
    paired = [
        PairedTask(
            task_id=t.task_id,
            baseline=TaskTally(task_id=t.task_id, runs=0, passes=0),
            candidate=t,
            difference=t.passes / t.runs,
        )
        for t in tallies
    ]
    return decide(paired, alpha=alpha, families=families, seed=seed)


def _t_bounds(common: Mapping[str, Any]) -> tuple[float, float]:
    """The (skew-corrected) t reference's one-sided bounds: ``mean - SE g^-1(-/+ t)``."""
    mean, se, gamma, quantile = (
        common["mean"],
        common["standard_error"],
        common["skewness"],
        common["t_quantile"],
    )
    return mean - se * hall_inverse(quantile, gamma), mean - se * hall_inverse(-quantile, gamma)


def gate_passes(decision: Decision, gate: GateName, margin: float | None = None) -> bool:
    """Whether a decision satisfies a gate (missing data is `assess`'s business).

    * ``improved``: the lower bound of the change is above 0.
    * ``no-regression``: the upper bound of the change is not below 0 (no significant drop).
    * ``non-inferior``: the upper bound of the drop (``-lower``) is below ``margin``, and the
      decision has at least `hidden_class.min_tasks` tasks: enough that a class of tasks
      making up ``margin`` of the population, all broken, would be absent from the sample
      at most ``alpha`` of the time (below that no test can hold its level at that null).
    * ``none``: always.

    Raises:
        StatsInputError: ``non-inferior`` without a positive, finite margin.

    """
    if gate == "improved":
        return decision.lower > 0
    if gate == "no-regression":
        return not decision.upper < 0
    if gate == "non-inferior":
        if margin is None or not (math.isfinite(margin) and margin > 0):
            raise StatsInputError(f"non-inferior needs a positive margin, got {margin}")
        return -decision.lower < margin and decision.tasks >= min_tasks(margin, decision.alpha)
    return True


# --------------------------------------------------------------------------------------------
# Per-task changes


def _fisher_two_sided(a: TaskTally, b: TaskTally) -> float:
    """Two-sided Fisher exact p of [[a.passes, a.fails], [b.passes, b.fails]], exact integers."""
    n1, n2 = a.runs, b.runs
    k = a.passes + b.passes
    total = math.comb(n1 + n2, k)
    lo, hi = max(0, k - n2), min(k, n1)
    weights = {x: math.comb(n1, x) * math.comb(n2, k - x) for x in range(lo, hi + 1)}
    observed = weights[a.passes]
    return min(1.0, sum(w for w in weights.values() if w <= observed) / total)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input's order.

    Sorted ascending, ``p_(j)`` becomes ``max_{i <= j} min(1, (m - i + 1) p_(i))``. Rejecting
    where the adjusted value is at most a level controls the chance of any false rejection
    (family-wise error) at that level, whatever the dependence between the tests.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def task_changes(paired: Sequence[PairedTask], alpha: float = _DEFAULT_ALPHA) -> list[TaskChange]:
    """Every paired task's two-sided Fisher exact test, Holm-adjusted over the tasks.

    ``significant`` is ``p_adjusted <= 2 * alpha`` (each direction at ``alpha``): with no
    change anywhere, the chance that any task is significant is at most ``2 * alpha``.
    """
    return _task_changes(paired, alpha)


def _task_changes(paired: Sequence[PairedTask], alpha: float) -> list[TaskChange]:
    items = sorted(paired, key=lambda p: p.task_id)
    raw = [_fisher_two_sided(p.baseline, p.candidate) for p in items]
    adjusted = holm_adjust(raw)
    return [
        TaskChange(
            task_id=p.task_id,
            baseline=p.baseline,
            candidate=p.candidate,
            difference=p.difference,
            p_value=pv,
            p_adjusted=pa,
            significant=pa <= 2 * alpha,
        )
        for p, pv, pa in zip(items, raw, adjusted, strict=True)
    ]


# --------------------------------------------------------------------------------------------
# Power


def _power(n: int, df: float, sd: float, mde: float, alpha: float) -> float:
    from scipy import special, stats

    if sd <= 0:
        return 1.0
    quantile = float(special.stdtrit(df, 1 - alpha))
    ncp = mde / (sd / math.sqrt(n))
    return float(stats.nct.sf(quantile, df, ncp))


def _smallest_n(power_at: Callable[[int], float], target: float) -> int | None:
    lo, hi = 2, 2
    while power_at(hi) < target:
        if hi >= _MAX_TASKS:
            return None
        lo, hi = hi, min(hi * 2, _MAX_TASKS)
    while lo < hi:
        mid = (lo + hi) // 2
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return hi


def tasks_for_power(
    sd: float, mde: float, *, alpha: float = _DEFAULT_ALPHA, power: float = _TARGET_POWER
) -> int | None:
    """Smallest number of paired tasks whose one-sided paired t test detects ``mde``.

    Power is computed exactly from the noncentral t: with ``df = n - 1``,
    ``power(n) = P(T_{df, ncp} > t_{df}^{-1}(1 - alpha))``, ``ncp = mde * sqrt(n) / sd``.
    Compare `harness_world.stats.tasks_needed`, which sizes a band of half-width X: a true
    change of exactly X clears such a band only about half the time.

    Args:
        sd: Standard deviation of per-task differences (finite, >= 0).
        mde: The change to detect (finite, > 0), same units as sd.
        alpha: One-sided level in (0, 0.5).
        power: Target power in (0, 1).

    Returns:
        The task count (at least 2), or None if more than 10 million would be needed.

    Raises:
        StatsInputError: A bad argument.

    """
    if not (math.isfinite(sd) and sd >= 0):
        raise StatsInputError(f"sd must be finite and >= 0, got {sd}")
    if not (math.isfinite(mde) and mde > 0):
        raise StatsInputError(f"mde must be finite and > 0, got {mde}")
    _check_alpha(alpha)
    if not 0 < power < 1:
        raise StatsInputError(f"power must be strictly between 0 and 1, got {power}")
    return _smallest_n(lambda n: _power(n, n - 1, sd, mde, alpha), power)


def plan_power(
    paired: Sequence[PairedTask],
    mde: float,
    *,
    alpha: float = _DEFAULT_ALPHA,
    families: Mapping[str, str] | None = None,
    power: float = _TARGET_POWER,
) -> Plan:
    """Power of the current design at ``mde`` and tasks needed at several run counts.

    Planning uses what the gate uses: its standard error (CR2 over the families, or the floor
    when the spread is degenerate), its Bell-McCaffrey degrees of freedom and its design
    effect ``(SE_CR2 / SE_paired)^2``. The power is that of the t test with those df and SE
    (noncentral t); the gate's wild bootstrap has about that power when it can reach
    ``alpha`` at all (with 5 families or fewer it cannot: the power is then 0).

    For the table, the variance of a task's difference splits into a between-task part
    ``tau^2 = max(0, sd^2 - mean_i v_i)`` and a run part ``2 s^2 / r`` at r runs per side
    (``s^2`` the mean per-run variance of the tasks); the variance of the mean of k tasks is
    ``max(1, design effect) (tau^2 + 2 s^2 / r) / k``, and its df grow with k as the current
    design's do: ``(df + 1) k / n - 1`` (``k - 1`` without families), i.e. the suite is
    assumed to grow with families like the ones it has. More runs shrink only the run part,
    so some targets need more tasks whatever r is.

    Args:
        paired: The paired tasks of the pilot data (at least 2).
        mde: The change to detect, a fraction (> 0).
        alpha: One-sided level.
        families: Task id -> family, as for `decide`.
        power: Target power.

    Returns:
        The plan.

    Raises:
        StatsInputError: Fewer than 2 tasks or a bad argument.

    """
    if not (math.isfinite(mde) and mde > 0):
        raise StatsInputError(f"mde must be finite and > 0, got {mde}")
    items = sorted(paired, key=lambda p: p.task_id)
    # The t version of the gate's test has the gate's SE, df and design effect, cheaply.
    decision = decide(items, alpha=alpha, families=families, method="cr2-t", skew_correction=False)
    n = len(items)
    diffs = [p.difference for p in items]
    mean = math.fsum(diffs) / n
    sample_var = math.fsum((d - mean) ** 2 for d in diffs) / (n - 1)
    run_var = math.fsum(_run_variance(p, shrink=False) for p in items) / n
    within_now = math.fsum(_floor_variances(items)) / n
    if run_var <= 0:
        run_var = math.fsum(_run_variance(p, shrink=True) for p in items) / n
    between = max(0.0, sample_var - within_now)  # the between-task variance
    deff = max(1.0, decision.design_effect)
    runs = sorted(p.baseline.runs if k == 0 else p.candidate.runs for p in items for k in (0, 1))
    runs_now = runs[len(runs) // 2]
    per_task = (decision.df + 1) / n

    def sd_at(r: int) -> float:
        return math.sqrt(deff * (between + 2 * run_var / r))

    power_now = _power(n, decision.df, decision.standard_error * math.sqrt(n), mde, alpha)
    if decision.clusters is not None and 2.0**decision.clusters * alpha < 1:
        power_now = 0.0  # no sign pattern is rare enough for the gate to decide
    rows: list[PlanRow] = []
    for r in sorted({*_PLAN_RUNS, runs_now}):
        sd_r = sd_at(r)

        def power_at(k: int, s: float = sd_r) -> float:
            return _power(k, max(1.0, per_task * k - 1), s, mde, alpha)

        needed = _smallest_n(power_at, power)
        rows.append(
            PlanRow(runs=r, tasks=needed, total_runs=None if needed is None else needed * r * 2)
        )
    return Plan(
        mde=mde,
        alpha=alpha,
        power_target=power,
        tasks_now=n,
        runs_now=runs_now,
        power_now=power_now,
        between_task_variance=between,
        run_variance=run_var,
        design_effect=deff,
        df=decision.df,
        effective_clusters=decision.effective_clusters,
        rows=rows,
    )


# --------------------------------------------------------------------------------------------
# The whole gate


def task_families(rows: Iterable[RunRow]) -> dict[str, str]:
    """Task id -> family from rows; a task given two different families is an input error."""
    found: dict[str, str] = {}
    for row in rows:
        if not row.family:
            continue
        known = found.setdefault(row.task_id, row.family)
        if known != row.family:
            raise StatsInputError(
                f"task {row.task_id!r} has two families: {known!r} and {row.family!r}"
            )
    return found


def _missing(
    base: Mapping[str, TaskTally],
    cand: Mapping[str, TaskTally],
    scheduled: Iterable[str],
    min_runs: int,
    names: tuple[str, str],
) -> list[MissingTask]:
    out: list[MissingTask] = []
    for task_id in sorted(set(scheduled) | base.keys() | cand.keys()):
        b = base[task_id].runs if task_id in base else 0
        c = cand[task_id].runs if task_id in cand else 0
        expected = max(min_runs, b, c)
        if b == expected and c == expected:
            continue
        parts = []
        for name, got in ((names[0], b), (names[1], c)):
            if got == 0:
                parts.append(f"absent in {name!r}")
            elif got < expected:
                parts.append(f"{got} of {expected} runs in {name!r}")
        out.append(
            MissingTask(
                task_id=task_id,
                expected_runs=expected,
                baseline_runs=b,
                candidate_runs=c,
                reason=", ".join(parts),
            )
        )
    return out


def _worst_case(
    base: Mapping[str, TaskTally], cand: Mapping[str, TaskTally], missing: Sequence[MissingTask]
) -> list[PairedTask]:
    """Pad every task to its expected runs: candidate with failures, baseline with passes."""
    expected = {m.task_id: m.expected_runs for m in missing}
    out: list[PairedTask] = []
    for task_id in sorted(base.keys() | cand.keys() | expected.keys()):
        b = base.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        c = cand.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        runs = expected.get(task_id, max(b.runs, c.runs))
        bt = TaskTally(task_id=task_id, runs=runs, passes=b.passes + (runs - b.runs))
        ct = TaskTally(task_id=task_id, runs=runs, passes=c.passes)
        out.append(
            PairedTask(
                task_id=task_id,
                baseline=bt,
                candidate=ct,
                difference=(ct.passes - bt.passes) / runs,
            )
        )
    return out


def _lost_runs(
    base: Mapping[str, TaskTally], cand: Mapping[str, TaskTally], missing: Sequence[MissingTask]
) -> list[tuple[str, bool]]:
    """Every lost run as (task, is the candidate's), the most damaging first.

    A run counted adversely moves its task's difference by ``p / (r (r + 1))`` for the
    candidate (``p`` passes of ``r`` runs; nothing when it never passed) and by
    ``(r - q) / (r (r + 1))`` for the baseline (``q`` passes; nothing when it always passed).
    That move shrinks with every run already added to the same task and side, so taking the
    largest move next gives, for every count, the largest drop of the mean change any choice
    of that many runs could give. A side with no run at all yet comes first (its first run
    pairs the task). Ties keep task order, the candidate's first.
    """
    heap: list[tuple[float, int, str, bool, int, int, int]] = []
    for order, (m, side) in enumerate((m, side) for side in (True, False) for m in missing):
        have = (cand if side else base).get(m.task_id)
        runs, passes = (have.runs, have.passes) if have else (0, 0)
        if (left := m.expected_runs - runs) > 0:
            move = _move(runs, passes, side)
            heapq.heappush(heap, (-move, order, m.task_id, side, runs, passes, left))
    out: list[tuple[str, bool]] = []
    while heap:
        _, order, task_id, side, runs, passes, left = heapq.heappop(heap)
        out.append((task_id, side))
        runs, passes = runs + 1, passes + (0 if side else 1)  # a failure, or a pass
        if left > 1:
            move = _move(runs, passes, side)
            heapq.heappush(heap, (-move, order, task_id, side, runs, passes, left - 1))
    return out


def _move(runs: int, passes: int, candidate: bool) -> float:
    """How far one more adverse run moves a task's difference (`_lost_runs`)."""
    if runs == 0:
        return math.inf
    return (passes if candidate else runs - passes) / (runs * (runs + 1))


def _padded(
    base: Mapping[str, TaskTally],
    cand: Mapping[str, TaskTally],
    lost: Sequence[tuple[str, bool]],
) -> list[PairedTask]:
    """The observed tallies plus ``lost`` runs, adversely: candidate failures, baseline passes."""
    add_c: dict[str, int] = {}
    add_b: dict[str, int] = {}
    for task_id, is_candidate in lost:
        target = add_c if is_candidate else add_b
        target[task_id] = target.get(task_id, 0) + 1
    out: list[PairedTask] = []
    for task_id in sorted(base.keys() | cand.keys() | add_c.keys() | add_b.keys()):
        b = base.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        c = cand.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        bt = TaskTally(
            task_id=task_id,
            runs=b.runs + add_b.get(task_id, 0),
            passes=b.passes + add_b.get(task_id, 0),
        )
        ct = TaskTally(task_id=task_id, runs=c.runs + add_c.get(task_id, 0), passes=c.passes)
        if bt.runs and ct.runs:
            out.append(
                PairedTask(
                    task_id=task_id,
                    baseline=bt,
                    candidate=ct,
                    difference=ct.passes / ct.runs - bt.passes / bt.runs,
                )
            )
    return out


def _tipping_point(
    decide_at: Callable[[list[PairedTask]], bool],
    observed: bool,
    base: Mapping[str, TaskTally],
    cand: Mapping[str, TaskTally],
    lost: Sequence[tuple[str, bool]],
) -> int | None:
    """How many lost runs, counted adversely most damaging first (`_lost_runs`), change it.

    None when even all of them do not (the worst case decides as the observed runs do).
    Bisection: along that order each run lowers the mean change, and the outcome is taken to
    follow the mean. The spread moves too, so another choice of runs can occasionally change
    the outcome with fewer: the count is sufficient, not a proven minimum.
    """
    if decide_at(_padded(base, cand, lost)) == observed:
        return None
    lo, hi = 0, len(lost)  # outcome unchanged at lo, changed at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if decide_at(_padded(base, cand, lost[:mid])) == observed:
            lo = mid
        else:
            hi = mid
    return hi


def _missing_analysis(
    decide_on: Callable[[Sequence[PairedTask]], Decision],
    observed: Decision,
    gate: GateName,
    margin: float | None,
    base: Mapping[str, TaskTally],
    cand: Mapping[str, TaskTally],
    missing: Sequence[MissingTask],
) -> tuple[Decision | None, bool | None, list[tuple[str, bool]], int | None]:
    """The worst case, whether the gate passes on it, the lost runs and the tipping point."""
    if not missing:
        return None, None, [], None
    worst = decide_on(_worst_case(base, cand, missing))
    lost = _lost_runs(base, cand, missing)
    tipping: int | None = None
    if gate != "none":
        tipping = _tipping_point(
            lambda items: gate_passes(decide_on(items), gate, margin),
            gate_passes(observed, gate, margin),
            base,
            cand,
            lost,
        )
    return worst, gate_passes(worst, gate, margin), lost, tipping


def _tallies(
    rows: Sequence[RunRow], baseline: str, candidate: str, scheduled: Iterable[str], min_runs: int
) -> tuple[dict[str, TaskTally], dict[str, TaskTally], list[MissingTask], list[PairedTask]]:
    """Each side's tallies, the tasks short of runs and every task paired (none dropped)."""
    base = {t.task_id: t for t in tally_runs(rows, baseline)}
    cand = {t.task_id: t for t in tally_runs(rows, candidate)}
    missing = _missing(base, cand, scheduled, min_runs, (baseline, candidate))
    paired, _ = pair_tallies(base.values(), cand.values(), min_runs=1)
    return base, cand, missing, paired


def _check_assess(alpha: float, min_runs: int, gate: GateName, margin: float | None) -> None:
    _check_alpha(alpha)
    if min_runs < 1:
        raise StatsInputError(f"min_runs must be at least 1, got {min_runs}")
    if gate == "non-inferior" and (margin is None or not (math.isfinite(margin) and margin > 0)):
        raise StatsInputError("the non-inferior gate needs a positive margin")


def assess(
    rows: Iterable[RunRow],
    baseline: str,
    candidate: str,
    *,
    gate: GateName = "none",
    alpha: float = _DEFAULT_ALPHA,
    margin: float | None = None,
    min_runs: int = 5,
    scheduled: Iterable[str] = (),
    allow_missing: bool = False,
    use_clusters: bool = True,
    mde: float | None = None,
    method: Method = "webb",
    skew_correction: bool = True,
    seed: int = DEFAULT_SEED,
) -> tuple[Comparison, GateResult]:
    """Run the ``compare`` gate on run rows: the descriptive comparison and the decision.

    Steps:

    1. Every task with at least one run on both sides is paired (none is dropped for being
       short: dropping a task because it lost runs biases the result).
    2. A task is *missing data* when either side has fewer runs than expected: the larger of
       ``min_runs``, the task's runs on either side, and (for run directories) the samples the
       schedule asked for; tasks in ``scheduled`` or on one side only are included. Missing
       data fails every gate except ``none`` unless ``allow_missing``.
    3. `decide` on the paired tasks (clustered over families when rows carry them and
       ``use_clusters``), and, when something is missing, on the worst case.
    4. The gate (`gate_passes`), per-task changes with a Holm correction, flips, the plan.

    Args:
        rows: Run rows (with optional families).
        baseline: Baseline config.
        candidate: Candidate config.
        gate: The gate to apply.
        alpha: One-sided level of the gate.
        margin: Non-inferiority margin as a fraction (required for ``non-inferior``).
        min_runs: Runs expected per task and side, at least 1.
        scheduled: Task ids that were scheduled (run directories); absent ones are missing.
        allow_missing: Decide on the observed runs even when some are missing.
        use_clusters: Use families when present (``--no-clusters`` turns this off).
        mde: Change to plan for (a fraction), or None for no plan.
        method: The inference of `decide` (``webb``, what ``compare`` uses; the others
            are there to be measured against it).
        skew_correction: The Edgeworth correction of `decide`.
        seed: Seed of the random sign patterns (used only above 12 clusters).

    Returns:
        The descriptive comparison (band with t at every n at the level ``alpha``) and the
        gate result.

    Raises:
        StatsInputError: Bad configs, duplicate runs, fewer than 2 paired tasks, a task with
            two families, a bad alpha or margin.

    """
    from scipy import special

    _check_assess(alpha, min_runs, gate, margin)
    row_list = list(rows)
    z = float(special.ndtri(1 - alpha))  # the band's level is the gate's
    comparison = compare_results(row_list, baseline, candidate, min_runs=1, z=z, t_always=True)
    all_families = task_families(row_list)
    families = all_families if use_clusters else {}
    base, cand, missing, paired = _tallies(row_list, baseline, candidate, scheduled, min_runs)
    how = {"method": method, "skew_correction": skew_correction, "seed": seed}

    def decide_on(items: Sequence[PairedTask]) -> Decision:
        return decide(items, alpha=alpha, families=families, **how)  # type: ignore[arg-type]

    observed = decide_on(paired)
    worst, worst_passed, lost, tipping = _missing_analysis(
        decide_on, observed, gate, margin, base, cand, missing
    )
    passed, reason = _gate_outcome(observed, gate, margin, missing, allow_missing=allow_missing)
    return comparison, GateResult(
        gate=gate,
        margin=margin if gate == "non-inferior" else None,
        alpha=alpha,
        sidedness="one-sided",
        passed=passed,
        reason=reason,
        allow_missing=allow_missing,
        missing=missing,
        expected_runs=min_runs,
        observed=observed,
        worst_case=worst,
        worst_case_passed=worst_passed,
        families_used=observed.clusters is not None,
        cluster_note=_cluster_note(observed, families, all_families, use_clusters=use_clusters),
        warnings=_reliability_warnings(observed, paired, families),
        lost_runs=len(lost),
        tipping_point=tipping,
        min_tasks=min_tasks(margin, alpha) if gate == "non-inferior" and margin else None,
        correction="holm",
        significant_changes=[c for c in _task_changes(paired, alpha) if c.significant],
        flips=flipped_tasks(paired),
        plan=plan_power(paired, mde, alpha=alpha, families=families) if mde is not None else None,
    )


def _cluster_note(
    observed: Decision,
    families: Mapping[str, str],
    all_families: Mapping[str, str],
    *,
    use_clusters: bool,
) -> str:
    """How families were used, in words, for the report."""
    if not use_clusters and all_families:
        return "families present but ignored (--no-clusters): tasks treated as independent"
    if observed.clusters is not None:
        return (
            f"cluster-robust over {observed.clusters} families (CR2 standard error, "
            f"Bell-McCaffrey df {observed.df:.1f}, effective clusters "
            f"{observed.effective_clusters:.1f}; families resampled whole)"
        )
    if families:
        return "only one family: clustering impossible, tasks treated as independent"
    return "no families in the data: tasks treated as independent"


def _reliability_warnings(
    observed: Decision, paired: Sequence[PairedTask], families: Mapping[str, str]
) -> list[str]:
    """Warnings when few or dominant families leave no test reliable (or none possible)."""
    units = "families" if observed.clusters is not None else "independent tasks"
    g = observed.clusters if observed.clusters is not None else observed.tasks
    if observed.smallest_p > observed.alpha:
        return [
            f"only {g} {units}: the smallest p-value any pattern of the bootstrap's weights "
            f"can give is {observed.smallest_p * 100:.2g}%, above the one-sided "
            f"{observed.alpha * 100:g}%, "
            "so no test that holds its level whatever each of them does can decide here "
            "(improved and non-inferior cannot pass, no-regression cannot fail)"
            + (
                "; more families, or --no-clusters if the families truly share no effect, are "
                "the only ways to a decision"
                if observed.clusters is not None
                else "; more tasks are the only way to a decision"
            )
        ]
    if observed.clusters is None:
        return []
    sizes: dict[str, int] = {}
    for p in paired:
        label = families.get(p.task_id, "") or p.task_id
        sizes[label] = sizes.get(label, 0) + 1
    largest = max(sizes.values())
    eff = observed.effective_clusters
    if eff < _FEW_CLUSTERS:
        return [
            f"few or dominant families: effective number of clusters {eff:.1f} of {g} "
            f"(largest family {largest} of {len(paired)} tasks); the bootstrap holds its level "
            "only as far as each family's change is symmetric, and no test is reliable beyond "
            "that here"
        ]
    return []


def _gate_outcome(
    observed: Decision,
    gate: GateName,
    margin: float | None,
    missing: Sequence[MissingTask],
    *,
    allow_missing: bool,
) -> tuple[bool, str]:
    """Whether the gate passed and why: missing data fails it unless allowed."""
    decided = gate_passes(observed, gate, margin)
    if gate == "none":
        return True, "no gate"
    if missing and not allow_missing:
        return False, (
            f"{len(missing)} task(s) short of runs or missing on one side; pass --allow-missing "
            "to decide on the observed runs"
        )
    return decided, _reason(gate, observed, margin, decided)


def _reason(gate: GateName, d: Decision, margin: float | None, passed: bool) -> str:
    level = f"{(1 - d.alpha) * 100:g}%"
    lower, upper = f"{d.lower * 100:+.1f}", f"{d.upper * 100:+.1f}"
    if gate == "improved":
        return f"the one-sided {level} lower bound of the change is {lower} points: " + (
            "above 0" if passed else "not above 0"
        )
    if gate == "no-regression":
        return f"the one-sided {level} upper bound of the change is {upper} points: " + (
            "not below 0" if passed else "below 0, a significant drop"
        )
    assert margin is not None
    bound = f"the one-sided {level} upper bound of the drop is {-d.lower * 100:.1f} points: "
    if -d.lower >= margin:
        return bound + f"not below the margin of {margin * 100:g} points"
    needed = min_tasks(margin, d.alpha)
    if d.tasks < needed:
        # Rounded up so that the margin printed is one the gate accepts at this size.
        wider = math.ceil(min_margin(d.tasks, d.alpha) * 1000) / 10
        return bound + (
            f"below the margin of {margin * 100:g} points, but {d.tasks} tasks are too few to "
            f"show it: a class of tasks making up {margin * 100:g}% of the population, all "
            f"broken, is absent from {d.tasks} tasks "
            f"{miss_probability(margin, d.tasks) * 100:.1f}% of the time (above "
            f"{d.alpha * 100:g}%); {needed} tasks, or a margin of at least {wider:g} points, "
            "can show it"
        )
    return bound + f"below the margin of {margin * 100:g} points"
