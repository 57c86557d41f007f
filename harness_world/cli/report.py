"""``report``: a run's result vector with explicit denominators."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness_world.analysis import report as reports
from harness_world.analysis.reading import read_run
from harness_world.analysis.report import RunReport, report_rows
from harness_world.analysis.report_text import reading_json, render_reading
from harness_world.analysis.results_csv import COLUMNS, OPTIONAL_COLUMNS, write_results
from harness_world.cli._selection import (
    add_verifier_world_options,
    add_world_data_options,
    run_reader,
)
from harness_world.registry import registry
from harness_world.running.pending import COUNT_PENDING_HELP, pending_line

__all__ = ["CSV_HELP", "register"]

CSV_HELP = (
    f"also write the results CSV that compare reads: columns {','.join(COLUMNS)}, then "
    f"{' and '.join(OPTIONAL_COLUMNS)} (the task's family when it names one; the run's "
    "revision, answering models and build); one row per valid attempt, config = --config"
)
"""``--help`` of ``--csv``, made from the columns `write_results` writes so it cannot drift."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``report`` command."""
    parser = sub.add_parser(
        "report",
        help="a run's results with explicit denominators",
        description=(
            "Replay every record of a run directory and report: scheduled, executed, valid, "
            "invalid and re-run attempts; completed-but-failed; first-try vs eventual completion; "
            "pass^k and pass@k for k = 1..samples; consumption per attempt and per passed attempt "
            "(undefined, not zero, when nothing passed); retried and lost model requests; "
            "latency p50/p95; figures per task family."
        ),
    )
    parser.add_argument("run", type=Path, help="a run directory")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--count-pending", action="store_true", help=COUNT_PENDING_HELP)
    parser.add_argument("--pass-k", type=_pass_k_at, default=(), help=reports.PASS_K_HELP)
    parser.add_argument(
        "--full",
        action="store_true",
        help="every section (families, process metrics, layered sheets, queue times, trusted "
        "completion, conditions); without it a short page that names what it leaves out",
    )
    parser.add_argument(
        "--csv",
        type=Path,
        metavar="FILE",
        help=CSV_HELP,
    )
    parser.add_argument(
        "--config", help="config name for --csv rows (default: the run folder's name)"
    )
    add_verifier_world_options(parser)
    add_world_data_options(parser)
    for options in registry().command_options("report"):  # visuals, drift, held-out splits
        options.add_arguments(parser)
    parser.set_defaults(handler=main)


def _pass_k_at(text: str) -> reports.PassKAt:
    try:
        return reports.parse_pass_k_at(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _reader_options(args: argparse.Namespace) -> str:
    """The reader's own ``--world``/``--tasks``, as they would be typed again."""
    worlds = "".join(f" --world {w}" for w in args.worlds or [])
    return worlds + (f" --tasks {args.task_folder}" if args.task_folder else "")


def main(args: argparse.Namespace) -> int:
    """Build and print the report (extensions' options may answer instead, or add to it)."""
    extensions = registry().command_options("report")
    for options in extensions:  # --fresh RUN: the drift of a sequential track
        code = options.take_over(args, None)
        if code is not None:
            return code
    reading = read_run(
        args.run, run_reader(args), count_pending=args.count_pending, pass_k_at=args.pass_k
    )
    if args.csv and not _write_csv(args, reading.report):
        return 2
    for options in extensions:  # --html / --png
        failed = options.after(args, reading)
        if failed:
            return failed
    sections = [s for s in (o.section(args) for o in extensions) if s is not None]
    # every figure of the text (advisories' reach included) is in the JSON as well
    if args.json:
        extra = {s.key: s.value for s in sections}
        sys.stdout.write(reading_json(reading, _reader_options(args), extra) + "\n")
    else:
        sys.stdout.write(render_reading(reading, _reader_options(args), full=args.full))
        sys.stdout.write("".join(s.text for s in sections))
    return 0


def _write_csv(args: argparse.Namespace, report: RunReport) -> bool:
    """``--csv``: one row per counted attempt; False (after saying why) when it fails."""
    try:
        rows = report_rows(report, args.config or args.run.resolve().name)
        write_results(args.csv, rows, comments=[pending_line(report.counts)])
    except (OSError, ValueError) as exc:
        print(f"error: --csv {args.csv}: {exc}", file=sys.stderr)
        return False
    return True
