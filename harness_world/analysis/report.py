"""Run reports: the result vector of a run directory, every figure with its denominator.

Beside the pass rate a report carries the run's process metrics
(`harness_world.analysis.process`, measured on each record while the scan verifies it) and its
layered sheets (`harness_world.analysis.layered`, from the layered result of every graded valid
attempt and the claims of the review records beside the run).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

import attrs
import msgspec

from harness_world.analysis.layered import LayeredTables, layered_tables
from harness_world.analysis.process import (
    AttemptProcess,
    ProcessSummary,
    attempt_process,
    summarize_process,
)
from harness_world.analysis.weighted import WeightedMean, weighted_mean
from harness_world.grading.verifier import Measure, SlotResult, VerifiedRecord
from harness_world.running.pending import settle
from harness_world.running.reader import RunReader
from harness_world.running.reviews import Review, scan_claims
from harness_world.running.rundir import RunCounts, RunScan
from harness_world.stats import (
    PassKSummary,
    ProportionInterval,
    RunRow,
    StatsInputError,
    mean_bounds,
    pass_k_bounds,
    pass_k_summary,
    tally_runs,
    wilson_interval,
)

__all__ = [
    "OFF_LADDER",
    "PASS_K_HELP",
    "PROCESS",
    "FailedTask",
    "FamilyFigures",
    "HarnessLayer",
    "ModelRequests",
    "PassKAt",
    "PerAttempt",
    "ProcessObserver",
    "RunReport",
    "SuiteMean",
    "build_report",
    "interval_ks",
    "latency_percentiles",
    "parse_pass_k_at",
    "report_from_scan",
    "report_rows",
    "results_rows",
    "rows_of",
    "suite_mean",
]


class PerAttempt(msgspec.Struct, frozen=True, kw_only=True):
    """Means per valid attempt and per passed attempt; null (undefined) when nothing passed.

    Attributes:
        tool_calls: Mean tool calls per valid attempt.
        requests: Mean provider requests per valid attempt.
        tokens: Mean input + output tokens per valid attempt.
        cost: Mean cost per valid attempt.
        tool_calls_per_pass: Total tool calls over passed attempts (null if none passed).
        requests_per_pass: Total requests over passed attempts.
        tokens_per_pass: Total tokens over passed attempts.
        cost_per_pass: Total cost, failures and retries included, over passed attempts.
        user_turns: Mean exchanges with a simulated user per valid attempt; unset (left out of
            JSON) when no record of the run has a user turn.
    """

    tool_calls: float | None
    requests: float | None
    tokens: float | None
    cost: float | None
    tool_calls_per_pass: float | None
    requests_per_pass: float | None
    tokens_per_pass: float | None
    cost_per_pass: float | None
    user_turns: float | msgspec.UnsetType | None = msgspec.UNSET


class ModelRequests(msgspec.Struct, frozen=True, kw_only=True):
    """Model requests that failed within attempts, over every executed slot of the run.

    These are the agent drivers' own request retries, not re-run attempts (``counts.retried``
    counts those); a slot's failed tries are included.

    Attributes:
        retried: Requests that repeated a failed one (an error status, a lost response).
        lost: Requests whose response never arrived (timeout, connection error): the provider
            may have spent tokens on them.
        lost_input_tokens_estimate: The prompt tokens of the lost requests, as the drivers
            *estimated* them from what they sent (no response reports them; their output
            tokens are unknown). Not part of the token figures of `PerAttempt`.
        attempts: Executed slots with at least one retried or lost request.
    """

    retried: int = 0
    lost: int = 0
    lost_input_tokens_estimate: int = 0
    attempts: int = 0


class FamilyFigures(msgspec.Struct, frozen=True, kw_only=True):
    """Pass counts within one task family.

    Attributes:
        family: The family.
        tasks: Tasks in it.
        valid: Valid attempts.
        passed: Passed attempts.
        pass_rate: passed / valid (null when there is no valid attempt).
        interval: The Wilson 95 % interval of the pass rate (null without valid attempts).
    """

    family: str
    tasks: int
    valid: int
    passed: int
    pass_rate: float | None
    interval: ProportionInterval | None = None


class SuiteMean(msgspec.Struct, frozen=True, kw_only=True):
    """The suite's mean per-task pass rate with an interval that counts task luck.

    The pooled Wilson interval of `RunReport.pass_rate` treats every attempt as independent:
    it is right for "this attempt" but not for the suite, whose tasks differ in difficulty and
    were one draw of many possible. This interval is over tasks: the mean of per-task pass
    rates and the two one-sided bounds of `harness_world.stats.mean_bounds`, the ``compare``
    gate's wild cluster bootstrap-t (Webb weights, CR2-studentized, skew-corrected) over task
    families (every task its own family when none are known).

    Attributes:
        tasks: Tasks with at least one valid attempt.
        clusters: Families used (tasks when none).
        mean: Mean per-task pass rate.
        low: Lower end of the two-sided interval (clipped to [0, 1]).
        high: Upper end.
        confidence: Its two-sided level (0.95).
        df: Bell-McCaffrey degrees of freedom of the reference t (CR2 over the clusters).
        method: How the interval was made, as the report prints it.
        why: Why the interval is as wide as it is, when a person would ask: every task
            scored the same (no spread between tasks for the bootstrap to resample, so
            nothing is learnt about another draw of tasks), or few clusters (below
            `FEW_CLUSTERS`); empty otherwise.
    """

    tasks: int
    clusters: int
    mean: float
    low: float
    high: float
    confidence: float
    df: float
    method: str = ""
    why: str = ""


FEW_CLUSTERS = 10
"""Below this many tasks (or families), the suite interval is called wide for that reason."""


def _why_wide(rates: Sequence[float], clusters: int, over: str) -> str:
    """The reason a suite interval is wide, in words (see `SuiteMean.why`)."""
    if len(set(rates)) == 1:
        return (
            f"every task scored {rates[0]:.3f}: with no spread between tasks the interval over "
            "tasks says nothing about another draw; it is conditioned on these tasks, and the "
            "per-attempt Wilson interval is the one to read"
        )
    if clusters < FEW_CLUSTERS:
        return (
            f"wide because there are only {clusters} {over}: the interval is over {over}, "
            f"not attempts, and {clusters} of them pin the mean down loosely"
        )
    return ""


class FailedTask(msgspec.Struct, frozen=True, kw_only=True):
    """A task with failed attempts, and the criteria that failed them.

    Attributes:
        task_id: The task.
        failed: Valid attempts that failed their grade.
        valid: Valid attempts.
        criteria: Failed criterion id to the number of attempts it failed.
        reason: The first failed criterion's detail, from the first failed attempt.
    """

    task_id: str
    failed: int
    valid: int
    criteria: dict[str, int]
    reason: str


class HarnessLayer(msgspec.Struct, frozen=True, kw_only=True):
    """The harness layer over a run's graded valid attempts, beside the pass rate.

    Attributes:
        graded: Valid attempts whose harness-layer criteria were checked.
        clean: Those where every harness-layer criterion passed.
        failed: Harness criterion id -> attempts that failed it.
    """

    graded: int
    clean: int
    failed: dict[str, int]


class RunReport(msgspec.Struct, frozen=True, kw_only=True):
    """The result vector of one run.

    Attributes:
        out: The run directory.
        revision: The revision id.
        build: The revision's build component (the hash of the code that ran the attempts).
        agent: The agent's name.
        counts: Scheduled, executed, valid, invalid, retried (re-run attempts), missing;
            passed, pending (``passed_automated``: prose not reviewed), failed, not graded,
            and whether the pending ones were counted as passed (``counts.pending_counted``).
        pass_rate: passed / valid attempts with its Wilson 95 % interval (null: none valid);
            a pending attempt is not a pass unless ``counts.pending_counted``. So for every
            figure that counts passes (pass^k, families, suite mean, the CSV rows).
        completed_but_failed: Valid attempts that ended ``completed`` and failed their grade.
        first_try_completed: Attempts completed on their first execution.
        eventually_completed: Attempts completed at all (after retries of error outcomes).
        pass_k: pass^k and pass@k for k = 1..samples over tasks with at least k valid runs,
            with one-sided 97.5% bounds over tasks (`pass_k_bounds`) at the ladder's k
            (`interval_ks`: 1-5, 10, 20, 50, ..., the largest, and any asked); elsewhere the
            bounds are null and ``bound_note`` says so.
        per_attempt: Consumption per valid and per passed attempt.
        latency_p50_s: Median wall-clock duration (context, not evidence).
        latency_p95_s: 95th percentile.
        families: Figures per task family.
        failed_tasks: Tasks with failed attempts and the criteria that failed them.
        attempts: Every scheduled slot, judged (missing ones included).
        harness: The harness layer over the graded valid attempts (not part of the pass rate).
        requests: Retried and lost model requests within the attempts.
        suite_mean: The mean per-task pass rate with an interval over tasks (task luck
            included), null with fewer than 2 tasks; the headline figure for the suite.
        task_families: Task id -> family for every task of the run that has one (what
            ``report --csv`` writes in its ``family`` column, so ``compare`` on the CSV
            clusters as it does on the run directory).
        weighted_mean: The mean per-task pass rate with the task files' declared weights,
            beside the unweighted one; unset (left out of JSON) unless some task weighs other
            than 1.
        not_reviewed_criteria: Prose criteria left open on valid attempts (a person reviews
            them; an attempt they hold open is pending, not passed, unless counted).
        not_reviewed_attempts: Valid attempts with at least one of them.
        process: Process metrics over the counted attempts whose record the scan verified
            (null when the report was built from a scan that did not measure them).
        layered: The layered sheets per dimension and pooled, over the graded valid
            attempts' layered results, with the claims of the run's review records.
        tries: Executed slots by how many tries each took (``"1"``: executed once; earlier
            tries are kept and judged, see `harness_world.grading.TryResult`).
        first_try_pass_k: pass^k over first tries: a slot passes only if its first try was
            its final, valid and passing attempt (a retried slot does not), over every slot
            that executed; empty when no slot was retried (it equals ``pass_k`` then).
        weighted_pass_k: ``pass_k`` with the task files' declared weights at every k, with
            its bounds; empty unless some task averaged weighs other than 1.
    """

    out: str
    revision: str
    agent: str
    counts: RunCounts
    pass_rate: ProportionInterval | None
    completed_but_failed: int
    first_try_completed: int
    eventually_completed: int
    pass_k: list[PassKSummary]
    per_attempt: PerAttempt
    latency_p50_s: float | None
    latency_p95_s: float | None
    families: list[FamilyFigures]
    failed_tasks: list[FailedTask]
    attempts: list[SlotResult]
    harness: HarnessLayer = HarnessLayer(graded=0, clean=0, failed={})
    requests: ModelRequests = ModelRequests()
    task_families: dict[str, str] = msgspec.field(default_factory=dict)
    suite_mean: SuiteMean | None = None
    weighted_mean: WeightedMean | msgspec.UnsetType = msgspec.UNSET
    build: str = ""
    not_reviewed_criteria: int = 0
    not_reviewed_attempts: int = 0
    process: ProcessSummary | None = None
    layered: LayeredTables | None = None
    tries: dict[str, int] = msgspec.field(default_factory=dict)
    first_try_pass_k: list[PassKSummary] = msgspec.field(default_factory=list)
    weighted_pass_k: list[PassKSummary] = msgspec.field(default_factory=list)


def results_rows(
    slots: Iterable[SlotResult], families: Mapping[str, str], config: str
) -> list[RunRow]:
    """The graded, valid slots as results rows, each with its task's family (or "").

    The one row builder of ``compare``'s input: the rows a run directory is compared on and
    the rows ``report --csv`` writes, so that ``compare`` on the CSV clusters and counts as it
    does on the run directory.
    """
    return [
        RunRow(
            task_id=s.task_id,
            run_index=s.sample,
            config=config,
            passed=s.passed,
            family=families.get(s.task_id, ""),
        )
        for s in slots
        if s.counted and s.passed is not None
    ]


def rows_of(scan: RunScan, config: str) -> list[RunRow]:
    """The graded, valid slots of a scan as results rows (see `results_rows`)."""
    return results_rows(scan.slots, scan.families, config)


def report_rows(report: RunReport, config: str) -> list[RunRow]:
    """The rows ``report --csv`` writes: the report's attempts, as `rows_of` gives them.

    Each row also carries the run's fingerprint: its revision, the models that answered that
    attempt and the build, so a row read out of its file still says what made it.
    """
    unsafe = str.maketrans({c: "_" for c in ',"\r\n'})  # a provider's id, kept writable
    models = {
        (s.task_id, s.sample): "+".join(m.translate(unsafe) for m in s.models) or "none"
        for s in report.attempts
    }
    return [
        msgspec.structs.replace(
            row,
            fingerprint=f"revision={report.revision[:16]};"
            f"models={models[(row.task_id, row.run_index)]};build={report.build[:12]}",
        )
        for row in results_rows(report.attempts, report.task_families, config)
    ]


def _mean(total: float, count: int) -> float | None:
    return None if count == 0 else total / count


PassKAt = Collection[int] | Literal["all"]
"""The k at which a report bounds pass^k beside the ladder (`interval_ks`), or every k."""

OFF_LADDER: Final = "no interval at this k: asked only at the ladder's k (report --pass-k K)"
"""The bound note of a pass^k the report gives without an interval (`interval_ks`)."""


PASS_K_HELP: Final = (
    "also bound pass^k at these k (comma-separated), or at every k with 'all'; by default "
    "only at k = 1-5, 10, 20, 50, 100, ... and the largest, since each interval is a "
    "bootstrap inversion (hundreds of k cost more than replaying the run)"
)
"""``report --pass-k``'s help, beside the ladder it extends."""


