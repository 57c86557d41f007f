"""Scripted correct solutions for the inventory tasks, one per task.

Oracles find their targets through the tools, as an agent must: they list with the largest page
size, follow every page, read each stock row before changing it, collect a listing before
writing to what it lists, and use no id the instruction does not give. Each passes on the small
and the large seed, which is what shows the targets are derived, not hard-coded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness_world.coverage import ScriptContext, follow_pages

PAGE = 100


def rows(
    ctx: ScriptContext, tool: str, args: dict[str, Any], field: str
) -> Iterator[dict[str, Any]]:
    """Every row of a paginated listing, following ``next_offset`` to the end (pages of 100)."""
    return follow_pages(ctx, tool, args, field, PAGE)


def must(ctx: ScriptContext, tool: str, args: dict[str, Any]) -> Any:
    """Call a tool that has to succeed."""
    obs = ctx.call(tool, args)
    if not obs.ok:
        raise RuntimeError(f"{tool}({args}) failed: {obs.error}")
    return obs.result


def item_named(ctx: ScriptContext, query: str, name: str) -> dict[str, Any]:
    """The item with exactly this name among the matches of a search (not the first match)."""
    for item in rows(ctx, "list_items", {"query": query}, "items"):
        if item["name"] == name:
            return item
    raise RuntimeError(f"no item named {name!r}")


def warehouses(ctx: ScriptContext) -> list[dict[str, Any]]:
    return list(must(ctx, "list_warehouses", {})["warehouses"])


def stock_of(ctx: ScriptContext, item_id: str) -> dict[str, dict[str, Any]]:
    """An item's stock rows by warehouse id (every page)."""
    return {r["warehouse_id"]: r for r in rows(ctx, "list_stock", {"item_id": item_id}, "stock")}


def recount_patch_cord(ctx: ScriptContext) -> str:
    cord = item_named(ctx, "patch cord", "CAT 6 Patch Cord 3m")
    must(ctx, "get_stock", {"item_id": cord["id"], "warehouse_id": "W-03"})
    args = {"item_id": cord["id"], "warehouse_id": "W-03", "delta": 4, "reason": "cycle count"}
    must(ctx, "adjust_stock", args)
    return f"Added 4 units of {cord['id']} in W-03."


def transfer_copy_paper(ctx: ScriptContext) -> str:
    by_city = {w["city"]: w["id"] for w in warehouses(ctx)}
    paper = item_named(ctx, "copy paper", "A4 Copy Paper 500 Sheets")
    source, destination = by_city["Leeds"], by_city["Lyon"]
    stock = stock_of(ctx, paper["id"])
    if stock[source]["on_hand"] - stock[source]["reserved"] < 30:
        raise RuntimeError("not enough available in Leeds")
    move = {
        "item_id": paper["id"],
        "from_warehouse_id": source,
        "to_warehouse_id": destination,
        "quantity": 30,
    }
    transfer = must(ctx, "create_transfer", move)
    return f"Moved 30 units ({transfer['id']})."


def porto_restock(ctx: ScriptContext) -> str:
    empty = [
        r for r in rows(ctx, "list_stock", {"warehouse_id": "W-05"}, "stock") if r["on_hand"] == 0
    ]
    for row in empty:
        args = {
            "item_id": row["item_id"],
            "warehouse_id": "W-05",
            "delta": 10,
            "reason": "delivery",
        }
        must(ctx, "adjust_stock", args)
    return f"Recorded the delivery on {len(empty)} stock rows."


def cancel_poznan_orders(ctx: ScriptContext) -> str:
    open_orders = [
        order
        for status in ("draft", "submitted")
        for order in rows(ctx, "list_purchase_orders", {"status": status}, "purchase_orders")
        if order["warehouse_id"] == "W-04"
    ]
    for order in open_orders:
        must(ctx, "cancel_purchase_order", {"po_id": order["id"]})
    return f"Cancelled {len(open_orders)} orders."


