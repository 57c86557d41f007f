"""JSON values as indented, escaped HTML text, with the rows a grader used marked.

A tool result is usually an object with a few scalars (``next_offset``, ``total``) and a list
of rows. The trace viewer shows a one-line gist of it (the scalars first, so a ``next_offset``
is never buried at the end of a blob) and, when opened, the value indented one field a line,
each line of a marked row wrapped in ``<span class="hl">``. Lines are cut to a character limit
as a whole, never in the middle of markup.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from html import escape
from typing import Any

import msgspec

__all__ = ["gist", "pretty_html", "row_marked"]

_INLINE = 90
"""A container whose compact JSON is at most this long stays on one line."""


def _compact(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def row_marked(row: dict[str, Any], key_fields: Set[str], keys: Set[str]) -> bool:
    """Whether ``row`` is a row the grader used: a key field whose value is among ``keys``."""
    return any(isinstance(row.get(f), str | int) and str(row.get(f)) in keys for f in key_fields)


def _lines(
    value: Any, depth: int, lead: str, tail: str, mark: Set[str], fields: Set[str]
) -> Iterator[tuple[str, bool]]:
    """(text, marked) per line: ``lead`` before the value, ``tail`` (a comma) after it."""
    pad = "  " * depth
    marked = isinstance(value, dict) and bool(mark) and row_marked(value, fields, mark)
    text = _compact(value)
    if not isinstance(value, dict | list) or len(text) + len(pad) + len(lead) <= _INLINE:
        yield f"{pad}{lead}{text}{tail}", marked
        return
    opener, closer = ("{", "}") if isinstance(value, dict) else ("[", "]")
    yield f"{pad}{lead}{opener}", marked
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    for position, (name, item) in enumerate(items):
        key = "" if name is None else f"{_compact(name)}: "
        comma = "," if position < len(items) - 1 else ""
        for line, inner in _lines(item, depth + 1, key, comma, mark, fields):
            yield line, inner or marked
    yield f"{pad}{closer}{tail}", marked


def pretty_html(
    value: Any, limit: int, mark: Set[str] = frozenset(), key_fields: Set[str] = frozenset()
) -> str:
    """``value`` indented and escaped for a ``<pre>``, rows named by ``mark`` highlighted.

    Args:
        value: A decoded JSON value.
        limit: Characters of text shown; the rest is counted in a closing note.
        mark: Key values of the rows to highlight.
        key_fields: The field names that hold a row's key (every entity's key field).
    """
    out: list[str] = []
    used = 0
    left = 0
    for text, marked in _lines(value, 0, "", "", mark, key_fields):
        if used >= limit:
            left += len(text) + 1
            continue
        used += len(text) + 1
        line = escape(text)
        out.append(f'<span class="hl">{line}</span>' if marked else line)
    if left:
        out.append(f'<span class="cut">… (+{left} chars: the record on disk has them)</span>')
    return "\n".join(out)


def gist(value: Any, limit: int = 160) -> str:
    """One line about a result: its scalar fields first, then how many items each list holds."""
    if isinstance(value, list):
        return f"{len(value)} item{'' if len(value) == 1 else 's'}"
    if not isinstance(value, dict):
        text = _compact(value)
        return text if len(text) <= limit else text[:limit] + "…"
    scalars = [f"{k}: {_compact(v)}" for k, v in value.items() if not isinstance(v, dict | list)]
    lists = [f"{k}: {len(v)} items" for k, v in value.items() if isinstance(v, list)]
    objects = [f"{k}: {{…}}" for k, v in value.items() if isinstance(v, dict)]
    text = " · ".join(scalars + lists + objects)
    return text if len(text) <= limit else text[:limit] + "…"
