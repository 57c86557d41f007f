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

Rates pool the calls of many attempts, so their Wilson intervals are descriptive (calls of one
attempt are not independent); the per-attempt means beside them are the safer figures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from harness_world.analysis.trace_record import TraceCall, TraceRecord
from harness_world.engine.calls import CallRecord, WriteImage
from harness_world.engine.values import Key
from harness_world.evidence.record import Record
from harness_world.stats import ProportionInterval, wilson_interval

__all__ = ["AttemptProcess", "ProcessSummary", "process_of", "summarize_process"]


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
    """

    attempts: int
    passed: int
    per_attempt: dict[str, float | None]
    per_pass: dict[str, float | None]
    write_calls: int
    backtrack_rate: ProportionInterval | None
    verification_rate: ProportionInterval | None
    irreversible_rate: ProportionInterval | None


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


def _verified(calls: Sequence[Call], index: int) -> bool:
    keys = {image.key for image in calls[index].writes}
    for later in calls[index + 1 :]:
        if not later.ok or later.writes:
            continue
        if any(_mentions(later.result, k) or _mentions(later.args, k) for k in keys):
            return True
    return False


def process_of(record: Record | TraceRecord, passed: bool | None = None) -> AttemptProcess:
    """The process figures of one record (``passed`` is carried through for per-pass figures)."""
    calls: Sequence[Call] = record.calls
    writes = [i for i, c in enumerate(calls) if c.ok and c.writes]
    usage = record.usage
    return AttemptProcess(
        task_id=record.task_id,
        sample=record.sample,
        passed=passed,
        tool_calls=len(calls),
        failed_calls=sum(1 for c in calls if not c.ok),
        write_calls=len(writes),
        backtracked=sum(1 for i in writes if _backtracked(calls, i)),
        verified=sum(1 for i in writes if _verified(calls, i)),
        irreversible=sum(
            1 for i in writes if any(w.before is None or w.after is None for w in calls[i].writes)
        ),
        tokens=usage.input_tokens + usage.output_tokens,
        cost=usage.cost + usage.uncertain_cost,
        latency_s=record.context.latency_s,
    )


_MEANS = ("tool_calls", "failed_calls", "tokens", "cost", "latency_s")


def _rate(successes: int, trials: int) -> ProportionInterval | None:
    return wilson_interval(successes, trials) if trials else None


def summarize_process(attempts: Iterable[AttemptProcess]) -> ProcessSummary:
    """Means per attempt and per passed attempt, and the three pooled rates."""
    items = list(attempts)
    n = len(items)
    passed = sum(1 for a in items if a.passed)
    totals = {name: float(sum(getattr(a, name) for a in items)) for name in _MEANS}
    writes = sum(a.write_calls for a in items)
    return ProcessSummary(
        attempts=n,
        passed=passed,
        per_attempt={k: (v / n if n else None) for k, v in totals.items()},
        per_pass={k: (v / passed if passed else None) for k, v in totals.items()},
        write_calls=writes,
        backtrack_rate=_rate(sum(a.backtracked for a in items), writes),
        verification_rate=_rate(sum(a.verified for a in items), writes),
        irreversible_rate=_rate(sum(a.irreversible for a in items), writes),
    )
