"""The contract a world declares: entities, their fields, indexes and tools.

A contract is data (msgspec structs) plus tool functions. The engine validates seeds and every
row a tool writes against it, builds indexes from it, and derives tool schemas from the
parameter structs, so there is one declaration for each fact.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, Final, Literal

import attrs
import msgspec

from harness_world.engine.canonical import from_json, sha256_hex, to_json
from harness_world.errors import HarnessWorldError

__all__ = [
    "DEFAULT_AGGREGATES",
    "PAGING_FIELDS",
    "Contract",
    "Derived",
    "Entity",
    "Field",
    "FieldType",
    "Params",
    "Problem",
    "Tool",
    "ToolFailure",
    "ToolRun",
    "validate_row",
]

FieldType = Literal["str", "int", "float", "bool", "object", "list", "map", "any"]
"""Field types. ``float`` also accepts integers (JSON has one number type); ``any`` accepts
every JSON value; ``object`` has declared ``fields``; ``list`` and ``map`` have ``items``."""


class Field(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The declaration of one field of an entity (or of a nested object).

    Attributes:
        type: The JSON type of the value, see `FieldType`.
        nullable: Whether the value may be ``null``.
        optional: Whether the field may be absent from the row. Absent and null are different
            facts and are declared separately.
        enum: For ``str`` fields, the only values allowed.
        fields: For ``object`` fields, the declaration of each nested field.
        items: For ``list`` and ``map`` fields, the declaration of each element (map keys are
            always strings).
        description: Free text shown in documentation.

    """

    type: FieldType
    nullable: bool = False
    optional: bool = False
    enum: tuple[str, ...] | None = None
    fields: dict[str, Field] | None = None
    items: Field | None = None
    description: str = ""


