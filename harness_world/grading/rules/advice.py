"""Advisories about the calls: patterns in the trace that often explain a failure.

An advisory never decides pass or fail and a passing attempt can carry one. Where an advisory
is about the behaviour a criterion judges, it reads the criterion's facet of the trace view:
``write_without_read`` the same blind writes as ``trace.read_before_write`` (over every row the
agent wrote, derived rows exempt), ``unfollowed_page`` the same pages left behind as
``trace.pages_followed``, ``ungrounded_write`` the writes ``trace.grounded_writes`` fails.
"""

from __future__ import annotations

import re
from typing import Any

from harness_world.grading.answers import GUESS_PHRASES, HEDGE_PHRASES, hedge_phrases
from harness_world.grading.criteria import AdviceRule, Advisory
from harness_world.grading.rules.grounded import ungrounded_writes
from harness_world.grading.trace import TraceView

__all__ = [
    "ANSWERED_WITHOUT_READING",
    "EMPTY_FINAL_MESSAGE",
    "ENDED_WITH_QUESTION",
    "HEDGED_ANSWER",
    "NO_WRITES",
    "REFUSED_CALLS",
    "REPEATED_CALL",
    "STOPPED_NEAR_BUDGET",
    "UNFOLLOWED_PAGE",
    "UNGROUNDED_WRITE",
    "WRITE_WITHOUT_READ",
    "found",
    "hedges",
]

_SHOWN = 4


def found(name: str, items: list[tuple[int, str]]) -> Advisory | None:
    """An advisory naming the calls concerned (None when nothing was found)."""
    if not items:
        return None
    shown = "; ".join(text for _, text in items[:_SHOWN])
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return Advisory(name=name, detail=shown + more, calls=[seq for seq, _ in items])


def hedges(message: str) -> list[str]:
    """The hedging phrases of a message (probably, I think, not sure, ...), sorted.

    The answer check's phrases (`harness_world.grading.answers.hedge_phrases`): in the
    sentence that states an answer they fail it; here they are reported wherever they occur.
    """
    # ASCII text matches an (ASCII) phrase regardless of case only where its lower case holds
    # the phrase: a message holding none is searched no further (most say none).
    if message.isascii():
        lowered = message.lower()
        if not any(phrase in lowered for phrase in _PHRASES):
            return []
    return hedge_phrases(message)


_PHRASES = tuple(p.lower() for p in (*GUESS_PHRASES, *HEDGE_PHRASES))


def _unfollowed_page(view: TraceView) -> Advisory | None:
    if view.target_atoms and not view.unread_targets:
        return None  # every target was returned: a page left behind hid none
    items = []
    for page in view.pages_left_behind:
        of = f" of {page.total}" if page.total is not None else ""
        items.append((page.seq, f"call {page.seq} {page.tool}: next_offset {page.next_offset}{of}"))
    return found("unfollowed_page", items)


def _no_writes(view: TraceView) -> Advisory | None:
    calls = view.log.calls
    if not view.task.require or any(call.writes for call in calls):
        return None
    return Advisory(
        name="no_writes",
        detail=f"{len(view.task.require)} required effect(s), {len(calls)} call(s), no write",
    )


def _write_without_read(view: TraceView) -> Advisory | None:
    return found(
        "write_without_read",
        [
            (w.seq, f"call {w.seq} {w.tool} wrote {w.entity}:{w.key} unread")
            for w in view.blind_writes
        ],
    )


def _ungrounded_write(view: TraceView) -> Advisory | None:
    return found("ungrounded_write", list(view.once(ungrounded_writes)))


