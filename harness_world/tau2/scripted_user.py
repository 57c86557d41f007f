"""A deterministic customer for τ² retail tasks that tells its scenario only when asked.

`ScriptedUser` is built from a τ² task's ``user_scenario`` and its gold calls. It speaks in the
first person and never reads the scenario out: it opens with the first sentence of its reason
for the call, tells one more sentence each time the agent asks a question (conditions and
instructions on how to behave, sentences that open with ``If``, ``Ask``, ``Make sure`` and the
like, are never said), says who it is (and what it does not know) when asked, and ends the
conversation when asked whether anything else is needed and nothing is left to tell.

It confirms only what its scenario allows: a question that proposes a change (a write tool
named verbatim, or a cancellation, return, exchange or modification in words, with the order
ids it names) gets ``Yes, please go ahead.`` only when the task's gold makes that change to
those orders, and ``No, please do not do that.`` otherwise (a cancellation its scenario
forbids gets a no). A request to confirm that names no change gets a request to name it,
never a yes. It reads words, not meaning: docs/tau2.md says what results with it
overstate.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from harness_world.evidence.record import UserTurn
from harness_world.running.user import STOP
from harness_world.tau2.gold import GoldCall

__all__ = [
    "CHANGE_TOOLS",
    "ScriptedUser",
    "first_person",
    "proposed_changes",
    "scenario_field",
    "told_sentences",
]

CHANGE_TOOLS: dict[str, tuple[str, ...]] = {
    "cancel": ("cancel_pending_order",),
    "return": ("return_delivered_order_items",),
    "exchange": ("exchange_delivered_order_items",),
    "modify": (
        "modify_pending_order_items",
        "modify_pending_order_address",
        "modify_pending_order_payment",
        "modify_user_address",
    ),
}
"""The retail write tools, by the change a customer would name in words."""

_WRITES = tuple(tool for tools in CHANGE_TOOLS.values() for tool in tools)
_VERBS = (
    (re.compile(r"\bcancel"), "cancel"),
    (re.compile(r"\breturn"), "return"),
    (re.compile(r"\bexchang"), "exchange"),
    (re.compile(r"\b(modif|chang|updat|switch|replac)"), "modify"),
)
_ORDER = re.compile(r"#W\d+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# A mention that is a warning or a report, not a proposal: "cannot be cancelled", "has been
# returned".
_NOT_PROPOSED = re.compile(r"\b(not|no longer|cannot|unable|has been|have been|already)\b|n't\b")
# A yes/no question about acting (an open question, "which item would you like to exchange?",
# is answered from the scenario instead).
_ASK = (
    "confirm",
    "yes/no",
    "proceed",
    "go ahead",
    "shall i",
    "should i",
    "would you like me",
    "do you want me",
)
_IDENTITY = ("email", "zip", "name", "identify", "authenticate", "verify")
_CLOSING = ("anything else",)
# Sentences of a scenario that tell the customer how to behave rather than what they want.
_BEHAVIOUR = re.compile(
    r"(if|once|when|after|before|make sure|mention|ask|tell|do not|don't|only|but when|but if)\b"
    r"|\(",
    re.IGNORECASE,
)
_SWAPS = (
    (re.compile(r"\byou name is\b", re.IGNORECASE), "my name is"),
    (re.compile(r"\byou are\b", re.IGNORECASE), "I am"),
    (re.compile(r"\byou're\b", re.IGNORECASE), "I'm"),
    (re.compile(r"\byou were\b", re.IGNORECASE), "I was"),
    (re.compile(r"\byou've\b", re.IGNORECASE), "I've"),
    (re.compile(r"\byou'd\b", re.IGNORECASE), "I'd"),
    (re.compile(r"\byou'll\b", re.IGNORECASE), "I'll"),
    (re.compile(r"\byourself\b", re.IGNORECASE), "myself"),
    (re.compile(r"\byours\b", re.IGNORECASE), "mine"),
    (re.compile(r"\byour\b", re.IGNORECASE), "my"),
)
_AFTER_OBJECT = re.compile(
    r"\b(to|for|with|at|about|from|than|help|helps|ask|asks|tell|tells|give|gives|send|sends|"
    r"let|lets|call|calls|remind|reminds|show|shows|save|saves|cost|costs)\s+you\b",
    re.IGNORECASE,
)
_AGENT = re.compile(r"\bthe agent('s)?\b", re.IGNORECASE)
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'"})
YES = "Yes, please go ahead."
NO = "No, please do not do that."
NAME_IT = "What exactly would you do? Please tell me before I agree."


def scenario_field(scenario: dict[str, Any], name: str) -> str:
    """One field of a τ² ``user_scenario``'s instructions (a plain-text scenario: its reason)."""
    instructions = scenario.get("instructions")
    if isinstance(instructions, dict):
        value = instructions.get(name)
        return value.strip() if isinstance(value, str) else ""
    if isinstance(instructions, str) and name == "reason":
        return instructions.strip()
    return ""


def first_person(text: str) -> str:
    """A scenario's second-person text as the customer says it (``You want`` -> ``I want``).

    ``the agent`` becomes ``you``; ``you`` after a verb or preposition becomes ``me``.
    """
    out = text.translate(_QUOTES)
    out = _AGENT.sub(lambda m: "\0r" if m.group(1) else "\0", out)
    for pattern, spoken in _SWAPS:
        out = pattern.sub(spoken, out)
    out = _AFTER_OBJECT.sub(lambda m: f"{m.group(1)} me", out)
    out = re.sub(r"\byou\b", "I", out, flags=re.IGNORECASE)
    out = out.replace("\0r", "your").replace("\0", "you")
    return out[:1].upper() + out[1:] if out else out


