"""``demo``: the argument for the whole design, in one table, written as an ordinary run.

The demo itself (its agent, its run and the tampering example) is `harness_world.coverage.demo`;
this command prints what it shows. ``runs/demo`` is then a run directory like any other, so
`verify`, `report`, `compare` and `report --html` read it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import msgspec

from harness_world.coverage.demo import run_demo
from harness_world.coverage.render import render_demo

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` command."""
    parser = sub.add_parser(
        "demo",
        help="run reference solutions and typical agent mistakes; show outcome, evidence, grade",
        description=(
            "On the built-in worlds: a demo agent solves each task with an oracle route, then "
            "makes mistakes live agents made; every attempt is run, recorded, replayed and "
            "graded into a run directory (--out), and outcome, evidence and grade are printed "
            "as separate columns. Re-check it with `python -m harness_world verify runs/demo`; "
            "`report runs/demo` reads it like any run."
        ),
    )
    parser.add_argument(
        "--out", type=Path, default=Path("runs/demo"), help="the run directory to (re)write"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Run the demo and print the table."""
    result = run_demo(args.out)
    if args.json:
        print(json.dumps(msgspec.to_builtins(result), indent=1))
    else:
        sys.stdout.write(render_demo(result, args.out))
    return 0 if result.expected else 1
