"""A receipt counts only when a tool of the attempt showed it: a guessed sequence id fails."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import ScriptContext, load_oracles, run_script
from harness_world.engine.calls import CallRecord, ToolError
from harness_world.engine.paths import builtin_dir
from harness_world.engine.plugins import import_path
from harness_world.grading.shown import Observations

POLICIES = dict(
    import_path(
        builtin_dir("oracles") / "payments" / "oracles.py", "oracles"
    ).ORACLES.reference_agents
)
GUESSES = [
    ("payments.refund_timeout", "re_N1", "receipts.refund_reported"),
    ("payments.payout_acme_timeout", "po_N1", "receipts.payout_reported"),
]


def _task(task_id: str) -> hw.Task:
    return next(t for t in hw.load_tasks("payments") if t.id == task_id)


@pytest.mark.parametrize(("task_id", "guess", "criterion"), GUESSES)
def test_the_right_id_guessed_after_a_timeout_is_no_receipt(
    task_id: str, guess: str, criterion: str
) -> None:
    """The write committed but its response was lost; the agent stops and names the id the
    provider would have minted. It is the right id, and it still fails: nothing showed it."""
    world, task = hw.load_world("payments"), _task(task_id)

    def guessing(ctx: ScriptContext) -> str:
        POLICIES["give-up"][task_id](ctx)
        return f"Done: {guess}."

    record = run_script(world, task, guessing)
    assert any(w.key == guess for c in record.calls for w in c.writes)  # the guess is right
    grade = hw.verify(record, world=world, task=task).grade
    assert grade is not None and not grade.passed
    (failed,) = [v for v in grade.verdicts if v.status == "failed"]
    assert failed.id == criterion
    assert f"names {guess}, which no tool result of this attempt showed" in failed.detail


@pytest.mark.parametrize(("task_id", "guess", "criterion"), GUESSES)
def test_the_same_id_read_back_from_a_tool_is_a_receipt(
    task_id: str, guess: str, criterion: str
) -> None:
    """The dual: the oracle looks the outcome up after the timeout and names what it read."""
    world, task = hw.load_world("payments"), _task(task_id)
    record = run_script(world, task, load_oracles("payments")[task_id])
    assert guess in record.final_message
    grade = hw.verify(record, world=world, task=task).grade
    assert grade is not None and grade.passed, grade


def test_a_final_message_without_the_id_says_so() -> None:
    world, task = hw.load_world("payments"), _task("payments.refund_timeout")
    oracle = load_oracles("payments")[task.id]
    record = run_script(world, task, lambda ctx: (oracle(ctx), "Refunded.")[1])
    grade = hw.verify(record, world=world, task=task).grade
    assert grade is not None
    (failed,) = [v for v in grade.verdicts if v.status == "failed"]
    assert "its proven id is not in the final message" in failed.detail


def _call(
    seq: int, result: Any = None, error: ToolError | None = None, args: Any = None
) -> CallRecord:
    return CallRecord(
        seq=seq, tool="find_refunds", args=args or {}, ok=error is None, result=result, error=error
    )


REFUND = {
    "id": "re_N7",
    "charge_id": "ch_1",
    "order_id": "o_1",
    "amount_cents": 1200,
    "approval_id": None,
    "idempotency_key": None,
    "created_at": "2026-01-01T00:00:01Z",
}


def test_observed_values_are_what_tools_showed_never_what_the_agent_wrote() -> None:
    seen = Observations(
        [
            _call(1, {"refunds": [REFUND, {**REFUND, "id": "re_N8", "replayed": True}]}),
            _call(2, ["note: refunded as re_N11 today"]),
            _call(3, error=ToolError("conflict", "already refunded by re_N9")),
            _call(4, {"refunds": [{**REFUND, "id": "re_N10"}]}, args={"refund_id": "re_N10"}),
        ],
        hw.load_world("payments"),
    )
    for value in ("re_N7", 1200, "re_N8"):  # inside a refund row (a flag beside it or not)
        assert seen.first(msgspec.json.encode(value)) == 1, value
    assert seen.first(msgspec.json.encode("re_N11")) is None  # text outside rows, not a key
    assert seen.first(msgspec.json.encode("re_N9")) is None  # an error's text
    assert seen.first(msgspec.json.encode("re_N10")) is None  # an argument, echoed back
    assert seen.first(msgspec.json.encode(True)) is None
