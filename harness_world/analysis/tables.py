"""Fixed-width plain-text tables, and the one spelling of a figure in every text and HTML view."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # listing tasks reads no statistics module
    from harness_world.stats import ProportionInterval

__all__ = ["interval_text", "number_text", "render_table"]


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


def number_text(value: float | None, digits: int = 3) -> str:
    """A figure to ``digits`` decimals, or ``undefined`` when there is none (no denominator)."""
    return "undefined" if value is None else f"{value:.{digits}f}"


def interval_text(interval: ProportionInterval | None) -> str:
    """A rate and its interval, ``0.750 [0.500, 0.900]``, or ``undefined`` when there is none."""
    if interval is None:
        return "undefined"
    return f"{interval.estimate:.3f} [{interval.low:.3f}, {interval.high:.3f}]"
