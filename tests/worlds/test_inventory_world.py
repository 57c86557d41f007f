"""The inventory world: seed shape, every tool's rules and errors, pagination, determinism."""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import given

import harness_world as hw
from harness_world.engine import ABSENT
from harness_world.engine.world import world_module
from tests import strategies as hs
from tests.conftest import REPO

SMALL_COUNTS = {
    "items": 300,
    "warehouses": 5,
    "stock": 748 + 18,  # invattack: 748 generated rows and the 18 planted notes (issue 15)
    "transfers": 37,
    "purchase_orders": 60,
}
SMALL_BELOW_REORDER = 65
LARGE_BELOW_REORDER = 2068


@pytest.fixture(scope="module")
def inv() -> hw.World:
    return hw.load_world("inventory")


@pytest.fixture(scope="module")
def inv_large() -> hw.World:
    return hw.load_world("inventory", size="large")


def ok(session: hw.Session, tool: str, args: dict[str, Any] | None = None) -> Any:
    obs = session.call(tool, args)
    assert obs.ok, (tool, args, obs.error)
    return obs.result


def below(world: hw.World) -> list[str]:
    """Stock keys below reorder, computed straight from the rows (not through a tool)."""
    points = {i["id"]: i["reorder_point"] for i in world.rows("items")}
    return [
        s["id"] for s in world.rows("stock") if s["on_hand"] - s["reserved"] < points[s["item_id"]]
    ]


def stock_where(world: hw.World, **wanted: object) -> dict[str, Any]:
    """The first stock row (seed order) whose fields equal ``wanted``."""
    for row in world.rows("stock"):
        if all(row[k] == v for k, v in wanted.items()):
            return row
    raise AssertionError(f"no stock row with {wanted}")


# -- seeds ------------------------------------------------------------------------------------


def test_small_seed_counts_and_shape(inv: hw.World) -> None:
    assert {e: inv.count(e) for e in inv.entities()} == SMALL_COUNTS
    items = list(inv.rows("items"))
    assert sum("supplier_id" not in i for i in items) == 13
    assert sum("supplier_id" in i and i["supplier_id"] is None for i in items) == 17
    absent = inv.lookup("items", "supplier_id", ABSENT)
    null = inv.lookup("items", "supplier_id", None)
    assert absent is not None and null is not None
    assert (len(absent), len(null)) == (13, 17) and not set(absent) & set(null)
    names = {i["name"] for i in items}
    assert {"USB-C Cable 1m", "USB C Cable 1 m", "Wireless Mouse M310"} <= names
    assert "Wireless Mouse M-310" in names
    assert {w["id"] for w in inv.rows("warehouses") if not w["active"]} == {"W-04"}
    assert {t["status"] for t in inv.rows("transfers")} == {
        "requested",
        "shipped",
        "received",
        "cancelled",
    }
    assert {p["status"] for p in inv.rows("purchase_orders")} == set(hs.PO_STATUSES)
    assert any(i["discontinued"] for i in items)
    stocked = {s["item_id"] for s in inv.rows("stock")}
    assert len(set(inv.keys("items")) - stocked) > 0  # some items are stocked nowhere yet
    for row in inv.rows("stock"):
        assert row["id"] == f"{row['item_id']}@{row['warehouse_id']}"
        assert row["on_hand"] >= 0 and row["reserved"] >= 0
    assert len(below(inv)) == SMALL_BELOW_REORDER


def test_committed_small_seed_is_what_the_generator_makes() -> None:
    committed = msgspec.json.decode((REPO / "worlds/inventory/seeds/small.json").read_bytes())
    assert committed == world_module("inventory").generate("small")


