"""Process metrics: how an attempt went about its task, read from its record's call log.

An outcome says whether the end state was right; these say how the agent got there. Each is
computed from the record alone (no replay, no task), so it is the same for every reader:

- **write call**: a successful call that left at least one write image.
- **backtracked write**: a write call one of whose fields a later write in the same attempt
  changed again on the same row (it was reverted or overwritten). Backtrack rate = backtracked
  write calls / write calls.
- **verified write**: a write call after which a successful call that wrote nothing (a read)
  returned or named the written row's key. Verification rate = verified write calls / write
  calls.
- **irreversible action**: a write call that created or deleted a row (a sent reply, a new
  ticket, a removed row): no later field update can take it back. Irreversible-action rate =
  irreversible write calls / write calls.

- **escalation**: a call the world refused on policy (error ``refused``: over the quantity
  available, without the sign-off, a discontinued item). Escalation rate = attempts with at
  least one / attempts.
- **verification call**: a successful call that wrote nothing, made after the attempt's first
  write, that returned or named a row the attempt had written. Verification cost = verification
  calls / tool calls.
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
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.analysis.trace_record import TraceCall, TraceRecord
from harness_world.engine.calls import CallRecord, WriteImage
from harness_world.engine.values import Key
from harness_world.evidence.record import Record
from harness_world.grading.verifier import COUNTED, VerifiedRecord
from harness_world.running.reader import RunReader
from harness_world.stats import PairedTask, ProportionInterval, classify, wilson_interval

__all__ = [
    "PROCESS_METRICS",
    "AttemptProcess",
    "MetricDefinition",
    "ProcessChange",
    "ProcessSummary",
    "attempt_process",
    "metrics_markdown",
    "process_change",
    "process_of",
    "run_process",
    "summarize_process",
]


class MetricDefinition(msgspec.Struct, frozen=True, kw_only=True):
    """One process metric as ``docs/metrics.md`` states it.

    Attributes:
        name: Its name.
        field: The `ProcessSummary` field that holds it.
        unit: What its value is measured in.
        counts: What it counts: numerator over denominator.
        limits: What it does not see.
    """

    name: str
    field: str
    unit: str
    counts: str
    limits: str


PROCESS_METRICS: tuple[MetricDefinition, ...] = (
    MetricDefinition(
        name="failed calls",
        field="failure_rate",
        unit="share of calls, Wilson 95 %",
        counts="calls that returned a typed error / tool calls, pooled",
        limits="an injected fault counts like the agent's own mistake; pooled calls of one "
        "attempt are not independent (the per-attempt mean `failed_calls` is the safer figure)",
    ),
    MetricDefinition(
        name="permission escalation rate",
        field="escalation_rate",
        unit="share of attempts, Wilson 95 %",
        counts="attempts with at least one call the world refused on policy (`refused`) / attempts",
        limits="sees only what the world's policy refuses; a forbidden effect the world allows "
        "is the grade's `forbidden.*`, not this",
    ),
    MetricDefinition(
        name="backtracking",
        field="backtrack_rate",
        unit="share of write calls, Wilson 95 %",
        counts="write calls one of whose changed fields a later write changed again on the "
        "same row (or deleted the row) / write calls",
        limits="a deliberate two-step update of one field counts too",
    ),
    MetricDefinition(
        name="verification cost",
        field="verification_cost",
        unit="share of calls, Wilson 95 %",
        counts="successful calls that wrote nothing, made after the first write, that returned "
        "or named a row the attempt had written / tool calls",
        limits="calls, not tokens (a record holds no per-call token count); a read made for "
        "another reason that happens to return a written row counts",
    ),
    MetricDefinition(
        name="post-condition rate",
        field="postcondition_rate",
        unit="share of write calls, Wilson 95 %",
        counts="write calls followed by a read returning one of the rows they wrote with "
        "every changed field at its written value / write calls",
        limits="one row seen is enough (a side-effect row the agent cannot read, such as a "
        "provider event, is not required); a write that only deletes has nothing to show and "
        "never counts as checked; a write whose response was lost is not a write call here "
        "(its reconciliation is `harness.reconcile_before_retry`); sent messages and receipts "
        "are rarely read back, so the rate is low even for correct work",
    ),
    MetricDefinition(
        name="irreversible actions",
        field="irreversible_rate",
        unit="share of write calls, Wilson 95 %",
        counts="write calls that created or deleted a row / write calls",
        limits="irreversible in the world's terms (no field update undoes it); a world's own "
        "compensating tool (a refund) is not recognised",
    ),
    MetricDefinition(
        name="context efficiency (useful-token ratio)",
        field="context_efficiency",
        unit="ratio of bytes (tokens ≈ bytes / 4 on both sides)",
        counts="bytes of rows read whose `id` is used afterwards / bytes of rows read, pooled; "
        "a row is an outermost JSON object with an `id` in a successful result, used when its "
        "id appears later as a whole argument value, a written key, or a whole word of the "
        "final message or a message to the user",
        limits="an answer aggregated over rows (a count, a sum) uses them without naming "
        "them; envelopes and results without rows are not counted; what the model read "
        "outside tool results (the prompt) is not seen",
    ),
    MetricDefinition(
        name="efficiency-adjusted score",
        field="efficiency_adjusted",
        unit="mean over attempts, 0 to 1",
        counts="per attempt passed × max(0, 1 − tool calls / the task's tool-call budget), "
        "over graded attempts of tasks with a budget",
        limits="depends on how generous each budget is: compare configurations over the same "
        "tasks only; the agent grade alone, harness criteria not included",
    ),
)
"""Every process metric, in the order ``docs/metrics.md`` lists them."""


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
        verified: Write calls whose row a later read returned or named.
        irreversible: Write calls that created or deleted a row.
        tokens: Input + output tokens.
        cost: US dollars (uncertain exposure included).
        latency_s: Wall-clock seconds (context).
        refused_calls: Calls the world refused on policy (escalations).
        verification_calls: Reads after the first write that returned or named a written row.
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


def _changed_fields(image: WriteImage) -> set[str]:
    before = image.before or {}
    after = image.after or {}
    return {f for f in before.keys() | after.keys() if before.get(f) != after.get(f)}


def _mentions(value: Any, key: Key) -> bool:
    """Whether a value is or contains the key as a whole scalar of the key's type."""
    if isinstance(value, msgspec.Raw):  # undecoded JSON: search its text for the key
        return _key_pattern(key).search(bytes(value)) is not None
    if isinstance(value, dict):
        return any(_mentions(v, key) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_mentions(v, key) for v in value)
    return type(value) is type(key) and value == key


