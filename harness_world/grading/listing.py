"""A task listing: each task's family, budgets and the criteria its grade will hold.

`list_tasks` reads the tasks a caller names (one world, a task folder, or every built-in
world) and `task_summary` gives the entry of one task, a `TaskSummary`, which is what
``tasks --json`` prints. `task_criteria` names the criteria of a grade before any attempt, in
the order the checker gives them.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from harness_world.grading.rules.grounded import ENTRY as GROUNDED
from harness_world.grading.task import Task, TaskError
from harness_world.grading.worlds import WorldChoice, choose_worlds

__all__ = ["BUDGETS", "TaskSummary", "list_tasks", "task_criteria", "task_summary"]

BUDGETS = ("turns", "tool_calls", "context_tokens", "cost")
"""The budgets a listing shows, in the order a grade's ``budget.*`` criteria come."""


class TaskSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One task as a listing shows it.

    Attributes:
        id: The task id.
        world: The world it runs in.
        family: Its family (statistics cluster by it).
        budgets: The budgets it sets (``turns``, ``tool_calls``, ``context_tokens``, ``cost``);
            a budget it does not set is left out.
        criteria: The ids of the criteria its grade will hold, in the grade's order.
        answer: The answer's type (``count``, ``ids``, ``amount``, ``date``, ``yes_no``), or
            null for a task without an answer.
        instruction: What the agent is told (before budgets and the answer rule are added).
    """

    id: str
    world: str
    family: str
    budgets: dict[str, int | float]
    criteria: list[str]
    answer: str | None
    instruction: str


def task_criteria(task: Task) -> list[str]:
    """The criterion ids a grade of this task holds, in the order the checker gives them."""
    out = ["state.required"] if task.require else []
    out.append("state.allowed")
    out += [f"trace.{name}" for name in task.trace]
    if GROUNDED.applies(task):
        out.append(GROUNDED.name)
    if task.answer is not None:
        out.append("trace.answer")
    # forbidden.* and receipts.* sit here in a grade (grading.trusted_criteria)
    out += [f"forbidden.{f.id}" for f in task.forbid] + [f"receipts.{r.id}" for r in task.receipts]
    if task.authority is not None and task.authority.goal:
        out.append("attack.goal")
    out += [f"budget.{name}" for name in BUDGETS if getattr(task.budgets, name) is not None]
    out += [f"prose.{i + 1}" for i in range(len(task.prose))]
    return out


def task_summary(task: Task) -> TaskSummary:
    """The listing entry of one task."""
    budgets = {n: getattr(task.budgets, n) for n in BUDGETS}
    return TaskSummary(
        id=task.id,
        world=task.world,
        family=task.family,
        budgets={n: v for n, v in budgets.items() if v is not None},
        criteria=task_criteria(task),
        answer=None if task.answer is None else task.answer.kind,
        instruction=task.instruction,
    )


def list_tasks(
    world: str | Path | None = None, folder: str | Path | None = None
) -> list[TaskSummary]:
    """The listing of one world's tasks (or every built-in world's), optionally from a folder.

    Args:
        world: A built-in world's name or a world folder (None: every built-in world).
        folder: A task folder instead of the world's own (or the built-in) tasks.

    Raises:
        TaskError: for an unreadable task file, or when nothing is found to list.
        WorldError: for a world that does not load.
    """
    if world:
        tasks = choose_worlds([world]).tasks(folder)
    else:
        tasks = WorldChoice().tasks(folder, check=False)
    if not tasks:
        where = f"world {str(world)!r}" if world else "the task folder"
        raise TaskError(f"no tasks for {where}")
    return [task_summary(t) for t in tasks]
