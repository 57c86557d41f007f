"""The compare gate's options as a person gives them, checked and put in `assess`'s units.

People give a margin and a smallest change worth detecting in points and a level either as
``alpha`` or as the older ``z``; `assess` takes fractions and one ``alpha``. Checking here,
with the option's own name in each message, keeps every front end (the command line, a
notebook) refusing the same inputs with the same words.
"""

from __future__ import annotations

import math

import msgspec

from harness_world.stats.decision import GateName
from harness_world.stats.estimators import DEFAULT_ALPHA, StatsInputError

__all__ = ["GateOptions", "gate_options"]


class GateOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The checked options, in the units `assess` takes.

    Attributes:
        alpha: One-sided level of the gate and every bound.
        margin: Non-inferiority margin as a fraction, or None when the gate takes none.
        mde: Smallest change worth detecting as a fraction (for the plan), or None.
    """

    alpha: float
    margin: float | None
    mde: float | None


def _level(alpha: float | None, z: float | None) -> float:
    from scipy import special

    if alpha is not None and z is not None:
        raise StatsInputError("give --alpha or --z, not both")
    if z is not None:
        if not (math.isfinite(z) and z > 0):
            raise StatsInputError(f"--z must be a positive number, got {z}")
        return float(special.ndtr(-z))
    if alpha is None:
        return DEFAULT_ALPHA
    if not (math.isfinite(alpha) and 0 < alpha < 0.5):
        raise StatsInputError(f"--alpha must be strictly between 0 and 0.5, got {alpha}")
    return float(alpha)


def _points(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if not (math.isfinite(value) and 0 < value <= 100):
        raise StatsInputError(f"{name} must be in (0, 100] points, got {value}")
    return value / 100


def gate_options(
    gate: GateName,
    *,
    alpha: float | None = None,
    z: float | None = None,
    margin: float | None = None,
    min_runs: int | None = None,
    plan: bool = False,
    mde: float | None = None,
) -> GateOptions:
    """Check the gate's options together and convert points to fractions.

    Args:
        gate: The gate asked for.
        alpha: One-sided level, or None for the default (or for ``z``).
        z: The level as a normal quantile (``1.96`` means 0.025), instead of ``alpha``.
        margin: Non-inferiority margin in points; required by ``non-inferior`` and refused
            by every other gate.
        min_runs: Runs expected per task and side, or None for the input's own default.
        plan: Whether a sample-size plan is asked for (it needs ``mde``).
        mde: Smallest change worth detecting, in points (only with ``plan``).

    Returns:
        The level and the margin and change as fractions.

    Raises:
        StatsInputError: A value out of range or two options that do not go together,
            named as the command line names them.

    """
    if min_runs is not None and min_runs < 1:
        raise StatsInputError(f"--min-runs must be at least 1, got {min_runs}")
    if gate == "non-inferior" and margin is None:
        raise StatsInputError("--gate non-inferior needs --margin POINTS")
    if gate != "non-inferior" and margin is not None:
        raise StatsInputError("--margin only applies to --gate non-inferior")
    if plan and mde is None:
        raise StatsInputError("--plan needs --mde POINTS (the smallest change worth detecting)")
    if mde is not None and not plan:
        raise StatsInputError("--mde only applies with --plan")
    return GateOptions(
        alpha=_level(alpha, z), margin=_points("--margin", margin), mde=_points("--mde", mde)
    )
