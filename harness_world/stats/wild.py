"""The test behind `harness_world.stats.decide`: a wild cluster bootstrap-t of a mean.

The test of ``H0: mu = mu0`` uses cluster-level quantities only: the sums ``S_g`` of the
per-task values of cluster g and its size ``n_g``. With the null imposed each residual sum
``R_g = S_g - n_g mu0`` is multiplied by a weight ``v_g`` (Rademacher ``+/-1`` or Webb's six
points ``+/-sqrt(1/2), +/-1, +/-sqrt(3/2)``) and every bootstrap sample is studentized like the
data: CR2 (``sum_g E_g^2 / (1 - n_g / n) / n^2``, Bell & McCaffrey 2002), with the binomial
variance floor applied by the same rule, and, with the skew correction, Hall's (1992) monotone
Edgeworth transformation ``g(T) = T + gamma T^2 / 3 + gamma^2 T^3 / 27 + gamma / 6`` with its own
cluster skewness ``gamma = sum u^3 / (sum u^2)^(3/2)``. One-sided p-values are the shares of
bootstrap statistics at or beyond the observed one (ties count against rejection).

Up to `MAX_ENUMERATED` patterns every one is used (no randomness); above, ``draws`` seeded
patterns plus the identity. Clusters are sorted by (size, |sum|) first (ties keep the caller's
order), so mirroring every value mirrors the p-values and bounds exactly. Everything is
linear or quadratic in ``mu0`` once seven per-pattern sums are precomputed, so `p_curve` gives
the p-values at many trial ``mu0`` in one pass over the patterns (the verb inverts the test over
them). docs/stats.md derives
every formula.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Literal

import attrs

from harness_world.stats.estimators import StatsInputError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    _Arrays3 = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]
    _Arrays4 = tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
    ]

__all__ = [
    "DEFAULT_DRAWS",
    "DEFAULT_SEED",
    "MAX_ENUMERATED",
    "WeightKind",
    "WildClusterTest",
    "bell_mccaffrey_df",
    "cluster_skewness",
    "hall_inverse",
    "hall_transform",
    "wild_cluster_test",
]

WeightKind = Literal["rademacher", "webb"]
"""Rademacher ``+/-1`` (sign flips) or Webb's six-point weights."""

DEFAULT_DRAWS: Final = 1999
"""Random weight patterns when there are too many to enumerate."""

DEFAULT_SEED: Final = 20_260_528
"""Seed of the random patterns (only used above `MAX_ENUMERATED` patterns)."""

MAX_ENUMERATED: Final = 4096
"""Every pattern is used when there are at most this many (12 clusters for sign flips)."""

_WEBB: Final = (
    -math.sqrt(1.5),
    -1.0,
    -math.sqrt(0.5),
    math.sqrt(0.5),
    1.0,
    math.sqrt(1.5),
)
_CHUNK: Final = 2_000_000  # pattern-by-cluster cells per block, to bound memory


def bell_mccaffrey_df(sizes: Sequence[int]) -> float:
    """Satterthwaite (Bell-McCaffrey) degrees of freedom of the CR2 variance of a mean.

    ``(tr B)^2 / tr(B^2)`` with ``B_gh = w_g w_h (n_g [g = h] - n_g n_h / n)`` and
    ``w_g = 1 / (n sqrt(1 - n_g / n))``: ``G - 1`` for equal families, ``n - 1`` for
    singletons, near 1 when one family holds most tasks. Plus one, it is the effective number
    of clusters.

    Raises:
        StatsInputError: Fewer than 2 clusters or an empty one.

    """
    if len(sizes) < 2:
        raise StatsInputError(
            f"cluster-robust inference needs at least 2 clusters, got {len(sizes)}"
        )
    if any(s < 1 for s in sizes):
        raise StatsInputError("every cluster needs at least one task")
    import numpy as np

    n = sum(sizes)
    ng = np.array(sorted(sizes), dtype=np.float64)
    w = 1.0 / (n * np.sqrt(1.0 - ng / n))
    b = np.outer(w, w) * (np.diag(ng) - np.outer(ng, ng) / n)
    trace = float(np.trace(b))
    # Rounded so that equal families give G - 1 and singletons n - 1 exactly, not to the bit.
    return round(trace * trace / float(np.sum(b * b)), 10)


