"""Every built-in world keeps the world and contract hashes records pin.

A record names its world's hash and contract hash; a change to how rows are declared, held or
validated that moved either would make every recorded attempt of that world ungradable. The
values are the ones the worlds had before the row model was reduced to one (computed on the
main line with the same loader), for every size each world declares.
"""

from __future__ import annotations

import attrs
import pytest

import harness_world as hw
from harness_world.engine.world import declared_sizes, locate_world
from tests.conftest import TAU2_DATA

PINNED = {
    "helpdesk:contract": "50b69a36c20c99d190e2d7d9590fe56d00218f15ebeec73940e94df38d64f30a",
    "helpdesk:large": "840626c3e2fa177a919c9bcc3f7f0562eddf29202858756f477dec82f30e85ab",
    "helpdesk:small": "9981981c064d9b40590e50f90cce3bd54364d96c24a71f34ead9d70dcdc2da62",
    "inventory:contract": "09390993f22ccc58de7bb62a580ca12e6e8c4835a2a9f06efc77f6f1c313ac61",
    "inventory:large": "8d4db1a9eff73d970f445f56125996d71e0674a3abc13525d173771123ad5528",
    "inventory:small": "e31ddea3605788f05fce7e6a26aa32e4da130039abc5ab5796d9e7632056f105",
    "payments:contract": "7ea4243a1c2a59bc76084e62a9fbe2bcfc00c448e600a072794fe61e306456e0",
    "payments:large": "f5f2530d5f63477f51a38f0f1dc514faea694720f041b587594ab260365b39d0",
    "payments:small": "f62279b90644c5ba7afb00e6ee2fb028e2165060e650b4fd78bc5cd81a639aaa",
    "tau2_retail:contract": "c01e774b49b6bfab3aa58d1178f7f3477fc3d677b28ce4f29c8cb97ad4ea7085",
}
"""Moved once, deliberately, when the write tools declared their lookups (D-reconcile-1: what a
lost response says changed); payments' tool text changed with it."""
BEFORE_LOOKUPS = {
    "helpdesk:contract": "7e4781c44a37ccd7402631c37195363ceb9ebce85a35f570dd059272c0c775d6",
    "helpdesk:small": "9aa474e76587ae6824c407a72777b4ee2ac2f0c625f99c33d03f3884922f82c6",
    "inventory:contract": "5ddf3ee2a045f9cc28e61c50b47977474aa3521a8ee69df0f5413eddaf13a65c",
    "inventory:small": "6309d563834cde95b746db3c13aa8ab7740a0696c699706e2c733474761dc919",
}
"""The hashes before: helpdesk and inventory without their lookups have them still."""
TAU2_WORLD = "307dc7f8343748b41e9d5dac3fa0ba4b33396eef02d2d6336d571b328ca31873"
WORLDS = ("helpdesk", "inventory", "payments", "tau2_retail")


def test_every_built_in_world_and_size_keeps_its_hashes() -> None:
    found = {}
    for name in WORLDS:
        place = locate_world(name)
        found[f"{name}:contract"] = place.spec.contract.hash
        for size in declared_sizes(place.folder, place.spec):
            world = hw.load_world(name, size=size)
            assert world.contract.hash == place.spec.contract.hash
            found[f"{name}:{size}"] = world.hash
    assert found == PINNED


def test_without_their_lookups_helpdesk_and_inventory_are_the_worlds_they_were() -> None:
    """Declaring lookups is the one change to these two worlds: nothing else moved."""
    found = {}
    for name in ("helpdesk", "inventory"):
        world = hw.load_world(name)
        tools = tuple(attrs.evolve(t, lookups=None) for t in world.contract.tools)
        contract = attrs.evolve(world.contract, tools=tools)
        rows = {e: list(world.rows(e)) for e in world.entities()}
        found[f"{name}:contract"] = contract.hash
        found[f"{name}:small"] = hw.World.from_data(contract, rows).hash
    assert found == BEFORE_LOOKUPS


@pytest.mark.tau2
@pytest.mark.skipif(not (TAU2_DATA / "db.json").is_file(), reason="τ² retail data not present")
def test_the_tau2_retail_world_on_its_data_keeps_its_hash() -> None:
    world = hw.load_world("tau2_retail", seed_file=TAU2_DATA / "db.json")
    assert world.hash == TAU2_WORLD
