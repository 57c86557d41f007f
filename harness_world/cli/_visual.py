"""``--html`` and ``--png`` for ``report`` and ``compare``: the options, and one call each.

What is written is `harness_world.analysis.html.write_run_visuals` and
`harness_world.analysis.html.write_compare_visuals`; here a failure becomes one ``error:`` line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from harness_world.analysis.reading import RunReading, read_run
from harness_world.errors import HarnessWorldError
from harness_world.registry import Options
from harness_world.running.reader import RunReader
from harness_world.stats import Comparison
from harness_world.stats.gate import ComparisonOutcome

if TYPE_CHECKING:
    from harness_world.cli.compare import ComparedRuns

__all__ = [
    "COMPARE_OPTIONS",
    "REPORT_OPTIONS",
    "add_html_option",
    "add_png_option",
    "write_compare_visuals",
    "write_run_visuals",
]


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


def _write(args: argparse.Namespace, write: Callable[[Path | None, Path | None], None]) -> int:
    """Call ``write(html, png)`` when ``--html`` or ``--png`` is given; 0, or 2 saying why."""
    html, png = getattr(args, "html", None), getattr(args, "png", None)
    if html is None and png is None:
        return 0
    try:
        write(html, png)
    except HarnessWorldError as exc:
        message = str(exc)
    except OSError as exc:
        message = f"cannot write {exc.filename}: {exc.strerror}"
    except ValueError as exc:
        message = f"cannot write the report: {exc}"
    else:
        return 0
    print(f"error: {message}", file=sys.stderr)
    return 2


def write_run_visuals(args: argparse.Namespace, reading: RunReading) -> int:
    """Write ``--html`` and ``--png`` for a run's reading; 0, or 2 with one ``error:`` line."""
    from harness_world.analysis import html

    name = getattr(args, "config", None) or Path(reading.report.out).resolve().name
    return _write(
        args, lambda page, pngs: html.write_run_visuals(reading, name, html=page, png=pngs)
    )


def write_compare_visuals(
    args: argparse.Namespace,
    comparison: Comparison,
    outcome: ComparisonOutcome,
    runs: Sequence[Path],
    notes: Sequence[str],
    reader: RunReader,
) -> int:
    """Write ``--html`` (with both runs' heatmaps and traces when ``runs``) and ``--png``.

    ``reader`` is how ``compare`` read the runs (its tasks, worlds and trusted key): each
    run's page replays and grades by it, so a run of the reader's own world is shown as the
    text report reads it.
    """
    from harness_world.analysis import html

    def write(page: Path | None, pngs: Path | None) -> None:
        counted = getattr(args, "count_pending", False)
        readings = [read_run(run, reader, count_pending=counted) for run in runs]
        html.write_compare_visuals(comparison, outcome, readings, notes, html=page, png=pngs)

    return _write(args, write)


class RunVisualOptions(Options):
    """``report --html FILE --png DIR``."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--html`` and ``--png``."""
        add_html_option(parser)
        add_png_option(parser)

    def after(self, args: argparse.Namespace, result: object) -> int | None:
        """Write the run's page and plots (``result``: the report's `RunReading`)."""
        return write_run_visuals(args, cast(RunReading, result)) or None


class CompareVisualOptions(Options):
    """``compare --html FILE --png DIR``."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--html`` and ``--png``."""
        add_html_option(parser)
        add_png_option(parser)

    def after(self, args: argparse.Namespace, result: object) -> int | None:
        """Write the comparison's page and plots (``result``: `ComparedRuns`)."""
        compared = cast("ComparedRuns", result)
        return write_compare_visuals(args, *compared) or None


REPORT_OPTIONS = RunVisualOptions()
"""``report``'s visual options (registered)."""

COMPARE_OPTIONS = CompareVisualOptions()
"""``compare``'s visual options (registered)."""
