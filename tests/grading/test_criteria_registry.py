"""One registry declares every criterion: the checker, the layers, the task files and the docs
read the same entries."""

from __future__ import annotations

import typing
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import load_oracles, run_script
from harness_world.grading.checker import CRITERIA, grade
from harness_world.grading.criteria import Check, CriterionRegistry
from harness_world.grading.layers import layer_of
from harness_world.grading.task import TraceCriterionName
from harness_world.grading.taxonomy import Taxon

DOCS = Path(__file__).parents[2] / "docs"


@pytest.mark.parametrize("world_name", ["helpdesk", "inventory", "payments"])
def test_every_verdict_of_every_oracle_has_one_registered_owner(world_name: str) -> None:
    world = hw.load_world(world_name)
    oracles = load_oracles(world_name)
    seen: set[str] = set()
    for task in hw.load_tasks(world_name):
        result = grade(run_script(world, task, oracles[task.id]), task, world)
        for verdict in [*result.verdicts, *result.harness]:
            owners = [c.name for c in CRITERIA if c.owns(verdict.id)]
            assert len(owners) == 1, (verdict.id, owners)
            seen.add(owners[0])
    assert {"state.allowed", "budget.*", "harness.bounded_retries"} <= seen


def test_the_trace_names_a_task_file_may_use_are_the_registered_ones() -> None:
    assert set(CRITERIA.task_names) == set(typing.get_args(TraceCriterionName))


def test_the_docs_table_is_the_registry() -> None:
    assert CRITERIA.markdown() in (DOCS / "task-format.md").read_text()


def test_layers_come_from_the_registry_unless_the_task_overrides() -> None:
    task = next(iter(hw.load_tasks("helpdesk")))
    assert layer_of(task, "budget.tool_calls") == "harness"
    assert layer_of(task, "harness.same_key_retry") == "harness"
    assert layer_of(task, "receipts.refund_reported") == "agent"
    assert layer_of(task, "faults.schedule") == "agent"
    moved = msgspec.structs.replace(task, layers={"budget.tool_calls": "agent"})
    assert layer_of(moved, "budget.tool_calls") == "agent"


def test_trace_criteria_run_in_the_order_the_task_lists_them() -> None:
    task = next(t for t in hw.load_tasks("helpdesk") if t.require)
    listed = msgspec.structs.replace(task, trace=["no_repeated_writes", "read_before_write"])
    names = [c.name for c in CRITERIA.for_task(listed)]
    assert names[:4] == [
        "state.required",
        "state.allowed",
        "trace.no_repeated_writes",
        "trace.read_before_write",
    ]
    assert "trace.pages_followed" not in names


def test_a_criterion_registered_twice_is_refused() -> None:
    entry: Check[object] = Check(
        name="x.y",
        verdict="trace",
        layer="agent",
        definition="d",
        run=lambda ctx: [],
        taxon=Taxon(dimension="Tools"),
    )
    with pytest.raises(ValueError, match=r"registered twice: x\.y"):
        CriterionRegistry([entry, entry])
