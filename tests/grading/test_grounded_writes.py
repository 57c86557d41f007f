"""Written ids are grounded: an id a write names was given or shown before the write.

The world is the same in every attempt, so the right writes can be made from memory with no
read at all, side-stepping the near-duplicate rows a task is built around. Each such route
fails ``trace.grounded_writes`` with the id named; each honest route passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import (
    load_oracles,
    load_routes,
    record_calls,
    run_script,
    trace_mutants,
)
from harness_world.evidence.record import UserTurn
from harness_world.grading import advise
from harness_world.grading.checker import CRITERIA, grade
from harness_world.grading.task import SWITCHABLE, TaskError, load_task
from tests.conftest import TAU2_DATA

NAME = "trace.grounded_writes"
TASKS = {t.id: t for t in hw.load_tasks()}


def _verdicts(
    world: hw.World,
    task: hw.Task,
    calls: list[tuple[str, Any]],
    user_turns: list[UserTurn] | None = None,
) -> dict[str, hw.CriterionVerdict]:
    record = record_calls(world, task, calls, final_message="Done.")
    if user_turns is not None:  # what a conversation adds to the record (graded, not replayed)
        record = msgspec.structs.replace(record, user_turns=user_turns)
    return {v.id: v for v in grade(record, task, world).verdicts}


def _writes(world: hw.World, task_id: str) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """The oracle's calls, and its writes alone (what an agent that memorised them sends)."""
    task = TASKS[task_id]
    oracle = run_script(world, task, load_oracles(task.world)[task_id])
    kinds = {t.name: t.kind for t in world.contract.tools}
    calls = [(c.tool, c.args) for c in oracle.calls]
    return calls, [(tool, args) for tool, args in calls if kinds[tool] == "write"]


@pytest.mark.parametrize(
    ("task_id", "named"),
    [
        ("inventory.order_hdmi_cable", "call 1 create_purchase_order item_id=I-0162"),
        ("inventory.label_tape_everywhere", "call 1 create_purchase_order item_id=I-0206"),
    ],
)
def test_the_right_writes_from_memory_fail_and_only_that(task_id: str, named: str) -> None:
    """These tasks are built around a near-duplicate item; the memorised write skips it."""
    world = hw.load_world("inventory")
    calls, writes = _writes(world, task_id)
    task = TASKS[task_id]
    honest = _verdicts(world, task, calls)
    assert all(v.status == "passed" for v in honest.values()), honest
    memorised = _verdicts(world, task, writes)
    assert [k for k, v in memorised.items() if v.status == "failed"] == [NAME]
    assert memorised[NAME].detail.startswith(
        f"a write named an id nothing had shown (from memory): {named}"
    )


def test_ids_the_instruction_gives_need_no_read() -> None:
    world = hw.load_world("helpdesk")
    task = TASKS["helpdesk.reply_and_solve"]  # "... T-1001 ..."
    _, writes = _writes(world, task.id)
    assert _verdicts(world, task, writes)[NAME].status == "passed"


def test_an_id_the_user_said_before_the_write_is_given() -> None:
    world = hw.load_world("inventory")
    task = TASKS["inventory.order_hdmi_cable"]
    _, writes = _writes(world, task.id)
    told = [UserTurn(after_call=0, agent="Which item?", user="It is I-0162, into W-05.")]
    assert _verdicts(world, task, writes, user_turns=told)[NAME].status == "passed"
    late = [UserTurn(after_call=1, agent="Done?", user="It was I-0162.")]
    assert _verdicts(world, task, writes, user_turns=late)[NAME].status == "failed"


def test_an_id_quoted_back_by_an_error_is_still_from_memory() -> None:
    """Sending the remembered id to a read that fails makes the error quote it: not shown."""
    world = hw.load_world("inventory")
    task = TASKS["inventory.order_hdmi_cable"]
    _, writes = _writes(world, task.id)
    probe = ("get_stock", {"item_id": "I-0162", "warehouse_id": "W-99"})  # not_found, quoting it
    verdict = _verdicts(world, task, [probe, *writes])[NAME]
    assert verdict.status == "failed" and "item_id=I-0162" in verdict.detail


def test_every_oracle_route_of_every_world_passes() -> None:
    for world_name in ("helpdesk", "inventory", "payments"):
        world = hw.load_world(world_name)
        for task_id, routes in load_routes(world_name).items():
            for route in routes:
                record = run_script(world, TASKS[task_id], route)
                verdicts = {v.id: v for v in grade(record, TASKS[task_id], world).verdicts}
                if NAME in verdicts:
                    assert verdicts[NAME].status == "passed", (task_id, verdicts[NAME].detail)


def test_a_read_only_task_is_not_graded_on_it() -> None:
    task = TASKS["helpdesk.security_count"]
    assert NAME not in {c.name for c in CRITERIA.for_task(task)}


# -- switching it off, with a reason --------------------------------------------------------

TASK = """id = "helpdesk.x"
world = "helpdesk"
family = "f"
instruction = "Solve the oldest open ticket."
{extra}

[[targets]]
entity = "tickets"
where = [{{ field = "id", eq = "T-1001" }}]

[[require]]
kind = "set"
field = "status"
value = "solved"
"""


