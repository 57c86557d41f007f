"""Per-dimension score sheets over layered results: pure functions of a list of them.

`layered_tables` computes the sheets, `render_layered` prints them as ``report`` and
``conditions`` show them.

Every figure reads `harness_world.grading.LayeredResult` values (one per judged record, as the
verifier computed them) and nothing else. Records are grouped by their task's primary
dimension (a task without one is ``unassigned``); each group and the pooled ``all`` row hold:

- **admitted** records (refused ones are counted, never scored);
- **agent success**: admitted records with no failed agent criterion (Z_A empty);
- **agent score**: the mean over records of passed / all agent criteria;
- **harness micro**: passed / all harness criteria, pooled over records; **harness macro**:
  the mean over records of their passed fraction;
- **layered score**: the mean over records of the equal-weight average of the two per-record
  layer scores (a record with one layer only counts that layer);
- **joint states** as proportions of admitted records (clean, harness_only, agent_only, both:
  F_H and Z_A empty or not); they sum to 1;
- **link rate** ``|L_d| / |J_d|``: among records failing in both layers (J_d), those with an
  activated candidate link (L_d); the pooled rate is ``sum |L_d| / sum |J_d|``, never a mean of
  the dimension rates (shown ×100 as a percentage);
- **F_H**, **B** and **Z_H = F_H minus B** per harness criterion (records where it failed, was
  bypassed, failed and was not bypassed), and the records with a nonempty F_H and Z_H;
- **claims** at each level of the ladder, each counted apart: failed harness verdicts, activated
  links, confirmed defects and validated links. The last two come only from the standing
  review records beside the run (`harness_world.running.reviews.standing_claims`), never from
  a lower level: an activated link with no review is an activation, nothing more. A claim
  review that names no failed harness criterion (no activated link) of its record is counted
  as unmatched, not as a claim.

Intervals: a proportion has its Wilson 95 % interval over records, and beside it a
cluster-robust one when some task has more than one record (records of one task are not
independent: the per-record 0/1 values, clustered by task, CR1 factor, normal quantile). A
mean has the cluster interval (by task) when tasks repeat and the independent one otherwise.
Harness micro pools criteria, which are not independent within a record: its Wilson interval
is descriptive, its cluster interval (records clustered by task, ratio linearised) the one to
read.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Literal

import attrs
import msgspec

from harness_world.analysis.tables import render_table
from harness_world.grading.layers import JOINT_STATES, LayeredResult
from harness_world.grading.taxonomy import DIMENSIONS
from harness_world.running.reviews import Review, link_name
from harness_world.stats import wilson_interval

__all__ = [
    "ALL",
    "CONFIDENCE",
    "UNASSIGNED",
    "ClaimLevels",
    "DimensionSheet",
    "LayeredTables",
    "Mean",
    "Proportion",
    "dimension_sheet",
    "layered_tables",
    "render_layered",
]

ALL = "all"
UNASSIGNED = "unassigned"
CONFIDENCE = 0.95
_Z = 1.959963984540054  # the normal quantile of CONFIDENCE, two-sided


class Proportion(msgspec.Struct, frozen=True, kw_only=True):
    """A count over a denominator with its intervals (null figures when n = 0).

    Attributes:
        count: Items counted.
        n: The denominator.
        rate: count / n (null when n = 0: undefined, never zero).
        low: Wilson 95 % lower bound.
        high: Wilson 95 % upper bound.
        cluster_low: Cluster-robust lower bound (null: tasks do not repeat, or one cluster).
        cluster_high: Cluster-robust upper bound.
    """

    count: int
    n: int
    rate: float | None
    low: float | None
    high: float | None
    cluster_low: float | None = None
    cluster_high: float | None = None


class Mean(msgspec.Struct, frozen=True, kw_only=True):
    """A mean of per-record values in [0, 1] with a 95 % interval.

    Attributes:
        mean: The mean (null when there is no value).
        low: Lower bound, clipped to 0 (null with fewer than two values).
        high: Upper bound, clipped to 1.
        n: Values.
        method: ``cluster`` (records clustered by task, CR1 factor: tasks repeat) or
            ``independent`` (every record its own cluster).
    """

    mean: float | None
    low: float | None
    high: float | None
    n: int
    method: Literal["cluster", "independent"]


class ClaimLevels(msgspec.Struct, frozen=True, kw_only=True):
    """Claims at each level over admitted records, each a (record, criterion or link) pair.

    Attributes:
        failed_verdicts: Failed harness criterion verdicts (F_H, raw).
        activated_links: Activated candidate links.
        confirmed_defects: Failed harness criteria a standing review confirmed as defects.
        validated_links: Activated links a standing review validated.
        unmatched: Standing claim reviews of these records naming no failed harness criterion
            (or no activated link) of theirs: not claims, shown so they are not lost.
    """

    failed_verdicts: int = 0
    activated_links: int = 0
    confirmed_defects: int = 0
    validated_links: int = 0
    unmatched: int = 0


class DimensionSheet(msgspec.Struct, frozen=True, kw_only=True):
    """The two score sheets of one dimension (or of all records).

    Attributes:
        dimension: A dimension name, ``unassigned`` or ``all``.
        records: Layered results read (admitted or not).
        admitted: Records admitted to scoring.
        tasks: Distinct tasks among the admitted records.
        agent_success: Admitted records with no failed agent criterion.
        agent_score: Mean per-record fraction of passed agent criteria.
        harness_micro: Passed / all harness criteria, pooled.
        harness_macro: Mean per-record fraction of passed harness criteria.
        layered_score: Mean per-record equal-weight average of the two layer scores.
        joint: Joint state -> its proportion of admitted records.
        joint_failures: Records failing in both layers (``|J_d|``).
        linked: Those among them with an activated link (``|L_d|``).
        link_rate: linked / joint_failures.
        harness_failed: Harness criterion -> records where it failed (F_H, raw).
        bypassed: Harness criterion -> records where its failure was bypassed (B).
        harness_adjusted: Harness criterion -> records where it failed, not bypassed (Z_H).
        with_harness_failure: Records with a nonempty F_H.
        with_adjusted_failure: Records with a nonempty Z_H.
        claims: Claims at each level (reviewed ones only from review records).
    """

    dimension: str
    records: int
    admitted: int
    tasks: int
    agent_success: Proportion
    agent_score: Mean
    harness_micro: Proportion
    harness_macro: Mean
    layered_score: Mean
    joint: dict[str, Proportion]
    joint_failures: int
    linked: int
    link_rate: Proportion
    harness_failed: dict[str, int]
    bypassed: dict[str, int]
    harness_adjusted: dict[str, int]
    with_harness_failure: Proportion
    with_adjusted_failure: Proportion
    claims: ClaimLevels = ClaimLevels()


class LayeredTables(msgspec.Struct, frozen=True, kw_only=True):
    """Per-dimension sheets and the pooled one.

    Attributes:
        dimensions: One sheet per dimension present, in taxonomy order (``unassigned`` last).
        pooled: The sheet over every record (``all``); its link rate is the pooled one.
        confidence: The two-sided level of every interval in them.
    """

    dimensions: list[DimensionSheet]
    pooled: DimensionSheet
    confidence: float = CONFIDENCE


def _clusters_repeat(tasks: Sequence[str]) -> bool:
    return len(set(tasks)) < len(tasks)


def _cluster_bounds(
    values: Sequence[float], weights: Sequence[float], tasks: Sequence[str], estimate: float
) -> tuple[float, float] | None:
    """A ratio estimate's 95 % bounds, residuals ``v - estimate·w`` summed per task (CR1)."""
    residuals: dict[str, list[float]] = {}
    for v, w, t in zip(values, weights, tasks, strict=True):
        residuals.setdefault(t, []).append(v - estimate * w)
    return _bounds([math.fsum(r) for r in residuals.values()], math.fsum(weights), estimate)


