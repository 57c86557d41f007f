"""``report``: a run's result vector with explicit denominators."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from harness_world.analysis.diagnosis import AdviceObserver
from harness_world.analysis.report import RunReport, report_from_scan
from harness_world.analysis.results_csv import write_results
from harness_world.analysis.trusted import (
    TrustedObserver,
    TrustedReport,
    render_trusted,
    trusted_report,
)
from harness_world.cli._output import render_table
from harness_world.cli._selection import (
    UsageError,
    add_verifier_world_options,
    add_world_data_options,
    verifier_worlds,
    world_data,
)
from harness_world.cli._visual import add_html_option, add_png_option, write_run_visuals
from harness_world.cli.drift import add_drift_option, drift_command
from harness_world.engine.world import WorldError
from harness_world.grading.task import Task, TaskError
from harness_world.grading.verifier import Observer, VerifiedRecord
from harness_world.grading.worlds import WorldData
from harness_world.running.rundir import scan_run
from harness_world.stats import ProportionInterval, RunRow

__all__ = ["register"]


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
        help="also write task_id,run_index,config,passed rows (config = --config)",
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


_COUNT_LABELS = {"retried": "re-run attempts"}
"""Column headers that say more than the field's name."""


def _fmt(value: float | None, digits: int = 3) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


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
    _print(report)
    if trusted is not None:
        print()
        print(render_trusted(trusted))
    # advisories' reach and failure attribution after the figures (cli/diagnose.py)
    from harness_world.cli.diagnose import report_section

    print("\n".join(report_section(report, advice_observer.advised, _reader_options(args))))
    return 0


def _reader_tasks(
    args: argparse.Namespace,
) -> tuple[dict[str, Path], dict[str, Task], WorldData | None]:
    """The reader's world folders, its tasks, and the outside data ``--world-data`` names.

    Raises:
        UsageError: for a world or task folder that does not load, or refused data.
    """
    try:
        choice, tasks = verifier_worlds(args)
    except (WorldError, TaskError) as exc:
        raise UsageError(str(exc)) from None
    data = world_data(args, [str(w) for w in args.worlds or []])
    if data is not None:
        tasks = {t.id: t for t in data.tasks}
    return choice.folders(), tasks, data


def _write_csv(args: argparse.Namespace, report: RunReport) -> bool:
    """``--csv``: one row per counted attempt; False (after saying why) when it fails."""
    config = args.config or args.run.resolve().name
    # family too: without it, compare on the CSV would silently lose the clustering.
    rows = [
        RunRow(
            task_id=a.task_id,
            run_index=a.sample,
            config=config,
            passed=a.passed,
            family=report.task_families.get(a.task_id, ""),
        )
        for a in report.attempts
        if a.counted and a.passed is not None
    ]
    try:
        write_results(args.csv, rows)
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


def _interval(interval: ProportionInterval | None) -> str:
    if interval is None:
        return "undefined"
    return f"{interval.estimate:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def _print_counts(report: RunReport) -> None:
    inv = report.counts
    print(f"run {report.out}  revision {report.revision[:16]}  agent {report.agent}")
    keys = ["scheduled", "executed", "valid", "invalid", "retried", "missing"]
    # `retried` counts attempts executed again, not model requests (see _print_requests)
    headers = [_COUNT_LABELS.get(k, k) for k in keys]
    print(render_table(headers, [[str(getattr(inv, k)) for k in keys]]))
    print(
        f"\npassed {inv.passed} of {inv.valid} valid attempts: pass rate "
        f"{_interval(report.pass_rate)} (Wilson 95 %, per attempt: no task luck); "
        f"completed but failed: {report.completed_but_failed}; "
        f"completed first try: {report.first_try_completed}, "
        f"eventually: {report.eventually_completed}"
    )
    suite = report.suite_mean
    if suite is not None:
        print(
            f"suite mean pass rate over {suite.tasks} tasks: {suite.mean:.3f} "
            f"[{suite.low:.3f}, {suite.high:.3f}] ({suite.confidence * 100:g} %, t({suite.df:.1f}) "
            f"over tasks, CR2 over {suite.clusters} "
            + ("families" if suite.clusters < suite.tasks else "tasks")
            + "): what another draw of tasks like these would give"
        )
    layer = report.harness
    if layer.graded:
        failures = ", ".join(f"{name} ({n})" for name, n in layer.failed.items())
        print(
            f"harness layer: {layer.clean} of {layer.graded} graded attempts clean"
            + (f"; failed: {failures}" if failures else "")
            + " (beside the pass rate, not in it)"
        )
    open_prose = [s for s in report.attempts if s.counted and s.not_reviewed]
    if open_prose:
        criteria = sum(len(s.not_reviewed) for s in open_prose)
        print(
            f"not reviewed: {criteria} prose criteria on {len(open_prose)} valid attempts stand "
            "open until a person reviews them (grades count automated criteria only)"
        )


