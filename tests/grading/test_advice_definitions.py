"""The advisories' fast forms equal their plain definitions, written out here as they read.

`hedges` skips the phrase search on an ASCII message that holds no phrase; `repeated_call`
keys calls by the grade's canonical argument JSON; `acted_on_wrong_row` takes a write's
changed fields from the write's one diff; `ended_with_question` looks at the last sentence
only when the message ends with a question mark. Each is held to the definition it replaced,
on random traces of two worlds and on random text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.coverage import load_mutants, record_calls, run_script
from harness_world.engine.calls import WriteImage
from harness_world.engine.values import Key
from harness_world.grading.answers import GUESS_PHRASES, HEDGE_PHRASES, hedge_phrases
from harness_world.grading.rules import advice, advice_task
from harness_world.grading.trace import TraceView, trace_view
from tests.conftest import examples
from tests.strategies import call_sequences, inventory_call_sequences

TASKS = {t.id: t for t in hw.load_tasks()}
WORLDS = {name: hw.load_world(name) for name in ("helpdesk", "inventory")}

_PIECES = st.one_of(
    st.sampled_from([*GUESS_PHRASES, *HEDGE_PHRASES]),
    st.sampled_from(["the answer is 7", ". ", "? ", "\n", "T-1001", "mightn't", "unsureness"]),
    st.text(alphabet="abcdeiklmnoprstuyKS ſİı’é'.?!", max_size=12),
)


@st.composite
def _messages(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(_PIECES, max_size=6))
    cased = [p.upper() if draw(st.booleans()) else p for p in pieces]
    return draw(st.sampled_from([" ", "", ", "])).join(cased)


@settings(max_examples=examples(300, 3000), deadline=None)
@given(message=_messages())
def test_hedges_are_the_answer_checks_phrases(message: str) -> None:
    assert advice.hedges(message) == hedge_phrases(message)


def _repeated_calls(view: TraceView) -> list[int]:
    """Calls repeating an earlier call exactly, no write in between (the definition)."""
    seen: dict[bytes, int] = {}
    found, last_write = [], 0
    for index, call in enumerate(view.log.calls):
        key = msgspec.json.encode([call.tool, call.args], order="sorted")
        if key in seen and last_write <= seen[key]:
            found.append(call.seq)
        seen[key] = index
        if call.writes:
            last_write = index + 1
    return found


def _touched(
    view: TraceView, image: WriteImage, targets: Mapping[str, frozenset[Key]]
) -> Iterator[tuple[str, Key]]:
    """The rows a write touched and those its new string values point to (the definition)."""
    if image.entity in targets:
        yield image.entity, image.key
    key_field = view.world.contract.entity(image.entity).key
    for field, value in (image.after or {}).items():
        if field == key_field or not isinstance(value, str):
            continue
        if (image.before or {}).get(field) == value:
            continue
        for entity in targets:
            if view.world.raw(entity, value) is not None:
                yield entity, value


def _ends_with_question(text: str) -> bool:
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    return (parts[-1] if parts else "").endswith("?")


def _same_as_defined(record: hw.Record, task_id: str, message: str = "") -> None:
    task = TASKS[task_id]
    view = trace_view(record, task, WORLDS[task.world])
    repeated = advice._repeated_call(view)
    assert (repeated.calls if repeated else []) == _repeated_calls(view)
    targets = view.targets_by_entity
    for call in record.calls:
        for image in call.writes:
            fast = list(advice_task._touched_rows(view, image, targets))
            assert fast == list(_touched(view, image, targets)), (call.seq, image)
    assert (advice._ended_with_question(view) is not None) == _ends_with_question(message)


@settings(max_examples=examples(60, 600), deadline=None)
@given(
    made=call_sequences,
    task_id=st.sampled_from(sorted(t for t in TASKS if t.startswith("helpdesk."))),
    message=_messages(),
)
def test_helpdesk_traces_advised_as_defined(
    made: list[tuple[str, Any]], task_id: str, message: str
) -> None:
    task = TASKS[task_id]
    record = record_calls(WORLDS["helpdesk"], task, made, final_message=message)
    _same_as_defined(record, task_id, message)


@settings(max_examples=examples(60, 600), deadline=None)
@given(
    made=inventory_call_sequences,
    task_id=st.sampled_from(sorted(t for t in TASKS if t.startswith("inventory."))),
)
def test_inventory_traces_advised_as_defined(made: list[tuple[str, Any]], task_id: str) -> None:
    task = TASKS[task_id]
    record = record_calls(WORLDS["inventory"], task, made, final_message="Done. Next?")
    _same_as_defined(record, task_id, "Done. Next?")


def test_every_hand_mutant_advised_as_defined() -> None:
    """The mutants touch look-alike rows, repeat calls and write several fields at once."""
    for name, world in WORLDS.items():
        for m in load_mutants(name):
            if m.task_id in TASKS and "small" in m.sizes:
                record = run_script(world, TASKS[m.task_id], m.script)
                _same_as_defined(record, m.task_id, record.final_message)


_VALUES = st.sampled_from(["T-1002", "T-1003", "T-9999", "U-0011", "open", 7, None, ["T-1004"]])


@settings(max_examples=examples(200, 2000), deadline=None)
@given(
    changes=st.dictionaries(
        st.sampled_from(["subject", "status", "owner_id", "group_id", "note", "id"]),
        _VALUES,
        max_size=4,
    ),
    created=st.booleans(),
)
def test_fields_pointing_to_rows_follow_the_row_order(
    changes: dict[str, Any], created: bool
) -> None:
    """A write setting several fields to other rows' keys: each row, in the row's field order."""
    task = TASKS["helpdesk.reply_and_solve"]
    world = WORLDS["helpdesk"]
    record = record_calls(world, task, [("get_ticket", {"ticket_id": "T-1001"})])
    view = trace_view(record, task, world)
    before = world.get("tickets", "T-1001")
    assert before is not None
    image = WriteImage(
        entity="tickets",
        key="T-1001",
        before=None if created else before,
        after={**before, **changes},
    )
    targets = {"tickets": frozenset({"T-1001"}), "users": frozenset({"U-0001"})}
    assert list(advice_task._touched_rows(view, image, targets)) == list(
        _touched(view, image, targets)
    )
