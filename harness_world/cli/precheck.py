"""``precheck``: refuse a run whose limits no agent could meet, before any model request."""

from __future__ import annotations

import argparse
import json
import sys

import msgspec

from harness_world.analysis.listings import render_precheck
from harness_world.cli._selection import (
    add_limit_options,
    add_task_options,
    limit_overrides,
    select,
)
from harness_world.running.precheck import precheck

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``precheck`` command."""
    parser = sub.add_parser(
        "precheck",
        help="check that each task's limits fit its oracle",
        description=(
            "Run each selected task's oracle and count its calls and writes. A limit below the "
            "number of writes is refused (exit 1): no agent could succeed. A limit that fits only "
            "a path as short as the oracle's is a warning."
        ),
    )
    add_task_options(parser)
    add_limit_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the feasibility of every selected task."""
    tasks, choice = select(args)
    results = precheck(tasks, size=args.size, limits=limit_overrides(args), worlds=choice)
    refused = [r for r in results if r.verdict == "refuse"]
    if args.json:
        print(
            json.dumps({"tasks": msgspec.to_builtins(results), "refused": len(refused)}, indent=1)
        )
    else:
        sys.stdout.write(render_precheck(results))
    return 1 if refused else 0
