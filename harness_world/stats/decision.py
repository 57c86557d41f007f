"""The one comparison verb: a `Design` goes in, a `Decision` with its figures comes out.

Every command that compares (``compare`` and the release gate through `assess`, crossed runs
and ablations, drift, the report's headline) asks `decide`: what is paired with what, in which
clusters, which gate at which level, with which seed. The test is one-sided on the mean
per-task value: CR2-studentized, a wild cluster bootstrap-t over task families with the null
imposed and Webb weights (`harness_world.stats.wild`), skew-corrected, with a binomial variance
floor when the spread is degenerate; the bounds invert it and the gate is read off them. The
other ``method`` values are the candidates it was chosen from, measured beside it by the
calibration bench. docs/stats.md gives every formula and the calibration.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

import attrs
import msgspec

from harness_world.stats.estimators import (
    DEFAULT_ALPHA,
    PairedTask,
    PassKSummary,
    StatsInputError,
    TaskTally,
)
from harness_world.stats.hidden_class import (
    SMALL_SUITE_TASKS,
    clears_gain_floor,
    gain_floor,
    gain_min_tasks,
    min_margin,
    min_tasks,
    miss_probability,
)
from harness_world.stats.wild import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    WildClusterTest,
    bell_mccaffrey_df,
    cluster_skewness,
    hall_inverse,
    hall_transform,
    wild_cluster_test,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "UNDECIDABLE_CLUSTERS",
    "Contrast",
    "Decision",
    "Design",
    "GateName",
    "Method",
    "TaskChange",
    "decide",
    "gate_p_value",
    "holm_adjust",
    "mean_bounds",
    "p_values",
    "paired_samples",
    "pass_k_bounds",
    "task_changes",
    "with_gain_floor",
]

GateName = Literal["improved", "no-regression", "non-inferior", "none"]
"""The gates a design can ask for."""

Method = Literal["sign-flip", "webb", "cr2-t", "cr1-t"]
"""The inference: ``webb`` decides every command; the others are measured beside it."""

Resampling = Literal["exhaustive", "random", "none"]
"""Whether a bootstrap used every weight pattern, seeded random ones, or none (a t test)."""

_DEGENERATE_QUANTILE: Final = 0.01
UNDECIDABLE_CLUSTERS: Final = 3
"""At most this many clusters, the bootstrap decides nothing (docs/stats.md, "Bounds")."""

_GRID_POINTS: Final = 401  # every half point of the change in [-1, 1], 0 among them
_SUBSTEPS: Final = 16
# A half-point step cut 16^5 times: below 5e-9 of the scale, far under the 0.1 point printed.
# Verdicts never depend on it (they read the grid: `_confidence_set`), so finer costs time only.
_ROUNDS: Final = 5


class Contrast(msgspec.Struct, frozen=True, kw_only=True):
    """One task's value that is not a difference of two tallies (a crossed run's contrast).

    Attributes:
        task_id: The task.
        value: Its value, e.g. one profile's harness effect minus the task's mean effect.
        variance: The run-to-run sampling variance of that value (the floor's term).

    """

    task_id: str
    value: float
    variance: float


class Design(msgspec.Struct, frozen=True, kw_only=True):
    """A comparison as asked: what is paired with what, the clusters, the gate and its level.

    Attributes:
        pairs: What is paired with what: per task, the baseline's and the candidate's runs.
            A pair whose baseline has no run stands for the candidate's own pass rate, so the
            decision bounds one configuration's mean (`mean_bounds`).
        contrasts: Per-task values with their own run-to-run variance, instead of ``pairs``
            (a crossed run's interaction). Decided as that test was calibrated: by the
            bootstrap alone, degenerate below the floor's 1% point with ``G - 1`` df.
        families: Task id -> family: the clusters (a task without one is its own cluster;
            with no family, or a single one, every task is its own).
        gate: The gate asked: ``improved``, ``no-regression``, ``non-inferior`` (with
            ``margin``) or ``none``.
        margin: The non-inferiority margin as a fraction; only with ``non-inferior``.
        alpha: One-sided level of each bound and of the gate, in (0, 0.5); a two-sided
            ``1 - 2 alpha`` interval lies between the bounds.
        seed: Seed of the random weight patterns (drawn only when there are too many to use
            them all).
        method: The inference (see `Method`).
        skew_correction: Hall's Edgeworth correction of every statistic.
        floor_caution: Whether a degenerate spread also asks the floor's t (the more cautious
            of the two decides); null: as each design was calibrated, pairs do and contrasts
            do not. Per-task pass^k (`pass_k_bounds`) does.

    """

    pairs: list[PairedTask] = []
    contrasts: list[Contrast] = []
    families: dict[str, str] = {}
    gate: GateName = "none"
    margin: float | None = None
    alpha: float = DEFAULT_ALPHA
    seed: int = DEFAULT_SEED
    method: Method = "webb"
    skew_correction: bool = True
    floor_caution: bool | None = None

    def __post_init__(self) -> None:
        """Refuse what no decision answers, with `StatsInputError`.

        A bad alpha or margin, pairs and contrasts together, fewer than 2 tasks, a contrast
        without a finite value and a positive variance.
        """
        if not (math.isfinite(self.alpha) and 0 < self.alpha < 0.5):
            raise StatsInputError(f"alpha must be strictly between 0 and 0.5, got {self.alpha}")
        if self.pairs and self.contrasts:
            raise StatsInputError("a design holds pairs or contrasts, not both")
        if (n := len(self.pairs) + len(self.contrasts)) < 2:
            raise StatsInputError(f"fewer than 2 paired tasks ({n})")
        if not all(math.isfinite(c.value + c.variance) and c.variance > 0 for c in self.contrasts):
            raise StatsInputError("every contrast needs a finite value and a positive variance")
        margin = self.margin
        if self.gate == "non-inferior" and not (
            margin is not None and math.isfinite(margin) and margin > 0
        ):
            raise StatsInputError(f"non-inferior needs a positive margin, got {margin}")


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """A design decided: the one-sided test of the mean per-task value, and the gate on it.

    Attributes:
        method: ``webb`` (every command's), ``sign-flip``, ``cr2-t`` or ``cr1-t``.
        skew_corrected: Whether Hall's Edgeworth transformation corrected the statistic.
        alpha: One-sided level of each bound and of the gate.
        sidedness: Always ``one-sided``: each gate tests one direction at ``alpha``.
        tasks: Tasks n.
        clusters: Families G (a task without a family counts as its own), or null when every
            task is its own cluster.
        effective_clusters: Bell-McCaffrey df + 1: how many equal families would give the
            same degrees of freedom (n for independent tasks).
        df: Degrees of freedom of the reference t (``G - 1`` for ``cr1-t``).
        mean: Mean per-task value (a difference, or a rate), a fraction.
        standard_error: The standard error used: the floor when ``floor_applied``.
        empirical_standard_error: From the spread: CR2 over the clusters (CR1 for ``cr1-t``);
            without families the paired ``sd / sqrt(n)``.
        paired_standard_error: ``sd / sqrt(n)`` with tasks treated as independent.
        design_effect: ``(empirical / paired)^2``: the variance families add.
        floor_standard_error: The binomial floor ``sqrt(sum_i v_i) / n``, ``v_i`` each
            task's run-to-run variance (docs/stats.md).
        floor_applied: Whether the spread was degenerate (``SE^2 < floor^2 *
            chi2_df^-1(0.01) / df``) so the floor was used.
        skewness: The clusters' skewness the correction used (0 without it).
        t_quantile: ``t_df^-1(1 - alpha)``, the reference critical value.
        lower: One-sided lower confidence bound of the mean (the test inverted).
        upper: One-sided upper confidence bound.
        p_increase: One-sided p-value against "no increase" (small: the mean is > 0).
        p_decrease: One-sided p-value against "no decrease" (small: the mean is < 0).
        resampling: ``exhaustive``, ``random`` or ``none`` (a t test).
        patterns: Weight patterns used (0 for a t test).
        seed: Seed of random patterns, or null when none were drawn.
        smallest_p: The smallest p-value the bootstrap can give; above ``alpha`` no gate can
            be decided against the null.
        decidable: False when the tasks of a comparison all share one declared family (a
            family effect cannot be told from a change), or when the bootstrap has at most
            `UNDECIDABLE_CLUSTERS` clusters (its p-value is not monotone in the null value
            there, and a verdict would not order the evidence): no decision is possible.
            Then the bounds are the whole scale ``[-1, 1]`` and both p-values 1
            (``improved`` and ``non-inferior`` fail, ``no-regression`` passes).
        coherent: Whether each side's accepted null values form one interval on the grid.
            When not, the test rejected "the mean is at most m" yet accepted a value below m
            (or the mirror); the bounds are still the outermost values it accepts.
        gate: The gate the design asked.
        margin: The non-inferiority margin, or null.
        passed: Whether the gate passed on these tasks (always for ``none``).
        reason: Why, in one sentence.
        min_gain: ``improved`` on fewer than `hidden_class.SMALL_SUITE_TASKS` paired tasks:
            the smallest observed mean gain the gate accepts (`hidden_class.min_gain`), since
            a smaller one is shown more often than ``alpha`` by a null in which a rare class of
            tasks breaks completely and is absent from the suite; null otherwise.

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
    decidable: bool = True
    coherent: bool = True
    gate: GateName = "none"
    margin: float | None = None
    passed: bool = True
    reason: str = "no gate"
    min_gain: float | None = None


def paired_samples(samples: Mapping[str, Sequence[tuple[bool, bool]]]) -> list[PairedTask]:
    """Tasks whose runs pair sample by sample, as a design's pairs (sorted by task).

    Args:
        samples: Task id -> (baseline passed, candidate passed) for each paired sample
            (same seed on both sides); a task needs at least one.

    """
    out = []
    for task_id in sorted(samples):
        runs = samples[task_id]
        n, b, c = len(runs), sum(x for x, _ in runs), sum(y for _, y in runs)
        out.append(
            PairedTask(
                task_id=task_id,
                baseline=TaskTally(task_id=task_id, runs=n, passes=b),
                candidate=TaskTally(task_id=task_id, runs=n, passes=c),
                difference=(c - b) / n,
            )
        )
    return out


def _rate(t: TaskTally) -> Fraction:
    """A side's exact pass rate; a side with no runs (a one-sided design) counts 0."""
    return Fraction(t.passes, t.runs) if t.runs else Fraction(0)


def run_variance(p: PairedTask, *, shrink: bool) -> float:
    """A task's per-run variance pooled over both sides: ``x (N - x) / (N (N - 1))``.

    With ``shrink``, ``q (1 - q)`` at the half-pass rate ``q = (x + 0.5) / (N + 1)``, never 0.
    """
    x = p.baseline.passes + p.candidate.passes
    total = p.baseline.runs + p.candidate.runs
    if shrink:
        q = (x + 0.5) / (total + 1)
        return q * (1 - q)
    if total < 2:  # one run in all: no unbiased estimate
        return 0.0
    return x * (total - x) / (total * (total - 1))


def floor_variances(items: Sequence[PairedTask]) -> list[float]:
    """The floor's terms ``v_i = s_i^2 (1/n_b + 1/n_c)``, each task's sampling variance.

    When every task's runs all agreed the shrunk variance is used: no variation is not certainty.
    """
    inverse = [sum(1 / t.runs for t in (p.baseline, p.candidate) if t.runs) for p in items]
    plain = [run_variance(p, shrink=False) * w for p, w in zip(items, inverse, strict=True)]
    if any(v > 0 for v in plain):
        return plain
    return [run_variance(p, shrink=True) * w for p, w in zip(items, inverse, strict=True)]


def _one_family(design: Design) -> bool:
    """Whether a paired design's tasks all share one declared family (a single cluster).

    One side's mean (`mean_bounds`) is not a comparison and keeps its independent tasks.
    """
    ids = [p.task_id for p in design.pairs if p.baseline.runs] or [
        c.task_id for c in design.contrasts
    ]
    labels = {design.families.get(t, "") for t in ids}
    return len(ids) >= 2 and len(labels) == 1 and "" not in labels


def _units(design: Design) -> tuple[list[str], list[Fraction], list[float]]:
    """Task ids (contrasts by cluster label first), their exact values and floor terms."""
    if design.contrasts:
        fam = design.families
        cs = sorted(design.contrasts, key=lambda c: (fam.get(c.task_id) or c.task_id, c.task_id))
        return [c.task_id for c in cs], [Fraction(c.value) for c in cs], [c.variance for c in cs]
    items = sorted(design.pairs, key=lambda p: p.task_id)
    values = [_rate(p.candidate) - _rate(p.baseline) for p in items]
    return [p.task_id for p in items], values, floor_variances(items)


def _grouped(
    ids: Sequence[str], values: Sequence[Fraction], families: Mapping[str, str]
) -> tuple[list[Fraction], list[int], bool]:
    """Each cluster's exact sum and size (families, or tasks), and whether families were used."""
    # A task without a family is its own cluster; the prefix keeps it apart from family names.
    labels = [families.get(t, "") or f"\x00task:{t}" for t in ids]
    clustered = any(families.get(t) for t in ids) and len(set(labels)) >= 2
    groups: dict[str, list[Fraction]] = {}
    for task_id, label, v in zip(ids, labels, values, strict=True):
        groups.setdefault(label if clustered else task_id, []).append(v)
    return (
        [sum(vs, Fraction(0)) for vs in groups.values()],
        [len(vs) for vs in groups.values()],
        clustered,
    )


@attrs.frozen(slots=True)
class _Prepared:
    """A design's figures and test; ``cautious``: a degenerate spread also asks the floor's t.

    Every design is cautious but a contrast design (the interaction test as calibrated).
    """

    common: dict[str, Any]
    test: WildClusterTest | None
    cautious: bool


def _figures(design: Design) -> _Prepared:
    """The decision's common figures and the test behind them."""
    from scipy import special

    ids, values, floor_terms = _units(design)
    n = len(ids)
    sums, sizes, clustered = _grouped(ids, values, design.families)
    mean = sum(values, Fraction(0)) / n
    residual_sums = [s - k * mean for s, k in zip(sums, sizes, strict=True)]
    paired_var = float(sum(((d - mean) ** 2 for d in values), Fraction(0)) / (n * (n - 1)))
    if design.method == "cr1-t":
        g = len(sizes)
        exact = Fraction(g, g - 1) * sum((u * u for u in residual_sums), Fraction(0)) / n**2
        df = float(g - 1)
    else:
        terms = (u * u * Fraction(n, n - k) for u, k in zip(residual_sums, sizes, strict=True))
        exact, df = sum(terms, Fraction(0)) / n**2, bell_mccaffrey_df(sizes)
    variance = float(exact)
    floor = math.sqrt(math.fsum(floor_terms)) / n
    # Degenerate: below the 1% point of what run-to-run noise alone would give the spread.
    # A contrast design keeps the crossed interaction test as calibrated: G - 1 df here.
    limit_df = max(1.0, len(sizes) - 1.0) if design.contrasts else df
    threshold = floor**2 * float(special.chdtri(limit_df, 1 - _DEGENERATE_QUANTILE)) / limit_df
    degenerate = variance < threshold
    adjusted = [
        float(u) * math.sqrt(n / (n - k)) for u, k in zip(residual_sums, sizes, strict=True)
    ]
    common: dict[str, Any] = {
        "method": design.method,
        "skew_corrected": design.skew_correction,
        "alpha": design.alpha,
        "sidedness": "one-sided",
        "tasks": n,
        "clusters": len(sizes) if clustered else None,
        "effective_clusters": bell_mccaffrey_df(sizes) + 1,
        "df": df,
        "mean": float(mean),
        "standard_error": floor if degenerate else math.sqrt(variance),
        "empirical_standard_error": math.sqrt(variance),
        "paired_standard_error": math.sqrt(paired_var),
        "design_effect": variance / paired_var if paired_var > 0 else 1.0,
        "floor_standard_error": floor,
        "floor_applied": degenerate,
        "skewness": cluster_skewness(adjusted) if design.skew_correction else 0.0,
        "t_quantile": float(special.stdtrit(df, 1 - design.alpha)),
    }
    if design.method in ("cr2-t", "cr1-t"):
        return _Prepared(common, None, cautious=True)
    test = wild_cluster_test(
        [float(s) for s in sums],
        sizes,
        floor_variance=floor**2,
        threshold=threshold,
        weights="rademacher" if design.method == "sign-flip" else "webb",
        skew_correction=design.skew_correction,
        draws=DEFAULT_DRAWS,
        seed=design.seed,
        observed_variance=variance,
    )
    caution = design.floor_caution
    return _Prepared(common, test, cautious=not design.contrasts if caution is None else caution)


def _t_reference(
    common: Mapping[str, Any], mu0s: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One-sided p-values of the (skew-corrected) t reference at each null value."""
    from scipy import special

    t0 = hall_transform((common["mean"] - mu0s) / common["standard_error"], common["skewness"])
    return special.stdtr(common["df"], -t0), special.stdtr(common["df"], t0)


def _t_bounds(common: Mapping[str, Any]) -> tuple[float, float]:
    """The (skew-corrected) t reference's one-sided bounds: ``mean - SE g^-1(-/+ t)``."""
    mean, se, gamma, q = (common[k] for k in ("mean", "standard_error", "skewness", "t_quantile"))
    return mean - se * hall_inverse(q, gamma), mean - se * hall_inverse(-q, gamma)


def _curve(prepared: _Prepared, mu0s: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """Both one-sided p-values at each null value of ``mu0s``: the bootstrap's, or the t's.

    A bootstrap of values that hardly vary cannot show the run-to-run noise the floor stands
    for, and the floor's t cannot see how few clusters there are: on a degenerate spread the
    more cautious of the two decides.
    """
    import numpy as np

    up, down = _t_reference(prepared.common, mu0s)
    if prepared.test is None:
        return up, down
    boot_up, boot_down = prepared.test.p_curve(mu0s)
    if prepared.common["floor_applied"] and prepared.cautious:
        return np.maximum(up, boot_up), np.maximum(down, boot_down)
    return boot_up, boot_down


def _p_values(prepared: _Prepared, mu0: float) -> tuple[float, float]:
    """Both one-sided p-values at one null value ``mu0`` (see `_curve`)."""
    import numpy as np

    up, down = _curve(prepared, np.array([mu0], dtype=np.float64))
    return float(up[0]), float(down[0])


def _edge(prepared: _Prepared, alpha: float, lo: float, hi: float, *, up: bool) -> float:
    """Narrow a grid step between a rejected null and an accepted one; return an accepted one.

    ``lo`` is rejected and ``hi`` accepted for the lower bound (``up``), ``lo`` accepted and
    ``hi`` rejected for the upper: each round tries the `_SUBSTEPS` - 1 nulls strictly in
    between (the ends are known) and keeps the step where the first (last) accepted one is,
    so the value returned lies in the confidence set and every null tried beyond it was
    rejected.
    """
    import numpy as np

    for _ in range(_ROUNDS):
        trial = np.linspace(lo, hi, _SUBSTEPS + 1)
        p = _curve(prepared, trial[1:-1])[0 if up else 1]
        accepted = np.flatnonzero(p > alpha) + 1  # indices into ``trial``
        if up:
            k = int(accepted[0]) if accepted.size else _SUBSTEPS  # else ``hi``
            lo, hi = float(trial[k - 1]), float(trial[k])
        else:
            k = int(accepted[-1]) if accepted.size else 0  # else ``lo``
            lo, hi = float(trial[k]), float(trial[k + 1])
    return hi if up else lo


class _Inverted(NamedTuple):
    """The bootstrap inverted: bounds, composite p-values, and whether it was coherent."""

    lower: float
    upper: float
    p_increase: float
    p_decrease: float
    coherent: bool


def _confidence_set(prepared: _Prepared, alpha: float) -> _Inverted:
    """The test inverted over a grid of null values.

    With few clusters the p-value need not be monotone in the null value, so the bounds are
    the extreme nulls the test accepts on the grid of `_GRID_POINTS` values in ``[-1, 1]``
    (each refined to the neighbouring rejected value), and each p-value is the largest over
    the composite null it tests (every grid value at or below 0 for ``p_increase``):
    ``lower > 0`` exactly when ``p_increase <= alpha``, and ``upper < 0`` exactly when
    ``p_decrease <= alpha``, by construction. ``coherent`` is false when a side's accepted
    nulls are not one interval (it rejects "the mean is at most m" yet accepts a smaller m).
    """
    import numpy as np

    grid = np.linspace(-1.0, 1.0, _GRID_POINTS)
    zero = _GRID_POINTS // 2
    grid[zero] = 0.0
    up, down = _curve(prepared, grid)
    accepted_up = np.flatnonzero(up > alpha)
    accepted_down = np.flatnonzero(down > alpha)
    coherent = bool(
        (accepted_up.size == 0 or accepted_up.size == _GRID_POINTS - accepted_up[0])
        and (accepted_down.size == 0 or accepted_down.size == accepted_down[-1] + 1)
    )
    if accepted_up.size == 0:
        lower = 1.0
    elif (first := int(accepted_up[0])) == 0:
        lower = -1.0
    else:
        lower = _edge(prepared, alpha, float(grid[first - 1]), float(grid[first]), up=True)
    if accepted_down.size == 0:
        upper = -1.0
    elif (last := int(accepted_down[-1])) == _GRID_POINTS - 1:
        upper = 1.0
    else:
        upper = _edge(prepared, alpha, float(grid[last]), float(grid[last + 1]), up=False)
    return _Inverted(lower, upper, float(up[: zero + 1].max()), float(down[zero:].max()), coherent)


def p_values(design: Design, mu0: float = 0.0) -> tuple[float, float]:
    """`decide`'s one-sided p-values at the null value ``mu0``: (increase, decrease).

    The first tests "the mean is at most mu0" (small: it is larger), the second the mirror;
    `decide`'s bounds are where they cross ``alpha``. Cheaper than `decide` when one null
    matters: a crossed run's two-sided interaction test, the calibration bench.
    """
    return _p_values(_figures(design), mu0)


def decide(design: Design) -> Decision:
    """Decide a design: the one-sided test of its mean per-task value, and its gate.

    ``webb`` and ``sign-flip`` invert the bootstrap (on a degenerate spread, the more cautious
    of it and the floor's t); ``cr2-t`` / ``cr1-t`` use t with Bell-McCaffrey (``G - 1``) df.
    ``improved`` passes when ``lower > 0`` (below `hidden_class.SMALL_SUITE_TASKS` paired
    tasks, also when the mean gain reaches `Decision.min_gain`), ``no-regression`` unless
    ``upper < 0``, ``non-inferior`` when ``-lower < margin`` on at least
    `hidden_class.min_tasks` tasks and the test also rejects a change of exactly
    ``-margin`` (off the grid the bounds are found on, it is tested on its own).
    """
    return _decided(design, _figures(design))


def _decided(design: Design, prepared: _Prepared) -> Decision:
    """`decide` on figures already prepared (`gate_p_value` reads the same curve again)."""
    common, test = prepared.common, prepared.test
    one_family = _one_family(design)
    decidable = (test is None or test.clusters > UNDECIDABLE_CLUSTERS) and not one_family
    if not decidable:  # no decision possible: every change stays in the set
        inverted = _Inverted(-1.0, 1.0, 1.0, 1.0, coherent=True)
    elif test is None:  # a t test's p-value is monotone in the null: its bounds are exact
        p_increase, p_decrease = _p_values(prepared, 0.0)
        inverted = _Inverted(*_t_bounds(common), p_increase, p_decrease, coherent=True)
    else:
        inverted = _confidence_set(prepared, design.alpha)
    lower, upper, p_increase, p_decrease, coherent = inverted
    figures = Decision(
        **common,
        lower=lower,
        upper=upper,
        p_increase=p_increase,
        p_decrease=p_decrease,
        resampling="none" if test is None else "exhaustive" if test.exhaustive else "random",
        patterns=0 if test is None else test.patterns,
        seed=None if test is None or test.exhaustive else design.seed,
        smallest_p=0.0 if test is None else 1 / test.patterns,
        decidable=decidable,
        coherent=coherent,
    )
    if design.gate == "improved":
        figures = msgspec.structs.replace(figures, min_gain=gain_floor(figures.tasks, design.alpha))
    passed = _passes(figures, design.gate, design.margin)
    at_margin = None
    if passed and design.gate == "non-inferior" and design.margin is not None:
        # The bounds come from a grid that -margin is seldom on; the gate's null is exactly
        # "the change is -margin", so it is tested too (`gate_p_value` reads the same nulls).
        at_margin = _p_values(prepared, -design.margin)[0]
        passed = at_margin <= design.alpha
    return msgspec.structs.replace(
        figures,
        gate=design.gate,
        margin=design.margin if design.gate == "non-inferior" else None,
        passed=passed,
        reason=_reason(figures, design.gate, design.margin, passed, at_margin),
    )


def with_gain_floor(d: Decision, tasks: int) -> Decision:
    """``d`` judged with the ``improved`` gain floor of ``tasks`` paired tasks, not of its own.

    For a decision whose design holds tasks imputed without a run on one side (a gate's worst
    case): they are no evidence that the suite is larger, so only the ``tasks`` observed count
    toward `hidden_class.SMALL_SUITE_TASKS` and `hidden_class.min_gain`. Other gates, and a
    decision on no more tasks than that, are returned as they are.
    """
    floor = gain_floor(tasks, d.alpha)
    if d.gate != "improved" or d.tasks <= tasks or floor is None:
        return d
    floored = msgspec.structs.replace(d, min_gain=floor)
    if d.lower <= 0 or clears_gain_floor(d.mean, tasks, d.alpha):
        return floored  # the bound decides, as it did (a floor of fewer tasks is higher)
    # The reason counts the observed tasks, those the floor is of.
    reason = _reason(msgspec.structs.replace(floored, tasks=tasks), "improved", None, False)
    return msgspec.structs.replace(floored, passed=False, reason=reason)


def gate_p_value(design: Design) -> float:
    """The smallest one-sided level at which `decide` would reject the gate's null.

    ``improved``: the composite ``p_increase``, and below 30 tasks at least ``(1 + mean)^-n``
    (the gain floor); ``no-regression``: ``p_decrease`` (small: a drop is shown);
    ``non-inferior``: the largest p-value "the change is at most m" has over the nulls its
    verdict reads (the grid values ``m <= -margin``, ``-margin`` itself and, when the lower
    bound is at or below ``-margin``, that bound: a null the test accepts), and at least
    ``(1 - margin)^n``, the chance that a broken class of that size hides from ``n`` tasks
    (so too few tasks for the margin at a level is a p-value above it); 1 when no decision
    is possible; ``none``: 1.

    At the design's ``alpha`` it is at most ``alpha`` exactly when `decide` passes. At
    another level (Holm decides candidate r of m at ``alpha / (m - r)``) the same holds,
    except for ``non-inferior`` where the search that refines the lower bound finds a null
    the test accepts strictly between two half-point grid values below ``-margin``, all of
    them and ``-margin`` rejected: a p-value bump narrower than half a point, which only that
    level's search can see. Holm still holds its family-wise level there, since a candidate
    passes only when its own decision passes too.
    """
    import numpy as np

    prepared = _figures(design)
    d = _decided(design, prepared)
    if design.gate == "improved":
        if d.min_gain is None:
            return d.p_increase
        # The floor rejects at a level a' exactly when (1 + mean)^-n <= a' (hidden_class).
        hidden = (1 + d.mean) ** -d.tasks if d.mean > 0 else 1.0
        return max(d.p_increase, min(1.0, hidden))
    if design.gate == "no-regression":
        return d.p_decrease
    margin = design.margin
    if design.gate != "non-inferior" or margin is None or not d.decidable:
        return 1.0
    grid = np.linspace(-1.0, 1.0, _GRID_POINTS)
    nulls = np.append(grid[grid <= -margin], -margin)
    if d.lower <= -margin:
        nulls = np.append(nulls, d.lower)
    # `min_tasks` is the fewest n with this at most alpha: the same inequality at any level.
    hidden = miss_probability(margin, d.tasks)
    return max(float(_curve(prepared, nulls)[0].max()), hidden)


def mean_bounds(
    tallies: Sequence[TaskTally],
    *,
    alpha: float = DEFAULT_ALPHA,
    families: Mapping[str, str] | None = None,
    seed: int = DEFAULT_SEED,
) -> Decision:
    """`decide` on one configuration's mean per-task pass rate (the report's headline).

    Each task's rate stands where a design puts a difference, its floor term the task's own
    run variance ``s_i^2 / n_i``; ``[lower, upper]`` covers the mean a fresh draw of tasks
    like these would give with ``1 - 2 alpha`` confidence.

    Raises:
        StatsInputError: Fewer than 2 tasks, a task without runs, or a bad alpha.

    """
    if any(t.runs < 1 for t in tallies):
        raise StatsInputError("every task needs at least one run")
    empty = {t.task_id: TaskTally(task_id=t.task_id, runs=0, passes=0) for t in tallies}
    pairs = [
        PairedTask(
            task_id=t.task_id, baseline=empty[t.task_id], candidate=t, difference=t.passes / t.runs
        )
        for t in tallies
    ]
    return decide(Design(pairs=pairs, families=dict(families or {}), alpha=alpha, seed=seed))


@functools.lru_cache(maxsize=4096)  # tasks of a run often share their tally
def pass_k_variance(runs: int, passes: int, k: int) -> float:
    """The sampling variance of a task's unbiased pass^k over its runs, never 0.

    ``Var U = sum_j Binom(n, q)(j) U(j)^2 - q^(2k)`` with ``U(j) = C(j, k) / C(n, k)``, taken
    at the half-pass rate ``q = (c + 0.5) / (n + 1)`` (no variation is not certainty); at
    k = 1 it is ``q (1 - q) / n``, the floor's term of `mean_bounds`.
    """
    q = (passes + 0.5) / (runs + 1)
    pmf = _half_rate_pmf(runs, passes)
    second = math.fsum(p * u for p, u in zip(pmf[k:], _squared_ratios(runs, k), strict=True))
    return max(second - q ** (2 * k), 1e-300)


@functools.lru_cache(maxsize=4096)
def _squared_ratios(runs: int, k: int) -> tuple[float, ...]:
    """``U(j)^2 = (perm(j, k) / perm(n, k))^2`` for j = k..n, once per run count and k."""
    top = math.perm(runs, k)
    return tuple((math.perm(j, k) / top) ** 2 for j in range(k, runs + 1))


@functools.lru_cache(maxsize=4096)
def _half_rate_pmf(runs: int, passes: int) -> tuple[float, ...]:
    """Binomial(runs, q) at the half-pass rate, once per task for every k (it has no k).

    Summed in logs (q is never 0 or 1), so it needs no import of scipy.stats, which costs a
    report more than a second.
    """
    q = (passes + 0.5) / (runs + 1)
    log_q, log_r, top = math.log(q), math.log1p(-q), math.lgamma(runs + 1)
    return tuple(
        math.exp(
            top - math.lgamma(j + 1) - math.lgamma(runs - j + 1) + j * log_q + (runs - j) * log_r
        )
        for j in range(runs + 1)
    )


def pass_k_bounds(
    summary: PassKSummary,
    *,
    alpha: float = DEFAULT_ALPHA,
    families: Mapping[str, str] | None = None,
    seed: int = DEFAULT_SEED,
) -> PassKSummary:
    """The summary with one-sided bounds of its pass^k: `decide` over the per-task pass^k.

    Each task with a positive weight is a unit whose value is its influence on the weighted
    pass^k ``P``: ``P + s_t (x_t - P)`` with ``s_t = m w_t / sum w`` over the m such tasks
    (``x_t`` itself without weights), so the values average to ``P`` and spread as the
    weighted mean does; its floor term is `pass_k_variance` times ``s_t^2``. The wild cluster
    bootstrap-t over
    tasks (families when at least two are named) inverts to bounds clipped to ``[0, 1]``, on
    a degenerate spread the more cautious of it and the floor's t. Fewer than 2 weighted
    tasks leave the summary without bounds; 3 or fewer give ``[0, 1]`` with a note.
    """
    units = [t for t in summary.per_task if t.weight > 0]
    if len(units) < 2:
        return msgspec.structs.replace(summary, bound_note="fewer than 2 tasks: no interval")
    total = math.fsum(t.weight for t in units)
    scale = {t.task_id: len(units) * t.weight / total for t in units}
    centre = math.fsum(scale[t.task_id] * t.pass_hat_k for t in units) / len(units)
    contrasts = [
        Contrast(
            task_id=t.task_id,
            value=centre + scale[t.task_id] * (t.pass_hat_k - centre),
            variance=scale[t.task_id] ** 2 * pass_k_variance(t.runs, t.passes, summary.k),
        )
        for t in units
    ]
    known = {t.task_id: f for t in units if (f := (families or {}).get(t.task_id, ""))}
    if len({known.get(t.task_id, "") for t in units}) < 2:
        known = {}  # one family (or none): the tasks stand as independent, as for the mean
    design = Design(contrasts=contrasts, families=known, alpha=alpha, seed=seed)
    d = decide(msgspec.structs.replace(design, floor_caution=True))
    note = "" if d.decidable else f"{d.clusters or d.tasks} clusters: no interval possible"
    return msgspec.structs.replace(
        summary, lower=max(0.0, d.lower), upper=min(1.0, d.upper), alpha=alpha, bound_note=note
    )


def _passes(d: Decision, gate: GateName, margin: float | None) -> bool:
    if gate == "improved":
        return d.lower > 0 and clears_gain_floor(d.mean, d.tasks, d.alpha)
    if gate == "no-regression":
        return not d.upper < 0
    if gate == "non-inferior":
        assert margin is not None  # the design checked it
        return -d.lower < margin and d.tasks >= min_tasks(margin, d.alpha)
    return True


def _hidden_gain_reason(d: Decision) -> str:
    """Why a gain whose bound is above 0 is still too small for the tasks (`min_gain`)."""
    assert d.min_gain is not None and d.mean > 0  # the lower bound is above 0
    share = d.mean / (1 + d.mean)
    needed = min(SMALL_SUITE_TASKS, gain_min_tasks(d.mean, d.alpha))
    # Rounded up so that the gain printed is one the gate accepts at this size.
    floor = math.ceil(d.min_gain * 1000) / 10
    way_out = (
        f"{needed} tasks, or a gain of at least {floor:g} points, can show it"
        if floor <= 100
        else f"{needed} tasks can show it (on {d.tasks}, no gain can)"
    )
    return (
        f": above 0, but {d.tasks} tasks are too few to show a gain of "
        f"{d.mean * 100:+.1f} points: a class of tasks making up {share * 100:.1f}% of the "
        f"population, all broken, would cancel it and is absent from {d.tasks} tasks "
        f"{(1 + d.mean) ** -d.tasks * 100:.1f}% of the time (above {d.alpha * 100:g}%); " + way_out
    )


def _reason(
    d: Decision,
    gate: GateName,
    margin: float | None,
    passed: bool,
    at_margin: float | None = None,
) -> str:
    """Why the gate passed or failed, in one sentence with its bound.

    ``at_margin``: for ``non-inferior`` whose bound is below the margin on enough tasks, the
    p-value against a change of exactly ``-margin`` (the gate's null, tested on its own).
    """
    level = f"{(1 - d.alpha) * 100:g}%"
    if gate == "none":
        return "no gate"
    if not d.decidable and d.clusters is None and d.tasks > UNDECIDABLE_CLUSTERS:
        return (
            f"no decision possible about families: all {d.tasks} tasks share one family; "
            "treating tasks as independent assumes no shared family effect; "
            + ("no-regression cannot fail" if gate == "no-regression" else "the gate cannot pass")
        )
    if not d.decidable:
        units = "families" if d.clusters is not None else "tasks"
        return (
            f"no decision possible with {d.clusters or d.tasks} {units}: the test's p-value is "
            "not monotone in the change it is tested against, so a verdict would not order the "
            "evidence; "
            + ("no-regression cannot fail" if gate == "no-regression" else "the gate cannot pass")
        )
    if gate == "improved":
        bound = f"the one-sided {level} lower bound of the change is {d.lower * 100:+.1f} points"
        if d.lower <= 0:
            return bound + ": not above 0"
        return bound + (": above 0" if passed else _hidden_gain_reason(d))
    if gate == "no-regression":
        return f"the one-sided {level} upper bound of the change is {d.upper * 100:+.1f} " + (
            "points: not below 0" if passed else "points: below 0, a significant drop"
        )
    assert margin is not None
    bound = f"the one-sided {level} upper bound of the drop is {-d.lower * 100:.1f} points: "
    if -d.lower >= margin:
        return bound + f"not below the margin of {margin * 100:g} points"
    needed = min_tasks(margin, d.alpha)
    if d.tasks >= needed and not passed and at_margin is not None:
        return bound + (
            f"below the margin of {margin * 100:g} points, yet the test does not reject a "
            f"drop of exactly {margin * 100:g} points (p = {at_margin:.3g}, above "
            f"{d.alpha:g}), the gate's own null, so the gate does not pass"
        )
    if d.tasks >= needed:
        return bound + f"below the margin of {margin * 100:g} points"
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


def _fisher_two_sided(a: TaskTally, b: TaskTally) -> float:
    """Two-sided Fisher exact p of [[a.passes, a.fails], [b.passes, b.fails]], exact integers."""
    n1, n2 = a.runs, b.runs
    k = a.passes + b.passes
    lo, hi = max(0, k - n2), min(k, n1)
    weights = {x: math.comb(n1, x) * math.comb(n2, k - x) for x in range(lo, hi + 1)}
    observed = weights[a.passes]
    return min(1.0, sum(w for w in weights.values() if w <= observed) / math.comb(n1 + n2, k))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input's order.

    Sorted ascending, ``p_(j)`` becomes ``max_{i <= j} min(1, (m - i + 1) p_(i))``: rejecting
    where it is at most a level holds the family-wise error at that level, whatever the
    dependence between the tests.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def task_changes(pairs: Sequence[PairedTask], alpha: float = DEFAULT_ALPHA) -> list[TaskChange]:
    """Every paired task's two-sided Fisher exact test, Holm-adjusted over the tasks.

    ``significant`` is ``p_adjusted <= 2 * alpha`` (each direction at ``alpha``): with no
    change anywhere and each task's runs independent, the chance that any task is significant
    is at most ``2 * alpha``. Runs that share a per-task effect (a side's batch drawn at a
    shifted rate) break that: the list is then descriptive (docs/stats.md gives the rate).
    """
    items = sorted(pairs, key=lambda p: p.task_id)
    raw = [_fisher_two_sided(p.baseline, p.candidate) for p in items]
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
        for p, pv, pa in zip(items, raw, holm_adjust(raw), strict=True)
    ]
