"""The one shared module of hypothesis strategies; every feature extends it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

STATUSES = ["new", "open", "pending", "on_hold", "solved", "closed"]
HELPDESK_TOOLS = [
    "list_tickets",
    "get_ticket",
    "update_ticket",
    "assign_ticket",
    "add_comment",
    "create_ticket",
    "find_users",
    "get_user",
    "list_comments",
    "list_groups",
]

ticket_ids = st.one_of(
    st.integers(1000, 1660).map(lambda i: f"T-{i}"),
    st.sampled_from(["T-N1", "T-N2", "T-0", ""]),
)
user_ids = st.one_of(st.integers(1, 130).map(lambda i: f"U-{i:04d}"), st.just("U-9999"))
odd_text = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "M", "N", "P", "S", "Z", "C")),
    max_size=40,
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    odd_text,
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(odd_text, inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def plausible_call(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A well-formed-looking helpdesk call; many still fail (unknown ids, closed tickets)."""
    tool = draw(st.sampled_from(HELPDESK_TOOLS))
    args: dict[str, Any] = {}
    if tool == "list_tickets":
        if draw(st.booleans()):
            args["status"] = draw(st.sampled_from(STATUSES))
        if draw(st.booleans()):
            args["owner_id"] = draw(st.one_of(st.none(), user_ids))
        if draw(st.booleans()):
            args["tag"] = draw(st.sampled_from(["billing", "outage", "vip", "nope"]))
        args["limit"] = draw(st.integers(1, 100))
        args["offset"] = draw(st.integers(0, 700))
    elif tool in ("get_ticket", "list_comments"):
        args["ticket_id"] = draw(ticket_ids)
    elif tool == "update_ticket":
        args["ticket_id"] = draw(ticket_ids)
        if draw(st.booleans()):
            args["status"] = draw(st.sampled_from(STATUSES))
        if draw(st.booleans()):
            args["priority"] = draw(st.sampled_from(["low", "normal", "high", "urgent"]))
        if draw(st.booleans()):
            args["tags"] = draw(st.lists(st.sampled_from(["a", "billing", "vip"]), max_size=3))
    elif tool == "assign_ticket":
        args["ticket_id"] = draw(ticket_ids)
        args["owner_id"] = draw(st.one_of(st.none(), user_ids))
    elif tool == "add_comment":
        args["ticket_id"] = draw(ticket_ids)
        args["body"] = draw(st.text(min_size=1, max_size=20))
        args["public"] = draw(st.booleans())
    elif tool == "create_ticket":
        args["subject"] = draw(st.text(min_size=1, max_size=20))
        args["requester_id"] = draw(user_ids)
    elif tool == "find_users":
        args["query"] = draw(st.sampled_from(["smith", "Ana", "example", "zz"]))
    elif tool == "get_user":
        args["user_id"] = draw(user_ids)
    return tool, args


@st.composite
def hostile_call(draw: st.DrawFn) -> tuple[Any, Any]:
    """Anything an agent might send: wrong types, unknown tools, missing/extra args, junk."""
    name = draw(st.one_of(st.sampled_from(HELPDESK_TOOLS), odd_text, json_scalars))
    base = draw(plausible_call())[1] if draw(st.booleans()) else {}
    mode = draw(st.integers(0, 5))
    if mode == 0:
        args: Any = draw(json_values)
    elif mode == 1:
        args = {**base, draw(odd_text): draw(json_values)}
    elif mode == 2 and base:
        victim = draw(st.sampled_from(sorted(base)))
        args = {**base, victim: draw(json_values)}
    elif mode == 3 and base:
        args = {k: v for k, v in base.items() if k != draw(st.sampled_from(sorted(base)))}
    elif mode == 4:
        args = {
            **base,
            "limit": draw(st.integers(-(2**65), 2**65)),
            "offset": draw(st.integers(-5, 2**40)),
        }
    else:
        args = base
    return name, args


call_sequences = st.lists(plausible_call(), min_size=1, max_size=25)


# -- inventory world ------------------------------------------------------------------------

