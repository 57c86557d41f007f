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

__all__ = ["REPORT_OPTIONS"]


class DriftReportOptions(Options):
    """``report RUN --fresh RUN``: the drift of a sequential track against a fresh one."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--fresh RUN``."""
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

    def take_over(self, args: argparse.Namespace, context: object) -> int | None:
        """With ``--fresh``: print the drift report (``--json``: one object); exit 0."""
        if args.fresh is None:
            return None
        report = track_drift(args.fresh, args.run, reader=run_reader(args))
        if args.json:
            sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
        else:
            sys.stdout.write(render_drift(report))
        return 0


REPORT_OPTIONS = DriftReportOptions()
"""``report``'s drift option (registered)."""
