"""τ²-bench's retail domain described by a harness_world contract, with its sixteen tools.

The data is NOT part of this repository: load it from a τ² retail data folder, e.g.
``hw.load_world("tau2_retail", seed_file=".../db.json")``. The data is © Sierra Research,
MIT licence (see the LICENSE file beside the data); the tools below re-implement, from a
written description of their behaviour (checked against the public source where it was
silent), the tools of τ²-bench (sierra-research/tau2-bench, commit a2c0247, MIT licence,
© 2025 Sierra Research), so that the same calls give the same end state as the original,
quirks included. The contract describes every field of the
data, including fields that only some orders carry (written by the tools) and payment methods
whose shape depends on ``source``.

Tool names, argument names and argument types are the original's. Reads return what the
original returns (a user id string, a whole record, a JSON text, a number as text). Every
failure is a `ToolFailure` whose message is the original's error text, exactly, and whose kind
follows this table:

=================  ===========================================================================
kind               messages
=================  ===========================================================================
not_found          ``User not found``, ``Order not found``, ``Product not found``,
                   ``Item not found``, ``Variant not found``, ``Payment method not found``,
                   ``<id> not found`` (modify items), ``Number of <id> not found.``
                   (exchange), ``Some item not found`` (return), ``Item <id> not found``
                   (modify items and exchange; kept from the original, unreachable after
                   their count checks)
conflict           ``Non-pending order cannot be cancelled``,
                   ``Non-pending order cannot be modified``,
                   ``Non-delivered order cannot be exchanged``,
                   ``Non-delivered order cannot be returned``,
                   ``There should be exactly one payment for a pending order``,
                   ``The new payment method should be different from the current one``,
                   ``New item <id> not found or available`` (the variant exists but is not
                   available: a state of the catalogue, not a missing id)
refused            ``Insufficient gift card balance to pay for the order``,
                   ``Insufficient gift card balance to pay for the new item``,
                   ``Insufficient gift card balance to pay for the price difference``,
                   ``Payment method should be the original payment method``
invalid_arguments  ``Invalid reason``, ``Invalid characters in expression``,
                   ``The number of items to be exchanged should match`` (with a final ``.``
                   in exchange), ``The new item id should be different from the old item id``,
                   any error of evaluating a ``calculate`` expression (its Python message,
                   e.g. ``division by zero``), ``Exponent too large`` (see below)
=================  ===========================================================================

Where this differs from the original, on purpose:

* A failing call changes nothing here (the session rolls it back). The original mutates its
  in-memory database as it goes, so a failure after a first mutation could leave part of it
  behind; the only such paths (a payment method in an order's history that its user no longer
  has) cannot be reached from the published data with these tools.
* Optional order fields the original keeps as ``null`` are absent here until a tool sets them.
* ``calculate`` evaluates the expression with Python as the original does, but refuses an
  integer power whose result would exceed a million bits (``Exponent too large``) instead of
  hanging the harness (``9**9**9**9`` is accepted by the original's character check). An
  expression nested deeper than Python's parser allows (a flat sum of thousands of terms,
  which the original reports as ``maximum recursion depth exceeded ...``) is evaluated by a
  stack-based parser with Python's precedence, association and number types instead: its cost
  is bounded by the expression's length, not by the recursion limit.
"""

from __future__ import annotations

import ast
import functools
import json
import operator
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, TypedDict

import msgspec

from harness_world.engine import (
    Contract,
    Derived,
    Key,
    ToolContext,
    ToolFailure,
    WorldSpec,
    entity,
    literal_values,
    require,
    tool,
)
from harness_world.engine.world import WorldError

if TYPE_CHECKING:
    from harness_world.grading.worlds import WorldData

Source = Literal["credit_card", "paypal", "gift_card"]
TransactionType = Literal["payment", "refund"]
CancelReason = Literal["no longer needed", "ordered by mistake"]
CANCEL_REASONS = literal_values(CancelReason)
CALC_CHARACTERS = frozenset("0123456789+-*/(). ")
_CALC_STRIP = "".join(sorted(CALC_CHARACTERS))
MAX_POWER_BITS = 1_000_000
"""Largest integer power ``calculate`` computes, in bits of the result (see module notes)."""


# -- rows (every field of τ²'s data; field order is the contract's, part of its hash) --------


