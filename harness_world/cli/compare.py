"""``compare``: decide whether a score change is bigger than the eval's own noise.

Reads a results CSV (``task_id,run_index,config,passed[,family]``) or two run directories,
pairs every task that has runs under both configurations, and prints the mean change, a
one-sided test of it at ``--alpha`` (default 2.5% per direction: a wild cluster bootstrap-t
with Webb weights over task families, CR2-studentized and skew-corrected, a binomial variance
floor when the spread is degenerate), the tasks short of runs, a worst case and a tipping
point, the per-task changes that survive a Holm correction and the tasks that flipped between
solid and broken.

``--gate`` turns the decision into the exit code: ``improved`` needs the lower bound of the
change above 0; ``no-regression`` fails on a significant drop; ``non-inferior --margin X``
needs the upper bound of the drop below X points; ``none`` (the default) always passes. Any
gate fails while runs are missing unless ``--allow-missing``.

Exit codes: 0 gate passed or no gate; 1 gate failed; 2 bad input (unreadable or malformed
input, unknown config, fewer than 2 paired tasks, bad option) with one ``error: ...`` line on
stderr.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import msgspec

from harness_world.analysis.results_csv import ResultsCsvError, read_results
from harness_world.analysis.trusted import (
    TrustedComparison,
    TrustedObserver,
    compare_trusted,
    render_trusted_comparison,
)
from harness_world.cli._selection import (
    UsageError,
    add_verifier_world_options,
    add_world_data_options,
    verifier_worlds,
    world_data,
)
from harness_world.cli._visual import add_html_option, add_png_option, write_compare_visuals
from harness_world.cli.crossed import crossed_aware
from harness_world.engine.world import WorldError
from harness_world.grading.task import Task, TaskError
from harness_world.stats import (
    DEFAULT_ALPHA,
    SMALL_SAMPLE_TASKS,
    Comparison,
    RunRow,
    StatsInputError,
    TaskTally,
)
from harness_world.stats.gate import Decision, GateName, GateResult, Plan, assess
from harness_world.stats.outcome import ComparisonOutcome, outcome_of

__all__ = ["CompareReport", "gate_passed", "register", "render_text"]

Gate = GateName

_MIXED = "give either one results CSV or two run directories, not a mix"


class CompareReport(msgspec.Struct, frozen=True, kw_only=True):
    """What ``compare --json`` prints: the comparison, the decision and the gate outcome.

    Attributes:
        gate: The gate applied (``none`` when there was no gate).
        gate_passed: Whether the gate passed (always true for ``none``).
        alpha: One-sided level of every bound and gate.
        sidedness: ``one-sided`` (each gate tests one direction at ``alpha``).
        warnings: Human-readable warnings and notes (few tasks, few families, revisions of run
            directories).
        outcome: The verdict, band, flips and Holm list, exactly as the text and the HTML
            show them.
        comparison: The descriptive comparison (its band is the plain paired t band; the
            verdict is the outcome's, from the gate's decision).
        decision: The gate's decision: missing tasks, observed and worst-case tests,
            significant per-task changes, flips, plan.

    """

    gate: Gate
    gate_passed: bool
    alpha: float
    sidedness: str
    warnings: list[str]
    outcome: ComparisonOutcome
    comparison: Comparison
    decision: GateResult


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
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_html_option(parser)  # HTML report of the comparison, plots as PNG
    add_png_option(parser)
    parser.set_defaults(handler=run)


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    """The inputs: a results CSV or two run directories, and the configs to compare."""
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="PATH",
        help=(
            "a results CSV with columns task_id,run_index,config,passed and optionally family; "
            "or two run directories BASELINE CANDIDATE (valid records only; names default to "
            "the folders)"
        ),
    )
    parser.add_argument("--baseline", metavar="CONFIG", help="baseline config name in the CSV")
    parser.add_argument("--candidate", metavar="CONFIG", help="candidate config name in the CSV")


def _add_gate_options(parser: argparse.ArgumentParser) -> None:
    """The gate and its level: --gate, --margin, --alpha and --z."""
    parser.add_argument(
        "--gate",
        choices=("improved", "no-regression", "non-inferior", "none"),
        default="none",
        help=(
            "improved: exit 1 unless the one-sided lower bound of the change is above 0; "
            "no-regression: exit 1 if the upper bound is below 0 (a significant drop); "
            "non-inferior: exit 1 unless the upper bound of the drop is below --margin; "
            "none (default): exit 0 on valid input. Every gate is one-sided at --alpha"
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
    add_verifier_world_options(parser)
    add_world_data_options(parser)


def gate_passed(verdict: str, gate: Gate) -> bool:
    """Whether a band verdict (``above``/``below``/``inside``) satisfies a gate.

    Kept for library callers of the descriptive band; ``compare`` itself decides with
    `harness_world.stats.assess`. ``non-inferior`` needs a margin, so it cannot be read off a
    verdict and always returns False here.
    """
    if gate == "improved":
        return verdict == "above"
    if gate == "no-regression":
        return verdict != "below"
    return gate != "non-inferior"


def _fail(message: str) -> int:
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _sources(args: argparse.Namespace) -> dict[str, Any]:
    """The reader's worlds and tasks for `run_rows` (none given: the built-in ones).

    With ``--world-data``, the one ``--world`` reads its outside data folder: the runs replay
    on its start state and are graded by its tasks.
    """
    data = world_data(args, [str(w) for w in getattr(args, "worlds", None) or []])
    if data is not None:
        return {"tasks": data.tasks, "worlds": {data.world.name: data.world}}
    choice, own = verifier_worlds(args)
    if not choice.locations and getattr(args, "task_folder", None) is None:
        return {}
    return {"tasks": list(own.values()), "folders": choice.folders()}


def _run_directories(
    args: argparse.Namespace, watch: tuple[TrustedObserver, TrustedObserver]
) -> tuple[list[RunRow], str, str, list[str], list[str], int]:
    """Rows of two run directories, their names, notes, scheduled tasks and samples.

    ``watch`` observes each run's scan (baseline, candidate) for the trusted pairing.
    """
    from harness_world.analysis.report import run_rows
    from harness_world.running.revision import diff_revisions

    paths = [Path(p) for p in args.inputs]
    if len(paths) != 2 or not all(p.is_dir() for p in paths):
        raise UsageError("give two run directories BASELINE CANDIDATE, or one results CSV")
    names = [args.baseline or paths[0].resolve().name, args.candidate or paths[1].resolve().name]
    if names[0] == names[1]:
        names = ["baseline", "candidate"]
    try:
        sources = _sources(args)
        base_rows, base = run_rows(paths[0], names[0], observe=watch[0], **sources)
        cand_rows, cand = run_rows(paths[1], names[1], observe=watch[1], **sources)
    except (FileNotFoundError, ValueError, WorldError) as exc:
        raise UsageError(str(exc)) from None
    changed = diff_revisions(base.revision, cand.revision)
    notes = [
        f"baseline revision {base.revision.id[:16]} ({paths[0]})",
        f"candidate revision {cand.revision.id[:16]} ({paths[1]})",
        f"components that differ: {', '.join(changed) or 'none'}",
    ]
    factors = [c for c in changed if not c.startswith("task:") and c not in ("samples", "seed")]
    if len(factors) > 1:
        notes.append(
            f"WARNING: {len(factors)} factors changed at once ({', '.join(factors)}): the "
            "difference cannot be attributed to any one of them"
        )
    scheduled = sorted(set(base.tasks) | set(cand.tasks))
    return (
        base_rows + cand_rows,
        names[0],
        names[1],
        notes,
        scheduled,
        max(base.samples, cand.samples),
    )


def _alpha(args: argparse.Namespace) -> float:
    from scipy import special

    if args.alpha is not None and args.z is not None:
        raise UsageError("give --alpha or --z, not both")
    if args.z is not None:
        if not (math.isfinite(args.z) and args.z > 0):
            raise UsageError(f"--z must be a positive number, got {args.z}")
        return float(special.ndtr(-args.z))
    if args.alpha is None:
        return DEFAULT_ALPHA
    if not (math.isfinite(args.alpha) and 0 < args.alpha < 0.5):
        raise UsageError(f"--alpha must be strictly between 0 and 0.5, got {args.alpha}")
    return float(args.alpha)


def _check_common(args: argparse.Namespace) -> None:
    if args.min_runs is not None and args.min_runs < 1:
        raise UsageError(f"--min-runs must be at least 1, got {args.min_runs}")
    if args.gate == "non-inferior":
        if args.margin is None:
            raise UsageError("--gate non-inferior needs --margin POINTS")
        if not (math.isfinite(args.margin) and 0 < args.margin <= 100):
            raise UsageError(f"--margin must be in (0, 100] points, got {args.margin}")
    elif args.margin is not None:
        raise UsageError("--margin only applies to --gate non-inferior")
    if args.plan and args.mde is None:
        raise UsageError("--plan needs --mde POINTS (the smallest change worth detecting)")
    if args.mde is not None and not args.plan:
        raise UsageError("--mde only applies with --plan")
    if args.mde is not None and not (math.isfinite(args.mde) and 0 < args.mde <= 100):
        raise UsageError(f"--mde must be in (0, 100] points, got {args.mde}")


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
    return paths[0]


@crossed_aware  # one crossed run is compared per model profile
def run(args: argparse.Namespace) -> int:
    """Handle ``compare``; returns the exit code."""
    notes: list[str] = []
    scheduled: list[str] = []
    # The trusted pairing is computed while the runs' own scans replay each record.
    try:
        index = verifier_worlds(args)[1]
    except (WorldError, TaskError) as exc:
        return _fail(str(exc))
    watch = (TrustedObserver(index), TrustedObserver(index))
    try:
        _check_common(args)
        alpha = _alpha(args)
        if any(Path(p).is_dir() for p in args.inputs):
            rows, baseline, candidate, notes, scheduled, samples = _run_directories(args, watch)
            min_runs = args.min_runs if args.min_runs is not None else samples
        else:
            path = _check_csv_options(args)
            rows = read_results(path)
            baseline, candidate = args.baseline, args.candidate
            min_runs = args.min_runs if args.min_runs is not None else 5
        comparison, result = assess(
            rows,
            baseline,
            candidate,
            gate=args.gate,
            alpha=alpha,
            margin=None if args.margin is None else args.margin / 100,
            min_runs=min_runs,
            scheduled=scheduled,
            allow_missing=args.allow_missing,
            use_clusters=not args.no_clusters,
            mde=None if args.mde is None else args.mde / 100,
        )
    except UsageError as exc:
        return _fail(str(exc))
    except ResultsCsvError as exc:
        return _fail(f"{args.inputs[0]}: {exc}")
    except StatsInputError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot read {args.inputs[0]}: {exc.strerror or exc}")

    # One outcome, computed once: the text, --json and --html all render it.
    outcome = outcome_of(comparison, result, _warnings(comparison))
    runs = [Path(p) for p in args.inputs] if notes else []  # --html
    if write_compare_visuals(args, comparison, outcome, runs, notes):
        return 2
    _print(args, comparison, result, outcome, notes, _trusted(args.inputs, index, watch))
    return 0 if result.passed else 1


def _print(
    args: argparse.Namespace,
    comparison: Comparison,
    result: GateResult,
    outcome: ComparisonOutcome,
    notes: list[str],
    trusted: TrustedComparison | None,
) -> None:
    """The comparison as one JSON object or as text, with the trusted vectors when present."""
    if args.json:
        report = CompareReport(
            gate=result.gate,
            gate_passed=result.passed,
            alpha=result.alpha,
            sidedness=result.sidedness,
            warnings=[*outcome.warnings, *notes],
            outcome=outcome,
            comparison=comparison,
            decision=result,
        )
        data = msgspec.to_builtins(report)
        if trusted is not None:
            data["trusted"] = msgspec.to_builtins(trusted)
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
        return
    for note in notes:
        sys.stdout.write(note + "\n")
    sys.stdout.write(render_text(comparison, result, outcome))
    if trusted is not None:
        sys.stdout.write(render_trusted_comparison(trusted))


def _trusted(
    inputs: list[str],
    index: dict[str, Task],
    watched: tuple[TrustedObserver, TrustedObserver],
) -> TrustedComparison | None:
    """Paired trusted-completion vectors of two run directories (None otherwise).

    Built from what the observers saw while the runs were scanned.
    """
    paths = [Path(p) for p in inputs]
    if len(paths) != 2 or not all(p.is_dir() for p in paths):
        return None
    try:
        return compare_trusted(paths[0], paths[1], tasks=index, observed=watched)
    except (OSError, ValueError):
        return None


def _warnings(comparison: Comparison) -> list[str]:
    n = len(comparison.paired)
    if n >= SMALL_SAMPLE_TASKS:
        return []
    return [
        f"only {n} paired tasks (fewer than 30): the bounds are wide and few changes will "
        "clear them; see --plan --mde for what it would take"
    ]


def _pct(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"


def _points(fraction: float) -> str:
    return f"{abs(fraction) * 100:.1f}"


def _signed_points(fraction: float) -> str:
    text = f"{fraction * 100:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def _runs(tally: TaskTally) -> str:
    return f"{tally.passes}/{tally.runs}"


def _level(alpha: float) -> str:
    return f"{alpha * 100:g}%"


_VERDICTS = {
    "above": "ABOVE the band: the improvement is larger than this eval's noise",
    "below": "BELOW the band: the drop is larger than this eval's noise",
    "inside": "INSIDE the band: no detectable change (this eval cannot tell it from noise)",
}


def _band(o: ComparisonOutcome) -> str:
    low, high = -o.band_low, o.band_high
    if abs(low - high) < 5e-4:
        return f"+/-{_points(high)}"
    return f"-{_points(low)}/+{_points(high)}"


def _decision_lines(d: Decision, outcome: ComparisonOutcome, indent: str = "  ") -> list[str]:
    floor = "applied" if d.floor_applied else "not applied"
    spread = "CR2 over families" if d.clusters is not None else "paired"
    return [
        f"Decision: {outcome.method}, one-sided alpha {_level(d.alpha)} per direction",
        (
            f"{indent}Standard error {_points(d.standard_error)} points (from the spread, "
            f"{spread}: {_points(d.empirical_standard_error)}; binomial variance floor "
            f"{_points(d.floor_standard_error)}, {floor}); reference t({d.df:.1f}) = "
            f"{d.t_quantile:.3f}" + (f"; skewness {d.skewness:+.3f}" if d.skew_corrected else "")
        ),
        (
            f"{indent}One-sided {100 - d.alpha * 100:g}% bounds of the change: lower "
            f"{_signed_points(d.lower)}, upper {_signed_points(d.upper)} points "
            f"(p increase {d.p_increase:.4f}, p decrease {d.p_decrease:.4f})"
        ),
    ]


def render_text(
    comparison: Comparison, result: GateResult, outcome: ComparisonOutcome | None = None
) -> str:
    """Render the human-readable report ``compare`` prints (ASCII only, ends with a newline).

    ``outcome`` is the one `outcome_of` computed (computed here when not given), so the text
    shows the same verdict, band and lists as ``--json`` and ``--html``.
    """
    if outcome is None:
        outcome = outcome_of(comparison, result, _warnings(comparison))
    lines = _summary_lines(comparison, result, outcome)
    lines += _missing_lines(result)
    if comparison.mcnemar is not None:
        m = comparison.mcnemar
        lines.append(
            f"McNemar mid-p (one run per task, two-sided): {m.p_value:.4f} "
            f"(baseline-only passes {m.baseline_only}, "
            f"candidate-only passes {m.candidate_only})"
        )
    lines += _task_change_lines(comparison, outcome)
    lines.extend(f"Warning: {w}" for w in outcome.warnings)
    if result.plan is not None:
        lines += _plan_lines(result.plan)
    if result.gate != "none":
        r = result
        what = f"{r.gate} --margin {r.margin * 100:g}" if r.margin is not None else r.gate
        lines.append(
            f"Gate {what}: {'PASSED' if r.passed else 'FAILED'} "
            f"(one-sided {_level(r.alpha)}; {r.reason})"
        )
    return "\n".join(lines) + "\n"


def _summary_lines(c: Comparison, r: GateResult, o: ComparisonOutcome) -> list[str]:
    """Paired tasks, each side's mean, the change, its noise band, the decision and verdict."""
    d = r.observed
    names = max(len(c.baseline), len(c.candidate))
    return [
        f"Paired tasks: {len(c.paired)} (every task with at least one run on each side)",
        (
            f"Baseline  {c.baseline:<{names}}  mean pass rate {_pct(c.baseline_mean):>6}  "
            f"(solid {c.baseline_classes.solid}, flaky {c.baseline_classes.flaky}, "
            f"broken {c.baseline_classes.broken})"
        ),
        (
            f"Candidate {c.candidate:<{names}}  mean pass rate {_pct(c.candidate_mean):>6}  "
            f"(solid {c.candidate_classes.solid}, flaky {c.candidate_classes.flaky}, "
            f"broken {c.candidate_classes.broken})"
        ),
        f"Change: {_signed_points(o.change)} points",
        (
            f"Noise band: {_band(o)} points (one-sided {_level(o.alpha)} each side, the "
            f"decision's; plain paired t band +/-{_points(c.band.half_width)}, sd of per-task "
            f"differences {_points(c.band.sd)} points)"
        ),
        *_decision_lines(d, o),
        f"  Families: {r.cluster_note}",
        f"Verdict: {_VERDICTS[o.verdict]}",
    ]


