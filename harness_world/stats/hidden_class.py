"""How many tasks a non-inferiority verdict needs before a hidden broken class could show.

A non-inferiority gate claims that the candidate's mean pass rate over the population of tasks
is at most ``m`` below the baseline's. Consider the null in which a fraction ``m`` of that
population breaks completely (the baseline always passes those tasks, the candidate never) and
nothing else changes: the mean drop is exactly ``m``. A suite of ``n`` tasks drawn from it holds
none of the broken ones with probability ``(1 - m) ** n``, and then its runs are distributed
exactly as under "no change at all". So for *any* test, its false-pass rate at that null is at
least ``(1 - m) ** n`` times its power against no change; no statistic computed from the sample
can see a class the sample does not hold. Breakage that is partial (a drop ``d < 1`` on a
fraction ``m / d``) hides less often, so complete breakage is the worst case of this kind.

The gate therefore passes ``non-inferior`` only when ``(1 - m) ** n <= alpha``: then even a test
that always passed under no change would false-pass at most ``alpha`` of the time at this null.
That is a necessary condition, not a sufficient one (the test on the mean still has to reject);
below it, what would help is more tasks or a wider margin, and `min_tasks` / `min_margin` say
how many and how wide. Tasks are counted, not families: a class is a set of tasks, and counting
families instead would make every realistic suite too small.

The same argument bounds ``improved``. Let a share ``g / (1 + g)`` of the population break
completely while every other task gains ``g``: the mean change is exactly 0, and a suite of
``n`` tasks holds no broken task with probability ``(1 + g) ** -n``, when it shows a uniform
gain of ``g``. An observed gain below `min_gain` (``alpha ** (-1 / n) - 1``) is therefore one
that such a null shows more often than ``alpha``; below `SMALL_SUITE_TASKS` paired tasks (where
the bootstrap's level is not assured either) ``improved`` needs the observed gain to reach it.
From that size on the gate relies on its measured level and does not apply the floor, which
would cost most of the power of 30- to 40-task suites against gains of 10 points.
"""

from __future__ import annotations

import math
from typing import Final

__all__ = [
    "SMALL_SUITE_TASKS",
    "clears_gain_floor",
    "gain_floor",
    "gain_min_tasks",
    "min_gain",
    "min_margin",
    "min_tasks",
    "miss_probability",
]

SMALL_SUITE_TASKS: Final = 30
"""Below this many paired tasks ``improved`` needs its observed gain to reach `min_gain`."""


