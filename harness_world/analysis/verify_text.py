"""``verify``'s text: a table of records (outcome, evidence, grade, harness layer) and a summary.

`harness_world.running.verification.verify_paths` makes the `VerifyReport`; ``--json`` prints
it as it is, and `render_verify` is the terminal's view of it.
"""

from __future__ import annotations

from harness_world.analysis.tables import render_table
from harness_world.running.verification import VerifyReport, VerifyRow

__all__ = ["render_verify"]

_HEADERS = [
    "record",
    "task",
    "sample",
    "outcome",
    "evidence",
    "grade",
    "harness",
    "problem / reasons",
]


def _shown_grade(row: VerifyRow) -> str:
    """The grade as the table shows it: a pass with prose open says how many are pending."""
    pending = len(row.not_reviewed)
    if row.grade == "passed_automated":
        return f"passed_automated, {pending} pending review"
    return row.grade


def _shown_harness(row: VerifyRow) -> str:
    """The harness layer as the table shows it: clean of checked, then the failed names."""
    checked, failed = row.harness.checked, row.harness.failed
    if not checked:
        return ""
    names = [f.split(":", 1)[0].removeprefix("harness.") for f in failed]
    return f"{checked - len(failed)}/{checked}" + (f" failed: {', '.join(names)}" if names else "")


def render_verify(report: VerifyReport) -> str:
    """``verify``'s table, one row per record, and the summary line under it."""
    rows = report.records
    table = [
        [
            r.path,
            r.task,
            str(r.sample),
            r.outcome,
            r.evidence,
            _shown_grade(r),
            _shown_harness(r),
            "; ".join(r.reasons) if r.reasons else r.first_problem,
        ]
        for r in rows
    ]
    summary, grades = report.evidence, report.grades
    graded = grades.passed + grades.failed + grades.pending
    line = (
        f"{len(rows)} record(s): {summary.verified} verified, {summary.ungraded} ungraded, "
        f"{summary.lost} lost; grades: {grades.passed} passed, {grades.pending} pending "
        f"review (passed_automated), {grades.failed} failed, {len(rows) - graded} not graded"
    )
    if report.not_reviewed:
        line += f"; {report.not_reviewed} prose criteria not reviewed"
    checked = [r for r in rows if r.harness.checked]
    if checked:
        clean = sum(not r.harness.failed for r in checked)
        line += f"; harness layer: {clean} of {len(checked)} graded record(s) clean"
    return f"{render_table(_HEADERS, table, max_width=100)}\n\n{line}\n"
