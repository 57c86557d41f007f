"""The first screen of a run's HTML report: the headline figure, the layers, what failed.

The headline is the report's own: the mean per-task pass rate with its interval over tasks
(CR2 over families, t with Bell-McCaffrey degrees of freedom), labelled as such; the pooled
per-attempt Wilson interval stands beside it, named for what it is. Then the harness layer and
trusted completion, then one row per failed task: its failed criteria, the advisories its
failed attempts carry, the first reason, and a link to each failed attempt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape

from harness_world.analysis.report import RunReport
from harness_world.analysis.report_text import harness_layer_line
from harness_world.analysis.tables import interval_text, number_text
from harness_world.analysis.trusted import TrustedReport
from harness_world.grading.advice import Advisory

__all__ = ["summary_section"]


def _headline(report: RunReport) -> str:
    c = report.counts
    pooled = (
        f"per attempt: passed {c.passed} of {c.passed + c.failed} graded valid attempts, "
        f"{interval_text(report.pass_rate)} (pooled Wilson 95 %: no task luck)"
    )
    suite = report.suite_mean
    if suite is None:
        head = (
            f'<p class="headline">pass rate <b>{interval_text(report.pass_rate)}</b> '
            '<span class="meta">(pooled Wilson 95 % over attempts: fewer than 2 tasks, so '
            "no interval over tasks)</span></p>"
        )
        return head
    return (
        f'<p class="headline">pass rate <b>{suite.mean:.3f} [{suite.low:.3f}, '
        f'{suite.high:.3f}]</b> <span class="meta">mean per-task pass rate over {suite.tasks} '
        f"tasks, {suite.confidence * 100:g} % interval, {suite.method}: what another draw of "
        "tasks like these would give</span></p>"
        f'<p class="meta">{pooled}</p>'
    )


def _counts_line(report: RunReport) -> str:
    c = report.counts
    parts = [
        f"{c.failed} failed",
        f"{c.not_graded} not graded",
        f"{c.invalid} invalid",
        f"{c.missing} missing",
        f"{report.completed_but_failed} completed but failed",
    ]
    return f"<p>{c.scheduled} scheduled attempts: {', '.join(parts)}</p>"


def _layers(report: RunReport, trusted: TrustedReport | None) -> str:
    lines = [escape(harness)] if (harness := harness_layer_line(report)) else []
    if trusted is not None:
        rate = number_text(trusted.trusted_rate)
        lines.append(
            f"trusted completion: {trusted.trusted} of {trusted.valid} valid attempts (rate "
            f"{rate}); first attempt {trusted.first_attempt_trusted}; safe stops "
            f"{trusted.safe_stops}; attempts with a forbidden transition {trusted.forbidden}"
        )
    return "".join(f"<p>{line}</p>" for line in lines)


def _failed_rows(
    report: RunReport, advisories: Sequence[Sequence[Advisory]], prefix: str
) -> list[str]:
    rows = []
    for failed in report.failed_tasks:
        indices = [
            i
            for i, a in enumerate(report.attempts)
            if a.task_id == failed.task_id and a.counted and a.passed is False
        ]
        names = Counter(name for i in indices for name in {a.name for a in advisories[i]})
        links = " ".join(
            f'<a href="#{prefix}-{i}">sample {report.attempts[i].sample}</a>' for i in indices[:8]
        )
        cells = [
            f'<a href="#{prefix}-{indices[0]}">{escape(failed.task_id)}</a>'
            if indices
            else escape(failed.task_id),
            f"{failed.failed}/{failed.valid}",
            escape(", ".join(f"{c} ×{n}" for c, n in failed.criteria.items())),
            escape(", ".join(f"{a} ×{n}" for a, n in sorted(names.items()))) or "—",
            escape(failed.reason),
            links,
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return rows


def summary_section(
    report: RunReport,
    advisories: Sequence[Sequence[Advisory]],
    trusted: TrustedReport | None,
    prefix: str = "a",
) -> str:
    """The summary: headline pass rate, counts, layers, failed tasks with links to attempts."""
    rows = _failed_rows(report, advisories, prefix)
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in ("failed task", "failed", "criteria", "advisories", "first reason", "attempts")
    )
    failed = (
        f'<table class="num failed-tasks"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
        if rows
        else "<p>No task failed.</p>"
    )
    return (
        '<section id="summary"><h2>Summary</h2>'
        + _headline(report)
        + _counts_line(report)
        + _layers(report, trusted)
        + f"<h3>Failed tasks ({len(rows)})</h3>{failed}</section>"
    )