def _flag_bounds(
    flags: Sequence[bool], tasks: Sequence[str], estimate: float
) -> tuple[float, float] | None:
    """`_cluster_bounds` of 0/1 values of weight 1: the same residuals, counted per task."""
    ones, sizes = Counter(itertools.compress(tasks, flags)), Counter(tasks)
    hit, miss = 1.0 - estimate * 1.0, 0.0 - estimate * 1.0
    sums = [math.fsum([hit] * ones[t] + [miss] * (n - ones[t])) for t, n in sizes.items()]
    return _bounds(sums, math.fsum([1.0] * len(flags)), estimate)


def _bounds(sums: Sequence[float], total: float, estimate: float) -> tuple[float, float] | None:
    """The bounds from each task's residual sum and the total weight (None: one task)."""
    g = len(sums)
    if g < 2 or total == 0:
        return None
    # fsum is exactly rounded, so neither the order of records nor of tasks moves a bit
    se = math.sqrt(math.fsum(u * u for u in sorted(sums)) * g / (g - 1)) / total
    return max(0.0, estimate - _Z * se), min(1.0, estimate + _Z * se)


def _share(count: int, n: int, bounds: tuple[float, float] | None) -> Proportion:
    if n == 0:
        return Proportion(count=0, n=0, rate=None, low=None, high=None)
    ci = wilson_interval(count, n, CONFIDENCE)
    return Proportion(
        count=count,
        n=n,
        rate=count / n,
        low=ci.low,
        high=ci.high,
        cluster_low=None if bounds is None else bounds[0],
        cluster_high=None if bounds is None else bounds[1],
    )


