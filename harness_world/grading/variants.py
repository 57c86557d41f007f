"""Files of task variants: a base and the tables that differ, expanded into task tables.

A task file with a ``[[variants]]`` array declares one task per variant; its other keys are
the base they share. A variant's table is the base with the variant's keys: a table merges key
by key at every depth, any other value (arrays and arrays of tables included) replaces the one
before it whole. A variant holding its own ``variants`` is a group: its keys go to each of its
variants, and it declares no task. The expanded tables are then decoded like any task file's
(``harness_world.grading.task``), so a task's hash cannot tell how it was written.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Collection
from typing import Any

from harness_world.errors import HarnessWorldError

__all__ = ["VARIANT_LEVELS", "VariantError", "expand_variants"]

VARIANT_LEVELS = 2
"""How deep ``variants`` nest: a variant, or a group of variants."""


class VariantError(HarnessWorldError, ValueError):
    """A file of variants is malformed; the message names the variant and the field."""


def expand_variants(
    data: dict[str, Any], fields: Collection[str]
) -> list[tuple[str, dict[str, Any]]]:
    """Each task of a file of variants as (its place, e.g. ``variants[1].variants[0]``, its table).

    Args:
        data: The file's TOML table, holding a ``variants`` key.
        fields: The keys a task table may hold.

    Raises:
        VariantError: for a key no task has, a misplaced or missing id, an id declared twice,
            groups nested too deeply, or ``variants`` that is not an array of tables.
    """
    keys = (*fields, "variants")
    base = {k: v for k, v in data.items() if k != "variants"}
    _check_layer(keys, "the base", base, group=True)
    found: list[tuple[str, dict[str, Any]]] = []
    _expand_into(found, keys, base, data["variants"], "variants", 1)
    first: dict[str, str] = {}
    for where, table in found:
        earlier = first.setdefault(table["id"], where)
        if earlier != where:
            raise VariantError(
                f"variant {table['id']!r} ({where}): id already declared by {earlier}"
            )
    return found


def _expand_into(
    found: list[tuple[str, dict[str, Any]]],
    keys: tuple[str, ...],
    base: dict[str, Any],
    entries: object,
    where: str,
    level: int,
) -> None:
    """Append to ``found`` the variants of ``entries`` over ``base``.

    ``entries`` is the array at ``where``, ``level`` arrays deep in the file.
    """
    if not (isinstance(entries, list) and entries and all(isinstance(e, dict) for e in entries)):
        raise VariantError(f"{where}: expected one or more tables ([[variants]])")
    for index, entry in enumerate(entries):
        at = f"{where}[{index}]"
        group = "variants" in entry
        _check_layer(keys, at, entry, group=group)
        try:  # a copy per task: no two tasks share a mutable value
            merged = copy.deepcopy(
                _merged(base, {k: v for k, v in entry.items() if k != "variants"})
            )
        except RecursionError:
            raise VariantError(f"{at}: nested too deeply to be merged") from None
        if not group:
            found.append((at, merged))
        elif level >= VARIANT_LEVELS:
            raise VariantError(
                f"{at}: variants nested too deeply (at most {VARIANT_LEVELS} levels: a "
                "variant, or a group of variants)"
            )
        else:
            _expand_into(found, keys, merged, entry["variants"], f"{at}.variants", level + 1)


def _check_layer(keys: tuple[str, ...], at: str, table: dict[str, Any], *, group: bool) -> None:
    """Refuse a base, group or variant table naming an unknown field or misplacing an id."""
    for key in table:
        if key not in keys:
            near = difflib.get_close_matches(key, keys, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise VariantError(f"{at}: unknown field {key!r}{hint}")
    if group and "id" in table:
        raise VariantError(
            f"{at}: declares variants, so it names no id of its own (each variant does)"
        )
    if not group and not isinstance(table.get("id"), str):
        raise VariantError(f"{at}: a variant needs an id (a string)")


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``over``'s keys: a table merges key by key, any other value replaces."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        out[key] = (
            _merged(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
        )
    return out
