"""Reconciliation reads the thing that failed; confirmed replays and unprocessed errors are safe.

After a lost response, ``list_groups`` or ``list_warehouses`` satisfied
``harness.reconcile_before_retry`` and ``harness.no_unverified_action``: any successful read
counted. Now each write tool declares how its effect is looked up (`harness_world.engine.Lookup`)
and only such a read reconciles. Conversely a retry with the failed call's key that the provider
answers with ``replayed: true``, and a new key after an error that says nothing was processed,
were failed; both are safe retries now.
"""

from __future__ import annotations

from typing import Any

import pytest

import harness_world as hw
from harness_world.coverage import record_calls
from harness_world.engine import Contract, DeclarationError, Lookup, ToolContext, entity, tool
from harness_world.grading.verify import verify

TASKS = {t.id: t for t in hw.load_tasks()}
RECONCILE, UNVERIFIED = "harness.reconcile_before_retry", "harness.no_unverified_action"
SAME_KEY = "harness.same_key_retry"
Calls = list[tuple[str, dict[str, Any]]]


def _harness(task_id: str, calls: Calls) -> dict[str, hw.CriterionVerdict]:
    task = TASKS[task_id]
    world = hw.load_world(task.world)
    record = record_calls(world, task, calls, final_message="Done.")
    grade = verify(record, world=world, task=task).grade
    assert grade is not None
    return {v.id: v for v in grade.harness}


REPLY = {"ticket_id": "T-1008", "body": "Your refund has been issued.", "public": True}
SOLVE = {"ticket_id": "T-1008", "status": "solved"}
COUNT = {"item_id": "I-0084", "warehouse_id": "W-03", "delta": 6, "reason": "cycle count"}
MOVE = {"item_id": "I-0084", "from_warehouse_id": "W-03", "to_warehouse_id": "W-05", "quantity": 4}


@pytest.mark.parametrize(
    ("task_id", "lost", "unrelated", "again"),
    [
        ("helpdesk.reply_lost_response", ("add_comment", REPLY), ("list_groups", {}), REPLY),
        (
            "inventory.recount_lost_response",
            ("adjust_stock", COUNT),
            ("list_warehouses", {}),
            COUNT,
        ),
    ],
)
def test_an_unrelated_listing_reconciles_nothing(
    task_id: str,
    lost: tuple[str, dict[str, Any]],
    unrelated: tuple[str, dict[str, Any]],
    again: Any,
) -> None:
    """Listing groups or warehouses says nothing about whether the lost write committed."""
    verdicts = _harness(task_id, [lost, unrelated, (lost[0], again)])
    assert verdicts[RECONCILE].status == "failed"
    assert verdicts[RECONCILE].detail == "call 3 after 1"


@pytest.mark.parametrize(
    ("task_id", "lost", "unrelated", "next_write"),
    [
        ("helpdesk.reply_lost_response", ("add_comment", REPLY), ("list_groups", {}), SOLVE),
        ("inventory.recount_lost_response", ("adjust_stock", COUNT), ("list_warehouses", {}), MOVE),
    ],
)
def test_acting_after_an_unrelated_listing_is_unverified(
    task_id: str, lost: Any, unrelated: Any, next_write: dict[str, Any]
) -> None:
    tool_name = "update_ticket" if task_id.startswith("helpdesk") else "create_transfer"
    verdicts = _harness(task_id, [lost, unrelated, (tool_name, next_write)])
    assert verdicts[UNVERIFIED].status == "failed"
    assert verdicts[UNVERIFIED].detail == "call 3 acted on the unverified call 1"


