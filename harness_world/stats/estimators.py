"""The descriptive estimators behind `harness_world.stats`.

Run tallies, pass^k and pass@k, proportion intervals, the paired noise band, task classes and
flips, McNemar, and the descriptive comparison ``compare`` prints beside its decision
(`harness_world.stats.decide`). docs/stats.md gives every formula and its edge cases.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Final, Literal

import msgspec

from harness_world.errors import HarnessWorldError

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_Z",
    "SMALL_SAMPLE_TASKS",
    "ClassCounts",
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
    "Verdict",
    "band_multiplier",
    "classify",
    "clopper_pearson_interval",
    "compare_results",
    "count_classes",
    "flipped_tasks",
    "mcnemar_midp",
    "noise_band",
    "pair_tallies",
    "pass_at_k",
    "pass_at_k_exact",
    "pass_hat_k",
    "pass_hat_k_exact",
    "pass_k_summary",
    "regressions",
    "tally_runs",
    "wilson_interval",
]

DEFAULT_ALPHA: Final = 0.025
"""The default one-sided level of every gate (the old two-sided 95% band)."""

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


class RunRow(msgspec.Struct, frozen=True, kw_only=True):
    """One run of one task under one configuration: a row of the results CSV.

    Attributes:
        task_id: The task's identifier.
        run_index: Which repetition this is (a non-negative integer, unique per task and config).
        config: The configuration's name (e.g. ``main`` or ``pr``).
        passed: Whether the run passed.
        family: The task's family (a cluster of related tasks), or ``""`` when none is known.
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


class ExcludedTask(msgspec.Struct, frozen=True, kw_only=True):
    """A task left out of a computation, and why.

    Attributes:
        task_id: The task's identifier.
        reason: Human-readable reason (e.g. ``only in baseline 'main'``).

    """

    task_id: str
    reason: str


def tally_runs(rows: Iterable[RunRow], config: str) -> list[TaskTally]:
    """Runs and passes per task of one configuration, sorted by task id.

    Raises:
        StatsInputError: Two rows share the same (task, run index, config).

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


def _by_id(tallies: Iterable[TaskTally]) -> dict[str, TaskTally]:
    """The tallies by task id, each checked; a repeated task id is an error."""
    out: dict[str, TaskTally] = {}
    for t in tallies:
        _check_tally(t)
        if t.task_id in out:
            raise StatsInputError(f"task {t.task_id!r} appears twice")
        out[t.task_id] = t
    return out


def _check_nck(n: int, c: int, k: int) -> None:
    if k < 1:
        raise StatsInputError(f"k must be at least 1, got {k}")
    if not 0 <= c <= n:
        raise StatsInputError(f"need 0 <= successes <= trials, got {c} of {n}")
    if n < k:
        raise StatsInputError(f"pass^k needs at least k trials: n={n} < k={k}")


def pass_hat_k_exact(n: int, c: int, k: int) -> Fraction:
    """Unbiased pass^k, the chance that k fresh runs all pass: ``C(c, k) / C(n, k)``, exact.

    A ratio of falling factorials in integers (the ``k!`` cancels), so it never overflows.

    Raises:
        StatsInputError: ``k < 1``, ``c`` outside ``[0, n]``, or ``n < k``.

    """
    _check_nck(n, c, k)
    if c < k or c == n:  # the two ends, exactly, without the falling factorials
        return Fraction(int(c == n))
    return Fraction(math.perm(c, k), math.perm(n, k))


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """Unbiased pass@k, the chance that one of k fresh runs passes: ``1 - C(n-c, k) / C(n, k)``.

    Raises:
        StatsInputError: As `pass_hat_k_exact`.

    """
    _check_nck(n, c, k)
    if n - c < k or c == 0:  # the two ends, exactly, without the falling factorials
        return Fraction(int(c > 0))
    return 1 - Fraction(math.perm(n - c, k), math.perm(n, k))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """`pass_hat_k_exact` as the nearest float (same edge cases)."""
    _check_nck(n, c, k)
    # int / int is correctly rounded in Python however large the operands.
    return math.perm(c, k) / math.perm(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """`pass_at_k_exact` as the nearest float (same edge cases)."""
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
        lower: One-sided lower confidence bound of pass^k over tasks like these
            (`harness_world.stats.pass_k_bounds`), or null when none was computed.
        upper: One-sided upper confidence bound of pass^k, or null.
        alpha: One-sided level of each bound, or null without bounds.
        bound_note: Why the bounds are what they are when they say nothing (too few tasks,
            families), or ``""``.

    """

    k: int
    tasks: int
    pass_hat_k: float
    pass_at_k: float
    weighted: bool
    per_task: list[TaskPassK]
    excluded: list[ExcludedTask]
    lower: float | None = None
    upper: float | None = None
    alpha: float | None = None
    bound_note: str = ""