_PATTERNS: dict[Key, re.Pattern[bytes]] = {}


def _key_pattern(key: Key) -> re.Pattern[bytes]:
    """The key as a whole JSON scalar: a quoted string, or a number not inside another."""
    pattern = _PATTERNS.get(key)
    if pattern is None:
        if len(_PATTERNS) > 100_000:
            _PATTERNS.clear()
        text = re.escape(msgspec.json.encode(key))
        if isinstance(key, int):
            text = rb"(?<![\w.\-\"])" + text + rb"(?![\w.\"])"
        pattern = _PATTERNS[key] = re.compile(text)
    return pattern


Call = CallRecord | TraceCall


def _backtracked(calls: Sequence[Call], index: int) -> bool:
    for image in calls[index].writes:
        fields = _changed_fields(image)
        for later in calls[index + 1 :]:
            for other in later.writes:
                same_row = other.entity == image.entity and other.key == image.key
                if same_row and (fields & _changed_fields(other) or other.after is None):
                    return True
    return False


def _verified(calls: Sequence[Call], index: int, texts: _Texts) -> bool:
    keys = {image.key for image in calls[index].writes}
    for later in range(index + 1, len(calls)):
        call = calls[later]
        if not call.ok or call.writes:
            continue
        if any(texts.mentions(later, k) for k in keys):
            return True
    return False


@attrs.define(slots=True)
class _Texts:
    """Each call's result and arguments as JSON text, encoded once, to rule keys out quickly.

    A value that holds a scalar equal to a key holds that key's JSON text, so a key whose
    text is absent is not mentioned; where it is present, `_mentions` decides.
    """

    calls: Sequence[Call]
    texts: dict[int, bytes | None] = attrs.field(factory=dict)

    def _text(self, index: int) -> bytes | None:
        if index not in self.texts:
            call = self.calls[index]
            try:
                self.texts[index] = _JSON.encode([call.result, call.args])
            except (TypeError, ValueError):  # not JSON: walked value by value
                self.texts[index] = None
        return self.texts[index]

    def mentions(self, index: int, key: Key) -> bool:
        """Whether call ``index``'s result or arguments mention ``key`` (`_mentions`)."""
        text = self._text(index)
        if text is not None and _JSON.encode(key) not in text:
            return False
        call = self.calls[index]
        return _mentions(call.result, key) or _mentions(call.args, key)


