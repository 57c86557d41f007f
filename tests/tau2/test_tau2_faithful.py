"""τ²'s own serialisation: its database hash and its observation strings, against τ²'s code.

τ²'s retail code is read from the shared copy (see tests/tau2/reference.py); every test here
is skipped with the reason when it or the data is absent.
"""

from __future__ import annotations

from typing import Any

import pytest

import harness_world as hw
from harness_world.engine import FinalRow
from harness_world.tau2 import ImportedTask, importer
from harness_world.tau2.faithful import Tau2Hasher, Tau2Shape
from harness_world.tau2.gold import run_gold
from tests.conftest import TAU2_DATA
from tests.tau2.reference import needs_tau2, tau2_env, tau2_source

pytestmark = [pytest.mark.tau2, needs_tau2]


@pytest.fixture(scope="module")
def world() -> hw.World:
    return importer.load_world(TAU2_DATA)


@pytest.fixture(scope="module")
def imported(world: hw.World) -> list[ImportedTask]:
    return importer.import_tasks(world, TAU2_DATA / "tasks_train.json")


@pytest.fixture(scope="module")
def shape(world: hw.World) -> Tau2Shape:
    return Tau2Shape.from_data(world, TAU2_DATA / "db.json")


@pytest.fixture(scope="module")
def hasher(shape: Tau2Shape) -> Tau2Hasher:
    return Tau2Hasher(shape)


@pytest.fixture(scope="module")
def gold_runs(imported: list[ImportedTask]) -> dict[str, tuple[list[Any], str]]:
    """Per task: τ²'s tool messages for the gold calls and τ²'s hash of the end state."""
    source = tau2_source()
    out: dict[str, tuple[list[Any], str]] = {}
    for item in imported:
        env: Any = tau2_env()
        messages = [source.call(env, g.tool, g.args, str(i)) for i, g in enumerate(item.gold)]
        out[item.task.id] = (messages, env.get_db_hash())
    return out


def test_start_database_hash_is_tau2s(hasher: Tau2Hasher) -> None:
    env: Any = tau2_env()
    assert hasher.hash() == env.get_db_hash()
    assert hasher.hash().startswith("b25c9cb2")  # the figure τ²'s README gives


def test_every_gold_end_state_hashes_as_in_tau2(
    world: hw.World,
    imported: list[ImportedTask],
    hasher: Tau2Hasher,
    gold_runs: dict[str, tuple[list[Any], str]],
) -> None:
    changed = 0
    for item in imported:
        record = run_gold(world, item.task, item.gold)
        changed += bool(record.final)
        assert hasher.hash(record.final) == gold_runs[item.task.id][1], item.task.id
    assert changed >= 60  # the comparison covers written end states, not only the start


def test_a_changed_row_changes_the_tau2_hash(
    world: hw.World, imported: list[ImportedTask], hasher: Tau2Hasher
) -> None:
    item = next(i for i in imported if any(g.tool == "cancel_pending_order" for g in i.gold))
    record = run_gold(world, item.task, item.gold)
    edited = [
        FinalRow(entity=f.entity, key=f.key, row={**f.row, "status": "pending"})
        if f.row is not None and f.entity == "orders"
        else f
        for f in record.final
    ]
    assert hasher.hash(edited) != hasher.hash(record.final)


def test_nulls_and_float_types_are_part_of_the_tau2_row(world: hw.World, shape: Tau2Shape) -> None:
    key = world.keys("orders")[0]
    row = shape.row("orders", world.get("orders", key) or {})
    assert row["cancel_reason"] is None and "return_items" in row
    assert list(row)[:3] == ["order_id", "user_id", "address"]
    # a whole number the data holds is a float in τ² (validated on load) ...
    loaded = Tau2Shape(world, {"products": {"p": {"variants": {"1": {"price": 10}}}}})
    variant = {"item_id": "1", "options": {}, "available": True, "price": 10}
    product = loaded.row("products", {"name": "x", "product_id": "p", "variants": {"1": variant}})
    assert type(product["variants"]["1"]["price"]) is float
    # ... and a whole number a tool assigned stays an int (τ²'s exchange writes 0)
    assigned = shape.row(
        "orders", {**(world.get("orders", key) or {}), "exchange_price_difference": 0}
    )
    assert type(assigned["exchange_price_difference"]) is int


def test_gold_observations_are_tau2s_strings(
    world: hw.World,
    imported: list[ImportedTask],
    shape: Tau2Shape,
    gold_runs: dict[str, tuple[list[Any], str]],
) -> None:
    compared = errors = 0
    for item in imported:
        session = world.open_session()
        messages, _ = gold_runs[item.task.id]
        for gold, message in zip(item.gold, messages, strict=True):
            observation = session.call(gold.tool, gold.args)
            assert shape.observation(observation) == message.content, (item.task.id, gold.id)
            assert observation.ok == (not message.error)
            compared += 1
            errors += bool(message.error)
    assert compared >= 360 and errors >= 10  # results and error texts both compared


def test_tool_descriptions_come_from_the_tau2_checkout() -> None:
    env: Any = tau2_env()
    schemas = tau2_source().tool_schemas(env)
    names = {s["function"]["name"] for s in schemas}
    assert "return_delivered_order_items" in names and len(names) == 16
    ours = {t.name for t in importer.load_world(TAU2_DATA).contract.tools}
    assert names == ours
