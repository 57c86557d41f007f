"""The coverage commands as text: ``mutants``' gate, the ``demo``'s table, the ``matrix``.

The figures are `harness_world.coverage.gate` (`CoverageReport`) and
`harness_world.coverage.demo` (`DemoResult`); ``--json`` prints those as they are.
"""

from __future__ import annotations

from pathlib import Path

from harness_world.analysis.tables import render_table
from harness_world.coverage.demo import DemoResult
from harness_world.coverage.gate import CoverageReport, GateAttempt
from harness_world.coverage.matrix import CoverageMatrix

__all__ = ["render_coverage", "render_demo", "render_matrix"]


def render_coverage(report: CoverageReport, *, verbose: bool = False) -> str:
    """One world's coverage gate as text: oracles, routes, mutants, what kills each criterion.

    ``verbose`` lists every attempt, not only the problems.
    """
    lines = [f"\n== {report.world}", *_gate_counts(report)]
    lines.append("criteria and the hand mutants that kill them (else the automatic ones):")
    lines += _killers(report)
    if verbose:
        lines += [_attempt_line(r) for r in report.results]
    for key, mutants in report.unchecked.items():
        lines.append(f"  NOT CHECKED on these seeds: {key} (failed only by {', '.join(mutants)})")
    lines += [f"  PROBLEM: {problem}" for problem in report.problems]
    return "".join(line + "\n" for line in lines)


def _gate_counts(report: CoverageReport) -> list[str]:
    """The oracles that pass, the routes per task and the mutants that fail as they should."""
    oracles = [r for r in report.results if r.kind == "oracle"]
    hand = [r for r in report.results if r.kind == "hand"]
    counts = sorted(report.routes.items())
    fewest = min((n for _, n in counts), default=0)
    return [
        f"oracles: {sum(r.ok for r in oracles)}/{len(oracles)} route runs pass "
        f"(seeds: {', '.join(sorted({r.size for r in oracles}))})",
        f"routes per task: {sum(n for _, n in counts)} passing over {len(counts)} tasks, "
        f"fewest {fewest} (at least {report.min_routes} required)",
        "  " + ", ".join(f"{task.split('.', 1)[-1]} {n}" for task, n in counts),
        f"hand mutants: {sum(r.ok for r in hand)}/{len(hand)} fail exactly as predicted",
        f"automatic mutants: {report.auto_killed} killed, {report.auto_survived} survived, "
        f"{report.auto_equivalent} equivalent; "
        f"score {report.score:.3f} (threshold {report.threshold:.2f})",
    ]


def _killers(report: CoverageReport) -> list[str]:
    """Per task, each criterion and how many mutants kill it (hand ones first, else automatic)."""
    by_task: dict[str, list[str]] = {}
    for key, killers in sorted(report.killed_by.items()):
        task, criterion = key.split(": ", 1)
        by_task.setdefault(task, []).append(f"{criterion} <- {_kills(report, key, killers)}")
    return [f"  {task}: " + "; ".join(kills) for task, kills in by_task.items()]


def _kills(report: CoverageReport, key: str, killers: list[str]) -> str:
    if key in report.unchecked:
        return "not run (seeds of its mutants not chosen)"
    if killers:
        return f"{len(killers)}"
    automatic = report.auto_killed_by.get(key, [])
    return f"auto {len(automatic)}" if automatic else "NONE"


def _attempt_line(r: GateAttempt) -> str:
    status = "ok " if r.ok else "BAD"
    name = f"{r.id} [{r.route}]" if r.route else r.id
    return f"  {status} {r.kind:6} {r.size:5} {name}: failed {r.failed or '-'} {r.note}"


def render_demo(result: DemoResult, out: Path) -> str:
    """The demo as text: the table of attempts, each mistake with its reasons, tampering.

    ``out`` is the run directory the demo wrote, named in the closing line.
    """
    lines: list[str] = []
    table = [
        [r.task, r.attempt, r.outcome, r.evidence, r.grade, ", ".join(r.failed) or "-"]
        for r in result.attempts
    ]
    headers = ["task", "attempt", "outcome", "evidence", "grade", "failed criteria"]
    lines.append(render_table(headers, table, 70))
    lines.append("\nThe mistakes, and why each failed:")
    for r in result.attempts:
        if r.mistake:
            lines.append(f"  {r.task}.{r.attempt}: {r.mistake}")
            for reason in r.reasons:
                lines.append(f"      {reason}")
    completed_failed = sum(
        r.outcome == "completed" and r.grade == "failed" for r in result.attempts
    )
    lines.append(
        f"\n{completed_failed} attempts completed cleanly and still failed: "
        "completed is not passed."
    )
    pending = sum(r.grade == "passed_automated" for r in result.attempts)
    if pending:
        lines.append(
            f"{pending} attempts passed every automated criterion with a prose criterion not "
            "reviewed (passed_automated): pending is not passed until a person reviews it."
        )
    tampered = result.tampered
    lines.append(
        f"Tampering: {tampered.what} -> evidence {tampered.evidence} "
        f"({tampered.first_mismatch}); ungraded is never a pass."
    )
    lines.append(
        f"\nRun directory: {out}/  Re-check it: python -m harness_world verify {out}"
        f"  Read it: python -m harness_world report {out}"
    )
    return "".join(line + "\n" for line in lines)


def render_matrix(matrix: CoverageMatrix) -> str:
    """A world's condition matrix as text: each condition's tasks, benign twins and oracle."""
    lines: list[str] = []
    rows = [
        [
            r.condition,
            ", ".join(t.removeprefix(f"{matrix.world}.") for t in r.tasks),
            ", ".join(t.removeprefix(f"{matrix.world}.") for t in r.counterparts) or "NONE",
            "yes" if r.oracle else "NO",
        ]
        for r in matrix.rows
    ]
    lines.append(render_table(["condition", "tasks", "benign counterparts", "oracle"], rows, 48))
    faults = sum(r.kind == "fault" for r in matrix.rows)
    lines.append(f"\n{faults} fault and {len(matrix.rows) - faults} attack condition(s)")
    for problem in matrix.problems:
        lines.append(f"  PROBLEM: {problem}")
    lines.append("MATRIX GATE PASSED" if matrix.ok else "MATRIX GATE FAILED")
    return "".join(line + "\n" for line in lines)
