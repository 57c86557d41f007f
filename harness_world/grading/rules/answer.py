"""Answer criteria: the answer the final message states, and what the agent told the user.

``trace.answer`` reads a typed, unhedgeable answer (`harness_world.grading.answers`) and then
asks whether this attempt's tool results support it (grounding: a right answer alone may be
remembered, since the world is the same in every attempt). ``communicate.info`` looks for the
strings a task requires told to the user.
"""

from __future__ import annotations

from typing import Any

from harness_world.engine.canonical import to_json
from harness_world.engine.world import Key
from harness_world.grading.answers import IdAnswer, judge
from harness_world.grading.briefing import briefing
from harness_world.grading.criteria import Check
from harness_world.grading.grade import CriterionVerdict
from harness_world.grading.rules.common import show, taxon
from harness_world.grading.task import Answer
from harness_world.grading.trace import TraceView

__all__ = ["ENTRIES", "expected_answer"]


def _answer(view: TraceView) -> CriterionVerdict:
    """The expected answer, derived from the start state, is the only one the message states."""
    answer = view.task.answer
    assert answer is not None
    keys = view.target_keys(answer.target)
    entity = view.task.target(answer.target).entity
    world = view.world
    ids = IdAnswer(
        targets=frozenset(str(k) for k in keys),
        is_row=lambda token: world.raw(entity, token) is not None,
    )
    expected = expected_answer(view, answer, keys)
    judgement = judge(
        answer.kind,
        view.record.final_message,
        expected,
        instruction=briefing(view.task),
        structured_only=answer.read == "structured",
        ids=ids,
    )
    unseen = _ungrounded(view, answer, keys, expected) if judgement.ok else None
    return CriterionVerdict(
        id="trace.answer",
        kind="trace",
        status="passed" if judgement.ok and unseen is None else "failed",
        detail=judgement.detail if unseen is None else f"{judgement.detail}, but {unseen}",
    )


_GUESS = "no tool result of this attempt showed it: an answer must come from what was read"


def _unseen_ids(view: TraceView, keys: tuple[Key, ...]) -> str | None:
    """The target ids no result showed, named (None: every one was shown)."""
    shown = view.shown
    unseen = [
        str(k)
        for k in keys
        if shown.first(to_json(k)) is None and shown.first(to_json(str(k))) is None
    ]
    return f"{show(unseen)} ({_GUESS})" if unseen else None


def _unseen_date(view: TraceView, expected: Any) -> str | None:
    prefix = to_json(str(expected))[:-1]
    if view.shown.find(prefix[1:], lambda value: value.startswith(prefix)) is None:
        return f"the date {_GUESS}"
    return None


def _underived(view: TraceView, answer: Answer, keys: tuple[Key, ...], expected: Any) -> str | None:
    """Why a count, amount or yes/no rests on nothing returned (None: it rests on rows)."""
    entity = view.task.target(answer.target).entity
    unread = [k for k in keys if (entity, k) not in view.first_returned]
    if answer.kind == "yes_no":
        return None if not keys or len(unread) < len(keys) else f"no target row ({_GUESS})"
    values = [to_json(expected)]
    if isinstance(expected, float) and expected.is_integer():
        values.append(to_json(int(expected)))
    if not unread or any(view.shown.first(v) is not None for v in values):
        return None
    return f"neither the value nor every target row ({_GUESS})"


def _ungrounded(
    view: TraceView, answer: Answer, keys: tuple[Key, ...], expected: Any
) -> str | None:
    """Why a right answer is a guess, or None when the attempt's tool results support it.

    Ids are the same in every fresh session and a task's answer is the same in every attempt
    of it, so a right answer alone may be remembered or guessed. Every answer needs a
    successful call. An id or date the answer states must be a value some tool result of this
    attempt showed (`harness_world.grading.shown`: never an echo of an argument, a pagination
    field or an error's text). A derived answer (a count, an amount, yes/no) must rest on what
    was returned: its value itself shown (a listing's ``total``), or every target row returned
    whole (a "none" read from nowhere is a guess too).
    """
    why = None
    if answer.kind == "ids":
        why = _unseen_ids(view, keys)
    elif answer.kind == "date":
        why = _unseen_date(view, expected)
    if why is None and not any(call.ok for call in view.record.calls):
        why = f"no tool call succeeded ({_GUESS})"
    if why is not None or answer.kind in ("ids", "date"):
        return why
    return _underived(view, answer, keys, expected)


def expected_answer(view: TraceView, answer: Answer, keys: tuple[Key, ...]) -> Any:
    """The expected value: a count, an amount, a date or yes/no (ids compare the keys)."""
    kind = answer.kind
    if kind == "count":
        return len(keys)
    if kind == "yes_no":
        return bool(keys)
    if kind == "ids":
        return sorted(str(k) for k in keys)
    entity = view.task.target(answer.target).entity
    values = [(view.world.get(entity, k) or {}).get(answer.field) for k in keys]
    present = [v for v in values if v is not None]
    if kind == "amount":
        return round(sum(float(v) for v in present), 2)
    dates = sorted(str(v)[:10] for v in present)
    if not dates:
        return ""
    return dates[-1] if answer.pick == "latest" else dates[0]


def _communicate(view: TraceView) -> CriterionVerdict:
    """Every string the task requires told to the user, found in one of the agent's messages.

    The agent's messages are what it said to the user (each recorded user turn) and its final
    message. A string is found when its lower case is a substring of a message's lower case
    with the message's commas removed, the rule the public conversational benchmarks grade
    the information an agent must communicate by.
    """
    record = view.record
    said = [turn.agent for turn in record.user_turns] + [record.final_message]
    plain = [text.lower().replace(",", "") for text in said]
    wanted = view.task.communicate
    missing = [info for info in wanted if not any(info.lower() in m for m in plain)]
    detail = (
        f"told the user all {len(wanted)} required piece(s) of information"
        if not missing
        else "never told the user: " + "; ".join(repr(m) for m in missing)
    )
    return CriterionVerdict(
        id="communicate.info",
        kind="trace",
        status="failed" if missing else "passed",
        detail=detail,
    )


ENTRIES = (
    Check[TraceView](
        name="trace.answer",
        verdict="trace",
        layer="agent",
        definition="the answer is missing, wrong, hedged, or not grounded in this "
        "attempt's tool results; the detail names the hedge or the values read",
        run=lambda view: [_answer(view)],
        taxon=taxon("Observability", "grounded_answer"),
        when=lambda task: task.answer is not None,
    ),
    Check[TraceView](
        name="communicate.info",
        verdict="trace",
        layer="agent",
        definition="a string the task requires told to the user is in none of the agent's "
        "messages (lower case, commas removed)",
        run=lambda view: [_communicate(view)],
        taxon=taxon("Observability", "user_report"),
        when=lambda task: bool(task.communicate),
    ),
)
"""The answer criteria, in grading order."""
