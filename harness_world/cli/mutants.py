"""``mutants``: the coverage gate over oracles, hand mutants and automatic trace mutants.

The gate is `harness_world.coverage.gate.check_worlds`; this command prints what kills what.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import msgspec

from harness_world.cli._selection import UsageError, add_world_data_options, world_data
from harness_world.coverage.gate import check_worlds, default_threshold
from harness_world.coverage.render import render_coverage

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mutants`` command."""
    parser = sub.add_parser(
        "mutants",
        help="prove every task solvable and every criterion able to fail",
        description=(
            "Run every oracle route (on each seed) and every hand and automatic mutant through "
            "record, replay and grade. Exit 1 if an oracle route fails, a task has fewer passing "
            "routes than required (oracle_routes_min in pyproject.toml, default 2), a hand "
            "mutant passes or fails other criteria than it predicts, an automated criterion is "
            "failed by no mutant (hand, else automatic), or the automatic mutation score is "
            "below the threshold in pyproject.toml. With --world-data: the gate the world "
            "defines for that data."
        ),
    )
    parser.add_argument(
        "--world",
        help="one world: a built-in name or a world folder (default: every built-in world "
        "with tasks)",
    )
    parser.add_argument(
        "--tasks", type=Path, help="with --world: a task folder (default: the world's own)"
    )
    parser.add_argument(
        "--sizes",
        help="seeds to run oracles on, comma-separated (default: small and large where the "
        "world declares them)",
    )
    parser.add_argument(
        "--no-automatic", action="store_true", help="skip the automatic trace mutants"
    )
    parser.add_argument(
        "--min-score", type=float, help="override the automatic mutation score threshold"
    )
    parser.add_argument(
        "--min-routes",
        type=int,
        help="override the minimum number of passing oracle routes per task",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="list every attempt, not only problems"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_world_data_options(parser)
    parser.set_defaults(handler=run)


def _data_gate(args: argparse.Namespace) -> int:
    """``--world-data``: the gate the world defines for its data.

    Raises:
        UsageError: for an option only the built-in gate takes, or a world whose data has none.
    """
    own = {"--tasks": args.tasks, "--sizes": args.sizes, "--min-routes": args.min_routes,
           "--no-automatic": args.no_automatic, "--json": args.json}  # fmt: skip
    if given := [flag for flag, value in own.items() if value]:
        raise UsageError(f"--world-data: {', '.join(given)} do not apply to its gate")
    data = world_data(args, [args.world] if args.world else [])
    if data is None or data.gate is None:
        raise UsageError(f"--world-data: world {args.world!r} defines no gate for its data")
    score = default_threshold() if args.min_score is None else args.min_score
    passed, text = data.gate(score, args.verbose)
    print(f"{text}\nGATE {'PASSED' if passed else 'FAILED'}")
    return 0 if passed else 1


def run(args: argparse.Namespace) -> int:
    """Run the gate for each world and report what kills what."""
    if args.world_data is not None or args.world_tasks is not None:
        return _data_gate(args)
    sizes = tuple(s.strip() for s in args.sizes.split(",") if s.strip()) if args.sizes else None
    if args.tasks is not None and not args.world:
        raise UsageError("--tasks needs --world (the world the tasks belong to)")

    def started(world: str) -> None:
        if not args.json:
            print(f"checking {world} ...", file=sys.stderr)

    result = check_worlds(
        [args.world] if args.world else None,
        sizes=sizes,
        tasks_folder=args.tasks,
        threshold=args.min_score,
        automatic=not args.no_automatic,
        min_routes=args.min_routes,
        started=started,
    )
    if args.json:
        print(json.dumps(msgspec.to_builtins(result), indent=1))
        return 0 if result.ok else 1
    for report in result.worlds:
        sys.stdout.write(render_coverage(report, verbose=args.verbose))
    print("GATE PASSED" if result.ok else "GATE FAILED")
    return 0 if result.ok else 1