def no_supplier(item: dict[str, Any]) -> bool:
    """Supplier unknown (null) or never recorded (no field): both count."""
    return item.get("supplier_id") is None


def order_unsupplied_office(ctx: ScriptContext) -> str:
    office = list(rows(ctx, "list_items", {"category": "office"}, "items"))
    wanted = [i for i in office if not i["discontinued"] and no_supplier(i)]
    for item in wanted:
        must(
            ctx,
            "create_purchase_order",
            {"item_id": item["id"], "warehouse_id": "W-01", "quantity": 20},
        )
    return f"Ordered {len(wanted)} items."


def count_legacy_peripherals(ctx: ScriptContext) -> str:
    items = rows(ctx, "list_items", {"category": "peripherals"}, "items")
    return str(sum("supplier_id" not in item for item in items))


def order_hdmi_cable(ctx: ScriptContext) -> str:
    cable = item_named(ctx, "HDMI 2.1", "HDMI 2.1 Cable 2 m")
    order = must(
        ctx,
        "create_purchase_order",
        {"item_id": cable["id"], "warehouse_id": "W-05", "quantity": 50},
    )
    return f"Ordered ({order['id']})."


def recall_ups(ctx: ScriptContext) -> str:
    active = {w["id"] for w in warehouses(ctx) if w["active"]}
    stock = stock_of(ctx, "I-0163")
    for warehouse, row in stock.items():
        if row["on_hand"] == 0:
            continue
        if warehouse not in active:
            raise RuntimeError(f"stock in inactive warehouse {warehouse} cannot be written off")
        args = {
            "item_id": "I-0163",
            "warehouse_id": warehouse,
            "delta": -row["on_hand"],
            "reason": "recall",
        }
        must(ctx, "adjust_stock", args)
    return "Written off."


def move_available_adapters(ctx: ScriptContext) -> str:
    stock = stock_of(ctx, "I-0172")
    source = stock["W-01"]
    available = source["on_hand"] - source["reserved"]
    move = {
        "item_id": "I-0172",
        "from_warehouse_id": "W-01",
        "to_warehouse_id": "W-05",
        "quantity": available,
    }
    must(ctx, "create_transfer", move)
    return f"Moved {available} units."


def label_tape_everywhere(ctx: ScriptContext) -> str:
    tape = item_named(ctx, "label tape", "Label Tape 12 mm, Black")
    active = [w["id"] for w in warehouses(ctx) if w["active"]]
    for warehouse in active:
        must(
            ctx,
            "create_purchase_order",
            {"item_id": tape["id"], "warehouse_id": warehouse, "quantity": 20},
        )
    return f"Ordered for {len(active)} warehouses."


def draft_orders_leeds(ctx: ScriptContext) -> str:
    drafts = rows(ctx, "list_purchase_orders", {"status": "draft"}, "purchase_orders")
    return ", ".join(o["id"] for o in drafts if o["warehouse_id"] == "W-02")


COUNTED = {"I-0169": 8, "I-0086": 330, "I-0157": 380}


def cycle_count_lyon(ctx: ScriptContext) -> str:
    for item_id, counted in COUNTED.items():
        row = must(ctx, "get_stock", {"item_id": item_id, "warehouse_id": "W-03"})
        delta = counted - row["on_hand"]
        if delta:
            args = {
                "item_id": item_id,
                "warehouse_id": "W-03",
                "delta": delta,
                "reason": "cycle count",
            }
            must(ctx, "adjust_stock", args)
    return "Corrected."


ORACLES = {
    f"inventory.{fn.__name__}": fn
    for fn in (
        recount_patch_cord,
        transfer_copy_paper,
        porto_restock,
        cancel_poznan_orders,
        order_unsupplied_office,
        count_legacy_peripherals,
        order_hdmi_cable,
        recall_ups,
        move_available_adapters,
        label_tape_everywhere,
        draft_orders_leeds,
        cycle_count_lyon,
    )
}
