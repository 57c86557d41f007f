"""The ``compare`` gate over run rows: missing data, the worst case, the tipping point, a plan.

`assess` pairs every task with a run on both sides, lists the tasks short of runs, and asks the
one comparison verb (`harness_world.stats.decide`) for the observed decision and, when runs are
missing, for the worst case (the candidate's missing runs counted as failures, the baseline's
as passes) and the tipping point (how many lost runs, counted adversely, change the outcome).
It adds the per-task changes that survive a Holm correction, solid <-> broken flips, warnings
when few or dominant families leave no test reliable, and, with a change to detect, a power
plan (`harness_world.stats.planning`). Everything is order-independent and deterministic for a seed.
`gate_options` checks the options as a person gives them (points, alpha or z) with the
option's own name in each message, so every front end refuses the same inputs the same way;
`outcome_of` is the one outcome the text, ``--json`` and ``--html`` all render.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Literal

import msgspec
from msgspec.structs import replace

from harness_world.stats.decision import (
    UNDECIDABLE_CLUSTERS,
    Decision,
    Design,
    GateName,
    Method,
    TaskChange,
    decide,
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
    Verdict,
    compare_results,
    flipped_tasks,
    pair_tallies,
    tally_runs,
)
from harness_world.stats.hidden_class import SMALL_SUITE_TASKS, gain_min_tasks, min_tasks
from harness_world.stats.planning import Plan, PlanRow, plan_power
from harness_world.stats.wild import DEFAULT_SEED

__all__ = [
    "ComparisonOutcome",
    "GateOptions",
    "GateResult",
    "MissingTask",
    "Plan",
    "PlanRow",
    "assess",
    "gate_options",
    "loss_order_warnings",
    "outcome_of",
    "plan_power",
    "task_families",
]

_UNDECIDABLE: Final = UNDECIDABLE_CLUSTERS
_MORE: Final = {
    True: "; more families, or --no-clusters if the families truly share no effect, are the "
    "only ways to a decision",
    False: "; more tasks are the only way to a decision",
}
_FEW_CLUSTERS: Final = 8.0
_INCOHERENT: Final = (
    "the test rejects some values of the change yet accepts values beyond them: its bounds "
    "are the outermost values it accepts"
)


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
            directories' samples).
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
        tipping_point: How many lost runs, counted adversely (the candidate's as failures,
            the baseline's as passes, those that move the mean most first), change the gate's
            outcome; null when even all do not, or without a gate. It says how much
            ``--allow-missing``'s assumption (losses unrelated to passing) carries.
        min_tasks: ``non-inferior``: the fewest paired tasks that can show non-inferiority
            at this margin and level (`hidden_class.min_tasks`); the gate fails below it
            whatever the bound. ``improved`` on fewer than `hidden_class.SMALL_SUITE_TASKS`
            paired tasks with a positive mean: the fewest that can show the observed gain
            (`hidden_class.gain_min_tasks`, at most that many). Null otherwise.

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


def _lost_runs(
    base: Mapping[str, TaskTally], cand: Mapping[str, TaskTally], missing: Sequence[MissingTask]
) -> list[tuple[str, bool]]:
    """Every lost run as (task, is the candidate's), the most damaging first.

    Counted adversely, a run moves its task's difference by ``p / (r (r + 1))`` on the
    candidate's side (``p`` passes of ``r`` runs) and ``(r - q) / (r (r + 1))`` on the
    baseline's (``q`` passes). The move shrinks with every run added to the same task and side,
    so taking the largest next gives, at every count, the largest drop of the mean any choice
    of that many runs could give. A side with no run yet comes first (its first run pairs the
    task); ties keep task order, the candidate's first.
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
    """The observed tallies plus ``lost`` runs, adversely: candidate failures, baseline passes.

    With every lost run this is the worst case: each task at its expected runs.
    """
    add_c: dict[str, int] = {}
    add_b: dict[str, int] = {}
    for task_id, is_candidate in lost:
        target = add_c if is_candidate else add_b
        target[task_id] = target.get(task_id, 0) + 1
    out: list[PairedTask] = []
    for task_id in sorted(base.keys() | cand.keys() | add_c.keys() | add_b.keys()):
        b = base.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        c = cand.get(task_id, TaskTally(task_id=task_id, runs=0, passes=0))
        more_b, more_c = add_b.get(task_id, 0), add_c.get(task_id, 0)
        bt = TaskTally(task_id=task_id, runs=b.runs + more_b, passes=b.passes + more_b)
        ct = TaskTally(task_id=task_id, runs=c.runs + more_c, passes=c.passes)
        if bt.runs and ct.runs:
            diff = ct.passes / ct.runs - bt.passes / bt.runs
            out.append(PairedTask(task_id=task_id, baseline=bt, candidate=ct, difference=diff))
    return out


def _missing_analysis(
    design: Design,
    observed: Decision,
    base: Mapping[str, TaskTally],
    cand: Mapping[str, TaskTally],
    missing: Sequence[MissingTask],
) -> tuple[Decision | None, list[tuple[str, bool]], int | None]:
    """The worst case, the lost runs and the tipping point.

    The tipping point bisects along `_lost_runs`' order: each run lowers the mean change and
    the outcome is taken to follow the mean. The spread moves too, so another choice of runs
    may change the outcome with fewer: the count suffices, it is not a proven minimum. None
    when even all of them leave the outcome as it is, or without a gate.
    """
    if not missing:
        return None, [], None

    def passes(count: int) -> bool:
        return decide(replace(design, pairs=_padded(base, cand, lost[:count]))).passed

    lost = _lost_runs(base, cand, missing)
    worst = decide(replace(design, pairs=_padded(base, cand, lost)))
    if observed.gate == "none" or worst.passed == observed.passed:
        return worst, lost, None
    lo, hi = 0, len(lost)  # outcome unchanged at lo, changed at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if passes(mid) == observed.passed else (lo, mid)
    return worst, lost, hi


def _tail_probability(chances: Sequence[float], observed: int) -> float:
    """P(at least ``observed`` successes) of independent trials with these chances."""
    dist = [1.0]
    for p in chances:
        dist = [
            (dist[j] if j < len(dist) else 0.0) * (1 - p) + (dist[j - 1] * p if j else 0.0)
            for j in range(len(dist) + 1)
        ]
    return min(1.0, math.fsum(dist[observed:]))


def _side_losses(
    rows: Sequence[RunRow], config: str, missing: Sequence[MissingTask], candidate: bool
) -> tuple[int, list[float], int]:
    """One side's lost runs, the short tasks' chances of losing their last runs, how many did.

    A task side loses its last runs when its lost run numbers are the highest expected ones.
    """
    present: dict[str, set[int]] = {}
    for row in rows:
        if row.config == config:
            present.setdefault(row.task_id, set()).add(row.run_index)
    lost, chances, at_end = 0, [], 0
    for m in missing:
        have = present.get(m.task_id, set())
        gone = set(range(m.expected_runs)) - have
        short = m.expected_runs - (m.candidate_runs if candidate else m.baseline_runs)
        if short <= 0 or len(gone) != short or short == m.expected_runs:
            lost += max(short, 0)
            continue  # numbered outside 0..expected-1, or nothing ran: no order to read
        lost += short
        chances.append(1 / math.comb(m.expected_runs, short))
        at_end += min(gone) == m.expected_runs - short
    return lost, chances, at_end


def loss_order_warnings(
    rows: Sequence[RunRow], baseline: str, candidate: str, missing: Sequence[MissingTask]
) -> list[str]:
    """Warnings when lost runs sit at the end of the run order, or on one side.

    ``--allow-missing`` assumes losses unrelated to passing; a run cut off (a deadline, a
    crash, a budget) loses the last runs, when drift or a failing streak is likeliest. Under
    losses at random positions a task side short of ``r`` of ``E`` runs loses exactly its last
    ``r`` with chance ``1 / C(E, r)``: the warning names an excess at the 5% level (the
    exact tail of that sum of chances), and lost runs that fall on one side more often than
    a fair coin gives (two-sided binomial, 5%).
    """
    out: list[str] = []
    counts = {}
    for name, is_candidate in ((baseline, False), (candidate, True)):
        lost, chances, at_end = _side_losses(rows, name, missing, is_candidate)
        counts[name] = lost
        if at_end >= 2 and (p := _tail_probability(chances, at_end)) <= 0.05:
            out.append(
                f"lost runs cluster at the end of the run order in {name!r}: {at_end} of "
                f"{len(chances)} short tasks lost exactly their last runs (p = {p:.2g} if "
                "losses fell at random positions): a run cut off under drift is not what "
                "--allow-missing assumes; read the worst case and the tipping point"
            )
    total = sum(counts.values())
    top = max(counts.values())
    if total >= 4 and (p := min(1.0, 2 * _fair_coin_tail(top, total))) <= 0.05:
        side = max(counts, key=lambda k: counts[k])
        out.append(
            f"lost runs fall on one side: {top} of {total} in {side!r} (p = {p:.2g} for a "
            "fair split): losses tied to one configuration are not what --allow-missing "
            "assumes; read the worst case and the tipping point"
        )
    return out


def _fair_coin_tail(top: int, total: int) -> float:
    """P(at least ``top`` heads in ``total`` fair tosses), exactly: no scipy.stats to import."""
    # exact integers divided once: no overflow however many runs were lost
    tail: int = sum(math.comb(total, j) for j in range(top, total + 1))
    return tail / (1 << total)


def _tallies(
    rows: Sequence[RunRow], baseline: str, candidate: str, scheduled: Iterable[str], min_runs: int
) -> tuple[dict[str, TaskTally], dict[str, TaskTally], list[MissingTask], list[PairedTask]]:
    """Each side's tallies, the tasks short of runs and every task paired (none dropped)."""
    base = {t.task_id: t for t in tally_runs(rows, baseline)}
    cand = {t.task_id: t for t in tally_runs(rows, candidate)}
    missing = _missing(base, cand, scheduled, min_runs, (baseline, candidate))
    paired, _ = pair_tallies(base.values(), cand.values(), min_runs=1)
    return base, cand, missing, paired


def _min_tasks(d: Decision, margin: float | None) -> int | None:
    """`GateResult.min_tasks`: the suite size a hidden broken class sets for this gate."""
    if d.gate == "non-inferior" and margin:
        return min_tasks(margin, d.alpha)
    if d.gate == "improved" and d.min_gain is not None and d.mean > 0:
        return min(SMALL_SUITE_TASKS, gain_min_tasks(d.mean, d.alpha))
    return None


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

    Every task with a run on both sides is paired (dropping a task that lost runs would bias
    the result). A task is missing data when either side has fewer runs than expected: the
    larger of ``min_runs``, its runs on either side, and its presence in ``scheduled``; missing
    data fails every gate but ``none`` unless ``allow_missing``. The design of the paired tasks
    (clustered over families when rows carry them and ``use_clusters``) is decided, and, when
    runs are missing, the worst case and the tipping point; then the per-task changes that
    survive Holm, the flips and, with ``mde``, the plan. ``method``, ``skew_correction`` and
    ``seed`` are the design's.

    Returns:
        The descriptive comparison (its band with t at every n, at ``alpha``) and the result.

    Raises:
        StatsInputError: Bad configs, duplicate runs, fewer than 2 paired tasks, a task with
            two families, a bad alpha, margin or ``min_runs``.

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
    worst, lost, tipping = _missing_analysis(design, observed, base, cand, missing)
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
        worst_case_passed=None if worst is None else worst.passed,
        families_used=observed.clusters is not None,
        cluster_note=_cluster_note(observed, families, all_families, use_clusters=use_clusters),
        warnings=_reliability_warnings(observed, paired, families)
        + [_INCOHERENT] * (not observed.coherent)
        + loss_order_warnings(row_list, baseline, candidate, missing),
        lost_runs=len(lost),
        tipping_point=tipping,
        min_tasks=_min_tasks(observed, margin),
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
        return (
            "only one family: no decision possible about families; treating tasks as "
            "independent assumes no shared family effect (--no-clusters decides so)"
        )
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
            + _MORE[observed.clusters is not None]
        ]
    if not observed.decidable and observed.clusters is None and g > _UNDECIDABLE:
        return [
            f"all {g} tasks share one family: no decision possible about families; treating "
            "tasks as independent assumes no shared family effect (improved and non-inferior "
            "cannot pass, no-regression cannot fail)" + _MORE[True]
        ]
    if not observed.decidable:
        return [
            f"only {g} {units}: no decision possible: the test's p-value is not monotone in "
            "the change it is tested against with so few, and a verdict would not order the "
            "evidence (improved and non-inferior cannot pass, no-regression cannot fail)"
            + _MORE[observed.clusters is not None]
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
    """How the observed decision was made, in words."""
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
    """The one outcome every rendering of ``compare`` shows, from the gate's observed decision.

    The terminal report, ``--json`` and ``--html`` only format it, so they cannot disagree.
    """
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


class GateOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The gate's options as a person gives them, checked, in the units `assess` takes.

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

    ``alpha`` or ``z`` (a normal quantile: 1.96 means 0.025) give the one-sided level; the
    margin (points) is required by ``non-inferior`` and refused by every other gate; ``mde``
    (points) goes with ``plan``; ``min_runs`` is at least 1 when given.

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
