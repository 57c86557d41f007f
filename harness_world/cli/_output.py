"""Plain-text tables and progress lines shared by the commands."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

import attrs

__all__ = ["Progress", "render_table"]


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], max_width: int = 60) -> str:
    """Left-aligned columns separated by two spaces; cells longer than max_width are cut."""
    cut = [[c if len(c) <= max_width else c[: max_width - 1] + "…" for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cut:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cut
    ]
    return "\n".join(lines)


@attrs.define(slots=True)
class Progress:
    """A one-line progress counter on stderr, shown only when there is much to do.

    Attributes:
        total: How many units of work there are.
        label: What is being counted.
        enabled: Whether to draw at all (off for ``--json`` and short jobs).
        stream: Where to draw.
    """

    total: int
    label: str
    enabled: bool
    stream: TextIO = sys.stderr
    done: int = 0

    def advance(self, note: str = "") -> None:
        """Count one unit and redraw."""
        self.done += 1
        if self.enabled:
            end = "\n" if self.done == self.total else ""
            self.stream.write(f"\r{self.label} {self.done}/{self.total} {note}".ljust(60) + end)
            self.stream.flush()