INVENTORY_TOOLS = [
    "list_items",
    "get_item",
    "list_warehouses",
    "get_stock",
    "list_stock",
    "adjust_stock",
    "create_transfer",
    "create_purchase_order",
    "list_purchase_orders",
    "cancel_purchase_order",
]
INVENTORY_CATEGORIES = [
    "cables",
    "adapters",
    "peripherals",
    "networking",
    "storage",
    "power",
    "office",
    "audio",
]
PO_STATUSES = ["draft", "submitted", "received", "cancelled"]
ACTIVE_W = ["W-01", "W-02", "W-03", "W-05"]
"""The active warehouses of the small inventory seed (W-04 is inactive)."""

item_ids = st.one_of(
    st.integers(1, 310).map(lambda i: f"I-{i:04d}"), st.sampled_from(["I-9999", "I-1"])
)
warehouse_ids = st.one_of(st.integers(1, 6).map(lambda i: f"W-{i:02d}"), st.just("W-99"))


def _inventory_stock_pairs() -> list[tuple[str, str]]:
    seed = Path(__file__).resolve().parent.parent / "worlds/inventory/seeds/small.json"
    return [(r["item_id"], r["warehouse_id"]) for r in json.loads(seed.read_text())["stock"]]


# (item, warehouse) pairs that have a stock row in the small seed, read once on first use, so
# that stock writes succeed often enough for the properties to exercise them.
stocked_pairs = st.deferred(lambda: st.sampled_from(_inventory_stock_pairs()))
item_warehouse = st.one_of(stocked_pairs, stocked_pairs, st.tuples(item_ids, warehouse_ids))
po_ids = st.one_of(
    st.integers(1, 65).map(lambda i: f"PO-{i:04d}"), st.sampled_from(["PO-N1", "PO-N2", "PO-0"])
)