def told_sentences(reason: str) -> tuple[str, ...]:
    """The sentences of a reason for the call a customer says, in the first person, in order.

    Sentences about how to behave (conditions, instructions) are left out.
    """
    out = []
    for sentence in _SENTENCE.split(reason):
        plain = sentence.strip().lstrip(". ").strip()
        if len(plain) < 3 or _BEHAVIOUR.match(plain):
            continue
        out.append(first_person(plain))
    return tuple(out)


def _stop(sentence: str) -> str:
    """A sentence with its full stop (a scenario's fields often lack one)."""
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def _mentioned(sentence: str) -> list[str]:
    lowered = sentence.lower()
    if _NOT_PROPOSED.search(lowered):
        return []
    return [kind for verb, kind in _VERBS if verb.search(lowered)]


def proposed_changes(message: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """The changes an agent's message proposes: (write tools, order ids) per proposal.

    Tools named verbatim win; otherwise the changes named in words, first in the sentences
    that ask (a question or a request to confirm), then anywhere else; an order id is taken from
    the sentence, else from the whole message. Warnings and reports (``cannot be
    cancelled``, ``has been returned``) propose nothing.
    """
    orders = frozenset(_ORDER.findall(message))
    named = frozenset(tool for tool in _WRITES if tool in message)
    if named:
        return [(named, orders)]
    sentences = [s for s in _SENTENCE.split(message) if s.strip()]
    asking = [s for s in sentences if s.rstrip().endswith("?") or _asks(s.lower())]
    for group in (asking, sentences):
        found = [
            (frozenset(CHANGE_TOOLS[kind]), frozenset(_ORDER.findall(s)) or orders)
            for s in group
            for kind in _mentioned(s)
        ]
        if found:
            return found
    return []


def _asks(lowered: str) -> bool:
    return any(word in lowered for word in _ASK)


def _allowed(gold: Iterable[GoldCall]) -> tuple[tuple[str, str], ...]:
    pairs = set()
    for call in gold:
        if call.tool in _WRITES:
            order = call.args.get("order_id") if isinstance(call.args, dict) else None
            pairs.add((call.tool, order if isinstance(order, str) else ""))
    return tuple(sorted(pairs))


@attrs.frozen(slots=True)
class ScriptedUser:
    """A deterministic customer answering from a τ² user scenario (see the module docstring).

    Attributes:
        told: What the customer wants, sentence by sentence, in the first person: the first
            opens the conversation, each later one answers a question of the agent.
        known: Who the customer is (given when asked who they are), in the first person.
        unknown: What the customer does not know (said when asked who they are).
        allowed: The changes the scenario allows, as (write tool, order id) pairs (an empty
            order id: a change not on an order, or to any order).
        max_turns: Exchanges after which the customer ends the conversation.
    """

    told: tuple[str, ...]
    known: str = ""
    unknown: str = ""
    allowed: tuple[tuple[str, str], ...] = ()
    max_turns: int = 30

    @classmethod
    def from_scenario(cls, scenario: dict[str, Any], gold: Iterable[GoldCall] = ()) -> ScriptedUser:
        """The scripted user of a τ² ``user_scenario``, allowing the writes of ``gold``.

        Without gold calls the customer agrees to no change at all.
        """
        reason = scenario_field(scenario, "reason_for_call") or scenario_field(scenario, "reason")
        unknown = scenario_field(scenario, "unknown_info")
        return cls(
            told=told_sentences(reason) or ("I need help with an order.",),
            known=first_person(scenario_field(scenario, "known_info")),
            unknown=first_person(unknown) if len(unknown) > 2 else "",
            allowed=_allowed(gold),
        )

    @property
    def name(self) -> str:
        """``scripted``."""
        return "scripted"

    def settings(self) -> dict[str, Any]:
        """The hash of everything the customer says and allows, and the turn limit."""
        parts = [*self.told, self.known, self.unknown, *(f"{t} {o}" for t, o in self.allowed)]
        return {
            "kind": "scripted",
            "scenario_sha256": hashlib.sha256("\n".join(parts).encode()).hexdigest(),
            "max_turns": self.max_turns,
        }

    def reply(self, history: Sequence[UserTurn], message: str) -> str:
        """The customer's answer to ``message`` (see the module docstring for the rules)."""
        lowered = message.lower()
        if not history:
            return self.told[0]
        if len(history) + 1 >= self.max_turns:
            return STOP
        if any(word in lowered for word in _CLOSING):
            return self._next(history) or STOP
        changes = proposed_changes(message)
        if changes and _asks(lowered):
            return YES if all(self._allows(*change) for change in changes) else NO
        if any(word in lowered for word in _IDENTITY):
            said = [_stop(part) for part in (self.known, self.unknown) if part]
            return " ".join(said) or "I do not remember."
        if _asks(lowered):
            return NAME_IT
        if "?" in message:
            return self._next(history) or "That is all I can tell you."
        return "Okay."

    def _next(self, history: Sequence[UserTurn]) -> str:
        """The next sentence not yet told (empty when every one was)."""
        said = {turn.user for turn in history}
        return next((s for s in self.told if s not in said), "")

    def _allows(self, tools: frozenset[str], orders: frozenset[str]) -> bool:
        allowed = [(t, o) for t, o in self.allowed if t in tools]
        if not orders:
            return bool(allowed)
        return all(any(o in ("", order) for _, o in allowed) for order in orders)
