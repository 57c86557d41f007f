"""Small-sample cluster-robust inference for a mean: CR2 and Bell-McCaffrey degrees of freedom.

The gate's estimand is the mean per-task difference, an intercept-only regression with one
observation per task and task families as clusters. For that model the bias-reduced CR2
estimator (Bell & McCaffrey 2002) and its Satterthwaite degrees of freedom have closed forms:

* The hat matrix is ``J / n``, so cluster g's block of ``I - H`` is ``I - J / n`` on its
  ``n_g`` tasks, whose inverse square root maps a vector of ones to
  ``1 / sqrt(1 - n_g / n)`` times itself. Hence::

      V_CR2 = sum_g U_g^2 / (1 - n_g / n) / n^2,     U_g = sum_{i in g} (d_i - mean)

  With equal families this is exactly CR1 (``G / (G - 1)`` times the plug-in form); with every
  task its own family it is the paired ``sd^2 / n``.
* Under the working model of independent, equal-variance tasks, ``V_CR2`` is a quadratic form
  ``sum_j lambda_j chi^2_1`` with ``lambda`` the eigenvalues of the G x G matrix
  ``B_gh = w_g w_h (n_g [g = h] - n_g n_h / n)``, ``w_g = 1 / (n sqrt(1 - n_g / n))``. The
  Bell-McCaffrey degrees of freedom are ``(tr B)^2 / tr(B^2)``: ``G - 1`` for equal families,
  ``n - 1`` for singletons, and close to 1 when one family holds most tasks.

`effective_clusters` is that df plus one: the number of equal families that would give the
test the same degrees of freedom. Everything here depends on the family *sizes* only, except
`cr2_variance`, which also takes the residual sums.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from harness_world.stats.estimators import StatsInputError

__all__ = ["bell_mccaffrey_df", "cr2_adjustments", "cr2_variance", "effective_clusters"]


def _check_sizes(sizes: Sequence[int]) -> int:
    if len(sizes) < 2:
        raise StatsInputError(
            f"cluster-robust inference needs at least 2 clusters, got {len(sizes)}"
        )
    if any(s < 1 for s in sizes):
        raise StatsInputError("every cluster needs at least one task")
    return sum(sizes)


def cr2_adjustments(sizes: Sequence[int]) -> list[float]:
    """``1 / (1 - n_g / n)`` per cluster: the factor CR2 puts on each squared residual sum.

    Raises:
        StatsInputError: Fewer than 2 clusters or an empty one.

    """
    n = _check_sizes(sizes)
    return [n / (n - s) for s in sizes]


def cr2_variance(residual_sums: Sequence[float], sizes: Sequence[int]) -> float:
    """CR2 variance of a mean: ``sum_g U_g^2 / (1 - n_g / n) / n^2``.

    Args:
        residual_sums: ``U_g``, the sum of ``d_i - mean`` over cluster g's tasks.
        sizes: ``n_g``, the tasks in cluster g, same order.

    Returns:
        The variance (0 when every residual sum is 0).

    Raises:
        StatsInputError: Lengths differ, fewer than 2 clusters, an empty cluster.

    """
    if len(residual_sums) != len(sizes):
        raise StatsInputError(f"{len(residual_sums)} residual sums but {len(sizes)} sizes")
    n = _check_sizes(sizes)
    adjust = cr2_adjustments(sizes)
    return math.fsum(u * u * a for u, a in zip(residual_sums, adjust, strict=True)) / n**2


def bell_mccaffrey_df(sizes: Sequence[int]) -> float:
    """Satterthwaite (Bell-McCaffrey) degrees of freedom of the CR2 variance of a mean.

    ``(tr B)^2 / tr(B^2)`` with ``B`` as in the module docstring; sizes are sorted first, so
    the order of clusters does not matter.

    Raises:
        StatsInputError: Fewer than 2 clusters or an empty one.

    """
    import numpy as np

    n = _check_sizes(sizes)
    ng = np.array(sorted(sizes), dtype=np.float64)
    w = 1.0 / (n * np.sqrt(1.0 - ng / n))
    b = np.outer(w, w) * (np.diag(ng) - np.outer(ng, ng) / n)
    trace = float(np.trace(b))
    # Rounded so that equal families give G - 1 and singletons n - 1 exactly, not to the bit.
    return round(trace * trace / float(np.sum(b * b)), 10)


def effective_clusters(sizes: Sequence[int]) -> float:
    """Bell-McCaffrey df + 1: how many equal families would give the same degrees of freedom.

    Equal to G for equal families and to n for singletons; about 2.4 for sizes
    ``[16, 1, 1, 1, 1]``.
    """
    return bell_mccaffrey_df(sizes) + 1.0
