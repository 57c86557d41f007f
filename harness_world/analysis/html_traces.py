"""The traces part of a run's page: one section per task, each attempt's article, side by side.

Each attempt's article opens with its verdict (state, layers, failed criteria, advisories),
then its transcript. While the page's transcripts stay under `INLINE_CHARS` in all, every
article is in the page. Above that, each task's articles are embedded compressed
(`harness_world.analysis.html_page.embedded`) in a closed ``<details>`` that the page
inflates when it is opened, linked to or searched, beside a map from each attempt to its
section and the attempts' search text: a 10,000-attempt page then parses a few hundred
elements of traces instead of hundreds of thousands, and opens in a browser within seconds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from harness_world.analysis.html_page import embedded
from harness_world.analysis.run_view import RunView
from harness_world.analysis.trace_html import (
    attempt_header,
    attempt_search_text,
    attempt_state,
    compact_line,
    named_calls,
    transcript_html,
)
from harness_world.analysis.trace_record import TraceRecord

__all__ = ["HTML_BUDGET", "INLINE_CHARS", "traces_section"]

HTML_BUDGET = 6_000_000
"""Characters of trace values shared among a report's attempts (the page's size bound)."""

INLINE_CHARS = 2_000_000
"""Up to this many characters of transcripts in all, every article is inline (readable
without JavaScript); above, each task's articles are embedded compressed."""


def _budget(view: RunView, share: float) -> int:
    full = [a for a in view.report.attempts if not (view.compact and a.passed)]
    return max(600, min(60_000, int(HTML_BUDGET * share / max(1, len(full)))))


def _summary_line(record: TraceRecord | None) -> str:
    if record is None:
        return "no record to show"
    turns = f", {len(record.user_turns)} user turn(s)" if record.user_turns else ""
    said = f", {len(record.transcript)} model message(s)" if record.transcript else ""
    return f"transcript: {len(record.calls)} call(s){said}{turns}, final message, every criterion"


def _transcripts(view: RunView, prefix: str, share: float) -> list[str]:
    budget = _budget(view, share)
    out = []
    for i, (slot, record, grade, marks) in enumerate(
        zip(view.report.attempts, view.records, view.grades, view.marks, strict=True)
    ):
        named = named_calls(slot.failed + slot.harness_failed, marks.advisories, record)
        out.append(
            transcript_html(
                i,
                record,
                grade,
                budget,
                marks,
                prefix,
                compact=view.compact and bool(slot.passed),
                named=named,
            )
        )
    return out


def _side_by_side(view: RunView, indices: Sequence[int], prefix: str) -> str:
    """The first failed and the first passed attempt of a task, call by call."""
    states = {i: attempt_state(view.report.attempts[i]) for i in indices}
    failed = next((i for i in indices if states[i] == "failed"), None)
    passed = next((i for i in indices if states[i] == "passed"), None)
    if failed is None or passed is None:
        return ""
    left, right = view.records[failed], view.records[passed]
    if left is None or right is None:
        return ""
    rows = []
    for position in range(max(len(left.calls), len(right.calls))):
        a = left.calls[position] if position < len(left.calls) else None
        b = right.calls[position] if position < len(right.calls) else None
        same = a is not None and b is not None and (a.tool, a.args) == (b.tool, b.args)
        cells = "".join(
            "<td></td>"
            if c is None
            else f'<td><a href="#{prefix}-{i}-c{c.seq}">#{c.seq}</a> {compact_line(c)}</td>'
            for c, i in ((a, failed), (b, passed))
        )
        rows.append(f'<tr class="{"same" if same else "differs"}">{cells}</tr>')
    fs, ps = view.report.attempts[failed].sample, view.report.attempts[passed].sample
    return (
        f'<details class="side"><summary>side by side: <a href="#{prefix}-{failed}">sample '
        f'{fs}</a> (failed) and <a href="#{prefix}-{passed}">sample {ps}</a> (passed), call by '
        'call; calls that differ are tinted</summary><table class="sbs"><thead><tr>'
        f"<th>sample {fs} · failed</th><th>sample {ps} · passed</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></details>"
    )


def _article(view: RunView, i: int, transcript: str, prefix: str) -> str:
    slot, record = view.report.attempts[i], view.records[i]
    header = attempt_header(i, slot, record, view.marks[i], prefix)
    opened = " open" if slot.passed is False else ""
    return (
        f'{header}<details class="transcript"{opened}><summary>{_summary_line(record)}'
        f'</summary><div class="body">{transcript}</div></details></article>'
    )


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")


def _folded(view: RunView, sid: str, indices: Sequence[int], articles: str) -> str:
    """A task's attempts compressed in a closed ``<details>``, inflated when it is opened."""
    states: dict[str, int] = {}
    for i in indices:
        state = attempt_state(view.report.attempts[i])
        states[state] = states.get(state, 0) + 1
    counts = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
    return (
        f'<details class="attempts" data-z="z-{sid}"><summary>{len(indices)} attempts '
        f"({counts}): open to show them</summary></details>{embedded(f'z-{sid}', articles)}"
    )


def traces_section(
    view: RunView, prefix: str, share: float = 1.0, inline_chars: int = INLINE_CHARS
) -> str:
    """Every attempt's article, grouped by task (families together), each task's side by side.

    Args:
        view: The run.
        prefix: Anchor prefix (one per configuration in a comparison).
        share: This run's share of `HTML_BUDGET` (a comparison shows two runs).
        inline_chars: Transcripts above this many characters in all: each task's attempts
            are embedded compressed and inflated when shown.
    """
    transcripts = _transcripts(view, prefix, share)
    lazy = sum(map(len, transcripts)) > inline_chars
    by_task: dict[str, list[int]] = {}
    for i, slot in enumerate(view.report.attempts):
        by_task.setdefault(slot.task_id, []).append(i)

    def family(task_id: str) -> str:
        task = view.tasks.get(task_id)
        return task.family if task is not None else ""

    parts, where, index = [], {}, []
    for k, task_id in enumerate(sorted(by_task, key=lambda t: (family(t), t))):
        task, indices, sid = view.tasks.get(task_id), by_task[task_id], f"{prefix}-s{k}"
        instruction = escape(task.instruction) if task else "(task not known here)"
        articles = "".join(_article(view, i, transcripts[i], prefix) for i in indices)
        if lazy:
            articles = _folded(view, sid, indices, articles)
            for i in indices:
                slot = view.report.attempts[i]
                where[f"{prefix}-{i}"] = sid
                search = attempt_search_text(slot, view.records[i], view.marks[i])
                index.append([f"{prefix}-{i}", attempt_state(slot), slot.task_id, search])
        parts.append(
            f'<section class="task" id="{sid}" data-task="{escape(task_id)}"'
            f"{' data-lazy' if lazy else ''}><h3>{escape(task_id)}</h3>"
            f'<p class="instr"><b>instruction</b>: {instruction}</p>'
            f"{_side_by_side(view, indices, prefix)}{articles}</section>"
        )
    if lazy:
        parts.append(f'<script type="application/json" class="where">{_json(where)}</script>')
        parts.append(embedded(f"{prefix}-index", json.dumps(index), "index"))
    return "".join(parts)