def _missing_lines(r: GateResult) -> list[str]:
    """The missing data, each task with its reason, and the worst case beside the observed."""
    if not r.missing:
        return ["Missing data: none (every task has its expected runs on both sides)"]
    lines = [
        f"Missing data: {len(r.missing)} task(s) short of runs or absent on one side"
        + (
            " (allowed by --allow-missing: decided on the observed runs)"
            if r.allow_missing
            else " (any gate fails unless --allow-missing)"
        )
    ]
    lines.extend(f"  {m.task_id}: {m.reason}" for m in r.missing)
    worst = r.worst_case
    assert worst is not None
    lines.append(
        "Worst case (candidate's missing runs counted as failures, baseline's as passes): "
        f"change {_signed_points(worst.mean)} points, one-sided bounds "
        f"{_signed_points(worst.lower)} .. {_signed_points(worst.upper)}"
        + (
            ""
            if r.gate == "none"
            else f"; gate {r.gate} would {'PASS' if r.worst_case_passed else 'FAIL'}"
        )
    )
    if r.gate != "none":
        lines.append(
            f"Tipping point: {r.tipping_point} of the {r.lost_runs} lost run(s), counted "
            "adversely (the candidate's as failures first, then the baseline's as passes), "
            "change the gate's outcome"
            if r.tipping_point is not None
            else f"Tipping point: none; even all {r.lost_runs} lost run(s) counted adversely "
            "leave the gate's outcome as it is"
        )
    return lines


