"""``compare``: decide whether a score change is bigger than the eval's own noise.

Parses a results CSV or two run directories and the gate's options, makes one call to
`harness_world.stats.assess` (the method is the parser's description and docs/stats.md), and
renders `harness_world.analysis.compare_report`: the pairing of run directories, the report
``--json`` prints and its text. Exit codes: 0 gate passed or no gate; 1 gate failed; 2 bad
input (unreadable or malformed input, unknown config, fewer than 2 paired tasks, bad option)
with one ``error: ...`` line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NamedTuple

from harness_world.analysis import compare_looks as looks
from harness_world.analysis.compare_report import (
    RunPair,
    compare_json,
    compare_report,
    pair_runs,
    render_text,
    trusted_pair,
)
from harness_world.analysis.results_csv import (
    COLUMNS,
    OPTIONAL_COLUMNS,
    ResultsCsvError,
    read_results,
)
from harness_world.analysis.trusted import TrustedObserver, render_trusted_comparison
from harness_world.analysis.unverified import ALLOW_HELP, gate_labels
from harness_world.cli._selection import (
    UsageError,
    add_verifier_world_options,
    add_world_data_options,
    run_reader,
)
from harness_world.engine.world import WorldError
from harness_world.grading.task import TaskError
from harness_world.registry import registry
from harness_world.running.pending import COUNT_PENDING_HELP
from harness_world.running.reader import RunReader, RunReadError
from harness_world.stats import DEFAULT_ALPHA, DEFAULT_SEED, StatsInputError
from harness_world.stats.estimators import Comparison
from harness_world.stats.gate import ComparisonOutcome, GateResult, assess, gate_options

__all__ = ["register"]

_MIXED = "give either one results CSV or two run directories, not a mix"


class ComparedRuns(NamedTuple):
    """What ``compare`` hands its extensions' options once it has decided (`after`).

    Attributes:
        comparison: The comparison.
        outcome: Its outcome, as every output renders it.
        runs: The run directories compared (none for a results CSV).
        notes: The notes printed above the decision.
        reader: How the runs were read (tasks, worlds, trusted key).
    """

    comparison: Comparison
    outcome: ComparisonOutcome
    runs: list[Path]
    notes: list[str]
    reader: RunReader


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``compare`` command to the top-level parser."""
    parser = subparsers.add_parser(
        "compare",
        help="decide whether a candidate changed the score beyond the eval's noise",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Compare a candidate configuration with a baseline over the same tasks.\n\n"
            "Every task with runs on both sides is paired; tasks short of runs or absent on\n"
            "one side are listed as missing data and fail any gate unless --allow-missing\n"
            "(a worst case, candidate's missing runs as failures and baseline's as passes,\n"
            "is printed beside the observed result).\n\n"
            "The decision is a one-sided test of the mean per-task change at --alpha (default\n"
            "0.025 per direction): a wild cluster bootstrap-t (Webb weights) over task families\n"
            "(every task its own family when the data name none; --no-clusters to ignore\n"
            "them), studentized with the CR2 standard error and corrected for skewness. With\n"
            "few or dominant families the report warns, with the effective number of them.\n"
            "When the spread of the differences is degenerate (below what the tasks'\n"
            "run-to-run noise alone would give), a binomial variance floor replaces it.\n\n"
            "Per-task changes are listed only when significant after a Holm correction;\n"
            "solid <-> broken flips are listed by name for reading."
        ),
        epilog=("exit codes: 0 gate passed (or --gate none), 1 gate failed, 2 bad input or usage"),
    )
    _add_inputs(parser)
    _add_gate_options(parser)
    _add_data_options(parser)
    looks.add_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    for options in registry().command_options("compare"):  # visuals, crossed runs
        options.add_arguments(parser)
    parser.set_defaults(handler=run)


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    """The inputs: a results CSV or two run directories, and the configs to compare."""
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="PATH",
        help=(
            f"a results CSV with columns {','.join(COLUMNS)} and optionally "
            f"{','.join(OPTIONAL_COLUMNS)}; or two run directories BASELINE CANDIDATE (valid "
            "records only; names default to the folders)"
        ),
    )
    parser.add_argument("--baseline", metavar="CONFIG", help="baseline config name in the CSV")
    parser.add_argument("--candidate", metavar="CONFIG", action="append", help=looks.CANDIDATES)


