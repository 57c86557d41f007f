"""τ²'s treatment of ill-typed arguments, reproduced as explicit coercions (``tau2`` mode).

τ² passes a model's arguments to its Python tools unchecked, so some ill-typed calls succeed
there and write. Our tools validate arguments strictly and refuse them (the default, and the
mode for new runs). To regrade a real τ² trajectory to τ²'s end state, `coerce_call` rewrites
the ill-typed arguments whose τ² behaviour is known exactly into the well-typed arguments that
behave the same, and says so. Three classes:

``text_as_list``
    A string where a list of ids is expected. τ²'s tools iterate it character by character
    (``count``, ``len``, ``zip``, ``sorted`` all agree on a string and the list of its
    characters, as no id is one character long), so it becomes that list; ``""`` becomes
    ``[]``: ``return_delivered_order_items`` then requests a return of no items,
    ``modify_pending_order_items`` records a 0.0 refund and marks the order modified.
``object_as_list``
    An object where a list is expected: τ² iterates its keys. An empty object becomes ``[]``;
    a non-empty one becomes the list of its keys where τ² only iterates the list
    (``new_item_ids``: ``len``, ``zip``, ``sorted``) and is not coerced elsewhere (τ² calls
    ``item_ids.count``, which fails on an object with a Python error our tools do not
    reproduce; both sides refuse the call and change nothing).
``unread_text``
    Any JSON value for a text parameter the tool never reads (``transfer_to_human_agents``'s
    ``summary``): τ² succeeds, so it becomes its JSON text.

Everything else ill-typed is left as given, and is refused as in strict mode.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_origin

import msgspec

from harness_world.engine.world import World

__all__ = ["UNREAD_TEXT", "ArgumentMode", "Coercion", "CoercionClass", "coerce_call"]

ArgumentMode = Literal["strict", "tau2"]
CoercionClass = Literal["text_as_list", "object_as_list", "unread_text"]

UNREAD_TEXT: frozenset[tuple[str, str]] = frozenset({("transfer_to_human_agents", "summary")})
"""(tool, parameter) pairs of text parameters the τ² tool never reads."""

ITERATED_ONLY: frozenset[tuple[str, str]] = frozenset(
    {
        ("modify_pending_order_items", "new_item_ids"),
        ("exchange_delivered_order_items", "new_item_ids"),
    }
)
"""(tool, parameter) pairs of list parameters the τ² tool only iterates (never ``count``)."""


class Coercion(msgspec.Struct, frozen=True, kw_only=True):
    """One argument rewritten the way τ² treats it.

    Attributes:
        argument: The parameter name.
        cls: The coercion class (see the module notes).
        given: The value as the trajectory gave it.
        used: The value the call ran with.
    """

    argument: str
    cls: CoercionClass
    given: Any
    used: Any


def _list_parameters(world: World, tool: str) -> set[str]:
    spec = world.contract.tool(tool)
    if spec is None:
        return set()
    return {f.name for f in msgspec.structs.fields(spec.params) if get_origin(f.type) is list}


def _coerce_one(tool: str, name: str, value: Any, lists: set[str]) -> Coercion | None:
    if name in lists and isinstance(value, str):
        return Coercion(argument=name, cls="text_as_list", given=value, used=list(value))
    if name in lists and isinstance(value, dict) and (not value or (tool, name) in ITERATED_ONLY):
        return Coercion(argument=name, cls="object_as_list", given=value, used=list(value))
    if (tool, name) in UNREAD_TEXT and not isinstance(value, str):
        return Coercion(argument=name, cls="unread_text", given=value, used=json.dumps(value))
    return None


def coerce_call(world: World, tool: str, args: Any) -> tuple[Any, list[Coercion]]:
    """The arguments τ²'s tool would effectively act on, and the coercions made (may be none).

    Arguments that are not a JSON object, and unknown tools, are returned unchanged.
    """
    if not isinstance(args, dict):
        return args, []
    lists = _list_parameters(world, tool)
    coercions = [c for name, value in args.items() if (c := _coerce_one(tool, name, value, lists))]
    if not coercions:
        return args, []
    used = dict(args)
    for c in coercions:
        used[c.argument] = c.used
    return used, coercions
