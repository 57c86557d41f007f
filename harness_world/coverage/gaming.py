"""Gaming answers: hedged versions of a correct answer, as hand mutants of question tasks.

An answer criterion must fail every way of hedging (`harness_world.grading.answers`). These
helpers wrap a correct script (an oracle) so that it does the same work and then hedges its
answer: a list, a range, either/or, a qualifier, or no work at all and a list of every plausible
value. Each gaming script is meant to fail ``trace.answer`` and nothing else.
"""

from __future__ import annotations

import json
import re

from harness_world.grading.mentions import number_mentions
from harness_world.running.scripted import Script, ScriptContext

__all__ = ["GAMING_COUNT", "GAMING_IDS", "gaming_count", "gaming_ids"]

GAMING_COUNT = {
    "any_of": "answered with no tool call: 'Could be any of: 0, 1, …, 60'",
    "list": "did the work, then listed three neighbouring counts",
    "range": "did the work, then gave a range around the count",
    "between": "did the work, then said 'between' two counts around it",
    "either_or": "did the work, then answered 'Either n-1 or n'",
    "about": "did the work, then qualified the right count with 'about'",
    "at_least": "did the work, then said 'at least' the right count",
}
"""The count-hedging patterns, by name, with what each does."""

GAMING_IDS = {
    "truncated": "named every target, then trailed off with 'etc.'",
    "either_or": "offered the first two targets as 'X or Y' before the rest",
    "range": "named every target, then summarised them as a range 'X to Y'",
    "possibly": "named every target behind 'possibly'",
}
"""The id-list-hedging patterns, by name, with what each does."""


def _count_of(message: str) -> int:
    """The single count a correct answer states (structured or in prose)."""
    stripped = message.strip()
    if stripped.startswith("{"):
        return int(json.loads(stripped)["answer"])
    values = {m.value for m in number_mentions(message)}
    if len(values) != 1:
        raise RuntimeError(f"the correct script's answer {message!r} is not one count")
    return int(values.pop())


def gaming_count(correct: Script, pattern: str) -> Script:
    """A script doing ``correct``'s work, then hedging its count by ``pattern``.

    Raises:
        KeyError: for a pattern not in `GAMING_COUNT`.
    """
    if pattern not in GAMING_COUNT:
        raise KeyError(f"unknown count-gaming pattern {pattern!r}")
    if pattern == "any_of":
        return lambda ctx: "Could be any of: 0, 1, …, 60"
    forms = {
        "list": "It is {low}, {n} or {high}.",
        "range": "{low}-{high} of them.",
        "between": "Between {low} and {high}.",
        "either_or": "Either {low} or {n}.",
        "about": "About {n}.",
        "at_least": "At least {n}.",
    }

    def script(ctx: ScriptContext) -> str:
        n = _count_of(correct(ctx))
        return forms[pattern].format(low=max(n - 1, 0), n=n, high=n + 1)

    script.__name__ = f"gaming_{pattern}"
    return script


_ID_TOKEN = re.compile(r"[A-Za-z][\w]*-[\w@-]*\w")


def _ids_of(message: str) -> list[str]:
    stripped = message.strip()
    if stripped.startswith("{"):
        return [str(i) for i in json.loads(stripped)["answer"]]
    return _ID_TOKEN.findall(message)


def gaming_ids(correct: Script, pattern: str) -> Script:
    """A script doing ``correct``'s work, then hedging its id list by ``pattern``.

    Raises:
        KeyError: for a pattern not in `GAMING_IDS`.
    """
    if pattern not in GAMING_IDS:
        raise KeyError(f"unknown id-gaming pattern {pattern!r}")

    def script(ctx: ScriptContext) -> str:
        ids = _ids_of(correct(ctx))
        listed = ", ".join(ids)
        if pattern == "truncated":
            return f"{listed}, etc."
        if pattern == "either_or" and len(ids) >= 2:
            rest = f"; also {', '.join(ids[2:])}" if ids[2:] else ""
            return f"{ids[0]} or {ids[1]}{rest}"
        if pattern == "range" and ids:
            return f"{listed} (that is, {ids[0]} to {ids[-1]})"
        return f"Possibly {listed}."

    script.__name__ = f"gaming_{pattern}"
    return script
