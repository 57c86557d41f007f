"""``trace.grounded_writes``: every id a write names was given or shown before the write.

The world is the same in every attempt, so an agent can make the right write from memory
without reading anything (sidestepping the look-alike rows a task is built around). An id a
write names is the value of an argument called ``id`` or ending in ``_id`` (each item of one
ending in ``_ids``) of a write tool's call that succeeded or changed something. It is
grounded when it is a token of the instruction the agent was given, of something the
simulated user said before the write, or a value an earlier call of the same attempt showed
(`harness_world.grading.shown`: never an echo of an argument, never an error's text). Every
task that requires or allows an effect is graded on it unless its ``off`` table switches it
off with a reason (a read-only task's writes already fail ``state.allowed``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import attrs

from harness_world.engine.calls import CallRecord
from harness_world.engine.canonical import to_json
from harness_world.grading.briefing import briefing
from harness_world.grading.criteria import Check
from harness_world.grading.grade import CriterionVerdict
from harness_world.grading.rules.common import findings, taxon
from harness_world.grading.shown import Observations
from harness_world.grading.task import Task
from harness_world.grading.trace import TraceView

__all__ = ["ENTRY", "NAME", "named_ids", "tokens", "ungrounded_writes"]

NAME = "trace.grounded_writes"
_TOKEN = re.compile(r"[\w#@.\-]*\w")


def named_ids(args: Any) -> Iterator[tuple[str, str | int]]:
    """The ids a write's arguments name: (argument, id), in argument order."""
    if not isinstance(args, dict):
        return
    for name, value in args.items():
        if not (name == "id" or name.endswith(("_id", "_ids"))):
            continue
        values = value if name.endswith("_ids") and isinstance(value, list) else [value]
        for item in values:
            kind = type(item)
            if (
                (kind is str and item != "")
                or kind is int
                or (kind is not bool and isinstance(item, str | int) and item != "")
            ):
                yield name, item


def tokens(text: str) -> set[str]:
    """The whole tokens of a text an id may be (``T-1001``, ``#W2611340``, ``I-0172@W-01``)."""
    return set(_TOKEN.findall(text))


_BRIEFED: dict[str, frozenset[str]] = {}


def _briefed(task: Task) -> frozenset[str]:
    """The tokens of the instruction a task's agent is given (kept per task definition)."""
    found = _BRIEFED.get(task.hash)
    if found is None:
        if len(_BRIEFED) > 4096:
            _BRIEFED.clear()
        found = _BRIEFED[task.hash] = frozenset(tokens(briefing(task)))
    return found


def _given_tokens(view: TraceView) -> tuple[frozenset[str], list[tuple[int, set[str]]]]:
    """The instruction's tokens, and each user answer's (with the call count it came after)."""
    said = [(t.after_call, tokens(t.user)) for t in view.record.user_turns]
    return _briefed(view.task), said


def _returned_keys(view: TraceView) -> dict[object, int]:
    """Each key of a row some call returned whole, with the first call that did."""
    out: dict[object, int] = {}
    for (_, key), seq in view.first_returned.items():
        out[key] = min(seq, out.get(key, seq))
    return out


@attrs.frozen(slots=True)
class _Grounds:
    """What grounds an id, read from the view once per record (not once per id).

    Attributes:
        instruction: The tokens of the instruction.
        said: Each user answer's tokens, with the call count it came after.
        shown: What the tool results showed (`TraceView.shown`).
        returned: Each key of a row returned whole, with the first call that did.
    """

    instruction: frozenset[str]
    said: list[tuple[int, set[str]]]
    shown: Observations
    returned: dict[object, int]

    def given(self, value: str, seq: int) -> bool:
        """Whether the instruction, or the user before call ``seq``, gave ``value``."""
        if value in self.instruction:
            return True
        said = self.said  # most attempts have no user: no generator made for nothing
        return bool(said) and any(after < seq and value in told for after, told in said)

    def shown_before(self, value: str | int, seq: int) -> bool:
        """Whether an earlier call than ``seq`` showed ``value``.

        A row returned whole shows its own key: the rows the view already found answer most
        ids without looking into any result again; the others are asked of `TraceView.shown`.
        """
        shown = self.shown
        form = to_json(value)
        other = None if isinstance(value, str) else to_json(str(value))  # a number's digits
        returned = self.returned.get(value)
        if (
            returned is not None
            and returned < seq
            and not shown.echoed(form, returned)
            and (other is None or not shown.echoed(other, returned))
        ):
            return True
        if shown.first(form, before=seq) is not None:
            return True
        return other is not None and shown.first(other, before=seq) is not None

    def memorised(self, call: CallRecord) -> list[tuple[int, str]]:
        """The ids ``call`` names that were neither given nor shown before it."""
        found = []
        for name, value in named_ids(call.args):
            if self.given(str(value), call.seq) or self.shown_before(value, call.seq):
                continue
            found.append((call.seq, f"call {call.seq} {call.tool} {name}={value}"))
        return found


def ungrounded_writes(view: TraceView) -> list[tuple[int, str]]:
    """Every id a write named before the instruction, the user or a tool result gave it.

    Each as (the write's sequence number, what it named), in call order.
    """
    contract = view.world.contract
    grounds: _Grounds | None = None
    found: list[tuple[int, str]] = []
    for call in view.record.calls:
        spec = contract.tool(call.tool)
        if spec is None or spec.kind != "write" or not (call.ok or call.writes):
            continue
        if grounds is None:
            instruction, said = view.once(_given_tokens)
            grounds = _Grounds(instruction, said, view.shown, view.once(_returned_keys))
        found += grounds.memorised(call)
    return found


def _grounded_writes(view: TraceView) -> list[CriterionVerdict]:
    return [
        findings(
            NAME,
            "trace",
            [text for _, text in view.once(ungrounded_writes)],
            "a write named an id nothing had shown (from memory): ",
            "every id a write named was given or shown first",
        )
    ]


ENTRY = Check[TraceView](
    name=NAME,
    verdict="trace",
    layer="agent",
    definition="a write named an id (an `*_id` argument) that neither the instruction, the user, "
    "nor an earlier tool result of the attempt had shown; on for every task that requires or "
    "allows an effect, unless its `off` table switches it off with a reason",
    run=_grounded_writes,
    taxon=taxon("Verification", "target_identity"),
    when=lambda task: bool(task.require or task.allow) and NAME not in task.off,
)
"""The written-ids criterion (on for every task that does not switch it off)."""