def pass_k_summary(
    tallies: Iterable[TaskTally], k: int, *, weights: Mapping[str, float] | None = None
) -> PassKSummary:
    """Per-task pass^k and pass@k, then their macro-average ``sum w_t est_t / sum w_t``.

    Each task uses its own n; the average is exact and rounded once (never the pooled rate to
    the k-th power). A task with fewer than k runs is listed in ``excluded``. With
    ``weights``, every included task needs a finite weight ``>= 0``, they must not all be 0,
    and every weighted name must be a task here.

    Raises:
        StatsInputError: ``k < 1``, a repeated task id, an invalid tally or weight, or no task
            with at least k runs.

    """
    if k < 1:
        raise StatsInputError(f"k must be at least 1, got {k}")
    by_id = _by_id(tallies)
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
    exact_weights = [_weight(t.task_id, weights) for t in included]
    scaled = _common_scale(exact_weights)
    if (scaled_total := sum(scaled)) == 0:
        raise StatsInputError("the declared weights of the included tasks sum to 0")
    # Falling factorials perm(v, k), once per distinct count (tasks share n, often c).
    counts = {v for t in included for v in (t.runs, t.passes, t.runs - t.passes)}
    fall = {v: math.perm(v, k) for v in counts}
    hat_sums: dict[int, int] = defaultdict(int)  # runs n -> sum of w perm(c, k), over perm(n, k)
    miss_sums: dict[int, int] = defaultdict(int)  # the same with perm(n - c, k)
    per_task = []
    for t, w, scale in zip(included, exact_weights, scaled, strict=True):
        top, hit, miss = fall[t.runs], fall[t.passes], fall[t.runs - t.passes]
        hat_sums[t.runs] += scale * hit
        miss_sums[t.runs] += scale * miss
        # int / int is correctly rounded: the nearest float to the exact per-task estimate
        per_task.append(
            TaskPassK(
                task_id=t.task_id,
                runs=t.runs,
                passes=t.passes,
                pass_hat_k=hit / top,
                pass_at_k=(top - miss) / top,
                weight=float(w),
            )
        )
    hats = sum((Fraction(v, fall[n]) for n, v in hat_sums.items()), Fraction(0))
    misses = sum((Fraction(v, fall[n]) for n, v in miss_sums.items()), Fraction(0))
    return PassKSummary(
        k=k,
        tasks=len(included),
        pass_hat_k=float(hats / scaled_total),
        pass_at_k=float(1 - misses / scaled_total),
        weighted=weights is not None,
        per_task=per_task,
        excluded=excluded,
    )


