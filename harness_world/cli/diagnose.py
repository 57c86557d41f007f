"""``diagnose``: advisories on each attempt, their reach, and where each failure comes from.

The figures are `harness_world.analysis.diagnosis` (a `Diagnosis`); the demo's attempts are
`harness_world.coverage.demo.demo_advice`. `report` prints `report_section` after its figures.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

import msgspec

from harness_world.analysis.attribution import AttributionReport
from harness_world.analysis.diagnosis import (
    Diagnosis,
    diagnose_report,
    diagnose_run,
    diagnosis,
    reach_lines,
)
from harness_world.analysis.report import RunReport
from harness_world.cli._output import render_table
from harness_world.cli._selection import add_verifier_world_options, verifier_worlds
from harness_world.coverage.demo import demo_advice
from harness_world.errors import HarnessWorldError
from harness_world.grading.advice import ADVISORIES, Advisory

__all__ = ["register", "report_section"]


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


def _print(found: Diagnosis) -> None:
    rows = [
        [
            a.task_id,
            str(a.sample),
            "passed" if a.passed else "failed",
            "; ".join(f"{x.name}: {x.detail}" for x in a.advisories) or "-",
        ]
        for a in found.advice
        if a.advisories or not a.passed
    ]
    if rows:
        print(
            render_table(["task", "sample", "grade", "advisories (never change grades)"], rows, 110)
        )
        print()
    for line in reach_lines(found.reach):
        print(line)
    if found.attribution is not None:
        _print_attribution(found.attribution)


def _print_attribution(attribution: AttributionReport) -> None:
    print()
    rows = [
        [a.task_id, str(a.sample), a.source, "reviewed" if a.reviewed else "automatic", a.evidence]
        for a in attribution.attributions
    ]
    if rows:
        print(render_table(["task", "sample", "source", "by", "evidence"], rows, 90))
    counts = ", ".join(
        f"{s} {c['automatic'] + c['reviewed']} ({c['reviewed']} reviewed)"
        for s, c in attribution.counts.items()
    )
    print(f"\nattribution of {len(attribution.attributions)} attempts that did not pass: {counts}")


def report_section(
    report: RunReport,
    advised: Mapping[tuple[str, int], list[Advisory]] | None = None,
    reader_options: str = "",
) -> list[str]:
    """Lines `report` prints after its figures: advisories' reach and attribution counts.

    ``reader_options`` are the ``--world``/``--tasks`` the reader gave, repeated in the closing
    ``diagnose`` line so that it reads a user world's run as the report did. The figures are
    `harness_world.analysis.diagnosis.diagnose_report` (no record is replayed again).
    """
    found = diagnose_report(report, advised)
    lines = ["", *reach_lines(found.reach)]
    for a in found.advice:
        if a.advisories and not a.passed:
            names = ", ".join(x.name for x in a.advisories)
            lines.append(f"    {a.task_id} sample {a.sample}: {names}")
    attribution = found.attribution
    if attribution is not None and attribution.attributions:
        counts = ", ".join(
            f"{s} {c['automatic'] + c['reviewed']} ({c['reviewed']} reviewed)"
            for s, c in attribution.counts.items()
            if c["automatic"] + c["reviewed"]
        )
        lines.append(
            f"Attribution of {len(attribution.attributions)} attempts that did not pass: {counts}"
        )
    lines.append(f"Details: python -m harness_world diagnose {report.out}{reader_options}")
    return lines


def main(args: argparse.Namespace) -> int:
    """Print advisories, reach and attribution."""
    if args.definitions:
        for name, text in ADVISORIES.items():
            print(f"{name}: {text}")
        return 0
    if (args.run is None) == (not args.demo):
        print("error: give a run directory or --demo (not both)", file=sys.stderr)
        return 2
    try:
        if args.demo:
            found = diagnosis(demo_advice())
        else:
            choice, by_id = verifier_worlds(args)
            found = diagnose_run(args.run, list(by_id.values()), choice.folders())
    except (OSError, ValueError, HarnessWorldError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(found), indent=1).decode())
        return 0
    _print(found)
    return 0
