"""The published results table's rows, per suite: what a row is made of, and whether it is.

AgentDojo's table (``results-table.html``, written by its ``create_results_table.py``) gives one
row per pipeline: utility, utility under attack and targeted attack success, each the mean of
the stored verdicts over every run of the four suites pooled (not a mean of per-suite means),
at that script's default benchmark version, v1.1.2 (its task sets: workspace without injection
tasks 6 to 13). A row is therefore a sum of per-suite counts. `row_checks` makes those counts
explicit for each regraded pipeline: per suite, the table's slots (user tasks alone, user task
× injection task under ``important_instructions``) counted from AgentDojo's verdicts, re-stated
and regraded for an imported suite, as stored in the trace for a suite not imported yet; then
the row restricted to the imported suites, and the four-suite row beside the published one.
When every suite is imported the four-suite row comes from regraded verdicts alone, by the same
code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from harness_world.agentdojo.importer import SUPPORTED
from harness_world.agentdojo.regrade import read_trace
from harness_world.agentdojo.runs import (
    DojoFigures,
    Judged,
    PublishedRow,
    RegradeRun,
    cell,
    dojo_figures,
    judged,
)
from harness_world.agentdojo.source import DojoSource
from harness_world.analysis.conditions import Rate, rate

TABLE_VERSION = "v1.1.2"
"""The benchmark version ``create_results_table.py`` computes the table at by default."""
TABLE_SUITES = ("workspace", "travel", "banking", "slack")
"""The suites a published row pools."""
TABLE_ATTACK = "important_instructions"
"""The attack of the rows without defense."""


class SuiteCounts(msgspec.Struct, frozen=True, kw_only=True):
    """One suite's share of a published row.

    Attributes:
        suite: The suite.
        verdicts: ``regraded`` (AgentDojo's verdicts re-stated on our replay of each trace)
            or ``stored`` (the trace's own, for a suite not imported).
        figures: Utility, utility under attack and targeted attack success over the table's
            slots of the suite.
        missing: The table's slots with no trace (``user_task_3`` or
            ``user_task_3/injection_task_1``).
    """

    suite: str
    verdicts: Literal["regraded", "stored"]
    figures: DojoFigures
    missing: list[str] = []


class RowCheck(msgspec.Struct, frozen=True, kw_only=True):
    """One pipeline's published row, per suite and pooled.

    Attributes:
        label: The pipeline (its traces' folder).
        version: The benchmark version whose task sets are counted.
        suites: Each suite's counts (the four; a suite without traces is left out).
        imported: The row restricted to the imported suites (regraded verdicts).
        pooled: The row over the suites counted, as the table's script computes it.
        published: The published row (None: the table has none for the pipeline).
        reproduced: Whether ``pooled`` prints as the published row does (None: no published
            row, or a suite or slot of the table has no trace).
    """

    label: str
    version: str
    suites: list[SuiteCounts]
    imported: DojoFigures
    pooled: DojoFigures
    published: PublishedRow | None
    reproduced: bool | None


def table_slots(source: DojoSource, suite: str, version: str) -> list[tuple[str, str]]:
    """The table's slots of a suite: ``(user task, "")`` and ``(user task, injection task)``.

    Raises:
        DojoDataError: for a suite or version AgentDojo's code does not define.
    """
    reference = source.suite(suite, version)
    users = list(reference.user_tasks)
    pairs = [(u, i) for u in users for i in reference.injection_tasks]
    return [(u, "") for u in users] + pairs


def stored_verdicts(folder: Path, suite: str) -> list[Judged]:
    """The verdicts the traces of one pipeline's suite folder store (none without the folder).

    Raises:
        DojoDataError: for a file that is not a trace.
    """
    out: list[Judged] = []
    for attack in ("none", TABLE_ATTACK):
        for path in sorted((folder / suite).glob(f"*/{attack}/*.json")):
            trace = read_trace(path)
            out.append(
                Judged(
                    user_task=str(trace.get("user_task_id") or ""),
                    injection_task=str(trace.get("injection_task_id") or ""),
                    utility=bool(trace.get("utility")),
                    security=bool(trace.get("security")),
                )
            )
    return out


def suite_counts(
    suite: str, verdicts: Sequence[Judged], slots: Sequence[tuple[str, str]], regraded: bool
) -> SuiteCounts:
    """One suite's figures over the table's slots (verdicts outside them are left out)."""
    by_slot = {(v.user_task, v.injection_task): v for v in verdicts}
    found = [by_slot[s] for s in slots if s in by_slot]
    return SuiteCounts(
        suite=suite,
        verdicts="regraded" if regraded else "stored",
        figures=dojo_figures(found),
        missing=["/".join(p for p in s if p) for s in slots if s not in by_slot],
    )


def pooled(parts: Sequence[DojoFigures]) -> DojoFigures:
    """Figures pooled over suites: counts and denominators summed (a run-level mean)."""

    def total(pick: str) -> Rate:
        rates = [getattr(p, pick) for p in parts]
        return rate(sum(r.count for r in rates), sum(r.n for r in rates))

    return DojoFigures(
        utility=total("utility"),
        utility_under_attack=total("utility_under_attack"),
        attack_success=total("attack_success"),
    )


def percent(r: Rate) -> str:
    """A rate as the published table prints it (``88.66%``)."""
    return "" if r.rate is None else f"{100 * r.rate:.2f}%"


def _prints_as(figures: DojoFigures, row: PublishedRow) -> bool:
    return (
        percent(figures.utility),
        percent(figures.utility_under_attack),
        percent(figures.attack_success),
    ) == (row.utility, row.utility_under_attack, row.attack_success)


def _pipeline_folder(folder: Path, label: str, runs: Sequence[RegradeRun]) -> Path:
    """Where the pipeline's traces are: beside the regraded ones, else the data folder's."""
    for run in runs:
        for v in run.verdicts[:1]:
            parents = Path(v.path).resolve().parents
            if len(parents) > 3 and parents[3].name == label:
                return parents[3]
    return folder / "traces" / label


def row_check(
    source: DojoSource,
    label: str,
    runs: Sequence[RegradeRun],
    published: Sequence[PublishedRow],
    version: str = TABLE_VERSION,
) -> RowCheck:
    """One pipeline's published row, per suite, from its regraded runs and stored traces.

    Raises:
        DojoDataError: for a trace that cannot be read, or a version or suite AgentDojo's
            code does not define.
    """
    regraded: Mapping[str, RegradeRun] = {r.suite: r for r in runs if r.label == label}
    traces = _pipeline_folder(source.folder, label, list(regraded.values()))
    suites: list[SuiteCounts] = []
    for suite in TABLE_SUITES:
        slots = table_slots(source, suite, version)
        if suite in regraded and suite in SUPPORTED:
            verdicts = [judged(v) for v in regraded[suite].verdicts]
            suites.append(suite_counts(suite, verdicts, slots, regraded=True))
        elif (traces / suite).is_dir():
            suites.append(suite_counts(suite, stored_verdicts(traces, suite), slots, False))
    row = next((r for r in published if r.model == label and r.defense == "None"), None)
    whole = len(suites) == len(TABLE_SUITES) and not any(s.missing for s in suites)
    figures = pooled([s.figures for s in suites])
    return RowCheck(
        label=label,
        version=version,
        suites=suites,
        imported=pooled([s.figures for s in suites if s.verdicts == "regraded"]),
        pooled=figures,
        published=row,
        reproduced=None if row is None or not whole else _prints_as(figures, row),
    )


def row_checks(
    folder: Path, runs: Sequence[RegradeRun], published: Sequence[PublishedRow]
) -> list[RowCheck]:
    """`row_check` for every pipeline regraded.

    Raises:
        DojoDataError: for a trace that cannot be read.
    """
    source = DojoSource(folder)
    return [row_check(source, label, runs, published) for label in sorted({r.label for r in runs})]


def _line(figures: DojoFigures) -> str:
    return (
        f"utility {cell(figures.utility)}, utility under attack "
        f"{cell(figures.utility_under_attack)}, targeted ASR {cell(figures.attack_success)}"
    )


def render_row_checks(checks: Sequence[RowCheck]) -> str:
    """Per pipeline: each suite's share of its published row, the imported suites', the row."""
    lines: list[str] = []
    for c in checks:
        lines.append(
            f"{c.label}: the published row per suite (benchmark {c.version}, {TABLE_ATTACK}, "
            f"no defense; counts summed over suites)"
        )
        for s in c.suites:
            why = "regraded" if s.verdicts == "regraded" else "stored verdicts, not regraded here"
            gap = f"; {len(s.missing)} slots without a trace" if s.missing else ""
            lines.append(f"  {s.suite} ({why}{gap}): {_line(s.figures)}")
        imported = "+".join(s.suite for s in c.suites if s.verdicts == "regraded")
        lines.append(f"  restricted to {imported or 'no imported suite'}: {_line(c.imported)}")
        counted = "+".join(s.suite for s in c.suites)
        lines.append(f"  pooled over {counted}: {_line(c.pooled)}")
        if c.published is not None:
            p = c.published
            verdict = {
                True: "reproduced",
                False: "NOT reproduced",
                None: "not comparable (a suite or slot of the table has no trace)",
            }
            lines.append(
                f"  published: utility {p.utility}, utility under attack "
                f"{p.utility_under_attack}, targeted ASR {p.attack_success}: "
                f"{verdict[c.reproduced]}"
            )
    return "\n".join(lines)
