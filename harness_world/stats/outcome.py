"""One computed outcome of a comparison, which every rendering of ``compare`` shows.

The terminal report, ``--json`` and ``--html`` once each derived their verdict and band on
their own (the HTML from the descriptive paired band, the terminal from the gate's decision),
and they disagreed. `outcome_of` computes the verdict, the band, the flips and the Holm list
once, from the gate's decision; the three renderers only format it.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from harness_world.stats.decision import GateName, TaskChange
from harness_world.stats.estimators import Comparison, Flip, Verdict
from harness_world.stats.gate import GateResult

__all__ = ["ComparisonOutcome", "outcome_of"]


class ComparisonOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What a comparison concluded, as every output shows it.

    Attributes:
        baseline: Baseline configuration.
        candidate: Candidate configuration.
        tasks: Paired tasks.
        change: Mean per-task change (candidate - baseline), a fraction.
        lower: The gate's one-sided lower bound of the change.
        upper: The gate's one-sided upper bound of the change.
        band_low: Lower edge of the noise band around 0, ``change - upper`` (<= 0).
        band_high: Upper edge, ``change - lower`` (>= 0). The change is above the band exactly
            when ``lower > 0``, below it exactly when ``upper < 0``.
        verdict: ``above``, ``below`` or ``inside`` the band.
        alpha: One-sided level of the bounds.
        method: How the decision was made, in words.
        gate: The gate applied.
        gate_passed: Whether it passed.
        reason: Why, in one sentence.
        flips: Solid <-> broken flips.
        significant_changes: Per-task changes significant after the Holm correction.
        warnings: Every warning of the comparison (few tasks, few families, ...).

    """

    baseline: str
    candidate: str
    tasks: int
    change: float
    lower: float
    upper: float
    band_low: float
    band_high: float
    verdict: Verdict
    alpha: float
    method: str
    gate: GateName
    gate_passed: bool
    reason: str
    flips: list[Flip]
    significant_changes: list[TaskChange]
    warnings: list[str]


def _method(result: GateResult) -> str:
    d = result.observed
    over = f"{d.clusters} families" if d.clusters is not None else f"{d.tasks} tasks"
    if d.method in ("cr2-t", "cr1-t"):
        return f"{d.method[:3].upper()} t({d.df:.1f}) over {over}"
    weights = "sign-flip" if d.method == "sign-flip" else "Webb-weight"
    patterns = (
        f"all {d.patterns} sign patterns"
        if d.resampling == "exhaustive"
        else f"{d.patterns} patterns, seed {d.seed}"
    )
    skew = ", skew-corrected" if d.skew_corrected else ""
    floor = "; the spread is degenerate: the more cautious of it and t on the floor" * (
        d.floor_applied
    )
    return f"{weights} wild bootstrap-t over {over} (CR2{skew}; {patterns}{floor})"


def outcome_of(
    comparison: Comparison, result: GateResult, warnings: Sequence[str] = ()
) -> ComparisonOutcome:
    """The outcome of a comparison, from the gate's observed decision."""
    d = result.observed
    verdict: Verdict = "above" if d.lower > 0 else "below" if d.upper < 0 else "inside"
    return ComparisonOutcome(
        baseline=comparison.baseline,
        candidate=comparison.candidate,
        tasks=d.tasks,
        change=d.mean,
        lower=d.lower,
        upper=d.upper,
        band_low=d.mean - d.upper,
        band_high=d.mean - d.lower,
        verdict=verdict,
        alpha=d.alpha,
        method=_method(result),
        gate=result.gate,
        gate_passed=result.passed,
        reason=result.reason,
        flips=list(result.flips),
        significant_changes=list(result.significant_changes),
        warnings=[*warnings, *result.warnings],
    )