def cluster_skewness(adjusted_sums: Sequence[float]) -> float:
    """``sum u^3 / (sum u^2)^(3/2)`` of adjusted residual sums; 0 when they are all 0."""
    largest = max((abs(u) for u in adjusted_sums), default=0.0)
    if largest == 0:
        return 0.0
    # The ratio is scale-free; dividing by the largest sum first keeps tiny sums from
    # underflowing to a zero denominator.
    scaled = [u / largest for u in adjusted_sums]
    square = math.fsum(v * v for v in scaled)
    cube = math.fsum(v * v * v for v in scaled)
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
    if abs(gamma) < 1e-9:
        # First order in gamma: exact to rounding here, and free of underflow in x below.
        return y - gamma / 6 - gamma * y * y / 3
    x = gamma * (y - gamma / 6)
    if x > -1:
        # expm1/log1p keep cbrt(1 + x) - 1 accurate when gamma is tiny.
        return 3 * math.expm1(math.log1p(x) / 3) / gamma
    import numpy as np

    return 3 * (float(np.cbrt(1 + x)) - 1) / gamma


def _patterns(
    kind: WeightKind, clusters: int, draws: int, seed: int
) -> tuple[NDArray[np.float64], bool]:
    """The weight rows and whether they are every pattern (else random, identity first)."""
    import numpy as np

    points = (-1.0, 1.0) if kind == "rademacher" else _WEBB
    if len(points) ** clusters <= MAX_ENUMERATED:
        rows = np.array(list(itertools.product(points, repeat=clusters)), dtype=np.float64)
        return rows, True
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(points), size=(draws, clusters))
    rows = np.asarray(points, dtype=np.float64)[picks]
    return np.vstack([np.ones((1, clusters)), rows]), False


