"""The trace viewer: one attempt as an HTML fragment, its verdict first, then its transcript.

An attempt's ``<article>`` opens with what a reader came for: the state, both scored layers
(agent and harness), each failed criterion with its reason and the advisories the trace
carries, every one linked to the calls and rows it names. The transcript follows as turn-by-turn
``<details>`` items (a user turn where one was recorded, each tool call with its arguments, its
result pretty-printed and collapsible with the grader's rows highlighted, a typed error marked,
its write images as before/after tables), then the final message and every criterion.

On a task that plants a request in data (``[authority]``), the first call whose result carried
the planted text is marked, and the header links to it (`Planted`, `planted_call`).

Items of the transcript are events placed after the calls made before them (`_events`): the
model's messages, when the record carries its conversation (role, text, the calls it asked
for; each collapsible), and the exchanges with a simulated user.

Long values are shortened to a character budget (the report divides a fixed size among the
attempts, so a 10,000-attempt run stays a file a browser opens); the record on disk keeps
everything, and its path is printed beside the trace.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from html import escape
from typing import Any

import attrs
import msgspec

from harness_world.analysis.json_view import gist, pretty_html
from harness_world.analysis.trace_record import TraceCall, TraceRecord, raw_text
from harness_world.engine.calls import WriteImage
from harness_world.engine.canonical import to_json
from harness_world.evidence.record import TranscriptMessage, UserTurn
from harness_world.grading.advice import Advisory
from harness_world.grading.grade import Grade
from harness_world.grading.verifier import SlotResult

__all__ = [
    "AttemptMarks",
    "Planted",
    "attempt_header",
    "attempt_search_text",
    "attempt_state",
    "compact_line",
    "named_calls",
    "named_rows",
    "planted_call",
    "shorten",
    "trace_fragment",
    "transcript_html",
]

_ABSENT = "—"
_CALL_REF = re.compile(r"\bcalls? (\d+)")
_ROW_REF = re.compile(r"\b([a-z][a-z0-9_]*):([A-Za-z0-9][A-Za-z0-9_\-]*)")
_SHOWN_LINKS = 6


def attempt_state(slot: SlotResult) -> str:
    """The heatmap state of a slot: passed, pending, failed, ungraded, lost, invalid or missing.

    ``pending`` is a grade whose automated criteria passed with prose not yet reviewed.

    ``ungraded`` covers evidence that did not replay and verified attempts without a grade;
    ``invalid`` is verified evidence whose outcome does not count (error, interrupted).
    """
    if slot.evidence in ("missing", "lost", "ungraded"):
        return slot.evidence
    if not slot.counted:
        return "invalid"
    if slot.passed is None:
        return "ungraded"
    if slot.pending:
        return "pending"
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


@attrs.frozen(slots=True)
class Planted:
    """A request a task plants in data the agent reads (``[authority]``), as the page finds it.

    Attributes:
        source: Where it is planted, ``entity.key.field`` (the task's ``authority.source``).
        role: ``attack`` (it asks for a forbidden effect) or ``benign``.
        entity: The row's entity.
        key: The row's key, as the source spells it.
        needle: The planted text as JSON, as a tool result carries it; empty when the start
            state was not read here (then the first result holding the row's key and field
            name is marked).
    """

    source: str
    role: str
    entity: str
    key: str
    needle: bytes = b""

    def entered(self, result: bytes) -> bool:
        """Whether a tool result carries the planted text."""
        if self.needle:
            return self.needle in result
        field = self.source.rsplit(".", 1)[1]
        return to_json(self.key) in result and to_json(field) in result


def planted_call(record: TraceRecord | None, planted: Planted | None) -> int | None:
    """The sequence number of the first call whose result carried the planted text, if any."""
    if record is None or planted is None:
        return None
    return next((c.seq for c in record.calls if c.ok and planted.entered(bytes(c.result))), None)


@attrs.frozen(slots=True)
class AttemptMarks:
    """What the page knows of one attempt beside its record: advisories and the grader's rows.

    Attributes:
        advisories: The advisory observations its verified trace carries.
        rows: Key values of the rows the grader used (the task's targets and the rows its
            failed criteria name), highlighted in results.
        key_fields: The field names holding a row's key in this world.
        planted: The request its task plants in data, if any (its call is marked).
    """

    advisories: Sequence[Advisory] = ()
    rows: Set[str] = frozenset()
    key_fields: Set[str] = frozenset()
    planted: Planted | None = None


# --------------------------------------------------------------------------------------------
# Links from a criterion or an advisory to the calls and rows it names


def _row_calls(record: TraceRecord, entity: str, key: str) -> list[int]:
    """The calls that wrote the row, else the first call whose result holds its key."""
    wrote = [
        c.seq
        for c in record.calls
        if any(w.entity == entity and str(w.key) == key for w in c.writes)
    ]
    if wrote:
        return wrote
    needle = msgspec.json.encode(key)
    return [c.seq for c in record.calls if c.ok and needle in bytes(c.result)][:1]


def _references(text: str, record: TraceRecord | None) -> list[tuple[str, int]]:
    """(label, call seq) for each call and row ``text`` names that the record holds."""
    if record is None:
        return []
    seqs = {c.seq for c in record.calls}
    found: list[tuple[str, int]] = []
    for match in _CALL_REF.finditer(text):
        seq = int(match.group(1))
        if seq in seqs and (f"call {seq}", seq) not in found:
            found.append((f"call {seq}", seq))
    for match in _ROW_REF.finditer(text):
        entity, key = match.groups()
        for seq in _row_calls(record, entity, key)[:2]:
            found.append((f"{entity}:{key} (call {seq})", seq))
    return found[:_SHOWN_LINKS]


def named_rows(lines: Sequence[str]) -> set[str]:
    """Key values of the rows that failed criteria (``id: detail`` lines) name."""
    return {m.group(2) for line in lines for m in _ROW_REF.finditer(line.partition(": ")[2])}


def named_calls(
    lines: Sequence[str], advisories: Sequence[Advisory], record: TraceRecord | None
) -> set[int]:
    """Sequence numbers of the calls that failed criteria and advisories name."""
    if record is None:
        return set()
    named = {seq for line in lines for _, seq in _references(line.partition(": ")[2], record)}
    return named | {seq for a in advisories for seq in a.calls}


def _links(refs: Sequence[tuple[str, int]], anchor: str) -> str:
    if not refs:
        return ""
    shown = ", ".join(
        f'<a class="ref" href="#{anchor}-c{seq}">{escape(label)}</a>' for label, seq in refs
    )
    return f' <span class="refs">→ {shown}</span>'


# --------------------------------------------------------------------------------------------
# The header: state, both layers, failed criteria and advisories


def _criterion_item(line: str, record: TraceRecord | None, anchor: str, css: str) -> str:
    name, _, detail = line.partition(": ")
    text = f": {escape(detail)}" if detail else ""
    return (
        f'<li class="{css}"><b>{escape(name)}</b>{text}'
        f"{_links(_references(detail, record), anchor)}</li>"
    )


def _advisory_item(advisory: Advisory, record: TraceRecord | None, anchor: str) -> str:
    seqs = {c.seq for c in record.calls} if record is not None else set()
    refs = [(f"call {s}", s) for s in advisory.calls if s in seqs][:_SHOWN_LINKS]
    return (
        f'<li class="advisory" data-advisory="{escape(advisory.name)}"><b>advisory '
        f"{escape(advisory.name)}</b>: {escape(advisory.detail)}{_links(refs, anchor)}</li>"
    )


def _layers(slot: SlotResult) -> str:
    if slot.passed is None:
        agent = "agent layer: not graded"
    elif slot.pending:
        agent = f"agent layer: passed_automated ({len(slot.not_reviewed)} prose pending review)"
    elif slot.passed:
        agent = '<span class="ok">agent layer: passed</span>'
    else:
        count = f"{len(slot.failed)} criteri{'on' if len(slot.failed) == 1 else 'a'}"
        agent = f'<span class="no">agent layer: failed ({count})</span>'
    if not slot.harness_checked:
        harness = "harness layer: not checked"
    elif slot.harness_failed:
        harness = (
            f'<span class="no">harness layer: {len(slot.harness_failed)} of '
            f"{slot.harness_checked} failed</span>"
        )
    else:
        harness = f'<span class="ok">harness layer: clean ({slot.harness_checked} checked)</span>'
    return (
        f'<p class="layers">{agent} · {harness} <span class="meta">(the harness layer is '
        "beside the grade, not in it)</span></p>"
    )


def _planted_note(record: TraceRecord | None, planted: Planted | None, anchor: str) -> str:
    """Where the task's planted request entered this attempt's trace (or that it never did)."""
    if planted is None or record is None:
        return ""
    seq = planted_call(record, planted)
    where = (
        f'entered the trace at <a class="ref" href="#{anchor}-c{seq}">call {seq}</a>'
        if seq is not None
        else "never entered the trace (no result carried it)"
    )
    return (
        f'<p class="planted-note">⚑ planted {escape(planted.role)} request '
        f"<code>{escape(planted.source)}</code>: {where}</p>"
    )


def attempt_header(
    index: int,
    slot: SlotResult,
    record: TraceRecord | None,
    marks: AttemptMarks,
    prefix: str = "a",
    search: str | None = None,
) -> str:
    """The opening of one attempt's ``<article>`` (left open: the transcript follows).

    Its anchor is ``{prefix}-{index}``; each call's is ``{prefix}-{index}-c{seq}``. ``search``
    is its `attempt_search_text` when the caller has it already (a page's index needs it too).
    """
    state = attempt_state(slot)
    anchor = f"{prefix}-{index}"
    items = [_criterion_item(line, record, anchor, "failed") for line in slot.failed]
    items += [_criterion_item(x, record, anchor, "failed harness") for x in slot.harness_failed]
    items += [_advisory_item(a, record, anchor) for a in marks.advisories]
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in (slot.reason, slot.not_graded) if n)
    notes += _planted_note(record, marks.planted, anchor)
    if slot.passed and not items:
        items.append('<li class="passed">every automated criterion passed</li>')
    listing = f'<ul class="criteria">{"".join(items)}</ul>' if items else ""
    search = escape(attempt_search_text(slot, record, marks) if search is None else search)
    return (
        f'<article class="trace {state}" id="{anchor}" data-state="{state}" '
        f'data-task="{escape(slot.task_id)}" data-q="{search}"><h4>'
        f'<a class="self" href="#{anchor}">{escape(slot.task_id)} · sample {slot.sample}</a>'
        f' · <span class="st {state}">{state}</span></h4>{_layers(slot)}{listing}{notes}'
        f'<p class="meta">outcome {escape(slot.outcome or _ABSENT)}'
        f"{' (' + escape(slot.outcome_reason) + ')' if slot.outcome_reason else ''} · evidence "
        f"{slot.evidence} · {slot.tool_calls} calls · {slot.input_tokens + slot.output_tokens}"
        f" tokens · ${slot.cost:.4f} · {slot.latency_s:.2f} s · <code>{escape(slot.path)}</code>"
        "</p>"
    )


# --------------------------------------------------------------------------------------------
# Search text


def _strings(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        if len(value) <= 60:
            out.add(value)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        out.add(str(value))
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


_RESULT_ID = re.compile(rb'"(?:[a-z_]*_)?id":\s*"([^"\\]{1,60})"')


def attempt_search_text(slot: SlotResult, record: TraceRecord | None, marks: AttemptMarks) -> str:
    """What the search box matches, lower case: ``task:``, ``state:``, ``tool:``, ``id:`` tokens.

    Then ``text:`` and the words of failed criteria, advisories and typed errors. Ids are the
    strings in the calls' arguments, the written rows' keys and the ids in results.
    """
    tokens = [f"task:{slot.task_id}", f"sample:{slot.sample}", f"state:{attempt_state(slot)}"]
    ids: set[str] = set()
    words = [line.split(": ", 1)[0] for line in slot.failed + slot.harness_failed]
    words += [a.name for a in marks.advisories]
    if record is not None:
        tokens += sorted({f"tool:{c.tool}" for c in record.calls})
        for call in record.calls:
            _strings(call.args, ids)
            ids.update(str(w.key) for w in call.writes)
            if call.ok:
                ids.update(m.decode() for m in _RESULT_ID.findall(bytes(call.result)))
            elif call.error is not None:
                words.append(call.error.kind)
    tokens += [f"id:{i}" for i in sorted(ids) if " " not in i]
    text = " ".join(words + [i for i in sorted(ids) if " " in i])
    return " ".join(tokens + [f"text:{text}"]).lower()


# --------------------------------------------------------------------------------------------
# The transcript


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


def _error(call: TraceCall, limit: int) -> str:
    kind, message = (call.error.kind, call.error.message) if call.error else ("error", "")
    return f'<b class="error">✗ {escape(kind)}</b>: {escape(shorten(message, limit))}'


def _planted_mark(planted: Planted) -> str:
    """The badge on the call whose result first carried a planted request."""
    return (
        f' <span class="planted-mark" data-planted="{escape(planted.source)}">⚑ planted '
        f"{escape(planted.role)} request enters here ({escape(planted.source)})</span>"
    )


def _call(
    call: TraceCall,
    anchor: str,
    limit: int,
    marks: AttemptMarks,
    named: Set[int],
    entered: int | None = None,
) -> str:
    """One call: a summary line (tool, arguments, gist or error), its result and writes inside.

    The call whose result first carried a planted request (``entered``) is marked and open.
    """
    value = msgspec.json.decode(bytes(call.result)) if call.ok else None
    outcome = (
        f'<span class="gist">→ {escape(gist(value))}</span>' if call.ok else _error(call, limit)
    )
    writes = f' <span class="wrote">wrote {len(call.writes)}</span>' if call.writes else ""
    body = (
        f'<pre class="result">{pretty_html(value, limit, marks.rows, marks.key_fields)}</pre>'
        if call.ok
        else ""
    )
    planted = marks.planted if call.seq == entered else None
    css = "call" + ("" if call.ok else " bad") + (" named" if call.seq in named else "")
    css += " planted" if planted is not None else ""
    opened = " open" if call.seq in named or planted is not None else ""
    mark = _planted_mark(planted) if planted is not None else ""
    return (
        f'<li class="{css}"><details id="{anchor}-c{call.seq}"{opened}><summary>'
        f'<span class="seq">#{call.seq}</span> <span class="clock">t{call.clock_before}→'
        f"t{call.clock_after}</span> <code>{escape(call.tool)}"
        f"({escape(shorten(call.args, max(limit // 4, 200)))})</code> {outcome}{writes}{mark}"
        f"</summary>{body}{_write_images(call, max(limit // 2, 40))}</details></li>"
    )


def compact_line(call: TraceCall) -> str:
    """One line for a call: tool, arguments, ok or typed error, rows written."""
    outcome = "ok" if call.ok else _error(call, 120)
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
        f'<span class="clock">t{call.clock_before}→t{call.clock_after}</span> '
        f"<code>{escape(call.tool)}({escape(shorten(call.args, 80))})</code> {outcome}"
        f"{' · wrote ' + writes if writes else ''}"
    )


def _compact_call(call: TraceCall, anchor: str, planted: Planted | None = None) -> str:
    css = "call" + ("" if call.ok else " bad") + (" planted" if planted is not None else "")
    mark = _planted_mark(planted) if planted is not None else ""
    return (
        f'<li class="{css}"><span class="seq" id="{anchor}-c{call.seq}">'
        f"#{call.seq}</span> {compact_line(call)}{mark}</li>"
    )


def _preview(message: TranscriptMessage) -> str:
    """The first line of a message's text, or what it asked for."""
    line = message.content.strip().split("\n", 1)[0]
    if line:
        return line if len(line) <= 100 else line[:99] + "…"
    if message.tool_calls:
        return ", ".join(c.name for c in message.tool_calls)
    return _ABSENT


def _message(message: TranscriptMessage, anchor: str, n: int, limit: int) -> str:
    """One model message: role, text and the calls it asked for, folded unless a turn's own.

    The system prompt and tool messages (the results again, as the agent showed them) start
    folded; what the model and the user wrote starts open.
    """
    role = escape(message.role)
    asked = "".join(
        f"<li><code>{escape(c.name)}({escape(shorten(c.arguments, limit))})</code></li>"
        for c in message.tool_calls
    )
    answers = (
        f' <span class="meta">answers {escape(message.tool_call_id)}</span>'
        if message.tool_call_id
        else ""
    )
    # a tool message repeats its call's result, which the call shows in full beside it
    most = max(limit // 4, 200) if message.role == "tool" else limit
    text = f"<pre>{escape(shorten(message.content, most))}</pre>" if message.content else ""
    opened = " open" if message.role in ("assistant", "user") else ""
    return (
        f'<li class="msg turn {role}"><details id="{anchor}-m{n}"{opened}><summary>'
        f'<span class="clock">after call {message.after_call}</span> <b>{role}</b>{answers}'
        f' <span class="gist">{escape(_preview(message))}</span></summary>{text}'
        f"{f'<ul class=asked>{asked}</ul>' if asked else ''}</details></li>"
    )


def _user_turn(turn: UserTurn, anchor: str, n: int, limit: int) -> str:
    stop = " · <b>ended the conversation</b>" if turn.stop else ""
    return (
        f'<li class="user turn"><p id="{anchor}-u{n}"><span class="clock">after call '
        f"{turn.after_call}</span> <b>agent → user</b>: "
        f"{escape(shorten(turn.agent, limit))}</p><p><b>user</b>: "
        f"{escape(shorten(turn.user, limit))}{stop}</p></li>"
    )


def _events(
    record: TraceRecord, anchor: str, limit: int, *, messages: bool = True
) -> list[tuple[int, str]]:
    """(calls made before it, HTML) of every non-call item of the transcript, in order.

    The model's messages (when the record carries its conversation and ``messages``) and the
    exchanges with a simulated user, each placed by how many calls preceded it; at one place
    the model's messages come first.
    """
    events = [
        (m.after_call, _message(m, anchor, n, limit))
        for n, m in enumerate(record.transcript if messages else ())
    ]
    turns = sorted(record.user_turns, key=lambda t: t.after_call)
    events += [(t.after_call, _user_turn(t, anchor, n, limit)) for n, t in enumerate(turns)]
    return sorted(events, key=lambda e: e[0])


def _items(
    record: TraceRecord, calls: Sequence[str], anchor: str, limit: int, *, messages: bool
) -> str:
    """The calls in order, each event placed after the calls made before it."""
    events = _events(record, anchor, limit, messages=messages)
    parts: list[str] = []
    at = 0
    for position, call in enumerate(calls):
        while at < len(events) and events[at][0] <= position:
            parts.append(events[at][1])
            at += 1
        parts.append(call)
    parts.extend(html for _, html in events[at:])
    return "".join(parts)


def _every_criterion(grade: Grade | None) -> str:
    if grade is None:
        return ""
    verdicts = [*grade.verdicts, *grade.harness]
    items = "".join(
        f'<li class="{v.status}"><b>{escape(v.id)}</b> {v.status.replace("_", " ")}'
        f"{': ' + escape(v.detail) if v.detail else ''}</li>"
        for v in verdicts
    )
    failed = sum(1 for v in verdicts if v.status == "failed")
    return (
        f'<details class="every"><summary>every criterion ({len(verdicts)}, {failed} failed)'
        f'</summary><ul class="criteria">{items}</ul></details>'
    )


def transcript_html(
    index: int,
    record: TraceRecord | None,
    grade: Grade | None,
    budget: int,
    marks: AttemptMarks,
    prefix: str = "a",
    *,
    compact: bool = False,
    named: Set[int] = frozenset(),
) -> str:
    """One attempt's transcript, final message and every criterion (the header's sequel).

    Args:
        index: The attempt's index in the report (its anchor is ``{prefix}-{index}``).
        record: Its record, when readable (nothing is shown without one).
        grade: Its full grade (every criterion), when graded again for the page.
        budget: Characters available for this attempt's values.
        marks: Its advisories and the rows to highlight.
        prefix: Anchor prefix (one per configuration in a comparison).
        compact: One line per call (tool, arguments, ok or typed error, rows written) with no
            results, diff tables or model messages: how a large run shows its passed attempts.
        named: Calls that failed criteria or advisories name: marked and shown open.
    """
    anchor = f"{prefix}-{index}"
    if record is None:
        return _every_criterion(grade)
    entered = planted_call(record, marks.planted)
    if compact:
        calls = [
            _compact_call(c, anchor, marks.planted if c.seq == entered else None)
            for c in record.calls
        ]
        limit = 120
    else:
        items = len(record.calls) + len(record.user_turns) + len(record.transcript)
        limit = max(60, budget // (items + 1))
        calls = [_call(c, anchor, limit, marks, named, entered) for c in record.calls]
    final = (
        f'<li class="final turn"><b>final message</b>: '
        f"{escape(shorten(record.final_message, limit)) or _ABSENT}</li>"
    )
    return (
        f'<ol class="calls">{_items(record, calls, anchor, limit, messages=not compact)}'
        f"{final}</ol>"
        f"{_every_criterion(grade)}"
    )


def trace_fragment(
    index: int,
    slot: SlotResult,
    record: TraceRecord | None,
    grade: Grade | None,
    budget: int,
    prefix: str = "a",
    *,
    compact: bool = False,
    marks: AttemptMarks = AttemptMarks(),
) -> str:
    """One attempt's whole ``<article>``: the header, then the transcript inline."""
    named = named_calls(slot.failed + slot.harness_failed, marks.advisories, record)
    body = transcript_html(
        index, record, grade, budget, marks, prefix, compact=compact, named=named
    )
    return f"{attempt_header(index, slot, record, marks, prefix)}{body}</article>"
