"""Decisions that stay honest across several looks and several candidates.

A gate at level alpha holds its error once. Looking again after every few new tasks and stopping
at the first pass, or reporting several candidates against one baseline, spends it again each
time. `look_level` gives the one-sided level of look j of K planned looks under O'Brien-Fleming
alpha spending (Lan-DeMets), so K looks together spend alpha; `repeated_look_warnings` says when
an earlier decision on fewer runs of the same comparison is known (a decision log the user
keeps) and the looks were not planned; `assess_candidates` decides several candidates against one
baseline with Holm's step-down over the gate's p-values, so the family-wise error across them is
alpha. docs/stats.md, "Looks and candidates", derives each.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, Final, Literal

import msgspec

from harness_world.stats.decision import Design, GateName, gate_p_value, holm_adjust
from harness_world.stats.estimators import (
    DEFAULT_ALPHA,
    Comparison,
    RunRow,
    StatsInputError,
    compare_results,
)
from harness_world.stats.gate import GateResult, assess, task_families
from harness_world.stats.wild import DEFAULT_SEED

__all__ = [
    "MAX_LOOKS",
    "CandidateDecision",
    "Candidates",
    "LoggedDecision",
    "LookLevel",
    "assess_candidates",
    "look_level",
    "repeated_look_warnings",
]

MAX_LOOKS: Final = 50
"""The most planned looks `look_level` computes boundaries for."""

_GRID: Final = 3201  # points of the score's density on [-8, 8]


class LookLevel(msgspec.Struct, frozen=True, kw_only=True):
    """The level of one planned look under O'Brien-Fleming alpha spending.

    Attributes:
        look: This look, j (1-based).
        of: Planned looks, K.
        alpha: The one-sided level all K looks spend together.
        spending: ``obrien-fleming`` (Lan-DeMets: ``a(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt t)``
            at information ``t = j / K``).
        spent: ``a(j / K)``: what looks 1..j may spend together.
        boundary_z: The z a look-j statistic must exceed (no earlier look having passed),
            found by integrating the score's path through the earlier boundaries.
        nominal_alpha: ``1 - Phi(boundary_z)``: the one-sided level this look decides at.

    """

    look: int
    of: int
    alpha: float
    spending: Literal["obrien-fleming"]
    spent: float
    boundary_z: float
    nominal_alpha: float


def _spent(t: float, alpha: float) -> float:
    from scipy import special

    return float(2 - 2 * special.ndtr(special.ndtri(1 - alpha / 2) / math.sqrt(t)))


def _carried(density: Any, grid: Any, gap: float) -> Any:
    """A density on the grid after a Gaussian step of variance ``gap`` (a convolution)."""
    import numpy as np

    step = float(grid[1] - grid[0])
    half = math.ceil(9 * math.sqrt(gap) / step)
    offsets = np.arange(-half, half + 1) * step
    kernel = np.exp(-(offsets**2) / (2 * gap)) / math.sqrt(2 * math.pi * gap) * step
    return np.convolve(density, kernel, mode="full")[half : half + len(grid)]


@cache
def _boundaries(of: int, alpha: float) -> tuple[float, ...]:
    """Every look's z boundary, in order.

    The score ``S_t = Z_t sqrt(t)`` is Brownian in the information ``t``; the density of the
    paths that have crossed no boundary yet is carried look to look on a grid, and each
    boundary solves "crossing first at this look has the chance spending allows".
    """
    import numpy as np
    from scipy import optimize, special

    grid = np.linspace(-8.0, 8.0, _GRID)
    step = float(grid[1] - grid[0])
    out: list[float] = []
    previous_t, previous_spent, density = 0.0, 0.0, None
    for j in range(1, of + 1):
        t = j / of
        target = _spent(t, alpha) - previous_spent
        if density is None:
            moved = np.exp(-(grid**2) / (2 * t)) / math.sqrt(2 * math.pi * t)
            b = float(special.ndtri(1 - target))
        else:
            moved = _carried(density, grid, t - previous_t)
            gap = t - previous_t

            def cross(
                x: float, d: Any = density, g: float = gap, tt: float = t, aim: float = target
            ) -> float:
                tail = special.ndtr((grid - x * math.sqrt(tt)) / math.sqrt(g))
                return float(np.sum(d * tail) * step) - aim

            b = float(optimize.brentq(cross, -2.0, 40.0, xtol=1e-12))
        out.append(b)
        density = np.where(grid < b * math.sqrt(t), moved, 0.0)
        previous_t, previous_spent = t, _spent(t, alpha)
    return tuple(out)


def look_level(look: int, of: int, alpha: float = DEFAULT_ALPHA) -> LookLevel:
    """The one-sided level of look ``look`` of ``of`` equally spaced planned looks.

    Raises:
        StatsInputError: ``of`` outside ``1..MAX_LOOKS``, ``look`` outside ``1..of``, or a bad
            alpha.

    """
    from scipy import special

    if not (math.isfinite(alpha) and 0 < alpha < 0.5):
        raise StatsInputError(f"alpha must be strictly between 0 and 0.5, got {alpha}")
    if not 1 <= of <= MAX_LOOKS:
        raise StatsInputError(f"--of must be 1 to {MAX_LOOKS} planned looks, got {of}")
    if not 1 <= look <= of:
        raise StatsInputError(f"--look must be 1 to --of ({of}), got {look}")
    z = _boundaries(of, alpha)[look - 1]
    return LookLevel(
        look=look,
        of=of,
        alpha=alpha,
        spending="obrien-fleming",
        spent=_spent(look / of, alpha),
        boundary_z=z,
        nominal_alpha=float(special.ndtr(-z)),
    )


class LoggedDecision(msgspec.Struct, frozen=True, kw_only=True):
    """One decision as a decision log keeps it (a JSON line per ``compare --decision-log``).

    Attributes:
        baseline: The baseline configuration.
        candidate: The candidate configuration.
        gate: The gate asked.
        tasks: Paired tasks decided on.
        runs: Runs on both sides together.
        look: The planned look (``--look``), or null when none was planned.
        of: The planned looks (``--of``), or null.
        passed: Whether the gate passed.

    """

    baseline: str
    candidate: str
    gate: GateName
    tasks: int
    runs: int
    look: int | None = None
    of: int | None = None
    passed: bool = False


def repeated_look_warnings(earlier: Iterable[LoggedDecision], now: LoggedDecision) -> list[str]:
    """Warnings when the log holds an earlier decision on fewer runs of this comparison.

    Looking again as runs grow and stopping at the first pass raises the false-pass rate
    with every look (at one-sided 2.5%, about 8% after ten looks, docs/stats.md), unless the
    looks were planned: each logged look and this one name the same ``of`` and this look's
    number is above every earlier one.
    """
    same = [
        e
        for e in earlier
        if (e.baseline, e.candidate, e.gate) == (now.baseline, now.candidate, now.gate)
        and e.runs < now.runs
    ]
    if not same:
        return []
    planned = now.of is not None and all(
        e.of == now.of and e.look is not None and now.look is not None and e.look < now.look
        for e in same
    )
    if planned:
        return []
    return [
        f"the decision log holds {len(same)} earlier decision(s) of {now.gate} on "
        f"{now.candidate!r} against {now.baseline!r} on fewer runs "
        f"({min(e.runs for e in same)} to {max(e.runs for e in same)}, now {now.runs}): "
        "deciding again as runs grow inflates the false-pass rate unless the looks were "
        "planned (--look J --of K spends the level across them)"
    ]


class CandidateDecision(msgspec.Struct, frozen=True, kw_only=True):
    """One candidate's decision within a Holm step-down over several candidates.

    Attributes:
        candidate: The candidate configuration.
        p_value: The gate's p-value (`harness_world.stats.decision.gate_p_value`).
        p_adjusted: Holm-adjusted over the candidates.
        level: The one-sided level its shown decision was made at: ``alpha / (m - r)`` at
            its rank r (0 for the smallest p-value) among m candidates.
        passed: Whether its gate passed after the correction.
        reason: Why, in one sentence.
        comparison: The descriptive comparison with the baseline.
        result: The gate's result at ``level`` (bounds, missing data, warnings).

    """

    candidate: str
    p_value: float
    p_adjusted: float
    level: float
    passed: bool
    reason: str
    comparison: Comparison
    result: GateResult


class Candidates(msgspec.Struct, frozen=True, kw_only=True):
    """Several candidates decided against one baseline, the family-wise error held by Holm.

    Attributes:
        baseline: The baseline configuration.
        gate: The gate asked of every candidate.
        alpha: The family-wise one-sided level across the candidates.
        correction: ``holm`` (``bonferroni`` for ``--gate none``: simultaneous bounds at
            ``alpha / m``, no step-down without a gate).
        passed: Whether every candidate's gate passed.
        candidates: Each candidate's decision, in the order given.

    """

    baseline: str
    gate: GateName
    alpha: float
    correction: Literal["holm", "bonferroni"]
    passed: bool
    candidates: list[CandidateDecision]


def _holm_reason(gate: GateName, shown: GateResult, p_adj: float, alpha: float) -> str:
    rejected = p_adj <= alpha
    consistent = shown.observed.passed == (rejected if gate != "no-regression" else not rejected)
    if gate == "none" or consistent:
        return shown.reason
    return (
        f"Holm-adjusted p-value {p_adj:.3g} "
        + ("is not at most" if not rejected else "is at most")
        + f" {alpha:g}: a candidate with a smaller p-value stopped the step-down"
    )


def assess_candidates(
    rows: Iterable[RunRow],
    baseline: str,
    candidates: Sequence[str],
    *,
    gate: GateName = "none",
    alpha: float = DEFAULT_ALPHA,
    **options: Any,
) -> Candidates:
    """`assess` each candidate against ``baseline`` with Holm's step-down across them.

    Each candidate's gate p-value orders them; the one at rank r (0-based) of m is decided at
    ``alpha / (m - r)`` and passes (``no-regression``: fails) only when its Holm-adjusted
    p-value is at most ``alpha``, so the chance that any candidate passes ``improved`` or
    ``non-inferior`` falsely (fails ``no-regression`` falsely) is at most ``alpha`` whatever
    their dependence. ``--gate none`` shows every candidate's bounds at ``alpha / m``.
    ``options`` are `assess`'s (margin, min_runs, allow_missing, ...).

    Raises:
        StatsInputError: Fewer than 2 candidates, a repeated one, the baseline among them,
            or what `assess` refuses.

    """
    row_list = list(rows)
    if len(candidates) < 2 or len(set(candidates)) != len(candidates):
        raise StatsInputError("several candidates means at least 2 different ones")
    if baseline in candidates:
        raise StatsInputError(f"the baseline {baseline!r} is also a candidate")
    m = len(candidates)
    paired = {c: compare_results(row_list, baseline, c, min_runs=1) for c in candidates}
    p = [_gate_p(paired[c], row_list, gate, alpha, options) for c in candidates]
    adjusted = holm_adjust(p)
    rank = {i: r for r, i in enumerate(sorted(range(m), key=lambda i: (p[i], i)))}
    out: list[CandidateDecision] = []
    for i, c in enumerate(candidates):
        level = alpha / m if gate == "none" else alpha / (m - rank[i])
        comparison, shown = assess(row_list, baseline, c, gate=gate, alpha=level, **options)
        rejected = adjusted[i] <= alpha
        if gate == "no-regression":
            passed = not rejected and not (shown.missing and not shown.allow_missing)
        else:  # the level's own checks too: missing data, tasks enough for the margin
            passed = gate == "none" or (rejected and shown.passed)
        out.append(
            CandidateDecision(
                candidate=c,
                p_value=p[i],
                p_adjusted=adjusted[i],
                level=level,
                passed=passed,
                reason=_holm_reason(gate, shown, adjusted[i], alpha),
                comparison=comparison,
                result=shown,
            )
        )
    return Candidates(
        baseline=baseline,
        gate=gate,
        alpha=alpha,
        correction="bonferroni" if gate == "none" else "holm",
        passed=all(c.passed for c in out),
        candidates=out,
    )


def _gate_p(
    comparison: Comparison, rows: Sequence[RunRow], gate: GateName, alpha: float, options: Any
) -> float:
    """The gate's p-value of one candidate's observed design, as `assess` built it."""
    if gate == "none":
        return 1.0
    families = task_families(rows) if options.get("use_clusters", True) else {}
    design = Design(
        pairs=comparison.paired,
        families=families,
        gate=gate,
        margin=options.get("margin"),
        alpha=alpha,
        seed=options.get("seed", DEFAULT_SEED),
        method=options.get("method", "webb"),
        skew_correction=options.get("skew_correction", True),
    )
    return gate_p_value(design)