def _proportion(flags: Sequence[bool], tasks: Sequence[str]) -> Proportion:
    n, count = len(flags), sum(flags)
    bounds = None
    if n and _clusters_repeat(tasks):
        bounds = _flag_bounds(flags, tasks, count / n)
    return _share(count, n, bounds)


def _mean(values: Sequence[float | None], tasks: Sequence[str]) -> Mean:
    pairs = sorted((t, v) for v, t in zip(values, tasks, strict=True) if v is not None)
    kept = [v for _, v in pairs]
    labels = [t for t, _ in pairs]
    repeat = _clusters_repeat(labels)
    method: Literal["cluster", "independent"] = "cluster" if repeat else "independent"
    if not kept:
        return Mean(mean=None, low=None, high=None, n=0, method=method)
    mean = math.fsum(kept) / len(kept)
    clusters = labels if repeat else [str(i) for i in range(len(kept))]
    bounds = _cluster_bounds(kept, [1.0] * len(kept), clusters, mean)
    return Mean(
        mean=mean,
        low=None if bounds is None else bounds[0],
        high=None if bounds is None else bounds[1],
        n=len(kept),
        method=method,
    )


def _micro(scored: Sequence[LayeredResult]) -> Proportion:
    passed = [float(sum(r.harness.values())) for r in scored]
    total = [float(len(r.harness)) for r in scored]
    n, count = int(sum(total)), int(sum(passed))
    tasks = [r.task_id for r in scored]
    clusters = tasks if _clusters_repeat(tasks) else [str(i) for i in range(len(scored))]
    bounds = _cluster_bounds(passed, total, clusters, count / n) if n else None
    return _share(count, n, bounds)


def _tally(names: Iterable[Iterable[str]]) -> dict[str, int]:
    return dict(sorted(Counter(name for group in names for name in set(group)).items()))


@attrs.frozen(slots=True)
class _Facts:
    """What the sheets read of one admitted result, derived once.

    Its properties build their lists anew on every use, and a result counts in its
    dimension's sheet and in the pool.
    """

    result: LayeredResult
    failed: list[str]  # F_H
    adjusted: list[str]  # Z_H
    joint: str
    agent_score: float | None
    harness_score: float | None
    layered_score: float | None

    @classmethod
    def of(cls, r: LayeredResult) -> _Facts:
        """The facts of one result."""
        failed = r.harness_failed
        return cls(
            result=r,
            failed=failed,
            adjusted=[k for k in failed if k not in r.bypassed],
            joint=JOINT_STATES[2 * bool(r.agent_failed) + bool(failed)],
            agent_score=r.agent_score,
            harness_score=r.harness_score,
            layered_score=r.layered_score,
        )