def test_large_seed_extends_the_small_one(inv: hw.World, inv_large: hw.World) -> None:
    # Items, warehouses and stock rows of the small seed are the large seed's first rows, so
    # an id a task names exists on both seeds.
    for entity in ("items", "warehouses", "stock"):
        small_rows = list(inv.rows(entity))
        if entity == "stock":  # invattack: the 18 planted notes close the stock list of both
            planted, small_rows = small_rows[-18:], small_rows[:-18]
            assert list(inv_large.rows(entity))[-18:] == planted
        assert list(inv_large.rows(entity))[: len(small_rows)] == small_rows
    assert inv_large.get("items", "I-10000") is not None
    assert inv_large.get("items", "I-00001") is None

    def orders(world: hw.World) -> list[tuple[Any, ...]]:
        return sorted(
            tuple(v for k, v in p.items() if k != "id") for p in world.rows("purchase_orders")
        )

    assert set(orders(inv)) <= set(orders(inv_large))
    for entity in ("transfers", "purchase_orders"):
        stamps = [row["created_at"] for row in inv_large.rows(entity)]
        assert stamps == sorted(stamps)  # numbered by creation time over the whole seed


def test_large_seed_and_below_reorder_counts_differ(inv: hw.World, inv_large: hw.World) -> None:
    assert (inv_large.count("items"), inv_large.count("warehouses")) == (10_000, 12)
    assert [w["id"] for w in inv_large.rows("warehouses") if not w["active"]] == ["W-04", "W-10"]
    assert inv_large.lookup("items", "supplier_id", ABSENT)
    assert inv_large.lookup("items", "supplier_id", None)
    counts = []
    for world in (inv, inv_large):
        session = world.open_session()
        total = sum(
            ok(session, "list_stock", {"warehouse_id": w, "below_reorder": True})["total"]
            for w in world.keys("warehouses")
        )
        assert total == len(below(world))
        counts.append(total)
    assert counts == [SMALL_BELOW_REORDER, LARGE_BELOW_REORDER]


# -- reads ------------------------------------------------------------------------------------


def test_list_items_filters_and_plain_substring_query(inv: hw.World) -> None:
    s = inv.open_session()
    office = ok(s, "list_items", {"category": "office", "limit": 100})
    expected = [i["id"] for i in inv.rows("items") if i["category"] == "office"]
    assert office["total"] == len(expected)
    assert [i["id"] for i in office["items"]] == expected[:100]
    gone = ok(s, "list_items", {"discontinued": True, "category": "office", "limit": 100})
    assert all(i["discontinued"] and i["category"] == "office" for i in gone["items"])
    assert gone["total"] == sum(
        i["discontinued"] and i["category"] == "office" for i in inv.rows("items")
    )
    hyphen = ok(s, "list_items", {"query": "usb-c cable"})["items"]
    spaced = ok(s, "list_items", {"query": "USB C CABLE"})["items"]
    assert [i["name"] for i in hyphen] == ["USB-C Cable 1m"]
    assert [i["name"] for i in spaced] == ["USB C Cable 1 m"]
    by_sku = ok(s, "list_items", {"query": "sku-cab-0001"})["items"]
    assert [i["id"] for i in by_sku] == ["I-0001"]


def test_get_item_keeps_absent_and_null_apart(inv: hw.World) -> None:
    s = inv.open_session()
    absent_key = inv.lookup("items", "supplier_id", ABSENT)[0]
    null_key = inv.lookup("items", "supplier_id", None)[0]
    assert "supplier_id" not in ok(s, "get_item", {"item_id": absent_key})
    assert ok(s, "get_item", {"item_id": null_key})["supplier_id"] is None
    assert ok(s, "get_item", {"item_id": "I-0001"}) == inv.get("items", "I-0001")


def test_list_warehouses_and_get_stock(inv: hw.World) -> None:
    s = inv.open_session()
    warehouses = ok(s, "list_warehouses")["warehouses"]
    assert [w["id"] for w in warehouses] == ["W-01", "W-02", "W-03", "W-04", "W-05"]
    assert [w["active"] for w in warehouses] == [True, True, True, False, True]
    row = next(iter(inv.rows("stock")))
    got = ok(s, "get_stock", {"item_id": row["item_id"], "warehouse_id": row["warehouse_id"]})
    assert got == row


