"""What the agent was shown: the one definition answers, receipts and advisories read.

Every value is compared as canonical JSON bytes, so ``15`` and ``"15"`` stay apart and a word
of a message meets a result's value in one form.
"""

from __future__ import annotations

import re
from typing import Any

from harness_world.engine.calls import CallRecord
from harness_world.engine.canonical import to_json
from harness_world.evidence.record import Record

__all__ = ["Shown", "shown_by", "shown_in", "stated"]

Shown = frozenset[bytes]
"""Values the agent was shown, each as canonical JSON."""

_WORD = re.compile(r"[\w-]+")


def shown_in(record: Record) -> Shown:
    """Every value a tool result of the attempt showed the agent, as canonical JSON.

    Each scalar of each result counts, and so does each word of a string in it (letters,
    digits, ``_`` and ``-``), so an id inside a message is observed too; a typed error's
    message is shown to the agent, so its words count as well. Arguments are not
    observations: the agent wrote them.
    """
    return frozenset().union(*(shown_by(call) for call in record.calls))


def shown_by(call: CallRecord) -> Shown:
    """The values one call's result (or typed error message) showed, as `shown_in` counts them."""
    seen: set[bytes] = set()
    stack: list[Any] = [call.result] if call.ok else []
    if call.error is not None:
        stack.append(call.error.message)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            seen.add(to_json(value))
            seen.update(to_json(word) for word in _WORD.findall(value))
        elif value is not None and not isinstance(value, bool):
            seen.add(to_json(value))
    return frozenset(seen)


def stated(message: str) -> frozenset[bytes]:
    """The words of a message that hold a digit (ids, numbers, dates), as canonical JSON.

    A word of digits is also given as the number it reads as, the form a result's number
    takes in `shown_by`.
    """
    words = [w for w in _WORD.findall(message) if any(c.isdigit() for c in w)]
    return frozenset(
        [to_json(w) for w in words] + [to_json(int(w)) for w in words if w.isdecimal()]
    )
