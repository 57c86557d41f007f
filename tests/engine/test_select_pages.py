"""Indexed pages over a written session agree with the full scan, whatever the filter."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.engine import ABSENT, ToolContext
from tests import strategies as hs
from tests.conftest import examples

FILTERS = [
    ("tickets", "status", "open"),
    ("tickets", "status", "new"),
    ("tickets", "status", "closed"),
    ("tickets", "owner_id", None),
    ("tickets", "owner_id", ABSENT),
    ("tickets", "owner_id", "U-0002"),
    ("tickets", "tags", "vip"),
    ("tickets", "priority", "high"),
    ("tickets", "requester_id", "U-0050"),
    ("comments", "ticket_id", "T-1001"),
    ("comments", "author_id", "U-0001"),
]


@settings(max_examples=examples(300, 3_000))
@given(
    hs.call_sequences,
    st.sampled_from(FILTERS),
    st.integers(0, 700),
    st.integers(1, 100),
)
def test_select_page_equals_a_slice_of_select(
    small: hw.World,
    calls: list[tuple[str, dict[str, object]]],
    where: tuple[str, str, object],
    offset: int,
    limit: int,
) -> None:
    session = small.open_session()
    for tool, args in calls:
        session.call(tool, args)
    entity, field, value = where
    ctx = ToolContext(session, [])
    every = ctx.select(entity, {field: value})
    page, total = ctx.select_page(entity, {field: value}, offset, limit)
    assert total == len(every)
    assert page == every[offset : offset + limit]


@settings(max_examples=examples(200, 2_000))
@given(hs.call_sequences, st.lists(st.sampled_from(FILTERS[:9]), min_size=0, max_size=3))
def test_select_with_several_filters_equals_a_scan_of_the_session(
    small: hw.World,
    calls: list[tuple[str, dict[str, object]]],
    filters: list[tuple[str, str, object]],
) -> None:
    """Indexed and scanned filters together select exactly the rows a scan in seed order finds."""
    session = small.open_session()
    for tool, args in calls:
        session.call(tool, args)
    where = {field: value for _, field, value in filters}
    ctx = ToolContext(session, [])
    keys = ctx.select("tickets", {})
    scanned = [
        k
        for k in keys
        if (row := ctx.get("tickets", k)) is not None
        and all(
            value in row.get(field, [])
            if isinstance(row.get(field), list)
            else (field not in row if value is ABSENT else field in row and row[field] == value)
            for field, value in where.items()
        )
    ]
    assert ctx.select("tickets", where) == scanned
