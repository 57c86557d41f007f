"""The ``trace.answer`` verdict of a task's oracle reads ending in a given final message."""

from __future__ import annotations

import harness_world as hw
from harness_world.coverage import load_oracles, record_calls, run_script
from harness_world.grading.checker import grade

TASKS = {t.id: t for t in hw.load_tasks()}
"""The built-in tasks by id."""


def oracle_answer(task_id: str, message: str) -> hw.CriterionVerdict:
    """``trace.answer`` of the oracle's reads with ``message`` as the final message."""
    task = TASKS[task_id]
    world = hw.load_world(task.world)
    oracle = run_script(world, task, load_oracles(task.world)[task_id])
    calls = [(c.tool, c.args) for c in oracle.calls]
    record = record_calls(world, task, calls, final_message=message)
    return next(v for v in grade(record, task, world).verdicts if v.id == "trace.answer")
