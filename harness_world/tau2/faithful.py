"""τ²-bench's own serialisation of rows: its database hash and the observations it shows.

τ² keeps its database as pydantic models. Two things follow that our canonical rows do not
carry, and both are reproduced here from the contract and the data, without any of τ²'s code:

* **nulls**: a top-level optional field of a row (an order's ``cancel_reason``,
  ``exchange_items``, ...) is a model field with a ``None`` default, so τ² always has it; our
  rows leave it absent until a tool sets it. Nested optional fields (a payment method's
  ``brand`` or ``balance``) belong to alternative models and stay absent in τ² as here.
* **number types**: τ² validates its data when it loads it, so a whole number in a ``float``
  field of the data file is a float there (``10.0``); a value a tool assigns keeps its Python
  type (τ²'s exchange records a price difference of ``0``, an int). A whole number that is
  still the data's value at that place is therefore rendered as a float; any other value as
  it is (our tools assign the same types as τ²'s).

τ²'s database hash is ``sha256(json.dumps(db.model_dump(), sort_keys=True, default=str))``
(default separators, ASCII escapes): `Tau2Hasher` gives that digest from row fragments
encoded once per world, so hashing an end state re-encodes only the rows the attempt touched.

τ²'s observations are ``json.dumps(model_dump(), default=str)`` of the returned model, in the
models' field order (which our contracts declare in the same order) with maps in the data's
order, or the returned text itself; a failure is ``Error: <message>``. Map order is not kept by
our canonical rows (keys are sorted), so `Tau2Shape` learns it from the plain data file: each
map of a row is rendered in the order of the same map of that row in the data (new keys after,
sorted).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from harness_world.engine.calls import FinalRow, Observation
from harness_world.engine.contract import Field
from harness_world.engine.limits import read_json_file
from harness_world.engine.world import World

__all__ = [
    "KeyOrders",
    "Tau2Hasher",
    "Tau2Shape",
    "learn_orders",
    "overlaid_hash",
    "overlaid_rows",
    "tau2_dumps",
]


def tau2_dumps(value: Any) -> str:
    """``json.dumps`` as τ² calls it: default separators, ASCII escapes, ``default=str``."""
    return json.dumps(value, default=str)


KeyOrders = Mapping[frozenset[str], tuple[str, ...]]
"""The data's order of the keys of each small map, by its set of keys (first seen wins)."""

_NO_ORDERS: KeyOrders = {}


def _map_order(value: dict[str, Any], template: Any, orders: KeyOrders) -> list[str]:
    """Keys of a map in τ²'s order: the same map in the data, else a map with these keys."""
    tmpl = template if isinstance(template, dict) else {}
    if set(tmpl) != set(value):
        known = orders.get(frozenset(value))
        if known is not None:
            return list(known)
    return [k for k in tmpl if k in value] + sorted(k for k in value if k not in tmpl)


def learn_orders(data: Any, limit: int = 12) -> dict[frozenset[str], tuple[str, ...]]:
    """The key order of every map of at most ``limit`` keys in plain data, by key set."""
    found: dict[frozenset[str], tuple[str, ...]] = {}
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if len(value) <= limit:
                found.setdefault(frozenset(value), tuple(value))
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend(reversed(value))
    return found


def _typed(field: Field, value: Any, template: Any, orders: KeyOrders = _NO_ORDERS) -> Any:
    """``value`` shaped as τ²'s model holds it: floats as floats, maps in the data's order."""
    if value is None:
        return None
    if field.type == "float" and type(value) is int and type(template) is int and value == template:
        return float(value)  # validated into a float when τ² loaded the data
    shape = _SHAPES.get(field.type)
    return value if shape is None else shape(field, value, template, orders)


def _typed_object(field: Field, value: Any, template: Any, orders: KeyOrders) -> Any:
    """An object's declared fields, each shaped, in the contract's order."""
    if field.fields is None or not isinstance(value, dict):
        return value
    tmpl = template if isinstance(template, dict) else {}
    return {
        name: _typed(sub, value[name], tmpl.get(name), orders)
        for name, sub in field.fields.items()
        if name in value
    }