class Address(TypedDict):
    """A postal address (a user's default, or an order's shipping address)."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class Name(TypedDict):
    """A user's name."""

    first_name: str
    last_name: str


class PaymentMethod(TypedDict):
    """A stored payment method; which fields it carries depends on `source`."""

    source: Source
    id: str
    brand: NotRequired[str]
    last_four: NotRequired[str]
    balance: NotRequired[float]


class OrderItem(TypedDict):
    """One unit of an order (an item bought twice is two entries)."""

    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


class Fulfillment(TypedDict):
    """A shipment of some of an order's items."""

    tracking_id: list[str]
    item_ids: list[str]


class Transaction(TypedDict):
    """An entry of an order's payment history."""

    transaction_type: TransactionType
    amount: float
    payment_method_id: str


class Variant(TypedDict):
    """One variant (an item) of a product."""

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


# The three rows carry no docstring: a row's docstring becomes its entity's description (part
# of the contract's hash) and these entities have none. Nested rows' docstrings are not read.


class User(TypedDict):
    user_id: str
    name: Name
    address: Address
    email: str
    payment_methods: dict[
        str,
        Annotated[
            PaymentMethod,
            msgspec.Meta(
                description="Shape depends on `source`: cards carry brand and last_four, "
                "gift cards a balance."
            ),
        ],
    ]
    orders: list[str]


class Order(TypedDict):
    order_id: str
    user_id: str
    address: Address
    items: list[OrderItem]
    status: str
    fulfillments: list[Fulfillment]
    payment_history: list[Transaction]
    # Written by the tools: absent until one sets them.
    cancel_reason: NotRequired[str]
    exchange_items: NotRequired[list[str]]
    exchange_new_items: NotRequired[list[str]]
    exchange_payment_method_id: NotRequired[str]
    exchange_price_difference: NotRequired[float]
    return_items: NotRequired[list[str]]
    return_payment_method_id: NotRequired[str]


class Product(TypedDict):
    name: str
    product_id: str
    variants: dict[str, Variant]


USERS = entity(User, name="users", key="user_id", indexes=("email",))
ORDERS = entity(Order, name="orders", key="order_id", id_prefix="#W", indexes=("user_id", "status"))
PRODUCTS = entity(Product, name="products", key="product_id")


# -- lookups shared by the tools (each raises the original's message) ----------------------


def _stored(ctx: ToolContext, entity_name: str, key: str, message: str) -> msgspec.Raw:
    """The stored row as JSON, without a decode, or ``not_found`` with τ²'s message."""
    row = ctx.get_json(entity_name, key)
    if row is None:
        raise ToolFailure("not_found", message)
    return row


class _Variants(msgspec.Struct):
    """A product's variants left as JSON: one is decoded, not the whole catalogue entry."""

    variants: dict[str, msgspec.Raw]


_VARIANTS = msgspec.json.Decoder(_Variants)


def _variant(ctx: ToolContext, product_id: str, item_id: str) -> dict[str, Any]:
    variants = _VARIANTS.decode(_stored(ctx, "products", product_id, "Product not found")).variants
    if item_id not in variants:
        raise ToolFailure("not_found", "Variant not found")
    variant: dict[str, Any] = msgspec.json.decode(variants[item_id])
    return variant


def _payment_method(user: dict[str, Any], payment_method_id: str) -> dict[str, Any]:
    methods = user["payment_methods"]
    if payment_method_id not in methods:
        raise ToolFailure("not_found", "Payment method not found")
    method: dict[str, Any] = methods[payment_method_id]
    return method


def _is_gift_card(method: dict[str, Any]) -> bool:
    return bool(method["source"] == "gift_card")


def _first_item(order: dict[str, Any], item_id: str) -> dict[str, Any] | None:
    return next((item for item in order["items"] if item["item_id"] == item_id), None)


def _count_exceeds(order: dict[str, Any], item_ids: list[str]) -> str | None:
    """The first id asked for more often than the order holds it, or None."""
    held = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > held.count(item_id):
            return item_id
    return None


def _address(
    address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> Address:
    """An address row from a tool's arguments, in the row's field order."""
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "country": country,
        "state": state,
        "zip": zip,
    }


# -- read tools -----------------------------------------------------------------------------


