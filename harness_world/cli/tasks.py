"""``tasks``: list the tasks with their family, budgets and criteria."""

from __future__ import annotations

import argparse
import json
import sys

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


def run(args: argparse.Namespace) -> int:
    """Print the task list."""
    import msgspec

    from harness_world.analysis.listings import render_tasks
    from harness_world.grading.listing import list_tasks

    summaries = list_tasks(args.world, args.folder)
    if args.json:
        print(json.dumps({"tasks": msgspec.to_builtins(summaries)}, indent=1))
        return 0
    sys.stdout.write(render_tasks(summaries))
    return 0
