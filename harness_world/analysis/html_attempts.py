"""The list of a run's attempts: one row each, sortable by any column and filtered as you type.

A row holds the task, the sample, the outcome, the grade (the heatmap's state), the failed
criteria and the start of the final message, and links to the attempt's trace. Sorting and
filtering are the page's own script (`harness_world.analysis.html_page`): a click on a column
heading sorts by it (numbers as numbers; again for the reverse order), the box keeps the rows
holding every word typed. On a large run (more attempts than
`harness_world.analysis.run_view.FULL_DETAIL_UP_TO`) the rows are embedded compressed and
inflated when the list is opened, sorted or filtered, so the page stays small and quick to open.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import attrs

from harness_world.analysis.html_page import embedded
from harness_world.analysis.trace_html import attempt_state
from harness_world.analysis.trace_record import TraceRecord
from harness_world.grading.verifier import SlotResult

__all__ = ["EXCERPT", "AttemptRow", "attempt_row", "attempts_table"]

EXCERPT = 100
"""Characters of the final message a row shows."""

_HEADS = ("task", "sample", "outcome", "grade", "failed criteria", "final message")


@attrs.frozen(slots=True)
class AttemptRow:
    """One attempt as the list shows it.

    Attributes:
        index: Its index in the report (its anchor is ``{prefix}-{index}``).
        task_id: The task.
        sample: The sample.
        outcome: How the attempt ended (empty: not executed).
        state: The heatmap state: passed, failed, ungraded, lost, invalid or missing.
        failed: The failed criteria's ids (harness ones marked so).
        final: The start of the final message (empty: no record read, or none given).
    """

    index: int
    task_id: str
    sample: int
    outcome: str
    state: str
    failed: tuple[str, ...]
    final: str


def attempt_row(index: int, slot: SlotResult, record: TraceRecord | None) -> AttemptRow:
    """The list's row of one attempt (its record, when read, gives the final message)."""
    names = tuple(line.split(": ", 1)[0] for line in slot.failed)
    names += tuple(f"{line.split(': ', 1)[0]} (harness)" for line in slot.harness_failed)
    final = " ".join((record.final_message if record is not None else "").split())
    if len(final) > EXCERPT:
        final = final[: EXCERPT - 1] + "…"
    return AttemptRow(
        index, slot.task_id, slot.sample, slot.outcome or "", attempt_state(slot), names, final
    )


def _row(row: AttemptRow, prefix: str) -> str:
    cells = (
        f'<a href="#{prefix}-{row.index}">{escape(row.task_id)}</a>',
        str(row.sample),
        escape(row.outcome or "—"),
        f'<span class="st {row.state}">{row.state}</span>',
        escape(", ".join(row.failed)) or "—",
        escape(row.final) or "—",
    )
    return f'<tr data-state="{row.state}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def attempts_table(rows: Sequence[AttemptRow], prefix: str, *, compressed: bool = False) -> str:
    """The attempts list of one run: a filter box and a table sorted by clicking its headings.

    Args:
        rows: Every attempt's row, report order.
        prefix: The run's anchor prefix (``a``; ``c0`` and ``c1`` in a comparison).
        compressed: Embed the rows compressed, inflated when the list is opened (large runs).
    """
    ident = f"{prefix}-list"
    heads = "".join(
        f'<th scope="col"><button type="button" class="sort">{h}</button></th>' for h in _HEADS
    )
    body = "".join(_row(r, prefix) for r in rows)
    if compressed:
        table = (
            f'<table class="num attempts" id="{ident}" data-z="{ident}-z"><thead><tr>{heads}'
            f"</tr></thead><tbody></tbody></table>{embedded(f'{ident}-z', body)}"
        )
    else:
        table = (
            f'<table class="num attempts" id="{ident}"><thead><tr>{heads}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )
    opened = "" if compressed else " open"
    return (
        f'<details class="attempts-list" id="{prefix}-attempts"{opened}><summary><b>Attempts'
        f"</b> ({len(rows)}: task, sample, outcome, grade, failed criteria, final message; "
        "click a heading to sort)</summary>"
        f'<p><label>filter <input type="search" id="{ident}-q" placeholder="words every '
        f'row shown holds"></label> <span class="meta" id="{ident}-n"></span></p>{table}'
        "</details>"
    )