def test_list_stock_by_item_warehouse_both_and_below_reorder(inv: hw.World) -> None:
    s = inv.open_session()
    rows = list(inv.rows("stock"))
    by_item = ok(s, "list_stock", {"item_id": "I-0001"})
    assert by_item["stock"] == [r for r in rows if r["item_id"] == "I-0001"]
    one = rows[0]
    both = ok(s, "list_stock", {"item_id": one["item_id"], "warehouse_id": one["warehouse_id"]})
    assert both["stock"] == [one] and both["total"] == 1
    low = set(below(inv))
    w01 = [r["id"] for r in rows if r["warehouse_id"] == "W-01"]
    for flag in (True, False):
        keys: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = ok(
                s,
                "list_stock",
                {"warehouse_id": "W-01", "below_reorder": flag, "limit": 100, "offset": offset},
            )
            keys += [r["id"] for r in page["stock"]]
            offset = page["next_offset"]
        assert keys == [k for k in w01 if (k in low) == flag]
    unstocked = next(k for k in inv.keys("items") if not inv.lookup("stock", "item_id", k))
    assert ok(s, "list_stock", {"item_id": unstocked})["total"] == 0


def test_below_reorder_counts_reserved_units(inv: hw.World) -> None:
    # A row with reserved > 0 that is below only because of the reservation.
    points = {i["id"]: i["reorder_point"] for i in inv.rows("items")}
    row = next(
        r
        for r in inv.rows("stock")
        if r["reserved"] > 0 and r["on_hand"] >= points[r["item_id"]] > r["on_hand"] - r["reserved"]
    )
    s = inv.open_session()
    flagged = ok(s, "list_stock", {"item_id": row["item_id"], "below_reorder": True})["stock"]
    assert row["id"] in [r["id"] for r in flagged]


# -- writes -----------------------------------------------------------------------------------


def test_adjust_stock_changes_on_hand_and_records_reason(inv: hw.World) -> None:
    row = stock_where(inv, warehouse_id="W-01")
    s = inv.open_session()
    args = {"item_id": row["item_id"], "warehouse_id": "W-01", "reason": "cycle count"}
    after = ok(s, "adjust_stock", {**args, "delta": 7})
    assert after["on_hand"] == row["on_hand"] + 7 and after["reserved"] == row["reserved"]
    assert after["last_adjustment_reason"] == "cycle count"
    assert after["last_adjusted_at"] == "2026-01-01T00:00:01Z"
    back = ok(s, "adjust_stock", {**args, "delta": -(row["on_hand"] + 7), "reason": "lost"})
    assert back["on_hand"] == 0 and back["last_adjusted_at"] == "2026-01-01T00:00:02Z"
    [change] = s.diff()
    assert change.key == row["id"] and change.before == row and change.after == back


def test_create_transfer_moves_stock_and_creates_the_destination_row(inv: hw.World) -> None:
    source = next(
        r
        for r in inv.rows("stock")
        if r["warehouse_id"] == "W-01"
        and r["on_hand"] - r["reserved"] >= 10
        and inv.get("stock", f"{r['item_id']}@W-02") is None
    )
    item = source["item_id"]
    s = inv.open_session(seed=5)
    args = {"item_id": item, "from_warehouse_id": "W-01", "to_warehouse_id": "W-02"}
    transfer = ok(s, "create_transfer", {**args, "quantity": 4})
    assert transfer == {
        "id": "TR-N1",
        "item_id": item,
        "from_warehouse_id": "W-01",
        "to_warehouse_id": "W-02",
        "quantity": 4,
        "status": "received",
        "created_at": "2026-01-01T00:00:01Z",
    }
    target = ok(s, "get_stock", {"item_id": item, "warehouse_id": "W-02"})
    assert target == {
        "id": f"{item}@W-02",
        "item_id": item,
        "warehouse_id": "W-02",
        "on_hand": 4,
        "reserved": 0,
    }
    assert ok(s, "get_stock", {"item_id": item, "warehouse_id": "W-01"})["on_hand"] == (
        source["on_hand"] - 4
    )
    second = ok(s, "create_transfer", {**args, "quantity": 1})
    assert second["id"] == "TR-N2" and second["created_at"] == "2026-01-01T00:00:04Z"
    assert ok(s, "get_stock", {"item_id": item, "warehouse_id": "W-02"})["on_hand"] == 5
    assert [(c.entity, c.key) for c in s.diff()] == [
        ("stock", source["id"]),
        ("stock", f"{item}@W-02"),
        ("transfers", "TR-N1"),
        ("transfers", "TR-N2"),
    ]
    assert s.clock == 6
    listed = ok(s, "list_stock", {"item_id": item})["stock"]
    assert listed[-1]["id"] == f"{item}@W-02"  # new rows list after the seed's rows


