"""``report``: a run's result vector with explicit denominators."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from harness_world.analysis.diagnosis import AdviceObserver, report_section
from harness_world.analysis.report import RunReport, report_from_scan, report_rows
from harness_world.analysis.report_text import render_report
from harness_world.analysis.results_csv import COLUMNS, OPTIONAL_COLUMNS, write_results
from harness_world.analysis.trusted import (
    TrustedObserver,
    TrustedReport,
    render_trusted,
    trusted_report,
)
from harness_world.cli._selection import (
    add_verifier_world_options,
    add_world_data_options,
    verifier_worlds,
    world_data,
)
from harness_world.cli._visual import add_html_option, add_png_option, write_run_visuals
from harness_world.cli.drift import add_drift_option, drift_command
from harness_world.grading.task import Task
from harness_world.grading.verifier import Observer, VerifiedRecord
from harness_world.grading.worlds import WorldData
from harness_world.running.rundir import scan_run

__all__ = ["CSV_HELP", "register"]

CSV_HELP = (
    f"also write the results CSV that compare reads: columns {','.join(COLUMNS)} and, when a "
    f"task names one, {','.join(OPTIONAL_COLUMNS)}; one row per valid attempt, config = --config"
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
    # The trusted figures and the advisories (printed only as text) are computed while the
    # scan replays each record: one replay per record, no record held after its turn.
    folders, tasks, data = _reader_tasks(args)
    trusted_observer, advice_observer = TrustedObserver(tasks), AdviceObserver(tasks)

    def observe(path: Path, verified: VerifiedRecord) -> None:
        trusted_observer(path, verified)
        if not args.json:
            advice_observer(path, verified)

    try:
        report = _build(args, tasks, observe, folders, data)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.csv and not _write_csv(args, report):
        return 2
    # the trusted-completion vector, when tasks declare it
    trusted = _trusted(args.run, tasks, trusted_observer)
    if write_run_visuals(args, report):  # --html / --png
        return 2
    if args.json:
        out = msgspec.to_builtins(report)
        if trusted is not None:
            out["trusted"] = msgspec.to_builtins(trusted)
        print(msgspec.json.format(msgspec.json.encode(out), indent=1).decode())
        return 0
    sys.stdout.write(render_report(report))
    if trusted is not None:
        print()
        print(render_trusted(trusted))
    # advisories' reach and failure attribution after the figures
    print("\n".join(report_section(report, advice_observer.advised, _reader_options(args))))
    return 0


def _reader_tasks(
    args: argparse.Namespace,
) -> tuple[dict[str, Path], dict[str, Task], WorldData | None]:
    """The reader's world folders, its tasks, and the outside data ``--world-data`` names.

    Raises:
        UsageError: for a world or task folder that does not load, or refused data.
    """
    choice, tasks = verifier_worlds(args)
    data = world_data(args, [str(w) for w in args.worlds or []])
    if data is not None:
        tasks = {t.id: t for t in data.tasks}
    return choice.folders(), tasks, data


def _write_csv(args: argparse.Namespace, report: RunReport) -> bool:
    """``--csv``: one row per counted attempt; False (after saying why) when it fails."""
    try:
        write_results(args.csv, report_rows(report, args.config or args.run.resolve().name))
    except (OSError, ValueError) as exc:
        print(f"error: --csv {args.csv}: {exc}", file=sys.stderr)
        return False
    return True


def _build(
    args: argparse.Namespace,
    tasks: dict[str, Task],
    observe: Observer,
    folders: dict[str, Path],
    data: WorldData | None,
) -> RunReport:
    """The report; with ``--world-data``, replayed on the data's world, graded by its tasks.

    ``observe`` sees each record the scan verifies, so later sections replay nothing.
    """
    if data is None:
        scan = scan_run(args.run, tasks.values(), observe=observe, folders=folders)
    else:
        scan = scan_run(args.run, data.tasks, worlds={data.world.name: data.world}, observe=observe)
    return report_from_scan(scan)


def _trusted(run: Path, tasks: dict[str, Task], observer: TrustedObserver) -> TrustedReport | None:
    """The trusted-completion figures of a run (None when no task declares faults etc.)."""
    try:
        return trusted_report(run, tasks, summaries=observer.summaries)
    except (OSError, ValueError):
        return None