def test_a_task_switches_it_off_only_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text(TASK.format(extra=""))
    plain = load_task(path)
    assert NAME in {c.name for c in CRITERIA.for_task(plain)}
    path.write_text(TASK.format(extra='off = { "trace.grounded_writes" = "the ids are fixed" }'))
    off = load_task(path)
    assert off.off == {NAME: "the ids are fixed"}
    assert NAME not in {c.name for c in CRITERIA.for_task(off)}
    assert off.hash != plain.hash  # what a task is graded on is part of its definition
    for extra, needle in (
        ('off = { "trace.grounded_writes" = " " }', "needs a reason"),
        ('off = { "trace.answer" = "why" }', "'trace.answer', not one of trace.grounded_writes"),
    ):
        path.write_text(TASK.format(extra=extra))
        with pytest.raises(TaskError) as caught:
            load_task(path)
        assert str(path) in str(caught.value) and needle in str(caught.value)
    assert set(SWITCHABLE) == {c.name for c in CRITERIA if c.task_name is None and c.name == NAME}


def test_a_task_without_the_table_keeps_its_hash() -> None:
    task = TASKS["helpdesk.reply_and_solve"]
    assert "off" not in msgspec.to_builtins(task)


# -- the mutation operator ------------------------------------------------------------------


def test_the_memorised_write_operator_is_killed_by_the_criterion() -> None:
    world = hw.load_world("inventory")
    task = TASKS["inventory.order_hdmi_cable"]
    oracle = run_script(world, task, load_oracles("inventory")[task.id])
    (mutant,) = [m for m in trace_mutants(oracle, task, world) if m.operator == "memorised_write"]
    assert [tool for tool, _ in mutant.calls] == ["create_purchase_order"]
    record = record_calls(world, task, mutant.calls, final_message=oracle.final_message)
    failed = [v.id for v in grade(record, task, world).verdicts if v.status == "failed"]
    assert failed == [NAME]


def test_the_operator_leaves_tasks_whose_ids_are_all_given() -> None:
    world = hw.load_world("helpdesk")
    task = TASKS["helpdesk.reply_and_solve"]
    oracle = run_script(world, task, load_oracles("helpdesk")[task.id])
    assert not [m for m in trace_mutants(oracle, task, world) if m.operator == "memorised_write"]
    off = msgspec.structs.replace(TASKS["inventory.order_hdmi_cable"], off={NAME: "because"})
    inventory = hw.load_world("inventory")
    oracle = run_script(inventory, off, load_oracles("inventory")[off.id])
    assert not [m for m in trace_mutants(oracle, off, inventory) if m.operator == "memorised_write"]


# -- τ²: the reward stays τ²'s; the rule is reported beside it ------------------------------


@pytest.mark.skipif(
    not (TAU2_DATA / "db.json").is_file(), reason=f"τ² retail data not found in {TAU2_DATA}"
)
def test_a_tau2_memorised_write_keeps_tau2s_verdict_and_is_reported_beside() -> None:
    from harness_world.tau2 import importer

    world = importer.load_world(TAU2_DATA)
    (item,) = importer.import_tasks(world, TAU2_DATA / "tasks_train.json", only=["88"])
    task = item.task
    assert NAME in task.off and "τ²'s reward" in task.off[NAME]
    gold = [(call.tool, call.args) for call in item.gold]  # one cancellation, nothing read
    record = record_calls(world, task, gold, final_message="Done.")
    result = hw.verify(record, world=world, task=task)
    assert result.grade is not None and result.grade.passed  # τ²'s own verdict on its gold
    assert NAME not in {v.id for v in result.grade.verdicts}
    (found,) = [a for a in advise(record, task, world) if a.name == "ungrounded_write"]
    assert found.detail == "call 1 cancel_pending_order order_id=#W8835847" and found.calls == [1]


def test_an_integer_id_is_grounded_by_its_digits_shown_as_text() -> None:
    """An integer key the agent writes to counts as shown when an earlier read showed its
    digits as a string (a note saying "2"), and not when nothing did."""
    from harness_world.grading.rules.grounded import ungrounded_writes
    from harness_world.grading.trace import trace_view
    from tests.toy_world import CONTRACT

    world = hw.World.from_data(
        CONTRACT,
        {
            "things": [
                {"id": 1, "data": 0, "note": "2", "tags": []},
                {"id": 2, "data": 0, "note": "b", "tags": []},
                {"id": 3, "data": 0, "note": "c", "tags": []},
            ]
        },
    )
    task = hw.Task(id="toy.tidy", world="toy", family="f", instruction="Tidy the things.")

    def memorised(target: int) -> list[tuple[int, str]]:
        calls = [("get", {"id": 1}), ("set", {"id": target, "field": "note", "value": "d"})]
        record = record_calls(world, task, calls, final_message="Done.")
        return ungrounded_writes(trace_view(record, task, world))

    assert memorised(2) == []  # thing 1's note showed "2"
    assert memorised(3) == [(2, "call 2 set id=3")]  # nothing showed 3
