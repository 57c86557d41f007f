"""The estimators behind `harness_world.stats`.

pass^k and pass@k, proportion intervals, clustered standard errors, the paired cluster
bootstrap, noise bands, task classes and flips, McNemar. The conventions are stated in the
package docstring.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Final, Literal

import msgspec

from harness_world.errors import HarnessWorldError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_Z",
    "SMALL_SAMPLE_TASKS",
    "BootstrapInterval",
    "ClassCounts",
    "ClusteredMean",
    "Comparison",
    "ExcludedTask",
    "Flip",
    "McNemarResult",
    "Multiplier",
    "NoiseBand",
    "PairedTask",
    "PassKSummary",
    "ProportionInterval",
    "RunRow",
    "StatsInputError",
    "TaskClass",
    "TaskPassK",
    "TaskTally",
    "TasksNeeded",
    "Verdict",
    "band_multiplier",
    "classify",
    "clopper_pearson_interval",
    "clustered_standard_error",
    "compare_results",
    "count_classes",
    "flipped_tasks",
    "mcnemar_midp",
    "noise_band",
    "pair_tallies",
    "paired_cluster_bootstrap",
    "pass_at_k",
    "pass_at_k_exact",
    "pass_hat_k",
    "pass_hat_k_exact",
    "pass_k_summary",
    "regressions",
    "tally_runs",
    "tasks_needed",
    "wilson_interval",
]

DEFAULT_ALPHA: Final = 0.025
"""The default one-sided level of every ``compare`` gate (the old two-sided 95% band)."""

DEFAULT_Z: Final = 1.96
"""The default band multiplier for 30 or more paired tasks (two-sided 95% under the normal)."""

SMALL_SAMPLE_TASKS: Final = 30
"""Below this many paired tasks the band uses a Student t multiplier and callers should warn."""

TaskClass = Literal["solid", "flaky", "broken"]
"""How a task behaved over its runs: passed every run, some runs, or none."""

Verdict = Literal["above", "below", "inside"]
"""Where the mean difference lies relative to the noise band."""


class StatsInputError(HarnessWorldError, ValueError):
    """The input cannot support the requested statistic (too few tasks, bad counts, ...)."""


# --------------------------------------------------------------------------------------------
# Records and per-task tallies


class RunRow(msgspec.Struct, frozen=True, kw_only=True):
    """One run of one task under one configuration: a row of the results CSV.

    Attributes:
        task_id: The task's identifier.
        run_index: Which repetition this is (a non-negative integer, unique per task and config).
        config: The configuration's name (e.g. ``main`` or ``pr``).
        passed: Whether the run passed.
        family: The task's family (a cluster of related tasks), or ``""`` when none is known.
            The gate in `compare` uses it for a cluster-robust standard error.
        fingerprint: What made the run (``report --csv`` writes the run's revision, the
            models that answered and the build), or ``""``; no statistic reads it.

    """

    task_id: str
    run_index: int
    config: str
    passed: bool
    family: str = ""
    fingerprint: str = ""


class TaskTally(msgspec.Struct, frozen=True, kw_only=True):
    """How many runs a task had under one configuration and how many passed.

    Attributes:
        task_id: The task's identifier.
        runs: Number of runs (n).
        passes: Number of passing runs (c), ``0 <= passes <= runs``.

    """

    task_id: str
    runs: int
    passes: int

    @property
    def pass_rate(self) -> float:
        """``passes / runs`` (correctly rounded); raises `StatsInputError` when runs is 0."""
        if self.runs <= 0:
            raise StatsInputError(f"task {self.task_id!r} has no runs, so it has no pass rate")
        return self.passes / self.runs


class ExcludedTask(msgspec.Struct, frozen=True, kw_only=True):
    """A task left out of a computation, and why.

    Attributes:
        task_id: The task's identifier.
        reason: Human-readable reason (e.g. ``only in baseline 'main'``).

    """

    task_id: str
    reason: str


def tally_runs(rows: Iterable[RunRow], config: str) -> list[TaskTally]:
    """Count runs and passes per task for one configuration.

    Args:
        rows: Run rows for any number of configurations; rows of other configs are ignored.
        config: The configuration to tally.

    Returns:
        One tally per task that has at least one row for ``config``, sorted by task id.

    Raises:
        StatsInputError: Two rows share the same (task, run index, config): counting both would
            count one run twice.

    """
    seen: set[tuple[str, int]] = set()
    runs: dict[str, int] = defaultdict(int)
    passes: dict[str, int] = defaultdict(int)
    for row in rows:
        if row.config != config:
            continue
        key = (row.task_id, row.run_index)
        if key in seen:
            raise StatsInputError(
                f"duplicate run: task {row.task_id!r}, run {row.run_index}, config {config!r}"
            )
        seen.add(key)
        runs[row.task_id] += 1
        passes[row.task_id] += int(row.passed)
    return [TaskTally(task_id=t, runs=runs[t], passes=passes[t]) for t in sorted(runs)]


def _check_tally(tally: TaskTally) -> None:
    if tally.runs < 0 or not 0 <= tally.passes <= max(tally.runs, 0):
        raise StatsInputError(
            f"task {tally.task_id!r}: need 0 <= passes <= runs, got {tally.passes}/{tally.runs}"
        )


# --------------------------------------------------------------------------------------------
# pass^k and pass@k


def _check_nck(n: int, c: int, k: int) -> None:
    if k < 1:
        raise StatsInputError(f"k must be at least 1, got {k}")
    if not 0 <= c <= n:
        raise StatsInputError(f"need 0 <= successes <= trials, got {c} of {n}")
    if n < k:
        raise StatsInputError(f"pass^k needs at least k trials: n={n} < k={k}")


def pass_hat_k_exact(n: int, c: int, k: int) -> Fraction:
    """Exact unbiased estimate of pass^k, the chance that k fresh runs all pass.

    Formula: ``C(c, k) / C(n, k)``, computed as the ratio of falling factorials
    ``c(c-1)...(c-k+1) / n(n-1)...(n-k+1)`` in integer arithmetic (the ``k!`` cancels), so it is
    exact for any n and never overflows. ``C(c, k) = 0`` when ``c < k``.

    Args:
        n: Trials (runs) of the task, ``n >= k``.
        c: Successful trials, ``0 <= c <= n``.
        k: Size of the hypothetical batch of runs, ``k >= 1``.

    Returns:
        The estimate as a reduced fraction: 0 when ``c < k``, 1 when ``c == n``.

    Raises:
        StatsInputError: ``k < 1``, ``c`` outside ``[0, n]``, or ``n < k`` (too few trials to
            estimate the statistic; callers averaging over tasks exclude such tasks instead).

    """
    _check_nck(n, c, k)
    return Fraction(math.perm(c, k), math.perm(n, k))


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """Exact unbiased estimate of pass@k, the chance that at least one of k fresh runs passes.

    Formula: ``1 - C(n - c, k) / C(n, k)``, with the ratio computed as falling factorials in
    integer arithmetic like `pass_hat_k_exact`. It is 1 whenever fewer than k runs failed.

    Args:
        n: Trials, ``n >= k``.
        c: Successful trials, ``0 <= c <= n``.
        k: Batch size, ``k >= 1``.

    Returns:
        The estimate as a reduced fraction (0 when ``c == 0``).

    Raises:
        StatsInputError: Same conditions as `pass_hat_k_exact`.

    """
    _check_nck(n, c, k)
    return 1 - Fraction(math.perm(n - c, k), math.perm(n, k))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """`pass_hat_k_exact` as the nearest float (``C(c, k) / C(n, k)``; same edge cases)."""
    _check_nck(n, c, k)
    # int / int is correctly rounded in Python however large the operands.
    return math.perm(c, k) / math.perm(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """`pass_at_k_exact` as the nearest float (``1 - C(n - c, k) / C(n, k)``; same edge cases)."""
    return float(pass_at_k_exact(n, c, k))


class TaskPassK(msgspec.Struct, frozen=True, kw_only=True):
    """Both estimators for one task.

    Attributes:
        task_id: The task's identifier.
        runs: Its number of runs n.
        passes: Its number of passing runs c.
        pass_hat_k: ``C(c, k) / C(n, k)``.
        pass_at_k: ``1 - C(n - c, k) / C(n, k)``.
        weight: The weight the task carried in the macro-average (1.0 when none declared).

    """

    task_id: str
    runs: int
    passes: int
    pass_hat_k: float
    pass_at_k: float
    weight: float


class PassKSummary(msgspec.Struct, frozen=True, kw_only=True):
    """pass^k and pass@k macro-averaged over tasks.

    Attributes:
        k: The batch size.
        tasks: How many tasks were averaged.
        pass_hat_k: Weighted mean of the per-task pass^k.
        pass_at_k: Weighted mean of the per-task pass@k.
        weighted: Whether the caller declared weights (otherwise every task weighs 1).
        per_task: The per-task estimates, sorted by task id.
        excluded: Tasks with fewer than k runs, which were not averaged.

    """

    k: int
    tasks: int
    pass_hat_k: float
    pass_at_k: float
    weighted: bool
    per_task: list[TaskPassK]
    excluded: list[ExcludedTask]


def pass_k_summary(
    tallies: Iterable[TaskTally], k: int, *, weights: Mapping[str, float] | None = None
) -> PassKSummary:
    """Per-task pass^k and pass@k, then their macro-average over tasks.

    Each task uses its own n. The average is ``sum_t w_t * est_t / sum_t w_t`` over the included
    tasks, computed exactly (weights are converted to exact fractions) and rounded once, so it
    does not depend on task order. Never raise the pooled pass rate to the k-th power instead:
    tasks differ in difficulty and that product is not an estimate of pass^k.

    Edge cases:
        * A task with ``n < k`` cannot be estimated; it is left out and listed in ``excluded``
          (never silently dropped). Weights declared for such tasks are ignored.
        * With ``weights``, every included task needs a finite weight ``>= 0``, the included
          weights must sum to more than 0, and every weighted name must be a task in
          ``tallies`` (a misspelt name is an error, not a zero).

    Args:
        tallies: One tally per task (task ids must be unique).
        k: Batch size, ``k >= 1``.
        weights: Optional declared weight per task id.

    Returns:
        The summary, per-task rows sorted by task id.

    Raises:
        StatsInputError: ``k < 1``, a repeated task id, an invalid tally or weight, or no task
            with at least k runs.

    """
    if k < 1:
        raise StatsInputError(f"k must be at least 1, got {k}")
    by_id = _tallies_by_id(tallies)
    if weights is not None:
        unknown = sorted(set(weights) - set(by_id))
        if unknown:
            raise StatsInputError(f"weights name unknown task(s): {', '.join(unknown)}")
    included, excluded = _split_by_runs(by_id, k)
    if not included:
        raise StatsInputError(f"no task has at least k={k} runs")
    exact_weights = _exact_weights(included, weights)
    total = sum(exact_weights, Fraction(0))
    if total == 0:
        raise StatsInputError("the declared weights of the included tasks sum to 0")
    hat_sum = Fraction(0)
    at_sum = Fraction(0)
    per_task: list[TaskPassK] = []
    for tally, w in zip(included, exact_weights, strict=True):
        hat = pass_hat_k_exact(tally.runs, tally.passes, k)
        at = pass_at_k_exact(tally.runs, tally.passes, k)
        hat_sum += w * hat
        at_sum += w * at
        per_task.append(
            TaskPassK(
                task_id=tally.task_id,
                runs=tally.runs,
                passes=tally.passes,
                pass_hat_k=float(hat),
                pass_at_k=float(at),
                weight=float(w),
            )
        )
    return PassKSummary(
        k=k,
        tasks=len(included),
        pass_hat_k=float(hat_sum / total),
        pass_at_k=float(at_sum / total),
        weighted=weights is not None,
        per_task=per_task,
        excluded=excluded,
    )


def _tallies_by_id(tallies: Iterable[TaskTally]) -> dict[str, TaskTally]:
    """The tallies by task id, each checked; a repeated task id is an error."""
    by_id: dict[str, TaskTally] = {}
    for tally in tallies:
        _check_tally(tally)
        if tally.task_id in by_id:
            raise StatsInputError(f"task {tally.task_id!r} appears twice")
        by_id[tally.task_id] = tally
    return by_id


def _split_by_runs(
    by_id: Mapping[str, TaskTally], k: int
) -> tuple[list[TaskTally], list[ExcludedTask]]:
    """Tasks with at least k runs, and the others with their reason, both by task id."""
    included: list[TaskTally] = []
    excluded: list[ExcludedTask] = []
    for task_id in sorted(by_id):
        tally = by_id[task_id]
        if tally.runs < k:
            excluded.append(
                ExcludedTask(task_id=task_id, reason=f"{tally.runs} run(s), fewer than k={k}")
            )
        else:
            included.append(tally)
    return included, excluded


def _exact_weights(
    included: list[TaskTally], weights: Mapping[str, float] | None
) -> list[Fraction]:
    """Each included task's weight as an exact fraction (1 each without declared weights)."""
    exact_weights: list[Fraction] = []
    for tally in included:
        if weights is None:
            exact_weights.append(Fraction(1))
            continue
        if tally.task_id not in weights:
            raise StatsInputError(f"no weight declared for task {tally.task_id!r}")
        declared = weights[tally.task_id]
        if not math.isfinite(declared) or declared < 0:
            raise StatsInputError(f"weight of task {tally.task_id!r} must be finite and >= 0")
        exact_weights.append(Fraction(declared))
    return exact_weights


