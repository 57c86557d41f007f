"""A tiny world with integer keys, an `any` field and an indexed list field, for edge cases."""

from __future__ import annotations

from typing import Any

import harness_world as hw
from harness_world.engine import Contract, Entity, Field, Params, Tool, ToolContext, ToolFailure


class SetField(Params):
    id: int
    field: str
    value: Any


class GetThing(Params):
    id: int


def _set(ctx: ToolContext, p: SetField) -> Any:
    row = ctx.get("things", p.id)
    if row is None:
        raise ToolFailure("not_found", f"id: no thing {p.id}")
    row[p.field] = p.value
    ctx.put("things", row)
    return row


def _get(ctx: ToolContext, p: GetThing) -> Any:
    return ctx.get("things", p.id)


THINGS = Entity(
    name="things",
    key="id",
    fields={
        "id": Field(type="int"),
        "data": Field(type="any"),
        "note": Field(type="str"),
        "tags": Field(type="list", items=Field(type="str")),
    },
    indexes=("tags",),
)
CONTRACT = Contract(
    name="toy",
    version="1",
    entities=(THINGS,),
    tools=(
        Tool(name="set", description="Set one field.", params=SetField, kind="write", run=_set),
        Tool(name="get", description="Get one thing.", params=GetThing, kind="read", run=_get),
    ),
)


def toy_world() -> hw.World:
    return hw.World.from_data(
        CONTRACT,
        {
            "things": [
                {"id": 1, "data": [1.0], "note": "a", "tags": ["x", "y"]},
                {"id": 2, "data": 0, "note": "b", "tags": ["x"]},
            ]
        },
    )