@st.composite
def inventory_call(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A well-formed-looking inventory call; many still fail (unknown ids, no stock, inactive)."""
    tool = draw(st.sampled_from(INVENTORY_TOOLS))
    args: dict[str, Any] = {}
    if tool == "list_items":
        if draw(st.booleans()):
            args["category"] = draw(st.sampled_from(INVENTORY_CATEGORIES))
        if draw(st.booleans()):
            args["discontinued"] = draw(st.booleans())
        if draw(st.booleans()):
            args["query"] = draw(st.sampled_from(["usb", "USB-C", "cable", "SKU-OFF", "zz"]))
        args["limit"] = draw(st.integers(1, 100))
        args["offset"] = draw(st.integers(0, 320))
    elif tool == "get_item":
        args["item_id"] = draw(item_ids)
    elif tool == "get_stock":
        args["item_id"], args["warehouse_id"] = draw(item_warehouse)
    elif tool == "list_stock":
        if draw(st.booleans()):
            args["item_id"] = draw(item_ids)
        if draw(st.booleans()):
            args["warehouse_id"] = draw(warehouse_ids)
        if draw(st.booleans()):
            args["below_reorder"] = draw(st.booleans())
        args["limit"] = draw(st.integers(1, 100))
        args["offset"] = draw(st.integers(0, 200))
    elif tool == "adjust_stock":
        args["item_id"], args["warehouse_id"] = draw(item_warehouse)
        args["delta"] = draw(st.integers(-60, 60))
        args["reason"] = draw(st.sampled_from(["cycle count", "damaged", "found"]))
    elif tool == "create_transfer":
        args["item_id"], args["from_warehouse_id"] = draw(item_warehouse)
        args["to_warehouse_id"] = draw(st.one_of(st.sampled_from(ACTIVE_W), warehouse_ids))
        args["quantity"] = draw(st.integers(1, 30))
    elif tool == "create_purchase_order":
        args["item_id"] = draw(item_ids)
        args["warehouse_id"] = draw(warehouse_ids)
        args["quantity"] = draw(st.integers(1, 500))
    elif tool == "list_purchase_orders":
        if draw(st.booleans()):
            args["status"] = draw(st.sampled_from(PO_STATUSES))
        if draw(st.booleans()):
            args["item_id"] = draw(item_ids)
        args["limit"] = draw(st.integers(1, 100))
        args["offset"] = draw(st.integers(0, 70))
    elif tool == "cancel_purchase_order":
        args["po_id"] = draw(po_ids)
    return tool, args


inventory_call_sequences = st.lists(inventory_call(), min_size=1, max_size=25)


# -- field declarations (for rows declared as TypedDicts) --------------------------------------

field_names = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)


def _flagged(spec: Any, nullable: bool, optional: bool, description: str) -> Any:
    """``spec`` with its flags; ``Any`` already holds null, so it is never declared nullable."""
    import msgspec

    return msgspec.structs.replace(
        spec,
        nullable=nullable and spec.type != "any",
        optional=optional,
        description=description,
    )


def field_declarations(*, top: bool = True) -> st.SearchStrategy[Any]:
    """A `Field` tree: scalars, enums, lists, maps and objects, nested, with their flags.

    Items of lists and maps are never optional (only a field can be absent) and carry no
    description (only a field has one).
    """
    from harness_world.engine import Field

    enums = st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), min_size=1, max_size=4).map(
        lambda values: Field(type="str", enum=tuple(dict.fromkeys(values)))
    )
    leaves = st.one_of(
        st.sampled_from(["str", "int", "float", "bool", "any"]).map(lambda k: Field(type=k)),
        enums,
    )

    def item(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        # `list[Any]` and `dict[str, Any]` are declared without items (see test_hints).
        typed = inner.filter(lambda f: f.type != "any")
        return st.builds(_flagged, typed, st.booleans(), st.just(False), st.just(""))

    def member(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.builds(
            _flagged, inner, st.booleans(), st.booleans(), st.sampled_from(["", "a field"])
        )

    def nest(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            item(inner).map(lambda f: Field(type="list", items=f)),
            item(inner).map(lambda f: Field(type="map", items=f)),
            st.dictionaries(field_names, member(inner), min_size=1, max_size=3).map(
                lambda fields: Field(type="object", fields=fields)
            ),
        )

    shapes = st.recursive(leaves, nest, max_leaves=6)
    return member(shapes) if top else shapes


# -- layered results (the two score sheets of one judged record) ----------------------------

_AGENT_IDS = ("state.required", "state.allowed", "trace.read_before_write", "forbidden.dup")
_HARNESS_IDS = ("harness.same_key_retry", "harness.reconcile_before_retry", "budget.tool_calls")


@st.composite
def layered_results(draw: st.DrawFn) -> Any:
    """A `LayeredResult` of a few tasks: admitted or not, vectors, bypasses and links drawn."""
    from harness_world.grading import DIMENSIONS, Admission, LayeredResult
    from harness_world.grading.authority_spec import CandidateLink

    admitted = draw(st.sampled_from((True, True, True, False)))
    agent = draw(st.dictionaries(st.sampled_from(_AGENT_IDS), st.booleans(), max_size=4))
    harness = draw(st.dictionaries(st.sampled_from(_HARNESS_IDS), st.booleans(), max_size=3))
    if not admitted:
        agent, harness = {}, {}
    failed_h = [k for k, ok in harness.items() if not ok]
    failed_a = [k for k, ok in agent.items() if not ok]
    bypassed = {k: "drawn" for k in failed_h if draw(st.booleans())}
    links = [
        CandidateLink(harness=h, agent=a, mechanism="drawn")
        for h in failed_h
        for a in failed_a
        if draw(st.booleans())
    ]
    return LayeredResult(
        task_id=draw(st.sampled_from(("t.a", "t.b", "t.c", "t.d"))),
        sample=draw(st.integers(0, 3)),
        dimension=draw(st.none() | st.sampled_from(DIMENSIONS)),
        admission=Admission(
            admitted=admitted,
            checks={"evidence_verified": True, "ledger_intact": admitted},
            reasons=[] if admitted else ["ledger rows rewritten: x:1"],
        ),
        agent=agent,
        harness=harness,
        bypassed=bypassed,
        activated=links,
    )


def typed_tags(value: Any) -> Any:
    """The plain definition of typed equality: every scalar tagged with its type name.

    Two values are typed-equal exactly when their tags are equal (``1`` and ``1.0`` differ,
    at every depth).
    """
    if isinstance(value, dict):
        return {k: typed_tags(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed_tags(v) for v in value]
    return (type(value).__name__, value)


def improved_verdict(d: Any) -> bool:
    """What ``improved`` must decide, written from the rule rather than read from the code.

    The bound must clear 0; below 30 paired tasks the observed gain must also reach
    ``alpha ** (-1 / n) - 1`` (a broken class that cancels a smaller gain hides from ``n``
    tasks more often than ``alpha``).
    """
    if not d.lower > 0:
        return False
    if d.tasks >= 30:
        return d.min_gain is None
    return d.min_gain is not None and (1 + d.mean) ** -d.tasks <= d.alpha * (1 + 1e-12)