def interval_ks(samples: int, at: PassKAt = ()) -> frozenset[int]:
    """The k whose pass^k gets an interval: 1-5, 10, 20, 50, 100, 200, 500, ..., the largest.

    An interval costs a bootstrap inversion, so with hundreds of samples bounding every k
    would cost more than replaying the records; the ladder keeps the small k that agents are
    compared on and a few orders of magnitude beyond. ``at`` adds k (``"all"``: every k).
    """
    if at == "all":
        return frozenset(range(1, samples + 1))
    ladder = set(range(1, min(5, samples) + 1)) | {samples}
    step = 10
    while step <= samples:
        ladder |= {k for k in (step, 2 * step, 5 * step) if k <= samples}
        step *= 10
    return frozenset(ladder | {k for k in at if 1 <= k <= samples})


def parse_pass_k_at(text: str) -> PassKAt:
    """``--pass-k``'s value: ``all`` or k's separated by commas (each a whole number >= 1).

    Raises:
        ValueError: Anything else, naming the piece that is not a k.
    """
    if text.strip() == "all":
        return "all"
    ks = []
    for piece in text.split(","):
        if not piece.strip().isdecimal() or int(piece) < 1:
            raise ValueError(f"{piece.strip()!r} is not a k (a whole number >= 1, or 'all')")
        ks.append(int(piece))
    return frozenset(ks)


