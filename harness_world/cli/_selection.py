"""Choosing tasks and budget overrides from command-line options, shared by several commands."""

from __future__ import annotations

import argparse
import fnmatch

from harness_world.grading.task import Task, load_tasks

__all__ = ["add_limit_options", "add_task_options", "limit_overrides", "select_tasks"]


def add_task_options(parser: argparse.ArgumentParser, *, world_required: bool = False) -> None:
    """``--world``, ``--tasks`` and ``--size``."""
    parser.add_argument(
        "--world", required=world_required, help="built-in world (e.g. helpdesk, inventory)"
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        metavar="ID",
        help="task ids or globs (default: every task of the world)",
    )
    parser.add_argument("--size", default="small", help="seed size: small (default) or large")


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """Budget overrides applied on top of each task's budgets."""
    group = parser.add_argument_group("budget overrides (default: each task's own budgets)")
    group.add_argument("--turns", type=int, help="model round trips per attempt")
    group.add_argument("--tool-calls", type=int, help="tool calls per attempt")
    group.add_argument("--context-tokens", type=int, help="prompt tokens per attempt")
    group.add_argument(
        "--requests", type=int, help="provider requests per attempt, retries included"
    )
    group.add_argument("--cost", type=float, help="US dollars per attempt")


def limit_overrides(args: argparse.Namespace) -> dict[str, int | float | None]:
    """The overrides given (None where not given)."""
    return {
        "turns": args.turns,
        "tool_calls": args.tool_calls,
        "context_tokens": args.context_tokens,
        "requests": args.requests,
        "cost": args.cost,
    }


def select_tasks(args: argparse.Namespace) -> list[Task]:
    """The tasks the options name.

    Raises:
        ValueError: when a pattern matches nothing or nothing is selected.
    """
    tasks = load_tasks(world=args.world)
    if args.world and not tasks:
        raise ValueError(f"no tasks for world {args.world!r}")
    if not args.tasks:
        return tasks
    chosen: dict[str, Task] = {}
    for pattern in args.tasks:
        hits = [t for t in tasks if fnmatch.fnmatchcase(t.id, pattern)]
        if not hits:
            known = ", ".join(t.id for t in tasks[:8])
            raise ValueError(f"--tasks: {pattern!r} matches no task (known: {known}, ...)")
        chosen.update((t.id, t) for t in hits)
    return sorted(chosen.values(), key=lambda t: t.id)