def _ids(args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        return {}
    return {k: v for k, v in args.items() if k.endswith("_id") or k == "id"}


def _refused_calls(view: TraceView) -> Advisory | None:
    items: list[tuple[int, str]] = []
    calls = view.log.calls
    if not view.log.errored:
        return None  # no call failed: nothing to recover, no read to reconcile
    looks = view.reconciliation
    for i, call in enumerate(calls):
        if call.ok or call.error is None:
            continue
        # A malformed call's ids may be what was wrong: any later success of the tool recovers
        # it; otherwise the same tool must later succeed on the same ids. A lost response may
        # have committed: a later read that looked it up (`harness_world.grading.reconcile`),
        # which shows whether it did, recovers it too (sending it again would be the mistake).
        ids = None if call.error.kind == "invalid_arguments" else _ids(call.args)
        looked = call.error.kind == "timeout" and call.tool in looks.writes
        recovered = any(
            (later.ok and later.tool == call.tool and (ids is None or _ids(later.args) == ids))
            or (looked and looks.looks_up(i, k))
            for k, later in enumerate(calls[i + 1 :], start=i + 1)
        )
        if not recovered:
            items.append((call.seq, f"call {call.seq} {call.tool}: {call.error.kind}"))
    return found("refused_calls", items)


def _ended_with_question(view: TraceView) -> Advisory | None:
    text = view.record.final_message.strip()
    if not text.endswith("?"):  # the last sentence ends where the message ends
        return None
    parts = re.split(r"(?<=[.!?])\s+", text)
    last = parts[-1] if parts else ""
    if not last.endswith("?"):
        return None
    return Advisory(name="ended_with_question", detail=f"final message ends: {last[-120:]!r}")


def _repeated_call(view: TraceView) -> Advisory | None:
    items: list[tuple[int, str]] = []
    calls = view.log.calls
    arguments = view.log.arguments  # canonical JSON, as the grade encoded them
    last_seen: dict[tuple[str, bytes], int] = {}
    last_write = 0
    for index, call in enumerate(calls):
        key = (call.tool, arguments[index])
        earlier = last_seen.get(key)
        if earlier is not None and last_write <= earlier:
            items.append(
                (call.seq, f"call {call.seq} {call.tool} repeats call {calls[earlier].seq}")
            )
        last_seen[key] = index
        if call.writes:
            last_write = index + 1  # a later repeat after this write may learn something new
    return found("repeated_call", items)


def _hedged_answer(view: TraceView) -> Advisory | None:
    said = hedges(view.record.final_message)
    if not said:
        return None
    return Advisory(name="hedged_answer", detail="final message says " + ", ".join(said))


def _near(used: int, budget: int | None) -> bool:
    return budget is not None and used >= budget - max(1, budget // 10)


def _stopped_near_budget(view: TraceView) -> Advisory | None:
    record = view.record
    budgets = view.task.budgets
    calls = len(record.calls)
    if record.outcome.status in ("turn_limit", "budget_limit"):
        detail = f"ended {record.outcome.status}: {record.outcome.reason}"
    elif _near(calls, budgets.tool_calls):
        detail = f"{calls} tool calls of a budget of {budgets.tool_calls}"
    elif _near(record.usage.turns, budgets.turns):
        detail = f"{record.usage.turns} turns of a budget of {budgets.turns}"
    else:
        return None
    return Advisory(name="stopped_near_budget", detail=detail)


def _answered_without_reading(view: TraceView) -> Advisory | None:
    if view.task.answer is None or view.shown.any():
        return None
    calls = view.log.calls
    made = "no call at all"
    if calls:
        made = f"{len(calls)} call(s), none showing anything about the world"
    return Advisory(name="answered_without_reading", detail=f"answered after {made}")


def _empty_final_message(view: TraceView) -> Advisory | None:
    if view.record.final_message.strip():
        return None
    return Advisory(
        name="empty_final_message",
        detail=f"the attempt ended {view.record.outcome.status} with an empty final message",
    )


UNFOLLOWED_PAGE = AdviceRule(
    "unfollowed_page",
    "a listing returned a next_offset that no later call of the same listing (same filters) "
    "asked for, its total not stated, while some target was never returned (the pages "
    "`trace.pages_followed` reads)",
    _unfollowed_page,
)
NO_WRITES = AdviceRule(
    "no_writes", "the task requires effects and no call wrote anything", _no_writes
)
WRITE_WITHOUT_READ = AdviceRule(
    "write_without_read",
    "a call changed an existing row that no earlier successful call had returned whole (the "
    "rule of `trace.read_before_write`, over every row; rows a tool derives are exempt)",
    _write_without_read,
)
UNGROUNDED_WRITE = AdviceRule(
    "ungrounded_write",
    "a write named an id that neither the instruction, the user, nor an earlier tool result "
    "had shown (the rule of `trace.grounded_writes`, reported also where a task switches it "
    "off)",
    _ungrounded_write,
)
REFUSED_CALLS = AdviceRule(
    "refused_calls",
    "a call ended in a typed error and no later call of the same tool "
    "succeeded on the same ids (for invalid arguments: at all; for a write's lost response: "
    "nor did any later read)",
    _refused_calls,
)
ENDED_WITH_QUESTION = AdviceRule(
    "ended_with_question",
    "the final message ends with a question (the agent stopped to ask)",
    _ended_with_question,
)
REPEATED_CALL = AdviceRule(
    "repeated_call",
    "a call repeated an earlier one exactly (tool and arguments) with no "
    "write in between, so it could learn nothing new",
    _repeated_call,
)
HEDGED_ANSWER = AdviceRule(
    "hedged_answer",
    "the final message hedges (probably, I think, not sure, could not, my guess, ...; the "
    "phrases the answer check fails in the sentence of an answer)",
    _hedged_answer,
)
STOPPED_NEAR_BUDGET = AdviceRule(
    "stopped_near_budget",
    "the attempt ended by a budget, or within 10% (at least 1) of its tool-call or turn budget",
    _stopped_near_budget,
)
ANSWERED_WITHOUT_READING = AdviceRule(
    "answered_without_reading",
    "the task asks for an answer and no tool result of the attempt showed anything about the "
    "world (what `trace.answer` calls shown: no row, no aggregate; echoes and errors show "
    "nothing), so the answer was not read from the world",
    _answered_without_reading,
)
EMPTY_FINAL_MESSAGE = AdviceRule(
    "empty_final_message",
    "the attempt ended without a final message (nothing states an answer or reports what was done)",
    _empty_final_message,
)