def _pass_k(
    rows: list[RunRow],
    samples: int,
    families: Mapping[str, str],
    weights: Mapping[str, float] | None = None,
    at: PassKAt = (),
) -> list[PassKSummary]:
    """pass^k at every k, with bounds over tasks (`pass_k_bounds`) at `interval_ks`' k.

    The largest k that has a task is bounded too, so a run cut short keeps its last row's
    interval. Weighted if asked.
    """
    tallies = tally_runs(rows, "run") if rows else []
    every = None if weights is None else {t.task_id: weights.get(t.task_id, 1.0) for t in tallies}
    bounded = interval_ks(samples, at) | {max((t.runs for t in tallies), default=0)}
    out: list[PassKSummary] = []
    for k in range(1, samples + 1):
        try:
            summary = pass_k_summary(tallies, k, weights=every)
        except StatsInputError:
            break  # no task has k valid runs (an interrupted or damaged run): report up to k-1
        if k in bounded:
            out.append(pass_k_bounds(summary, families=families))
        else:
            out.append(msgspec.structs.replace(summary, bound_note=OFF_LADDER))
    return out


def _per_attempt(slots: list[SlotResult]) -> PerAttempt:
    executed = [s for s in slots if s.evidence != "missing"]
    valid = [s for s in executed if s.counted and s.passed is not None]
    passes = sum(1 for s in valid if s.passed)
    # Per passed attempt, every execution's consumption counts: failures and retries included.
    spent = [s.cost + s.retry_cost for s in executed]
    return PerAttempt(
        tool_calls=_mean(sum(s.tool_calls for s in valid), len(valid)),
        requests=_mean(sum(s.requests for s in valid), len(valid)),
        tokens=_mean(sum(s.input_tokens + s.output_tokens for s in valid), len(valid)),
        cost=_mean(sum(s.cost + s.retry_cost for s in valid), len(valid)),
        tool_calls_per_pass=_mean(sum(s.tool_calls for s in executed), passes),
        requests_per_pass=_mean(sum(s.requests for s in executed), passes),
        tokens_per_pass=_mean(sum(s.input_tokens + s.output_tokens for s in executed), passes),
        cost_per_pass=_mean(sum(spent), passes),
        user_turns=_user_turns(slots, valid),
    )


