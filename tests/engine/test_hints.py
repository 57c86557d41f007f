"""Tools from type hints and docstrings, rows from TypedDicts: one declaration per fact."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import msgspec
import pytest
from hypothesis import given as examples
from hypothesis import settings
from hypothesis import strategies as st
from msgspec import UNSET, UnsetType

from harness_world.engine import (
    Contract,
    DeclarationError,
    Field,
    Params,
    Tool,
    ToolContext,
    World,
    WorldError,
    entity,
    given,
    literal_values,
    load_world,
    tool,
)
from tests.strategies import field_declarations, field_names

Limit = Annotated[int, msgspec.Meta(ge=1, le=100)]
Status = Literal["open", "closed"]


class _ListThings(Params, kw_only=True):
    status: Status | UnsetType = UNSET
    owner: str | UnsetType | None = UNSET
    tags: list[Annotated[str, msgspec.Meta(min_length=1)]] | UnsetType = UNSET
    limit: Limit = 20
    name: str


@tool(kind="read")
def list_things(
    ctx: ToolContext,
    status: Status | UnsetType = UNSET,
    owner: str | UnsetType | None = UNSET,
    tags: list[Annotated[str, msgspec.Meta(min_length=1)]] | UnsetType = UNSET,
    limit: Limit = 20,
    *,
    name: str,
) -> dict[str, Any]:
    """List things: one status at a time, by owner (null: unowned), by tag. Paginated,
    `limit` at most 100.

    A second paragraph stays a paragraph.
    """
    return given(status=status, owner=owner, tags=tags, limit=limit, name=name)


def test_the_signature_is_the_schema_a_params_class_would_give() -> None:
    assert (
        list_things.schema()
        == Tool(
            name="x", description="x", params=_ListThings, kind="read", run=lambda c, p: None
        ).schema()
    )
    assert list_things.name == "list_things"
    assert list_things.kind == "read"
    assert list_things.description == (
        "List things: one status at a time, by owner (null: unowned), by tag. Paginated, "
        "`limit` at most 100.\n\nA second paragraph stays a paragraph."
    )


def test_arguments_arrive_as_keywords_with_unset_kept() -> None:
    params = msgspec.convert({"name": "n", "owner": None}, list_things.params)
    result = list_things.run(None, params)
    assert result == {"owner": None, "limit": 20, "name": "n"}


def test_args_section_describes_each_parameter_in_the_schema() -> None:
    @tool(kind="write", name="renamed")
    def set_it(ctx: ToolContext, key: str, value: int = 0) -> None:
        """Set one value.

        Args:
            ctx: The context (not a schema field).
            key: Which value; a long description that
                continues on the next line.
            value: The new value.
        """

    schema = set_it.schema()
    assert set_it.name == "renamed"
    assert set_it.description == "Set one value."
    assert schema["properties"]["key"]["description"] == (
        "Which value; a long description that continues on the next line."
    )
    assert schema["properties"]["value"]["description"] == "The new value."
    assert schema["required"] == ["key"]
    assert "ctx" not in schema["properties"]


def _contract(*tools: Tool) -> Contract:
    row = entity(_Row, name="things", key="id")
    return Contract(name="hinted", version="1", entities=(row,), tools=tools)


class _Row(TypedDict):
    """Things."""

    id: str


def test_validation_stays_strict_through_a_session() -> None:
    world = World.from_data(_contract(list_things), {"things": [{"id": "a"}]})
    session = world.open_session()
    unknown = session.call("list_things", {"name": "n", "colour": "red"})
    assert unknown.error is not None and unknown.error.kind == "invalid_arguments"
    assert "colour" in unknown.error.message
    bounded = session.call("list_things", {"name": "n", "limit": 101})
    assert bounded.error is not None and "$.limit" in bounded.error.message
    typed = session.call("list_things", {"name": "n", "status": "gone"})
    assert typed.error is not None and "$.status" in typed.error.message
    ok = session.call("list_things", {"name": "n", "status": "open"})
    assert ok.ok and ok.result["status"] == "open"


def test_a_parameter_without_a_hint_names_the_file_line_and_parameter() -> None:
    with pytest.raises(DeclarationError) as caught:

        @tool(kind="read")
        def bad(ctx: ToolContext, ticket_id) -> None:  # type: ignore[no-untyped-def]
            """Get one."""

    message = str(caught.value)
    assert "test_hints.py:" in message
    assert "'ticket_id' has no type hint" in message


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(ctx, x: int):\n    pass\n", "has no docstring"),
        ('def f(ctx, *args: int):\n    """D."""\n', "*args and **kwargs"),
        ('def f(ctx, x: int):\n    """D.\n\n    Args:\n        y: no such.\n    """\n', "'y'"),
        ('def f():\n    """D."""\n', "takes no ToolContext"),
        ('def f(ctx, x: "Missing"):\n    """D."""\n', "cannot resolve its type hints"),
        ('def f(ctx, x: object):\n    """D."""\n', "unsupported type"),
    ],
)
def test_each_bad_declaration_is_one_clear_error(source: str, expected: str) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<declared>", "exec"), namespace)
    with pytest.raises(DeclarationError, match=None) as caught:
        tool(kind="read")(namespace["f"])
    assert expected in str(caught.value)


class _Address(TypedDict):
    city: str
    zip: NotRequired[str]


class _Customer(TypedDict):
    """Customers, one row each.

    The second paragraph is not the description.
    """

    id: str
    status: Status
    owner: NotRequired[
        Annotated[str | None, msgspec.Meta(description="absent on imports, null when unset")]
    ]
    address: _Address | None
    tags: list[str]
    scores: dict[str, float]
    extra: dict[str, Any]
    anything: Any
    raw_list: list[Any]


def test_a_typed_dict_row_declares_every_fact_once() -> None:
    declared = entity(_Customer, name="customers", key="id", indexes=("status",), id_prefix="C-")
    assert declared.description == "Customers, one row each."
    f = declared.fields
    assert f["status"] == Field(type="str", enum=("open", "closed"))
    assert f["owner"] == Field(
        type="str", nullable=True, optional=True, description="absent on imports, null when unset"
    )
    assert f["address"] == Field(
        type="object",
        nullable=True,
        fields={"city": Field(type="str"), "zip": Field(type="str", optional=True)},
    )
    assert f["tags"] == Field(type="list", items=Field(type="str"))
    assert f["scores"] == Field(type="map", items=Field(type="float"))
    assert f["extra"] == Field(type="object")
    assert f["anything"] == Field(type="any")
    assert f["raw_list"] == Field(type="list")
    assert literal_values(Status) == ("open", "closed")


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (int | str, "one type"),
        (dict[int, str], "map keys are strings"),
        (set[str], "rows cannot hold"),
        (Literal[1, 2], "Literal values must be strings"),
    ],
)
def test_a_row_type_rows_cannot_carry_is_refused(annotation: Any, expected: str) -> None:
    row = TypedDict("Odd", {"id": str, "odd": annotation})  # type: ignore[misc]  # noqa: UP013
    with pytest.raises(DeclarationError, match=expected):
        entity(row, name="odd", key="id")
    with pytest.raises(DeclarationError, match="must be a TypedDict"):
        entity(dict, name="odd", key="id")
    with pytest.raises(DeclarationError, match="not a Literal"):
        literal_values(str)


def _annotation(spec: Field, index: list[int]) -> Any:
    """The type hint that declares ``spec`` (the inverse of `entity`'s reading)."""
    kinds: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "any": Any}
    hint: Any
    if spec.enum is not None:
        hint = Literal[spec.enum]
    elif spec.type in kinds:
        hint = kinds[spec.type]
    elif spec.type == "list":
        hint = list[_annotation(spec.items, index)]  # type: ignore[arg-type, misc]
    elif spec.type == "map":
        hint = dict[str, _annotation(spec.items, index)]  # type: ignore[arg-type, misc]
    else:
        assert spec.fields is not None
        hint = _typed_dict(spec.fields, index)
    if spec.nullable:
        hint = hint | None
    if spec.description:
        hint = Annotated[hint, msgspec.Meta(description=spec.description)]
    if spec.optional:
        hint = NotRequired[hint]
    return hint


