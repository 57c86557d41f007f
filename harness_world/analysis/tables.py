"""Fixed-width plain-text tables: the one layout every text renderer uses for its tables."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["render_table"]


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], max_width: int = 60) -> str:
    """Left-aligned columns separated by two spaces, under a header and a rule of dashes.

    Args:
        headers: One name per column.
        rows: The cells, one sequence per row, as many cells as headers.
        max_width: A longer cell is cut to this many characters, its last one an ellipsis.

    Returns:
        The table without a final newline; trailing spaces are stripped from each line.

    """
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
