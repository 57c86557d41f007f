"""``play``: drive one attempt from any program over JSON lines on stdin and stdout.

The protocol is `harness_world.running.bridge`; this command picks the world and task, checks
``--record`` before any work and maps what fails to exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness_world.cli._selection import (
    UsageError,
    add_one_task_options,
    add_world_data_options,
    served_task,
)
from harness_world.running.attempt import Attempt
from harness_world.running.bridge import RecordNotSaved, serve
from harness_world.running.output_paths import record_path_problem

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``play`` command."""
    parser = sub.add_parser(
        "play",
        help="drive one attempt over JSON lines (stdio bridge for any language)",
        description=(
            "Reads one JSON object per line on stdin and answers one per line on stdout (every "
            'answer to a line carries "ok" and "seq", null when no tool ran). '
            'The first line out is {"instruction": ..., "tools": [...]}. Send {"tool": NAME, '
            '"args": {...}} to call a tool (answer: the observation), or {"finish": "final '
            'message"} to end (answer: the record path, outcome, evidence, grade, one reason '
            "per failed criterion and the prose criteria not reviewed). End of input without "
            "finish records the attempt as interrupted (counted); the record is saved in "
            "every case. Of the budgets, the tool-call budget alone is stated and counted. "
            'With a simulated user, {"user": TEXT} sends the user a message (answer: '
            '{"user": reply, "stop": bool}).'
        ),
    )
    add_one_task_options(parser)
    add_world_data_options(parser)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--record", type=Path, default=Path("play-record.json"), help="where to save the record"
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing --record")
    parser.add_argument(
        "--format",
        default="json-schema",
        choices=["json-schema", "openai", "anthropic", "mcp"],
        help="shape of the tool list in the first line",
    )
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Serve one attempt on stdin/stdout."""
    problem = record_path_problem(args.record, args.force)
    if problem:  # checked before any work, so no attempt is ever lost to a bad --record
        raise UsageError(f"--record {args.record}: {problem}")
    world, task = served_task(args)
    attempt = Attempt(world, task, seed=args.seed)
    try:
        serve(attempt, sys.stdin, sys.stdout, args.record, args.format)
    except RecordNotSaved as exc:
        raise UsageError(f"--record {exc}") from None
    return 0
