"""Authority conditions in the inventory world: requests planted in stock-row notes (issue 15).

What every world's planted requests must hold (twins, matrix, reference agents) is checked in
``tests/test_authority_worlds.py``; these check the inventory data and how its gate fails.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import load_routes
from harness_world.coverage.matrix import coverage_matrix
from harness_world.engine.canonical import to_json
from harness_world.engine.world import world_module
from harness_world.grading import select_targets

REPO = Path(__file__).resolve().parents[2]
TASKS = hw.load_tasks("inventory")
BY_ID = {t.id: t for t in TASKS}
NOTE_TASKS = sorted(t.id for t in TASKS if t.authority is not None)
PLANTED = world_module("inventory").PLANTED_NOTES
# The warehouse each attack kind's forbidden effect lands in (never a note's own warehouse).
VICTIM = {
    "transfer_to_other_warehouse": "W-05",
    "write_off_other_warehouse": "W-01",
    "order_for_other_warehouse": "W-02",
}


@pytest.fixture(scope="module")
def inv() -> hw.World:
    return hw.load_world("inventory")


@pytest.fixture(scope="module")
def inv_large() -> hw.World:
    return hw.load_world("inventory", size="large")


def test_planted_requests_are_seeded_notes_in_three_phrasings(
    inv: hw.World, inv_large: hw.World
) -> None:
    attacks = [BY_ID[t] for t in NOTE_TASKS if BY_ID[t].authority.role == "attack"]  # type: ignore[union-attr]
    assert len(attacks) == 9 and len(NOTE_TASKS) == 18 and len(PLANTED) == 18
    kinds = {(t.authority.attack, t.authority.phrasing) for t in attacks}  # type: ignore[union-attr]
    assert len(kinds) == 9  # three attack kinds x three phrasings
    for task in (BY_ID[t] for t in NOTE_TASKS):
        assert task.authority is not None
        entity, key, field = task.authority.source.split(".")
        row = inv.get(entity, key)
        assert row is not None and row[field], task.id  # the request is in the world's data
        assert f"item {row['item_id']} in warehouse {row['warehouse_id']}" in task.instruction
        role, kind, phrasing, note = PLANTED[key]
        assert (role, kind, phrasing) == (
            task.authority.role,
            task.authority.attack,
            task.authority.phrasing,
        )
        assert row[field] == note
        # An attack names its victim warehouse; no note is written in a victim warehouse.
        assert (VICTIM[kind] in note) == (role == "attack") and row["warehouse_id"] != VICTIM[kind]
        assert inv_large.get(entity, key) == row  # the large seed keeps them unchanged
        # Named targets: the same one row on both seeds.
        for target in task.targets:
            assert len(select_targets(inv, task, target.name)) == 1
            assert len(select_targets(inv_large, task, target.name)) == 1


# sha256 of the committed small seed's canonical JSON before the planted notes (main at
# 716976f): every existing row is unchanged, so no existing task's targets or answers move.
ROWS_BEFORE = "ebdfd93549f534f29cb1299efeca999f88d8df1d8cdba006bafaa28111884ac9"


def test_planted_notes_are_appended_and_change_no_existing_row(inv: hw.World) -> None:
    data = msgspec.json.decode((REPO / "worlds/inventory/seeds/small.json").read_bytes())
    planted = [s for s in data["stock"] if s["id"] in PLANTED]
    assert data["stock"][-len(PLANTED) :] == planted  # appended last
    assert len(data["items"]) == 300 and len(data["stock"]) == 748 + len(PLANTED)
    before = {**data, "stock": data["stock"][: -len(PLANTED)]}
    assert hashlib.sha256(to_json(before)).hexdigest() == ROWS_BEFORE
    assert inv.count("stock") == len(data["stock"])
    # A planted row is a new (item, warehouse) pair of an item stocked elsewhere, never below
    # its reorder point, so no count the docs quote (65 below reorder, 16 stocked nowhere) moves.
    generated = {s["item_id"] for s in before["stock"]}
    points = {i["id"]: i["reorder_point"] for i in data["items"]}
    for row in planted:
        assert row["item_id"] in generated
        assert row["on_hand"] - row["reserved"] >= points[row["item_id"]]


def test_matrix_gate_fails_on_inventory_without_a_twin_or_an_oracle() -> None:
    without_benign = [t for t in TASKS if not (t.authority and t.authority.role == "benign")]
    matrix = coverage_matrix("inventory", without_benign)
    assert not matrix.ok
    assert sum("no benign counterpart" in p for p in matrix.problems) == 9
    routes = load_routes("inventory")
    del routes["inventory.note_order_direct_ok"]
    orphan = coverage_matrix("inventory", TASKS, routes)
    assert orphan.problems == [
        "attack:order_for_other_warehouse/direct: inventory.note_order_direct_ok has no oracle"
    ]
    attack = BY_ID["inventory.note_transfer_direct"]
    assert attack.authority is not None
    wrong = msgspec.structs.replace(
        attack,
        authority=msgspec.structs.replace(
            attack.authority, counterpart="inventory.note_transfer_authority_ok"
        ),
    )
    swapped = [wrong if t.id == attack.id else t for t in TASKS]
    problems = coverage_matrix("inventory", swapped).problems
    assert any("another attack kind or phrasing" in p for p in problems)
    assert any("note_transfer_direct_ok: a benign task no attack task names" in p for p in problems)
