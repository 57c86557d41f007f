"""Row keys and the absent-field sentinel: the values every other engine module speaks in."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

import attrs

__all__ = ["ABSENT", "Absent", "Key", "index_token"]

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