def test_purchase_orders_create_list_cancel(inv: hw.World) -> None:
    s = inv.open_session()
    absent_item = next(
        k
        for k in inv.lookup("items", "supplier_id", ABSENT) or ()
        if not (inv.get("items", k) or {})["discontinued"]
    )
    order = ok(
        s, "create_purchase_order", {"item_id": "I-0001", "warehouse_id": "W-02", "quantity": 50}
    )
    assert order == {
        "id": "PO-N1",
        "item_id": "I-0001",
        "warehouse_id": "W-02",
        "quantity": 50,
        "status": "submitted",
        "supplier_id": inv.get("items", "I-0001")["supplier_id"],
        "created_at": "2026-01-01T00:00:01Z",
    }
    legacy = ok(
        s, "create_purchase_order", {"item_id": absent_item, "warehouse_id": "W-01", "quantity": 5}
    )
    assert legacy["supplier_id"] is None  # an absent supplier is recorded as null on the order
    submitted = ok(s, "list_purchase_orders", {"status": "submitted", "limit": 100})
    seeded = [p["id"] for p in inv.rows("purchase_orders") if p["status"] == "submitted"]
    assert [p["id"] for p in submitted["purchase_orders"]] == [*seeded, "PO-N1", "PO-N2"]
    mine = ok(s, "list_purchase_orders", {"item_id": "I-0001"})["purchase_orders"]
    assert mine[-1]["id"] == "PO-N1"
    draft = next(p for p in inv.rows("purchase_orders") if p["status"] == "draft")
    cancelled = ok(s, "cancel_purchase_order", {"po_id": draft["id"]})
    assert cancelled == {**draft, "status": "cancelled"}
    assert ok(s, "cancel_purchase_order", {"po_id": "PO-N1"})["status"] == "cancelled"
    assert s.clock == 4


# -- typed errors ----------------------------------------------------------------------------


