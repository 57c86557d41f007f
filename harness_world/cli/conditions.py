"""``conditions``: condition metrics and the two scored layers of runs, side by side."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import msgspec

from harness_world.analysis.conditions import conditions_report, conditions_text
from harness_world.cli._selection import (
    add_verifier_world_options,
    add_world_data_options,
    run_reader,
)

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``conditions`` command."""
    parser = sub.add_parser(
        "conditions",
        help="benign utility, utility under attack, attack success, over-blocking, layers",
        description=(
            "For each run directory: benign utility, utility under attack, attack success, "
            "benign over-blocking and trusted completion (counts, Wilson 95%% intervals); "
            "admission; agent success, harness micro and macro rates, the four joint states "
            "and candidate-link activations (never causes). Runs are shown side by side, "
            "then each run's sheets per task dimension. "
            "Exit 2 for a missing run directory or an invalid task file; docs/conditions.md "
            "defines every figure."
        ),
    )
    parser.add_argument("runs", nargs="+", help="run directories")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_verifier_world_options(parser)
    add_world_data_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the side-by-side table."""
    missing = [r for r in args.runs if not (Path(r) / "records").is_dir()]
    if missing:
        print(f"error: runs: {missing[0]} is not a run directory (no records/)", file=sys.stderr)
        return 2
    reader = run_reader(args)
    reports = [conditions_report(r, reader.verifier.tasks, reader=reader) for r in args.runs]
    if args.json:
        print(json.dumps({"runs": msgspec.to_builtins(reports)}, indent=1))
        return 0
    names = [Path(r).name for r in args.runs]
    sys.stdout.write(conditions_text(reports, names))
    return 0