# --------------------------------------------------------------------------------------------
# Intervals for one proportion


class ProportionInterval(msgspec.Struct, frozen=True, kw_only=True):
    """A two-sided confidence interval for a binomial proportion.

    Attributes:
        method: ``wilson`` or ``clopper-pearson``.
        successes: x.
        trials: n.
        estimate: ``x / n``.
        low: Lower bound, in [0, 1].
        high: Upper bound, in [0, 1].
        confidence: Nominal two-sided coverage, e.g. 0.95.

    """

    method: Literal["wilson", "clopper-pearson"]
    successes: int
    trials: int
    estimate: float
    low: float
    high: float
    confidence: float


def _check_proportion(successes: int, trials: int, confidence: float) -> None:
    if trials < 1:
        raise StatsInputError(f"a proportion needs at least 1 trial, got {trials}")
    if not 0 <= successes <= trials:
        raise StatsInputError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if not 0 < confidence < 1:
        raise StatsInputError(f"confidence must be strictly between 0 and 1, got {confidence}")


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> ProportionInterval:
    """Wilson score interval for a proportion.

    With ``p = x / n`` and ``z`` the normal quantile at ``1 - (1 - confidence) / 2``::

        centre = (p + z^2 / (2n)) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))
        [centre - half, centre + half]

    Edge cases: at ``x = 0`` the lower bound is exactly 0 and at ``x = n`` the upper bound is
    exactly 1 (the formula gives these up to rounding; they are set exactly). The interval always
    contains ``p`` and stays inside [0, 1]. Unlike the Wald interval it is never empty at 0 or n.

    Args:
        successes: x, ``0 <= x <= n``.
        trials: n, ``n >= 1``.
        confidence: Two-sided coverage, strictly between 0 and 1.

    Returns:
        The interval.

    Raises:
        StatsInputError: ``n < 1``, x outside [0, n], or confidence outside (0, 1).

    """
    from scipy import special

    _check_proportion(successes, trials, confidence)
    n = trials
    p = successes / n
    z = float(special.ndtri(1 - (1 - confidence) / 2))
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if successes == 0 else min(p, max(0.0, centre - half))
    high = 1.0 if successes == n else max(p, min(1.0, centre + half))
    return ProportionInterval(
        method="wilson",
        successes=successes,
        trials=trials,
        estimate=p,
        low=low,
        high=high,
        confidence=confidence,
    )


