"""The trace viewer: one attempt's calls, write diffs, clock and criteria as an HTML fragment.

Long values are shortened to a character budget (the report divides a fixed size among the
attempts, so a 10,000-attempt run stays a file a browser opens); the record on disk keeps
everything, and its path is printed beside the trace.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

import msgspec

from harness_world.analysis.trace_record import TraceCall, TraceRecord, raw_text
from harness_world.engine.calls import WriteImage
from harness_world.evidence.record import UserTurn
from harness_world.grading.grade import Grade
from harness_world.grading.verifier import SlotResult

__all__ = ["attempt_state", "shorten", "trace_fragment"]

_ABSENT = "—"


def attempt_state(slot: SlotResult) -> str:
    """The heatmap state of a slot: passed, failed, ungraded, lost, invalid or missing.

    ``ungraded`` covers evidence that did not replay and verified attempts without a grade;
    ``invalid`` is verified evidence whose outcome does not count (error, interrupted).
    """
    if slot.evidence in ("missing", "lost", "ungraded"):
        return slot.evidence
    if not slot.counted:
        return "invalid"
    if slot.passed is None:
        return "ungraded"
    return "passed" if slot.passed else "failed"


def shorten(value: Any, limit: int) -> str:
    """Compact JSON of a value, cut to ``limit`` characters with a note of what was left out."""
    if isinstance(value, msgspec.Raw):
        text = raw_text(value)
    else:
        text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} chars)"


def _field(value: Any, limit: int) -> str:
    return _ABSENT if value is None else escape(shorten(value, limit))


def _diff_rows(image: WriteImage, limit: int) -> str:
    before = image.before or {}
    after = image.after or {}
    fields = sorted(f for f in before.keys() | after.keys() if before.get(f) != after.get(f))
    if image.before is None or image.after is None:
        fields = sorted(before.keys() | after.keys())
    rows = []
    for name in fields:
        old = _field(before.get(name), limit) if image.before is not None else _ABSENT
        new = _field(after.get(name), limit) if image.after is not None else _ABSENT
        rows.append(
            f"<tr><th>{escape(name)}</th><td class=old>{old}</td><td class=new>{new}</td></tr>"
        )
    return "".join(rows)


def _write_images(call: TraceCall, limit: int) -> str:
    parts = []
    for image in call.writes:
        kind = (
            "created" if image.before is None else "deleted" if image.after is None else "updated"
        )
        parts.append(
            f'<table class="diff"><caption>{escape(image.entity)} '
            f"{escape(str(image.key))} {kind}</caption>"
            f"<tr><th>field</th><th>before</th><th>after</th></tr>"
            f"{_diff_rows(image, limit)}</table>"
        )
    return "".join(parts)


def _call(call: TraceCall, limit: int) -> str:
    if call.ok:
        outcome = f'<pre class="result">{escape(shorten(call.result, limit))}</pre>'
    else:
        error = call.error
        kind, message = (error.kind, error.message) if error else ("error", "")
        outcome = f'<p class="error"><b>{escape(kind)}</b>: {escape(message)}</p>'
    return (
        f'<li class="call{"" if call.ok else " bad"}"><p><span class="clock">'
        f"t{call.clock_before}→t{call.clock_after}</span> <code>{escape(call.tool)}"
        f"({escape(shorten(call.args, max(limit, 200)))})</code></p>"
        f"{outcome}{_write_images(call, max(limit // 2, 40))}</li>"
    )


def _compact_call(call: TraceCall) -> str:
    if call.ok:
        outcome = "ok"
    else:
        kind, message = (call.error.kind, call.error.message) if call.error else ("error", "")
        outcome = f'<b class="error">{escape(kind)}</b>: {escape(shorten(message, 120))}'
    writes = "; ".join(
        f"{escape(w.entity)} {escape(str(w.key))} "
        + (
            "created"
            if w.before is None
            else "deleted"
            if w.after is None
            else escape(", ".join(sorted(f for f in w.after if w.before.get(f) != w.after.get(f))))
        )
        for w in call.writes
    )
    return (
        f'<li><span class="clock">t{call.clock_before}→t{call.clock_after}</span> '
        f"<code>{escape(call.tool)}({escape(shorten(call.args, 80))})</code> {outcome}"
        f"{' · wrote ' + writes if writes else ''}</li>"
    )


def _user_turn(turn: UserTurn, limit: int) -> str:
    """One exchange with the simulated user, as an item among the calls (the user channel)."""
    stop = " · <b>ended the conversation</b>" if turn.stop else ""
    return (
        f'<li class="user"><p><span class="clock">after call {turn.after_call}</span> '
        f"agent → user: {escape(shorten(turn.agent, limit))}</p>"
        f"<p>user: {escape(shorten(turn.user, limit))}{stop}</p></li>"
    )


def _items(record: TraceRecord, render: Callable[[TraceCall], str], limit: int) -> str:
    """The calls in order, each user turn placed after the calls made before it was spoken."""
    turns = sorted(record.user_turns, key=lambda t: t.after_call)
    parts: list[str] = []
    at = 0
    for position, call in enumerate(record.calls):
        while at < len(turns) and turns[at].after_call <= position:
            parts.append(_user_turn(turns[at], limit))
            at += 1
        parts.append(render(call))
    parts.extend(_user_turn(t, limit) for t in turns[at:])
    return "".join(parts)


def _criteria(slot: SlotResult, grade: Grade | None) -> str:
    if grade is not None:
        items = [
            f'<li class="{v.status}"><b>{escape(v.id)}</b> {v.status.replace("_", " ")}'
            f"{': ' + escape(v.detail) if v.detail else ''}</li>"
            for v in grade.verdicts
        ]
        diagnostics = getattr(grade, "diagnostics", None)  # added by a later grade format
        if diagnostics:
            items.append(f'<li class="diag">diagnostics: {escape(shorten(diagnostics, 2000))}</li>')
    elif slot.passed:
        items = ['<li class="passed">every automated criterion passed</li>']
    else:
        items = [f'<li class="failed">{escape(line)}</li>' for line in slot.failed]
    notes = [n for n in (slot.reason, slot.not_graded) if n]
    items.extend(f'<li class="note">{escape(n)}</li>' for n in notes)
    if not items:
        items.append("<li>no grade</li>")
    return f'<ul class="criteria">{"".join(items)}</ul>'


def trace_fragment(
    index: int,
    slot: SlotResult,
    record: TraceRecord | None,
    grade: Grade | None,
    budget: int,
    prefix: str = "a",
    *,
    compact: bool = False,
) -> str:
    """One attempt's ``<article>``: header, calls, final message, then each criterion.

    Each call shows its arguments, its result or typed error, its write images as before/after
    diffs and the logical clock around it; each exchange with a simulated user stands in its
    place among the calls (after the calls made before the agent spoke); each criterion its
    verdict and reason.

    Args:
        index: The attempt's index in the report (its anchor is ``{prefix}-{index}``).
        slot: The judged slot.
        record: Its record, when readable.
        grade: Its full grade (every criterion), when graded; else the slot's failed lines.
        budget: Characters available for this attempt's values.
        prefix: Anchor prefix (one per configuration in a comparison).
        compact: One line per call (tool, arguments, ok or typed error, rows written) with no
            results or diff tables: how a large run shows its passed attempts.
    """
    state = attempt_state(slot)
    head = (
        f'<article class="trace {state}" id="{prefix}-{index}" data-state="{state}" '
        f'data-task="{escape(slot.task_id)}"><h4>{escape(slot.task_id)} · sample {slot.sample}'
        f' · <span class="st {state}">{state}</span></h4>'
        f'<p class="meta">outcome {escape(slot.outcome or _ABSENT)} · evidence '
        f"{slot.evidence} · {slot.tool_calls} calls · {slot.input_tokens + slot.output_tokens}"
        f" tokens · ${slot.cost:.4f} · {slot.latency_s:.2f} s · <code>{escape(slot.path)}</code>"
        "</p>"
    )
    body = ""
    if record is not None and compact:
        body = f'<ol class="calls">{_items(record, _compact_call, 120)}</ol>'
    elif record is not None:
        limit = max(60, budget // max(1, len(record.calls) + len(record.user_turns) + 1))
        calls = _items(record, lambda c: _call(c, limit), limit)
        body = (
            f'<ol class="calls">{calls}</ol>'
            f'<p class="final">final message: {escape(shorten(record.final_message, limit))}</p>'
        )
    return f"{head}{body}{_criteria(slot, grade)}</article>"
