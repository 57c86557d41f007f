"""The one fixed-width table layout, and the comparison text the library renders."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from harness_world.analysis.compare_report import compare_report, render_text
from harness_world.analysis.results_csv import read_results
from harness_world.analysis.tables import render_table
from harness_world.analysis.unverified import is_label
from harness_world.stats.gate import assess

GOLDEN = Path(__file__).resolve().parents[1] / "cli" / "golden"
CELL = st.text(st.characters(codec="ascii", categories=("L", "N", "P")), max_size=12)


@given(
    st.integers(1, 4).flatmap(
        lambda n: st.tuples(
            st.lists(CELL, min_size=n, max_size=n),
            st.lists(st.lists(CELL, min_size=n, max_size=n), max_size=5),
            st.integers(2, 12),
        )
    )
)
def test_every_column_starts_where_its_header_does(
    table: tuple[list[str], list[list[str]], int],
) -> None:
    headers, rows, width = table
    lines = render_table(headers, rows, width).split("\n")
    assert len(lines) == 2 + len(rows)
    rule = lines[1].split("  ")
    starts = [sum(len(r) + 2 for r in rule[:i]) for i in range(len(rule))]
    for line, cells in zip(lines[2:], rows, strict=True):
        for start, cell in zip(starts, cells, strict=True):
            shown = cell if len(cell) <= width else cell[: width - 1] + "…"
            assert line[start:].startswith(shown)
    for start, header in zip(starts, headers, strict=True):
        assert lines[0][start:].startswith(header)
    assert all(len(c) <= max(width, len(h)) for h, c in zip(headers, rule, strict=True))


def test_the_library_renders_the_golden_comparison() -> None:
    rows = read_results(GOLDEN / "compare.csv")
    comparison, result = assess(
        rows, "main", "pr", gate="no-regression", allow_missing=True, scheduled=()
    )
    report = compare_report(comparison, result, seed=result.observed.seed or 0)
    text = render_text(comparison, result, report.outcome)
    golden = (GOLDEN / "compare.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    # ``compare`` prints the labels of its inputs first (its figures come from a CSV)
    assert text == "".join(line for line in golden if not is_label(line))