def clopper_pearson_interval(
    successes: int, trials: int, confidence: float = 0.95
) -> ProportionInterval:
    """Exact (Clopper-Pearson) interval for a proportion, from beta quantiles.

    With ``alpha = 1 - confidence``::

        low  = BetaInv(alpha / 2;     x,     n - x + 1)   (0 when x = 0)
        high = BetaInv(1 - alpha / 2; x + 1, n - x)       (1 when x = n)

    It inverts two one-sided binomial tests, so its coverage is at least the nominal level
    (it is conservative, wider than Wilson).

    Args:
        successes: x, ``0 <= x <= n``.
        trials: n, ``n >= 1``.
        confidence: Two-sided coverage, strictly between 0 and 1.

    Returns:
        The interval.

    Raises:
        StatsInputError: ``n < 1``, x outside [0, n], or confidence outside (0, 1).

    """
    from scipy import special

    _check_proportion(successes, trials, confidence)
    x, n = successes, trials
    alpha = 1 - confidence
    low = 0.0 if x == 0 else float(special.betaincinv(x, n - x + 1, alpha / 2))
    high = 1.0 if x == n else float(special.betaincinv(x + 1, n - x, 1 - alpha / 2))
    p = x / n
    return ProportionInterval(
        method="clopper-pearson",
        successes=x,
        trials=n,
        estimate=p,
        low=min(low, p),
        high=max(high, p),
        confidence=confidence,
    )


# --------------------------------------------------------------------------------------------
# Clustered standard error and the cluster bootstrap


class ClusteredMean(msgspec.Struct, frozen=True, kw_only=True):
    """A mean with a standard error that allows correlation inside clusters (task families).

    Attributes:
        mean: The plain mean of the values.
        standard_error: The cluster-robust standard error.
        naive_standard_error: The same formula with every value its own cluster,
            ``sqrt(sum residual^2) / n``; the ratio of the two shows how much clustering costs.
        n: Number of values.
        clusters: Number of distinct clusters G.
        small_sample_correction: Whether the variance was multiplied by ``G / (G - 1)``.

    """

    mean: float
    standard_error: float
    naive_standard_error: float
    n: int
    clusters: int
    small_sample_correction: bool