# Emails and names are never written by these tools, so the start world's users can be looked
# up by them once per world (by content hash); zip codes can change (modify_user_address), so a
# name's candidates are checked against the session's rows. Same answers as a scan in data
# order (the first match), at the cost of the matches instead of every user.
_BY_EMAIL: dict[str, dict[str, list[Key]]] = {}
_BY_NAME: dict[str, dict[tuple[str, str], list[Key]]] = {}


def _user_indexes(
    ctx: ToolContext,
) -> tuple[dict[str, list[Key]], dict[tuple[str, str], list[Key]]]:
    world = ctx.world
    if world.hash not in _BY_EMAIL:
        by_email: dict[str, list[Key]] = {}
        by_name: dict[tuple[str, str], list[Key]] = {}
        for row in world.rows("users"):
            by_email.setdefault(row["email"].lower(), []).append(row["user_id"])
            name = (row["name"]["first_name"].lower(), row["name"]["last_name"].lower())
            by_name.setdefault(name, []).append(row["user_id"])
        _BY_EMAIL[world.hash], _BY_NAME[world.hash] = by_email, by_name
    return _BY_EMAIL[world.hash], _BY_NAME[world.hash]


@tool(kind="read")
def find_user_id_by_email(ctx: ToolContext, email: str) -> str:
    """Find a user id by email (case-insensitive; the first match in the data's order). Returns
    the user id, or the error 'User not found'.
    """
    for key in _user_indexes(ctx)[0].get(email.lower(), []):
        if ctx.exists("users", key):
            return str(key)
    raise ToolFailure("not_found", "User not found")


@tool(kind="read")
def find_user_id_by_name_zip(ctx: ToolContext, first_name: str, last_name: str, zip: str) -> str:
    """Find a user id by first name, last name (both case-insensitive) and zip code (exact); the
    first match in the data's order. Use it only when the user cannot give their email. Returns
    the user id, or the error 'User not found'.
    """
    name = (first_name.lower(), last_name.lower())
    for key in _user_indexes(ctx)[1].get(name, []):
        row = ctx.get("users", key)
        if row is not None and row["address"]["zip"] == zip:
            return str(key)
    raise ToolFailure("not_found", "User not found")


@tool(kind="read")
def get_user_details(ctx: ToolContext, user_id: str) -> msgspec.Raw:
    """Get a user's details, including payment methods and order ids, by user id such as
    'sara_doe_496'.
    """
    return _stored(ctx, "users", user_id, "User not found")


@tool(kind="read")
def get_order_details(ctx: ToolContext, order_id: str) -> msgspec.Raw:
    """Get an order's status and details by order id such as '#W0000000' (note the '#')."""
    return _stored(ctx, "orders", order_id, "Order not found")


@tool(kind="read")
def get_product_details(ctx: ToolContext, product_id: str) -> msgspec.Raw:
    """Get a product's inventory details (every variant with options, availability and price) by
    product id, such as '6086499569'. A product id is not an item id.
    """
    return _stored(ctx, "products", product_id, "Product not found")


@tool(kind="read")
def get_item_details(ctx: ToolContext, item_id: str) -> dict[str, Any]:
    """Get one item's (variant's) details by item id, such as '1008292230'. An item id is not a
    product id.
    """
    # A product holding the item spells its id as a JSON string in its stored bytes: only
    # those products are decoded (the scan is over bytes, not over 50 decoded catalogues).
    spelled = msgspec.json.encode(item_id)
    for key in ctx.select("products"):
        stored = ctx.get_json("products", key)
        if stored is None or spelled not in bytes(stored):
            continue
        product = msgspec.json.decode(stored)
        if item_id in product["variants"]:
            variant: dict[str, Any] = product["variants"][item_id]
            return variant
    raise ToolFailure("not_found", "Item not found")


@tool(kind="read")
def list_all_product_types(ctx: ToolContext) -> str:
    """List the name and product id of every product type (there are 50), as a JSON text mapping
    product name to product id, sorted by name.
    """
    names: dict[str, str] = {}
    for key in ctx.select("products"):
        product = ctx.get("products", key)
        if product is not None:
            names[product["name"]] = product["product_id"]
    return json.dumps(names, sort_keys=True)


