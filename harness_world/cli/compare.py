"""``compare``: test whether a score change is bigger than the eval's own noise.

Reads a results CSV (``task_id,run_index,config,passed``), pairs the tasks both configurations
ran at least ``--min-runs`` times, and prints the paired noise band, its verdict, the tasks that
flipped between solid and broken, and the regressions by name. ``--gate`` turns the verdict into
the exit code: ``improved`` needs the change above the band, ``no-regression`` needs it not
below the band, ``none`` (the default) always passes.

Exit codes: 0 gate passed or no gate; 1 gate failed; 2 bad input (unreadable or malformed CSV,
unknown config, fewer than 2 paired tasks, bad option) with one ``error: ...`` line on stderr.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Literal

import msgspec

from harness_world.analysis.results_csv import ResultsCsvError, read_results
from harness_world.analysis.trusted import TrustedComparison, compare_trusted
from harness_world.cli._visual import add_html_option, add_png_option, write_compare_visuals
from harness_world.stats import (
    Comparison,
    Multiplier,
    RunRow,
    StatsInputError,
    TaskTally,
    compare_results,
)

__all__ = ["CompareReport", "gate_passed", "register", "render_text"]

Gate = Literal["improved", "no-regression", "none"]

_MIXED = "give either one results CSV or two run directories, not a mix"


class CompareReport(msgspec.Struct, frozen=True, kw_only=True):
    """What ``compare --json`` prints: the comparison plus the gate outcome.

    Attributes:
        gate: The gate applied (``none`` when there was no gate).
        gate_passed: Whether the gate passed (always true for ``none``).
        warnings: Human-readable warnings, e.g. fewer than 30 paired tasks.
        comparison: The full comparison.

    """

    gate: Gate
    gate_passed: bool
    warnings: list[str]
    comparison: Comparison


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``compare`` command to the top-level parser."""
    parser = subparsers.add_parser(
        "compare",
        help="compare two configurations against the paired noise band",
        description=(
            "Compare a candidate configuration with a baseline over the same tasks: mean "
            "per-task pass rates, the paired noise band m*sd/sqrt(n) of the per-task "
            "differences, a verdict (above / below / inside the band), solid / flaky / broken "
            "counts, flipped tasks and regressions by name. Tasks on one side only or under "
            "--min-runs are excluded and listed."
        ),
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="PATH",
        help=(
            "a results CSV with columns task_id,run_index,config,passed; or two run "
            "directories BASELINE CANDIDATE (valid records only; names default to the folders)"
        ),
    )
    parser.add_argument("--baseline", metavar="CONFIG", help="baseline config name in the CSV")
    parser.add_argument("--candidate", metavar="CONFIG", help="candidate config name in the CSV")
    parser.add_argument(
        "--gate",
        choices=("improved", "no-regression", "none"),
        default="none",
        help=(
            "improved: exit 1 unless the change is above the band; no-regression: exit 1 if it "
            "is below the band; none (default): always exit 0 on valid input"
        ),
    )
    parser.add_argument(
        "--min-runs",
        type=int,
        default=5,
        metavar="N",
        help="runs a task needs under each config to be compared (default 5)",
    )
    parser.add_argument(
        "--z",
        type=float,
        default=None,
        metavar="Z",
        help=(
            "normal multiplier for the band (default 1.96). Used as given with 30 or more "
            "paired tasks; below 30 it sets the confidence level and the band uses the Student "
            "t quantile with n-1 degrees of freedom at that level"
        ),
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_html_option(parser)  # issue 20: HTML report of the comparison, plots as PNG
    add_png_option(parser)
    parser.set_defaults(handler=run)


def gate_passed(verdict: str, gate: Gate) -> bool:
    """Whether a verdict (``above``/``below``/``inside``) satisfies a gate."""
    if gate == "improved":
        return verdict == "above"
    if gate == "no-regression":
        return verdict != "below"
    return True


class _InputError(Exception):
    pass


def _fail(message: str) -> int:
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _run_directories(args: argparse.Namespace) -> tuple[list[RunRow], str, str, list[str]]:
    """Rows of two run directories, named by folder, and notes on their revisions."""
    from harness_world.analysis.report import run_rows
    from harness_world.running.revision import diff_revisions

    paths = [Path(p) for p in args.inputs]
    if len(paths) != 2 or not all(p.is_dir() for p in paths):
        raise _InputError("give two run directories BASELINE CANDIDATE, or one results CSV")
    names = [args.baseline or paths[0].resolve().name, args.candidate or paths[1].resolve().name]
    if names[0] == names[1]:
        names = ["baseline", "candidate"]
    try:
        base_rows, base = run_rows(paths[0], names[0])
        cand_rows, cand = run_rows(paths[1], names[1])
    except (FileNotFoundError, ValueError) as exc:
        raise _InputError(str(exc)) from None
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
    return base_rows + cand_rows, names[0], names[1], notes


def _check_options(args: argparse.Namespace) -> Path:
    paths = [Path(p) for p in args.inputs]
    if any(p.is_dir() for p in paths):
        raise _InputError(_MIXED)
    if len(paths) != 1:
        raise _InputError(
            f"expected one results CSV (or two run directories), got {len(paths)} paths"
        )
    if not args.baseline or not args.candidate:
        raise _InputError("--baseline and --candidate are required with a results CSV")
    if args.min_runs < 1:
        raise _InputError(f"--min-runs must be at least 1, got {args.min_runs}")
    if args.z is not None and not (math.isfinite(args.z) and args.z > 0):
        raise _InputError(f"--z must be a positive number, got {args.z}")
    return paths[0]


def run(args: argparse.Namespace) -> int:
    """Handle ``compare``; returns the exit code."""
    notes: list[str] = []
    try:
        if any(Path(p).is_dir() for p in args.inputs):
            rows, baseline, candidate, notes = _run_directories(args)
        else:
            path = _check_options(args)
            rows = read_results(path)
            baseline, candidate = args.baseline, args.candidate
        comparison = compare_results(rows, baseline, candidate, min_runs=args.min_runs, z=args.z)
    except _InputError as exc:
        return _fail(str(exc))
    except ResultsCsvError as exc:
        return _fail(f"{args.inputs[0]}: {exc}")
    except StatsInputError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot read {args.inputs[0]}: {exc.strerror or exc}")

    gate: Gate = args.gate
    passed = gate_passed(comparison.band.verdict, gate)
    runs = [Path(p) for p in args.inputs] if notes else []  # issue 20: --html
    if write_compare_visuals(args, comparison, runs, [*notes, *_warnings(comparison)]):
        return 2
    if args.json:
        report = CompareReport(
            gate=gate,
            gate_passed=passed,
            warnings=[*notes, *_warnings(comparison)],
            comparison=comparison,
        )
        data = msgspec.to_builtins(report)
        trusted = _trusted(args.inputs)  # seed 000: paired trusted-completion vectors
        if trusted is not None:
            data["trusted"] = msgspec.to_builtins(trusted)
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    else:
        for note in notes:
            sys.stdout.write(note + "\n")
        sys.stdout.write(render_text(comparison, gate, passed))
    return 0 if passed else 1


def _trusted(inputs: list[str]) -> TrustedComparison | None:
    """Paired trusted-completion vectors of two run directories (None otherwise)."""
    paths = [Path(p) for p in inputs]
    if len(paths) != 2 or not all(p.is_dir() for p in paths):
        return None
    try:
        return compare_trusted(paths[0], paths[1])
    except (OSError, ValueError):
        return None


def _warnings(comparison: Comparison) -> list[str]:
    if not comparison.small_sample:
        return []
    n = len(comparison.paired)
    return [
        f"only {n} paired tasks (fewer than 30): the band uses a Student t multiplier and "
        "stays wide; few changes will clear it"
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


def _multiplier(m: Multiplier) -> str:
    if m.kind == "z":
        return f"z = {m.value:g}"
    return f"t = {m.value:.3f}, {m.df} df, at the level of z = {m.z:g}"


_VERDICTS = {
    "above": "ABOVE the band: the improvement is larger than this eval's noise",
    "below": "BELOW the band: the drop is larger than this eval's noise",
    "inside": "INSIDE the band: no detectable change (this eval cannot tell it from noise)",
}


def render_text(comparison: Comparison, gate: Gate, passed: bool) -> str:
    """Render the human-readable report ``compare`` prints (ASCII only, ends with a newline)."""
    c = comparison
    band = c.band
    names = max(len(c.baseline), len(c.candidate))
    lines = [
        f"Paired tasks: {len(c.paired)} (at least {c.min_runs} run(s) each side)",
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
        f"Change: {_signed_points(band.mean)} points",
        (
            f"Noise band: +/-{_points(band.half_width)} points (sd of per-task differences "
            f"{_points(band.sd)} points, multiplier {_multiplier(band.multiplier)})"
        ),
        f"Verdict: {_VERDICTS[band.verdict]}",
    ]
    if c.mcnemar is not None:
        lines.append(
            f"McNemar mid-p (one run per task): {c.mcnemar.p_value:.4f} "
            f"(baseline-only passes {c.mcnemar.baseline_only}, "
            f"candidate-only passes {c.mcnemar.candidate_only})"
        )
    lines.append(f"Flipped tasks (solid <-> broken): {len(c.flips)}")
    lines.extend(
        f"  {f.task_id}: {f.baseline_class} -> {f.candidate_class} "
        f"({_runs(f.baseline)} -> {_runs(f.candidate)})"
        for f in c.flips
    )
    by_id = {p.task_id: p for p in c.paired}
    lines.append(f"Regressions (solid in baseline, not solid in candidate): {len(c.regressions)}")
    lines.extend(
        f"  {t}: {_runs(by_id[t].baseline)} -> {_runs(by_id[t].candidate)}" for t in c.regressions
    )
    lines.append(f"Excluded tasks: {len(c.excluded)}")
    lines.extend(f"  {e.task_id}: {e.reason}" for e in c.excluded)
    lines.extend(f"Warning: {w}" for w in _warnings(c))
    if gate != "none":
        if passed:
            lines.append(f"Gate {gate}: PASSED")
        elif gate == "improved":
            lines.append(f"Gate {gate}: FAILED (the change does not clear the band upward)")
        else:
            lines.append(f"Gate {gate}: FAILED (the change is below the band)")
    return "\n".join(lines) + "\n"