def _print_pass_k(report: RunReport) -> None:
    if not report.pass_k:
        return
    rows = [
        [str(p.k), str(p.tasks), f"{p.pass_hat_k:.3f}", f"{p.pass_at_k:.3f}", str(len(p.excluded))]
        for p in report.pass_k
    ]
    print()
    print(render_table(["k", "tasks", "pass^k", "pass@k", "excluded (n < k)"], rows))
    for line in pass_k_warnings(report):
        print(f"Warning: {line}")


def pass_k_warnings(report: RunReport) -> list[str]:
    """Say which k average fewer tasks than k = 1 does, and which k had no task at all."""
    if not report.pass_k:
        return []
    all_tasks = report.pass_k[0].tasks + len(report.pass_k[0].excluded)
    out = [
        f"pass^{p.k} and pass@{p.k} average {p.tasks} of {all_tasks} tasks: "
        f"{len(p.excluded)} have fewer than {p.k} valid runs "
        f"({', '.join(e.task_id for e in p.excluded[:5])}"
        + (", ..." if len(p.excluded) > 5 else "")
        + "), so the figures of different k describe different task sets"
        for p in report.pass_k
        if p.excluded
    ]
    samples = report.pass_k[-1].k
    if out and len(out) > 1:
        first = next(p for p in report.pass_k if p.excluded)
        out = [
            out[0],
            f"(and every k above {first.k}: see the excluded column)",
        ]
    return out + (
        []
        if samples >= _samples(report)
        else [f"no task has {samples + 1} or more valid runs: pass^k stops at k = {samples}"]
    )


def _samples(report: RunReport) -> int:
    return max((a.sample for a in report.attempts), default=-1) + 1


def _print_consumption(report: RunReport) -> None:
    per = report.per_attempt
    rows = [
        [
            "valid attempt",
            _fmt(per.tool_calls, 1),
            _fmt(per.requests, 1),
            _fmt(per.tokens, 0),
            _fmt(per.cost, 4),
        ],
        [
            "passed attempt",
            _fmt(per.tool_calls_per_pass, 1),
            _fmt(per.requests_per_pass, 1),
            _fmt(per.tokens_per_pass, 0),
            _fmt(per.cost_per_pass, 4),
        ],
    ]
    headers = ["per", "tool calls", "requests", "tokens", "cost $"]
    if not isinstance(per.user_turns, msgspec.UnsetType):  # runs with a simulated user
        headers.append("user turns")
        rows[0].append(_fmt(per.user_turns, 1))
        rows[1].append("-")
    print()
    print(render_table(headers, rows))
    print(
        f"\nlatency (context): p50 {_fmt(report.latency_p50_s)} s, "
        f"p95 {_fmt(report.latency_p95_s)} s"
    )


def _print_requests(report: RunReport) -> None:
    """Retried and lost model requests, when the run made any model request at all."""
    figures = report.requests
    if not (figures.retried or figures.lost or any(s.requests for s in report.attempts)):
        return
    line = (
        f"model requests within attempts: {figures.retried} retried, {figures.lost} lost "
        f"(in {figures.attempts} attempt{'' if figures.attempts == 1 else 's'}, failed tries "
        "included)"
    )
    if figures.lost:
        line += (
            f"; lost requests' prompt tokens ≈ {figures.lost_input_tokens_estimate} "
            "(estimated, not in the token figures; their output tokens are unknown)"
        )
    print(line)


def _print_families_and_failures(report: RunReport) -> None:
    rows = [
        [f.family, str(f.tasks), str(f.valid), str(f.passed), _interval(f.interval)]
        for f in report.families
    ]
    print()
    print(render_table(["family", "tasks", "valid", "passed", "pass rate [Wilson 95 %]"], rows))
    if not report.failed_tasks:
        return
    rows = [
        [
            t.task_id,
            f"{t.failed}/{t.valid}",
            ", ".join(f"{c} ×{n}" for c, n in t.criteria.items()),
            t.reason,
        ]
        for t in report.failed_tasks
    ]
    print()
    print(render_table(["failed task", "failed", "criteria", "first reason"], rows, 80))


def _print(report: RunReport) -> None:
    _print_counts(report)
    _print_pass_k(report)
    _print_consumption(report)
    _print_requests(report)
    _print_families_and_failures(report)
