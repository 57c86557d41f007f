"""``compare``'s planned looks, its decision log and several candidates against one baseline.

`add_arguments` adds ``--look J --of K`` and ``--decision-log FILE`` to ``compare``'s parser;
`planned_look` turns them into the level the look decides at (`harness_world.stats.look_level`,
O'Brien-Fleming spending); `logged_warnings` reads the log the user keeps, warns when an earlier
decision on fewer runs of the same comparison was not a planned look, and appends this one.
`candidate_rows` reads a baseline run and several candidate runs as results rows;
`render_candidates` prints `harness_world.stats.sequential.assess_candidates`' result.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from harness_world.analysis.compare_report import render_text
from harness_world.analysis.report import rows_of
from harness_world.analysis.results_csv import read_results
from harness_world.analysis.unverified import gate_labels
from harness_world.running.pending import settle
from harness_world.running.reader import RunReader
from harness_world.stats import Comparison, RunRow, StatsInputError
from harness_world.stats.gate import GateResult, gate_options
from harness_world.stats.sequential import (
    Candidates,
    LoggedDecision,
    LookLevel,
    assess_candidates,
    look_level,
    repeated_look_warnings,
)

CANDIDATES = (
    "candidate config name in the CSV; give it twice or more (or three or more run "
    "directories, the baseline first) for several candidates, Holm across them"
)
"""``--candidate``'s help."""

