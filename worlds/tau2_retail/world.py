"""τ²-bench's retail domain described by a harness_world contract.

The data is NOT part of this repository: load it from a τ² retail data folder, e.g.
``hw.load_world("tau2_retail", seed_file=".../db.json")``. The data is © Sierra Research,
MIT licence (see the LICENSE file beside the data). The tools arrive in a later change; this
contract already describes every field of the data, including fields that only some orders
carry (written by the original's tools) and payment methods whose shape depends on ``source``.
"""

from __future__ import annotations

from harness_world import Contract, Entity, Field

_S = Field(type="str")
_ADDRESS = Field(
    type="object",
    fields={"address1": _S, "address2": _S, "city": _S, "country": _S, "state": _S, "zip": _S},
)
_PAYMENT_METHOD = Field(
    type="object",
    description="Shape depends on `source`: cards carry brand and last_four, gift cards a balance.",
    fields={
        "source": Field(type="str", enum=("credit_card", "paypal", "gift_card")),
        "id": _S,
        "brand": Field(type="str", optional=True),
        "last_four": Field(type="str", optional=True),
        "balance": Field(type="float", optional=True),
    },
)
_OPTIONS = Field(type="map", items=_S)
_ID_LIST = Field(type="list", items=_S)

USERS = Entity(
    name="users",
    key="user_id",
    fields={
        "user_id": _S,
        "name": Field(type="object", fields={"first_name": _S, "last_name": _S}),
        "address": _ADDRESS,
        "email": _S,
        "payment_methods": Field(type="map", items=_PAYMENT_METHOD),
        "orders": _ID_LIST,
    },
    indexes=("email",),
)
ORDERS = Entity(
    name="orders",
    key="order_id",
    id_prefix="#W",
    fields={
        "order_id": _S,
        "user_id": _S,
        "address": _ADDRESS,
        "items": Field(
            type="list",
            items=Field(
                type="object",
                fields={
                    "name": _S,
                    "product_id": _S,
                    "item_id": _S,
                    "price": Field(type="float"),
                    "options": _OPTIONS,
                },
            ),
        ),
        "status": _S,
        "fulfillments": Field(
            type="list",
            items=Field(type="object", fields={"tracking_id": _ID_LIST, "item_ids": _ID_LIST}),
        ),
        "payment_history": Field(
            type="list",
            items=Field(
                type="object",
                fields={
                    "transaction_type": Field(type="str", enum=("payment", "refund")),
                    "amount": Field(type="float"),
                    "payment_method_id": _S,
                },
            ),
        ),
        "cancel_reason": Field(type="str", optional=True),
        "exchange_items": Field(type="list", items=_S, optional=True),
        "exchange_new_items": Field(type="list", items=_S, optional=True),
        "exchange_payment_method_id": Field(type="str", optional=True),
        "exchange_price_difference": Field(type="float", optional=True),
        "return_items": Field(type="list", items=_S, optional=True),
        "return_payment_method_id": Field(type="str", optional=True),
    },
    indexes=("user_id", "status"),
)
PRODUCTS = Entity(
    name="products",
    key="product_id",
    fields={
        "name": _S,
        "product_id": _S,
        "variants": Field(
            type="map",
            items=Field(
                type="object",
                fields={
                    "item_id": _S,
                    "options": _OPTIONS,
                    "available": Field(type="bool"),
                    "price": Field(type="float"),
                },
            ),
        ),
    },
)

CONTRACT = Contract(name="tau2_retail", version="1", entities=(PRODUCTS, USERS, ORDERS), tools=())
