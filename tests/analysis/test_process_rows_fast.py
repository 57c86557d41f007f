"""The process figures equal their definitions, walked naively here call by call.

The reference walks every later call for every row, as docs/metrics.md defines "used",
"verified" and "post-condition checked".
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.analysis.process import process_of
from harness_world.engine.calls import CallRecord, ToolError, WriteImage
from harness_world.evidence import WorldRef
from harness_world.grading.rows import changed_fields
from tests.conftest import examples

_KEYS = st.one_of(
    st.sampled_from(["T-1", "T-2", "C-1", "x", "1", "T-1.5", "a b"]),
    st.integers(min_value=-2, max_value=3),
)
_SCALARS = st.one_of(_KEYS, st.booleans(), st.none(), st.floats(min_value=0, max_value=3))
_ARGS = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)
_ROW = st.fixed_dictionaries({"id": _KEYS}, optional={"status": st.sampled_from(["open", "x"])})
_NOT_A_ROW = st.fixed_dictionaries(  # an id no row has (a bool), holding rows or not
    {"id": st.booleans()}, optional={"inner": st.lists(_ROW, max_size=2), "row": _ROW}
)
_RESULT = st.one_of(
    _ROW,
    st.fixed_dictionaries({"items": st.lists(_ROW, max_size=3), "next_offset": st.none()}),
    st.lists(st.one_of(_ROW, _NOT_A_ROW, st.lists(_ROW, max_size=2)), max_size=3),
    st.fixed_dictionaries({"id": _KEYS, "row": _ROW}),  # a row holding another: one row
    _NOT_A_ROW,
    st.none(),
)
_IMAGE = st.builds(
    WriteImage,
    entity=st.sampled_from(["tickets", "users"]),
    key=_KEYS,
    before=st.none() | _ROW,
    after=st.none() | _ROW,
)


@st.composite
def _calls(draw: st.DrawFn) -> list[CallRecord]:
    calls = []
    for seq in range(1, draw(st.integers(0, 7)) + 1):
        ok = draw(st.booleans())
        writes = draw(st.lists(_IMAGE, max_size=2))
        calls.append(
            CallRecord(
                seq=seq,
                tool="t",
                args=draw(_ARGS),
                ok=ok,
                result=draw(_RESULT) if ok else None,
                error=None if ok else ToolError("refused", "no"),
                writes=writes if ok else [],
            )
        )
    return calls


def _mentions(value: Any, key: Any) -> bool:
    if isinstance(value, dict):
        return any(_mentions(v, key) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_mentions(v, key) for v in value)
    return type(value) is type(key) and value == key


def _rows(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        if isinstance(value.get("id"), str | int) and not isinstance(value.get("id"), bool):
            return [value]
        return [row for v in value.values() for row in _rows(v)]
    if isinstance(value, list):
        return [row for v in value for row in _rows(v)]
    return []


def _reference(calls: list[CallRecord], text: str) -> tuple[int, int]:
    """Every row read, and those whose id a later call or the text names (the definition)."""
    read = used = 0
    for i, call in enumerate(calls):
        if not call.ok:
            continue
        for row in _rows(call.result):
            size = len(msgspec.json.encode(row))
            read += size
            key = row["id"]
            word = re.compile(rf"(?<![\w-]){re.escape(str(key))}(?![\w-])")
            later = calls[i + 1 :]
            if (
                any(_mentions(c.args, key) or any(w.key == key for w in c.writes) for c in later)
                or word.search(text) is not None
            ):
                used += size
    return read, used


def _verifications(calls: list[CallRecord]) -> tuple[int, int, int]:
    """Verified writes, verification calls and checked post-conditions, by their definitions."""
    writes = [i for i, c in enumerate(calls) if c.ok and c.writes]

    def reads_after(i: int) -> list[CallRecord]:
        return [c for c in calls[i + 1 :] if c.ok and not c.writes]

    def named(c: CallRecord, key: Any) -> bool:  # what it returned: an argument shows nothing
        return _mentions(c.result, key)

    verified = sum(
        1 for i in writes if any(named(c, w.key) for c in reads_after(i) for w in calls[i].writes)
    )
    looked = 0
    for i, call in enumerate(calls):
        before = {w.key for c in calls[:i] for w in c.writes}
        if call.ok and not call.writes and any(named(call, k) for k in before):
            looked += 1

    def shows(row: dict[str, Any], image: WriteImage) -> bool:
        before, after = image.before or {}, image.after or {}
        changed = {f for f in before.keys() | after.keys() if before.get(f) != after.get(f)}
        wrote = all(f in after and f in row and row[f] == after[f] for f in changed)
        return row.get("id") == image.key and wrote

    checked = sum(
        1
        for i in writes
        if any(
            shows(row, w)
            for c in reads_after(i)
            for row in _rows(c.result)
            for w in calls[i].writes
            if w.after is not None
        )
    )
    return verified, looked, checked


def _record(calls: list[CallRecord], text: str) -> hw.Record:
    return hw.Record(
        world=WorldRef(name="helpdesk", size="small", hash="h", contract_hash="c"),
        calls=calls,
        final=[],
        outcome=hw.Outcome(status="completed"),
        final_message=text,
    )


def _backtracked(calls: list[CallRecord]) -> tuple[int, int, int]:
    """Write calls, those a later call changed again or deleted, and those that created or
    deleted a row, by their definitions (docs/metrics.md)."""
    writes = [i for i, c in enumerate(calls) if c.ok and c.writes]
    backtracked = 0
    for i in writes:
        later = [w for c in calls[i + 1 :] for w in c.writes]
        backtracked += any(
            (v.entity, v.key) == (w.entity, w.key)
            and (v.after is None or set(changed_fields(v.before, v.after)) & set(changed))
            for w in calls[i].writes
            for changed in [changed_fields(w.before, w.after)]
            for v in later
        )
    irreversible = sum(
        1 for i in writes if any(w.before is None or w.after is None for w in calls[i].writes)
    )
    return len(writes), backtracked, irreversible


@settings(max_examples=examples(200, 3000), deadline=None)
@given(calls=_calls(), text=st.sampled_from(["", "done T-1", "x; 1 and T-1.5", "a b", "T-12"]))
def test_rows_used_follow_their_definition(calls: list[CallRecord], text: str) -> None:
    figures = process_of(_record(calls, text))
    assert (figures.rows_read_bytes, figures.rows_used_bytes) == _reference(calls, text)
    found = (figures.verified, figures.verification_calls, figures.postcondition_checked)
    assert found == _verifications(calls)
    found = (figures.write_calls, figures.backtracked, figures.irreversible)
    assert found == _backtracked(calls)


@st.composite
def _written_then_read(draw: st.DrawFn) -> list[CallRecord]:
    """Calls, then reads returning rows the calls wrote: as written, altered or repeated.

    A read showing a write is rare among random calls; here every later read holds written
    ids, so the checked post-conditions (one row per id or several) are exercised.
    """
    calls = draw(_calls())
    rows = [w.after for c in calls for w in c.writes if w.after is not None]
    if not rows:
        return calls
    for seq in range(len(calls) + 1, len(calls) + 1 + draw(st.integers(1, 3))):
        shown = []
        for row in draw(st.lists(st.sampled_from(rows), min_size=1, max_size=4)):
            changed = draw(st.sampled_from([None, "open", "x", "closed"]))
            shown.append(row if changed is None else {**row, "status": changed})
        calls.append(CallRecord(seq=seq, tool="t", args={}, ok=True, result=shown, writes=[]))
    return calls


@settings(max_examples=examples(200, 3000), deadline=None)
@given(calls=_written_then_read())
def test_reads_of_written_rows_follow_the_definitions(calls: list[CallRecord]) -> None:
    figures = process_of(_record(calls, ""))
    found = (figures.verified, figures.verification_calls, figures.postcondition_checked)
    assert found == _verifications(calls)
    assert (figures.rows_read_bytes, figures.rows_used_bytes) == _reference(calls, "")


def test_a_record_read_for_viewing_gives_the_same_figures() -> None:
    """Results left as undecoded JSON (the viewer's trace form) are searched as their text:
    every helpdesk oracle's and mutant's figures equal its decoded record's."""
    from harness_world.analysis.trace_record import decode_trace
    from harness_world.coverage import load_mutants, load_oracles, run_script
    from harness_world.evidence.record import encode_record

    world = hw.load_world("helpdesk")
    tasks = {t.id: t for t in hw.load_tasks("helpdesk")}
    scripts = list(load_oracles("helpdesk").items())
    scripts += [(m.task_id, m.script) for m in load_mutants("helpdesk")]
    for task_id, script in scripts:
        record = run_script(world, tasks[task_id], script)
        trace = decode_trace(encode_record(record))
        assert trace is not None
        assert process_of(trace) == process_of(record), task_id