def _typed_dict(fields: dict[str, Field], index: list[int]) -> Any:
    index[0] += 1
    members = {name: _annotation(spec, index) for name, spec in fields.items()}
    return TypedDict(f"Row{index[0]}", members)  # type: ignore[operator]


@settings(max_examples=150, deadline=None)
@examples(fields=st.dictionaries(field_names, field_declarations(), min_size=1, max_size=5))
def test_reading_a_row_type_inverts_declaring_it(fields: dict[str, Field]) -> None:
    fields = {"id": Field(type="str"), **{k: v for k, v in fields.items() if k != "id"}}
    row = _typed_dict(fields, [0])
    assert entity(row, name="things", key="id").fields == fields


def _world_folder(root: Path, name: str, source: str) -> Path:
    folder = root / "worlds" / name
    (folder / "seeds").mkdir(parents=True)
    (folder / "seeds" / "small.json").write_text(json.dumps({"things": []}))
    (folder / "world.py").write_text(textwrap.dedent(source))
    return folder


def test_a_world_folder_with_a_bad_tool_is_one_error_naming_the_file(tmp_path: Path) -> None:
    folder = _world_folder(
        tmp_path,
        "untyped",
        """
        from harness_world.engine import tool

        @tool(kind="read")
        def get_thing(ctx, thing_id):
            "Get one thing."
        """,
    )
    with pytest.raises(WorldError) as caught:
        load_world(folder)
    assert f"{folder / 'world.py'}:" in str(caught.value)
    assert "'thing_id' has no type hint" in str(caught.value)


def test_a_world_folder_without_a_spec_or_that_raises_names_the_file(tmp_path: Path) -> None:
    folder = _world_folder(tmp_path, "nospec", "CONTRACT = None\n")
    with pytest.raises(WorldError, match=r"nospec/world.py: WORLD must be a .*WorldSpec"):
        load_world(folder)
    folder = _world_folder(tmp_path, "raises", "x = 1\nraise RuntimeError('boom')\n")
    with pytest.raises(WorldError, match=r"raises/world.py:2: RuntimeError: boom"):
        load_world(folder)
    with pytest.raises(WorldError, match="not a world folder"):
        load_world(tmp_path)
