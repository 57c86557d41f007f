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

from harness_world.cli._output import render_table
from harness_world.coverage.demo import DemoError, DemoResult, run_demo

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


def _print(result: DemoResult, out: Path) -> None:
    table = [
        [r.task, r.attempt, r.outcome, r.evidence, r.grade, ", ".join(r.failed) or "-"]
        for r in result.attempts
    ]
    headers = ["task", "attempt", "outcome", "evidence", "grade", "failed criteria"]
    print(render_table(headers, table, 70))
    print("\nThe mistakes, and why each failed:")
    for r in result.attempts:
        if r.mistake:
            print(f"  {r.task}.{r.attempt}: {r.mistake}")
            for reason in r.reasons:
                print(f"      {reason}")
    completed_failed = sum(
        r.outcome == "completed" and r.grade == "failed" for r in result.attempts
    )
    print(f"\n{completed_failed} attempts completed cleanly and still failed: ", end="")
    print("completed is not passed.")
    tampered = result.tampered
    print(
        f"Tampering: {tampered.what} -> evidence {tampered.evidence} "
        f"({tampered.first_mismatch}); ungraded is never a pass."
    )
    print(
        f"\nRun directory: {out}/  Re-check it: python -m harness_world verify {out}"
        f"  Read it: python -m harness_world report {out}"
    )


def main(args: argparse.Namespace) -> int:
    """Run the demo and print the table."""
    try:
        result = run_demo(args.out)
    except DemoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(msgspec.to_builtins(result), indent=1))
    else:
        _print(result, args.out)
    return 0 if result.expected else 1
