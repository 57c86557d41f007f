"""``matrix``: the coverage matrix of a world (conditions, their tasks and counterparts)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import msgspec

from harness_world.cli._selection import UsageError, add_world_data_options, world_data
from harness_world.coverage.matrix import coverage_matrix
from harness_world.coverage.render import render_matrix
from harness_world.engine.world import locate_world
from harness_world.grading.task import load_tasks

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``matrix`` command."""
    parser = sub.add_parser(
        "matrix",
        help="the coverage matrix: conditions, their tasks and benign counterparts",
        description=(
            "List every condition of a world (fault behaviours x triggers, attack kinds x "
            "phrasings) with the tasks that exercise it and its benign counterparts. The gate "
            "fails (exit 1) when a condition has no benign counterpart or a task under it has "
            "no oracle; exit 2 for an unknown world or an invalid task or oracle file. With "
            "--world-data: the conditions and oracle routes the world's data defines."
        ),
    )
    parser.add_argument(
        "--world", required=True, help="a built-in world (e.g. payments) or a world folder"
    )
    parser.add_argument("--tasks", type=Path, help="a task folder (default: the world's own tasks)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_world_data_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the matrix and its gate verdict."""
    place = locate_world(args.world)
    data = world_data(args, [args.world])
    if data is not None and args.tasks is not None:
        raise UsageError("--tasks does not go with --world-data (the data's tasks are read)")
    if data is not None:
        tasks, routes = [*data.tasks, *data.attacks], data.routes
        matrix = coverage_matrix(place.folder, tasks, routes, start=data.world)
    elif tasks := load_tasks(world=place.name, folder=args.tasks or place.tasks):
        matrix = coverage_matrix(place.folder, tasks)
    else:
        raise UsageError(f"--world: no tasks for world {place.name!r}")
    if args.json:
        print(json.dumps(msgspec.to_builtins(matrix), indent=1))
        return 0 if matrix.ok else 1
    sys.stdout.write(render_matrix(matrix))
    return 0 if matrix.ok else 1
