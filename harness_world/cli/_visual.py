"""``--html`` and ``--png`` for ``report`` and ``compare``: the options, and one call each.

What is written is `harness_world.analysis.html.write_run_visuals` and
`harness_world.analysis.html.write_compare_visuals`; here a failure becomes one ``error:`` line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from harness_world.analysis.reading import RunReading, read_run
from harness_world.errors import HarnessWorldError
from harness_world.registry import Options

if TYPE_CHECKING:
    from harness_world.cli.compare import ComparedRuns

__all__ = ["COMPARE_OPTIONS", "REPORT_OPTIONS"]


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


class _VisualOptions(Options):
    """``--html FILE --png DIR``: what is written once the command has its result."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--html`` and ``--png``."""
        parser.add_argument(
            "--html",
            type=Path,
            metavar="FILE",
            help=(
                "also write a self-contained HTML report (inline SVG plots, heatmap linked to "
                "every attempt's trace; no network; needs the extra harness_world[report])"
            ),
        )
        parser.add_argument(
            "--png",
            type=Path,
            metavar="DIR",
            help="also write the plots as PNG files into DIR (needs harness_world[report])",
        )


class RunVisualOptions(_VisualOptions):
    """``report --html FILE --png DIR``."""

    def after(self, args: argparse.Namespace, result: object) -> int | None:
        """Write the run's page and plots (``result``: the report's `RunReading`)."""
        from harness_world.analysis import html

        reading = cast(RunReading, result)
        name = getattr(args, "config", None) or Path(reading.report.out).resolve().name

        def write(page: Path | None, pngs: Path | None) -> None:
            html.write_run_visuals(reading, name, html=page, png=pngs)

        return _write(args, write) or None


class CompareVisualOptions(_VisualOptions):
    """``compare --html FILE --png DIR``.

    The runs' pages (both heatmaps and traces, when run directories were compared) replay and
    grade by the reader ``compare`` read them with (its tasks, worlds and trusted key), so a
    run of the reader's own world is shown as the text report reads it.
    """

    def after(self, args: argparse.Namespace, result: object) -> int | None:
        """Write the comparison's page and plots (``result``: `ComparedRuns`)."""
        from harness_world.analysis import html

        compared = cast("ComparedRuns", result)

        def write(page: Path | None, pngs: Path | None) -> None:
            counted = getattr(args, "count_pending", False)
            readings = [read_run(r, compared.reader, count_pending=counted) for r in compared.runs]
            html.write_compare_visuals(
                compared.comparison, compared.outcome, readings, compared.notes, html=page, png=pngs
            )

        return _write(args, write) or None


REPORT_OPTIONS = RunVisualOptions()
"""``report``'s visual options (registered)."""

COMPARE_OPTIONS = CompareVisualOptions()
"""``compare``'s visual options (registered)."""
