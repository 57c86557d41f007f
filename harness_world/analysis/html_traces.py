"""The traces part of a run's page: one section per task, each attempt's article, side by side.

Each attempt's article opens with its verdict (state, layers, failed criteria, advisories),
then its transcript. Sections are written task by task, each record read when its article is
written and let go after (`harness_world.analysis.run_view.RunView.shown`). While
the page's transcripts stay under `INLINE_CHARS` in all, every article is in the page. Above
that, each task's articles are embedded compressed
(`harness_world.analysis.html_page.embedded`) in a closed ``<details>`` that the page
inflates when it is opened, linked to or searched, beside a map from each attempt to its
section and the attempts' search text: a 10,000-attempt page then parses a few hundred
elements of traces instead of hundreds of thousands, and opens in a browser within seconds.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape

import attrs

from harness_world.analysis.html_attempts import AttemptRow, attempt_row
from harness_world.analysis.html_expected import expected_block
from harness_world.analysis.html_page import embedded
from harness_world.analysis.run_view import RunView, Shown
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


def _transcript(view: RunView, i: int, attempt: Shown, prefix: str, budget: int) -> str:
    slot, marks = view.report.attempts[i], view.marks[i]
    named = named_calls(slot.failed + slot.harness_failed, marks.advisories, attempt.record)
    return transcript_html(
        i,
        attempt.record,
        attempt.grade,
        budget,
        marks,
        prefix,
        compact=view.compact and bool(slot.passed),
        named=named,
    )


def _pair(view: RunView, indices: Sequence[int]) -> tuple[int | None, int | None]:
    """The first failed and the first passed attempt of a task (what side by side shows)."""
    states = {i: attempt_state(view.report.attempts[i]) for i in indices}
    failed = next((i for i in indices if states[i] == "failed"), None)
    passed = next((i for i in indices if states[i] == "passed"), None)
    return failed, passed


def _side_by_side(
    view: RunView, indices: Sequence[int], records: Mapping[int, TraceRecord | None], prefix: str
) -> str:
    """The first failed and the first passed attempt of a task, call by call."""
    failed, passed = _pair(view, indices)
    if failed is None or passed is None:
        return ""
    left, right = records.get(failed), records.get(passed)
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
        f'<details class="side" open><summary>side by side: <a href="#{prefix}-{failed}">sample '
        f'{fs}</a> (failed) and <a href="#{prefix}-{passed}">sample {ps}</a> (passed), call by '
        'call; calls that differ are tinted</summary><table class="sbs"><thead><tr>'
        f"<th>sample {fs} · failed</th><th>sample {ps} · passed</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></details>"
    )


def _article(
    view: RunView, i: int, record: TraceRecord | None, transcript: str, prefix: str, search: str
) -> str:
    slot = view.report.attempts[i]
    header = attempt_header(i, slot, record, view.marks[i], prefix, search)
    opened = " open" if slot.passed is False else ""
    return (
        f'{header}<details class="transcript"{opened}><summary>{_summary_line(record)}'
        f'</summary><div class="body">{transcript}</div></details></article>'
    )


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")


def _folded(view: RunView, sid: str, indices: Sequence[int], articles: str) -> str:
    """A task's attempts compressed in a closed ``<details>``, inflated when it is opened."""
    states = Counter(attempt_state(view.report.attempts[i]) for i in indices)
    counts = ", ".join(f"{n} {state}" for state, n in sorted(states.items()))
    return (
        f'<details class="attempts" data-z="z-{sid}"><summary>{len(indices)} attempts '
        f"({counts}): open to show them</summary></details>{embedded(f'z-{sid}', articles)}"
    )


@attrs.define(slots=True)
class _Part:
    """One task's section: its head (title, instruction, side by side) and its articles."""

    task_id: str
    sid: str
    indices: Sequence[int]
    head: str
    articles: str


@attrs.define(slots=True)
class _Sections:
    """The task sections written so far, inline until their transcripts pass the bound.

    Past it every section's articles are compressed, those written before as well.
    """

    view: RunView
    inline_chars: int
    lazy: bool = False
    chars: int = 0
    parts: list[_Part] = attrs.field(factory=list)

    def add(self, part: _Part) -> None:
        """One more task's section."""
        self.chars += len(part.articles)
        if not self.lazy and self.chars > self.inline_chars:
            self.lazy = True
            for done in self.parts:
                done.articles = _folded(self.view, done.sid, done.indices, done.articles)
        if self.lazy:
            part.articles = _folded(self.view, part.sid, part.indices, part.articles)
        self.parts.append(part)

    def html(self) -> str:
        """Every section, in order."""
        lazy = " data-lazy" if self.lazy else ""
        return "".join(
            f'<section class="task" id="{p.sid}" data-task="{escape(p.task_id)}"{lazy}>'
            f"{p.head}{p.articles}</section>"
            for p in self.parts
        )


def traces_section(
    view: RunView,
    prefix: str,
    share: float = 1.0,
    inline_chars: int = INLINE_CHARS,
    rows: list[AttemptRow] | None = None,
) -> str:
    """Every attempt's article, grouped by task (families together), each task's side by side.

    Each record is read when its article is written (`RunView.shown`) and let go after, so
    the page holds one record at a time (and the two of each task shown side by side).

    Args:
        view: The run.
        prefix: Anchor prefix (one per configuration in a comparison).
        share: This run's share of `HTML_BUDGET` (a comparison shows two runs).
        inline_chars: Transcripts above this many characters in all: each task's attempts
            are embedded compressed and inflated when shown.
        rows: When given, each attempt's row of the attempts list is added to it as its
            record is read (`harness_world.analysis.html_attempts`), in the traces' order.
    """
    budget = _budget(view, share)
    by_task: dict[str, list[int]] = {}
    for i, slot in enumerate(view.report.attempts):
        by_task.setdefault(slot.task_id, []).append(i)

    def family(task_id: str) -> str:
        task = view.tasks.get(task_id)
        return task.family if task is not None else ""

    sections, index = _Sections(view, inline_chars), []
    for k, task_id in enumerate(sorted(by_task, key=lambda t: (family(t), t))):
        task, indices, sid = view.tasks.get(task_id), by_task[task_id], f"{prefix}-s{k}"
        pair, kept = _pair(view, indices), {}
        articles = []
        for i in indices:  # one record held at a time (and the two shown side by side)
            attempt = view.shown([i])[0]
            text = _transcript(view, i, attempt, prefix, budget)
            slot = view.report.attempts[i]
            search = attempt_search_text(slot, attempt.record, view.marks[i])
            articles.append(_article(view, i, attempt.record, text, prefix, search))
            if rows is not None:
                rows.append(attempt_row(i, slot, attempt.record))
            index.append((f"{prefix}-{i}", attempt_state(slot), slot.task_id, sid, search))
            if i in pair:
                kept[i] = attempt.record
        instruction = escape(task.instruction) if task else "(task not known here)"
        head = (
            f'<h3>{escape(task_id)}</h3><p class="instr"><b>instruction</b>: {instruction}</p>'
            f"{expected_block(view, task, indices, prefix)}"
            f"{_side_by_side(view, indices, kept, prefix)}"
        )
        sections.add(_Part(task_id, sid, indices, head, "".join(articles)))
    parts = [sections.html()]
    if sections.lazy:
        where = {name: sid for name, _, _, sid, _ in index}
        parts.append(f'<script type="application/json" class="where">{_json(where)}</script>')
        found = [[name, state, task, text] for name, state, task, _, text in index]
        parts.append(embedded(f"{prefix}-index", json.dumps(found), "index"))
    return "".join(parts)