def _claims(scored: Sequence[_Facts], claims: Iterable[Review]) -> ClaimLevels:
    found: dict[tuple[str, int], tuple[set[str], set[str]]] = {}
    for f in scored:
        r = f.result
        if not f.failed and not r.activated:
            continue  # nothing to claim: a missing record counts as empty sets below
        links = {link_name(x.harness, x.agent) for x in r.activated}
        failed, known = found.setdefault((r.task_id, r.sample), (set(), set()))
        failed.update(f.failed)
        known.update(links)
    confirmed = validated = unmatched = 0
    for task, sample, level, name in {(c.task, c.sample, c.claim, c.criterion) for c in claims}:
        failed, links = found.get((task, sample), (set(), set()))
        if level == "confirmed-defect" and name in failed:
            confirmed += 1
        elif level == "validated-link" and name in links:
            validated += 1
        elif level != "verdict":
            unmatched += 1
    return ClaimLevels(
        failed_verdicts=sum(len(v[0]) for v in found.values()),
        activated_links=sum(len(v[1]) for v in found.values()),
        confirmed_defects=confirmed,
        validated_links=validated,
        unmatched=unmatched,
    )


def dimension_sheet(
    results: Sequence[LayeredResult], dimension: str = ALL, claims: Iterable[Review] = ()
) -> DimensionSheet:
    """The score sheets of these results (all of them: group first to get one dimension's).

    ``claims`` are the standing claim reviews of these results' records (see `ClaimLevels`);
    a claim naming a record outside them is unmatched.
    """
    return _sheet(len(results), [_Facts.of(r) for r in _admitted(results)], dimension, claims)


def _sheet(
    records: int, scored: Sequence[_Facts], dimension: str, claims: Iterable[Review]
) -> DimensionSheet:
    """`dimension_sheet` of ``records`` results whose admitted ones are ``scored`` (sorted)."""
    results = [f.result for f in scored]
    tasks = [r.task_id for r in results]
    failed_h = [f.failed for f in scored]
    adjusted = [f.adjusted for f in scored]
    joint = [f.joint for f in scored]
    joint_failed = [f.result for f in scored if f.joint == "both"]
    activated = [bool(r.activated) for r in joint_failed]
    return DimensionSheet(
        dimension=dimension,
        records=records,
        admitted=len(scored),
        tasks=len(set(tasks)),
        agent_success=_proportion([j in ("clean", "harness_only") for j in joint], tasks),
        agent_score=_mean([f.agent_score for f in scored], tasks),
        harness_micro=_micro(results),
        harness_macro=_mean([f.harness_score for f in scored], tasks),
        layered_score=_mean([f.layered_score for f in scored], tasks),
        joint=_joint_shares(joint, tasks),
        joint_failures=len(joint_failed),
        linked=sum(activated),
        link_rate=_proportion(activated, [r.task_id for r in joint_failed]),
        harness_failed=_tally(failed_h),
        bypassed=_tally(r.bypassed for r in results),
        harness_adjusted=_tally(adjusted),
        with_harness_failure=_nonempty_share(failed_h, tasks),
        with_adjusted_failure=_nonempty_share(adjusted, tasks),
        claims=_claims(scored, claims),
    )


def _admitted(results: Sequence[LayeredResult]) -> list[LayeredResult]:
    """The admitted results, by task, sample and dimension."""
    admitted = (r for r in results if r.admitted)
    return sorted(admitted, key=lambda r: (r.task_id, r.sample, r.dimension or ""))


def _nonempty_share(found: list[list[str]], tasks: list[str]) -> Proportion:
    """The share of results with at least one criterion in their list, clustered by task."""
    return _proportion([bool(f) for f in found], tasks)


def _joint_shares(joint: list[str], tasks: list[str]) -> dict[str, Proportion]:
    """The share of results in each joint state (`JOINT_STATES`), clustered by task."""
    return {state: _proportion([j == state for j in joint], tasks) for state in JOINT_STATES}


def layered_tables(
    results: Iterable[LayeredResult], claims: Iterable[Review] = ()
) -> LayeredTables:
    """One sheet per task dimension present (taxonomy order, ``unassigned`` last) and the pool.

    ``claims`` are the run's standing claim reviews (`standing_claims`): each counts in the
    sheet of its record's dimension and in the pool (unmatched there when no record has it).
    """
    items = list(results)
    reviewed = list(claims)
    groups: dict[str, list[LayeredResult]] = {}
    for r in items:
        groups.setdefault(r.dimension or UNASSIGNED, []).append(r)
    # Each admitted result's facts once, in the pool's order; a group keeps that order.
    pool = [_Facts.of(r) for r in _admitted(items)]
    facts: dict[str, list[_Facts]] = {d: [] for d in groups}
    for f in pool:
        facts[f.result.dimension or UNASSIGNED].append(f)
    order = [d for d in (*DIMENSIONS, UNASSIGNED) if d in groups]
    sheets = []
    for d in order:
        slots = {(r.task_id, r.sample) for r in groups[d]}
        mine = [c for c in reviewed if (c.task, c.sample) in slots]
        sheets.append(_sheet(len(groups[d]), facts[d], d, mine))
    return LayeredTables(dimensions=sheets, pooled=_sheet(len(items), pool, ALL, reviewed))


