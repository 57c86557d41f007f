"""``verify``'s text: a table of records and a summary line.

Each row: outcome, evidence, grade, harness layer (and the policy sheet, when a record's task
has one).

`harness_world.running.verification.verify_paths` makes the `VerifyReport`; ``--json`` prints
it as it is, and `render_verify` is the terminal's view of it.
"""

from __future__ import annotations

import msgspec

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


def _shown_policy(row: VerifyRow) -> str:
    """The policy sheet as the table shows it: kept of checked, then the broken rules."""
    sheet = row.policy
    if isinstance(sheet, msgspec.UnsetType) or not sheet.checked:
        return ""
    names = [f.split(":", 1)[0].removeprefix("policy.") for f in sheet.failed]
    kept = f"{sheet.checked - len(sheet.failed)}/{sheet.checked}"
    return kept + (f" broken: {', '.join(names)}" if names else "")


def _policy_line(rows: list[VerifyRow]) -> str:
    sheets = [r.policy for r in rows if not isinstance(r.policy, msgspec.UnsetType)]
    if not sheets:
        return ""
    kept = sum(not sheet.failed for sheet in sheets)
    return f"; policy sheet: kept by {kept} of {len(sheets)} graded record(s) (not in the grade)"


def render_verify(report: VerifyReport) -> str:
    """``verify``'s table, one row per record, and the summary line under it.

    A ``policy`` column (kept of checked rules, then the broken ones) is shown only when some
    record's task has a policy sheet.
    """
    rows = report.records
    sheets = any(not isinstance(r.policy, msgspec.UnsetType) for r in rows)
    table = [
        [
            r.path,
            r.task,
            str(r.sample),
            r.outcome,
            r.evidence,
            _shown_grade(r),
            _shown_harness(r),
            *([_shown_policy(r)] if sheets else []),
            "; ".join(r.reasons) if r.reasons else r.first_problem,
        ]
        for r in rows
    ]
    headers = [*_HEADERS[:-1], "policy", _HEADERS[-1]] if sheets else _HEADERS
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
    line += _policy_line(rows)
    return f"{render_table(headers, table, max_width=100)}\n\n{line}\n"