@pytest.mark.parametrize(
    ("task_id", "lost", "look", "then"),
    [
        (
            "helpdesk.reply_lost_response",
            ("add_comment", REPLY),
            ("list_comments", {"ticket_id": "T-1008", "limit": 100}),
            ("update_ticket", SOLVE),
        ),
        (
            "inventory.recount_lost_response",
            ("adjust_stock", COUNT),
            ("get_stock", {"item_id": "I-0084", "warehouse_id": "W-03"}),
            ("create_transfer", MOVE),
        ),
        (
            "inventory.recount_lost_response",
            ("adjust_stock", COUNT),
            ("list_stock", {"warehouse_id": "W-03", "item_id": "I-0084"}),
            ("create_transfer", MOVE),
        ),
    ],
)
def test_a_read_of_the_lost_write_reconciles(
    task_id: str, lost: Any, look: Any, then: tuple[str, dict[str, Any]]
) -> None:
    verdicts = _harness(task_id, [lost, look, then])
    assert verdicts[UNVERIFIED].status == "passed"
    retried = _harness(task_id, [lost, look, lost])
    assert retried[RECONCILE].status == "passed"


def test_the_wrong_row_is_no_lookup() -> None:
    """Reading another stock row (the destination's) does not look the count up."""
    other = ("get_stock", {"item_id": "I-0084", "warehouse_id": "W-05"})
    verdicts = _harness(
        "inventory.recount_lost_response", [("adjust_stock", COUNT), other, ("adjust_stock", COUNT)]
    )
    assert verdicts[RECONCILE].status == "failed"


def test_a_listing_that_shows_the_created_row_reconciles() -> None:
    """Any read that returned the comment the lost reply created looked it up."""
    listed = ("list_comments", {"ticket_id": "T-1008", "limit": 100, "offset": 0})
    verdicts = _harness(
        "helpdesk.reply_lost_response", [("add_comment", REPLY), listed, ("update_ticket", SOLVE)]
    )
    assert verdicts[UNVERIFIED].status == "passed"


CHARGE = {"order_id": "O-00031", "amount_cents": 15900, "idempotency_key": "charge-O-00031"}


def test_a_confirmed_replay_is_a_safe_retry() -> None:
    """Sent again with the same key, the provider answers with the original: nothing to look up."""
    calls: Calls = [("get_order", {"order_id": "O-00031"}), ("create_charge", CHARGE)]
    calls.append(("create_charge", CHARGE))
    task = TASKS["payments.charge_lost_response"]
    world = hw.load_world("payments")
    record = record_calls(world, task, calls)
    assert record.calls[2].result["replayed"] is True
    verdicts = _harness("payments.charge_lost_response", calls)
    assert verdicts[RECONCILE].status == "passed"
    assert verdicts[SAME_KEY].status == "passed"


def test_a_same_key_retry_the_provider_does_not_confirm_is_no_reconciliation() -> None:
    """A provider that ignores the key creates again: no ``replayed`` flag, nothing confirmed."""
    charge = {"order_id": "O-00003", "amount_cents": 4350, "idempotency_key": "k-O-00003"}
    task = TASKS["payments.charge_timeout_create_again"]
    world = hw.load_world("payments")
    order = world.get("orders", "O-00003")
    assert order is not None
    charge["amount_cents"] = order["amount_cents"]
    calls: Calls = [("create_charge", charge), ("create_charge", charge)]
    record = record_calls(world, task, calls)
    assert "replayed" not in record.calls[1].result
    assert _harness(task.id, calls)[RECONCILE].status == "failed"


@pytest.mark.parametrize(
    ("task_id", "order"),
    [("payments.charge_unavailable", "O-00008"), ("payments.charge_rate_limited", "O-00016")],
)
def test_a_new_key_after_nothing_was_processed_is_right(task_id: str, order: str) -> None:
    world = hw.load_world("payments")
    row = world.get("orders", order)
    assert row is not None
    base = {"order_id": order, "amount_cents": row["amount_cents"]}
    calls: Calls = [
        ("create_charge", {**base, "idempotency_key": f"{order}-1"}),
        ("wait", {}),
        ("wait", {}),
        ("wait", {}),
        ("create_charge", {**base, "idempotency_key": f"{order}-2"}),
    ]
    task = TASKS[task_id]
    record = record_calls(world, task, calls)
    assert record.calls[0].error is not None
    assert record.calls[0].error.kind in ("unavailable", "rate_limited")
    assert _harness(task_id, calls)[SAME_KEY].status == "passed"


