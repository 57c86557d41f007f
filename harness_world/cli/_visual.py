"""``--html`` and ``--png`` for ``report`` and ``compare``: the options, and one call each.

What is written is `harness_world.analysis.html.write_run_visuals` and
`harness_world.analysis.html.write_compare_visuals`; here a failure becomes one ``error:`` line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from harness_world.analysis.report import RunReport
from harness_world.errors import HarnessWorldError
from harness_world.stats import Comparison
from harness_world.stats.outcome import ComparisonOutcome

__all__ = ["add_html_option", "add_png_option", "write_compare_visuals", "write_run_visuals"]


def add_html_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--html FILE``."""
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help=(
            "also write a self-contained HTML report (inline SVG plots, heatmap linked to every "
            "attempt's trace; no network; needs the extra harness_world[report])"
        ),
    )


def add_png_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--png DIR``."""
    parser.add_argument(
        "--png",
        type=Path,
        metavar="DIR",
        help="also write the plots as PNG files into DIR (needs harness_world[report])",
    )


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def write_run_visuals(args: argparse.Namespace, report: RunReport) -> int:
    """Write ``--html`` and ``--png`` for a run report; 0, or 2 with one ``error:`` line."""
    if getattr(args, "html", None) is None and getattr(args, "png", None) is None:
        return 0
    from harness_world.analysis import html

    name = getattr(args, "config", None) or Path(report.out).resolve().name
    try:
        html.write_run_visuals(report, name, html=args.html, png=args.png)
    except HarnessWorldError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot write {exc.filename}: {exc.strerror}")
    return 0


def write_compare_visuals(
    args: argparse.Namespace,
    comparison: Comparison,
    outcome: ComparisonOutcome,
    runs: Sequence[Path],
    notes: Sequence[str],
) -> int:
    """Write ``--html`` (with both runs' heatmaps and traces when ``runs``) and ``--png``."""
    if getattr(args, "html", None) is None and getattr(args, "png", None) is None:
        return 0
    from harness_world.analysis import html

    try:
        html.write_compare_visuals(comparison, outcome, runs, notes, html=args.html, png=args.png)
    except HarnessWorldError as exc:
        return _fail(str(exc))
    except (OSError, ValueError) as exc:
        return _fail(f"cannot write the report: {exc}")
    return 0
