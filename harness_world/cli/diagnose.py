"""``diagnose``: advisories on each attempt, their reach, and where each failure comes from.

The figures are `harness_world.analysis.diagnosis` (a `Diagnosis`); the demo's attempts are
`harness_world.coverage.demo.demo_advice`; the text is `render_diagnosis`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from harness_world.analysis.diagnosis import (
    diagnose_run,
    diagnosis,
    render_definitions,
    render_diagnosis,
)
from harness_world.cli._selection import (
    add_verifier_world_options,
    run_reader,
)
from harness_world.coverage.demo import demo_advice

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``diagnose`` command."""
    parser = sub.add_parser(
        "diagnose",
        help="advisory observations per attempt, their reach, and failure attribution",
        description=(
            "Read a run directory: for every verified, graded attempt list the advisory "
            "observations its trace carries (they never change a grade), report their reach "
            "(failed attempts explained, passed attempts flagged), and attribute every attempt "
            "that did not pass to agent, world, task_text or harness (reviewed labels from "
            "`attribute` override the automatic source). With --demo, measure the same on the "
            "demo's reference solutions and mistakes instead of a run. --definitions lists "
            "every advisory with its one-line definition."
        ),
    )
    parser.add_argument("run", type=Path, nargs="?", help="a run directory")
    parser.add_argument("--demo", action="store_true", help="measure on the demo's attempts")
    parser.add_argument("--definitions", action="store_true", help="list the advisories")
    add_verifier_world_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Print advisories, reach and attribution."""
    if args.definitions:
        sys.stdout.write(render_definitions())
        return 0
    if (args.run is None) == (not args.demo):
        print("error: give a run directory or --demo (not both)", file=sys.stderr)
        return 2
    found = diagnosis(demo_advice()) if args.demo else diagnose_run(args.run, run_reader(args))
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(found), indent=1).decode())
        return 0
    sys.stdout.write(render_diagnosis(found))
    return 0
