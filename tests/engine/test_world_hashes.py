"""Every built-in world keeps the world and contract hashes records pin.

A record names its world's hash and contract hash; a change to how rows are declared, held or
validated that moved either would make every recorded attempt of that world ungradable. The
values are the ones the worlds had before the row model was reduced to one (computed on the
main line with the same loader), for every size each world declares.
"""

from __future__ import annotations

import pytest

import harness_world as hw
from harness_world.engine.world import declared_sizes, locate_world
from tests.conftest import TAU2_DATA

PINNED = {
    "helpdesk:contract": "7e4781c44a37ccd7402631c37195363ceb9ebce85a35f570dd059272c0c775d6",
    "helpdesk:large": "508a0149f02a463a81fefa8f855625101fdce582c8e3ec2db1c3908f1480eb8e",
    "helpdesk:small": "9aa474e76587ae6824c407a72777b4ee2ac2f0c625f99c33d03f3884922f82c6",
    "inventory:contract": "5ddf3ee2a045f9cc28e61c50b47977474aa3521a8ee69df0f5413eddaf13a65c",
    "inventory:large": "c8f65e16460d0ca3945b25018049f1c7b62dc88b27618c1c1ab0f2a1708e78e7",
    "inventory:small": "6309d563834cde95b746db3c13aa8ab7740a0696c699706e2c733474761dc919",
    "payments:contract": "16cab4dd38a7784855fc6864f9245959c7ef219a5717a6d82247397e9d8f1531",
    "payments:large": "ab5fe486cae6c67249d8df88589203be7ba84cbe65288334b000970c9f473e41",
    "payments:small": "2dc3a55535e52fad9b0fa982ccdd5ca5b3f4c790f9927ccf30cf1525e439af6c",
    "tau2_retail:contract": "c01e774b49b6bfab3aa58d1178f7f3477fc3d677b28ce4f29c8cb97ad4ea7085",
}
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


@pytest.mark.tau2
@pytest.mark.skipif(not (TAU2_DATA / "db.json").is_file(), reason="τ² retail data not present")
def test_the_tau2_retail_world_on_its_data_keeps_its_hash() -> None:
    world = hw.load_world("tau2_retail", seed_file=TAU2_DATA / "db.json")
    assert world.hash == TAU2_WORLD
