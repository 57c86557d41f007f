"""The inventory task suite: derived target counts per seed, and its coverage gate."""

from __future__ import annotations

import pytest

import harness_world as hw
from harness_world.grading import select_targets

# (small, large) sizes of every target set: named rows stay put, derived sets grow.
TARGET_COUNTS = {
    "inventory.cancel_poznan_orders": {"targets": (6, 87)},
    "inventory.count_legacy_peripherals": {"targets": (3, 70)},
    "inventory.cycle_count_lyon": {"i0169": (1, 1), "i0086": (1, 1), "i0157": (1, 1)},
    "inventory.draft_orders_leeds": {"targets": (4, 27)},
    "inventory.label_tape_everywhere": {"targets": (4, 10)},
    "inventory.move_available_adapters": {"source": (1, 1), "destination": (1, 1)},
    "inventory.order_hdmi_cable": {"targets": (1, 1)},
    "inventory.order_unsupplied_office": {"targets": (4, 115)},
    "inventory.porto_restock": {"targets": (16, 191)},
    "inventory.recall_ups": {"targets": (3, 3)},
    "inventory.recount_patch_cord": {"targets": (1, 1)},
    "inventory.recount_lost_response": {"lyon": (1, 1), "porto": (1, 1)},
    "inventory.recount_no_fault": {"lyon": (1, 1), "porto": (1, 1)},
    "inventory.transfer_copy_paper": {"source": (1, 1), "destination": (1, 1)},
}


def test_target_counts_on_both_seeds(inv: hw.World, inv_large: hw.World) -> None:
    # invattack: the fourteen tasks without a planted request (tests/inventory/test_authority.py
    # counts the note tasks' targets).
    tasks = {t.id: t for t in hw.load_tasks("inventory") if t.authority is None}
    assert set(tasks) == set(TARGET_COUNTS)
    for task_id, sets in TARGET_COUNTS.items():
        task = tasks[task_id]
        counts = {
            t.name: (
                len(select_targets(inv, task, t.name)),
                len(select_targets(inv_large, task, t.name)),
            )
            for t in task.targets
        }
        assert counts == sets, task_id


@pytest.fixture(scope="module")
def inv() -> hw.World:
    return hw.load_world("inventory")


@pytest.fixture(scope="module")
def inv_large() -> hw.World:
    return hw.load_world("inventory", size="large")
