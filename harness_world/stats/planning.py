"""``compare --plan``: the power of the current design and the tasks needed for a target power.

`plan_power` plans with what the gate uses (its standard error, Bell-McCaffrey df and design
effect) in a noncentral t; with families declared it simulates the gate's own bootstrap, for
the current power and, by a short search, for each row of tasks needed (docs/stats.md,
"Planning").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

import msgspec
from msgspec.structs import replace

from harness_world.stats.decision import (
    Design,
    decide,
    floor_variances,
    p_values,
    run_variance,
)
from harness_world.stats.estimators import (
    DEFAULT_ALPHA,
    PairedTask,
    StatsInputError,
    TaskTally,
)
from harness_world.stats.hidden_class import clears_gain_floor, gain_floor

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Plan", "PlanRow", "plan_power"]

_TARGET_POWER: Final = 0.8
_PLAN_RUNS: Final = (1, 3, 5, 10, 20)
_PLAN_SIMULATIONS: Final = 200
_ROW_SIMULATIONS: Final = 60  # suites per simulated power of a tasks-needed row
_ROW_STEPS: Final = 3  # simulated powers per row at most
_ROW_MAX_TASKS: Final = 200  # beyond, a row keeps the t: one simulated suite is slow there
_MAX_TASKS: Final = 10_000_000


class PlanRow(msgspec.Struct, frozen=True, kw_only=True):
    """Tasks needed for the target power at one number of runs per task and side.

    Attributes:
        runs: Runs per task per configuration.
        tasks: Paired tasks needed (null when no count up to 10 million reaches the power).
        total_runs: ``tasks * runs * 2`` (both configurations), or null.
        method: ``simulated`` when ``tasks`` was searched with the gate's own bootstrap on
            simulated suites (`_simulated_row`), else ``t`` (the noncentral t).
        power: The simulated power at ``tasks`` (null for ``t``); it may fall short of the
            target when the search's steps ran out.

    """

    runs: int
    tasks: int | None
    total_runs: int | None
    method: Literal["t", "simulated"] = "t"
    power: float | None = None


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
        design_effect: The gate's variance inflation from families, at least 1.
        df: The gate's degrees of freedom (Bell-McCaffrey) for the current design.
        effective_clusters: ``df + 1``.
        rows: Tasks needed at several run counts.
        power_method: ``simulated`` when families are declared (``power_now`` is the share of
            suites like this one, shifted to ``mde``, that the gate's own bootstrap passes),
            else ``t`` (the noncentral t).
        power_t: The noncentral t's power of the current design (the rows' method).
        simulations: Suites simulated for ``power_now`` (0 for ``t``).

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
    power_method: Literal["t", "simulated"] = "t"
    power_t: float = 0.0
    simulations: int = 0


def _power(n: int, df: float, sd: float, mde: float, alpha: float) -> float:
    """The noncentral t's power at ``n`` tasks.

    Below `hidden_class.SMALL_SUITE_TASKS` the estimate must also clear the gain floor
    (`hidden_class.min_gain`), so the statistic's threshold is the larger of the two.
    """
    from scipy import special, stats

    floor = gain_floor(n, alpha) or 0.0
    if sd <= 0:
        return 1.0 if mde >= floor else 0.0
    quantile = float(special.stdtrit(df, 1 - alpha))
    standard_error = sd / math.sqrt(n)
    ncp = mde / standard_error
    return float(stats.nct.sf(max(quantile, floor / standard_error), df, ncp))


class _Template(msgspec.Struct, frozen=True, kw_only=True):
    """The tasks a simulated suite copies: ids, families, true rates and observed run counts."""

    ids: list[str]
    families: list[str]
    base: list[float]
    cand: list[float]
    runs_b: list[int]
    runs_c: list[int]


def _template(
    items: Sequence[PairedTask], families: Mapping[str, str], mde: float, shrink: float
) -> _Template:
    """The tasks as a simulation copies them.

    Each task's baseline rate as observed; its candidate's that plus ``mde`` plus its
    deviation from the mean change times ``shrink``, clipped to ``[0, 1]``.
    """
    diffs = [p.difference for p in items]
    mean = math.fsum(diffs) / len(diffs)
    base = [p.baseline.passes / p.baseline.runs for p in items]
    return _Template(
        ids=[p.task_id for p in items],
        families=[families.get(p.task_id, "") for p in items],
        base=base,
        cand=[
            min(1.0, max(0.0, b + mde + (d - mean) * shrink))
            for b, d in zip(base, diffs, strict=True)
        ],
        runs_b=[p.baseline.runs for p in items],
        runs_c=[p.candidate.runs for p in items],
    )


def _suite(
    template: _Template, tasks: int | None, rng: np.random.Generator
) -> tuple[list[int], list[str], dict[str, str]]:
    """Template indices, task ids and families of one simulated suite.

    ``tasks`` None: the template itself. Otherwise whole families (a task without one alone)
    drawn at random with replacement until ``tasks`` tasks (the last one cut to fit), each
    draw a family of its own: a fresh suite of tasks like these, in families like these.
    """
    if tasks is None:
        ids = template.ids
        return (
            list(range(len(ids))),
            ids,
            {t: f for t, f in zip(ids, template.families, strict=True) if f},
        )
    units: dict[str, list[int]] = {}
    for i, (t, f) in enumerate(zip(template.ids, template.families, strict=True)):
        units.setdefault(f or f"\x00{t}", []).append(i)
    members = list(units.values())
    picked: list[int] = []
    families: dict[str, str] = {}
    draws = 0
    while len(picked) < tasks:
        unit = members[int(rng.integers(len(members)))]
        draws += 1
        for i in unit[: tasks - len(picked)]:
            if template.families[i]:
                families[f"s{len(picked)}"] = f"draw{draws}"
            picked.append(i)
    return picked, [f"s{j}" for j in range(len(picked))], families


def _gate_power(
    template: _Template, design: Design, sims: int, tasks: int | None, runs: int | None
) -> float:
    """The share of ``sims`` suites the gate's bootstrap passes at 0 (`_suite`'s suites).

    ``runs``: per task and side (None: as observed). Decided as `decide` does at 0
    (`p_values`), seeded by the design's seed.
    """
    import numpy as np

    rng = np.random.default_rng(design.seed)
    passed = 0
    for _ in range(sims):
        idx, ids, families = _suite(template, tasks, rng)
        base, cand = np.array(template.base)[idx], np.array(template.cand)[idx]
        runs_b = np.array(template.runs_b)[idx] if runs is None else np.full(len(idx), runs)
        runs_c = np.array(template.runs_c)[idx] if runs is None else np.full(len(idx), runs)
        b, c = rng.binomial(runs_b, base), rng.binomial(runs_c, cand)
        pairs = [
            PairedTask(
                task_id=t,
                baseline=TaskTally(task_id=t, runs=int(nb), passes=int(xb)),
                candidate=TaskTally(task_id=t, runs=int(nc), passes=int(xc)),
                difference=float(xc / nc - xb / nb),
            )
            for t, nb, xb, nc, xc in zip(ids, runs_b, b, runs_c, c, strict=True)
        ]
        design = replace(design, pairs=pairs, families=families)
        mean = math.fsum(p.difference for p in pairs) / len(pairs)
        passed += p_values(design)[0] <= design.alpha and clears_gain_floor(
            mean, len(pairs), design.alpha
        )
    return passed / sims


class _RowPlan(NamedTuple):
    """What every row searches for: the change, the level and the target power."""

    mde: float
    alpha: float
    target: float


def _sd_scale(tasks: int, df: float, sd: float, mde: float, alpha: float, power: float) -> float:
    """The factor on ``sd`` that gives the noncentral t the simulated ``power`` at ``tasks``."""
    from scipy import optimize

    power = min(max(power, alpha + 0.01), 0.995)  # the t's power lies in (alpha, 1)

    def gap(log_scale: float) -> float:
        return _power(tasks, df, sd * math.exp(log_scale), mde, alpha) - power

    lo, hi = -8.0, 8.0
    if gap(lo) < 0 or gap(hi) > 0:
        return 1.0
    return math.exp(float(optimize.brentq(gap, lo, hi, xtol=1e-6)))


def _scaled_power(per_task: float, sd: float, plan: _RowPlan, tasks: int) -> float:
    """The t's power at ``tasks`` with sd ``sd``, df growing as the current design's do."""
    return _power(tasks, max(1.0, per_task * tasks - 1), sd, plan.mde, plan.alpha)


def _simulated_row(
    row: PlanRow, sd: float, per_task: float, plan: _RowPlan, simulate: Callable[[int], float]
) -> PlanRow:
    """Tasks needed at ``row.runs`` searched with the gate's own power (``simulate(k)``).

    From the t's count, each step simulates the gate's power at k, scales the t's sd so that
    the t agrees with it there, and asks the scaled t for the next k (a secant on the t's
    curve), until a count repeats or after `_ROW_STEPS`; the row is the smallest count tried
    whose simulated power reaches the target, else the largest tried (its power short of it).
    A row the t puts beyond `_ROW_MAX_TASKS` (or out of reach) keeps the t.
    """
    mde, alpha, target = plan
    if row.tasks is None or row.tasks > _ROW_MAX_TASKS:
        return row
    tried: dict[int, float] = {}
    tasks = max(2, row.tasks)
    for _ in range(_ROW_STEPS):
        tried[tasks] = simulate(tasks)
        df = max(1.0, per_task * tasks - 1)
        scaled = sd * _sd_scale(tasks, df, sd, mde, alpha, tried[tasks])
        need = _smallest_n(functools.partial(_scaled_power, per_task, scaled, plan), target)
        if need is None or need > _ROW_MAX_TASKS or need in tried:
            break
        tasks = need
    reached = [k for k, power in tried.items() if power >= target]
    best = min(reached) if reached else max(tried)
    return PlanRow(
        runs=row.runs,
        tasks=best,
        total_runs=best * row.runs * 2,
        method="simulated",
        power=tried[best],
    )


def _plan_row(
    r: int, sd: float, per_task: float, mde: float, alpha: float, power: float
) -> PlanRow:
    """Tasks needed at ``r`` runs per side: df grow as ``per_task * k - 1`` with k tasks."""

    def power_at(k: int) -> float:
        return _power(k, max(1.0, per_task * k - 1), sd, mde, alpha)

    needed = _smallest_n(power_at, power)
    return PlanRow(runs=r, tasks=needed, total_runs=None if needed is None else needed * r * 2)


def _plan_rows(
    sds: Mapping[int, float],
    per_task: float,
    plan: _RowPlan,
    template: _Template | None,
    gate: Design,
) -> list[PlanRow]:
    """A row per run count (its sd given): the t's count, searched by simulation with one."""
    rows = []
    for runs, sd in sds.items():
        row = _plan_row(runs, sd, per_task, plan.mde, plan.alpha, plan.target)
        if template is not None:

            def simulate(tasks: int, runs: int = runs) -> float:
                assert template is not None  # narrowed above, not inside the closure
                return _gate_power(template, gate, _ROW_SIMULATIONS, tasks, runs)

            row = _simulated_row(row, sd, per_task, plan, simulate)
        rows.append(row)
    return rows


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

    It plans with what the gate uses: its standard error (CR2 or the floor), its
    Bell-McCaffrey df and design effect ``(SE_CR2 / SE_paired)^2``, in a noncentral t (0 when
    the families are too few for any decision). A task's variance splits into a between-task
    part ``max(0, sd^2 - mean v_i)`` and a run part ``2 s^2 / r`` at r runs per side, so more
    runs shrink only the latter; df grow with the suite as the current design's do
    (docs/stats.md, "Planning"). With families the current power is the gate's own: suites
    like this one shifted to ``mde``, each decided by the bootstrap (`_gate_power`); the
    t's beside it in ``power_t``; and each row's count is searched with it (`_simulated_row`).

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

    power_t = _power(n, decision.df, decision.standard_error * math.sqrt(n), mde, alpha)
    if decision.clusters is not None and 2.0**decision.clusters * alpha < 1:
        power_t = 0.0  # no sign pattern is rare enough for the gate to decide
    # With families the t misjudges the bootstrap's power: simulate the gate itself.
    simulate = decision.clusters is not None and power_t > 0
    shrink = math.sqrt(between / sample_var) if sample_var > 0 else 0.0
    template = _template(items, design.families, mde, shrink) if simulate else None
    gate = replace(design, method="webb")
    power_now = _gate_power(template, gate, _PLAN_SIMULATIONS, None, None) if template else power_t
    sds = {
        r: math.sqrt(deff * (between + 2 * run_var / r)) for r in sorted({*_PLAN_RUNS, runs_now})
    }
    rows = _plan_rows(sds, per_task, _RowPlan(mde, alpha, power), template, gate)
    return Plan(
        mde=mde,
        alpha=alpha,
        power_target=power,
        tasks_now=n,
        runs_now=runs_now,
        power_now=power_now,
        power_t=power_t,
        power_method="simulated" if simulate else "t",
        simulations=_PLAN_SIMULATIONS if simulate else 0,
        between_task_variance=between,
        run_variance=run_var,
        design_effect=deff,
        df=decision.df,
        effective_clusters=decision.effective_clusters,
        rows=rows,
    )
