"""The harness-layer criteria of a record, read from its call log (``harness.*``).

The *retry* of a failed write is the first later call of the same tool with the same arguments
apart from the key, however far away and whatever the error was. After an error that says
nothing was processed (`NOTHING_PROCESSED`: ``unavailable``, ``rate_limited``, and the world's
own answers such as ``conflict`` or ``refused``, which roll the call back) a retry is a new
request and needs no same key; after a lost response (``timeout``) it does. The retry criteria
hold for every write tool, keyed or not: a blind re-send of an unkeyed write after a lost
response is the worse harness failure, not a vacuous one. ``harness.same_key_retry`` is about
the key alone, so it is reported only in a world that has a write tool taking an
``idempotency_key`` (elsewhere it could never fail, and a criterion that cannot fail says
nothing). What each criterion means is listed in `harness_world.grading.layers`. Every grade
carries them (`Grade.harness`) beside the agent grade, never folded into it.

**Reconciliation reads the thing that failed.** After a lost response, only a read that looks
the write's effect up reconciles (`Reconciliation`): a call returning whole a row the write
changes or created, or a call of a lookup tool given the write's values, as the write tool
declares (`harness_world.engine.Tool.lookups`); a listing of groups or warehouses does not. A
retry with the failed call's ``idempotency_key`` that the provider answers with the original
(the tool's `harness_world.engine.Tool.replayed` flag true) is a confirmed replay: it needs no
read before it. A write tool that declares no lookups keeps the older rule (any successful
read but ``wait``).

**Observation bypass.** A failed harness criterion is *bypassed* when an agent action made the
property it tests unobservable: its zero stays in the score, but it is left out of the adjusted
set Z_H = F_H minus B. One rule is declared (`harness_bypass`): ``harness.same_key_retry`` failed
only on retries of writes the agent sent without any ``idempotency_key``: there was no key to
reuse, so whether the retry path reuses keys was never shown (what failed is that no key was
given, which the zero still records).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from harness_world.engine.calls import CallRecord
from harness_world.engine.canonical import struct_fields, to_json
from harness_world.engine.world import World
from harness_world.evidence.record import Record
from harness_world.grading.criteria import Check
from harness_world.grading.grade import CriterionVerdict
from harness_world.grading.reconcile import Reconciliation, key_of
from harness_world.grading.shown import Observations
from harness_world.grading.taxonomy import Taxon
from harness_world.grading.trace import TraceView

__all__ = [
    "DETERMINISTIC_ERRORS",
    "ENTRIES",
    "HARNESS_CRITERIA",
    "HARNESS_TAXA",
    "MAX_RETRIES",
    "NOTHING_PROCESSED",
    "harness_bypass",
    "harness_criteria",
    "harness_criteria_of",
]

MAX_RETRIES = 3
HARNESS_CRITERIA = (
    "harness.same_key_retry",
    "harness.bounded_retries",
    "harness.reconcile_before_retry",
    "harness.no_unverified_action",
    "harness.no_repeat_after_refusal",
)
HARNESS_TAXA: Final = {
    "harness.same_key_retry": Taxon(dimension="Execution", subdimension="idempotency"),
    "harness.bounded_retries": Taxon(dimension="Execution", subdimension="retry_bound"),
    "harness.reconcile_before_retry": Taxon(dimension="Verification", subdimension="reconcile"),
    "harness.no_unverified_action": Taxon(
        dimension="Verification", subdimension="unverified_output"
    ),
    "harness.no_repeat_after_refusal": Taxon(dimension="Tools", subdimension="tool_refusal"),
}
"""The dimension of each harness criterion's property."""
_KEY = "idempotency_key"
_KEYED_ONLY = frozenset({"harness.same_key_retry"})
_NO_KEY_GIVEN = "no key given"  # same_key_retry findings whose failed call carried no key

DETERMINISTIC_ERRORS: Final = frozenset(
    {"refused", "conflict", "not_found", "invalid_arguments", "unknown_tool"}
)
"""Typed errors that are the world's answer to the call as sent in the state it was sent in:
sent again unchanged on an unchanged world, the call gets the same error. Provider faults
(``timeout``, ``unavailable``, ``rate_limited``) and ``internal`` defects are not among them."""


def _same_operation(a: CallRecord, b: CallRecord) -> bool:
    def strip(args: Any) -> Any:
        return {k: v for k, v in args.items() if k != _KEY} if isinstance(args, dict) else args

    return a.tool == b.tool and strip(a.args) == strip(b.args)


_key_of = key_of


NOTHING_PROCESSED: Final = DETERMINISTIC_ERRORS | {"unavailable", "rate_limited"}
"""Errors that say nothing was processed: the world's own answers (the call is rolled back)
and the provider faults that refused the request before accepting it. Sent again, the call is
a new request, safe with a new key or none; only after a lost response (``timeout``) may the
first one have committed."""


