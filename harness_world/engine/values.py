"""Row keys and the absent-field sentinel: the values every other engine module speaks in."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

import attrs
import msgspec

__all__ = ["ABSENT", "Absent", "Key", "index_token", "typed_equal"]

Key = str | int
"""A row key: the value of the entity's key field."""


@attrs.frozen(slots=True)
class Absent:
    """The value of a field that a row does not have (distinct from ``None``, which is null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = Absent()
"""Sentinel for "this field is not present in the row"; usable in `ToolContext.select` filters."""


def index_token(value: object) -> Hashable:
    """The index key of a field value: absent, null, bools, ints and floats never collide."""
    if value is ABSENT or value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return (type(value).__name__, value)
    return ("unindexable", repr(value))


_JSON_BYTES = msgspec.json.Encoder(order="sorted")


def typed_equal(a: Any, b: Any) -> bool:
    """Equality that keeps ``1``, ``1.0`` and ``True`` apart at every depth (absent is not null).

    The one meaning of "the same value" for grading: containers are equal when they hold the
    same keys and typed-equal items; scalars when their type names and values agree.

    Decided in three steps, cheapest first: plain ``==`` rejects (typed equality implies it);
    equal canonical JSON bytes accept (JSON spells ``1``, ``1.0`` and ``true`` differently, so
    equal bytes mean equal types at every depth); only what is left (``-0.0`` against ``0.0``,
    values JSON cannot encode) is walked item by item.
    """
    if a is b:
        return True
    kind = type(a)
    if kind is type(b) and kind is not dict and kind is not list:
        return bool(a == b)  # the common case: two scalars of one type
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        if a != b:
            return False
        try:
            if _JSON_BYTES.encode(a) == _JSON_BYTES.encode(b):
                return True
        except (TypeError, ValueError, msgspec.EncodeError):
            pass  # not JSON (a sentinel inside, mixed key types): decide by walking
        return _walk_equal(a, b)
    return type(a).__name__ == type(b).__name__ and a == b


def _walk_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        return all(key in b and _walk_equal(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(_walk_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(b, dict | list):
        return False
    return type(a).__name__ == type(b).__name__ and (a is b or a == b)
