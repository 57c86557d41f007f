"""Rows as grading reads them: what changed in a row, and which whole rows a result holds.

One meaning each, used by every criterion, advisory and metric: a field *changed* when its
value at the two ends is not typed-equal (absent is not null, ``1`` is not ``1.0``); a call
*returned* a row when its successful result holds, at any depth, an object with the entity's
key field and only the entity's fields, every required one present.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, KeysView
from typing import Any

import attrs

from harness_world.engine.calls import CallRecord
from harness_world.engine.contract import Entity
from harness_world.engine.values import typed_equal
from harness_world.engine.world import Key, World
from harness_world.evidence.record import Record

__all__ = [
    "MISSING",
    "Change",
    "changed_fields",
    "is_row",
    "net_changes",
    "returned_row_keys",
    "returned_rows",
    "row_shape",
    "walk_dicts",
]

MISSING: Any = object()
"""The value of a field a row does not have, as the grading modules compare it."""

_SCALAR_TYPES = frozenset({str, int, float, bool})


def changed_fields(before: dict[str, Any] | None, after: dict[str, Any] | None) -> tuple[str, ...]:
    """The fields whose value differs between two images of a row, sorted (typed, absent-aware).

    A missing image (a row that did not exist, or was deleted) has no field: every field of
    the other image changed.
    """
    old_row, new_row = before or {}, after or {}
    # Added fields: none when both images have the same fields (the usual case, one C test).
    same = old_row.keys() == new_row.keys()
    changed = [] if same else [name for name in new_row if name not in old_row]
    for name, old in old_row.items():
        new = new_row.get(name, MISSING)
        kind = type(old)
        # Most fields are one scalar type on both sides: decided inline, no call; unequal
        # values are never typed-equal, so only equal containers are walked.
        if kind is type(new) and kind in _SCALAR_TYPES:
            if old is not new and old != new:
                changed.append(name)
        elif old != new or not typed_equal(old, new):
            changed.append(name)
    changed.sort()
    return tuple(changed)


@attrs.frozen(slots=True)
class Change:
    """One row's net change: start row and final row (None when absent at that end).

    Attributes:
        entity: The row's entity.
        key: The row's key.
        before: The row at the start (None: it did not exist).
        after: The row at the end (None: it does not exist).
    """

    entity: str
    key: Key
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    # Kept on first use in a plain slot, not a `functools.cached_property`: for one, attrs
    # gives a slotted class a `__getattr__` hook, which slows every attribute read of it.
    _diff: tuple[str, ...] | None = attrs.field(default=None, init=False, eq=False, repr=False)

    def fields(self) -> list[str]:
        """Fields whose value differs, type-aware at every depth (absent is not null)."""
        diff = self._diff
        if diff is None:
            diff = changed_fields(self.before, self.after)
            object.__setattr__(self, "_diff", diff)  # a frozen class's memo, set once
        return list(diff)


def net_changes(record: Record, world: World) -> list[Change]:
    """delta: every touched key whose final row differs from the start row."""
    out = []
    for final in record.final:
        start = world.get(final.entity, final.key)
        if start != final.row or not typed_equal(start, final.row):
            out.append(Change(final.entity, final.key, start, final.row))
    return out


_REQUIRED: dict[int, tuple[Entity, frozenset[str]]] = {}


def _required(entity: Entity) -> frozenset[str]:
    """The fields every row of ``entity`` has (kept per entity object)."""
    known = _REQUIRED.get(id(entity))
    if known is None or known[0] is not entity:
        if len(_REQUIRED) > 4096:
            _REQUIRED.clear()
        names = frozenset(n for n, spec in entity.fields.items() if not spec.optional)
        known = _REQUIRED[id(entity)] = (entity, names)
    return known[1]


def row_shape(entity: Entity) -> tuple[frozenset[str], KeysView[str]]:
    """The fields a whole row of ``entity`` must have, and the fields it may have (`is_row`)."""
    return _required(entity), entity.fields.keys()


def is_row(value: dict[str, Any], entity: Entity) -> bool:
    """Whether an object is a whole row of ``entity``: its key, its required fields, no other."""
    if entity.key not in value:
        return False
    keys = value.keys()
    return _required(entity) <= keys <= entity.fields.keys()


def walk_dicts(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict inside ``value``, itself included, outer before inner (iterative)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(reversed(item.values()))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def returned_row_keys(call: CallRecord, entities: Iterable[Entity]) -> set[tuple[str, Key]]:
    """(entity, key) of every whole row of any of ``entities`` in a call's result (one walk)."""
    if not call.ok:
        return set()
    candidates = [(e, e.key) for e in entities]
    found: set[tuple[str, Key]] = set()
    for d in walk_dicts(call.result):
        for entity, key_field in candidates:
            if key_field in d and is_row(d, entity):
                found.add((entity.name, d[key_field]))
    return found


def returned_rows(call: CallRecord, entity: Entity) -> set[Key]:
    """Keys of whole rows of ``entity`` that a call's result actually contained."""
    return {key for _, key in returned_row_keys(call, [entity])}