def _user_turns(
    slots: list[SlotResult], valid: list[SlotResult]
) -> float | msgspec.UnsetType | None:
    """Mean user turns per valid attempt; unset when no record of the run has a user turn."""
    if all(s.user_turns is msgspec.UNSET for s in slots):
        return msgspec.UNSET
    turns = [s.user_turns for s in valid if not isinstance(s.user_turns, msgspec.UnsetType)]
    return _mean(sum(turns), len(valid))


def _model_requests(slots: list[SlotResult]) -> ModelRequests:
    executed = [s for s in slots if s.evidence != "missing"]
    return ModelRequests(
        retried=sum(s.retried_requests for s in executed),
        lost=sum(s.lost_requests for s in executed),
        lost_input_tokens_estimate=sum(s.lost_input_tokens_estimate for s in executed),
        attempts=sum(1 for s in executed if s.retried_requests or s.lost_requests),
    )


def _families(scan: RunScan) -> list[FamilyFigures]:
    members: dict[str, list[SlotResult]] = {}
    for slot in scan.slots:
        members.setdefault(scan.families.get(slot.task_id, ""), []).append(slot)
    figures = []
    for family, slots in sorted(members.items()):
        valid = [s for s in slots if s.counted and s.passed is not None]
        passed = sum(1 for s in valid if s.passed)
        figures.append(
            FamilyFigures(
                family=family,
                tasks=len({s.task_id for s in slots}),
                valid=len(valid),
                passed=passed,
                pass_rate=_mean(passed, len(valid)),
                interval=_wilson(passed, len(valid)),
            )
        )
    return figures


