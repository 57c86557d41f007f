"""``--html`` and ``--png`` for ``report`` and ``compare``: the options and what they write.

``report`` and ``compare`` each call one function here after computing what they print, so the
commands themselves stay about text and exit codes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from harness_world.analysis.report import RunReport, build_report
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
    html_out: Path | None = getattr(args, "html", None)
    png_out: Path | None = getattr(args, "png", None)
    if html_out is None and png_out is None:
        return 0
    from harness_world.analysis.html import load_run_view, run_html, run_plots, write_pngs

    name = getattr(args, "config", None) or Path(report.out).resolve().name
    try:
        view = load_run_view(report, name)
        if html_out is not None:
            html_out.write_text(run_html(view), encoding="utf-8")
        if png_out is not None:
            write_pngs(run_plots(view), png_out)
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
    """Write ``--html`` (with both runs' heatmaps and traces when ``runs``) and ``--png``.

    The page shows ``outcome``, the same verdict, band and lists the text and JSON show.
    """
    html_out: Path | None = getattr(args, "html", None)
    png_out: Path | None = getattr(args, "png", None)
    if html_out is None and png_out is None:
        return 0
    from harness_world.analysis.html import (
        compare_html,
        compare_plots,
        load_run_view,
        write_pngs,
    )

    try:
        names = (comparison.baseline, comparison.candidate)
        views = [
            load_run_view(build_report(run), name)
            for run, name in zip(runs, names[: len(runs)], strict=True)
        ]
        if html_out is not None:
            html_out.write_text(compare_html(comparison, outcome, views, notes), encoding="utf-8")
        if png_out is not None:
            write_pngs(compare_plots(comparison, outcome, views), png_out)
    except HarnessWorldError as exc:
        return _fail(str(exc))
    except (OSError, ValueError) as exc:
        return _fail(f"cannot write the report: {exc}")
    return 0
