"""The ``compare`` gate over run rows: missing data, the worst case, the tipping point, a plan.

`assess` pairs every task with a run on both sides, lists the tasks short of runs, and asks the
one comparison verb (`harness_world.stats.decide`) for the observed decision and, when runs are
missing, for the worst case (the candidate's missing runs counted as failures, the baseline's
as passes) and the tipping point (how many lost runs, counted adversely, change the outcome).
It adds the per-task changes that survive a Holm correction, solid <-> broken flips, warnings
when few or dominant families leave no test reliable, and, with a change to detect, a power
plan (`plan_power`). Everything is order-independent and deterministic for a seed.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, Literal

import msgspec
from msgspec.structs import replace

from harness_world.stats.decision import (
    Decision,
    Design,
    GateName,
    Method,
    TaskChange,
    decide,
    floor_variances,
    run_variance,
    task_changes,
)
from harness_world.stats.estimators import (
    DEFAULT_ALPHA,
    Comparison,
    Flip,
    PairedTask,
    RunRow,
    StatsInputError,
    TaskTally,
    compare_results,
    flipped_tasks,
    pair_tallies,
    tally_runs,
)
from harness_world.stats.hidden_class import min_tasks
from harness_world.stats.wild import DEFAULT_SEED

__all__ = [
    "GateResult",
    "MissingTask",
    "Plan",
    "PlanRow",
    "assess",
    "plan_power",
    "task_families",
]

_TARGET_POWER: Final = 0.8
_PLAN_RUNS: Final = (1, 3, 5, 10, 20)
_MAX_TASKS: Final = 10_000_000
_FEW_CLUSTERS: Final = 8.0


class MissingTask(msgspec.Struct, frozen=True, kw_only=True):
    """A task with fewer runs than expected on at least one side.

    Attributes:
        task_id: The task.
        expected_runs: Runs expected per side (the larger of ``--min-runs``, the runs the
            schedule asked for, and the most runs the task has on either side).
        baseline_runs: Runs found under the baseline.
        candidate_runs: Runs found under the candidate.
        reason: Human-readable description.

    """

    task_id: str
    expected_runs: int
    baseline_runs: int
    candidate_runs: int
    reason: str


class PlanRow(msgspec.Struct, frozen=True, kw_only=True):
    """Tasks needed for the target power at one number of runs per task and side.

    Attributes:
        runs: Runs per task per configuration.
        tasks: Paired tasks needed (null when no count up to 10 million reaches the power).
        total_runs: ``tasks * runs * 2`` (both configurations), or null.

    """

    runs: int
    tasks: int | None
    total_runs: int | None


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """A power plan for detecting a change of ``mde`` with the one-sided test of `decide`.

    Attributes:
        mde: The smallest change worth detecting, a fraction (``--mde`` points / 100).
        alpha: One-sided level.
        power_target: The power the table targets (0.8).
        tasks_now: Paired tasks in the data.
        runs_now: Median runs per task and side in the data.
        power_now: Power of the current design (tasks_now x runs_now) at ``mde``.
        between_task_variance: Estimated variance of true per-task changes (tau^2 >= 0).
        run_variance: Mean per-run Bernoulli variance ``q (1 - q)`` of the tasks.
        design_effect: Variance inflation from families, ``max(1, (SE_CR2 / SE_paired)^2)``
            (1 without families): the gate's own.
        df: The gate's degrees of freedom (Bell-McCaffrey) for the current design.
        effective_clusters: ``df + 1``.
        rows: Tasks needed at several run counts.

    """

    mde: float
    alpha: float
    power_target: float
    tasks_now: int
    runs_now: int
    power_now: float
    between_task_variance: float
    run_variance: float
    design_effect: float
    df: float
    effective_clusters: float
    rows: list[PlanRow]


class GateResult(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the ``compare`` gate decided, and why.

    Attributes:
        gate: The gate applied.
        margin: Non-inferiority margin (a fraction) for ``non-inferior``, else null.
        alpha: One-sided level of the gate.
        sidedness: ``one-sided``.
        passed: Whether the gate passed.
        reason: One sentence saying why it passed or failed.
        allow_missing: Whether missing runs were allowed (otherwise they fail the gate).
        missing: Tasks short of runs or absent on one side, sorted by task id.
        expected_runs: The fewest runs expected per task and side (``--min-runs``, or the run
            directories' samples); a task is missing data below it, or below the other side's
            count.
        observed: The decision on the runs that exist (every task with a run on both sides).
        worst_case: The decision with the candidate's missing runs counted as failures and the
            baseline's as passes; null when nothing is missing.
        worst_case_passed: Whether the gate would pass on the worst case (null when nothing
            is missing).
        families_used: Whether the decision clustered over families.
        cluster_note: Why families were or were not used.
        warnings: When few or dominant families make the decision unreliable (or impossible),
            with the effective number of clusters.
        correction: The multiple-comparison correction of per-task changes (``holm``).
        significant_changes: Per-task changes significant after the correction.
        flips: Solid <-> broken flips (listed for reading, whatever their significance).
        plan: The power plan, when ``--plan`` was asked.
        lost_runs: Runs missing against the expected counts, over both sides.
        tipping_point: How many lost runs, counted adversely (the candidate's as
            failures, the baseline's as passes, the ones that move the mean change most
            first), change the gate's outcome on the observed runs; null when even all of
            them do not, or without a gate. ``--allow-missing`` assumes losses are
            uninformative (unrelated to whether the run would have passed); this says how
            much that assumption carries.
        min_tasks: ``non-inferior``: the fewest paired tasks that can show non-inferiority
            at this margin and level (`hidden_class.min_tasks`); the gate fails below it
            whatever the bound; null for the other gates.

    """

    gate: GateName
    margin: float | None
    alpha: float
    sidedness: Literal["one-sided"]
    passed: bool
    reason: str
    allow_missing: bool
    missing: list[MissingTask]
    expected_runs: int
    observed: Decision
    worst_case: Decision | None
    worst_case_passed: bool | None
    families_used: bool
    cluster_note: str
    warnings: list[str]
    correction: Literal["holm"]
    significant_changes: list[TaskChange]
    flips: list[Flip]
    plan: Plan | None
    lost_runs: int = 0
    tipping_point: int | None = None
    min_tasks: int | None = None


