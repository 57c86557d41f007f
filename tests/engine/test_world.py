"""World loading: validation, indexes, hashing, immutability, seeds, and data we did not write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from tests.conftest import REPO, TAU2_DATA

HASH_SCRIPT = "import harness_world as hw; print(hw.load_world('helpdesk').hash)"


def test_small_seed_has_the_shape_of_real_data(small: hw.World) -> None:
    tickets = list(small.rows("tickets"))
    assert len(tickets) == 641
    assert sum("owner_id" not in t for t in tickets) == 19
    assert sum("owner_id" in t and t["owner_id"] is None for t in tickets) == 22
    assert {t["status"] for t in tickets} == {
        "new",
        "open",
        "pending",
        "on_hold",
        "solved",
        "closed",
    }
    names = [u["name"] for u in small.rows("users")]
    assert "Jon Smith" in names and "John Smith" in names
    assert any(t["tags"] for t in tickets)


def test_committed_small_seed_is_what_the_generator_makes() -> None:
    module = __import__("harness_world.engine.world", fromlist=["world_module"]).world_module(
        "helpdesk"
    )
    committed = msgspec.json.decode((REPO / "worlds/helpdesk/seeds/small.json").read_bytes())
    assert committed == module.generate("small")


def test_large_seed_has_30000_tickets(large: hw.World) -> None:
    assert large.count("tickets") == 30_000
    assert large.lookup("tickets", "owner_id", ABSENT)
    assert large.lookup("tickets", "owner_id", None)


def test_index_keeps_absent_and_null_apart(small: hw.World) -> None:
    absent = small.lookup("tickets", "owner_id", ABSENT)
    null = small.lookup("tickets", "owner_id", None)
    assert absent is not None and null is not None
    assert len(absent) == 19 and len(null) == 22 and not set(absent) & set(null)
    assert small.lookup("tickets", "subject", "x") is None  # not indexed


def test_hash_is_stable_across_processes_and_hash_seeds(small: hw.World) -> None:
    hashes = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", HASH_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        hashes.add(out.stdout.strip())
    assert hashes == {small.hash}


def test_hash_changes_with_any_row(tmp_path: Path) -> None:
    data = msgspec.json.decode((REPO / "worlds/helpdesk/seeds/small.json").read_bytes())
    base = hw.World.from_data(hw.load_world("helpdesk").contract, data).hash
    data["tickets"][300]["priority"] = (
        "urgent" if data["tickets"][300]["priority"] != "urgent" else "low"
    )
    assert hw.World.from_data(hw.load_world("helpdesk").contract, data).hash != base


def _broken_seed() -> dict[str, object]:
    data = msgspec.json.decode((REPO / "worlds/helpdesk/seeds/small.json").read_bytes())
    tickets = data["tickets"]
    tickets[5]["status"] = "lost"
    del tickets[9]["subject"]
    tickets[12]["tags"] = ["ok", 7]
    tickets[20]["owner_id"] = 17
    tickets[30]["surprise"] = True
    tickets[40]["id"] = tickets[41]["id"]
    data["users"][3]["role"] = None
    data["robots"] = []
    return data


def test_every_problem_is_reported_sorted_and_stable() -> None:
    contract = hw.load_world("helpdesk").contract
    messages = []
    for _ in range(2):
        with pytest.raises(WorldError) as caught:
            hw.World.from_data(contract, _broken_seed(), source="broken.json")
        messages.append(str(caught.value))
        problems = caught.value.problems
        assert problems == sorted(problems)
        fields = {(p.entity, p.field) for p in problems}
        assert {
            ("tickets", "status"),
            ("tickets", "subject"),
            ("tickets", "tags[1]"),
            ("tickets", "owner_id"),
            ("tickets", "surprise"),
            ("tickets", "id"),
            ("users", "role"),
            ("robots", ""),
        } <= fields
    assert messages[0] == messages[1]
    assert "expected one of new|open|pending|on_hold|solved|closed, found 'lost'" in messages[0]


def test_malformed_json_names_file_line_and_column(tmp_path: Path) -> None:
    folder = tmp_path / "mini"
    (folder / "seeds").mkdir(parents=True)
    (folder / "world.py").write_text((REPO / "worlds/tau2_retail/world.py").read_text())
    bad = folder / "seeds" / "small.json"
    bad.write_text('{\n  "users": {\n    "a": {"user_id": "a",,}\n  }\n}\n')
    with pytest.raises(WorldError) as caught:
        hw.load_world(folder)
    text = str(caught.value)
    assert str(bad) in text and "line 3, column" in text


def test_unknown_world_and_size_are_clear_errors() -> None:
    with pytest.raises(WorldError, match="unknown world 'nowhere'"):
        hw.load_world("nowhere")
    with pytest.raises(WorldError, match=r"has no seed 'medium'.*large, small"):
        hw.load_world("helpdesk", size="medium")


def test_world_rows_are_copies(small: hw.World) -> None:
    row = small.get("tickets", "T-1000")
    assert row is not None
    row["status"] = "hacked"
    row["tags"].append("x")
    assert small.get("tickets", "T-1000") != row


@pytest.mark.skipif(
    not (TAU2_DATA / "db.json").is_file(),
    reason="τ² retail data not beside the checkout (../shared/external/tau2-retail)",
)
def test_contract_describes_tau2_retail_data() -> None:
    world = hw.load_world("tau2_retail", seed_file=TAU2_DATA / "db.json")
    assert (world.count("users"), world.count("orders"), world.count("products")) == (500, 1000, 50)
    raw = json.loads((TAU2_DATA / "db.json").read_text())
    order_id = next(iter(raw["orders"]))
    assert world.get("orders", order_id) == raw["orders"][order_id]
    pending = world.lookup("orders", "status", "pending")
    assert pending is not None and len(pending) == sum(
        o["status"] == "pending" for o in raw["orders"].values()
    )
    again = hw.World.from_data(world.contract, raw)
    assert again.hash == world.hash


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness_world.engine import ABSENT, Entity, WorldError  # noqa: E402
from harness_world.engine.contract import Field, Problem, validate_row  # noqa: E402
from tests import strategies as hs  # noqa: E402
from tests.conftest import examples  # noqa: E402


def _sample_rows() -> list[tuple[Entity, dict[str, object]]]:
    out = []
    worlds = [hw.load_world("helpdesk"), hw.load_world("inventory")]
    if (TAU2_DATA / "db.json").is_file():
        worlds.append(hw.load_world("tau2_retail", seed_file=TAU2_DATA / "db.json"))
    for world in worlds:
        for name in world.entities():
            entity = world.contract.entity(name)
            for key in world.keys(name)[:25]:
                row = world.get(name, key)
                assert row is not None
                out.append((entity, row))
    return out


SAMPLES = _sample_rows()


def _mutate(value: object, path: list[object], new: object, action: str) -> object:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and head in value:
        copy = dict(value)
        if not rest and action == "delete":
            del copy[head]
        elif not rest and action == "add":
            copy[f"{head}_extra"] = new
        else:
            copy[head] = _mutate(value[head], rest, new, action)
        return copy
    if isinstance(value, list) and isinstance(head, int) and head < len(value):
        copy_list = list(value)
        copy_list[head] = _mutate(value[head], rest, new, action)
        return copy_list
    return value


def _paths(value: object, prefix: list[object]) -> list[list[object]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, [*prefix, k])
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            out += _paths(v, [*prefix, i])
    return out


def _json_type(value: object) -> str:
    for kind, classes in (("null", type(None)), ("bool", bool), ("int", int), ("float", float)):
        if isinstance(value, classes):
            return kind
    names = {str: "str", list: "list", dict: "object"}
    return next((n for c, n in names.items() if isinstance(value, c)), type(value).__name__)


def _expected(spec: Field) -> str:
    text = "one of " + "|".join(spec.enum) if spec.enum is not None else spec.type
    return text + " or null" if spec.nullable else text


def _reference(spec: Field, value: object, path: str, where: tuple[str, str]) -> list[Problem]:
    """The declaration read literally, one value at a time, with no shortcut."""
    problem = Problem(where[0], where[1], path, _expected(spec), _json_type(value))
    if value is None:
        return [] if spec.nullable or spec.type == "any" else [problem]
    found, kind = _json_type(value), spec.type
    accepted = {"float": ("float", "int"), "map": ("object",), "any": (found,)}.get(kind, (kind,))
    if found not in accepted:
        return [problem]
    if spec.enum is not None and value not in spec.enum:
        return [Problem(where[0], where[1], path, _expected(spec), repr(value))]
    if kind == "object" and spec.fields is not None:
        assert isinstance(value, dict)
        return _reference_object(spec.fields, value, path + ".", where)
    if spec.items is not None and isinstance(value, list):
        nested = [_reference(spec.items, v, f"{path}[{i}]", where) for i, v in enumerate(value)]
        return [p for problems in nested for p in problems]
    if spec.items is not None and isinstance(value, dict):
        nested = [_reference(spec.items, v, f"{path}[{k!r}]", where) for k, v in value.items()]
        return [p for problems in nested for p in problems]
    return []


def _reference_object(
    fields: dict[str, Field], row: dict[str, object], prefix: str, where: tuple[str, str]
) -> list[Problem]:
    out: list[Problem] = []
    for name, spec in fields.items():
        if name in row:
            out += _reference(spec, row[name], prefix + name, where)
        elif not spec.optional:
            out.append(Problem(where[0], where[1], prefix + name, _expected(spec), "absent"))
    extra = [n for n in row if n not in fields]
    return out + [Problem(*where, prefix + str(n), "no such field", "present") for n in extra]


def _reference_row(entity: Entity, row: dict[str, object]) -> list[Problem]:
    key = row.get(entity.key)
    usable = isinstance(key, str | int) and not isinstance(key, bool)
    where = (entity.name, str(key) if usable else "")
    out = _reference_object(entity.fields, row, "", where)
    if entity.key in row and not usable:
        out.append(Problem(*where, entity.key, "str or int key", _json_type(key)))
    return out


# One plain value of each JSON type (a string no enum holds among them): what a glance at a
# value's class alone would wrongly accept or refuse.
NEAR_MISSES = st.sampled_from(["lost", "", 7, -1, 2.5, True, False, None, ["x"], [1], {"k": "v"}])


@settings(max_examples=examples(1_000, 10_000))
@given(st.data())
def test_the_validator_reports_what_the_declaration_says_of_mutated_rows(
    data: st.DataObject,
) -> None:
    """The one validator answers the common case at a glance (a value's class, an enum's
    member); a glance more lenient than the declaration would let invalid rows in. Every
    problem, in order, is what a literal reading of the declaration finds."""
    entity, row = data.draw(st.sampled_from(SAMPLES))
    path = data.draw(st.sampled_from(_paths(row, [])))
    action = data.draw(st.sampled_from(["replace", "delete", "add"]))
    mutated = _mutate(row, path, data.draw(st.one_of(NEAR_MISSES, hs.json_values)), action)
    assert isinstance(mutated, dict)
    assert validate_row(entity, mutated) == _reference_row(entity, mutated)


@settings(max_examples=examples(500, 5_000))
@given(hs.field_declarations(top=False), st.data())
def test_the_validator_reports_what_the_declaration_says_of_any_value(
    spec: Field, data: st.DataObject
) -> None:
    """Random declarations (nested objects, lists, maps, enums) and random values: the
    validator and the literal reading agree on every problem."""
    entity = Entity(name="things", key="id", fields={"id": Field(type="str"), "x": spec})
    value = data.draw(st.one_of(hs.json_values, st.lists(hs.json_values, max_size=3)))
    row = {"id": "T-1", "x": value}
    assert validate_row(entity, row) == _reference_row(entity, row)