__all__ = [
    "CANDIDATES",
    "add_arguments",
    "candidate_rows",
    "logged_warnings",
    "look_note",
    "notes",
    "planned_look",
    "render_candidates",
    "run_several",
    "several_candidates",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--look J --of K`` and ``--decision-log FILE``."""
    parser.add_argument(
        "--look",
        type=int,
        metavar="J",
        help="this is planned look J of --of K (O'Brien-Fleming alpha spending: the K looks "
        "together spend --alpha; this look decides at its own, smaller level)",
    )
    parser.add_argument("--of", type=int, metavar="K", help="planned looks in all (with --look)")
    parser.add_argument(
        "--decision-log",
        type=Path,
        metavar="FILE",
        help="a JSON-lines log of decisions you keep: warn when an earlier decision on fewer "
        "runs of this comparison was not a planned look, then append this one",
    )


def planned_look(look: int | None, of: int | None, alpha: float) -> LookLevel | None:
    """The planned look's level, or None without ``--look``.

    Raises:
        StatsInputError: One of ``--look`` and ``--of`` without the other, or out of range.

    """
    if look is None and of is None:
        return None
    if look is None or of is None:
        raise StatsInputError("--look J and --of K go together")
    return look_level(look, of, alpha)


def look_note(level: LookLevel) -> str:
    """One line saying which look this is and the level it decides at."""
    return (
        f"planned look {level.look} of {level.of} (O'Brien-Fleming alpha spending): this "
        f"look decides at one-sided {level.nominal_alpha * 100:.3g}%; looks 1 to {level.look} "
        f"may spend {level.spent * 100:.3g}% of {level.alpha * 100:g}% together"
    )


def notes(
    log: Path | None, comparison: Comparison, result: GateResult, level: LookLevel | None
) -> list[str]:
    """The planned look's note and the decision log's warnings (`logged_warnings`), if any.

    Raises:
        StatsInputError: A line of the log is not a logged decision.
        OSError: The log cannot be read or written.

    """
    out = [] if level is None else [look_note(level)]
    return out + ([] if log is None else logged_warnings(log, comparison, result, level))


def _read_log(path: Path) -> list[LoggedDecision]:
    if not path.exists():
        return []
    decoder = msgspec.json.Decoder(LoggedDecision)
    out = []
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if line.strip():
            try:
                out.append(decoder.decode(line))
            except msgspec.DecodeError as exc:
                raise StatsInputError(f"{path}:{number}: not a logged decision: {exc}") from None
    return out


def logged_warnings(
    path: Path, comparison: Comparison, result: GateResult, level: LookLevel | None
) -> list[str]:
    """The repeated-look warnings the log gives for this decision; then log it.

    Raises:
        StatsInputError: A line of the log is not a logged decision.
        OSError: The log cannot be read or written.

    """
    now = LoggedDecision(
        baseline=comparison.baseline,
        candidate=comparison.candidate,
        gate=result.gate,
        tasks=result.observed.tasks,
        runs=sum(p.baseline.runs + p.candidate.runs for p in comparison.paired),
        look=None if level is None else level.look,
        of=None if level is None else level.of,
        passed=result.passed,
    )
    found = repeated_look_warnings(_read_log(path), now)
    with path.open("ab") as log:
        log.write(msgspec.json.encode(now) + b"\n")
    return found


def candidate_rows(
    paths: Sequence[Path], reader: RunReader, *, count_pending: bool
) -> tuple[list[RunRow], list[str], list[str], int]:
    """A baseline run and several candidate runs as rows, each named by its folder.

    Returns:
        The rows, the names (baseline first), every task scheduled, and the most samples.

    Raises:
        StatsInputError: Two runs share a folder name.

    """
    names = [p.resolve().name for p in paths]
    if len(set(names)) != len(names):
        raise StatsInputError(f"run folders need different names, got {', '.join(names)}")
    rows: list[RunRow] = []
    scheduled: set[str] = set()
    samples = 1
    for path, name in zip(paths, names, strict=True):
        scan = settle(reader.read(path), count_pending=count_pending, trust_key=reader.trust_key)
        rows += rows_of(scan, name)
        scheduled |= {s.task_id for s in scan.slots}
        samples = max(samples, scan.manifest.samples)
    return rows, names, sorted(scheduled), samples


def several_candidates(
    inputs: Sequence[str], names: Sequence[str], reader: RunReader, **options: Any
) -> Candidates:
    """`assess_candidates` over a results CSV or run directories.

    A CSV's configs are ``names`` (the baseline, then the candidates); run directories are
    named by their folders, the first the baseline. ``options`` are `assess`'s;
    ``count_pending`` reads run directories.

    Raises:
        StatsInputError: Fewer than 2 candidates, a mix of a CSV and directories, or what
            `assess_candidates` refuses.
        harness_world.analysis.results_csv.ResultsCsvError: A malformed CSV.

    """
    paths = [Path(p) for p in inputs]
    count_pending = options.pop("count_pending", False)
    if all(p.is_dir() for p in paths):
        rows, found, scheduled, samples = candidate_rows(paths, reader, count_pending=count_pending)
        if options.get("min_runs") is None:
            options["min_runs"] = samples
        options["scheduled"] = scheduled
    elif len(paths) == 1 and len(names) >= 3:
        rows, found = read_results(paths[0]), list(names)
        if options.get("min_runs") is None:
            options["min_runs"] = 5
    else:
        raise StatsInputError(
            "several candidates: a results CSV with --baseline and two or more --candidate, "
            "or three or more run directories (the baseline first)"
        )
    return assess_candidates(rows, found[0], found[1:], **options)


def run_several(
    args: argparse.Namespace, candidates: Sequence[str], reader: RunReader
) -> tuple[str, bool]:
    """``compare`` with several candidates, as its parser gave them: the output and the verdict.

    The inputs' labels come first (a gate refuses a CSV or one run as both sides unless
    ``--allow-unverified``, as for one candidate); errors propagate to the command line's
    one ``error:`` line.
    """
    inputs = args.inputs
    pairs = [inputs] if len(inputs) == 1 else [[inputs[0], c] for c in inputs[1:]]
    notes = [
        n for p in pairs for n in gate_labels(p, gate=args.gate, allowed=args.allow_unverified)
    ]
    o = gate_options(args.gate, alpha=args.alpha, z=args.z, margin=args.margin)
    result = several_candidates(
        inputs, [args.baseline or "", *candidates], reader, gate=args.gate, alpha=o.alpha,
        margin=o.margin, min_runs=args.min_runs, seed=args.seed, allow_missing=args.allow_missing,
        use_clusters=not args.no_clusters, count_pending=args.count_pending,
    )  # fmt: skip
    return render_candidates(result, notes, as_json=args.json), result.passed


def render_candidates(
    result: Candidates, notes: Sequence[str] = (), *, as_json: bool = False
) -> str:
    """The notes, each candidate's comparison at its Holm level, then every decision.

    With ``as_json``, the result as one JSON object (a line), the notes under ``notes``.
    """
    if as_json:
        data = msgspec.to_builtins(result) | {"notes": list(notes)}
        return msgspec.json.encode(data).decode() + "\n"
    out: list[str] = list(notes)
    m = len(result.candidates)
    for c in result.candidates:
        out.append(
            f"== {c.candidate!r} against {result.baseline!r}: decided at one-sided "
            f"{c.level * 100:.3g}% ({result.correction} over {m} candidates)"
        )
        out.append(render_text(c.comparison, c.result))
    what = (
        "Holm step-down over the candidates' gate p-values: the chance that any candidate "
        "passes falsely is at most"
        if result.correction == "holm"
        else "no gate: simultaneous bounds at alpha / m (Bonferroni), family-wise"
    )
    out.append(f"Several candidates ({m}): {what} one-sided {result.alpha * 100:g}%")
    for c in result.candidates:
        verdict = "PASSED" if c.passed else "FAILED"
        out.append(
            f"  {c.candidate}: {verdict if result.gate != 'none' else 'no gate'} (p "
            f"{c.p_value:.4g}, Holm-adjusted {c.p_adjusted:.4g}, level {c.level * 100:.3g}%; "
            f"{c.reason})"
        )
    return "\n".join(out) + "\n"
