"""``report SEQUENTIAL --fresh FRESH``: drift between the two tracks, per task.

`harness_world.cli.report` adds the option and hands over when it is given; the comparison
lives in `harness_world.analysis.drift`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from harness_world.analysis.drift import render_drift, track_drift
from harness_world.cli._selection import run_reader
from harness_world.registry import Options

__all__ = ["REPORT_OPTIONS", "add_drift_option", "drift_command"]


def add_drift_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--fresh RUN`` to ``report``."""
    parser.add_argument(
        "--fresh",
        type=Path,
        metavar="RUN",
        help=(
            "report drift: the run given is of the sequential track, RUN the fresh track of "
            "the same tasks, samples and seed; per task fresh vs after N earlier tasks, and "
            "the regression list"
        ),
    )


def drift_command(args: argparse.Namespace) -> int:
    """Print the drift report (``--json``: one object); exit 0, or 2 on bad input."""
    report = track_drift(args.fresh, args.run, reader=run_reader(args))
    if args.json:
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
    else:
        sys.stdout.write(render_drift(report))
    return 0


class DriftReportOptions(Options):
    """``report RUN --fresh RUN``: the drift of a sequential track against a fresh one."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--fresh``."""
        add_drift_option(parser)

    def take_over(self, args: argparse.Namespace, context: object) -> int | None:
        """The drift report when ``--fresh`` is given."""
        return drift_command(args) if args.fresh is not None else None


REPORT_OPTIONS = DriftReportOptions()
"""``report``'s drift option (registered)."""
