"""``harness.same_key_retry`` does what docs/conditions.md says, case by case.

The retry of a failed call is the first later call of the same tool with the same arguments
apart from the key, however far away and whatever the error; it fails when the failed call had
no key or the retry did not carry that same key, unless the error says nothing was processed
(``unavailable``, ``rate_limited``, ``conflict``, ``refused``, ...: the retry is a new request,
so a new key, or none, is right).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness_world.engine import CallRecord, ToolError
from harness_world.grading.harness import _retry_findings

KEYED = {"create_charge"}
WRITES = {"create_charge", "send_receipt"}
CHARGE = {"order_id": "O-1", "amount_cents": 10}


def charge(seq: int, key: str | None = None, *, error: str = "") -> CallRecord:
    args: dict[str, Any] = dict(CHARGE) if key is None else {**CHARGE, "idempotency_key": key}
    return CallRecord(
        seq=seq,
        tool="create_charge",
        args=args,
        ok=not error,
        result=None if error else {"id": "ch_1"},
        error=ToolError(error, "failed") if error else None,
    )


LOOK = CallRecord(seq=2, tool="find_charges", args={"order_id": "O-1"}, ok=True, result={})

CASES: dict[str, tuple[list[CallRecord], list[str]]] = {
    "same key": ([charge(1, "a", error="timeout"), charge(2, "a")], []),
    "another key": ([charge(1, "a", error="timeout"), charge(2, "b")], ["call 2 retried 1"]),
    "key dropped": ([charge(1, "a", error="timeout"), charge(2)], ["call 2 retried 1"]),
    "no key, none again": ([charge(1, error="timeout"), charge(2)], ["call 2 retried 1"]),
    "no key after a timeout, key added": (
        [charge(1, error="timeout"), charge(2, "a")],
        ["call 2 retried 1"],
    ),
    "no key, key added after unavailable": ([charge(1, error="unavailable"), charge(2, "a")], []),
    "a new key after unavailable": ([charge(1, "a", error="unavailable"), charge(2, "b")], []),
    "a new key after rate_limited": ([charge(1, "a", error="rate_limited"), charge(2, "b")], []),
    "no key after rate_limited": ([charge(1, "a", error="rate_limited"), charge(2)], []),
    "after a conflict": ([charge(1, "a", error="conflict"), charge(2, "b")], []),
    "after a bad key": ([charge(1, "a", error="invalid_arguments"), charge(2, "b")], []),
    "after a refusal": ([charge(1, "a", error="refused"), charge(2, "b")], []),
    "after an internal error": (
        [charge(1, "a", error="internal"), charge(2, "b")],
        ["call 2 retried 1"],
    ),
    "far away": (
        [charge(1, "a", error="timeout"), LOOK, charge(3, "b")],
        ["call 3 retried 1"],
    ),
    "never retried": ([charge(1, error="timeout")], []),
    "other arguments": (
        [
            charge(1, "a", error="timeout"),
            CallRecord(seq=2, tool="create_charge", args={**CHARGE, "amount_cents": 11}, ok=True),
        ],
        [],
    ),
    "two successes, no key": ([charge(1), charge(2)], []),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_key_retry_cases(case: str) -> None:
    calls, expected = CASES[case]
    assert _retry_findings(calls, KEYED, WRITES)["harness.same_key_retry"] == expected


SEND = CallRecord(seq=2, tool="send_receipt", args={"order_id": "O-1"}, ok=True, result={})
WAIT = CallRecord(seq=2, tool="wait", args={}, ok=True, result={})


@pytest.mark.parametrize(
    ("between", "expected"),
    [(LOOK, []), (SEND, ["call 3 after 1"]), (WAIT, ["call 3 after 1"])],
)
def test_only_a_read_reconciles_a_timeout(between: CallRecord, expected: list[str]) -> None:
    calls = [charge(1, "a", error="timeout"), between, charge(3, "a")]
    assert _retry_findings(calls, KEYED, WRITES)["harness.reconcile_before_retry"] == expected


# Without a key, the retry criteria still hold: a blind re-send of an unkeyed write after a
# lost response is the worse case, not a vacuous one. ``harness.same_key_retry`` stays with the
# keyed tools.
def reply(seq: int, *, error: str = "") -> CallRecord:
    return CallRecord(
        seq=seq,
        tool="add_comment",
        args={"ticket_id": "T-1", "body": "Fixed.", "public": True},
        ok=not error,
        error=ToolError(error, "failed") if error else None,
    )


LOOK_COMMENTS = CallRecord(seq=2, tool="list_comments", args={"ticket_id": "T-1"}, ok=True)
UNKEYED = {"add_comment"}


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        ([reply(1, error="timeout"), reply(2)], ["call 2 after 1"]),
        ([reply(1, error="timeout"), LOOK_COMMENTS, reply(3)], []),
        ([reply(1, error="unavailable"), reply(2)], []),
    ],
)
def test_an_unkeyed_write_is_reconciled_before_its_retry(
    calls: list[CallRecord], expected: list[str]
) -> None:
    found = _retry_findings(calls, set(), UNKEYED)
    assert found["harness.reconcile_before_retry"] == expected
    assert found["harness.same_key_retry"] == []  # nothing to key: another criterion's business


def test_an_unkeyed_write_is_retried_a_bounded_number_of_times() -> None:
    calls = [reply(i, error="unavailable") for i in range(1, 5)] + [reply(5)]
    found = _retry_findings(calls, set(), UNKEYED)
    assert found["harness.bounded_retries"] == ["call 5"]
    assert _retry_findings(calls[1:], set(), UNKEYED)["harness.bounded_retries"] == []