def _common_scale(weights: Sequence[Fraction]) -> list[int]:
    """The weights as whole numbers over their common denominator (a power of two for floats).

    Tasks with the same run count share the denominator ``perm(n, k)`` of their estimates,
    so the exact weighted sum is one integer sum per run count over it rather than a fraction
    per task, each reduced by a gcd of numbers of hundreds of digits.
    """
    common = math.lcm(*(w.denominator for w in weights))
    return [w.numerator * (common // w.denominator) for w in weights]


_ONE: Final = Fraction(1)


def _weight(task_id: str, weights: Mapping[str, float] | None) -> Fraction:
    """A task's weight as an exact fraction (1 without declared weights)."""
    if weights is None:
        return _ONE
    if task_id not in weights:
        raise StatsInputError(f"no weight declared for task {task_id!r}")
    declared = weights[task_id]
    if not math.isfinite(declared) or declared < 0:
        raise StatsInputError(f"weight of task {task_id!r} must be finite and >= 0")
    return Fraction(declared)


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
    """Wilson score interval for a proportion (0 exactly at ``x = 0``, 1 exactly at ``x = n``).

    It always contains ``x / n`` and stays inside [0, 1].

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
    """Exact (Clopper-Pearson) interval: two one-sided binomial tests inverted, via beta quantiles.

    Its coverage is at least the nominal level.

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
    """The band multiplier for n paired tasks.

    From 30 tasks, z as given (default 1.96), as in the seed articles; below, and at every n
    with ``t_always`` (the band ``compare`` prints), the Student t quantile with ``n - 1`` df at
    the same tail probability, ``t_{n-1}^{-1}(Phi(z))``: there z sets the level, not m.

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
    """The paired noise band ``m * sd / sqrt(n)`` of per-task differences, and its verdict.

    m from `band_multiplier`. A mean exactly on an edge is inside. Mean and variance are exact
    (fractions of the inputs) and rounded once: input order never matters, and equal inputs
    give an sd of exactly 0.

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

    The names are the sides' names in the exclusion reasons. Both lists are sorted by task id.

    Raises:
        StatsInputError: ``min_runs < 1``, a repeated task id or an invalid tally.

    """
    if min_runs < 1:
        raise StatsInputError(f"min_runs must be at least 1, got {min_runs}")
    a, b = _by_id(baseline), _by_id(candidate)
    paired: list[PairedTask] = []
    excluded: list[ExcludedTask] = []
    for task_id in sorted(a.keys() | b.keys()):
        ta, tb = a.get(task_id), b.get(task_id)
        if ta is None or tb is None:
            side = baseline_name if tb is None else candidate_name
            excluded.append(ExcludedTask(task_id=task_id, reason=f"only in {side!r}"))
        elif ta.runs < min_runs or tb.runs < min_runs:
            reason = (
                f"fewer than {min_runs} runs ({ta.runs} in {baseline_name!r}, "
                f"{tb.runs} in {candidate_name!r})"
            )
            excluded.append(ExcludedTask(task_id=task_id, reason=reason))
        else:
            diff = float(Fraction(tb.passes, tb.runs) - Fraction(ta.passes, ta.runs))
            paired.append(PairedTask(task_id=task_id, baseline=ta, candidate=tb, difference=diff))
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
    """Tasks that flipped completely between solid and broken, sorted by task id.

    Flaky on either side is not a flip. A verdict on the mean hides these: read their traces.
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
    """Tasks with a solid baseline and a candidate that failed a run, sorted (descriptive).

    With one run per task: "baseline passed, candidate failed". Not a finding: identical agents
    list some often; ``compare`` decides per task with `harness_world.stats.task_changes`.
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
    """McNemar mid-p test of paired pass/fail outcomes (one run per task and side).

    With ``b`` baseline-only and ``c`` candidate-only passes, ``m = min(b, c)`` and
    ``X ~ Binomial(b + c, 1/2)``: ``2 (P(X < m) + P(X = m) / 2)`` capped at 1, in exact
    integers; 1 with no discordant task.

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


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    """A descriptive paired comparison of two configurations over the same tasks.

    Attributes:
        baseline: Baseline configuration name.
        candidate: Candidate configuration name.
        min_runs: Runs each side needed for a task to be paired (1 beside a gate, which lists
            short tasks as missing against its ``expected_runs``).
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
    """Pair two configurations' run rows and describe them: means, classes, band, flips.

    Tasks with at least ``min_runs`` runs on both sides are paired (the others are listed);
    McNemar's mid-p is added when every paired task ran once on each side. ``z`` and
    ``t_always`` choose the band's multiplier (`band_multiplier`).

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
    present = sorted({r.config for r in row_list})
    for role, name in (("baseline", baseline), ("candidate", candidate)):
        if name not in present:
            known = ", ".join(repr(p) for p in present) or "none"
            raise StatsInputError(f"unknown {role} config {name!r} (configs in the data: {known})")
    paired, excluded = pair_tallies(
        tally_runs(row_list, baseline),
        tally_runs(row_list, candidate),
        min_runs=min_runs,
        baseline_name=baseline,
        candidate_name=candidate,
    )
    if (n := len(paired)) < 2:
        raise StatsInputError(
            f"fewer than 2 paired tasks ({n}) with at least {min_runs} run(s) in both "
            f"{baseline!r} and {candidate!r}; {len(excluded)} task(s) excluded"
        )
    single = all(p.baseline.runs == 1 and p.candidate.runs == 1 for p in paired)
    mcnemar = mcnemar_midp(
        [p.baseline.passes == 1 for p in paired], [p.candidate.passes == 1 for p in paired]
    )
    return Comparison(
        baseline=baseline,
        candidate=candidate,
        min_runs=min_runs,
        paired=paired,
        excluded=excluded,
        baseline_mean=_mean_rate(p.baseline for p in paired),
        candidate_mean=_mean_rate(p.candidate for p in paired),
        baseline_classes=count_classes(p.baseline for p in paired),
        candidate_classes=count_classes(p.candidate for p in paired),
        band=noise_band([p.difference for p in paired], z=z, t_always=t_always),
        flips=flipped_tasks(paired),
        regressions=regressions(paired),
        mcnemar=mcnemar if single else None,
        small_sample=n < SMALL_SAMPLE_TASKS,
    )


def _mean_rate(tallies: Iterable[TaskTally]) -> float:
    """The mean per-task pass rate, exact and rounded once."""
    rates = [Fraction(t.passes, t.runs) for t in tallies]
    return float(sum(rates, Fraction(0)) / len(rates))