def _check(alpha: float) -> None:
    if not (math.isfinite(alpha) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def miss_probability(margin: float, tasks: int) -> float:
    """The chance that ``tasks`` sampled tasks hold none of a class making up ``margin``.

    Args:
        margin: The class's share of the task population (the non-inferiority margin), > 0.
        tasks: Tasks in the suite, >= 0.

    Returns:
        ``(1 - margin) ** tasks`` (0 for a margin of 1 or more).

    Raises:
        ValueError: A margin that is not positive and finite, or a negative task count.

    """
    if not (math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be positive and finite, got {margin}")
    if tasks < 0:
        raise ValueError(f"tasks must be >= 0, got {tasks}")
    return 0.0 if margin >= 1 else (1 - margin) ** tasks


def min_tasks(margin: float, alpha: float) -> int:
    """The fewest tasks for which a broken class of size ``margin`` hides at most ``alpha``.

    Args:
        margin: The non-inferiority margin as a fraction, > 0.
        alpha: The gate's one-sided level, in (0, 1).

    Returns:
        The smallest ``n`` with ``(1 - margin) ** n <= alpha`` (1 for a margin of 1 or more).

    Raises:
        ValueError: A bad margin or alpha.

    Example:
        >>> min_tasks(0.10, 0.025)
        36
        >>> min_tasks(0.15, 0.025)
        23

    """
    _check(alpha)
    miss_probability(margin, 0)
    if margin >= 1:
        return 1
    n = max(1, math.ceil(math.log(alpha) / math.log1p(-margin)))
    # The logarithms can land a hair either side of an exact power; settle on the inequality.
    while n > 1 and miss_probability(margin, n - 1) <= alpha:
        n -= 1
    while miss_probability(margin, n) > alpha:
        n += 1
    return n


def min_margin(tasks: int, alpha: float) -> float:
    """The narrowest margin that ``tasks`` tasks can show non-inferiority at.

    Args:
        tasks: Tasks in the suite, >= 1.
        alpha: The gate's one-sided level, in (0, 1).

    Returns:
        ``1 - alpha ** (1 / tasks)``: a class of this share of the population is absent from
        ``tasks`` tasks with probability exactly ``alpha``.

    Raises:
        ValueError: A bad task count or alpha.

    Example:
        >>> round(min_margin(30, 0.025), 4)
        0.1157

    """
    _check(alpha)
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    return -math.expm1(math.log(alpha) / tasks)


def min_gain(tasks: int, alpha: float) -> float:
    """The smallest uniform gain that a hidden broken class shows at most ``alpha`` of the time.

    Args:
        tasks: Tasks in the suite, >= 1.
        alpha: The gate's one-sided level, in (0, 1).

    Returns:
        ``alpha ** (-1 / tasks) - 1``: with a share ``g / (1 + g)`` of the population broken
        and the rest gaining ``g`` (mean change 0), ``tasks`` tasks hold no broken one with
        probability ``(1 + g) ** -tasks``, which is ``alpha`` exactly at this gain.

    Raises:
        ValueError: A bad task count or alpha.

    Example:
        >>> round(min_gain(20, 0.025), 4)
        0.2025
        >>> round(min_gain(10, 0.025), 4)
        0.4461

    """
    _check(alpha)
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    return math.expm1(-math.log(alpha) / tasks)


def gain_min_tasks(gain: float, alpha: float) -> int:
    """The fewest tasks on which an observed uniform gain ``gain`` clears `min_gain`.

    Args:
        gain: The observed mean gain as a fraction, > 0.
        alpha: The gate's one-sided level, in (0, 1).

    Returns:
        The smallest ``n`` with ``(1 + gain) ** -n <= alpha``: `min_tasks` of the broken
        share ``gain / (1 + gain)`` that cancels the gain.

    Raises:
        ValueError: A gain that is not positive and finite, or a bad alpha.

    Example:
        >>> gain_min_tasks(0.10, 0.025)
        39

    """
    if not (math.isfinite(gain) and gain > 0):
        raise ValueError(f"gain must be positive and finite, got {gain}")
    return min_tasks(gain / (1 + gain), alpha)


def gain_floor(tasks: int, alpha: float) -> float | None:
    """The observed gain ``improved`` needs on ``tasks`` paired tasks, beyond its bound.

    Args:
        tasks: Paired tasks, >= 1.
        alpha: The gate's one-sided level, in (0, 1).

    Returns:
        `min_gain` below `SMALL_SUITE_TASKS` tasks; None (no floor) from that size on.

    Raises:
        ValueError: A bad task count or alpha.

    """
    return None if tasks >= SMALL_SUITE_TASKS else min_gain(tasks, alpha)


def clears_gain_floor(gain: float, tasks: int, alpha: float) -> bool:
    """Whether an observed mean gain may pass ``improved`` on ``tasks`` paired tasks.

    Args:
        gain: The observed mean change as a fraction.
        tasks: Paired tasks, >= 1.
        alpha: The gate's one-sided level, in (0, 1).

    Returns:
        True from `SMALL_SUITE_TASKS` tasks on; below, when ``gain >= min_gain(tasks, alpha)``.

    Raises:
        ValueError: A bad task count or alpha.

    """
    floor = gain_floor(tasks, alpha)
    return floor is None or gain >= floor