def _add_gate_options(parser: argparse.ArgumentParser) -> None:
    """The gate and its level: --gate, --margin, --alpha and --z."""
    parser.add_argument(
        "--gate",
        choices=("improved", "no-regression", "non-inferior", "none"),
        default="none",
        help=(
            "improved: exit 1 unless the one-sided lower bound of the change is above 0 and, "
            "below 30 tasks, the gain reaches the hidden-class floor (20.3 points on 20); no-"
            "regression: exit 1 if the upper bound is below 0; non-inferior: exit 1 unless the "
            "drop's upper bound is below --margin; none: exit 0. Every gate is one-sided at --alpha"
        ),
    )
    parser.add_argument(
        "--margin",
        type=float,
        default=None,
        metavar="POINTS",
        help="non-inferiority margin in points (required with --gate non-inferior)",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=None,
        metavar="A",
        help=f"one-sided level of each gate and bound (default {DEFAULT_ALPHA})",
    )
    parser.add_argument(
        "--z",
        type=float,
        default=None,
        metavar="Z",
        help=(
            "older spelling of the level: --z Z means --alpha 1-Phi(Z) (1.96 -> 0.025). The "
            "multiplier is always the t quantile at that level"
        ),
    )


def _add_data_options(parser: argparse.ArgumentParser) -> None:
    """How runs count and what else to print: missing data, families and planning."""
    parser.add_argument(
        "--min-runs",
        type=int,
        default=None,
        metavar="N",
        help=(
            "runs expected per task under each config (default 5 for a CSV, the scheduled "
            "samples for run directories); a task with fewer on either side is missing data"
        ),
    )
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help=(
            "decide on the observed runs even when some are missing (they are still listed); "
            "this assumes the losses are uninformative, unrelated to whether a run would pass: "
            "the worst case and the tipping point show what that assumption carries"
        ),
    )
    parser.add_argument("--allow-unverified", action="store_true", help=ALLOW_HELP)
    parser.add_argument("--count-pending", action="store_true", help=COUNT_PENDING_HELP)
    parser.add_argument(
        "--no-clusters",
        action="store_true",
        help="ignore task families: treat tasks as independent",
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="also print tasks x runs needed for 80%% power at --mde, and the current power",
    )
    parser.add_argument(
        "--mde",
        type=float,
        default=None,
        metavar="POINTS",
        help="the smallest change worth detecting, in points (with --plan)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        metavar="N",
        help="seed of the bootstrap's random weight patterns (default %(default)s); drawn "
        "only when the families have more patterns than the bootstrap uses, and named in the "
        "decision then",
    )
    add_verifier_world_options(parser)
    add_world_data_options(parser)


def _fail(message: str) -> int:
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _check_csv_options(args: argparse.Namespace) -> Path:
    paths = [Path(p) for p in args.inputs]
    if any(p.is_dir() for p in paths):
        raise UsageError(_MIXED)
    if len(paths) != 1:
        raise UsageError(
            f"expected one results CSV (or two run directories), got {len(paths)} paths"
        )
    if not args.baseline or not args.candidate:
        raise UsageError("--baseline and --candidate are required with a results CSV")
    if args.count_pending:
        raise UsageError("--count-pending reads run directories: a CSV's rows are as written")
    return paths[0]


def _run_pair(
    args: argparse.Namespace, watch: tuple[TrustedObserver, TrustedObserver], reader: RunReader
) -> RunPair:
    """The two run directories given, as `pair_runs` reads them with the reader's worlds."""
    paths = [Path(p) for p in args.inputs]
    if len(paths) != 2 or not all(p.is_dir() for p in paths):
        raise UsageError("give two run directories BASELINE CANDIDATE, or one results CSV")
    names = (args.baseline or paths[0].resolve().name, args.candidate or paths[1].resolve().name)
    try:
        return pair_runs(paths, names, watch, reader, count_pending=args.count_pending)
    except (RunReadError, WorldError) as exc:
        raise UsageError(str(exc)) from None