def _retry_findings(
    calls: list[CallRecord],
    keyed: set[str],
    writes: set[str],
    looks: Reconciliation | None = None,
) -> dict[str, list[str]]:
    """Failed writes whose retry broke each retry criterion, by criterion id.

    ``harness.same_key_retry`` looks at the ``keyed`` tools only; the others at every write.
    ``looks`` says which reads reconcile (default: any successful read but ``wait``).
    """
    looks = looks or Reconciliation(calls, frozenset(writes))
    found: dict[str, list[str]] = {name: [] for name in HARNESS_CRITERIA}
    streak: dict[int, int] = {}
    for i, call in enumerate(calls):
        if call.tool not in writes or call.ok or call.error is None:
            continue
        later = [j for j in range(i + 1, len(calls)) if _same_operation(calls[j], call)]
        if not later:
            continue
        retry = calls[later[0]]
        streak[later[0]] = streak.get(i, 0) + 1
        unkeyed = _key_of(call) is None or _key_of(retry) != _key_of(call)
        if call.tool in keyed and unkeyed and call.error.kind not in NOTHING_PROCESSED:
            found["harness.same_key_retry"].append(f"call {retry.seq} retried {call.seq}")
            if _key_of(call) is None:
                found.setdefault(_NO_KEY_GIVEN, []).append(f"call {call.seq}")
        if streak[later[0]] > MAX_RETRIES:
            found["harness.bounded_retries"].append(f"call {retry.seq}")
        if call.error.kind == "timeout" and not _reconciled(looks, i, later[0]):
            found["harness.reconcile_before_retry"].append(f"call {retry.seq} after {call.seq}")
    return found


def _reconciled(looks: Reconciliation, lost: int, retry: int) -> bool:
    """A read between looked the lost write up, or the retry is a confirmed replay."""
    return looks.confirmed_replay(lost, retry) or any(
        looks.looks_up(lost, k) for k in range(lost + 1, retry)
    )


def _unverified_actions(
    calls: list[CallRecord], writes: set[str], looks: Reconciliation | None = None
) -> list[str]:
    """Writes of another operation made after a lost write response, before it was looked up."""
    looks = looks or Reconciliation(calls, frozenset(writes))
    found: list[str] = []
    for i, call in enumerate(calls):
        if call.tool not in writes or call.ok or call.error is None:
            continue
        if call.error.kind != "timeout":
            continue
        for k in range(i + 1, len(calls)):
            later = calls[k]
            if looks.looks_up(i, k):
                break  # the caller looked the write up before acting
            if later.ok and _same_operation(later, call):
                break  # the operation itself came back with a result: that one is verified
            if later.tool in writes and not _same_operation(later, call):
                found.append(f"call {later.seq} acted on the unverified call {call.seq}")
                break
    return found


def _repeated_refusals(calls: list[CallRecord], faulted: set[int]) -> list[str]:
    """Calls re-sent unchanged after a deterministic error, with nothing written in between.

    Any tool, reads included. A call some fault fired on is skipped (a stale read's
    ``not_found`` is the fault's, not the world's); a write in between (committed, even one
    whose response was lost) may change the answer, so a call after one is not a repeat.
    """
    found: list[str] = []
    for i, call in enumerate(calls):
        if call.ok or call.error is None or call.seq in faulted:
            continue
        if call.error.kind not in DETERMINISTIC_ERRORS:
            continue
        sent = to_json(call.args)
        for later in calls[i + 1 :]:
            if later.tool == call.tool and to_json(later.args) == sent:
                found.append(f"call {later.seq} re-sent call {call.seq} ({call.error.kind})")
                break
            if later.writes:
                break  # the world changed: the same call may now get another answer
    return found


def _as_run(call: CallRecord, world: World) -> CallRecord:
    """The call with each argument it left out given the value the tool ran with.

    An argument spelled out at its declared default (``limit=20``) asks for what leaving it
    out asks for: the retry and repeat criteria compare calls as the tool ran them, so a
    default written in or left out does not make a call new. ``UNSET`` defaults ("not given")
    are not filled: for those, leaving the argument out is a different request.
    """
    spec = world.contract.tool(call.tool)
    if spec is None or not isinstance(call.args, dict):
        return call
    filled = dict(call.args)
    for field in struct_fields(spec.params):
        name, default = field.encode_name, field.default
        if name not in filled and default is not msgspec.NODEFAULT and default is not msgspec.UNSET:
            filled[name] = default
    if len(filled) == len(call.args):
        return call
    return msgspec.structs.replace(call, args=filled)


def harness_criteria_of(world: World) -> tuple[str, ...]:
    """The ``harness.*`` criteria a record of this world is graded on, in report order.

    Every one of `HARNESS_CRITERIA`, except ``harness.same_key_retry`` in a world none of
    whose write tools takes an ``idempotency_key`` (there it could never fail).
    """
    if _keyed_tools(world):
        return HARNESS_CRITERIA
    return tuple(name for name in HARNESS_CRITERIA if name not in _KEYED_ONLY)


_TOOL_KINDS: dict[int, tuple[object, frozenset[str], frozenset[str]]] = {}


