"""The harness-layer criteria of a record, read from its call log (``harness.*``).

Computed for write tools that take an ``idempotency_key``; the *retry* of a failed call is the
first later call of the same tool with the same arguments apart from the key, however far away
and whatever the error was (a retry after ``conflict`` or ``invalid_arguments``, which say
nothing committed, needs no same key). What each criterion means is listed in
`harness_world.grading.layers`. Every grade carries them (`Grade.harness`) beside the agent
grade, never folded into it.
"""

from __future__ import annotations

from typing import Any

from harness_world.engine.calls import CallRecord
from harness_world.engine.world import World
from harness_world.evidence.record import Record
from harness_world.grading.grade import CriterionVerdict

__all__ = ["HARNESS_CRITERIA", "MAX_RETRIES", "harness_criteria"]

MAX_RETRIES = 3
HARNESS_CRITERIA = (
    "harness.same_key_retry",
    "harness.bounded_retries",
    "harness.reconcile_before_retry",
    "harness.no_unverified_action",
)
_KEY = "idempotency_key"


def _same_operation(a: CallRecord, b: CallRecord) -> bool:
    def strip(args: Any) -> Any:
        return {k: v for k, v in args.items() if k != _KEY} if isinstance(args, dict) else args

    return a.tool == b.tool and strip(a.args) == strip(b.args)


def _key_of(call: CallRecord) -> object:
    return call.args.get(_KEY) if isinstance(call.args, dict) else None


_KEY_REJECTED = frozenset({"conflict", "invalid_arguments"})
"""Errors that say the provider did not act on the request as sent (a key reused for another
request, a malformed key): nothing may have committed, so a retry needs no same key."""


def _retry_findings(
    calls: list[CallRecord], keyed: set[str], writes: set[str]
) -> dict[str, list[str]]:
    """Failed calls whose retry broke each harness criterion, by criterion id."""
    found: dict[str, list[str]] = {name: [] for name in HARNESS_CRITERIA}
    streak: dict[int, int] = {}
    for i, call in enumerate(calls):
        if call.tool not in keyed or call.ok or call.error is None:
            continue
        later = [j for j in range(i + 1, len(calls)) if _same_operation(calls[j], call)]
        if not later:
            continue
        retry = calls[later[0]]
        streak[later[0]] = streak.get(i, 0) + 1
        unkeyed = _key_of(call) is None or _key_of(retry) != _key_of(call)
        if unkeyed and call.error.kind not in _KEY_REJECTED:
            found["harness.same_key_retry"].append(f"call {retry.seq} retried {call.seq}")
        if streak[later[0]] > MAX_RETRIES:
            found["harness.bounded_retries"].append(f"call {retry.seq}")
        between = calls[i + 1 : later[0]]
        looked = any(c.ok and c.tool not in writes and c.tool != "wait" for c in between)
        if call.error.kind == "timeout" and not looked:
            found["harness.reconcile_before_retry"].append(f"call {retry.seq} after {call.seq}")
    return found


def _unverified_actions(calls: list[CallRecord], writes: set[str]) -> list[str]:
    """Writes of another operation made after a lost write response, before any good read."""
    found: list[str] = []
    for i, call in enumerate(calls):
        if call.tool not in writes or call.ok or call.error is None:
            continue
        if call.error.kind != "timeout":
            continue
        for later in calls[i + 1 :]:
            if later.ok and later.tool not in writes and later.tool != "wait":
                break  # the caller looked before acting
            if later.ok and _same_operation(later, call):
                break  # the operation itself came back with a result: that one is verified
            if later.tool in writes and not _same_operation(later, call):
                found.append(f"call {later.seq} acted on the unverified call {call.seq}")
                break
    return found


def harness_criteria(record: Record, world: World) -> list[CriterionVerdict]:
    """The ``harness.*`` verdicts of one record, read from its call log."""
    keyed = {
        t.name
        for t in world.contract.tools
        if t.kind == "write" and _KEY in t.params.__struct_fields__
    }
    calls = list(record.calls)
    writes = {t.name for t in world.contract.tools if t.kind == "write"}
    found = _retry_findings(calls, keyed, writes)
    found["harness.no_unverified_action"] = _unverified_actions(calls, writes)
    return [
        CriterionVerdict(
            id=name,
            kind="trace",
            status="failed" if found[name] else "passed",
            detail="; ".join(found[name][:6]),
        )
        for name in HARNESS_CRITERIA
    ]
