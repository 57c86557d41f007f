"""``tasks``: list the tasks with their family, budgets and criteria."""

from __future__ import annotations

import argparse
import json
import sys

import msgspec

from harness_world.cli._output import render_table
from harness_world.engine.world import WorldError
from harness_world.grading.listing import list_tasks
from harness_world.grading.task import TaskError

__all__ = ["register"]


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
        summaries = list_tasks(args.world, args.folder)
    except (TaskError, WorldError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
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