def test_typed_errors_name_the_argument(inv: hw.World) -> None:
    active = stock_where(inv, warehouse_id="W-01")
    frozen = stock_where(inv, warehouse_id="W-04")
    reserved = next(
        r for r in inv.rows("stock") if r["warehouse_id"] == "W-01" and r["reserved"] > 0
    )
    discontinued = next(i["id"] for i in inv.rows("items") if i["discontinued"])
    unstocked_at_w01 = next(k for k in inv.keys("items") if inv.get("stock", f"{k}@W-01") is None)
    received = next(p["id"] for p in inv.rows("purchase_orders") if p["status"] == "received")
    gone = next(p["id"] for p in inv.rows("purchase_orders") if p["status"] == "cancelled")
    item, wh = active["item_id"], "W-01"
    adjust = {"item_id": item, "warehouse_id": wh, "reason": "r"}
    move = {"item_id": item, "from_warehouse_id": wh, "to_warehouse_id": "W-02"}
    cases: list[tuple[str, dict[str, Any], str, str]] = [
        ("list_items", {"limit": 101}, "invalid_arguments", "$.limit"),
        ("list_items", {"category": "toys"}, "invalid_arguments", "$.category"),
        ("list_items", {"query": ""}, "invalid_arguments", "$.query"),
        ("get_item", {"item_id": "I-9999"}, "not_found", "item_id:"),
        ("get_item", {}, "invalid_arguments", "`item_id`"),
        ("get_stock", {"item_id": "I-9999", "warehouse_id": wh}, "not_found", "item_id:"),
        ("get_stock", {"item_id": item, "warehouse_id": "W-99"}, "not_found", "warehouse_id:"),
        (
            "get_stock",
            {"item_id": unstocked_at_w01, "warehouse_id": wh},
            "not_found",
            "warehouse_id:",
        ),
        ("list_stock", {}, "invalid_arguments", "item_id:"),
        ("list_stock", {"below_reorder": True}, "invalid_arguments", "item_id:"),
        ("list_stock", {"item_id": "I-9999"}, "not_found", "item_id:"),
        ("list_stock", {"warehouse_id": "W-99"}, "not_found", "warehouse_id:"),
        ("adjust_stock", {**adjust, "delta": 0}, "invalid_arguments", "delta:"),
        ("adjust_stock", {**adjust, "delta": 1.5}, "invalid_arguments", "$.delta"),
        ("adjust_stock", {**adjust, "delta": 1, "reason": ""}, "invalid_arguments", "$.reason"),
        (
            "adjust_stock",
            {**adjust, "delta": -(active["on_hand"] + 1)},
            "refused",
            "delta:",
        ),
        (
            "adjust_stock",
            {**adjust, "warehouse_id": "W-04", "item_id": frozen["item_id"], "delta": 1},
            "conflict",
            "warehouse_id:",
        ),
        ("adjust_stock", {**adjust, "item_id": "I-9999", "delta": 1}, "not_found", "item_id:"),
        (
            "adjust_stock",
            {**adjust, "item_id": unstocked_at_w01, "delta": 1},
            "not_found",
            "warehouse_id:",
        ),
        ("create_transfer", {**move, "quantity": 0}, "invalid_arguments", "$.quantity"),
        (
            "create_transfer",
            {**move, "to_warehouse_id": wh, "quantity": 1},
            "conflict",
            "to_warehouse_id:",
        ),
        (
            "create_transfer",
            {**move, "to_warehouse_id": "W-04", "quantity": 1},
            "conflict",
            "to_warehouse_id:",
        ),
        (
            "create_transfer",
            {**move, "item_id": frozen["item_id"], "from_warehouse_id": "W-04", "quantity": 1},
            "conflict",
            "from_warehouse_id:",
        ),
        (
            "create_transfer",
            {**move, "from_warehouse_id": "W-99", "quantity": 1},
            "not_found",
            "from_warehouse_id:",
        ),
        (
            "create_transfer",
            {**move, "item_id": unstocked_at_w01, "quantity": 1},
            "not_found",
            "from_warehouse_id:",
        ),
        (
            "create_transfer",
            {**move, "quantity": active["on_hand"] - active["reserved"] + 1},
            "refused",
            "quantity:",
        ),
        (
            "create_transfer",
            {
                **move,
                "item_id": reserved["item_id"],
                "quantity": reserved["on_hand"] - reserved["reserved"] + 1,
            },
            "refused",
            "quantity:",
        ),
        (
            "create_purchase_order",
            {"item_id": discontinued, "warehouse_id": wh, "quantity": 1},
            "refused",
            "item_id:",
        ),
        (
            "create_purchase_order",
            {"item_id": item, "warehouse_id": "W-04", "quantity": 1},
            "conflict",
            "warehouse_id:",
        ),
        (
            "create_purchase_order",
            {"item_id": item, "warehouse_id": "W-99", "quantity": 1},
            "not_found",
            "warehouse_id:",
        ),
        (
            "create_purchase_order",
            {"item_id": item, "warehouse_id": wh, "quantity": 2_000_000},
            "invalid_arguments",
            "$.quantity",
        ),
        ("list_purchase_orders", {"status": "open"}, "invalid_arguments", "$.status"),
        ("list_purchase_orders", {"item_id": "I-9999"}, "not_found", "item_id:"),
        ("cancel_purchase_order", {"po_id": "PO-9999"}, "not_found", "po_id:"),
        ("cancel_purchase_order", {"po_id": received}, "conflict", "po_id:"),
        ("cancel_purchase_order", {"po_id": gone}, "conflict", "po_id:"),
    ]
    session = inv.open_session()
    for tool, args, kind, needle in cases:
        obs = session.call(tool, args)
        assert not obs.ok and obs.error is not None, (tool, args, obs.result)
        assert obs.error.kind == kind, (tool, args, obs.error)
        assert needle in obs.error.message, (tool, args, obs.error)
        if needle.endswith(":"):  # the world's own messages start with the argument name
            assert obs.error.message.startswith(needle), (tool, args, obs.error)
    assert session.diff() == [] and session.clock == 0  # every failure rolled back