def _share_cell(p: Proportion, percent: bool = False) -> str:
    if p.rate is None or p.low is None or p.high is None:
        return f"{p.count}/{p.n} undefined"
    scale, unit, digits = (100, "%", 1) if percent else (1, "", 3)
    out = f"{p.count}/{p.n} {scale * p.rate:.{digits}f}{unit} [{scale * p.low:.{digits}f}, "
    out += f"{scale * p.high:.{digits}f}]"
    if p.cluster_low is not None and p.cluster_high is not None:
        out += f" cl [{scale * p.cluster_low:.{digits}f}, {scale * p.cluster_high:.{digits}f}]"
    return out


def _mean_cell(m: Mean) -> str:
    if m.mean is None:
        return "undefined"
    if m.low is None or m.high is None:
        return f"{m.mean:.3f} (n {m.n})"
    return f"{m.mean:.3f} [{m.low:.3f}, {m.high:.3f}]" + (" cl" if m.method == "cluster" else "")


def _sheet_rows(sheets: list[DimensionSheet]) -> tuple[list[list[str]], list[list[str]]]:
    scores, links = [], []
    for d in sheets:
        scores.append(
            [d.dimension, f"{d.admitted}/{d.records}", _share_cell(d.agent_success)]
            + [_mean_cell(m) for m in (d.agent_score, d.harness_macro, d.layered_score)]
            + [_share_cell(d.harness_micro)]
        )
        c = d.claims
        ladder = [c.failed_verdicts, c.activated_links, c.confirmed_defects, c.validated_links]
        claims = " / ".join(map(str, ladder)) + (
            f" ({c.unmatched} unmatched)" if c.unmatched else ""
        )
        links.append(
            [d.dimension, _share_cell(d.link_rate, percent=True)]
            + [_share_cell(d.with_harness_failure), _share_cell(d.with_adjusted_failure), claims]
        )
    return scores, links


def render_layered(tables: LayeredTables) -> list[str]:
    """The layered sheets as text lines: scores, links and claims, F_H, B and Z_H."""
    sheets = [*tables.dimensions, tables.pooled]
    scores, links = _sheet_rows(sheets)
    criteria = [
        [
            d.dimension,
            name,
            str(n),
            str(d.bypassed.get(name, 0)),
            str(d.harness_adjusted.get(name, 0)),
        ]
        for d in sheets
        for name, n in d.harness_failed.items()
    ]
    lines = [
        "",
        f"layered sheets (admitted records; Wilson {100 * tables.confidence:g} %, cl: clustered "
        "by task when tasks repeat; docs/metrics.md):",
        render_table(
            ["dimension", "admitted", "agent success", "agent score", "harness macro"]
            + ["layered score", "harness micro (criteria)"],
            scores,
        ),
        render_table(
            ["dimension", "link rate |L|/|J|", "records with F_H", "records with Z_H"]
            + ["claims: failed H verdicts / activated / confirmed / validated"],
            links,
        ),
    ]
    if criteria:
        lines.append(render_table(["dimension", "harness criterion", "F_H", "B", "Z_H"], criteria))
    lines.append(LAYERED_LEGEND)
    return lines


LAYERED_LEGEND = (
    "symbols: F_H the failed harness criteria of a record; B those an agent action made "
    "unobservable (bypassed); Z_H = F_H minus B; J a task's candidate links (a harness "
    "criterion and the agent criterion it may explain); L the activated ones (both ends "
    "failed); docs/metrics.md, 'Layered sheets'"
)
"""What the layered sheets' symbols mean, printed under them so the page defines them."""