def _wilson(successes: int, trials: int) -> ProportionInterval | None:
    return wilson_interval(successes, trials) if trials else None


def _failed_tasks(slots: list[SlotResult]) -> list[FailedTask]:
    by_task: dict[str, list[SlotResult]] = {}
    for slot in slots:
        if slot.counted and slot.passed is not None:
            by_task.setdefault(slot.task_id, []).append(slot)
    out = []
    for task_id, valid in sorted(by_task.items()):
        failed = [s for s in valid if not s.passed and not s.pending]
        if not failed:
            continue
        criteria: dict[str, int] = {}
        for slot in failed:
            for line in slot.failed:
                name = line.split(": ", 1)[0]
                criteria[name] = criteria.get(name, 0) + 1
        first = failed[0].failed[0] if failed[0].failed else ""
        out.append(
            FailedTask(
                task_id=task_id,
                failed=len(failed),
                valid=len(valid),
                criteria=dict(sorted(criteria.items())),
                reason=first,
            )
        )
    return out


def report_from_scan(
    scan: RunScan,
    process: Iterable[AttemptProcess] | None = None,
    claims: Sequence[Review] = (),
    *,
    pass_k_at: PassKAt = (),
) -> RunReport:
    """The report of an already judged run directory.

    Args:
        scan: The judged run.
        process: The process figures of its counted attempts (a `ProcessObserver`'s), in
            any order; None leaves the report's ``process`` null.
        claims: The run's standing claim reviews (`standing_claims`).
        pass_k_at: k at which pass^k is bounded beside the ladder, or ``"all"``
            (`interval_ks`).
    """
    slots = scan.slots
    valid = [s for s in slots if s.counted and s.passed is not None]
    open_prose = [s for s in valid if s.not_reviewed]
    completed = [s for s in slots if s.outcome == "completed"]
    p50, p95 = latency_percentiles(slots)
    return RunReport(
        out=scan.out,
        revision=scan.manifest.revision.id,
        build=scan.manifest.revision.components.get("build", ""),
        agent=scan.manifest.agent,
        counts=scan.counts,
        pass_rate=_wilson(scan.counts.counted_passed, len(valid)),
        completed_but_failed=_completed_but_failed(valid),
        first_try_completed=sum(not s.retried for s in completed),
        eventually_completed=len(completed),
        pass_k=_pass_k(rows_of(scan, "run"), scan.manifest.samples, scan.families, at=pass_k_at),
        weighted_pass_k=_weighted_pass_k(scan, pass_k_at),
        per_attempt=_per_attempt(slots),
        latency_p50_s=p50,
        latency_p95_s=p95,
        families=_families(scan),
        failed_tasks=_failed_tasks(slots),
        attempts=slots,
        harness=_harness_layer(valid),
        requests=_model_requests(slots),
        task_families=_task_families(scan),
        suite_mean=suite_mean(rows_of(scan, "run"), scan.families),
        weighted_mean=weighted_mean(rows_of(scan, "run"), scan.weights) or msgspec.UNSET,
        not_reviewed_criteria=sum(len(s.not_reviewed) for s in open_prose),
        not_reviewed_attempts=len(open_prose),
        process=None if process is None else summarize_process(process),
        layered=_layered(valid, claims),
        tries=_tries(slots),
        first_try_pass_k=_first_try_pass_k(scan, pass_k_at) if scan.counts.retried else [],
    )