def clustered_standard_error(
    values: Sequence[float],
    clusters: Sequence[str],
    *,
    small_sample_correction: bool = False,
) -> ClusteredMean:
    """Clustered standard error of a mean (Miller 2024, "Adding Error Bars to Evals").

    With residuals ``e_i = y_i - mean(y)`` and clusters ``g``::

        SE = sqrt( sum_g ( sum_{i in g} e_i )^2 ) / n

    This is Miller's plug-in form: it equals the CLT standard error (variance with divisor n)
    plus the within-cluster cross terms. It is the default. With
    ``small_sample_correction=True`` the variance is multiplied by ``G / (G - 1)`` (the usual
    CR1-style factor for G clusters), which matters when there are few families.

    Edge cases:
        * If every value is its own cluster, SE is ``sqrt(sum e_i^2) / n``: the naive standard
          error with divisor n (not n - 1).
        * If there is a single cluster, the residuals sum to 0 and the plug-in SE is 0, which
          says nothing; the corrected form refuses (G - 1 = 0).
        * Values must be finite.

    Args:
        values: One value per item (e.g. a per-task pass rate or difference).
        clusters: The cluster (family) of each item, same length as ``values``.
        small_sample_correction: Apply the ``G / (G - 1)`` factor.

    Returns:
        Mean and both standard errors.

    Raises:
        StatsInputError: Lengths differ, fewer than 2 values, a non-finite value, or fewer than
            2 clusters with the correction requested.

    """
    if len(values) != len(clusters):
        raise StatsInputError(f"{len(values)} values but {len(clusters)} cluster labels")
    n = len(values)
    if n < 2:
        raise StatsInputError(f"a standard error needs at least 2 values, got {n}")
    if not all(math.isfinite(v) for v in values):
        raise StatsInputError("values must be finite")
    items = sorted(zip(clusters, values, strict=True))
    mean = math.fsum(v for _, v in items) / n
    residual_sums: dict[str, list[float]] = defaultdict(list)
    for g, v in items:
        residual_sums[g].append(v - mean)
    g_count = len(residual_sums)
    if small_sample_correction and g_count < 2:
        raise StatsInputError("the small-sample correction needs at least 2 clusters")
    between = math.fsum(math.fsum(r) ** 2 for r in residual_sums.values())
    naive = math.fsum((v - mean) ** 2 for _, v in items)
    if small_sample_correction:
        between *= g_count / (g_count - 1)
    return ClusteredMean(
        mean=mean,
        standard_error=math.sqrt(between) / n,
        naive_standard_error=math.sqrt(naive) / n,
        n=n,
        clusters=g_count,
        small_sample_correction=small_sample_correction,
    )


class BootstrapInterval(msgspec.Struct, frozen=True, kw_only=True):
    """A bootstrap interval for a mean paired difference, and how it was obtained.

    Attributes:
        estimate: The observed mean difference (candidate - baseline) over tasks.
        low: Lower bound.
        high: Upper bound.
        confidence: Nominal two-sided coverage.
        method: ``bca`` or ``percentile`` (the fallback).
        fallback_reason: Why BCa was not used, or null when it was.
        bias_correction: BCa's z0 when computed, else null.
        acceleration: BCa's a when computed, else null.
        resamples: Number of bootstrap resamples B.
        seed: The seed of the random generator.
        tasks: Number of paired tasks.
        clusters: Number of families resampled.

    """

    estimate: float
    low: float
    high: float
    confidence: float
    method: Literal["bca", "percentile"]
    fallback_reason: str | None
    bias_correction: float | None
    acceleration: float | None
    resamples: int
    seed: int
    tasks: int
    clusters: int


def _check_bootstrap_inputs(
    baseline: Sequence[float],
    candidate: Sequence[float],
    families: Sequence[str],
    resamples: int,
    confidence: float,
) -> None:
    """Refuse what `paired_cluster_bootstrap` cannot use (see its Raises)."""
    if not len(baseline) == len(candidate) == len(families):
        raise StatsInputError(
            f"lengths differ: {len(baseline)} baseline, {len(candidate)} candidate, "
            f"{len(families)} family labels"
        )
    n = len(baseline)
    if n < 2:
        raise StatsInputError(f"fewer than 2 paired tasks ({n})")
    if resamples < 100:
        raise StatsInputError(f"resamples must be at least 100, got {resamples}")
    if not 0 < confidence < 1:
        raise StatsInputError(f"confidence must be strictly between 0 and 1, got {confidence}")
    if not all(math.isfinite(v) for v in (*baseline, *candidate)):
        raise StatsInputError("values must be finite")