def _typed_map(field: Field, value: Any, template: Any, orders: KeyOrders) -> Any:
    """A map's values, each shaped, in the data's key order (`_map_order`)."""
    if field.items is None or not isinstance(value, dict):
        return value
    tmpl = template if isinstance(template, dict) else {}
    return {
        k: _typed(field.items, value[k], tmpl.get(k), orders)
        for k in _map_order(value, template, orders)
    }


def _typed_list(field: Field, value: Any, template: Any, orders: KeyOrders) -> Any:
    """A list's items, each shaped against the template's item at its place."""
    if field.items is None or not isinstance(value, list):
        return value
    tmpl = template if isinstance(template, list) else []
    return [
        _typed(field.items, item, tmpl[i] if i < len(tmpl) else None, orders)
        for i, item in enumerate(value)
    ]


_SHAPES: Final[dict[str, Callable[[Field, Any, Any, KeyOrders], Any]]] = {
    "object": _typed_object,
    "map": _typed_map,
    "list": _typed_list,
}


@attrs.define(slots=True, eq=False)
class Tau2Shape:
    """Renders rows of a world the way τ²'s pydantic models dump them.

    Attributes:
        world: The start world (its contract gives field order, types and optional fields).
        templates: Per entity, the start rows as plain data in the data file's key order,
            by key as text; empty when no data file was given (maps then sorted).
        orders: Key orders of the data's small maps by key set (see `learn_orders`): a map
            whose keys differ from the same map in the data (an item given another
            product's options) takes the order of a data map with its keys.
    """

    world: World
    templates: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    orders: dict[frozenset[str], tuple[str, ...]] = attrs.field(factory=dict)

    @classmethod
    def from_data(cls, world: World, db_file: str | Path | None = None) -> Tau2Shape:
        """The shape of ``world``, with map orders read from τ²'s ``db.json`` when given.

        Raises:
            OSError: when the file cannot be read or is not a regular file of sensible size.
            ValueError: when it is not JSON, or is nested deeper than a record may be.
        """
        templates: dict[str, dict[str, Any]] = {}
        if db_file is not None:
            data = read_json_file(Path(db_file))
            if isinstance(data, dict):
                templates = {k: v for k, v in data.items() if isinstance(v, dict)}
        return cls(world, templates, learn_orders(templates))

    def row(self, entity: str, row: Mapping[str, Any]) -> dict[str, Any]:
        """One row as τ² holds it: contract field order, nulls for absent optional fields."""
        spec = self.world.contract.entity(entity)
        template = self.templates.get(entity, {}).get(str(row.get(spec.key)))
        tmpl = template if isinstance(template, dict) else {}
        out: dict[str, Any] = {}
        for name, field in spec.fields.items():
            if name in row:
                out[name] = _typed(field, row[name], tmpl.get(name), self.orders)
            elif field.optional:
                out[name] = None
        return out

    def entity_of(self, value: Any) -> str | None:
        """The entity a returned whole row belongs to (its fields are the entity's), or None."""
        if not isinstance(value, dict):
            return None
        for name in self.world.entities():
            spec = self.world.contract.entity(name)
            if spec.key in value and set(value) <= set(spec.fields):
                return name
        return None

    def _nested(self, value: dict[str, Any]) -> Any:
        """A returned map entry (e.g. a product's variant) shaped as τ² holds it, or None."""
        for entity in self.world.entities():
            for name, field in self.world.contract.entity(entity).fields.items():
                items = field.items
                if field.type != "map" or items is None or items.fields is None:
                    continue
                if not set(value) <= set(items.fields) or len(value) < 2:
                    continue
                return _typed(items, value, self._entry_template(entity, name, value), self.orders)
        return None

    def _entry_template(self, entity: str, name: str, value: dict[str, Any]) -> Any:
        """The data's entry of map ``name`` keyed by one of ``value``'s text fields."""
        wanted = {v for v in value.values() if isinstance(v, str)}
        for row in self.templates.get(entity, {}).values():
            entries = row.get(name) if isinstance(row, dict) else None
            if isinstance(entries, dict):
                for key in wanted & set(entries):
                    return entries[key]
        return None

    def observation(self, observation: Observation) -> str:
        """The text τ² shows the agent for one call: the result, or ``Error: <message>``."""
        if not observation.ok:
            assert observation.error is not None
            return f"Error: {observation.error.message}"
        return self.result_text(observation.result)

    def result_text(self, result: Any) -> str:
        """A successful result as τ² shows it (text as is; a row as its model's JSON)."""
        if isinstance(result, str):
            return result
        entity = self.entity_of(result)
        if entity is not None:
            return tau2_dumps(self.row(entity, result))
        if isinstance(result, dict):
            nested = self._nested(result)
            if nested is not None:
                return tau2_dumps(nested)
        return tau2_dumps(_plain(result))


