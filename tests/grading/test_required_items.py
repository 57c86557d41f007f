"""The required set R member by member: what partial credit counts, and state.required decides."""

from __future__ import annotations

import pytest

import harness_world as hw
from harness_world.coverage import load_mutants, load_routes, run_script
from harness_world.grading import required_items, verify

WORLDS = ("helpdesk", "inventory", "payments")


def _agree(record: hw.Record, task: hw.Task, world: hw.World) -> bool:
    """state.required passes exactly when every item is met, one missing change per unmet item."""
    checked = verify(record, world, task)
    assert checked.grade is not None
    required = next(v for v in checked.grade.verdicts if v.id == "state.required")
    items = required_items(record, task, world)
    unmet = [item for item in items if not item.met]
    assert (required.status == "passed") == (not unmet)
    if unmet:  # a row requirement names one missing field each; every other kind one change
        missing = int(required.detail.split()[1].rstrip(":"))
        rows = any(r.kind == "row" for r in task.require)
        assert missing == len(unmet) or (rows and missing > len(unmet))
        assert all(item.detail for item in unmet)
    return bool(unmet)


@pytest.mark.parametrize("world", WORLDS)
def test_items_are_the_members_of_state_required_over_oracles_and_mutants(world: str) -> None:
    loaded = hw.load_world(world)
    tasks = {t.id: t for t in hw.load_tasks(world) if t.require}
    scripts = [(t, s) for t, routes in load_routes(world).items() for s in routes]
    scripts += [(m.task_id, m.script) for m in load_mutants(world) if "small" in m.sizes]
    unmet = 0
    for task_id, script in scripts:
        if task_id in tasks:
            unmet += _agree(run_script(loaded, tasks[task_id], script), tasks[task_id], loaded)
    assert unmet > 0  # some mutant misses some required change


def test_each_requirement_counts_once_per_target_row() -> None:
    world = hw.load_world("helpdesk")
    task = {t.id: t for t in hw.load_tasks("helpdesk")}["helpdesk.reply_and_solve"]
    idle = run_script(world, task, lambda ctx: "Done.")
    items = required_items(idle, task, world)
    assert [(i.requirement, i.kind, i.where, i.met) for i in items] == [
        (0, "set", "tickets:T-1001", False),
        (1, "create", "tickets:T-1001", False),
    ]