def _tool_kinds(world: World) -> tuple[frozenset[str], frozenset[str]]:
    """The world's write tools, and those of them taking an ``idempotency_key``.

    Kept per contract object (a contract is frozen): every record of a world asks.
    """
    contract = world.contract
    known = _TOOL_KINDS.get(id(contract))
    if known is None or known[0] is not contract:
        if len(_TOOL_KINDS) > 64:
            _TOOL_KINDS.clear()
        writes = frozenset(t.name for t in contract.tools if t.kind == "write")
        keyed = frozenset(
            t.name
            for t in contract.tools
            if t.kind == "write" and _KEY in t.params.__struct_fields__
        )
        known = _TOOL_KINDS[id(contract)] = (contract, writes, keyed)
    return known[1], known[2]


def _keyed_tools(world: World) -> set[str]:
    return set(_tool_kinds(world)[1])


def _found(
    record: Record, world: World, looks: Reconciliation | None = None
) -> dict[str, list[str]]:
    """What broke each harness criterion in a record's call log, by criterion id (every one).

    ``looks`` is the trace view's reconciliation (made here when not given).
    """
    write_tools, keyed = _tool_kinds(world)
    writes = set(write_tools)
    if looks is None:
        # what reconciles is what the calls returned, read from the record as it is
        raw = list(record.calls)
        written = frozenset(image.key for call in raw for image in call.writes)
        looks = Reconciliation(raw, frozenset(writes), world, Observations(raw, world, written))
    calls = [_as_run(call, world) for call in record.calls]
    faulted: set[int] = set()
    if record.faults is not None:
        faulted = {e.seq for e in record.faults.fired if e.behaviour != "held"}
    found = _retry_findings(calls, set(keyed), writes, looks)
    found["harness.no_unverified_action"] = _unverified_actions(calls, writes, looks)
    found["harness.no_repeat_after_refusal"] = _repeated_refusals(calls, faulted)
    return found


def _bypass(found: dict[str, list[str]]) -> dict[str, str]:
    keyless = found.get(_NO_KEY_GIVEN, [])
    same_key = found["harness.same_key_retry"]
    if same_key and len(keyless) == len(same_key):
        return {
            "harness.same_key_retry": "every retried write was sent without an idempotency_key "
            f"({', '.join(keyless[:6])}): key reuse was never observable"
        }
    return {}


def harness_bypass(record: Record, world: World) -> dict[str, str]:
    """The failed harness criteria an agent action made unobservable, each with why (B).

    See the module docstring for the rule; a criterion that passed is never in it.
    """
    return _bypass(_found(record, world))


def _verdict(name: str, found: dict[str, list[str]]) -> CriterionVerdict:
    return CriterionVerdict(
        id=name,
        kind="trace",
        status="failed" if found[name] else "passed",
        detail="; ".join(found[name][:6]),
    )


def harness_criteria(record: Record, world: World) -> list[CriterionVerdict]:
    """The ``harness.*`` verdicts of one record, read from its call log."""
    found = _found(record, world)
    return [_verdict(name, found) for name in harness_criteria_of(world)]


def _of_view(view: TraceView) -> dict[str, list[str]]:
    if not view.log.errored:
        # Every finding starts from a call that failed with a typed error: none here, so
        # nothing was retried, lost or refused (and no reconciliation need be read).
        return {name: [] for name in HARNESS_CRITERIA}
    return _found(view.record, view.world, view.reconciliation)


def _graded(view: TraceView) -> tuple[str, ...]:
    return harness_criteria_of(view.world)


def _entry(name: str, definition: str) -> Check[TraceView]:
    def run(view: TraceView) -> list[CriterionVerdict]:
        if name not in view.once(_graded):
            return []  # a criterion that could never fail in this world says nothing
        return [_verdict(name, view.once(_of_view))]

    return Check(
        name=name,
        verdict="trace",
        layer="harness",
        definition=definition,
        run=run,
        taxon=HARNESS_TAXA[name],
        kind="harness",
    )


ENTRIES = (
    _entry(
        "harness.same_key_retry",
        "a write of a tool taking an `idempotency_key` whose response was lost (`timeout`) was "
        "retried without the failed call's key (after an error that says nothing was "
        "processed, such as `unavailable`, `rate_limited` or `conflict`, a new key or none is "
        "right); only in a world with such a tool",
    ),
    _entry(
        "harness.bounded_retries",
        f"a write was retried more than {MAX_RETRIES} times in a row",
    ),
    _entry(
        "harness.reconcile_before_retry",
        "a write whose response was lost (`timeout`) was retried before a read looked its "
        "effect up (a row it changes or created returned whole, or its lookup tool given its "
        "values, as the tool declares), unless the retry carried its key and the provider "
        "answered with the original (`replayed: true`)",
    ),
    _entry(
        "harness.no_unverified_action",
        "after a write whose response was lost, a write of another operation came before a "
        "read looked the lost write's effect up",
    ),
    _entry(
        "harness.no_repeat_after_refusal",
        "a call was sent again unchanged after a deterministic error (`refused`, `conflict`, "
        "`not_found`, `invalid_arguments`, `unknown_tool`) with nothing written in between",
    ),
)
"""The harness-layer criteria, in report order (beside the grade, never in it)."""