def _plain(value: Any) -> Any:
    """τ²'s ``to_json_str`` on a value that is not a model: numbers and booleans as text."""
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@attrs.define(slots=True, eq=False)
class Tau2Hasher:
    """τ²'s whole-database hash of a world's start rows overlaid with an end state.

    Equal to τ²'s ``Environment.get_db_hash()`` on the same database: SHA-256 of
    ``json.dumps(db, sort_keys=True, default=str)`` where ``db`` maps each entity to its rows
    by key, every row shaped as τ²'s models hold it (`Tau2Shape.row`).
    """

    shape: Tau2Shape
    _fragments: dict[str, dict[str, bytes]] = attrs.field(init=False)
    _order: dict[str, list[str]] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._fragments = {}
        self._order = {}
        world = self.shape.world
        for entity in world.entities():
            key_field = world.contract.entity(entity).key
            rows = {str(row[key_field]): self._encode(entity, row) for row in world.rows(entity)}
            self._fragments[entity] = rows
            self._order[entity] = sorted(rows)

    def _encode(self, entity: str, row: Mapping[str, Any]) -> bytes:
        return json.dumps(self.shape.row(entity, row), sort_keys=True, default=str).encode()

    def hash(self, final: Iterable[FinalRow] = ()) -> str:
        """τ²'s hash of the database after an attempt whose touched rows end as ``final``."""
        overlay = overlaid_rows(final, self._encode)
        return overlaid_hash(self._fragments, self._order, overlay, _json_text, b", ", b": ")


def _json_text(text: str) -> bytes:
    return json.dumps(text).encode()


def overlaid_rows(
    final: Iterable[FinalRow], encode: Callable[[str, Mapping[str, Any]], bytes]
) -> dict[str, dict[str, bytes | None]]:
    """The encoded end rows of an attempt by entity and key as text (None: the row is gone)."""
    overlay: dict[str, dict[str, bytes | None]] = {}
    for item in final:
        overlay.setdefault(item.entity, {})[str(item.key)] = (
            None if item.row is None else encode(item.entity, item.row)
        )
    return overlay


def overlaid_hash(
    fragments: Mapping[str, Mapping[str, bytes]],
    order: Mapping[str, list[str]],
    overlay: Mapping[str, Mapping[str, bytes | None]],
    text: Callable[[str], bytes],
    comma: bytes,
    colon: bytes,
) -> str:
    """SHA-256 (hex) of the JSON object of every entity's rows, start rows overlaid by end rows.

    Streamed from row encodings made once per world (``fragments``, keys in ``order``), so
    hashing an attempt encodes only the rows it touched. ``text`` encodes a name or a key;
    ``comma`` and ``colon`` are the separators of the JSON dialect being matched.
    """
    digest = hashlib.sha256()
    digest.update(b"{")
    for i, entity in enumerate(sorted(set(fragments) | set(overlay))):
        digest.update((comma if i else b"") + text(entity) + colon + b"{")
        base = fragments.get(entity, {})
        changes = overlay.get(entity, {})
        keys = order.get(entity, [])
        if any(k not in base for k in changes):
            keys = sorted(set(keys) | set(changes))
        first = True
        for key in keys:
            blob = changes[key] if key in changes else base[key]
            if blob is None:
                continue
            digest.update((b"" if first else comma) + text(key) + colon + blob)
            first = False
        digest.update(b"}")
    digest.update(b"}")
    return digest.hexdigest()