def _completed_but_failed(valid: Sequence[SlotResult]) -> int:
    """Valid attempts that completed and did not pass (a pending one has not passed)."""
    return sum(s.outcome == "completed" and not s.passed for s in valid)


def latency_percentiles(slots: Sequence[SlotResult]) -> tuple[float | None, float | None]:
    """The median and 95th percentile of the slots' measured latencies (None: none measured).

    What a report prints, without the rest of it (the release gate reads only these).
    """
    latencies = [s.latency_s for s in slots if s.latency_s > 0]
    return _percentile(latencies, 50), _percentile(latencies, 95)


def _percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of the values (None when there are none)."""
    if not values:
        return None
    import numpy as np

    return float(np.percentile(values, q))


def _task_families(scan: RunScan) -> dict[str, str]:
    """Each task's family, for the tasks that declare one, by task id."""
    return {t: f for t, f in sorted(scan.families.items()) if f}


def _layered(valid: Sequence[SlotResult], claims: Sequence[Review]) -> LayeredTables:
    """The layered score sheets of the valid attempts that have layers."""
    return layered_tables([s.layers for s in valid if s.layers is not None], claims)


def _tries(slots: Sequence[SlotResult]) -> dict[str, int]:
    """Executed slots by how many tries each took."""
    counted: dict[str, int] = {}
    for s in slots:
        if s.evidence != "missing" or s.tries:
            key = str(len(s.tries) + (s.evidence != "missing"))
            counted[key] = counted.get(key, 0) + 1
    return dict(sorted(counted.items(), key=lambda item: int(item[0])))


def _first_try_pass_k(scan: RunScan, at: PassKAt) -> list[PassKSummary]:
    """pass^k over every executed slot's first try (`RunReport.first_try_pass_k`)."""
    rows = [
        RunRow(
            task_id=s.task_id,
            run_index=s.sample,
            config="run",
            passed=s.counted and s.passed is True and not s.tries,
            family=scan.families.get(s.task_id, ""),
        )
        for s in scan.slots
        if (s.counted and s.passed is not None) or s.tries
    ]
    return _pass_k(rows, scan.manifest.samples, scan.families, at=at)


