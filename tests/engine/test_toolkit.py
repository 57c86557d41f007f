"""The world toolkit: what every world's tools and generators share, written once."""

from __future__ import annotations

import random
from typing import Any, TypedDict

import pytest
from hypothesis import given as examples
from hypothesis import settings
from hypothesis import strategies as st
from msgspec import UNSET

from harness_world.engine import (
    Contract,
    ToolContext,
    ToolFailure,
    World,
    at_least_one_of,
    entity,
    exactly_one_of,
    given,
    require,
    search,
    seed_timestamp,
    seeded,
    tool,
)


class _Person(TypedDict):
    id: str
    name: str
    age: int


@tool(kind="read")
def probe(ctx: ToolContext, op: str, arg: str = "") -> Any:
    """Run one toolkit function inside a real tool call."""
    if op == "require":
        return require(ctx, "purchase_orders", arg, arg="po_id")
    if op == "require_plain":
        return require(ctx, "purchase_orders", arg)
    if op == "require_worded":
        return require(ctx, "purchase_orders", arg, message="Order not found")
    return search(ctx, "purchase_orders", arg, ("name", "age"))


def _world() -> World:
    people = entity(_Person, name="purchase_orders", key="id")
    contract = Contract(name="kit", version="1", entities=(people,), tools=(probe,))
    rows = [
        {"id": "P-1", "name": "Ana Lopez", "age": 30},
        {"id": "P-2", "name": "ANNA LOPEZ", "age": 41},
        {"id": "P-3", "name": "Bo", "age": 30},
    ]
    return World.from_data(contract, {"purchase_orders": rows})


def test_require_returns_the_row_or_a_typed_not_found_naming_the_argument() -> None:
    session = _world().open_session()
    assert session.call("probe", {"op": "require", "arg": "P-1"}).result["name"] == "Ana Lopez"
    missing = session.call("probe", {"op": "require", "arg": "P-9"}).error
    assert missing is not None
    assert (missing.kind, missing.message) == ("not_found", "po_id: no purchase order 'P-9'")
    plain = session.call("probe", {"op": "require_plain", "arg": "P-9"}).error
    assert plain is not None and plain.message == "no purchase order 'P-9'"
    worded = session.call("probe", {"op": "require_worded", "arg": "P-9"}).error
    assert worded is not None and worded.message == "Order not found"


def test_search_is_case_folded_over_text_fields_only_in_seed_order() -> None:
    session = _world().open_session()
    assert session.call("probe", {"op": "search", "arg": "lopez"}).result == ["P-1", "P-2"]
    assert session.call("probe", {"op": "search", "arg": "30"}).result == []  # age is no text
    assert session.call("probe", {"op": "search", "arg": ""}).result == ["P-1", "P-2", "P-3"]


def test_given_keeps_nulls_and_drops_what_was_not_given() -> None:
    assert given(a=UNSET, b=None, c=0, d="") == {"b": None, "c": 0, "d": ""}


def test_exactly_one_of() -> None:
    assert exactly_one_of(order_id="O-1", idempotency_key=UNSET) == ("order_id", "O-1")
    for bad in (
        {"order_id": UNSET, "idempotency_key": UNSET},
        {"order_id": 1, "idempotency_key": 2},
    ):
        with pytest.raises(ToolFailure) as caught:
            exactly_one_of(**bad)
        assert caught.value.kind == "invalid_arguments"
        assert caught.value.message == "order_id: give exactly one of order_id, idempotency_key"


def test_at_least_one_of() -> None:
    assert at_least_one_of("update", status="x", tags=UNSET) == {"status": "x"}
    with pytest.raises(ToolFailure) as caught:
        at_least_one_of("update_ticket", status=UNSET, tags=UNSET)
    assert caught.value.message == "update_ticket: give at least one of status, tags"


def _legacy_timestamp(rng: random.Random, start_day: int = 0) -> str:
    """The function three worlds each carried before the toolkit had it."""
    day = rng.randint(start_day, 364)
    second = rng.randint(0, 86_399)
    month_days = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    month = 0
    while day >= month_days[month]:
        day -= month_days[month]
        month += 1
    clock = f"{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
    return f"2025-{month + 1:02d}-{day + 1:02d}T{clock}Z"


@settings(max_examples=200)
@examples(seed=st.integers(0, 2**32), start_day=st.integers(0, 364), draws=st.integers(1, 5))
def test_seed_timestamp_draws_exactly_as_the_worlds_did(
    seed: int, start_day: int, draws: int
) -> None:
    ours, theirs = random.Random(seed), random.Random(seed)
    for _ in range(draws):
        assert seed_timestamp(ours, start_day=start_day) == _legacy_timestamp(theirs, start_day)
    assert ours.random() == theirs.random()  # the stream stays in step


def test_seeded_sources_are_reproducible_and_apart() -> None:
    assert seeded("w", "small").random() == seeded("w", "small").random()
    assert seeded("w", "small").random() != seeded("w", "large").random()
    assert seeded("w", "small").random() != seeded("v", "small").random()