_JSON = msgspec.json.Encoder()


def _decoded(value: Any) -> Any:
    return msgspec.json.decode(bytes(value)) if isinstance(value, msgspec.Raw) else value


def _rows(value: Any) -> list[dict[str, Any]]:
    """The outermost JSON objects with an ``id`` in a result."""
    if isinstance(value, dict):
        if isinstance(value.get("id"), str | int) and not isinstance(value.get("id"), bool):
            return [value]
        return [row for v in value.values() for row in _rows(v)]
    if isinstance(value, list):
        return [row for v in value for row in _rows(v)]
    return []


def _verification_calls(calls: Sequence[Call], texts: _Texts) -> int:
    written: set[Key] = set()
    count = 0
    for index, call in enumerate(calls):
        looked = call.ok and not call.writes and written
        if looked and any(texts.mentions(index, k) for k in written):
            count += 1
        written |= {w.key for w in call.writes}
    return count


def _shows(row: dict[str, Any], image: WriteImage) -> bool:
    after = image.after
    if after is None or row.get("id") != image.key:
        return False
    return all(f in after and f in row and row[f] == after[f] for f in _changed_fields(image))


def _postcondition_checked(
    calls: Sequence[Call], index: int, rows: Sequence[list[dict[str, Any]]]
) -> bool:
    """Whether a later read showed one of the call's written rows at its written values.

    ``rows`` holds each call's result rows (`_rows`), decoded once for the whole record.
    """
    written = [w for w in calls[index].writes if w.after is not None]
    for later in range(index + 1, len(calls)):
        call = calls[later]
        if not call.ok or call.writes or not written:
            continue
        if any(_shows(row, w) for row in rows[later] for w in written):
            return True
    return False


def _usage_text(record: Record | TraceRecord) -> str:
    return "\n".join([record.final_message, *(t.agent for t in record.user_turns)])


def _row_bytes(
    record: Record | TraceRecord, rows: Sequence[list[dict[str, Any]]]
) -> tuple[int, int]:
    """Bytes of the rows read, and of those whose id was used after them (see the docs).

    One pass from the last call back: what later calls name (their arguments' scalars and
    their write keys) is gathered as the pass goes, so each row's id is one set look-up
    instead of a walk over every later call.
    """
    calls: Sequence[Call] = record.calls
    text = _usage_text(record)
    words = frozenset(_WORD.findall(text))
    later = _Named()
    read = used = 0
    for i in range(len(calls) - 1, -1, -1):
        call = calls[i]
        for row in rows[i]:
            size = len(msgspec.json.encode(row))
            read += size
            key = row["id"]
            if later.names(key) or _in_text(key, words, text):
                used += size
        later.add(call)
    return read, used


_WORD = re.compile(r"[\w-]+")


def _in_text(key: Key, words: frozenset[str], text: str) -> bool:
    """Whether the key is a whole word of ``text`` (``words``: its runs of word characters)."""
    name = str(key)
    if _WORD.fullmatch(name):  # a whole word is exactly one maximal run of word characters
        return name in words
    return _word_pattern(key).search(text) is not None


def _word_pattern(key: Key) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(str(key))}(?![\w-])")


@attrs.define(slots=True)
class _Named:
    """What the calls seen so far name: typed scalars of their arguments, their write keys."""

    scalars: set[tuple[type, Any]] = attrs.field(factory=set)
    keys: set[Any] = attrs.field(factory=set)
    other: list[Any] = attrs.field(factory=list)  # undecoded or unhashable arguments

    def add(self, call: Call) -> None:
        """Gather what a call's arguments and writes name."""
        self._scalars(call.args)
        self.keys.update(w.key for w in call.writes)

    def _scalars(self, value: Any) -> None:
        """Gather every scalar ``value`` holds, as `_mentions` walks it (dict values, items)."""
        if isinstance(value, dict):
            for v in value.values():
                self._scalars(v)
        elif isinstance(value, list | tuple):
            for v in value:
                self._scalars(v)
        elif isinstance(value, str | int | float | bool) or value is None:
            self.scalars.add((type(value), value))
        else:
            self.other.append(value)

    def names(self, key: Key) -> bool:
        """Whether some call seen names ``key``, as `_mentions` or a write's key would."""
        if (type(key), key) in self.scalars or key in self.keys:
            return True
        return any(_mentions(value, key) for value in self.other)


