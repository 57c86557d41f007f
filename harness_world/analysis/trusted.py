"""Trusted-completion figures of a run directory, computed from its records.

Every final record is replayed and graded (nothing a record says about itself is trusted), then
read as T(r) = goal ∧ no forbidden transition ∧ receipts ∧ within budget. Figures carry their
counts: trusted completion rate (trusted / valid attempts), trusted pass^k (the pass^k estimator
applied to the trusted-completion indicator, per task, macro-averaged over tasks), first-attempt
vs eventual trusted completion (a failed try kept by ``run --retries`` makes an attempt not
first-attempt), safe stops counted apart from completions, forbidden effects, cost per trusted
completion (undefined — null — when there are none, never zero), and the fault exposure table
per task and fault (unexposed / recovered / not_recovered) and per condition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
import msgspec

from harness_world.analysis.tables import number_text, render_table
from harness_world.evidence.record import Record
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.trusted import TrustedCompletion, trusted_completion
from harness_world.grading.verifier import Measure, SlotResult, VerifiedRecord
from harness_world.running.reader import RunReader
from harness_world.running.rundir import RunScan
from harness_world.stats import StatsInputError, mcnemar_midp, pass_hat_k

__all__ = [
    "TRUSTED",
    "ConditionFigures",
    "ExposureRow",
    "TrustedComparison",
    "TrustedObserver",
    "TrustedPair",
    "TrustedReport",
    "TrustedSummary",
    "compare_trusted",
    "counting_tries",
    "observe_trusted",
    "read_trusted",
    "render_trusted",
    "trusted_report",
    "trusted_summary",
]


class ExposureRow(msgspec.Struct, frozen=True, kw_only=True):
    """How often one scheduled fault of one task was unexposed, recovered or not recovered.

    Attributes:
        task_id: The task.
        fault_id: The fault.
        behaviour: Its provider behaviour.
        unexposed: Attempts that never reached the trigger.
        recovered: Attempts exposed to it that were trusted completions.
        not_recovered: Attempts exposed to it that were not.
    """

    task_id: str
    fault_id: str
    behaviour: str
    unexposed: int = 0
    recovered: int = 0
    not_recovered: int = 0


class ConditionFigures(msgspec.Struct, frozen=True, kw_only=True):
    """Figures of the attempts under one condition (the task's fault behaviours, or ``none``).

    Attributes:
        condition: E.g. ``commit_then_drop_response`` or ``commit_then_drop_response+stale_read``.
        attempts: Valid (verified and graded) attempts.
        trusted: Trusted completions.
        safe_stops: Attempts that were not trusted completions and had no forbidden effect.
        forbidden: Attempts with at least one forbidden transition.
        exposed: Fault exposures (attempt × fault) under this condition.
        recovered: Exposures recovered.
    """

    condition: str
    attempts: int
    trusted: int
    safe_stops: int
    forbidden: int
    exposed: int
    recovered: int


class TrustedReport(msgspec.Struct, frozen=True, kw_only=True):
    """The trusted-completion vector of a run, with explicit counts.

    Attributes:
        attempts: Final records found (one per task and sample).
        valid: Of those, verified and graded against their unchanged task.
        trusted: Trusted completions.
        trusted_rate: trusted / valid (null when nothing is valid).
        trusted_pass_hat_k: Trusted pass^k by k (1..the smallest sample count), macro-averaged
            over tasks with equal weights.
        first_attempt_trusted: Trusted completions reached with no earlier failed try.
        eventual_trusted: Trusted completions after retries (equals ``trusted``).
        retried: Attempts with at least one failed try before the final record.
        safe_stops: Not trusted, no forbidden effect: counted apart from completions.
        forbidden: Attempts with at least one forbidden transition.
        conjunct_failures: Attempts failing each conjunct (goal, no_forbidden, receipts,
            within_budget).
        cost: Money over all tries (uncertain exposure included), US dollars.
        cost_per_trusted: cost / trusted; null (undefined) when there is no trusted completion.
        exposure: The fault exposure table, per task and fault.
        by_condition: Figures per condition.
    """

    attempts: int
    valid: int
    trusted: int
    trusted_rate: float | None
    trusted_pass_hat_k: dict[str, float]
    first_attempt_trusted: int
    eventual_trusted: int
    retried: int
    safe_stops: int
    forbidden: int
    conjunct_failures: dict[str, int]
    cost: float
    cost_per_trusted: float | None
    exposure: list[ExposureRow]
    by_condition: list[ConditionFigures]


def _condition(task: Task) -> str:
    return "+".join(sorted({f.behaviour for f in task.faults})) or "none"


def _cost(record: Record) -> float:
    return record.usage.cost + record.usage.uncertain_cost


@attrs.define(slots=True)
class _Tally:
    """What `trusted_report` gathers while it walks a run's record folders."""

    index: Mapping[str, Task]
    summaries: Mapping[tuple[str, int], TrustedSummary] = attrs.field(factory=dict)
    results: dict[str, list[TrustedCompletion]] = attrs.field(factory=dict)
    conditions: dict[str, str] = attrs.field(factory=dict)
    exposure: dict[tuple[str, str], dict[str, int]] = attrs.field(factory=dict)
    behaviours: dict[tuple[str, str], str] = attrs.field(factory=dict)
    attempts: int = 0
    valid: int = 0
    retried: int = 0
    first_trusted: int = 0
    cost: float = 0.0
    relevant: bool = False

    def add_slot(self, slot: SlotResult) -> None:
        """Count one scheduled slot: what every try cost, then its final record when graded."""
        task = self.index.get(slot.task_id)
        if task is not None:  # relevance from the task, not its records
            self.relevant = self.relevant or bool(task.faults or task.forbid or task.receipts)
        self.cost += slot.retry_cost
        if slot.evidence == "missing":
            return
        self.attempts += 1
        summary = self.summaries.get((slot.task_id, slot.sample))
        if summary is None:  # foreign, swapped, unindexed, tampered or unreadable
            return
        self.cost += summary.cost
        if task is None or summary.completion is None or not slot.counted:
            return
        tc = counting_tries(summary.completion, slot)
        self.valid += 1
        self.results.setdefault(task.id, []).append(tc)
        self.conditions[task.id] = _condition(task)
        self.retried += slot.retried > 0
        self.first_trusted += tc.trusted and slot.retried == 0
        for fault in tc.faults:
            row = self.exposure.setdefault((task.id, fault.fault_id), {})
            row[fault.status] = row.get(fault.status, 0) + 1
            self.behaviours[(task.id, fault.fault_id)] = fault.behaviour


def counting_tries(tc: TrustedCompletion, slot: SlotResult) -> TrustedCompletion:
    """A final record's trusted completion with its slot's earlier tries counted.

    Every executed try's effects were real: a forbidden transition made by a try that failed
    and was executed again (or one whose record cannot be checked, and so may have made one)
    makes the slot's attempt one with a forbidden effect, neither a trusted completion nor a
    safe stop.
    """
    tried = [
        f"try {t.kind}-{t.number}: "
        + (", ".join(f.split(":", 1)[0] for f in t.forbidden) or f"{t.evidence} ({t.reason})")
        for t in slot.tries
        if t.possibly_forbidden
    ]
    if not tried:
        return tc
    failed = {**tc.failed, "no_forbidden": [*tc.failed["no_forbidden"], *tried]}
    return msgspec.structs.replace(
        tc, no_forbidden=False, trusted=False, safe_stop=False, failed=failed
    )


class TrustedSummary(msgspec.Struct, frozen=True):
    """What the trusted figures need of one verified record (the record itself is not kept).

    Attributes:
        cost: Its cost, uncertain exposure included.
        task_id: The task it names.
        completion: Its trusted completion, when it was graded against a task known here.
        fault_seed: The seed its faults were drawn with (the sample seed without faults):
            what pairs attempts across two runs.
        task_hash: The hash of the task ``completion`` was graded against (empty without).
    """

    cost: float
    task_id: str
    completion: TrustedCompletion | None
    fault_seed: int = 0
    task_hash: str = ""


def trusted_summary(verified: VerifiedRecord) -> TrustedSummary:
    """The `TrustedSummary` of one record verified in its slot (`TRUSTED`'s figure)."""
    record, task = verified.record, verified.task
    grade = verified.verification.grade
    completion = None
    if task is not None and grade is not None:
        completion = trusted_completion(record, task, grade)
    seed = record.faults.seed if record.faults is not None else record.seed
    graded = task.hash if task is not None and completion is not None else ""
    return TrustedSummary(_cost(record), record.task_id, completion, seed, graded)


TRUSTED = Measure("trusted", trusted_summary, TrustedSummary)
"""The trusted-completion summary of each verified final record, cached with its judgement."""


@attrs.define(slots=True)
class TrustedObserver:
    """Takes each verified record's `TrustedSummary` during a read (holding no record).

    A summary graded against a task other than this observer's (another definition under the
    same id) keeps its cost and seed but no completion.
    """

    index: Mapping[str, Task]
    summaries: dict[tuple[str, int], TrustedSummary] = attrs.field(factory=dict)
    """By slot: (task id, sample)."""

    @property
    def measure(self) -> Measure:
        """`TRUSTED`."""
        return TRUSTED

    def take(self, path: Path, slot: tuple[str, int], figure: TrustedSummary) -> None:
        """One slot's summary, its completion kept only when graded against this index's task."""
        task = self.index.get(figure.task_id)
        if figure.completion is not None and (task is None or task.hash != figure.task_hash):
            figure = msgspec.structs.replace(figure, completion=None, task_hash="")
        self.summaries[slot] = figure

    def __call__(self, path: Path, verified: VerifiedRecord) -> None:
        """Summarise one verified record (as an `Observer`)."""
        record = verified.record
        self.take(path, (record.task_id, record.sample), trusted_summary(verified))


def _trusted_pass_k(results: dict[str, list[TrustedCompletion]]) -> dict[str, float]:
    """Trusted pass^k for k = 1..the smallest sample count, macro-averaged over tasks."""
    smallest = min((len(v) for v in results.values()), default=0)
    counts = [(len(v), sum(t.trusted for t in v)) for v in results.values()]  # once, not per k
    return {
        str(k): sum(pass_hat_k(n, c, k) for n, c in counts) / len(results)
        for k in range(1, smallest + 1)
    }


def _by_condition(tally: _Tally) -> list[ConditionFigures]:
    """The figures of each condition, in the conditions' sorted order."""
    by_condition = []
    for condition in sorted(set(tally.conditions.values())):
        tcs = [tc for t, v in tally.results.items() if tally.conditions[t] == condition for tc in v]
        faults = [f for tc in tcs for f in tc.faults if f.status != "unexposed"]
        by_condition.append(
            ConditionFigures(
                condition=condition,
                attempts=len(tcs),
                trusted=sum(tc.trusted for tc in tcs),
                safe_stops=sum(tc.safe_stop for tc in tcs),
                forbidden=sum(not tc.no_forbidden for tc in tcs),
                exposed=len(faults),
                recovered=sum(f.status == "recovered" for f in faults),
            )
        )
    return by_condition


def _exposure_rows(tally: _Tally) -> list[ExposureRow]:
    """The fault exposure table, sorted by task and fault."""
    return [
        ExposureRow(
            task_id=task_id,
            fault_id=fault_id,
            behaviour=tally.behaviours[(task_id, fault_id)],
            unexposed=counts.get("unexposed", 0),
            recovered=counts.get("recovered", 0),
            not_recovered=counts.get("not_recovered", 0),
        )
        for (task_id, fault_id), counts in sorted(tally.exposure.items())
    ]


def _report(tally: _Tally) -> TrustedReport:
    """The report of what the tally gathered."""
    every = [tc for tcs in tally.results.values() for tc in tcs]
    trusted = sum(tc.trusted for tc in every)
    return TrustedReport(
        attempts=tally.attempts,
        valid=tally.valid,
        trusted=trusted,
        trusted_rate=trusted / tally.valid if tally.valid else None,
        trusted_pass_hat_k=_trusted_pass_k(tally.results),
        first_attempt_trusted=tally.first_trusted,
        eventual_trusted=trusted,
        retried=tally.retried,
        safe_stops=sum(tc.safe_stop for tc in every),
        forbidden=sum(not tc.no_forbidden for tc in every),
        conjunct_failures={
            name: sum(bool(tc.failed[name]) for tc in every)
            for name in ("goal", "no_forbidden", "receipts", "within_budget")
        },
        cost=tally.cost,
        cost_per_trusted=tally.cost / trusted if trusted else None,
        exposure=_exposure_rows(tally),
        by_condition=_by_condition(tally),
    )


def trusted_report(
    slots: Sequence[SlotResult],
    tasks: Mapping[str, Task],
    summaries: Mapping[tuple[str, int], TrustedSummary],
) -> TrustedReport | None:
    """Trusted-completion figures of a judged run directory.

    Returns None when no task of the run declares a fault, a forbidden transition or a receipt
    (the figures would only repeat the plain pass rate).

    Args:
        slots: The run's slots as its reader judged them (every try).
        tasks: The tasks by id, that the scan graded by.
        summaries: What a `TrustedObserver` over these tasks gathered during that scan.
    """
    tally = _Tally(index=tasks, summaries=summaries)
    for slot in slots:
        tally.add_slot(slot)
    if not tally.relevant:
        return None
    return _report(tally)


def read_trusted(run_dir: str | Path, reader: RunReader | None = None) -> TrustedReport | None:
    """Read a run once and give its trusted-completion figures (see `trusted_report`).

    Args:
        run_dir: The run directory.
        reader: How it is read (default: the built-in tasks and worlds).
    """
    reader = reader or RunReader.of()
    observer, scan = observe_trusted(run_dir, reader.verifier.tasks or {}, reader)
    return trusted_report(scan.slots, reader.verifier.tasks or {}, observer.summaries)


def render_trusted(report: TrustedReport) -> str:
    """The trusted-completion vector as text (for ``report``)."""
    lines = [
        f"trusted completion: {report.trusted} of {report.valid} valid attempts "
        f"(rate {number_text(report.trusted_rate)}); first attempt {report.first_attempt_trusted}, "
        f"eventual {report.eventual_trusted} ({report.retried} retried)",
        f"safe stops {report.safe_stops}; attempts with a forbidden transition "
        f"{report.forbidden}; conjunct failures "
        + ", ".join(f"{k} {v}" for k, v in report.conjunct_failures.items()),
        "trusted pass^k: "
        + (", ".join(f"k={k} {v:.3f}" for k, v in report.trusted_pass_hat_k.items()) or "none"),
        "cost per trusted completion: "
        + (
            "undefined (no trusted completion)"
            if report.cost_per_trusted is None
            else f"${report.cost_per_trusted:.4f}"
        ),
    ]
    return "\n".join([*lines, "", *_trusted_tables(report)])


def _trusted_tables(report: TrustedReport) -> list[str]:
    """The figures by fault condition, then each fault's exposure: two fixed-width tables."""
    conditions = [
        [c.condition, str(c.attempts), str(c.trusted), str(c.safe_stops), str(c.forbidden)]
        + [str(c.exposed), str(c.recovered)]
        for c in report.by_condition
    ]
    faults = [
        [e.task_id, e.fault_id, e.behaviour, str(e.unexposed), str(e.recovered)]
        + [str(e.not_recovered)]
        for e in report.exposure
    ]
    return [
        render_table(
            ["condition", "attempts", "trusted", "safe stops", "forbidden", "exposed", "recovered"],
            conditions,
        ),
        "",
        render_table(
            ["task", "fault", "behaviour", "unexposed", "recovered", "not recovered"], faults
        ),
    ]


class TrustedPair(msgspec.Struct, frozen=True, kw_only=True):
    """One attempt of a task in both runs, paired by task, condition and fault seed.

    Attributes:
        task_id: The task.
        condition: Its fault behaviours (``none`` without faults).
        sample: The sample index.
        fault_seed: The fault seed both attempts ran under.
        baseline: T(r) of the baseline's attempt.
        candidate: T(r) of the candidate's attempt.
    """

    task_id: str
    condition: str
    sample: int
    fault_seed: int
    baseline: bool
    candidate: bool


class TrustedComparison(msgspec.Struct, frozen=True, kw_only=True):
    """The trusted-completion vectors of two runs and their paired attempts.

    Attributes:
        baseline: The baseline's vector.
        candidate: The candidate's vector.
        pairs: Attempts present and graded in both with the same fault seed.
        unpaired: Attempts of one run with no partner (missing, ungraded, other seed).
        both: Pairs trusted in both runs.
        only_baseline: Pairs trusted in the baseline only.
        only_candidate: Pairs trusted in the candidate only.
        neither: Pairs trusted in neither.
    """

    baseline: TrustedReport
    candidate: TrustedReport
    pairs: list[TrustedPair]
    unpaired: int
    both: int
    only_baseline: int
    only_candidate: int
    neither: int


def _attempt_trust(
    summaries: Mapping[tuple[str, int], TrustedSummary], index: Mapping[str, Task]
) -> dict[tuple[str, int, int], tuple[str, bool]]:
    """(task, sample, fault seed) -> (condition, T) of every graded final record of a run."""
    out: dict[tuple[str, int, int], tuple[str, bool]] = {}
    for (task_id, sample), summary in summaries.items():
        task = index.get(task_id)
        if task is not None and summary.completion is not None:
            key = (task_id, sample, summary.fault_seed)
            out[key] = (_condition(task), summary.completion.trusted)
    return out


def observe_trusted(
    run_dir: str | Path, index: Mapping[str, Task], reader: RunReader | None = None
) -> tuple[TrustedObserver, RunScan]:
    """One scan of a run with a `TrustedObserver` over ``index`` (each record replayed once)."""
    observer = TrustedObserver(index)
    scan = (reader or RunReader.of(index.values())).read(run_dir, measure=[observer])
    return observer, scan


def compare_trusted(
    baseline: str | Path,
    candidate: str | Path,
    *,
    tasks: Mapping[str, Task] | None = None,
    observed: tuple[tuple[TrustedObserver, RunScan], tuple[TrustedObserver, RunScan]] | None = None,
    reader: RunReader | None = None,
) -> TrustedComparison | None:
    """Pair two runs' attempts by task, condition and fault seed (None without fault tasks).

    Args:
        baseline: The baseline run directory.
        candidate: The candidate run directory.
        tasks: The tasks by id (default: the built-in ones).
        observed: For each run, the `TrustedObserver` over ``tasks`` that watched its scan,
            and the scan (so nothing is replayed again); by default each run is read here.
        reader: How the runs are read when ``observed`` is not given.
    """
    index = tasks if tasks is not None else {t.id: t for t in load_tasks()}
    if observed is None:
        observed = (
            observe_trusted(baseline, index, reader),
            observe_trusted(candidate, index, reader),
        )
    (base_seen, base_scan), (cand_seen, cand_scan) = observed
    base_report = trusted_report(base_scan.slots, index, base_seen.summaries)
    cand_report = trusted_report(cand_scan.slots, index, cand_seen.summaries)
    if base_report is None or cand_report is None:
        return None
    base = _attempt_trust(base_seen.summaries, index)
    cand = _attempt_trust(cand_seen.summaries, index)
    pairs = [
        TrustedPair(
            task_id=task_id,
            condition=base[(task_id, sample, seed)][0],
            sample=sample,
            fault_seed=seed,
            baseline=base[(task_id, sample, seed)][1],
            candidate=cand[(task_id, sample, seed)][1],
        )
        for (task_id, sample, seed) in sorted(base.keys() & cand.keys())
        if base[(task_id, sample, seed)][0] == cand[(task_id, sample, seed)][0]
    ]
    return TrustedComparison(
        baseline=base_report,
        candidate=cand_report,
        pairs=pairs,
        unpaired=len(base) + len(cand) - 2 * len(pairs),
        both=sum(p.baseline and p.candidate for p in pairs),
        only_baseline=sum(p.baseline and not p.candidate for p in pairs),
        only_candidate=sum(p.candidate and not p.baseline for p in pairs),
        neither=sum(not p.baseline and not p.candidate for p in pairs),
    )


def render_trusted_comparison(comparison: TrustedComparison) -> str:
    """``compare``'s text for two runs of fault tasks, attempts paired.

    Pairs share task, condition and fault seed, so only the harness or the agent differs
    within one: trusted in both, in one only, in neither; per condition; and a McNemar mid-p
    over the discordant pairs.
    """
    c = comparison
    lines = [
        "Trusted completion, attempts paired by task, condition and fault seed:",
        f"  pairs {len(c.pairs)} (unpaired {c.unpaired}); trusted in both {c.both}, "
        f"baseline only {c.only_baseline}, candidate only {c.only_candidate}, "
        f"neither {c.neither}",
    ]
    try:
        test = mcnemar_midp([p.baseline for p in c.pairs], [p.candidate for p in c.pairs])
        lines.append(f"  McNemar mid-p over the discordant pairs: {test.p_value:.4f} (two-sided)")
    except StatsInputError as exc:
        lines.append(f"  McNemar mid-p: undefined ({exc})")
    by_condition: dict[str, list[TrustedPair]] = {}
    for pair in c.pairs:
        by_condition.setdefault(pair.condition, []).append(pair)
    for condition, pairs in sorted(by_condition.items()):
        base = sum(p.baseline for p in pairs)
        cand = sum(p.candidate for p in pairs)
        lines.append(f"  {condition}: {len(pairs)} pairs, trusted {base} -> {cand}")
    return "\n".join(lines) + "\n"
