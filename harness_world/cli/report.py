"""``report``: a run's result vector with explicit denominators."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from harness_world.analysis.reading import read_run
from harness_world.analysis.report import RunReport, report_rows
from harness_world.analysis.report_text import reading_json, render_reading
from harness_world.analysis.results_csv import COLUMNS, OPTIONAL_COLUMNS, write_results
from harness_world.cli._selection import (
    add_verifier_world_options,
    add_world_data_options,
    run_reader,
)
from harness_world.cli._visual import add_html_option, add_png_option, write_run_visuals
from harness_world.cli.drift import add_drift_option, drift_command
from harness_world.release.split import SPLIT_KEY_HELP, render_heldout_use, run_heldout_use

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
    parser.add_argument(
        "--csv",
        type=Path,
        metavar="FILE",
        help=CSV_HELP,
    )
    parser.add_argument(
        "--config", help="config name for --csv rows (default: the run folder's name)"
    )
    add_html_option(parser)  # HTML report and PNG plots
    add_png_option(parser)
    add_drift_option(parser)  # --fresh RUN, drift of a sequential track
    parser.add_argument("--split", type=Path, metavar="LOCK", help="a split lock: count candidates")
    parser.add_argument("--split-key", type=Path, metavar="PUB", help=SPLIT_KEY_HELP)
    add_verifier_world_options(parser)
    add_world_data_options(parser)
    parser.set_defaults(handler=main)


def _reader_options(args: argparse.Namespace) -> str:
    """The reader's own ``--world``/``--tasks``, as they would be typed again."""
    worlds = "".join(f" --world {w}" for w in args.worlds or [])
    return worlds + (f" --tasks {args.task_folder}" if args.task_folder else "")


def main(args: argparse.Namespace) -> int:
    """Build and print the report."""
    if getattr(args, "fresh", None) is not None:
        return drift_command(args)
    reading = read_run(args.run, run_reader(args))
    if args.csv and not _write_csv(args, reading.report):
        return 2
    if write_run_visuals(args, reading):  # --html / --png
        return 2
    use = run_heldout_use(args.split, args.run, args.split_key) if args.split else None
    # every figure of the text (advisories' reach included) is in the JSON as well
    if args.json:
        extra = {"heldout": use and msgspec.to_builtins(use)}
        sys.stdout.write(reading_json(reading, _reader_options(args), extra) + "\n")
    else:
        sys.stdout.write(render_reading(reading, _reader_options(args)))
        sys.stdout.write(render_heldout_use(use) if use else "")
    return 0


def _write_csv(args: argparse.Namespace, report: RunReport) -> bool:
    """``--csv``: one row per counted attempt; False (after saying why) when it fails."""
    try:
        write_results(args.csv, report_rows(report, args.config or args.run.resolve().name))
    except (OSError, ValueError) as exc:
        print(f"error: --csv {args.csv}: {exc}", file=sys.stderr)
        return False
    return True