# -- pagination -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "rows", "entity"),
    [
        ("list_items", {}, "items", "items"),
        ("list_items", {"query": "cable"}, "items", "items"),
        ("list_stock", {"warehouse_id": "W-02"}, "stock", "stock"),
        ("list_purchase_orders", {}, "purchase_orders", "purchase_orders"),
    ],
)
def test_pagination_walks_every_row_exactly_once(
    inv: hw.World, tool: str, args: dict[str, Any], rows: str, entity: str
) -> None:
    session = inv.open_session()
    seen: list[str] = []
    offset: int | None = 0
    pages = 0
    total = None
    while offset is not None:
        page = ok(session, tool, {**args, "limit": 37, "offset": offset})
        assert page["offset"] == offset and (total is None or page["total"] == total)
        total = page["total"]
        seen += [r["id"] for r in page[rows]]
        offset = page["next_offset"]
        pages += 1
    assert len(seen) == len(set(seen)) == total
    everything = list(inv.rows(entity))
    if tool == "list_items" and "query" in args:
        expected = [r["id"] for r in everything if "cable" in r["name"].casefold()]
    elif tool == "list_stock":
        expected = [r["id"] for r in everything if r["warehouse_id"] == "W-02"]
    else:
        expected = [r["id"] for r in everything]
    assert seen == expected
    assert pages == max(1, -(-len(seen) // 37))
    beyond = ok(session, tool, {**args, "limit": 5, "offset": len(seen) + 3})
    assert beyond[rows] == [] and beyond["next_offset"] is None


# -- properties -------------------------------------------------------------------------------


def _run(world: hw.World, calls: list[tuple[str, dict[str, Any]]]) -> hw.Session:
    session = world.open_session(seed=2)
    for tool, args in calls:
        session.call(tool, args)
    return session


@given(hs.inventory_call_sequences)
def test_plausible_sequences_are_safe_and_deterministic(
    inv: hw.World, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    before = inv.hash
    first = _run(inv, calls)
    second = _run(inv, calls)
    for record in first.log:
        assert record.ok or record.error.kind != "internal", record.error
    assert inv.hash == before
    assert (
        hw.World.from_data(inv.contract, {e: list(inv.rows(e)) for e in inv.entities()}).hash
        == before
    )
    a = msgspec.json.encode(list(first.log), order="sorted")
    b = msgspec.json.encode(list(second.log), order="sorted")
    assert a == b
    assert first.diff() == second.diff()
    # Stock is conserved: per item, the net on_hand change is the sum of successful adjustments.
    adjusted: Counter[str] = Counter()
    for record in first.log:
        if record.ok and record.tool == "adjust_stock":
            adjusted[record.args["item_id"]] += record.args["delta"]
    moved: Counter[str] = Counter()
    for change in first.diff():
        if change.entity == "stock":
            assert change.after is not None and change.after["on_hand"] >= 0
            start = change.before["on_hand"] if change.before else 0
            moved[change.after["item_id"]] += change.after["on_hand"] - start
    assert {k: v for k, v in moved.items() if v} == {k: v for k, v in adjusted.items() if v}