class Entity(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One kind of row in a world.

    Attributes:
        name: The entity name, e.g. ``"tickets"``.
        key: The name of the field holding each row's unique key (a string or an integer).
        fields: Every field a row may carry, by name; a row with any other field is invalid.
        indexes: Fields with a secondary index. A list field is indexed by each element.
            Absent and null are distinct index values.
        id_prefix: Prefix of keys minted by `ToolContext.new_key` for new rows.
        description: Free text shown in documentation.

    """

    name: str
    key: str
    fields: dict[str, Field]
    indexes: tuple[str, ...] = ()
    id_prefix: str = ""
    description: str = ""


class Problem(msgspec.Struct, frozen=True, order=True):
    """One validation problem in a seed or a written row.

    Problems sort by entity, key, field, so a broken seed reports the same list every run.

    Attributes:
        entity: The entity (or ``"<file>"`` for a problem with the file as a whole).
        key: The row's key as text (empty when the row has no usable key).
        field: A path into the row such as ``owner_id`` or ``address.zip`` or ``tags[2]``.
        expected: What the contract requires there.
        found: What the seed holds there (``absent`` when missing).

    """

    entity: str
    key: str
    field: str
    expected: str
    found: str

    def __str__(self) -> str:
        where = f"{self.entity}[{self.key}]" if self.key else self.entity
        if self.field:
            where += f".{self.field}"
        return f"{where}: expected {self.expected}, found {self.found}"


class Params(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Base class for tool parameters: unknown arguments are rejected, all are keywords.

    Declare optional arguments with ``msgspec.UNSET`` defaults so "not given" is distinct from
    null, and bound numbers with ``Annotated[int, msgspec.Meta(ge=..., le=...)]``; the JSON Schema
    given to models is derived from the same type.
    """


class ToolFailure(HarnessWorldError):
    """Raised inside a tool to report an agent-facing typed error.

    The session catches it, rolls back the call's writes and returns an observation whose
    ``error`` has this ``kind`` and ``message``. Kinds in use: ``invalid_arguments``,
    ``unknown_tool``, ``not_found``, ``conflict``, ``refused``, ``internal``; worlds may add more.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class Derived(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A row a tool writes as a consequence of the row the agent addressed (a derived effect).

    The destination stock row of a transfer, a counter, an audit row: the agent chose the
    transfer, not the destination row's new count. ``trace.read_before_write`` applies only to
    rows the agent addressed; state criteria still see every change, derived or not.

    Attributes:
        entity: The entity of the derived row.
        key: The derived row's key as a template over the call's arguments, formatted with
            `str.format` (e.g. ``"{item_id}@{to_warehouse_id}"``). Empty: every row of
            ``entity`` the tool writes is derived (for rows keyed by something the arguments
            do not name, such as the customer of an order).
    """

    entity: str
    key: str = ""

    def covers(self, entity: str, key: object, args: object) -> bool:
        """Whether a write of ``entity:key`` by a call with ``args`` is this derived effect."""
        if entity != self.entity:
            return False
        if not self.key:
            return True
        if not isinstance(args, dict):
            return False
        try:
            return self.key.format(**args) == str(key)
        except (KeyError, IndexError, ValueError):
            return False


PAGING_FIELDS: Final = frozenset({"offset", "next_offset", "limit"})
"""The fields of a listing's result that say where a page is: they repeat or follow from the
caller's own arguments, so they never show the agent anything about the world."""

DEFAULT_AGGREGATES: Final = ("total",)
"""What `Tool.aggregates` is unless a tool declares otherwise."""

ToolRun = Callable[[Any, Any], Any]
"""A tool's implementation, called as ``run(ctx, params)`` with a
`harness_world.engine.ToolContext` and the validated `Params`; returns a JSON value."""


@attrs.frozen(slots=True)
class Tool:
    """A tool a world offers to agents.

    Attributes:
        name: The name agents call it by.
        description: What it does, shown to models; include every quirk an agent must know.
        params: The `Params` subclass its arguments are validated against.
        kind: ``"read"`` or ``"write"``. Not decoration: the checker's ``no_repeated_writes``
            looks only at write tools, precheck counts an oracle's successful write calls as the
            minimum work a task needs, and the automatic mutation operators drop, duplicate and
            redirect write calls. Declare it truthfully.
        run: The implementation.
        derives: Rows it writes as a consequence of the one the agent addressed (see
            `Derived`); part of the contract's hash when given.
        aggregates: Top-level fields of its result that are facts about the world though not
            inside a row (a listing's ``total``): what the agent was shown, like the values of
            the rows it returns (see `harness_world.grading.shown`). ``("total",)`` by default,
            the size of every listing `harness_world.engine.ToolContext.page` makes; part of the
            contract's hash when it differs. Never a pagination field (`PAGING_FIELDS`).

    """

    name: str
    description: str
    params: type[Params]
    kind: Literal["read", "write"]
    run: ToolRun
    derives: tuple[Derived, ...] = ()
    aggregates: tuple[str, ...] = attrs.field(default=DEFAULT_AGGREGATES)

    @aggregates.validator
    def _no_paging(self, _: object, value: tuple[str, ...]) -> None:
        echoed = sorted(set(value) & PAGING_FIELDS)
        if echoed:
            raise ValueError(
                f"tool {self.name!r}: {', '.join(echoed)} is a pagination field, which echoes "
                "the caller's own arguments: it cannot be an aggregate"
            )

    def derived(self, entity: str, key: object, args: object) -> bool:
        """Whether this tool's write of ``entity:key`` (called with ``args``) is derived."""
        return any(d.covers(entity, key, args) for d in self.derives)

    def schema(self) -> dict[str, Any]:
        """Return the JSON Schema of the parameters, inlined (no top-level ``$ref``).

        A fresh copy each time (callers may change it); derived once per parameter type.
        """
        decoded: dict[str, Any] = from_json(_params_schema(self.params))
        return decoded


@functools.lru_cache(maxsize=1024)
def _params_schema(params: type) -> bytes:
    """The schema of a parameter struct, as JSON.

    msgspec's derivation costs ~0.1 ms a tool, and reports ask for every tool's schema once per
    record (the advisories read the enums).
    """
    (root,), components = msgspec.json.schema_components([params], ref_template="#/$defs/{name}")
    name = root["$ref"].rsplit("/", 1)[-1]
    schema: dict[str, Any] = dict(components.pop(name))
    schema.pop("title", None)
    if components:
        schema["$defs"] = components
    return msgspec.json.encode(schema)


@attrs.frozen(slots=True)
class Contract:
    """Everything a world declares about itself.

    Attributes:
        name: The world's name.
        version: Bumped by the world's author whenever tool behaviour changes; part of the hash.
        entities: The entity declarations.
        tools: The tools, in the order they are shown to agents.
        epoch: The logical clock's zero as an ISO-8601 UTC timestamp; tools derive every
            timestamp they write from it (epoch plus one second per write tick).

    """

    name: str
    version: str
    entities: tuple[Entity, ...]
    tools: tuple[Tool, ...]
    epoch: str = "2026-01-01T00:00:00Z"
    _entity_by_name: dict[str, Entity] = attrs.field(init=False, repr=False, eq=False)
    _tool_by_name: dict[str, Tool] = attrs.field(init=False, repr=False, eq=False)
    hash: str = attrs.field(init=False, eq=False)

    def __attrs_post_init__(self) -> None:
        entities = {e.name: e for e in self.entities}
        tools = {t.name: t for t in self.tools}
        if len(entities) != len(self.entities):
            raise ValueError(f"contract {self.name!r}: duplicate entity names")
        if len(tools) != len(self.tools):
            raise ValueError(f"contract {self.name!r}: duplicate tool names")
        for entity in self.entities:
            if entity.key not in entity.fields:
                raise ValueError(f"entity {entity.name!r}: key field {entity.key!r} not declared")
            for index in entity.indexes:
                if index not in entity.fields:
                    raise ValueError(f"entity {entity.name!r}: index on undeclared {index!r}")
        for t in self.tools:
            if not (isinstance(t.params, type) and issubclass(t.params, Params)):
                raise TypeError(
                    f"tool {t.name!r}: params must subclass harness_world.engine.Params"
                )
        object.__setattr__(self, "_entity_by_name", entities)
        object.__setattr__(self, "_tool_by_name", tools)
        described = {
            "name": self.name,
            "version": self.version,
            "epoch": self.epoch,
            "entities": list(self.entities),
            "tools": [_described_tool(t) for t in self.tools],
        }
        object.__setattr__(self, "hash", sha256_hex(to_json(described)))

    def entity(self, name: str) -> Entity:
        """Return the entity called ``name`` or raise `KeyError`."""
        return self._entity_by_name[name]

    def has_entity(self, name: str) -> bool:
        """Whether the contract declares an entity called ``name``."""
        return name in self._entity_by_name

    def tool(self, name: str) -> Tool | None:
        """Return the tool called ``name``, or None."""
        return self._tool_by_name.get(name)


def _described_tool(t: Tool) -> dict[str, Any]:
    """What the contract hash covers of a tool.

    ``derives`` is included only when declared, so contracts without derived effects keep
    their hash.
    """
    described: dict[str, Any] = {
        "name": t.name,
        "description": t.description,
        "kind": t.kind,
        "params": t.schema(),
    }
    if t.derives:
        described["derives"] = list(t.derives)
    if t.aggregates != DEFAULT_AGGREGATES:
        described["aggregates"] = list(t.aggregates)
    return described


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _describe(spec: Field) -> str:
    text: str = spec.type
    if spec.enum is not None:
        text = "one of " + "|".join(spec.enum)
    if spec.nullable:
        text += " or null"
    return text


def _type_matches(kind: FieldType, found: str) -> bool:
    """Whether a value of JSON type ``found`` is acceptable for a field of type ``kind``."""
    if kind == "float":
        return found in ("float", "int")
    if kind == "map":
        return found == "object"
    return kind in ("any", found)


# The class a valid value of each type has: one comparison answers the common case.
_PLAIN: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}


