"""Shortcuts taken for report speed decide exactly as the plain definitions."""

from __future__ import annotations

import harness_world as hw
from harness_world.coverage import load_oracles, run_script
from harness_world.grading.rows import returned_row_keys, returned_rows


def test_one_walk_finds_what_one_walk_per_entity_finds() -> None:
    for name in ("helpdesk", "payments", "inventory"):
        world = hw.load_world(name)
        oracles = load_oracles(name)
        entities = list(world.contract.entities)
        for task in hw.load_tasks(name)[:10]:
            for call in run_script(world, task, oracles[task.id]).calls:
                expected = {(e.name, k) for e in entities for k in returned_rows(call, e)}
                assert returned_row_keys(call, entities) == expected


def test_a_cached_schema_is_a_fresh_copy_each_time() -> None:
    tool = hw.load_world("helpdesk").contract.tools[0]
    first = tool.schema()
    first["properties"] = {"tampered": True}
    second = tool.schema()
    assert second != first
    assert second == tool.schema()
    assert second is not tool.schema()