def _power(n: int, df: float, sd: float, mde: float, alpha: float) -> float:
    from scipy import special, stats

    if sd <= 0:
        return 1.0
    quantile = float(special.stdtrit(df, 1 - alpha))
    ncp = mde / (sd / math.sqrt(n))
    return float(stats.nct.sf(quantile, df, ncp))


def _smallest_n(power_at: Callable[[int], float], target: float) -> int | None:
    lo, hi = 2, 2
    while power_at(hi) < target:
        if hi >= _MAX_TASKS:
            return None
        lo, hi = hi, min(hi * 2, _MAX_TASKS)
    while lo < hi:
        mid = (lo + hi) // 2
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return hi


def plan_power(
    paired: Sequence[PairedTask],
    mde: float,
    *,
    alpha: float = DEFAULT_ALPHA,
    families: Mapping[str, str] | None = None,
    power: float = _TARGET_POWER,
) -> Plan:
    """Power of the current design at ``mde`` and tasks needed at several run counts.

    Planning uses what the gate uses: its standard error (CR2 over the families, or the floor
    when the spread is degenerate), its Bell-McCaffrey degrees of freedom and its design
    effect ``(SE_CR2 / SE_paired)^2``. The power is that of the t test with those df and SE
    (noncentral t); the gate's wild bootstrap has about that power when it can reach
    ``alpha`` at all (with 5 families or fewer it cannot: the power is then 0).

    For the table, the variance of a task's difference splits into a between-task part
    ``tau^2 = max(0, sd^2 - mean_i v_i)`` and a run part ``2 s^2 / r`` at r runs per side
    (``s^2`` the mean per-run variance of the tasks); the variance of the mean of k tasks is
    ``max(1, design effect) (tau^2 + 2 s^2 / r) / k``, and its df grow with k as the current
    design's do: ``(df + 1) k / n - 1`` (``k - 1`` without families), i.e. the suite is
    assumed to grow with families like the ones it has. More runs shrink only the run part,
    so some targets need more tasks whatever r is.

    Args:
        paired: The paired tasks of the pilot data (at least 2).
        mde: The change to detect, a fraction (> 0).
        alpha: One-sided level.
        families: Task id -> family, as for `decide`.
        power: Target power.

    Returns:
        The plan.

    Raises:
        StatsInputError: Fewer than 2 tasks or a bad argument.

    """
    if not (math.isfinite(mde) and mde > 0):
        raise StatsInputError(f"mde must be finite and > 0, got {mde}")
    items = sorted(paired, key=lambda p: p.task_id)
    # The t version of the gate's test has the gate's SE, df and design effect, cheaply.
    design = Design(pairs=items, families=dict(families or {}), alpha=alpha, method="cr2-t")
    decision = decide(replace(design, skew_correction=False))
    n = len(items)
    diffs = [p.difference for p in items]
    mean = math.fsum(diffs) / n
    sample_var = math.fsum((d - mean) ** 2 for d in diffs) / (n - 1)
    run_var = math.fsum(run_variance(p, shrink=False) for p in items) / n
    within_now = math.fsum(floor_variances(items)) / n
    if run_var <= 0:
        run_var = math.fsum(run_variance(p, shrink=True) for p in items) / n
    between = max(0.0, sample_var - within_now)  # the between-task variance
    deff = max(1.0, decision.design_effect)
    runs = sorted(p.baseline.runs if k == 0 else p.candidate.runs for p in items for k in (0, 1))
    runs_now = runs[len(runs) // 2]
    per_task = (decision.df + 1) / n

    def sd_at(r: int) -> float:
        return math.sqrt(deff * (between + 2 * run_var / r))

    power_now = _power(n, decision.df, decision.standard_error * math.sqrt(n), mde, alpha)
    if decision.clusters is not None and 2.0**decision.clusters * alpha < 1:
        power_now = 0.0  # no sign pattern is rare enough for the gate to decide
    rows: list[PlanRow] = []
    for r in sorted({*_PLAN_RUNS, runs_now}):
        sd_r = sd_at(r)

        def power_at(k: int, s: float = sd_r) -> float:
            return _power(k, max(1.0, per_task * k - 1), s, mde, alpha)

        needed = _smallest_n(power_at, power)
        rows.append(
            PlanRow(runs=r, tasks=needed, total_runs=None if needed is None else needed * r * 2)
        )
    return Plan(
        mde=mde,
        alpha=alpha,
        power_target=power,
        tasks_now=n,
        runs_now=runs_now,
        power_now=power_now,
        between_task_variance=between,
        run_variance=run_var,
        design_effect=deff,
        df=decision.df,
        effective_clusters=decision.effective_clusters,
        rows=rows,
    )


def task_families(rows: Iterable[RunRow]) -> dict[str, str]:
    """Task id -> family from rows; a task given two different families is an input error."""
    found: dict[str, str] = {}
    for row in rows:
        if not row.family:
            continue
        known = found.setdefault(row.task_id, row.family)
        if known != row.family:
            raise StatsInputError(
                f"task {row.task_id!r} has two families: {known!r} and {row.family!r}"
            )
    return found


def _missing(
    base: Mapping[str, TaskTally],
    cand: Mapping[str, TaskTally],
    scheduled: Iterable[str],
    min_runs: int,
    names: tuple[str, str],
) -> list[MissingTask]:
    out: list[MissingTask] = []
    for task_id in sorted(set(scheduled) | base.keys() | cand.keys()):
        b = base[task_id].runs if task_id in base else 0
        c = cand[task_id].runs if task_id in cand else 0
        expected = max(min_runs, b, c)
        if b == expected and c == expected:
            continue
        parts = []
        for name, got in ((names[0], b), (names[1], c)):
            if got == 0:
                parts.append(f"absent in {name!r}")
            elif got < expected:
                parts.append(f"{got} of {expected} runs in {name!r}")
        out.append(
            MissingTask(
                task_id=task_id,
                expected_runs=expected,
                baseline_runs=b,
                candidate_runs=c,
                reason=", ".join(parts),
            )
        )
    return out


def _worst_case(
    base: Mapping[str, TaskTally], cand: Mapping[str, TaskTally], missing: Sequence[MissingTask]
) -> list[PairedTask]:
    """Pad every task to its expected runs: candidate with failures, baseline with passes."""
    expected = {m.task_id: m.expected_runs for m in missing}
    out: list[PairedTask] = []
    for task_id in sorted(base.keys() | cand.keys() | expected.keys()):
        b = base.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        c = cand.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        runs = expected.get(task_id, max(b.runs, c.runs))
        bt = TaskTally(task_id=task_id, runs=runs, passes=b.passes + (runs - b.runs))
        ct = TaskTally(task_id=task_id, runs=runs, passes=c.passes)
        out.append(
            PairedTask(
                task_id=task_id,
                baseline=bt,
                candidate=ct,
                difference=(ct.passes - bt.passes) / runs,
            )
        )
    return out


def _lost_runs(
    base: Mapping[str, TaskTally], cand: Mapping[str, TaskTally], missing: Sequence[MissingTask]
) -> list[tuple[str, bool]]:
    """Every lost run as (task, is the candidate's), the most damaging first.

    A run counted adversely moves its task's difference by ``p / (r (r + 1))`` for the
    candidate (``p`` passes of ``r`` runs; nothing when it never passed) and by
    ``(r - q) / (r (r + 1))`` for the baseline (``q`` passes; nothing when it always passed).
    That move shrinks with every run already added to the same task and side, so taking the
    largest move next gives, for every count, the largest drop of the mean change any choice
    of that many runs could give. A side with no run at all yet comes first (its first run
    pairs the task). Ties keep task order, the candidate's first.
    """
    heap: list[tuple[float, int, str, bool, int, int, int]] = []
    for order, (m, side) in enumerate((m, side) for side in (True, False) for m in missing):
        have = (cand if side else base).get(m.task_id)
        runs, passes = (have.runs, have.passes) if have else (0, 0)
        if (left := m.expected_runs - runs) > 0:
            move = _move(runs, passes, side)
            heapq.heappush(heap, (-move, order, m.task_id, side, runs, passes, left))
    out: list[tuple[str, bool]] = []
    while heap:
        _, order, task_id, side, runs, passes, left = heapq.heappop(heap)
        out.append((task_id, side))
        runs, passes = runs + 1, passes + (0 if side else 1)  # a failure, or a pass
        if left > 1:
            move = _move(runs, passes, side)
            heapq.heappush(heap, (-move, order, task_id, side, runs, passes, left - 1))
    return out


def _move(runs: int, passes: int, candidate: bool) -> float:
    """How far one more adverse run moves a task's difference (`_lost_runs`)."""
    if runs == 0:
        return math.inf
    return (passes if candidate else runs - passes) / (runs * (runs + 1))


def _padded(
    base: Mapping[str, TaskTally],
    cand: Mapping[str, TaskTally],
    lost: Sequence[tuple[str, bool]],
) -> list[PairedTask]:
    """The observed tallies plus ``lost`` runs, adversely: candidate failures, baseline passes."""
    add_c: dict[str, int] = {}
    add_b: dict[str, int] = {}
    for task_id, is_candidate in lost:
        target = add_c if is_candidate else add_b
        target[task_id] = target.get(task_id, 0) + 1
    out: list[PairedTask] = []
    for task_id in sorted(base.keys() | cand.keys() | add_c.keys() | add_b.keys()):
        b = base.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        c = cand.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        bt = TaskTally(
            task_id=task_id,
            runs=b.runs + add_b.get(task_id, 0),
            passes=b.passes + add_b.get(task_id, 0),
        )
        ct = TaskTally(task_id=task_id, runs=c.runs + add_c.get(task_id, 0), passes=c.passes)
        if bt.runs and ct.runs:
            out.append(
                PairedTask(
                    task_id=task_id,
                    baseline=bt,
                    candidate=ct,
                    difference=ct.passes / ct.runs - bt.passes / bt.runs,
                )
            )
    return out


def _tipping_point(
    decide_at: Callable[[list[PairedTask]], bool],
    observed: bool,
    base: Mapping[str, TaskTally],
    cand: Mapping[str, TaskTally],
    lost: Sequence[tuple[str, bool]],
) -> int | None:
    """How many lost runs, counted adversely most damaging first (`_lost_runs`), change it.

    None when even all of them do not (the worst case decides as the observed runs do).
    Bisection: along that order each run lowers the mean change, and the outcome is taken to
    follow the mean. The spread moves too, so another choice of runs can occasionally change
    the outcome with fewer: the count is sufficient, not a proven minimum.
    """
    if decide_at(_padded(base, cand, lost)) == observed:
        return None
    lo, hi = 0, len(lost)  # outcome unchanged at lo, changed at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if decide_at(_padded(base, cand, lost[:mid])) == observed:
            lo = mid
        else:
            hi = mid
    return hi


def _missing_analysis(
    design: Design,
    observed: Decision,
    base: Mapping[str, TaskTally],
    cand: Mapping[str, TaskTally],
    missing: Sequence[MissingTask],
) -> tuple[Decision | None, bool | None, list[tuple[str, bool]], int | None]:
    """The worst case, whether the gate passes on it, the lost runs and the tipping point."""
    if not missing:
        return None, None, [], None

    def decide_on(items: Sequence[PairedTask]) -> Decision:
        return decide(replace(design, pairs=list(items)))

    worst = decide_on(_worst_case(base, cand, missing))
    lost = _lost_runs(base, cand, missing)
    tipping: int | None = None
    if observed.gate != "none":
        tipping = _tipping_point(
            lambda items: decide_on(items).passed, observed.passed, base, cand, lost
        )
    return worst, worst.passed, lost, tipping


def _tallies(
    rows: Sequence[RunRow], baseline: str, candidate: str, scheduled: Iterable[str], min_runs: int
) -> tuple[dict[str, TaskTally], dict[str, TaskTally], list[MissingTask], list[PairedTask]]:
    """Each side's tallies, the tasks short of runs and every task paired (none dropped)."""
    base = {t.task_id: t for t in tally_runs(rows, baseline)}
    cand = {t.task_id: t for t in tally_runs(rows, candidate)}
    missing = _missing(base, cand, scheduled, min_runs, (baseline, candidate))
    paired, _ = pair_tallies(base.values(), cand.values(), min_runs=1)
    return base, cand, missing, paired


def _check_assess(alpha: float, min_runs: int, gate: GateName, margin: float | None) -> None:
    if not (math.isfinite(alpha) and 0 < alpha < 0.5):
        raise StatsInputError(f"alpha must be strictly between 0 and 0.5, got {alpha}")
    if min_runs < 1:
        raise StatsInputError(f"min_runs must be at least 1, got {min_runs}")
    if gate == "non-inferior" and (margin is None or not (math.isfinite(margin) and margin > 0)):
        raise StatsInputError("the non-inferior gate needs a positive margin")


def assess(
    rows: Iterable[RunRow],
    baseline: str,
    candidate: str,
    *,
    gate: GateName = "none",
    alpha: float = DEFAULT_ALPHA,
    margin: float | None = None,
    min_runs: int = 5,
    scheduled: Iterable[str] = (),
    allow_missing: bool = False,
    use_clusters: bool = True,
    mde: float | None = None,
    method: Method = "webb",
    skew_correction: bool = True,
    seed: int = DEFAULT_SEED,
) -> tuple[Comparison, GateResult]:
    """Run the ``compare`` gate on run rows: the descriptive comparison and the decision.

    Steps:

    1. Every task with at least one run on both sides is paired (none is dropped for being
       short: dropping a task because it lost runs biases the result).
    2. A task is *missing data* when either side has fewer runs than expected: the larger of
       ``min_runs``, the task's runs on either side, and (for run directories) the samples the
       schedule asked for; tasks in ``scheduled`` or on one side only are included. Missing
       data fails every gate except ``none`` unless ``allow_missing``.
    3. `decide` the design of the paired tasks (clustered over families when rows carry
       them and ``use_clusters``) and, when something is missing, of the worst case and
       along the tipping point.
    4. Per-task changes with a Holm correction, flips, the plan.

    Args:
        rows: Run rows (with optional families).
        baseline: Baseline config.
        candidate: Candidate config.
        gate: The gate to apply.
        alpha: One-sided level of the gate.
        margin: Non-inferiority margin as a fraction (required for ``non-inferior``).
        min_runs: Runs expected per task and side, at least 1.
        scheduled: Task ids that were scheduled (run directories); absent ones are missing.
        allow_missing: Decide on the observed runs even when some are missing.
        use_clusters: Use families when present (``--no-clusters`` turns this off).
        mde: Change to plan for (a fraction), or None for no plan.
        method: The inference of `decide` (``webb``, what ``compare`` uses; the others
            are there to be measured against it).
        skew_correction: The Edgeworth correction of `decide`.
        seed: Seed of the random sign patterns (used only above 12 clusters).

    Returns:
        The descriptive comparison (band with t at every n at the level ``alpha``) and the
        gate result.

    Raises:
        StatsInputError: Bad configs, duplicate runs, fewer than 2 paired tasks, a task with
            two families, a bad alpha or margin.

    """
    from scipy import special

    _check_assess(alpha, min_runs, gate, margin)
    row_list = list(rows)
    z = float(special.ndtri(1 - alpha))  # the band's level is the gate's
    comparison = compare_results(row_list, baseline, candidate, min_runs=1, z=z, t_always=True)
    all_families = task_families(row_list)
    families = all_families if use_clusters else {}
    base, cand, missing, paired = _tallies(row_list, baseline, candidate, scheduled, min_runs)
    design = Design(pairs=paired, families=families, gate=gate, margin=margin, alpha=alpha)
    design = replace(design, seed=seed, method=method, skew_correction=skew_correction)
    observed = decide(design)
    worst, worst_passed, lost, tipping = _missing_analysis(design, observed, base, cand, missing)
    passed, reason = _gate_outcome(observed, missing, allow_missing=allow_missing)
    return comparison, GateResult(
        gate=gate,
        margin=margin if gate == "non-inferior" else None,
        alpha=alpha,
        sidedness="one-sided",
        passed=passed,
        reason=reason,
        allow_missing=allow_missing,
        missing=missing,
        expected_runs=min_runs,
        observed=observed,
        worst_case=worst,
        worst_case_passed=worst_passed,
        families_used=observed.clusters is not None,
        cluster_note=_cluster_note(observed, families, all_families, use_clusters=use_clusters),
        warnings=_reliability_warnings(observed, paired, families),
        lost_runs=len(lost),
        tipping_point=tipping,
        min_tasks=min_tasks(margin, alpha) if gate == "non-inferior" and margin else None,
        correction="holm",
        significant_changes=[c for c in task_changes(paired, alpha) if c.significant],
        flips=flipped_tasks(paired),
        plan=plan_power(paired, mde, alpha=alpha, families=families) if mde is not None else None,
    )


def _cluster_note(
    observed: Decision,
    families: Mapping[str, str],
    all_families: Mapping[str, str],
    *,
    use_clusters: bool,
) -> str:
    """How families were used, in words, for the report."""
    if not use_clusters and all_families:
        return "families present but ignored (--no-clusters): tasks treated as independent"
    if observed.clusters is not None:
        return (
            f"cluster-robust over {observed.clusters} families (CR2 standard error, "
            f"Bell-McCaffrey df {observed.df:.1f}, effective clusters "
            f"{observed.effective_clusters:.1f}; families resampled whole)"
        )
    if families:
        return "only one family: clustering impossible, tasks treated as independent"
    return "no families in the data: tasks treated as independent"


def _reliability_warnings(
    observed: Decision, paired: Sequence[PairedTask], families: Mapping[str, str]
) -> list[str]:
    """Warnings when few or dominant families leave no test reliable (or none possible)."""
    units = "families" if observed.clusters is not None else "independent tasks"
    g = observed.clusters if observed.clusters is not None else observed.tasks
    if observed.smallest_p > observed.alpha:
        return [
            f"only {g} {units}: the smallest p-value any pattern of the bootstrap's weights "
            f"can give is {observed.smallest_p * 100:.2g}%, above the one-sided "
            f"{observed.alpha * 100:g}%, "
            "so no test that holds its level whatever each of them does can decide here "
            "(improved and non-inferior cannot pass, no-regression cannot fail)"
            + (
                "; more families, or --no-clusters if the families truly share no effect, are "
                "the only ways to a decision"
                if observed.clusters is not None
                else "; more tasks are the only way to a decision"
            )
        ]
    if observed.clusters is None:
        return []
    sizes: dict[str, int] = {}
    for p in paired:
        label = families.get(p.task_id, "") or p.task_id
        sizes[label] = sizes.get(label, 0) + 1
    largest = max(sizes.values())
    eff = observed.effective_clusters
    if eff < _FEW_CLUSTERS:
        return [
            f"few or dominant families: effective number of clusters {eff:.1f} of {g} "
            f"(largest family {largest} of {len(paired)} tasks); the bootstrap holds its level "
            "only as far as each family's change is symmetric, and no test is reliable beyond "
            "that here"
        ]
    return []


def _gate_outcome(
    observed: Decision, missing: Sequence[MissingTask], *, allow_missing: bool
) -> tuple[bool, str]:
    """Whether the gate passed and why: missing data fails it unless allowed."""
    if observed.gate == "none":
        return True, "no gate"
    if missing and not allow_missing:
        return False, (
            f"{len(missing)} task(s) short of runs or missing on one side; pass --allow-missing "
            "to decide on the observed runs"
        )
    return observed.passed, observed.reason
