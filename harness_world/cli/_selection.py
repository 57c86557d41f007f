"""Choosing tasks and budget overrides from command-line options, shared by several commands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness_world.engine.world import World, WorldError
from harness_world.errors import HarnessWorldError
from harness_world.grading.judgement_cache import CACHE_OPTIONS, judgement_cache
from harness_world.grading.task import Task
from harness_world.grading.worlds import (
    WorldChoice,
    WorldData,
    load_world_data,
    one_task_of,
    reader_worlds,
    select_tasks,
)
from harness_world.running.reader import RunReader

__all__ = [
    "UsageError",
    "add_limit_options",
    "add_one_task_options",
    "add_ray_options",
    "add_read_options",
    "add_task_options",
    "add_verifier_world_options",
    "add_world_data_options",
    "check_ray_options",
    "limit_overrides",
    "reading",
    "run_reader",
    "select",
    "served_task",
    "task_arguments",
    "verifier_worlds",
    "world_data",
]


def add_task_options(parser: argparse.ArgumentParser, *, world_required: bool = False) -> None:
    """``--world``, ``--tasks`` and ``--size``."""
    parser.add_argument(
        "--world",
        required=world_required,
        help="a built-in world (e.g. helpdesk, inventory) or a world folder of your own",
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        metavar="ID|FOLDER",
        help="task ids or globs (default: every task of the world), or a task folder (a value "
        "that is an existing folder; default: the world's own tasks)",
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
    group.add_argument("--wall-time", type=float, metavar="SECONDS", help="seconds per attempt")


def limit_overrides(args: argparse.Namespace) -> dict[str, int | float | None]:
    """The overrides given (None where not given)."""
    return {
        "turns": args.turns,
        "tool_calls": args.tool_calls,
        "context_tokens": args.context_tokens,
        "requests": args.requests,
        "cost": args.cost,
        "wall_time": args.wall_time,
    }


def task_arguments(values: list[str] | None) -> tuple[Path | None, list[str]]:
    """Split ``--tasks`` values into a task folder (an existing folder) and ids or globs.

    Raises:
        UsageError: for a value that looks like a path but is no folder, or two folders.
    """
    folders: list[Path] = []
    patterns: list[str] = []
    for value in values or []:
        path = Path(value)
        if path.is_dir():
            folders.append(path)
        elif "/" in value or "\\" in value:
            raise UsageError(f"--tasks {value}: no such task folder")
        else:
            patterns.append(value)
    if len(folders) > 1:
        raise UsageError("--tasks: give one task folder")
    return (folders[0] if folders else None), patterns


def select(args: argparse.Namespace) -> tuple[list[Task], WorldChoice]:
    """The tasks ``--world`` and ``--tasks`` name, and their worlds (see `select_tasks`)."""
    folder, patterns = task_arguments(args.tasks)
    return select_tasks(args.world, folder, patterns)


class UsageError(HarnessWorldError, ValueError):
    """A command-line option that cannot be used, reported as one ``error:`` line."""


def add_verifier_world_options(parser: argparse.ArgumentParser, trust_key: bool = True) -> None:
    """``--world`` (repeatable), ``--tasks``: the reader's trust root; ``--trust-key`` too.

    ``trust_key``: add ``--trust-key PUB`` (a command with its own leaves it out).
    """
    if trust_key:
        parser.add_argument("--trust-key", type=Path, metavar="PUB", help="an Ed25519 public "
                            "key (PEM) that must have signed every run read (run --sign-key): "
                            "any other is refused, nothing replayed (exit 1)")  # fmt: skip
    parser.add_argument(
        "--world",
        dest="worlds",
        action="append",
        metavar="FOLDER",
        help="a world folder of your own that records naming its world replay against "
        "(repeatable; records never choose a world; default: built-in worlds only)",
    )
    parser.add_argument(
        "--tasks",
        dest="task_folder",
        type=Path,
        metavar="FOLDER",
        help="a task folder to grade against (default: the built-in tasks and those of each "
        "--world)",
    )
    add_read_options(parser)


def add_read_options(parser: argparse.ArgumentParser) -> None:
    """``--workers``, ``--no-cache``, ``--clear-cache``: how the records read are judged."""
    parser.add_argument("--workers", type=int, default=1, metavar="N", help="judge the records "
                        "in N worker processes, in batches (default 1: here)")  # fmt: skip
    for flag, text in CACHE_OPTIONS.items():
        parser.add_argument(flag, action="store_true", help=text)


def reading(args: argparse.Namespace) -> dict[str, Any]:
    """The judgement cache and workers `add_read_options` asked for (`RunReader.of`'s)."""
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1, not {args.workers}")
    return {"cache": judgement_cache(use=not args.no_cache, clear=args.clear_cache),
            "workers": args.workers}  # fmt: skip


def run_reader(args: argparse.Namespace) -> RunReader:
    """How a command reads runs: ``--world``/``--tasks`` or ``--world-data``; ``--trust-key``."""
    key, worlds = getattr(args, "trust_key", None), [str(w) for w in args.worlds or []]
    if data := world_data(args, worlds) if hasattr(args, "world_data") else None:
        given = {data.world.name: data.world, **data.starts}
        return RunReader.of(data.tasks, worlds=given, trust_key=key, **reading(args))
    choice, own = verifier_worlds(args)
    return RunReader.of(own.values(), folders=choice.folders(), trust_key=key, **reading(args))


def verifier_worlds(args: argparse.Namespace) -> tuple[WorldChoice, dict[str, Task]]:
    """The worlds and tasks a reader of records gave (see `reader_worlds`)."""
    return reader_worlds(getattr(args, "worlds", None), getattr(args, "task_folder", None))


def add_world_data_options(parser: argparse.ArgumentParser) -> None:
    """``--world-data DIR`` and ``--world-tasks FILE``: a world's outside data folder."""
    parser.add_argument(
        "--world-data",
        type=Path,
        metavar="DIR",
        help="an outside data folder that the --world you name reads with its own load_data "
        "(a world that re-implements a public benchmark): replay against its start state and "
        "grade against its tasks",
    )
    parser.add_argument(
        "--world-tasks",
        type=Path,
        metavar="FILE",
        help="with --world-data: a tasks file of the folder's own format (the one the run "
        "used) instead of the folder's default tasks",
    )


def world_data(args: argparse.Namespace, worlds: list[str]) -> WorldData | None:
    """The outside data ``--world-data`` names, read by the one ``--world`` given (or None).

    Raises:
        UsageError: for ``--world-data`` without exactly one ``--world``, ``--world-tasks``
            without ``--world-data``, or data the world refuses (the message says which).
    """
    data, tasks_file = args.world_data, args.world_tasks
    if data is None:
        if tasks_file is not None:
            raise UsageError("--world-tasks goes with --world-data DIR")
        return None
    if len(worlds) != 1:
        raise UsageError("--world-data DIR needs exactly one --world: the world that reads it")
    try:
        return load_world_data(worlds[0], data, tasks_file)
    except WorldError as exc:
        raise UsageError(f"--world-data: {str(exc).splitlines()[0]}") from None


def add_ray_options(parser: argparse.ArgumentParser, ray: str, unit: str, most: int) -> None:
    """``--executor``, ``--address``, ``--ray-batch``; ``ray``: what Ray does, ``unit``: per task.

    ``most`` is the most ``unit`` one Ray task holds by default.
    """
    command = "run" if unit == "attempts" else "command"
    from harness_world.registry import registry

    names = list(registry().verifiers if unit == "records" else registry().executors)
    parser.add_argument(
        "--executor", choices=["local", *names], default="local", help=f"ray: {ray}"
    )
    parser.add_argument(
        "--address",
        help="with --executor ray: the Ray cluster ('auto': the one `ray start --head` started "
        f"here; default: a local Ray for this {command})",
    )
    parser.add_argument(
        "--ray-batch",
        type=int,
        metavar="N",
        help=f"with --executor ray: {unit} per Ray task (default: about four batches per CPU, "
        f"at most {most} {unit})",
    )


def check_ray_options(args: argparse.Namespace) -> None:
    """``--address`` and ``--ray-batch`` need ``--executor ray``.

    Raises:
        UsageError: naming the option given without it.
    """
    for option, value in (("--address", args.address), ("--ray-batch", args.ray_batch)):
        if value is not None and args.executor != "ray":
            raise UsageError(f"{option} needs --executor ray")


def add_one_task_options(parser: argparse.ArgumentParser) -> None:
    """``--world``, ``--task``, ``--tasks FOLDER`` and ``--size``: the one task an attempt plays."""
    parser.add_argument(
        "--world", required=True, help="a built-in world (e.g. helpdesk) or a world folder"
    )
    parser.add_argument("--task", required=True, help="task id, e.g. helpdesk.reply_and_solve")
    parser.add_argument(
        "--tasks", type=Path, metavar="FOLDER", help="task folder (default: the world's own)"
    )
    parser.add_argument("--size", default="small", help="seed size: small (default) or large")


def served_task(args: argparse.Namespace) -> tuple[World, Task]:
    """The one task ``play`` and ``mcp`` serve, and its world (see `one_task_of`)."""
    data, listed = args.world_data, args.world_tasks
    return one_task_of(args.world, args.task, args.size, args.tasks, data=data, tasks_file=listed)