def process_of(
    record: Record | TraceRecord, passed: bool | None = None, call_budget: int | None = None
) -> AttemptProcess:
    """The process figures of one record.

    Args:
        record: The record (or its trace form).
        passed: The grade, carried through for per-pass and efficiency figures.
        call_budget: The task's tool-call budget, for the efficiency-adjusted score.
    """
    calls: Sequence[Call] = record.calls
    writes = [i for i, c in enumerate(calls) if c.ok and c.writes]
    usage = record.usage
    rows = [_rows(_decoded(c.result)) if c.ok else [] for c in calls]
    read, used = _row_bytes(record, rows)
    texts = _Texts(calls)
    efficiency = None
    if passed is not None and call_budget:
        efficiency = float(passed) * max(0.0, 1 - len(calls) / call_budget)
    return AttemptProcess(
        task_id=record.task_id,
        sample=record.sample,
        passed=passed,
        tool_calls=len(calls),
        failed_calls=sum(1 for c in calls if not c.ok),
        write_calls=len(writes),
        backtracked=sum(1 for i in writes if _backtracked(calls, i)),
        verified=sum(1 for i in writes if _verified(calls, i, texts)),
        irreversible=sum(
            1 for i in writes if any(w.before is None or w.after is None for w in calls[i].writes)
        ),
        tokens=usage.input_tokens + usage.output_tokens,
        cost=usage.cost + usage.uncertain_cost,
        latency_s=record.context.latency_s,
        refused_calls=sum(1 for c in calls if c.error is not None and c.error.kind == "refused"),
        verification_calls=_verification_calls(calls, texts),
        postcondition_checked=sum(1 for i in writes if _postcondition_checked(calls, i, rows)),
        rows_read_bytes=read,
        rows_used_bytes=used,
        call_budget=call_budget,
        efficiency=efficiency,
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


def summarize_process(attempts: Iterable[AttemptProcess]) -> ProcessSummary:
    """Means per attempt and per passed attempt, and the pooled rates (see the module doc)."""
    items = list(attempts)
    n = len(items)
    passed = sum(1 for a in items if a.passed)
    totals = {name: float(sum(getattr(a, name) for a in items)) for name in _MEANS}
    writes = sum(a.write_calls for a in items)
    calls = sum(a.tool_calls for a in items)
    read = sum(a.rows_read_bytes for a in items)
    used = sum(a.rows_used_bytes for a in items)
    scored = [a.efficiency for a in items if a.efficiency is not None]
    ratios = [a.rows_used_bytes / a.rows_read_bytes for a in items if a.rows_read_bytes]
    return ProcessSummary(
        attempts=n,
        passed=passed,
        per_attempt={k: (v / n if n else None) for k, v in totals.items()},
        per_pass={k: (v / passed if passed else None) for k, v in totals.items()},
        write_calls=writes,
        backtrack_rate=_rate(sum(a.backtracked for a in items), writes),
        verification_rate=_rate(sum(a.verified for a in items), writes),
        irreversible_rate=_rate(sum(a.irreversible for a in items), writes),
        tool_calls=calls,
        failure_rate=_rate(sum(a.failed_calls for a in items), calls),
        escalation_rate=_rate(sum(1 for a in items if a.refused_calls), n),
        verification_cost=_rate(sum(a.verification_calls for a in items), calls),
        postcondition_rate=_rate(sum(a.postcondition_checked for a in items), writes),
        context_efficiency=used / read if read else None,
        context_efficiency_mean=_mean_or_none(ratios),
        efficiency_adjusted=_mean_or_none(scored),
        efficiency_n=len(scored),
        rows_read_bytes=read,
        rows_used_bytes=used,
        context_efficiency_n=len(ratios),
    )


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
    budget = verified.task.budgets.tool_calls if verified.task is not None else None
    return process_of(record, None if grade is None else grade.passed, budget)


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