def _weighted_pass_k(scan: RunScan, at: PassKAt) -> list[PassKSummary]:
    """pass^k at every k with the task files' weights, when some task weighs other than 1."""
    rows = rows_of(scan, "run")
    averaged = {r.task_id for r in rows}
    if not any(w != 1 for t, w in scan.weights.items() if t in averaged):
        return []
    return _pass_k(rows, scan.manifest.samples, scan.families, scan.weights, at)


PROCESS = Measure("process", attempt_process, AttemptProcess)
"""The process figures of each verified final record (a counted outcome), cached with its
judgement."""


@attrs.define(slots=True)
class ProcessObserver:
    """Takes the process figures of each counted record a run's reader verifies.

    It holds no record, only each one's figures.
    """

    found: dict[Path, AttemptProcess] = attrs.field(factory=dict)
    """Record path -> its figures."""

    @property
    def measure(self) -> Measure:
        """`PROCESS`."""
        return PROCESS

    def take(self, path: Path, slot: tuple[str, int], figure: AttemptProcess) -> None:
        """One slot's figures."""
        self.found[path] = figure

    def __call__(self, path: Path, verified: VerifiedRecord) -> None:
        """Measure one verified record (an uncounted outcome is left out), as an `Observer`."""
        figures = attempt_process(verified)
        if figures is not None:
            self.found[path] = figures

    def attempts(self) -> list[AttemptProcess]:
        """The figures measured, in record path order."""
        return [self.found[p] for p in sorted(self.found)]


def suite_mean(
    rows: Sequence[RunRow], families: Mapping[str, str], confidence: float = 0.95
) -> SuiteMean | None:
    """The mean per-task pass rate and its interval over tasks (see `SuiteMean`).

    Returns None with fewer than 2 tasks.
    """
    tallies = tally_runs(rows, rows[0].config) if rows else []
    if len(tallies) < 2:
        return None
    known = {t.task_id: families[t.task_id] for t in tallies if families.get(t.task_id)}
    decision = mean_bounds(tallies, alpha=(1 - confidence) / 2, families=known or None)
    clusters = decision.clusters if decision.clusters is not None else decision.tasks
    over = "families" if decision.clusters is not None else "tasks"
    return SuiteMean(
        tasks=decision.tasks,
        clusters=clusters,
        mean=decision.mean,
        low=max(0.0, decision.lower),
        high=min(1.0, decision.upper),
        confidence=confidence,
        df=decision.df,
        method=f"wild cluster bootstrap-t over {clusters} {over} (Webb weights, CR2, "
        "skew-corrected)",
        why=_why_wide([t.passes / t.runs for t in tallies], clusters, over),
    )


def _harness_layer(valid: list[SlotResult]) -> HarnessLayer:
    checked = [s for s in valid if s.harness_checked]
    failed: dict[str, int] = {}
    for slot in checked:
        for entry in slot.harness_failed:
            name = entry.split(":", 1)[0]
            failed[name] = failed.get(name, 0) + 1
    clean = sum(1 for s in checked if not s.harness_failed)
    return HarnessLayer(graded=len(checked), clean=clean, failed=dict(sorted(failed.items())))


def build_report(
    out: str | Path,
    reader: RunReader | None = None,
    *,
    count_pending: bool = False,
    pass_k_at: PassKAt = (),
) -> RunReport:
    """Everything `report` prints, from one pass over the records on disk (each replayed once).

    Pending attempts (``passed_automated``) are decided by the run's review records and
    otherwise not passed, unless ``count_pending`` (`harness_world.running.pending.settle`).

    Raises:
        harness_world.running.reviews.ReviewError: when the run's review file is unreadable.
    """
    observer = ProcessObserver()
    reader = reader or RunReader.of()
    scan = reader.read(out, measure=[observer])
    scan = settle(scan, count_pending=count_pending, trust_key=reader.trust_key)
    claims = scan_claims(scan, reader.trust_key)  # only claims the reader's key signed stand
    return report_from_scan(scan, observer.attempts(), claims, pass_k_at=pass_k_at)