def _check_value(
    spec: Field, value: object, path: str, entity: str, key: str, out: list[Problem]
) -> None:
    if value is None:
        if not (spec.nullable or spec.type == "any"):  # ``any`` is every JSON value, null too
            out.append(Problem(entity, key, path, _describe(spec), "null"))
        return
    found = _type_name(value)
    if not _type_matches(spec.type, found):
        out.append(Problem(entity, key, path, _describe(spec), found))
        return
    _check_contents(spec, value, path, entity, key, out)


def _check_contents(
    spec: Field, value: object, path: str, entity: str, key: str, out: list[Problem]
) -> None:
    """Enum membership, and every nested field, item or map value."""
    kind = spec.type
    if kind == "str" and spec.enum is not None and value not in spec.enum:
        out.append(Problem(entity, key, path, _describe(spec), repr(value)))
    elif kind == "object" and spec.fields is not None:
        assert isinstance(value, dict)
        _check_object(spec.fields, value, path + ".", entity, key, out)
    elif kind in ("list", "map") and spec.items is not None:
        assert isinstance(value, list | dict)
        items = value if isinstance(value, list) else value.values()
        plain = _PLAIN.get(spec.items.type) if spec.items.enum is None else None
        if plain is not None and all(item.__class__ is plain for item in items):
            return  # every element a plain scalar of its type: nothing to report
        named = enumerate(value) if isinstance(value, list) else value.items()
        for name, item in named:
            where = f"{path}[{name}]" if isinstance(value, list) else f"{path}[{name!r}]"
            _check_value(spec.items, item, where, entity, key, out)


def _check_object(
    fields: dict[str, Field],
    row: dict[str, Any],
    prefix: str,
    entity: str,
    key: str,
    out: list[Problem],
) -> None:
    for name, spec in fields.items():
        if name not in row:
            if not spec.optional:
                out.append(Problem(entity, key, prefix + name, _describe(spec), "absent"))
            continue
        value = row[name]
        if value.__class__ is _PLAIN.get(spec.type) and (spec.enum is None or value in spec.enum):
            continue  # a plain scalar of its type (an enum's member): valid at a glance
        _check_value(spec, value, prefix + name, entity, key, out)
    for name in row:
        if name not in fields:
            out.append(Problem(entity, key, prefix + str(name), "no such field", "present"))


def validate_row(entity: Entity, row: object, key_text: str = "") -> list[Problem]:
    """Check one row against its entity; return every problem found (empty when valid).

    The one validator of rows, for seeds and for every row a tool writes: each problem names
    its path in the row (``owner_id``, ``address.zip``, ``tags[2]``), in declaration order.
    """
    if not isinstance(row, dict):
        return [Problem(entity.name, key_text, "", "object", _type_name(row))]
    out: list[Problem] = []
    _check_object(entity.fields, row, "", entity.name, key_text, out)
    key_value = row.get(entity.key)
    usable_key = isinstance(key_value, str | int) and not isinstance(key_value, bool)
    if entity.key in row and not usable_key:
        out.append(
            Problem(entity.name, key_text, entity.key, "str or int key", _type_name(key_value))
        )
    if out and not key_text and usable_key:  # named by the row's own key
        out = [msgspec.structs.replace(p, key=str(key_value)) for p in out]
    return out


def sorted_problems(problems: Iterable[Problem]) -> list[Problem]:
    """Deduplicate and sort problems so every run reports the same list."""
    return sorted(set(problems))