@attrs.frozen(slots=True, kw_only=True)
class WildClusterTest:
    """A wild cluster bootstrap-t of a mean, prepared for any null value ``mu0``.

    Build it with `wild_cluster_test`. The per-pattern arrays hold, for each weight pattern b,
    ``a_b = sum v S / n`` and ``c_b = sum v n_g / n`` (so ``num* = a - mu0 c``) and the sums
    of powers of ``P - mu0 Q`` (``P = v S - n_g a``, ``Q = v n_g - n_g c``) that give the
    bootstrap variance (squares, weighted by the CR2 factor ``h_g``) and skewness (cubes,
    weighted by ``h_g^1.5``).

    Attributes:
        mean: The observed mean.
        tasks: n.
        clusters: G.
        observed_variance: The CR2 variance of the data.
        floor_variance: The binomial floor's variance (0 for none).
        threshold: Below this a variance is degenerate and the floor replaces it.
        skew_correction: Whether statistics go through Hall's transformation.
        observed_skewness: ``gamma_n`` of the data.
        weights: ``rademacher`` or ``webb``.
        exhaustive: Whether every pattern was used.
        patterns: How many patterns (rows) were used, the identity included.
        seed: The seed of the random patterns (unused when exhaustive).
    """

    mean: float
    tasks: int
    clusters: int
    observed_variance: float
    floor_variance: float
    threshold: float
    skew_correction: bool
    observed_skewness: float
    weights: WeightKind
    exhaustive: bool
    patterns: int
    seed: int
    _a: NDArray[np.float64]
    _c: NDArray[np.float64]
    _squares: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]
    _cubes: tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
    ]

    @property
    def standard_error(self) -> float:
        """The observed standard error: CR2, or the floor when CR2 is degenerate."""
        return math.sqrt(self._floored(self.observed_variance))

    def _floored(self, variance: float) -> float:
        return self.floor_variance if variance < self.threshold else variance

    def _observed(self, mu0: NDArray[np.float64]) -> NDArray[np.float64]:
        t = (self.mean - mu0) / self.standard_error
        return hall_transform(t, self.observed_skewness) if self.skew_correction else t

    def _bootstrap(self, mu0: NDArray[np.float64]) -> NDArray[np.float64]:
        """Every pattern's statistic at each ``mu0`` (a column): rows are nulls.

        The polynomials in ``mu0`` go by Horner's rule in place, and the cube's ``^1.5`` as a
        product with a square root: this is the hot loop of every interval, and fewer
        temporaries of nulls x patterns keep it in cache.
        """
        import numpy as np

        s2, s11, s02 = self._squares
        square = s02 * mu0
        square -= 2 * s11
        square *= mu0
        square += s2
        np.maximum(square, 0.0, out=square)
        variance = square * (1.0 / self.tasks**2)
        if self.threshold > 0:
            variance[variance < self.threshold] = self.floor_variance
        t = self._c * mu0
        np.subtract(self._a, t, out=t)
        positive = variance > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(t, np.sqrt(variance, out=variance), out=t)
        t[~positive] = 0.0
        if not self.skew_correction:
            return t
        c30, c21, c12, c03 = self._cubes
        cube = c03 * mu0
        np.subtract(3 * c12, cube, out=cube)
        cube *= mu0
        cube -= 3 * c21
        cube *= mu0
        cube += c30
        with np.errstate(divide="ignore", invalid="ignore"):
            cube /= square * np.sqrt(square)
        cube[~(square > 0)] = 0.0
        # Hall's g(T) = T (1 + gT / 3 + (gT)^2 / 27) + g / 6, as `hall_transform`, in place.
        gt = cube * t
        out = gt * (1 / 27)
        out += 1 / 3
        out *= gt
        out += 1
        out *= t
        cube *= 1 / 6
        out += cube
        return out

    def p_values(self, mu0: float) -> tuple[float, float]:
        """One-sided p-values at ``mu0``: (against ``mu <= mu0``, against ``mu >= mu0``)."""
        import numpy as np

        up, down = self.p_curve(np.array([mu0], dtype=np.float64))
        return float(up[0]), float(down[0])

    def p_curve(self, mu0s: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Both one-sided p-values at each null value of ``mu0s`` (arrays of its shape).

        Computed in blocks of nulls so that memory stays bounded for many patterns; a block
        of about 60,000 cells keeps each temporary (half a megabyte) in cache, which measured
        twice as fast as blocks four times larger (bench/read.py's report step).
        """
        import numpy as np

        flat = np.asarray(mu0s, dtype=np.float64).ravel()
        up, down = np.empty_like(flat), np.empty_like(flat)
        step = max(1, _CHUNK // (32 * self.patterns))
        for start in range(0, flat.size, step):
            mu0 = flat[start : start + step, None]
            observed = self._observed(mu0)
            boot = self._bootstrap(mu0)
            tol = 1e-9 * np.maximum(1.0, np.abs(observed))
            up[start : start + step] = np.count_nonzero(boot >= observed - tol, axis=1)
            down[start : start + step] = np.count_nonzero(boot <= observed + tol, axis=1)
        up /= self.patterns
        down /= self.patterns
        return up.reshape(np.shape(mu0s)), down.reshape(np.shape(mu0s))


def _pattern_sums(
    rows: NDArray[np.float64],
    total: NDArray[np.float64],
    ng: NDArray[np.float64],
    h: NDArray[np.float64],
    n: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64], _Arrays3, _Arrays4]:
    """Per pattern: ``a``, ``c`` and the weighted sums of powers of ``P`` and ``Q``.

    Computed in blocks of rows so that memory stays bounded for many clusters.
    """
    import numpy as np

    a_parts, c_parts = [], []
    squares: list[list[NDArray[np.float64]]] = [[], [], []]
    cubes: list[list[NDArray[np.float64]]] = [[], [], [], []]
    step = max(1, _CHUNK // ng.size)
    for start in range(0, rows.shape[0], step):
        w = rows[start : start + step]
        a = w @ total / n
        c = w @ ng / n
        p = w * total - np.outer(a, ng)
        q = w * ng - np.outer(c, ng)
        hp, hq = h * p, h * q
        pp, pq, qq = hp * p, hp * q, hq * q
        a_parts.append(a)
        c_parts.append(c)
        squares[0].append(pp.sum(axis=1))
        squares[1].append(pq.sum(axis=1))
        squares[2].append(qq.sum(axis=1))
        root = np.sqrt(h)
        cubes[0].append((root * pp * p).sum(axis=1))
        cubes[1].append((root * pp * q).sum(axis=1))
        cubes[2].append((root * pq * q).sum(axis=1))
        cubes[3].append((root * qq * q).sum(axis=1))
    sq = tuple(np.concatenate(part) for part in squares)
    cu = tuple(np.concatenate(part) for part in cubes)
    return (
        np.concatenate(a_parts),
        np.concatenate(c_parts),
        (sq[0], sq[1], sq[2]),
        (cu[0], cu[1], cu[2], cu[3]),
    )


def wild_cluster_test(
    sums: Sequence[float],
    sizes: Sequence[int],
    *,
    floor_variance: float = 0.0,
    threshold: float = 0.0,
    weights: WeightKind = "rademacher",
    skew_correction: bool = True,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    observed_variance: float | None = None,
) -> WildClusterTest:
    """Prepare the wild cluster bootstrap-t of the mean ``sum S_g / sum n_g``.

    Args:
        sums: ``S_g``: each cluster's sum of per-task values.
        sizes: ``n_g``: each cluster's number of tasks, same order.
        floor_variance: Variance that replaces a degenerate one (0: no floor).
        threshold: A variance below this is degenerate (0: never).
        weights: ``rademacher`` (sign flips) or ``webb``.
        skew_correction: Apply Hall's transformation to every statistic.
        draws: Random patterns when there are more than `MAX_ENUMERATED`.
        seed: Seed of those patterns.
        observed_variance: The data's CR2 variance when the caller computed it exactly
            (so the floor rule sees the same number the caller reports); else computed here.

    Returns:
        The prepared test.

    Raises:
        StatsInputError: Lengths differ, fewer than 2 clusters, an empty cluster, a non-finite
            sum, or ``draws < 99``.

    """
    import numpy as np

    if len(sums) != len(sizes):
        raise StatsInputError(f"{len(sums)} sums but {len(sizes)} sizes")
    if len(sizes) < 2:
        raise StatsInputError(
            f"a wild cluster bootstrap needs at least 2 clusters, got {len(sizes)}"
        )
    if any(s < 1 for s in sizes):
        raise StatsInputError("every cluster needs at least one task")
    if not all(math.isfinite(s) for s in sums):
        raise StatsInputError("sums must be finite")
    if draws < 99:
        raise StatsInputError(f"draws must be at least 99, got {draws}")
    # By size and magnitude only (stable): negating every sum keeps the order, so mirrored
    # data give exactly mirrored p-values even with random patterns.
    order = sorted(zip(sizes, sums, strict=True), key=lambda z: (z[0], abs(z[1])))
    ng = np.array([s for s, _ in order], dtype=np.float64)
    total = np.array([v for _, v in order], dtype=np.float64)
    n = int(sum(sizes))
    mean = math.fsum(sums) / n
    h = n / (n - ng)
    rows, exhaustive = _patterns(weights, len(order), draws, seed)
    a, c, sq, cu = _pattern_sums(rows, total, ng, h, n)
    residual = total - ng * mean
    if observed_variance is None:
        observed_variance = float(np.sum(h * residual**2)) / n**2
    adjusted = residual * np.sqrt(h)
    square = float(np.sum(adjusted**2))
    skewness = float(np.sum(adjusted**3)) / square**1.5 if square > 0 else 0.0
    return WildClusterTest(
        mean=mean,
        tasks=n,
        clusters=len(order),
        observed_variance=observed_variance,
        floor_variance=floor_variance,
        threshold=threshold,
        skew_correction=skew_correction,
        observed_skewness=skewness,
        weights=weights,
        exhaustive=exhaustive,
        patterns=int(rows.shape[0]),
        seed=seed,
        a=a,
        c=c,
        squares=sq,
        cubes=cu,
    )