def _assess(
    args: argparse.Namespace, watch: tuple[TrustedObserver, TrustedObserver], reader: RunReader
) -> tuple[Comparison, GateResult, RunPair | None, list[str]]:
    """The comparison, the gate's decision, the run directories read (CSV: none), notes."""
    options = gate_options(
        args.gate, alpha=args.alpha, z=args.z, margin=args.margin, min_runs=args.min_runs,
        plan=args.plan, mde=args.mde,
    )  # fmt: skip
    pair: RunPair | None = None
    if any(Path(p).is_dir() for p in args.inputs):
        pair = _run_pair(args, watch, reader)
        rows, baseline, candidate = pair.rows, pair.baseline, pair.candidate
        scheduled, expected = pair.scheduled, pair.samples
    else:
        rows = read_results(_check_csv_options(args))
        baseline, candidate, scheduled, expected = args.baseline, args.candidate, [], 5
    look = looks.planned_look(args.look, args.of, options.alpha)
    comparison, result = assess(
        rows, baseline, candidate, gate=args.gate, margin=options.margin,
        alpha=options.alpha if look is None else look.nominal_alpha,
        min_runs=args.min_runs if args.min_runs is not None else expected, scheduled=scheduled,
        allow_missing=args.allow_missing, use_clusters=not args.no_clusters, mde=options.mde,
        seed=args.seed,
    )  # fmt: skip
    return comparison, result, pair, looks.notes(args.decision_log, comparison, result, look)


def run(args: argparse.Namespace) -> int:
    """Handle ``compare``; returns the exit code."""
    extensions = registry().command_options("compare")
    several, args.candidate = args.candidate or [], (args.candidate or [None])[0]
    if len(several) > 1 or len(args.inputs) > 2:  # Holm across the candidates
        text, passed = looks.run_several(args, several, run_reader(args))
        sys.stdout.write(text)
        return 0 if passed else 1
    for options in extensions:  # one crossed run is compared per model profile
        code = options.take_over(args, None)
        if code is not None:
            return code
    # The trusted pairing is computed while the runs' own scans replay each record.
    try:
        reader = run_reader(args)
    except (WorldError, TaskError) as exc:
        return _fail(str(exc))
    index = reader.verifier.tasks or {}
    watch = (TrustedObserver(index), TrustedObserver(index))
    try:
        labels = gate_labels(args.inputs, gate=args.gate, allowed=args.allow_unverified)
        comparison, result, pair, look_notes = _assess(args, watch, reader)
    except (UsageError, StatsInputError) as exc:
        return _fail(str(exc))
    except ResultsCsvError as exc:
        return _fail(f"{args.inputs[0]}: {exc}")
    except OSError as exc:
        return _fail(
            f"cannot read or write {exc.filename or args.inputs[0]}: {exc.strerror or exc}"
        )
    # One outcome, computed once: the text, --json and --html all render it.
    notes = [*labels, *(pair.notes if pair is not None else []), *look_notes]
    report = compare_report(comparison, result, notes, seed=args.seed, pair=pair)
    runs = [Path(p) for p in args.inputs] if pair is not None else []  # --html
    compared = ComparedRuns(comparison, report.outcome, runs, notes, reader)
    for options in extensions:
        failed = options.after(args, compared)
        if failed:
            return failed
    trusted = trusted_pair(pair, index, watch)
    if args.json:
        sys.stdout.write(compare_json(report, trusted))
    else:
        sys.stdout.write("".join(note + "\n" for note in notes))
        sys.stdout.write(render_text(comparison, result, report.outcome))
        if trusted is not None:
            sys.stdout.write(render_trusted_comparison(trusted))
    return 0 if result.passed else 1
