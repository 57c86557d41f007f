"""A skew correction for the studentized mean: Hall's (1992) monotone Edgeworth transformation.

For a studentized mean ``T`` of data with skewness, the first Edgeworth term gives
``P(T <= x) = Phi(x) + gamma_n (2 x^2 + 1) phi(x) / 6 + O(1/n)``, where ``gamma_n`` is the
skewness of the data divided by ``sqrt(n)``. Left-skewed differences (a few tasks losing a lot,
many gaining a little, or pass rates at the ceiling) push ``T``'s upper tail out, so an
uncorrected one-sided test of an improvement, or of non-inferiority, rejects too often.

Hall's transformation removes that term and stays monotone in ``T``::

    g(T) = T + gamma_n T^2 / 3 + gamma_n^2 T^3 / 27 + gamma_n / 6
         = ((1 + gamma_n T / 3)^3 - 1) / gamma_n + gamma_n / 6

With clusters, ``gamma_n = sum_g u_g^3 / (sum_g u_g^2)^(3/2)`` over the (CR2-adjusted)
residual sums ``u_g`` of the clusters; for independent tasks that is the sample skewness over
``sqrt(n)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["cluster_skewness", "hall_inverse", "hall_transform"]


def cluster_skewness(adjusted_sums: Sequence[float]) -> float:
    """``sum u^3 / (sum u^2)^(3/2)`` of adjusted residual sums; 0 when they are all 0."""
    square = math.fsum(u * u for u in adjusted_sums)
    if square <= 0:
        return 0.0
    cube = math.fsum(u * u * u for u in adjusted_sums)
    return float(cube / square**1.5)


def hall_transform(
    t: NDArray[np.float64], gamma: NDArray[np.float64] | float
) -> NDArray[np.float64]:
    """``g(T) = T + gamma T^2 / 3 + gamma^2 T^3 / 27 + gamma / 6`` (elementwise)."""
    import numpy as np

    gt = gamma * t
    # (1 + g t / 3)^3 expanded, divided by g, plus g / 6: no cube of an array needed.
    result: NDArray[np.float64] = t * (1 + gt / 3 + gt * gt / 27) + np.multiply(gamma, 1 / 6)
    return result


def hall_inverse(y: float, gamma: float) -> float:
    """The T with ``g(T) = y``: ``3 (cbrt(1 + gamma (y - gamma / 6)) - 1) / gamma``."""
    import numpy as np

    if abs(gamma) < 1e-9:
        # First order in gamma: exact to rounding here, and free of underflow in x below.
        return y - gamma / 6 - gamma * y * y / 3
    x = gamma * (y - gamma / 6)
    if x > -1:
        # expm1/log1p keep cbrt(1 + x) - 1 accurate when gamma is tiny.
        return 3 * math.expm1(math.log1p(x) / 3) / gamma
    return 3 * (float(np.cbrt(1 + x)) - 1) / gamma
