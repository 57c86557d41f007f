"""Process metrics: how an attempt went about its task, read from its record's call log.

An outcome says whether the end state was right; these say how the agent got there. Each is an
entry of the findings registry (`harness_world.grading.rules.metrics`) counted from the call
log alone (no replay, no task), so it is the same for every reader; this module pools the
counts over a run:

- **write call**: a successful call that left at least one write image.
- **backtracked write**: a write call one of whose fields a later write in the same attempt
  changed again on the same row (it was reverted or overwritten). Backtrack rate = backtracked
  write calls / write calls.
- **verified write**: a write call after which a successful call that wrote nothing (a read)
  returned the written row's key (an argument naming it shows nothing). Verification rate =
  verified write calls / write calls.
- **irreversible action**: a write call that created or deleted a row (a sent reply, a new
  ticket, a removed row): no later field update can take it back. Irreversible-action rate =
  irreversible write calls / write calls.

- **escalation**: a call the world refused on policy (error ``refused``: over the quantity
  available, without the sign-off, a discontinued item). Escalation rate = attempts with at
  least one / attempts.
- **verification call**: a successful call that wrote nothing, made after the attempt's first
  write, whose result holds the key of a row the attempt had written. Verification cost =
  verification calls / tool calls.
- **post-condition checked**: a write call one of whose written rows a later successful read
  returned with every changed field at its written value (the agent saw the effect hold).
  Post-condition rate = checked write calls / write calls.
- **context efficiency** (useful-token ratio): the bytes of rows read that were later used /
  the bytes of rows read. A *row* is a JSON object with an ``id`` in a successful call's result
  (the outermost such object: nested rows count with their parent); its bytes are its compact
  JSON encoding (tokens ≈ bytes / 4, a conversion that cancels in the ratio). A row is *used*
  when its ``id`` appears after the call that returned it: as a whole value in a later call's
  arguments, as the key of a later write, or as a whole word in the final message or a message
  to the user. Envelopes (``total``, ``next_offset``) and results without rows are not counted.
- **efficiency-adjusted score**: per attempt, passed × max(0, 1 − tool calls / the task's
  tool-call budget); its mean over attempts of tasks that declare a budget.

Docs: ``docs/metrics.md`` (definitions, units, limits). Rates pool the calls of many attempts,
so their Wilson intervals are descriptive (calls of one attempt are not independent); the
per-attempt means beside them are the safer figures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import msgspec

from harness_world.analysis.trace_record import TraceRecord
from harness_world.evidence.record import Record
from harness_world.grading.criteria import Metric
from harness_world.grading.rules import FINDINGS
from harness_world.grading.trace import CallLog, call_log, trace_view
from harness_world.grading.verifier import COUNTED, VerifiedRecord
from harness_world.running.reader import RunReader
from harness_world.stats import PairedTask, ProportionInterval, classify, wilson_interval

__all__ = [
    "PROCESS_METRICS",
    "AttemptProcess",
    "ProcessChange",
    "ProcessSummary",
    "attempt_process",
    "metrics_markdown",
    "process_change",
    "process_of",
    "run_process",
    "summarize_process",
]


PROCESS_METRICS: tuple[Metric, ...] = FINDINGS.metrics
"""Every process metric, in the order ``docs/metrics.md`` lists them: the ``metric`` entries of
the findings registry (`harness_world.grading.rules.FINDINGS`)."""


def metrics_markdown() -> str:
    """The metrics as a Markdown table (name, field, unit, counts, limits), as the docs show it."""
    lines = [
        "| metric | `--json` field | unit | what it counts | limits |",
        "|---|---|---|---|---|",
    ]
    for m in PROCESS_METRICS:
        lines.append(f"| {m.name} | `{m.field}` | {m.unit} | {m.counts} | {m.limits} |")
    return "\n".join(lines) + "\n"


class AttemptProcess(msgspec.Struct, frozen=True, kw_only=True):
    """The process figures of one attempt.

    Attributes:
        task_id: The task.
        sample: The sample index.
        passed: The grade (null when not graded).
        tool_calls: Calls made.
        failed_calls: Calls that returned a typed error.
        write_calls: Successful calls that wrote at least one row.
        backtracked: Write calls whose change a later write changed again.
        verified: Write calls whose row's key a later read's result held.
        irreversible: Write calls that created or deleted a row.
        tokens: Input + output tokens.
        cost: US dollars (uncertain exposure included).
        latency_s: Wall-clock seconds (context).
        refused_calls: Calls the world refused on policy (escalations).
        verification_calls: Reads after the first write whose result held a written row's key.
        postcondition_checked: Write calls whose rows a later read showed as written.
        rows_read_bytes: Bytes of the rows successful calls returned.
        rows_used_bytes: Bytes of those rows whose id was used afterwards.
        call_budget: The task's tool-call budget (null: none given).
        efficiency: passed × max(0, 1 − tool_calls / call_budget) (null: no grade or budget).
    """

    task_id: str
    sample: int
    passed: bool | None
    tool_calls: int
    failed_calls: int
    write_calls: int
    backtracked: int
    verified: int
    irreversible: int
    tokens: int
    cost: float
    latency_s: float
    refused_calls: int = 0
    verification_calls: int = 0
    postcondition_checked: int = 0
    rows_read_bytes: int = 0
    rows_used_bytes: int = 0
    call_budget: int | None = None
    efficiency: float | None = None


class ProcessSummary(msgspec.Struct, frozen=True, kw_only=True):
    """Process figures over the attempts of one configuration.

    Attributes:
        attempts: Attempts measured (those with a readable record).
        passed: Attempts among them that passed.
        per_attempt: Mean per attempt of tool_calls, failed_calls, tokens, cost, latency_s.
        per_pass: Total over all attempts divided by passed attempts (null when none passed).
        write_calls: Write calls over all attempts (the rates' denominator).
        backtrack_rate: Backtracked write calls / write calls, Wilson 95 % (null: no writes).
        verification_rate: Verified write calls / write calls.
        irreversible_rate: Irreversible write calls / write calls.
        tool_calls: Tool calls over all attempts.
        failure_rate: Failed calls / tool calls.
        escalation_rate: Attempts with a refused call / attempts.
        verification_cost: Verification calls / tool calls.
        postcondition_rate: Write calls whose effect a later read showed / write calls.
        context_efficiency: Row bytes used / row bytes read, pooled (null: no row read).
        context_efficiency_mean: Its mean over attempts that read a row.
        rows_read_bytes: Bytes of rows read over all attempts (the pooled ratio's denominator).
        rows_used_bytes: Bytes of those rows used afterwards (its numerator).
        context_efficiency_n: Attempts that read a row (the mean's denominator).
        efficiency_adjusted: Mean efficiency-adjusted score over graded attempts of tasks
            with a tool-call budget (null: none).
        efficiency_n: Those attempts.
    """

    attempts: int
    passed: int
    per_attempt: dict[str, float | None]
    per_pass: dict[str, float | None]
    write_calls: int
    backtrack_rate: ProportionInterval | None
    verification_rate: ProportionInterval | None
    irreversible_rate: ProportionInterval | None
    tool_calls: int = 0
    failure_rate: ProportionInterval | None = None
    escalation_rate: ProportionInterval | None = None
    verification_cost: ProportionInterval | None = None
    postcondition_rate: ProportionInterval | None = None
    context_efficiency: float | None = None
    context_efficiency_mean: float | None = None
    efficiency_adjusted: float | None = None
    efficiency_n: int = 0
    rows_read_bytes: int = 0
    rows_used_bytes: int = 0
    context_efficiency_n: int = 0


class ProcessChange(msgspec.Struct, frozen=True, kw_only=True):
    """What changed between two runs of the same tasks, task by task.

    Attributes:
        regressions: Tasks solid in the baseline (passed every run) and not in the candidate.
        improvements: Tasks solid in the candidate and not in the baseline.
        net_delta: len(improvements) - len(regressions).
        tasks: Tasks compared.
    """

    regressions: list[str]
    improvements: list[str]
    net_delta: int
    tasks: int


def process_of(
    record: Record | TraceRecord,
    passed: bool | None = None,
    call_budget: int | None = None,
    *,
    log: CallLog | None = None,
) -> AttemptProcess:
    """The process figures of one record.

    Args:
        record: The record (or its trace form).
        passed: The grade, carried through for per-pass and efficiency figures.
        call_budget: The task's tool-call budget, for the efficiency-adjusted score.
        log: The record's call log when the caller has it (its grade's trace view's), so
            the facets the grade read are not computed again.
    """
    figures: dict[str, int] = {}
    log = call_log(record) if log is None else log
    for metric in PROCESS_METRICS:
        if metric.measure is not None:
            figures.update(metric.measure(log))
    usage = record.usage
    efficiency = None
    if passed is not None and call_budget:
        efficiency = float(passed) * max(0.0, 1 - len(record.calls) / call_budget)
    return AttemptProcess(
        task_id=record.task_id,
        sample=record.sample,
        passed=passed,
        tokens=usage.input_tokens + usage.output_tokens,
        cost=usage.cost + usage.uncertain_cost,
        latency_s=record.context.latency_s,
        call_budget=call_budget,
        efficiency=efficiency,
        **figures,
    )


_MEANS = (
    "tool_calls",
    "failed_calls",
    "tokens",
    "cost",
    "latency_s",
    "refused_calls",
    "verification_calls",
)


def _rate(successes: int, trials: int) -> ProportionInterval | None:
    return wilson_interval(successes, trials) if trials else None


def _mean_or_none(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


_POOLED_RATES: Final = {
    "backtrack_rate": ("backtracked", "write_calls"),
    "verification_rate": ("verified", "write_calls"),
    "irreversible_rate": ("irreversible", "write_calls"),
    "failure_rate": ("failed_calls", "tool_calls"),
    "verification_cost": ("verification_calls", "tool_calls"),
    "postcondition_rate": ("postcondition_checked", "write_calls"),
}
"""Each pooled rate of `ProcessSummary`: the attempts' field summed over which total."""
_SUMMED: Final = (
    *sorted({field for pair in _POOLED_RATES.values() for field in pair}),
    "rows_read_bytes",
    "rows_used_bytes",
)


def summarize_process(attempts: Iterable[AttemptProcess]) -> ProcessSummary:
    """Means per attempt and per passed attempt, and the pooled rates (see the module doc)."""
    items = list(attempts)
    n = len(items)
    passed = sum(1 for a in items if a.passed)
    totals = {name: float(sum(getattr(a, name) for a in items)) for name in _MEANS}
    summed = {name: sum(getattr(a, name) for a in items) for name in _SUMMED}
    rates = {
        rate: _rate(summed[part], summed[whole]) for rate, (part, whole) in _POOLED_RATES.items()
    }
    read, used = summed["rows_read_bytes"], summed["rows_used_bytes"]
    scored = [a.efficiency for a in items if a.efficiency is not None]
    ratios = [a.rows_used_bytes / a.rows_read_bytes for a in items if a.rows_read_bytes]
    return ProcessSummary(
        attempts=n,
        passed=passed,
        per_attempt=_per(totals, n),
        per_pass=_per(totals, passed),
        escalation_rate=_rate(sum(1 for a in items if a.refused_calls), n),
        context_efficiency=used / read if read else None,
        context_efficiency_mean=_mean_or_none(ratios),
        efficiency_adjusted=_mean_or_none(scored),
        efficiency_n=len(scored),
        context_efficiency_n=len(ratios),
        write_calls=summed["write_calls"],
        tool_calls=summed["tool_calls"],
        rows_read_bytes=read,
        rows_used_bytes=used,
        backtrack_rate=rates["backtrack_rate"],
        verification_rate=rates["verification_rate"],
        irreversible_rate=rates["irreversible_rate"],
        failure_rate=rates["failure_rate"],
        verification_cost=rates["verification_cost"],
        postcondition_rate=rates["postcondition_rate"],
    )


def _per(totals: dict[str, float], count: int) -> dict[str, float | None]:
    """Each total divided by a count (None for every total when the count is 0)."""
    return {k: (v / count if count else None) for k, v in totals.items()}


def process_change(paired: Iterable[PairedTask]) -> ProcessChange:
    """Regressions, improvements and their net delta over tasks run under both configurations.

    A regression is a task solid (passed every run) in the baseline and not in the candidate,
    as `harness_world.stats.regressions` counts it; an improvement is the mirror image.
    """
    items = sorted(paired, key=lambda p: p.task_id)
    down = [p.task_id for p in items if classify(p.baseline) == "solid" != classify(p.candidate)]
    up = [p.task_id for p in items if classify(p.candidate) == "solid" != classify(p.baseline)]
    return ProcessChange(
        regressions=down, improvements=up, net_delta=len(up) - len(down), tasks=len(items)
    )


def attempt_process(verified: VerifiedRecord) -> AttemptProcess | None:
    """The process figures of a record a scan verified (None: not a counted attempt).

    What a scan's observer calls per record, so a report that already scans a run measures
    its process without replaying anything again.
    """
    record = verified.record
    if record.outcome.status not in COUNTED:
        return None
    grade = verified.verification.grade
    task = verified.task
    if task is None or grade is None:
        budget = None if task is None else task.budgets.tool_calls
        return process_of(record, None if grade is None else grade.passed, budget)
    # the grade's own view (the last one made, so no record is read again)
    log = trace_view(record, task, verified.world).log
    return process_of(record, grade.passed, task.budgets.tool_calls, log=log)


def run_process(out: str | Path, reader: RunReader | None = None) -> ProcessSummary:
    """The process summary of a run directory's counted, verified attempts (one scan).

    Raises:
        harness_world.running.reader.RunReadError: when ``out`` is not a run directory.
    """
    found: dict[Path, AttemptProcess] = {}

    def observe(path: Path, verified: VerifiedRecord) -> None:
        figures = attempt_process(verified)
        if figures is not None:
            found[path] = figures

    (reader or RunReader.of()).read(out, observe=observe)
    return summarize_process(found[p] for p in sorted(found))