def _task_change_lines(c: Comparison, o: ComparisonOutcome) -> list[str]:
    """Flipped tasks, then the per-task changes significant after the Holm correction."""
    lines = [f"Flipped tasks (solid <-> broken, listed for reading): {len(o.flips)}"]
    lines.extend(
        f"  {f.task_id}: {f.baseline_class} -> {f.candidate_class} "
        f"({_runs(f.baseline)} -> {_runs(f.candidate)})"
        for f in o.flips
    )
    changes = o.significant_changes
    lines.append(
        "Per-task changes significant after Holm correction (two-sided Fisher exact per task, "
        f"family-wise {_level(2 * o.alpha)}): {len(changes)}"
    )
    lines.extend(
        f"  {t.task_id}: {_runs(t.baseline)} -> {_runs(t.candidate)} "
        f"({'regression' if t.difference < 0 else 'improvement'}, adjusted p {t.p_adjusted:.4f})"
        for t in changes
    )
    rest = len(c.paired) - len(changes)
    lines.append(f"  the other {rest} task(s): within noise")
    return lines


def _plan_lines(p: Plan) -> list[str]:
    """The power now and the tasks needed at each number of runs (``--plan``)."""
    lines = [
        f"Plan: power to detect a change of {p.mde * 100:g} points at one-sided "
        f"{_level(p.alpha)} with {p.tasks_now} tasks x {p.runs_now} runs: "
        f"{p.power_now * 100:.0f}%",
        f"  with the gate's df {p.df:.1f} (effective clusters {p.effective_clusters:.1f}) "
        f"and design effect {p.design_effect:.2f}",
        f"  tasks needed for {p.power_target * 100:g}% power (between-task sd "
        f"{math.sqrt(p.between_task_variance) * 100:.1f} points; df and design effect grow "
        "with the suite as now):",
    ]
    lines.extend(
        f"  {row.runs:>3} run(s) per task per side: "
        + (
            f"{row.tasks} tasks ({row.total_runs} runs in all)"
            if row.tasks is not None
            else "not reachable with 10 million tasks"
        )
        for row in p.rows
    )
    return lines
