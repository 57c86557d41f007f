"""What every world's tools and generator need, written once.

Tools: `require` (a row or a typed ``not_found``), `given` (filters from the arguments an agent
gave), `search` (case-folded substring search over fields), `exactly_one_of` and
`at_least_one_of` (argument rules with typed ``invalid_arguments`` errors); paging is
`ToolContext.page`. Generators: `seeded` (a generator's random source, derived from a name and
a size so seeds never collide by accident) and `seed_timestamp` (a day and second within a
year, as ISO-8601 UTC).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping
from typing import Any

from msgspec import UNSET

from harness_world.engine.contract import ToolFailure
from harness_world.engine.session import ToolContext
from harness_world.engine.values import Key

__all__ = [
    "at_least_one_of",
    "exactly_one_of",
    "given",
    "require",
    "search",
    "seed_timestamp",
    "seeded",
]


def _noun(entity: str) -> str:
    """``purchase_orders`` -> ``purchase order``: the singular an error message names."""
    words = entity.replace("_", " ")
    return words[:-1] if words.endswith("s") else words


def require(
    ctx: ToolContext,
    entity: str,
    key: Key,
    *,
    arg: str = "",
    noun: str = "",
    message: str = "",
) -> dict[str, Any]:
    """The row ``entity:key`` (an independent copy), or a typed ``not_found`` failure.

    Args:
        ctx: The tool's context.
        entity: The entity to read.
        key: The key the agent gave.
        arg: The argument that named the key; the message starts with it (``ticket_id: ...``).
        noun: What the message calls the row (default: the entity's name in the singular).
        message: The whole message instead (for worlds copying another system's wording).

    Raises:
        ToolFailure: kind ``not_found`` when there is no such row in this session.
    """
    row = ctx.get(entity, key)
    if row is None:
        text = message or f"no {noun or _noun(entity)} {key!r}"
        if arg and not message:
            text = f"{arg}: {text}"
        raise ToolFailure("not_found", text)
    return row


def given(**arguments: object) -> dict[str, object]:
    """The arguments that were given: every one whose value is not ``msgspec.UNSET``.

    ``ctx.select(entity, given(status=status, owner_id=owner_id))`` filters by exactly the
    fields the agent named; a null it gave stays a filter for null.
    """
    return {name: value for name, value in arguments.items() if value is not UNSET}


def exactly_one_of(**arguments: object) -> tuple[str, object]:
    """The one argument given among ``arguments`` (name and value).

    Raises:
        ToolFailure: kind ``invalid_arguments`` naming the first argument, when none or
            several were given.
    """
    chosen = given(**arguments)
    if len(chosen) != 1:
        names = list(arguments)
        raise ToolFailure(
            "invalid_arguments", f"{names[0]}: give exactly one of {', '.join(names)}"
        )
    ((name, value),) = chosen.items()
    return name, value


def at_least_one_of(where: str, **arguments: object) -> dict[str, object]:
    """The arguments given among ``arguments``, at least one.

    Args:
        where: What the message starts with (the tool's name, usually).
        **arguments: The optional arguments, by name.

    Raises:
        ToolFailure: kind ``invalid_arguments`` when none was given.
    """
    chosen = given(**arguments)
    if not chosen:
        raise ToolFailure(
            "invalid_arguments", f"{where}: give at least one of {', '.join(arguments)}"
        )
    return chosen


def search(
    ctx: ToolContext,
    entity: str,
    query: str,
    fields: Iterable[str],
    where: Mapping[str, object] | None = None,
) -> list[Key]:
    """Keys of rows where ``query`` is a case-insensitive substring of any of ``fields``.

    Only rows matching ``where`` (see `ToolContext.select`), in seed order; a missing, null or
    non-text field matches nothing.
    """
    needle = query.casefold()
    names = tuple(fields)
    keys = ctx.select(entity, where)
    rows = ctx.get_many(entity, keys)
    return [
        key
        for key, row in zip(keys, rows, strict=True)
        if row is not None
        and any(isinstance(row.get(f), str) and needle in str(row[f]).casefold() for f in names)
    ]


def seeded(world: str, size: str) -> random.Random:
    """The random source of a generator for one world and size: the same pair, the same rows."""
    digest = hashlib.sha256(f"{world}\x00{size}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def seed_timestamp(rng: random.Random, *, year: int = 2025, start_day: int = 0) -> str:
    """A timestamp on a random day from ``start_day`` (0-based) to the year's end.

    At a random second, as ``2025-03-14T09:26:53Z``; draws the day, then the second (two
    draws, always, so a generator's stream does not depend on the values).
    """
    day = rng.randint(start_day, 364)
    second = rng.randint(0, 86_399)
    month = 0
    while day >= _MONTH_DAYS[month]:
        day -= _MONTH_DAYS[month]
        month += 1
    clock = f"{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
    return f"{year}-{month + 1:02d}-{day + 1:02d}T{clock}Z"