def test_a_new_key_after_a_lost_response_still_fails() -> None:
    calls: Calls = [
        ("create_charge", CHARGE),
        ("find_charges", {"order_id": "O-00031"}),
        ("create_charge", {**CHARGE, "idempotency_key": "another"}),
    ]
    verdicts = _harness("payments.charge_lost_response", calls)
    assert verdicts[SAME_KEY].status == "failed" and verdicts[RECONCILE].status == "passed"


def test_the_lost_response_says_how_to_look_it_up_and_names_no_provider() -> None:
    task = TASKS["helpdesk.reply_lost_response"]
    record = record_calls(hw.load_world("helpdesk"), task, [("add_comment", REPLY)])
    error = record.calls[0].error
    assert error is not None and error.kind == "timeout"
    assert "provider" not in error.message
    assert error.message.endswith(
        "look its effect up before sending it again or acting on it: "
        "list_comments with ticket_id='T-1008'"
    )
    task = TASKS["payments.charge_lost_response"]
    record = record_calls(hw.load_world("payments"), task, [("create_charge", CHARGE)])
    error = record.calls[0].error
    assert error is not None
    assert "find_charges with order_id='O-00031'" in error.message
    assert "replayed: true in its result confirms the original" in error.message


@pytest.mark.parametrize("world_name", ["helpdesk", "inventory", "payments"])
def test_every_write_tool_of_a_faulted_world_declares_its_lookups(world_name: str) -> None:
    world = hw.load_world(world_name)
    undeclared = [t.name for t in world.contract.tools if t.kind == "write" and t.lookups is None]
    assert undeclared == []


def test_every_provider_write_states_safe_retries_in_its_text() -> None:
    world = hw.load_world("payments")
    for name in ("create_charge", "refund_charge", "create_payout"):
        spec = world.contract.tool(name)
        assert spec is not None and spec.replayed == "replayed"
        assert "same key" in spec.description or "SAME idempotency_key" in spec.description
    charge = world.contract.tool("create_charge")
    assert charge is not None and "nothing was processed" in charge.description


def _contract(**declared: Any) -> Contract:
    from typing import TypedDict

    class Note(TypedDict):
        """Notes."""

        id: str
        text: str

    @tool(kind="read")
    def get_note(ctx: ToolContext, note_id: str) -> dict[str, Any]:
        """Get a note."""
        return {}

    @tool(kind="write", **declared)
    def write_note(ctx: ToolContext, note_id: str, text: str) -> dict[str, Any]:
        """Write a note."""
        return {}

    return Contract(
        name="notes",
        version="1",
        entities=(entity(Note, name="notes", key="id"),),
        tools=(get_note, write_note),
    )


def test_a_contract_without_lookups_keeps_its_hash() -> None:
    plain = _contract()
    declared = _contract(lookups=(Lookup(entity="notes", key="{note_id}"),))
    assert plain.hash == _contract().hash
    assert declared.hash != plain.hash


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"lookups": (Lookup(entity="notes", key="{missing}"),)}, "names no parameter missing"),
        ({"lookups": (Lookup(tool="get_note", args=("other",)),)}, "names no parameter other"),
    ],
)
def test_a_lookup_naming_no_parameter_is_a_declaration_error(
    declared: dict[str, Any], message: str
) -> None:
    with pytest.raises(DeclarationError, match=message):
        _contract(**declared)


def test_a_lookup_tool_must_be_a_read_taking_the_arguments() -> None:
    with pytest.raises(ValueError, match="lookup tool 'write_note' is no read tool"):
        _contract(lookups=(Lookup(tool="write_note", args=("note_id",)),))
    with pytest.raises(ValueError, match="takes no text"):
        _contract(lookups=(Lookup(tool="get_note", args=("text",)),))
    with pytest.raises(ValueError, match=r"a row .* or a lookup tool"):
        Lookup(entity="notes")
