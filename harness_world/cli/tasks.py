"""``tasks``: list the tasks with their family, budgets and criteria."""

from __future__ import annotations

import argparse
import json
import sys

import msgspec

from harness_world.cli._output import render_table
from harness_world.engine.world import WorldError
from harness_world.grading.task import Task, TaskError
from harness_world.grading.worlds import WorldChoice, choose_worlds

__all__ = ["TaskSummary", "register", "summarise", "task_criteria"]

_BUDGETS = ("turns", "tool_calls", "context_tokens", "cost")


class TaskSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One task as ``tasks --json`` lists it.

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
    if task.answer is not None:
        out.append("trace.answer")
    # invattack: forbidden.* and receipts.* come here in a grade (grading.trusted_criteria)
    out += [f"forbidden.{f.id}" for f in task.forbid] + [f"receipts.{r.id}" for r in task.receipts]
    out += [f"budget.{name}" for name in _BUDGETS if getattr(task.budgets, name) is not None]
    out += [f"prose.{i + 1}" for i in range(len(task.prose))]
    return out


def summarise(task: Task) -> TaskSummary:
    """The listing entry of one task."""
    budgets = {n: getattr(task.budgets, n) for n in _BUDGETS}
    return TaskSummary(
        id=task.id,
        world=task.world,
        family=task.family,
        budgets={n: v for n, v in budgets.items() if v is not None},
        criteria=task_criteria(task),
        answer=None if task.answer is None else task.answer.kind,
        instruction=task.instruction,
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``tasks`` command."""
    parser = sub.add_parser(
        "tasks",
        help="list tasks with their family, budgets and criteria",
        description=(
            "List every task (or those of one world) with its family, its budgets and the "
            "criteria its grade holds. Exit 2 for an unreadable task file or a world without "
            "tasks."
        ),
    )
    parser.add_argument(
        "--world",
        help="only this world's tasks: a built-in name or a world folder (default: every "
        "built-in world)",
    )
    parser.add_argument(
        "--tasks",
        "--folder",
        dest="folder",
        metavar="FOLDER",
        help="a task folder (default: the world's own, or the built-in tasks)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def _budget_text(budgets: dict[str, int | float]) -> str:
    short = {"turns": "turns", "tool_calls": "calls", "context_tokens": "tokens", "cost": "$"}
    return ", ".join(f"${v}" if n == "cost" else f"{v} {short[n]}" for n, v in budgets.items())


def run(args: argparse.Namespace) -> int:
    """Print the task list."""
    try:
        if args.world:
            tasks = choose_worlds([args.world]).tasks(args.folder)
        else:
            tasks = WorldChoice().tasks(args.folder, check=False)
    except (TaskError, WorldError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not tasks:
        where = f"world {args.world!r}" if args.world else "the task folder"
        print(f"error: no tasks for {where}", file=sys.stderr)
        return 2
    summaries = [summarise(t) for t in tasks]
    if args.json:
        print(json.dumps({"tasks": msgspec.to_builtins(summaries)}, indent=1))
        return 0
    rows = [
        [
            s.id,
            s.family,
            _budget_text(s.budgets),
            ", ".join(c.removeprefix("trace.") for c in s.criteria if not c.startswith("budget."))
            + (f" ({s.answer})" if s.answer else ""),
        ]
        for s in summaries
    ]
    print(render_table(["task", "family", "budgets", "criteria"], rows, 110))
    print(f"\n{len(summaries)} task(s)")
    return 0
