"""``attribute``: a reviewed label saying where one attempt's failure comes from."""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec

from harness_world.analysis.attribution import ATTRIBUTIONS, SOURCES, add_label

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``attribute`` command."""
    parser = sub.add_parser(
        "attribute",
        help="label where one attempt's failure comes from (a reviewed attribution)",
        description=(
            f"Write a reviewed label for attempt SAMPLE of TASK in the run directory RUN, kept in "
            f"RUN/{ATTRIBUTIONS} (earlier labels stay as history; the latest wins). Labels never "
            "change grades: `diagnose RUN` reports them beside the automatic attribution and "
            "counts reviewed and automatic separately. Sources: agent (tools worked, the agent "
            "chose badly), world (a wrong tool result or a missing capability), task_text (the "
            "instruction asked for something the tools cannot express), harness (lost "
            "responses, crashes, mis-accounted budgets)."
        ),
    )
    parser.add_argument("run", type=Path, help="a run directory")
    parser.add_argument("task", help="the task id")
    parser.add_argument("sample", type=int, help="the sample index")
    parser.add_argument("--as", dest="source", required=True, choices=SOURCES, help="the source")
    parser.add_argument("--why", required=True, help="the evidence the label relies on")
    parser.add_argument("--json", action="store_true", help="print the label as JSON")
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Write the label."""
    label = add_label(args.run, args.task, args.sample, args.source, args.why)
    if args.json:
        print(msgspec.json.encode(label).decode())
    else:
        print(f"{args.task} sample {args.sample}: {label.source} (reviewed) — {label.why}")
    return 0
