"""``harness.no_unverified_action``: no other write right after a lost write response."""

from __future__ import annotations

from typing import Any

from harness_world.engine import CallRecord, ToolError
from harness_world.grading.harness import _unverified_actions

WRITES = {"create_charge", "record_payment"}


def call(
    seq: int, tool: str, args: dict[str, Any], *, ok: bool = True, kind: str = ""
) -> CallRecord:
    return CallRecord(
        seq=seq,
        tool=tool,
        args=args,
        ok=ok,
        result={"id": "x"} if ok else None,
        error=None if ok else ToolError(kind, "lost"),
    )


CHARGE = {"order_id": "O-1", "amount": 10}
TIMEOUT = call(1, "create_charge", CHARGE, ok=False, kind="timeout")
PAY = call(3, "record_payment", {"order_id": "O-1", "charge_id": "ch_1"})


def test_fires_when_another_write_follows_a_lost_response() -> None:
    found = _unverified_actions([TIMEOUT, PAY], WRITES)
    assert found == ["call 3 acted on the unverified call 1"]


def test_quiet_after_a_read_that_checks() -> None:
    look = call(2, "find_charges", {"order_id": "O-1"})
    assert _unverified_actions([TIMEOUT, look, PAY], WRITES) == []


def test_quiet_when_the_operation_itself_came_back() -> None:
    again = call(2, "create_charge", {**CHARGE, "idempotency_key": "k"})
    assert _unverified_actions([TIMEOUT, again, PAY], WRITES) == []


def test_quiet_without_a_lost_response() -> None:
    refused = call(1, "create_charge", CHARGE, ok=False, kind="conflict")
    assert _unverified_actions([refused, PAY], WRITES) == []
    assert _unverified_actions([call(1, "create_charge", CHARGE), PAY], WRITES) == []
