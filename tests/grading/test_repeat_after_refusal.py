"""``harness.no_repeat_after_refusal``: no call sent again unchanged after a deterministic error
while nothing was written in between (the world would answer the same)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import ScriptContext, run_script
from harness_world.engine import CallRecord, ToolError, WriteImage
from harness_world.grading.harness import _repeated_refusals, harness_criteria

ASSIGN = {"ticket_id": "T-1", "owner_id": "U-0050"}


def call(
    seq: int, tool: str = "assign_ticket", args: dict[str, Any] | None = None, *, error: str = ""
) -> CallRecord:
    writes = []
    if not error and tool in ("assign_ticket", "update_ticket"):
        writes = [WriteImage(entity="tickets", key="T-1", before={}, after={"x": seq})]
    return CallRecord(
        seq=seq,
        tool=tool,
        args=dict(ASSIGN if args is None else args),
        ok=not error,
        result=None if error else {},
        error=ToolError(error, "no") if error else None,
        writes=writes,
    )


READ = call(2, "get_user", {"user_id": "U-0050"})
UPDATE = call(2, "update_ticket", {"ticket_id": "T-1", "status": "open"})

CASES: dict[str, tuple[list[CallRecord], list[str]]] = {
    "refused twice": (
        [call(1, error="refused"), call(2, error="refused")],
        ["call 2 re-sent call 1 (refused)"],
    ),
    "a read in between": (
        [call(1, error="refused"), READ, call(3, error="refused")],
        ["call 3 re-sent call 1 (refused)"],
    ),
    "a write in between": ([call(1, error="refused"), UPDATE, call(3, error="refused")], []),
    "other arguments": (
        [call(1, error="refused"), call(2, args={**ASSIGN, "owner_id": "U-2"})],
        [],
    ),
    "a read not found twice": (
        [call(i, "get_ticket", {"ticket_id": "T-9"}, error="not_found") for i in (1, 2)],
        ["call 2 re-sent call 1 (not_found)"],
    ),
    "a conflict twice": (
        [call(1, error="conflict"), call(2, error="conflict")],
        ["call 2 re-sent call 1 (conflict)"],
    ),
    "a fault, sent again": ([call(1, error="unavailable"), call(2)], []),
    "a timeout, sent again": ([call(1, error="timeout"), call(2)], []),
    "an internal defect, sent again": ([call(1, error="internal"), call(2)], []),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_repeat_after_refusal_cases(case: str) -> None:
    calls, expected = CASES[case]
    assert _repeated_refusals(calls, set()) == expected


def test_a_call_a_fault_fired_on_may_be_sent_again() -> None:
    # A stale read's not_found is the fault's answer, not the world's: looking again is right.
    calls = [call(i, "get_charge", {"charge_id": "ch_1"}, error="not_found") for i in (1, 2)]
    assert _repeated_refusals(calls, {1}) == []
    assert _repeated_refusals(calls, set()) == ["call 2 re-sent call 1 (not_found)"]


def _assign_to_a_customer_twice(ctx: ScriptContext) -> str:
    for _ in range(2):
        ctx.call("assign_ticket", {"ticket_id": "T-1000", "owner_id": "U-0050"})
    return "Done."


def test_a_refused_call_sent_again_fails_the_harness_layer() -> None:
    world = hw.load_world("helpdesk")
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.assign_on_hold_unowned")
    made = run_script(world, task, _assign_to_a_customer_twice)
    verdict = {v.id: v for v in harness_criteria(made, world)}["harness.no_repeat_after_refusal"]
    assert verdict.status == "failed" and verdict.detail == "call 2 re-sent call 1 (refused)"
    once = msgspec.structs.replace(made, calls=made.calls[:1])
    again = {v.id: v.status for v in harness_criteria(once, world)}
    assert again["harness.no_repeat_after_refusal"] == "passed"