class _GuardPowers(ast.NodeTransformer):
    """Route every ``a ** b`` through a guard that refuses astronomically large integers."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            call = ast.Call(
                func=ast.Name(id="_hw_pow", ctx=ast.Load()),
                args=[node.left, node.right],
                keywords=[],
            )
            return ast.copy_location(call, node)
        return node


def _guarded_pow(base: Any, exponent: Any) -> Any:
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and exponent > 0
        and abs(base) > 1
        and exponent * (abs(base).bit_length() - 1) > MAX_POWER_BITS
    ):
        raise ToolFailure("invalid_arguments", "Exponent too large")
    return base**exponent


@tool(kind="read")
def calculate(ctx: ToolContext, expression: str) -> str:
    """Calculate a mathematical expression such as '2 + 2'. Only digits, + - * / ( ) . and
    spaces are accepted. Returns the value rounded to 2 decimals, as text (e.g. '4.0').
    """
    if expression.strip(_CALC_STRIP):  # what is left once every allowed character is gone
        raise ToolFailure("invalid_arguments", "Invalid characters in expression")
    try:
        try:
            value = _python_eval(expression)
        except RecursionError:
            value = _flat_eval(expression)  # deeper than Python's parser goes: see notes
        return str(round(float(value), 2))
    except ToolFailure:
        raise
    except Exception as exc:  # the original reports whatever Python raised, by its message
        raise ToolFailure("invalid_arguments", str(exc)) from None


def _python_eval(expression: str) -> Any:
    """Python's eval, as the original calls it; powers go through the size guard."""
    code = _compiled(expression) if len(expression) <= 256 else _compile(expression)
    return eval(code, {"__builtins__": None, "_hw_pow": _guarded_pow}, {})