def paired_cluster_bootstrap(
    baseline: Sequence[float],
    candidate: Sequence[float],
    families: Sequence[str],
    *,
    seed: int,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> BootstrapInterval:
    """Seeded paired cluster bootstrap of the mean difference, BCa with a percentile fallback.

    Item i is a task with a baseline value ``b_i``, a candidate value ``c_i`` and a family.
    The statistic is ``theta = sum_i (c_i - b_i) / n``. Pairing is kept by resampling
    differences, and correlation inside a family is kept by resampling whole families: each of
    the B resamples draws G families with replacement and computes
    ``sum of their differences / number of their tasks``.

    BCa (Efron 1987) adjusts the percentile levels::

        z0 = Phi^-1( (#{theta_b < theta} + #{theta_b == theta} / 2) / B )
        a  = sum_g (m - theta_(g))^3 / (6 * (sum_g (m - theta_(g))^2)^(3/2))
        level(q) = Phi( z0 + (z0 + z_q) / (1 - a (z0 + z_q)) ),  q in {alpha/2, 1 - alpha/2}

    where ``theta_(g)`` is the leave-one-family-out jackknife estimate and m their mean.
    Ties count one half (differences of pass rates are discrete, so ties are common).

    The percentile interval (the ``alpha/2`` and ``1 - alpha/2`` quantiles of the resamples) is
    used instead, and ``fallback_reason`` says why, when BCa is degenerate: every resample is
    equal (e.g. all differences are equal), z0 is infinite (no resample on one side of theta),
    the jackknife values are all equal (acceleration undefined), or the adjusted levels are not
    finite or ``1 - a (z0 + z_q) <= 0``.

    Families, and tasks within a family, are put in a canonical sorted order before
    resampling, so the result depends only on the multiset of tasks and on the seed.

    Args:
        baseline: Baseline value per task (e.g. pass rate).
        candidate: Candidate value per task, paired with ``baseline`` by position.
        families: Family label per task.
        seed: Seed for `numpy.random.default_rng`; the same inputs and seed give the same
            interval.
        resamples: B, at least 100.
        confidence: Two-sided coverage, strictly between 0 and 1.

    Returns:
        The interval and the method used.

    Raises:
        StatsInputError: Lengths differ, fewer than 2 paired tasks, fewer than 2 families,
            a non-finite value, ``resamples < 100``, or confidence outside (0, 1).

    """
    import numpy as np

    _check_bootstrap_inputs(baseline, candidate, families, resamples, confidence)
    n = len(baseline)
    items = sorted((f, c - b) for f, b, c in zip(families, baseline, candidate, strict=True))
    grouped: dict[str, list[float]] = defaultdict(list)
    for f, d in items:
        grouped[f].append(d)
    g_count = len(grouped)
    if g_count < 2:
        raise StatsInputError(f"a cluster bootstrap needs at least 2 families, got {g_count}")
    sums = np.array([math.fsum(ds) for ds in grouped.values()])
    counts = np.array([len(ds) for ds in grouped.values()], dtype=np.float64)
    total = math.fsum(d for _, d in items)
    theta = total / n

    rng = np.random.default_rng(seed)
    picks = rng.integers(0, g_count, size=(resamples, g_count))
    boot = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    jackknife = np.array(
        [(total - s) / (n - c) for s, c in zip(sums.tolist(), counts.tolist(), strict=True)]
    )
    alpha = 1 - confidence
    bca = _bca_levels(boot, jackknife, theta, alpha)
    if isinstance(bca, str):
        lo_level, hi_level, z0, accel = alpha / 2, 1 - alpha / 2, None, None
        method: Literal["bca", "percentile"] = "percentile"
        reason: str | None = bca
    else:
        lo_level, hi_level, z0, accel = bca
        method, reason = "bca", None
    low, high = np.quantile(boot, [lo_level, hi_level])
    return BootstrapInterval(
        estimate=theta,
        low=float(low),
        high=float(high),
        confidence=confidence,
        method=method,
        fallback_reason=reason,
        bias_correction=z0,
        acceleration=accel,
        resamples=resamples,
        seed=seed,
        tasks=n,
        clusters=g_count,
    )


def _bca_levels(
    boot: NDArray[np.float64], jackknife: NDArray[np.float64], theta: float, alpha: float
) -> tuple[float, float, float, float] | str:
    """BCa quantile levels, z0 and a; or the reason BCa is degenerate."""
    import numpy as np
    from scipy import special

    tol = 1e-12 * max(1.0, abs(theta))
    if float(boot.max() - boot.min()) <= tol:
        return "every resample gave the same mean difference"
    below = int(np.count_nonzero(boot < theta - tol))
    ties = int(np.count_nonzero(np.abs(boot - theta) <= tol))
    share = (below + ties / 2) / boot.size
    if share <= 0 or share >= 1:
        return "bias correction undefined: every resample lies on one side of the estimate"
    z0 = float(special.ndtri(share))
    dev = jackknife.mean() - jackknife
    ss = float(np.sum(dev**2))
    if not ss > 1e-300:
        return "acceleration undefined: every leave-one-family-out estimate is equal"
    accel = float(np.sum(dev**3)) / (6 * ss**1.5)
    levels: list[float] = []
    for q in (alpha / 2, 1 - alpha / 2):
        zq = float(special.ndtri(q))
        denom = 1 - accel * (z0 + zq)
        if denom <= 0:
            return "BCa levels undefined: 1 - a(z0 + z) <= 0"
        level = float(special.ndtr(z0 + (z0 + zq) / denom))
        if not math.isfinite(level):
            return "BCa levels are not finite"
        levels.append(level)
    return levels[0], levels[1], z0, accel


# --------------------------------------------------------------------------------------------
# The paired noise band


class Multiplier(msgspec.Struct, frozen=True, kw_only=True):
    """The factor m in ``band = m * sd / sqrt(n)``.

    Attributes:
        value: m.
        kind: ``z`` (normal quantile) or ``t`` (Student t quantile).
        df: Degrees of freedom of the t quantile (n - 1), or null for z.
        z: The z the caller asked for (or the default 1.96) that m was derived from.

    """

    value: float
    kind: Literal["z", "t"]
    df: int | None
    z: float


def band_multiplier(n: int, z: float | None = None, *, t_always: bool = False) -> Multiplier:
    """Choose the band multiplier for n paired tasks.

    With ``t_always=True`` (the descriptive band ``compare`` prints; its decision is the
    bootstrap of `harness_world.stats.gate.assess`, not this band) the Student t quantile with
    ``n - 1`` degrees of freedom is used at every n, with no switch to z at 30 tasks.
    The default keeps the descriptive band of the seed articles:

    * ``n >= 30``: m = z, used exactly as given (default 1.96).
    * ``n < 30``: z is read as the two-sided coverage it stands for under the normal,
      ``Phi(z)`` per tail (1.96 <-> 95%), and m is the Student t quantile with the same tail
      probability and ``n - 1`` degrees of freedom: ``m = t_{n-1}^{-1}(Phi(z))``. So an explicit
      z below 30 tasks chooses the confidence level, not the multiplier itself; the multiplier is
      always wider than z there.

    Args:
        n: Paired tasks, at least 2.
        z: Positive, finite normal multiplier; None for 1.96.
        t_always: Use the t quantile at every n (no switch to z at 30 tasks).

    Returns:
        The multiplier and how it was chosen.

    Raises:
        StatsInputError: ``n < 2`` or z not positive and finite.

    """
    from scipy import special

    if n < 2:
        raise StatsInputError(f"fewer than 2 paired tasks ({n})")
    zv = DEFAULT_Z if z is None else z
    if not (math.isfinite(zv) and zv > 0):
        raise StatsInputError(f"z must be positive and finite, got {zv}")
    if n >= SMALL_SAMPLE_TASKS and not t_always:
        return Multiplier(value=zv, kind="z", df=None, z=zv)
    tail = float(special.ndtr(zv))
    value = float(special.stdtrit(n - 1, tail))
    if not math.isfinite(value):
        raise StatsInputError(f"z={zv} is too large for a t quantile with {n - 1} df")
    return Multiplier(value=value, kind="t", df=n - 1, z=zv)


class NoiseBand(msgspec.Struct, frozen=True, kw_only=True):
    """The paired noise band around a mean per-task difference.

    Attributes:
        n: Paired tasks.
        mean: Mean of the per-task differences (candidate - baseline).
        sd: Sample standard deviation of the differences (divisor n - 1).
        multiplier: The multiplier m and how it was chosen.
        half_width: ``m * sd / sqrt(n)``; the band is ``[-half_width, +half_width]``.
        verdict: ``above`` (mean > half_width), ``below`` (mean < -half_width) or ``inside``.

    """

    n: int
    mean: float
    sd: float
    multiplier: Multiplier
    half_width: float
    verdict: Verdict


def noise_band(
    differences: Sequence[float], *, z: float | None = None, t_always: bool = False
) -> NoiseBand:
    """Compute the paired noise band of per-task differences and its verdict.

    Formula, over n per-task differences ``d_i``::

        mean = sum d_i / n
        sd   = sqrt( sum (d_i - mean)^2 / (n - 1) )
        band = m * sd / sqrt(n)

    with m from `band_multiplier` (z for n >= 30, Student t with n - 1 df below).
    Verdict: ``above`` when ``mean > band``, ``below`` when ``mean < -band``, otherwise
    ``inside``; a mean exactly on an edge counts as inside (the conservative reading).

    Edge cases: when every difference is equal, sd and the band are exactly 0 and any non-zero
    mean is outside it. Mean and variance are computed exactly (as fractions of the float inputs)
    and rounded once, so the result ignores input order and equal inputs never leave a
    rounding residue in sd.

    Args:
        differences: One difference per paired task, finite.
        z: Normal multiplier (see `band_multiplier` for its meaning below 30 tasks).
        t_always: Use the t multiplier at every n (see `band_multiplier`).

    Returns:
        The band and its verdict.

    Raises:
        StatsInputError: Fewer than 2 differences, a non-finite difference, or a bad z.

    """
    n = len(differences)
    if n < 2:
        raise StatsInputError(f"fewer than 2 paired tasks ({n})")
    if not all(math.isfinite(d) for d in differences):
        raise StatsInputError("differences must be finite")
    multiplier = band_multiplier(n, z, t_always=t_always)
    exact = [Fraction(d) for d in differences]
    exact_mean = sum(exact, Fraction(0)) / n
    variance = sum(((d - exact_mean) ** 2 for d in exact), Fraction(0)) / (n - 1)
    mean = float(exact_mean)
    sd = math.sqrt(float(variance))
    half = multiplier.value * sd / math.sqrt(n)
    verdict: Verdict = "above" if mean > half else "below" if mean < -half else "inside"
    return NoiseBand(n=n, mean=mean, sd=sd, multiplier=multiplier, half_width=half, verdict=verdict)


class TasksNeeded(msgspec.Struct, frozen=True, kw_only=True):
    """How many paired tasks a band of a given half-width needs.

    Attributes:
        tasks: The smallest n whose band ``m(n) * sd / sqrt(n)`` is at most the target.
        sd: The pilot standard deviation of per-task differences.
        half_width: The target half-width.
        multiplier: The multiplier at that n.

    """

    tasks: int
    sd: float
    half_width: float
    multiplier: Multiplier


def tasks_needed(sd: float, half_width: float, *, z: float | None = None) -> TasksNeeded:
    """Paired tasks needed for a band of ``+/- half_width`` given a pilot sd of differences.

    What it targets: a band *width*, not a power. A true change of exactly ``half_width``
    clears a band of that width only about half the time (~50% power at one-sided 2.5%). For
    80% power use `tasks_for_power` (about 2.04 times as many tasks), or
    ``compare --plan --mde X``.

    With the normal multiplier this is ``n = ceil((z * sd / X)^2)``. That n is the answer when
    it is at least 30 (below 30 the t multiplier is larger, so no smaller n can do). When it is
    below 30, the band uses ``t_{n-1}``, so n is raised one at a time until
    ``t_{n-1} * sd / sqrt(n) <= X`` (at most up to 30, where z applies again). The result is
    always at least 2, the fewest tasks a band can use.

    Remember this counts tasks, not runs: more runs per task shrink only the run-to-run part
    of sd, never the task-to-task part.

    Args:
        sd: Pilot standard deviation of per-task differences, finite and ``>= 0``.
        half_width: Target X, finite and ``> 0`` (same units as sd).
        z: Normal multiplier, as in `band_multiplier`.

    Returns:
        The task count and the multiplier at that count.

    Raises:
        StatsInputError: sd negative or non-finite, X not positive, or a bad z.

    """
    if not (math.isfinite(sd) and sd >= 0):
        raise StatsInputError(f"sd must be finite and >= 0, got {sd}")
    if not (math.isfinite(half_width) and half_width > 0):
        raise StatsInputError(f"half_width must be finite and > 0, got {half_width}")
    zv = band_multiplier(SMALL_SAMPLE_TASKS, z).value
    n = max(2, math.ceil((zv * sd / half_width) ** 2))
    # The ceiling can land one above the answer through float error in the square.
    while n > max(2, SMALL_SAMPLE_TASKS) and zv * sd / math.sqrt(n - 1) <= half_width:
        n -= 1
    while n < SMALL_SAMPLE_TASKS:
        m = band_multiplier(n, z).value
        if m * sd / math.sqrt(n) <= half_width:
            break
        n += 1
    return TasksNeeded(tasks=n, sd=sd, half_width=half_width, multiplier=band_multiplier(n, z))


# --------------------------------------------------------------------------------------------
# Task classes, flips, regressions, McNemar


def classify(tally: TaskTally) -> TaskClass:
    """``solid`` if every run passed, ``broken`` if none did, ``flaky`` otherwise.

    Raises:
        StatsInputError: The tally has no runs or inconsistent counts.

    """
    _check_tally(tally)
    if tally.runs == 0:
        raise StatsInputError(f"task {tally.task_id!r} has no runs to classify")
    if tally.passes == tally.runs:
        return "solid"
    if tally.passes == 0:
        return "broken"
    return "flaky"


class ClassCounts(msgspec.Struct, frozen=True, kw_only=True):
    """How many tasks of one configuration were solid, flaky and broken.

    Attributes:
        solid: Tasks that passed every run.
        flaky: Tasks that passed some but not all runs.
        broken: Tasks that failed every run.

    """

    solid: int
    flaky: int
    broken: int


def count_classes(tallies: Iterable[TaskTally]) -> ClassCounts:
    """Count solid, flaky and broken tasks (see `classify`)."""
    counts = {"solid": 0, "flaky": 0, "broken": 0}
    for tally in tallies:
        counts[classify(tally)] += 1
    return ClassCounts(solid=counts["solid"], flaky=counts["flaky"], broken=counts["broken"])


class PairedTask(msgspec.Struct, frozen=True, kw_only=True):
    """One task seen under both configurations.

    Attributes:
        task_id: The task's identifier.
        baseline: Its tally under the baseline.
        candidate: Its tally under the candidate.
        difference: Candidate pass rate minus baseline pass rate (exact, then rounded once).

    """

    task_id: str
    baseline: TaskTally
    candidate: TaskTally
    difference: float


def pair_tallies(
    baseline: Iterable[TaskTally],
    candidate: Iterable[TaskTally],
    *,
    min_runs: int = 1,
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
) -> tuple[list[PairedTask], list[ExcludedTask]]:
    """Pair tasks by id; exclude (and list) tasks on one side only or under ``min_runs``.

    Args:
        baseline: Baseline tallies (unique task ids).
        candidate: Candidate tallies (unique task ids).
        min_runs: Runs each side needs for a task to be paired, at least 1.
        baseline_name: Name used in exclusion reasons.
        candidate_name: Name used in exclusion reasons.

    Returns:
        Paired tasks and excluded tasks, each sorted by task id.

    Raises:
        StatsInputError: ``min_runs < 1``, a repeated task id or an invalid tally.

    """
    if min_runs < 1:
        raise StatsInputError(f"min_runs must be at least 1, got {min_runs}")

    def index(tallies: Iterable[TaskTally]) -> dict[str, TaskTally]:
        out: dict[str, TaskTally] = {}
        for t in tallies:
            _check_tally(t)
            if t.task_id in out:
                raise StatsInputError(f"task {t.task_id!r} appears twice")
            out[t.task_id] = t
        return out

    a, b = index(baseline), index(candidate)
    paired: list[PairedTask] = []
    excluded: list[ExcludedTask] = []
    for task_id in sorted(a.keys() | b.keys()):
        if task_id not in b:
            excluded.append(ExcludedTask(task_id=task_id, reason=f"only in {baseline_name!r}"))
            continue
        if task_id not in a:
            excluded.append(ExcludedTask(task_id=task_id, reason=f"only in {candidate_name!r}"))
            continue
        ta, tb = a[task_id], b[task_id]
        if ta.runs < min_runs or tb.runs < min_runs:
            excluded.append(
                ExcludedTask(
                    task_id=task_id,
                    reason=(
                        f"fewer than {min_runs} runs ({ta.runs} in {baseline_name!r}, "
                        f"{tb.runs} in {candidate_name!r})"
                    ),
                )
            )
            continue
        diff = Fraction(tb.passes, tb.runs) - Fraction(ta.passes, ta.runs)
        paired.append(
            PairedTask(task_id=task_id, baseline=ta, candidate=tb, difference=float(diff))
        )
    return paired, excluded


class Flip(msgspec.Struct, frozen=True, kw_only=True):
    """A task that went from solid to broken or from broken to solid.

    Attributes:
        task_id: The task's identifier.
        baseline_class: Its class under the baseline (``solid`` or ``broken``).
        candidate_class: Its class under the candidate (the other one).
        baseline: Its baseline tally.
        candidate: Its candidate tally.

    """

    task_id: str
    baseline_class: TaskClass
    candidate_class: TaskClass
    baseline: TaskTally
    candidate: TaskTally


def flipped_tasks(paired: Iterable[PairedTask]) -> list[Flip]:
    """Tasks that flipped completely between solid and broken, in either direction.

    Flaky on either side is not a flip. These are the tasks whose traces are worth reading
    before calling two configurations equal: a verdict on the mean hides them.

    Returns:
        The flips, sorted by task id.

    """
    flips: list[Flip] = []
    for p in sorted(paired, key=lambda p: p.task_id):
        before, after = classify(p.baseline), classify(p.candidate)
        if before != after and "flaky" not in (before, after):
            flips.append(
                Flip(
                    task_id=p.task_id,
                    baseline_class=before,
                    candidate_class=after,
                    baseline=p.baseline,
                    candidate=p.candidate,
                )
            )
    return flips


def regressions(paired: Iterable[PairedTask]) -> list[str]:
    """Tasks the candidate fails that the baseline passed, by name.

    Definition for repeated runs: the baseline was solid (passed every run) and the candidate
    is not (failed at least one run). With one run per task this is exactly "baseline passed,
    candidate failed". A drop that starts from a flaky baseline (say 3/5 -> 0/5) is not counted
    here: it shows in the per-task differences and the band, not in this list.

    Returns:
        Task ids, sorted.

    """
    return sorted(
        p.task_id
        for p in paired
        if classify(p.baseline) == "solid" and classify(p.candidate) != "solid"
    )


class McNemarResult(msgspec.Struct, frozen=True, kw_only=True):
    """McNemar's test on single-run paired outcomes, mid-p version.

    Attributes:
        tasks: Paired tasks.
        baseline_only: Tasks that passed under the baseline only (b).
        candidate_only: Tasks that passed under the candidate only (c).
        p_value: Two-sided mid-p value, in [0, 1].

    """

    tasks: int
    baseline_only: int
    candidate_only: int
    p_value: float


def mcnemar_midp(baseline: Sequence[bool], candidate: Sequence[bool]) -> McNemarResult:
    """McNemar mid-p test for paired pass/fail outcomes (one run per task per side).

    Only discordant tasks carry information. With ``b`` baseline-only passes, ``c``
    candidate-only passes, ``N = b + c``, ``m = min(b, c)`` and ``X ~ Binomial(N, 1/2)``::

        mid-p = 2 * ( P(X < m) + P(X = m) / 2 ),  capped at 1

    i.e. the exact two-sided p minus ``P(X = m)``; it is less conservative than the exact test
    while keeping close to nominal size. Computed exactly with integer binomial coefficients.

    Edge cases: with no discordant tasks (``N = 0``) or ``b == c`` the p-value is 1.

    Args:
        baseline: Pass/fail per task under the baseline.
        candidate: Pass/fail per task under the candidate, paired by position.

    Returns:
        Counts and the mid-p value.

    Raises:
        StatsInputError: Lengths differ or fewer than 2 paired tasks.

    """
    if len(baseline) != len(candidate):
        raise StatsInputError(f"{len(baseline)} baseline but {len(candidate)} candidate results")
    if len(baseline) < 2:
        raise StatsInputError(f"fewer than 2 paired tasks ({len(baseline)})")
    b = sum(1 for x, y in zip(baseline, candidate, strict=True) if x and not y)
    c = sum(1 for x, y in zip(baseline, candidate, strict=True) if y and not x)
    total = b + c
    m = min(b, c)
    if total == 0:
        p = Fraction(1)
    else:
        tail = sum(math.comb(total, i) for i in range(m))
        p = min(Fraction(1), Fraction(2 * tail + math.comb(total, m), 2**total))
    return McNemarResult(tasks=len(baseline), baseline_only=b, candidate_only=c, p_value=float(p))


# --------------------------------------------------------------------------------------------
# The whole comparison


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    """A paired comparison of two configurations over the same tasks.

    Attributes:
        baseline: Baseline configuration name.
        candidate: Candidate configuration name.
        min_runs: Runs each side needed for a task to be paired (1 in the comparison a gate
            reports: short tasks are paired there, and the gate lists them as missing against
            its ``expected_runs``).
        paired: The paired tasks, sorted by task id.
        excluded: Tasks left out (one side only, or under ``min_runs``), sorted by task id.
        baseline_mean: Mean per-task pass rate of the baseline over the paired tasks.
        candidate_mean: Same for the candidate.
        baseline_classes: Solid / flaky / broken counts of the baseline over the paired tasks.
        candidate_classes: Same for the candidate.
        band: The paired noise band and its verdict.
        flips: Tasks that went solid -> broken or broken -> solid.
        regressions: Tasks with a solid baseline and a non-solid candidate.
        mcnemar: McNemar mid-p when every paired task has exactly one run on each side, else
            null.
        small_sample: True when fewer than 30 tasks were paired (the band uses t; warn).

    """

    baseline: str
    candidate: str
    min_runs: int
    paired: list[PairedTask]
    excluded: list[ExcludedTask]
    baseline_mean: float
    candidate_mean: float
    baseline_classes: ClassCounts
    candidate_classes: ClassCounts
    band: NoiseBand
    flips: list[Flip]
    regressions: list[str]
    mcnemar: McNemarResult | None
    small_sample: bool


def compare_results(
    rows: Iterable[RunRow],
    baseline: str,
    candidate: str,
    *,
    min_runs: int = 5,
    z: float | None = None,
    t_always: bool = False,
) -> Comparison:
    """Compare two configurations from already-loaded run rows.

    Steps: tally each configuration per task (`tally_runs`), pair tasks present in both with at
    least ``min_runs`` runs on each side (`pair_tallies`; the others are excluded and listed),
    take per-task differences of pass rates, and compute the noise band (`noise_band`), the
    solid / flaky / broken counts, flips and regressions. Where every paired task ran once on
    each side, McNemar's mid-p is added.

    Args:
        rows: Run rows from any source (CSV, run directories, ...); order does not matter.
        baseline: Baseline configuration name.
        candidate: Candidate configuration name.
        min_runs: Runs each side needs per task, at least 1.
        z: Normal multiplier for the band (see `band_multiplier`).
        t_always: Band with the t multiplier at every n (the band ``compare`` prints).

    Returns:
        The comparison.

    Raises:
        StatsInputError: Baseline equals candidate, a configuration has no rows (the message
            lists the configurations present), a duplicate run, ``min_runs < 1``, a bad z, or
            fewer than 2 paired tasks.

    """
    if baseline == candidate:
        raise StatsInputError(f"baseline and candidate are the same config {baseline!r}")
    if min_runs < 1:
        raise StatsInputError(f"min_runs must be at least 1, got {min_runs}")
    row_list = list(rows)
    _check_configs(row_list, baseline, candidate)
    paired, excluded = pair_tallies(
        tally_runs(row_list, baseline),
        tally_runs(row_list, candidate),
        min_runs=min_runs,
        baseline_name=baseline,
        candidate_name=candidate,
    )
    if len(paired) < 2:
        raise StatsInputError(
            f"fewer than 2 paired tasks ({len(paired)}) with at least {min_runs} run(s) in both "
            f"{baseline!r} and {candidate!r}; {len(excluded)} task(s) excluded"
        )
    band = noise_band([p.difference for p in paired], z=z, t_always=t_always)
    n = len(paired)
    mcnemar = _single_run_mcnemar(paired)
    return Comparison(
        baseline=baseline,
        candidate=candidate,
        min_runs=min_runs,
        paired=paired,
        excluded=excluded,
        baseline_mean=float(
            sum((Fraction(p.baseline.passes, p.baseline.runs) for p in paired), Fraction(0)) / n
        ),
        candidate_mean=float(
            sum((Fraction(p.candidate.passes, p.candidate.runs) for p in paired), Fraction(0)) / n
        ),
        baseline_classes=count_classes(p.baseline for p in paired),
        candidate_classes=count_classes(p.candidate for p in paired),
        band=band,
        flips=flipped_tasks(paired),
        regressions=regressions(paired),
        mcnemar=mcnemar,
        small_sample=n < SMALL_SAMPLE_TASKS,
    )


def _check_configs(rows: list[RunRow], baseline: str, candidate: str) -> None:
    """Refuse a baseline or candidate with no rows, listing the configurations present."""
    present = sorted({r.config for r in rows})
    for role, name in (("baseline", baseline), ("candidate", candidate)):
        if name not in present:
            known = ", ".join(repr(p) for p in present) or "none"
            raise StatsInputError(f"unknown {role} config {name!r} (configs in the data: {known})")


def _single_run_mcnemar(paired: list[PairedTask]) -> McNemarResult | None:
    """McNemar's mid-p when every paired task ran once on each side, else None."""
    if not all(p.baseline.runs == 1 and p.candidate.runs == 1 for p in paired):
        return None
    return mcnemar_midp(
        [p.baseline.passes == 1 for p in paired], [p.candidate.passes == 1 for p in paired]
    )


# The honest gate lives in its own module and is re-exported here, so that
# ``from harness_world import stats`` stays the one public entry point. The re-export is lazy
# (PEP 562) because that module builds on the names above.
