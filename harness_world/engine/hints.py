"""Tools and entities declared from type hints and docstrings: one declaration per fact.

A tool is a function whose parameters after the `ToolContext` ARE its schema::

    @tool(kind="read")
    def get_ticket(ctx: ToolContext, ticket_id: TicketId) -> dict[str, Any]:
        \"\"\"Get one ticket by id.\"\"\"

The docstring's text before its sections is the description models see (lines of a paragraph
join with spaces, paragraphs with a blank line); an ``Args:`` section gives each parameter's
description in the schema. Constraints ride on the types (``Annotated[int, msgspec.Meta(ge=1)]``)
and an optional argument defaults to ``msgspec.UNSET`` so "not given" differs from null. The
engine builds the `Params` struct from the signature, so validation stays exactly msgspec's:
unknown fields refused, typed errors at ``$.path``.

A row is a `TypedDict`: ``NotRequired`` fields may be absent, ``X | None`` fields may be null
(two facts, declared apart), a ``Literal`` gives the enum, a nested ``TypedDict`` an object with
fields, ``list[X]`` and ``dict[str, X]`` lists and maps; `entity` turns it into an `Entity`.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin

import attrs
import msgspec

from harness_world.engine.contract import (
    DEFAULT_AGGREGATES,
    PAGING_FIELDS,
    Derived,
    Entity,
    Field,
    Lookup,
    Params,
    Tool,
)
from harness_world.errors import HarnessWorldError

__all__ = ["DeclarationError", "entity", "literal_values", "tool"]


class DeclarationError(HarnessWorldError, TypeError):
    """A tool or entity declaration the engine cannot read; the message names file and line."""


def _where(obj: object) -> str:
    """``file:line`` of a function or class, for errors that must name where to look."""
    try:
        file = inspect.getsourcefile(obj)  # type: ignore[arg-type]
        _, line = inspect.getsourcelines(obj)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return getattr(obj, "__qualname__", repr(obj))
    return f"{file}:{line}"


_SECTION = re.compile(r"^(Args|Arguments|Returns|Raises|Yields|Examples?|Notes?):\s*$")


def _docstring(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The description and the ``Args:`` descriptions of a Google-style docstring."""
    text = inspect.cleandoc(fn.__doc__ or "")
    lines = text.splitlines()
    body: list[str] = []
    args: dict[str, str] = {}
    section = ""
    current = ""
    for line in lines:
        heading = _SECTION.match(line)
        if heading:
            section = heading.group(1)
            continue
        if not section:
            body.append(line)
        elif section in ("Args", "Arguments"):
            match = re.match(r"^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
            if match and len(line) - len(line.lstrip()) <= 4:
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current and line.strip():
                args[current] = f"{args[current]} {line.strip()}".strip()
    paragraphs = "\n".join(body).strip().split("\n\n")
    description = "\n\n".join(" ".join(p.split("\n")).strip() for p in paragraphs if p.strip())
    return description, args


@attrs.frozen(slots=True)
class _Keywords:
    """A tool's implementation called as ``fn(ctx, **params)`` (picklable; no closure)."""

    fn: Callable[..., Any]
    names: tuple[str, ...]

    def __call__(self, ctx: Any, params: Any, /) -> Any:
        return self.fn(ctx, **{name: getattr(params, name) for name in self.names})


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def _params_struct(fn: Callable[..., Any], where: str) -> tuple[type[Params], tuple[str, ...]]:
    """The `Params` struct of ``fn``'s signature: every parameter after the context."""
    signature = inspect.signature(fn)
    parameters = list(signature.parameters.values())
    if not parameters:
        raise DeclarationError(f"{where}: tool {fn.__name__!r} takes no ToolContext parameter")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise DeclarationError(
            f"{where}: tool {fn.__name__!r}: cannot resolve its type hints ({exc})"
        ) from None
    _, described = _docstring(fn)
    members: list[tuple[str, Any, Any]] = []
    for parameter in parameters[1:]:
        name = parameter.name
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise DeclarationError(
                f"{where}: tool {fn.__name__!r}: parameter {name!r}: *args and **kwargs "
                "cannot be a schema; declare each argument"
            )
        if name not in hints:
            raise DeclarationError(
                f"{where}: tool {fn.__name__!r}: parameter {name!r} has no type hint "
                "(the hints are the tool's schema)"
            )
        annotation = hints[name]
        if name in described:
            annotation = Annotated[annotation, msgspec.Meta(description=described[name])]
        if parameter.default is inspect.Parameter.empty:
            members.append((name, annotation, msgspec.NODEFAULT))
        else:
            members.append((name, annotation, parameter.default))
    unknown = sorted(set(described) - {m[0] for m in members} - {parameters[0].name})
    if unknown:
        raise DeclarationError(
            f"{where}: tool {fn.__name__!r}: its docstring's Args name no parameter "
            f"{', '.join(map(repr, unknown))}"
        )
    struct: type[Params] = msgspec.defstruct(  # type: ignore[assignment]
        _camel(fn.__name__),
        [(n, a) if d is msgspec.NODEFAULT else (n, a, d) for n, a, d in members],
        bases=(Params,),
        module=fn.__module__,
        kw_only=True,
        frozen=True,
        forbid_unknown_fields=True,
    )
    try:
        msgspec.json.schema(struct)
    except (TypeError, ValueError) as exc:
        raise DeclarationError(f"{where}: tool {fn.__name__!r}: unsupported type ({exc})") from None
    return struct, tuple(m[0] for m in members)


def tool(
    *,
    kind: Literal["read", "write"],
    name: str | None = None,
    derives: tuple[Derived, ...] = (),
    aggregates: tuple[str, ...] = DEFAULT_AGGREGATES,
    lookups: tuple[Lookup, ...] | None = None,
    replayed: str = "",
) -> Callable[[Callable[..., Any]], Tool]:
    """Declare a tool from a typed function: its parameters, hints and docstring.

    Args:
        kind: ``"read"`` or ``"write"`` (see `Tool.kind`: the checker and the mutation
            operators rely on it, so declare it truthfully).
        name: The name agents call it by (default: the function's name).
        derives: Rows it writes as a consequence of the one the agent addressed.
        aggregates: Top-level result fields that are facts about the world outside any row
            (see `Tool.aggregates`; default ``("total",)``, a listing's size).
        lookups: For a write tool: how its effect is looked up after a lost response (see
            `Tool.lookups`; None: not declared).
        replayed: For a write tool with an ``idempotency_key``: the result field that, when
            true, confirms a repeat was answered with the original (see `Tool.replayed`).

    Raises:
        DeclarationError: for a parameter without a type hint, a type the schema cannot
            express, an ``Args`` entry naming no parameter, no docstring, a pagination
            field declared as an aggregate, or lookups on a read tool or naming no parameter.
    """

    def declare(fn: Callable[..., Any]) -> Tool:
        where = _where(fn)
        description, _ = _docstring(fn)
        if not description:
            raise DeclarationError(
                f"{where}: tool {fn.__name__!r} has no docstring (its text is what models see)"
            )
        params, names = _params_struct(fn, where)
        echoed = sorted(set(aggregates) & PAGING_FIELDS)
        if echoed:
            raise DeclarationError(
                f"{where}: tool {fn.__name__!r}: {', '.join(echoed)} is a pagination field "
                "(it echoes the caller's arguments), never an aggregate"
            )
        _check_lookups(fn.__name__, where, kind, names, lookups, replayed)
        return Tool(
            name=name or fn.__name__,
            description=description,
            params=params,
            kind=kind,
            run=_Keywords(fn, names),
            derives=derives,
            aggregates=aggregates,
            lookups=lookups,
            replayed=replayed,
        )

    return declare


def _check_lookups(
    tool_name: str,
    where: str,
    kind: str,
    names: tuple[str, ...],
    lookups: tuple[Lookup, ...] | None,
    replayed: str,
) -> None:
    """Lookups and a replay flag belong to a write tool and name only its parameters."""
    if (lookups is not None or replayed) and kind != "write":
        raise DeclarationError(
            f"{where}: tool {tool_name!r}: only a write tool declares lookups or replayed"
        )
    for lookup in lookups or ():
        unknown = sorted(set(lookup.names()) - set(names))
        if unknown:
            raise DeclarationError(
                f"{where}: tool {tool_name!r}: a lookup names no parameter {', '.join(unknown)}"
            )


def literal_values(alias: Any) -> tuple[str, ...]:
    """The values of a ``Literal[...]`` alias as a tuple, e.g. a status list for a generator."""
    if get_origin(alias) is not Literal:
        raise DeclarationError(f"{alias!r} is not a Literal[...] type")
    return tuple(str(v) for v in get_args(alias))


def entity(
    row: type,
    *,
    name: str,
    key: str,
    indexes: tuple[str, ...] = (),
    id_prefix: str = "",
    description: str | None = None,
) -> Entity:
    """An `Entity` whose fields are read from a ``TypedDict`` row type.

    Args:
        row: The row type; its docstring's first paragraph is the entity's description.
        name: The entity name (``"tickets"``).
        key: The field holding each row's unique key.
        indexes: Fields with a secondary index.
        id_prefix: Prefix of keys minted for new rows.
        description: Overrides the docstring's description.

    Raises:
        DeclarationError: when ``row`` is not a TypedDict or holds a type rows cannot carry.
    """
    where = _where(row)
    fields = _typed_dict_fields(row, where)
    text = description
    if text is None:
        doc = inspect.cleandoc(row.__doc__ or "")
        text = " ".join(doc.split("\n\n")[0].split()) if doc else ""
    return Entity(
        name=name,
        key=key,
        fields=fields,
        indexes=indexes,
        id_prefix=id_prefix,
        description=text,
    )


def _is_typed_dict(value: object) -> bool:
    return isinstance(value, type) and typing.is_typeddict(value)


def _typed_dict_fields(row: object, where: str) -> dict[str, Field]:
    if not _is_typed_dict(row):
        raise DeclarationError(f"{where}: a row type must be a TypedDict, not {row!r}")
    assert isinstance(row, type)
    hints = typing.get_type_hints(row, include_extras=True)
    name = row.__name__
    optional: frozenset[str] = getattr(row, "__optional_keys__", frozenset())
    return {
        field: _field(hint, _absent_allowed(hint, field in optional), f"{where}: {name}.{field}")
        for field, hint in hints.items()
    }


def _absent_allowed(hint: Any, by_class: bool) -> bool:
    """Whether a row may lack the field: ``NotRequired``, or ``total=False``.

    ``NotRequired`` is read from the hint itself: postponed annotations hide it from the
    class's ``__optional_keys__``.
    """
    while get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    if get_origin(hint) is NotRequired:
        return True
    if get_origin(hint) is Required:
        return False
    return by_class


def _field(hint: Any, optional: bool, where: str) -> Field:
    """One `Field` from a row's type hint (``Annotated`` descriptions, ``| None``)."""
    description = ""
    origin = get_origin(hint)
    while origin in (Annotated, Required, NotRequired):
        args = get_args(hint)
        if origin is Annotated:
            for meta in args[1:]:
                if isinstance(meta, msgspec.Meta) and meta.description:
                    description = meta.description
        hint = args[0]
        origin = get_origin(hint)
    nullable = False
    if origin in (Union, types.UnionType):
        members = [a for a in get_args(hint) if a is not type(None)]
        nullable = len(members) < len(get_args(hint))
        if len(members) != 1:
            raise DeclarationError(f"{where}: a field holds one type (and maybe None): {hint!r}")
        hint = members[0]
    shape = _shape(hint, where)
    return msgspec.structs.replace(
        shape, nullable=nullable, optional=optional, description=description
    )


_SCALAR_FIELDS: dict[Any, str] = {str: "str", int: "int", float: "float", bool: "bool", Any: "any"}


def _shape(hint: Any, where: str) -> Field:
    """The type part of a field: scalar, enum, nested object, list or map."""
    if hint in _SCALAR_FIELDS:
        return Field(type=_SCALAR_FIELDS[hint])  # type: ignore[arg-type]
    origin = get_origin(hint)
    if origin is Literal:
        values = get_args(hint)
        if not all(isinstance(v, str) for v in values):
            raise DeclarationError(f"{where}: an enum field's Literal values must be strings")
        return Field(type="str", enum=tuple(values))
    if _is_typed_dict(hint):
        return Field(type="object", fields=_typed_dict_fields(hint, where))
    if origin is list:
        (item,) = get_args(hint) or (Any,)
        return Field(type="list", items=None if item is Any else _field(item, False, where))
    if origin is dict or hint is dict:
        key_type, item = get_args(hint) or (str, Any)
        if key_type is not str:
            raise DeclarationError(f"{where}: map keys are strings, not {key_type!r}")
        if item is Any:
            return Field(type="object")
        return Field(type="map", items=_field(item, False, where))
    raise DeclarationError(f"{where}: rows cannot hold {hint!r}")
