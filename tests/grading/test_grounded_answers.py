"""A right answer counts only when the attempt's own tool results support it.

Ids are sequence-derived and a task's answer is the same in every attempt, so an agent trained
against the grade can state a remembered answer without reading anything. Each guess below
fails with a reason; each honest route (the listing's total, every row read, the oracle) passes.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import load_oracles, record_calls, run_script, trace_mutants
from harness_world.grading.checker import grade
from harness_world.grading.task import Answer, select_targets

TASKS = {t.id: t for t in hw.load_tasks()}
ORACLES = load_oracles("helpdesk") | load_oracles("inventory")
GUESS = "no tool result of this attempt showed it"
Calls = list[tuple[str, Any]]


@pytest.fixture(scope="module")
def helpdesk() -> hw.World:
    return hw.load_world("helpdesk")


@pytest.fixture(scope="module")
def inventory() -> hw.World:
    return hw.load_world("inventory")


def _answer(world: hw.World, task: hw.Task, calls: Calls, message: str) -> hw.CriterionVerdict:
    record = record_calls(world, task, calls, final_message=message)
    return next(v for v in grade(record, task, world).verdicts if v.id == "trace.answer")


def _oracle(world: hw.World, task_id: str) -> hw.Record:
    return run_script(world, TASKS[task_id], ORACLES[task_id])


@pytest.mark.parametrize(
    "task_id",
    [
        "helpdesk.security_count",
        "inventory.count_legacy_peripherals",
        "inventory.draft_orders_leeds",
    ],
)
def test_the_oracles_answer_without_its_reads_is_a_guess(
    helpdesk: hw.World, inventory: hw.World, task_id: str
) -> None:
    world = helpdesk if task_id.startswith("helpdesk.") else inventory
    oracle = _oracle(world, task_id)
    calls = [(c.tool, c.args) for c in oracle.calls]
    task = TASKS[task_id]
    assert _answer(world, task, calls, oracle.final_message).status == "passed"
    guessed = _answer(world, task, [], oracle.final_message)
    assert guessed.status == "failed" and GUESS in guessed.detail


def test_a_count_read_from_the_listing_total_passes(helpdesk: hw.World) -> None:
    task = TASKS["helpdesk.security_count"]
    total = [("list_tickets", {"status": "open", "tag": "security", "limit": 5})]
    assert _answer(helpdesk, task, total, "There are 15.").status == "passed"


def test_a_count_beside_an_unrelated_read_is_still_a_guess(helpdesk: hw.World) -> None:
    task = TASKS["helpdesk.security_count"]
    verdict = _answer(helpdesk, task, [("list_groups", {})], "There are 15.")
    assert verdict.status == "failed"
    assert "neither the value nor every target row" in verdict.detail


def test_an_id_answer_names_the_ids_no_result_showed(inventory: hw.World) -> None:
    task = TASKS["inventory.draft_orders_leeds"]
    oracle = _oracle(inventory, task.id)
    last = str(select_targets(inventory, task)[-1])
    # Every page but the one that showed the last target: the answer is right, one id unread.
    calls = [
        (c.tool, c.args) for c in oracle.calls if last not in msgspec.json.encode(c.result).decode()
    ]
    assert len(calls) < len(oracle.calls)
    verdict = _answer(inventory, task, calls, oracle.final_message)
    assert verdict.status == "failed" and GUESS in verdict.detail
    assert last in verdict.detail


def test_a_guessed_id_fails_by_name(inventory: hw.World) -> None:
    task = TASKS["inventory.draft_orders_leeds"]
    oracle = _oracle(inventory, task.id)
    targets = sorted(str(k) for k in select_targets(inventory, task))
    verdict = _answer(inventory, task, [], oracle.final_message)
    assert verdict.status == "failed" and targets[0] in verdict.detail


def test_amount_and_yes_no_answers_need_the_row(inventory: hw.World) -> None:
    base = msgspec.structs.replace(TASKS["inventory.order_hdmi_cable"], require=[], trace=[])
    item = inventory.get("items", "I-0162")
    assert item is not None
    read = [("get_item", {"item_id": "I-0162"})]
    amount = msgspec.structs.replace(base, answer=Answer(type="amount", field="unit_cost"))
    cost = f"It costs {item['unit_cost']:.2f}."
    assert _answer(inventory, amount, read, cost).status == "passed"
    assert _answer(inventory, amount, [], cost).status == "failed"
    yes = msgspec.structs.replace(base, answer=Answer(type="yes_no"))
    assert _answer(inventory, yes, read, "Yes.").status == "passed"
    assert GUESS in _answer(inventory, yes, [("list_warehouses", {})], "Yes.").detail


def test_a_none_answer_needs_one_successful_read(inventory: hw.World) -> None:
    base = TASKS["inventory.order_hdmi_cable"]
    (target,) = base.targets
    nowhere = msgspec.structs.replace(target.where[0], eq="I-9999")
    task = msgspec.structs.replace(
        base,
        require=[],
        trace=[],
        answer=Answer(type="yes_no"),
        targets=[msgspec.structs.replace(target, where=[nowhere])],
    )
    assert select_targets(inventory, task) == ()
    assert _answer(inventory, task, [("list_warehouses", {})], "No.").status == "passed"
    assert GUESS in _answer(inventory, task, [], "No.").detail


@pytest.mark.parametrize(
    ("world_name", "task_id", "criterion"),
    [
        ("helpdesk", "helpdesk.security_count", "trace.answer"),
        ("payments", "payments.refund_timeout", "receipts.refund_reported"),
    ],
)
def test_the_automatic_guess_mutant_states_what_it_never_read(
    world_name: str, task_id: str, criterion: str
) -> None:
    world = hw.load_world(world_name)
    task = TASKS[task_id]
    oracle = run_script(world, task, load_oracles(world_name)[task_id])
    (mutant,) = [m for m in trace_mutants(oracle, task, world) if m.operator == "guess_next_id"]
    assert len(mutant.calls) < len(oracle.calls)
    record = record_calls(world, task, mutant.calls, final_message=oracle.final_message)
    assert criterion in grade(record, task, world).failed


def test_no_guess_mutant_where_the_grade_reads_no_final_message() -> None:
    world = hw.load_world("helpdesk")
    task = TASKS["helpdesk.reply_and_solve"]
    oracle = run_script(world, task, ORACLES[task.id])
    assert not [m for m in trace_mutants(oracle, task, world) if m.operator == "guess_next_id"]


def test_the_guess_mutants_of_the_built_in_worlds() -> None:
    """Every task whose grade reads the final message gets the guess mutant where dropping reads
    leaves a stated value unshown: which reads it drops, and nowhere else."""
    found = []
    for name in ("helpdesk", "inventory", "payments"):
        world = hw.load_world(name)
        oracles = load_oracles(name)
        for task in (t for t in hw.load_tasks(name) if t.id in oracles):
            oracle = run_script(world, task, oracles[task.id])
            found += [
                (task.id, m.id, len(m.calls), m.description.rsplit("(", 1)[-1])
                for m in trace_mutants(oracle, task, world)
                if m.operator == "guess_next_id"
            ]
    assert found == [
        ("helpdesk.security_count", "guess_next_id@1", 0, "calls 1, 2)"),
        ("inventory.count_legacy_peripherals", "guess_next_id@1", 0, "calls 1)"),
        ("inventory.draft_orders_leeds", "guess_next_id@1", 0, "calls 1)"),
        ("payments.payout_acme_timeout", "guess_next_id@4", 3, "calls 4)"),
        ("payments.refund_above_100", "guess_next_id@4", 6, "calls 4)"),
        ("payments.refund_timeout", "guess_next_id@4", 3, "calls 4)"),
    ]