def _compile(expression: str) -> Any:
    """The code eval would run for ``expression`` (powers rewritten to the guarded one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # eval() of a string drops leading spaces and tabs; compile the same text eval would.
        if "**" not in expression:
            return compile(expression.lstrip(" \t"), "<string>", "eval")
        tree = ast.parse(expression.lstrip(" \t"), filename="<string>", mode="eval")
        tree = ast.fix_missing_locations(_GuardPowers().visit(tree))
        return compile(tree, "<string>", "eval")


# Short expressions repeat (agents recompute totals, replay re-runs every call): compile once.
_compiled = functools.lru_cache(maxsize=4096)(_compile)


# Operator precedence and associativity of Python's arithmetic grammar; "u+"/"u-" are unary
# (they bind looser than a ``**`` on their right: -2**2 == -4, and 2**-1 == 0.5).
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "//": 2, "u+": 3, "u-": 3, "**": 4}
_BINARY: dict[str, Any] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "**": _guarded_pow,
}
_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|(\*\*|//|[-+*/()]))")


def _number(text: str) -> int | float:
    if "." in text:
        return float(text)
    if len(text) > 1 and text.startswith("0") and text.strip("0"):
        raise ToolFailure("invalid_arguments", "invalid syntax")
    return int(text)


def _apply(op: str, values: list[Any]) -> None:
    if op == "u-":
        values.append(-values.pop())
    elif op == "u+":
        values.append(+values.pop())
    else:
        right = values.pop()
        values.append(_BINARY[op](values.pop(), right))


def _postfix(expression: str) -> list[int | float | str]:
    """The expression in postfix order (numbers and operators), or ``invalid syntax``.

    Operator precedence by a stack, so its depth is bounded by the input's length, not by
    Python's recursion limit; the whole text is parsed before anything is evaluated, as
    Python compiles before it runs.
    """
    out: list[int | float | str] = []
    ops: list[str] = []
    expect_operand = True
    position, text = 0, expression.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ToolFailure("invalid_arguments", "invalid syntax")
        position = match.end()
        number, symbol = match.groups()
        if number is not None and expect_operand:
            out.append(_number(number))
            expect_operand = False
        elif symbol == "(" and expect_operand:
            ops.append("(")
        elif symbol == ")" and not expect_operand and "(" in ops:
            while ops[-1] != "(":
                out.append(ops.pop())
            ops.pop()
        elif symbol in ("+", "-") and expect_operand:
            ops.append("u" + symbol)
        elif symbol in _BINARY and not expect_operand:
            while (
                ops
                and ops[-1] != "("
                and (
                    _PRECEDENCE[ops[-1]] > _PRECEDENCE[symbol]
                    or (_PRECEDENCE[ops[-1]] == _PRECEDENCE[symbol] and symbol != "**")
                )
            ):
                out.append(ops.pop())
            ops.append(symbol)
            expect_operand = True
        else:
            raise ToolFailure("invalid_arguments", "invalid syntax")
    if expect_operand or "(" in ops:
        raise ToolFailure("invalid_arguments", "invalid syntax")
    out.extend(reversed(ops))
    return out


def _flat_eval(expression: str) -> Any:
    """Python's arithmetic on the calculator's characters, without recursion.

    Same operators, precedence, association, number types and evaluation order as eval (a
    number directly followed by ``(``, a call in Python, is ``invalid syntax`` here).
    """
    values: list[Any] = []
    for item in _postfix(expression):
        if isinstance(item, str):
            _apply(item, values)
        else:
            values.append(item)
    return values[0]


@tool(kind="read")
def transfer_to_human_agents(ctx: ToolContext, summary: str) -> str:
    """Transfer the user to a human agent with a summary of their issue. Only when the user asks
    for one explicitly, or the issue cannot be solved with the policy and the tools.
    """
    return "Transfer successful"


# -- write tools ----------------------------------------------------------------------------

_USER_BALANCE = (Derived(entity="users"),)
"""A user row an order tool writes (a gift card's balance): derived, not addressed."""


# The agent addresses the order; the user's gift-card balance changes as a consequence.
@tool(kind="write", derives=_USER_BALANCE)
def cancel_pending_order(ctx: ToolContext, order_id: str, reason: str) -> dict[str, Any]:
    """Cancel an order whose status is exactly 'pending'. reason must be 'no longer needed' or
    'ordered by mistake'. Every entry of the payment history is refunded (refunds appended
    after the existing entries); gift cards are credited at once, other methods take 5-7
    business days. Returns the order. Ask the user for explicit confirmation first.
    """
    order = require(ctx, "orders", order_id, message="Order not found")
    if order["status"] != "pending":
        raise ToolFailure("conflict", "Non-pending order cannot be cancelled")
    # A string, not the Literal: τ²'s schema takes any text and answers "Invalid reason".
    if reason not in CANCEL_REASONS:
        raise ToolFailure("invalid_arguments", "Invalid reason")
    refunds = []
    user: dict[str, Any] | None = None
    credited = False
    for payment in order["payment_history"]:
        refunds.append(
            {
                "transaction_type": "refund",
                "amount": payment["amount"],
                "payment_method_id": payment["payment_method_id"],
            }
        )
        if user is None:
            user = require(ctx, "users", order["user_id"], message="User not found")
        method = _payment_method(user, payment["payment_method_id"])
        if _is_gift_card(method):
            method["balance"] = round(method["balance"] + payment["amount"], 2)
            credited = True
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    if credited and user is not None:
        ctx.put("users", user)
    ctx.put("orders", order)
    return order


@tool(kind="write")
def modify_pending_order_address(
    ctx: ToolContext,
    order_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> dict[str, Any]:
    """Replace the shipping address of a pending order (any status containing 'pending', so
    'pending (item modified)' too). Returns the order. Ask for explicit confirmation first.
    """
    order = require(ctx, "orders", order_id, message="Order not found")
    if "pending" not in order["status"]:
        raise ToolFailure("conflict", "Non-pending order cannot be modified")
    order["address"] = _address(address1, address2, city, state, country, zip)
    ctx.put("orders", order)
    return order


@tool(kind="write")
def modify_user_address(
    ctx: ToolContext,
    user_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> dict[str, Any]:
    """Replace a user's default address. Returns the user. Ask for explicit confirmation first."""
    user = require(ctx, "users", user_id, message="User not found")
    user["address"] = _address(address1, address2, city, state, country, zip)
    ctx.put("users", user)
    return user


# The agent addresses the order; the user's gift-card balance changes as a consequence.
@tool(kind="write", derives=_USER_BALANCE)
def modify_pending_order_payment(
    ctx: ToolContext, order_id: str, payment_method_id: str
) -> dict[str, Any]:
    """Change the payment method of a pending order (status containing 'pending') that has exactly
    one payment. The new method must differ from the current one; a gift card must cover the
    amount. Adds a payment with the new method and a refund to the old one. Returns the order.
    Ask for explicit confirmation first.
    """
    order = require(ctx, "orders", order_id, message="Order not found")
    if "pending" not in order["status"]:
        raise ToolFailure("conflict", "Non-pending order cannot be modified")
    user = require(ctx, "users", order["user_id"], message="User not found")
    method = _payment_method(user, payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ToolFailure("conflict", "There should be exactly one payment for a pending order")
    old_id = history[0]["payment_method_id"]
    if old_id == payment_method_id:
        raise ToolFailure(
            "conflict", "The new payment method should be different from the current one"
        )
    amount = history[0]["amount"]
    if _is_gift_card(method) and method["balance"] < amount:
        raise ToolFailure("refused", "Insufficient gift card balance to pay for the order")
    history.append(
        {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id}
    )
    history.append({"transaction_type": "refund", "amount": amount, "payment_method_id": old_id})
    changed = False
    if _is_gift_card(method):
        method["balance"] = round(method["balance"] - amount, 2)
        changed = True
    old_method = _payment_method(user, old_id)
    if _is_gift_card(old_method):
        old_method["balance"] = round(old_method["balance"] + amount, 2)
        changed = True
    if changed:
        ctx.put("users", user)
    ctx.put("orders", order)
    return order


# The agent addresses the order; the user's gift-card balance changes as a consequence.
@tool(kind="write", derives=_USER_BALANCE)
def modify_pending_order_items(
    ctx: ToolContext,
    order_id: str,
    item_ids: list[str],
    new_item_ids: list[str],
    payment_method_id: str,
) -> dict[str, Any]:
    """Swap items of an order whose status is exactly 'pending' for other variants of the same
    product; callable once per order (the status becomes 'pending (item modified)'). item_ids
    and new_item_ids pair up by position and may repeat. The price difference is charged to
    (or refunded to) payment_method_id; a gift card must cover it. Quirk kept from the
    original: every modified item takes the price and options of the LAST new item in the
    list. Returns the order. Ask for explicit confirmation first.
    """
    order = require(ctx, "orders", order_id, message="Order not found")
    if order["status"] != "pending":
        raise ToolFailure("conflict", "Non-pending order cannot be modified")
    missing = _count_exceeds(order, item_ids)
    if missing is not None:
        raise ToolFailure("not_found", f"{missing} not found")
    if len(item_ids) != len(new_item_ids):
        raise ToolFailure("invalid_arguments", "The number of items to be exchanged should match")
    diff_price: float = 0
    variant: dict[str, Any] | None = None
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        if item_id == new_item_id:
            raise ToolFailure(
                "invalid_arguments", "The new item id should be different from the old item id"
            )
        item = _first_item(order, item_id)
        if item is None:
            raise ToolFailure("not_found", f"Item {item_id} not found")
        variant = _variant(ctx, item["product_id"], new_item_id)
        if not variant["available"]:
            raise ToolFailure("conflict", f"New item {new_item_id} not found or available")
        diff_price += variant["price"] - item["price"]
    user = require(ctx, "users", order["user_id"], message="User not found")
    method = _payment_method(user, payment_method_id)
    if _is_gift_card(method) and method["balance"] < diff_price:
        raise ToolFailure("refused", "Insufficient gift card balance to pay for the new item")
    order["payment_history"].append(
        {
            "transaction_type": "payment" if diff_price > 0 else "refund",
            # The original builds a float-typed record: an int 0 (no pairs) becomes 0.0.
            "amount": float(abs(diff_price)),
            "payment_method_id": payment_method_id,
        }
    )
    if _is_gift_card(method):
        method["balance"] = round(method["balance"] - diff_price, 2)
        ctx.put("users", user)
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = _first_item(order, item_id)
        if item is None:
            raise ToolFailure("not_found", f"Item {item_id} not found")
        assert variant is not None  # at least one pair ran the checks above
        item["item_id"] = new_item_id
        item["price"] = variant["price"]  # the last pair's variant: the original's quirk
        item["options"] = dict(variant["options"])
    order["status"] = "pending (item modified)"
    ctx.put("orders", order)
    return order


@tool(kind="write")
def exchange_delivered_order_items(
    ctx: ToolContext,
    order_id: str,
    item_ids: list[str],
    new_item_ids: list[str],
    payment_method_id: str,
) -> dict[str, Any]:
    """Request an exchange of items of a delivered order for other variants of the same product;
    a delivered order can be exchanged or returned only once. item_ids and new_item_ids pair
    up by position and may repeat. Nothing is charged now: the status becomes 'exchange
    requested' and the price difference (rounded to cents) is recorded against
    payment_method_id; a gift card must cover it. Returns the order. Ask for explicit
    confirmation first.
    """
    order = require(ctx, "orders", order_id, message="Order not found")
    if order["status"] != "delivered":
        raise ToolFailure("conflict", "Non-delivered order cannot be exchanged")
    missing = _count_exceeds(order, item_ids)
    if missing is not None:
        raise ToolFailure("not_found", f"Number of {missing} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ToolFailure("invalid_arguments", "The number of items to be exchanged should match.")
    diff_price: float = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = _first_item(order, item_id)
        if item is None:
            raise ToolFailure("not_found", f"Item {item_id} not found")
        variant = _variant(ctx, item["product_id"], new_item_id)
        if not variant["available"]:
            raise ToolFailure("conflict", f"New item {new_item_id} not found or available")
        diff_price += variant["price"] - item["price"]
    diff_price = round(diff_price, 2)
    user = require(ctx, "users", order["user_id"], message="User not found")
    method = _payment_method(user, payment_method_id)
    if _is_gift_card(method) and method["balance"] < diff_price:
        raise ToolFailure(
            "refused", "Insufficient gift card balance to pay for the price difference"
        )
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff_price
    ctx.put("orders", order)
    return order


@tool(kind="write")
def return_delivered_order_items(
    ctx: ToolContext, order_id: str, item_ids: list[str], payment_method_id: str
) -> dict[str, Any]:
    """Request a return of items of a delivered order (ids may repeat); a delivered order can be
    exchanged or returned only once. The refund goes to the original payment method or to a
    gift card of the user. The status becomes 'return requested'. Returns the order. Ask for
    explicit confirmation first.
    """
    order = require(ctx, "orders", order_id, message="Order not found")
    if order["status"] != "delivered":
        raise ToolFailure("conflict", "Non-delivered order cannot be returned")
    user = require(ctx, "users", order["user_id"], message="User not found")
    method = _payment_method(user, payment_method_id)
    if (
        not _is_gift_card(method)
        and payment_method_id != order["payment_history"][0]["payment_method_id"]
    ):
        raise ToolFailure("refused", "Payment method should be the original payment method")
    if _count_exceeds(order, item_ids) is not None:
        raise ToolFailure("not_found", "Some item not found")
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    ctx.put("orders", order)
    return order


CONTRACT = Contract(
    name="tau2_retail",
    version="2",
    entities=(PRODUCTS, USERS, ORDERS),
    tools=(
        find_user_id_by_email,
        find_user_id_by_name_zip,
        get_user_details,
        get_order_details,
        get_product_details,
        get_item_details,
        list_all_product_types,
        calculate,
        transfer_to_human_agents,
        cancel_pending_order,
        modify_pending_order_address,
        modify_user_address,
        modify_pending_order_payment,
        modify_pending_order_items,
        exchange_delivered_order_items,
        return_delivered_order_items,
    ),
)


def load_data(folder: Path, tasks_file: Path | None) -> WorldData:
    """The retail world on a τ² data folder's ``db.json``, and its imported tasks.

    Args:
        folder: A τ² retail data folder.
        tasks_file: A τ² tasks file (a run made with ``tau2 run --tasks FILE``); default:
            every split of the folder.

    Raises:
        WorldError: naming the folder or file at fault.
    """
    from harness_world.grading.worlds import WorldData
    from harness_world.tau2 import importer

    try:
        world = importer.load_world(folder)
        if tasks_file is not None:
            tasks = importer.import_tasks(world, tasks_file)
        else:
            _, tasks = importer.split_tasks(world, folder, "all")
    except importer.FormatError as exc:
        raise WorldError(str(exc).splitlines()[0]) from None
    return WorldData(
        world=world, tasks=[item.task for item in tasks], seed_file=folder / importer.DB_FILE
    )


WORLD = WorldSpec(contract=CONTRACT, load_data=load_data)
