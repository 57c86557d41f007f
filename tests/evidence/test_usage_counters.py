"""The usage counters of lost requests: old records keep their digest, new ones are covered."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import msgspec
import pytest

import harness_world as hw
from harness_world.evidence import record_digest
from tests.conftest import REPO

DATA = Path(__file__).parent / "data"
# Saved by the build before `lost_requests` and `lost_input_tokens_estimate` existed.
BEFORE = ["record-before-lost-requests.json", "record-before-lost-requests.msgpack"]


@pytest.mark.parametrize("name", BEFORE)
def test_a_record_made_before_the_counters_loads_and_keeps_its_digest(name: str) -> None:
    text = (DATA / name).read_bytes()
    assert b"lost_requests" not in text
    record = hw.load_record(DATA / name)
    assert record.usage.lost_requests == 0 and record.usage.lost_input_tokens_estimate == 0
    assert record.usage.retries == 2 and record_digest(record) == record.digest
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == record.task_id)
    verdict = hw.verify(record, world=_made_in(), task=task)
    assert verdict.evidence == "verified" and verdict.grade is not None and verdict.grade.passed


def _made_in() -> hw.World:
    """The helpdesk world the saved records were made in: before its writes declared lookups.

    Declared lookups are part of the contract hash (they change what a lost response says), so
    today's helpdesk is another world to these records (``world hash differs``, not graded).
    """
    world = hw.load_world("helpdesk")
    tools = tuple(attrs.evolve(t, lookups=None) for t in world.contract.tools)
    contract = attrs.evolve(world.contract, tools=tools)
    made_in = hw.World.from_data(contract, {e: list(world.rows(e)) for e in world.entities()})
    assert made_in.hash.startswith("9aa474e7")  # the hash the records carry
    return made_in


def _with_lost(record: hw.Record) -> hw.Record:
    usage = msgspec.structs.replace(
        record.usage, requests=8, lost_requests=2, lost_input_tokens_estimate=1834
    )
    edited = msgspec.structs.replace(record, usage=usage)
    return msgspec.structs.replace(edited, digest=record_digest(edited))


@pytest.mark.parametrize("suffix", [".json", ".msgpack"])
def test_the_counters_are_saved_loaded_and_covered_by_the_digest(
    suffix: str, tmp_path: Path
) -> None:
    record = _with_lost(hw.load_record(DATA / BEFORE[0]))
    assert record.digest != hw.load_record(DATA / BEFORE[0]).digest
    path = hw.save_record(record, tmp_path / f"r{suffix}")
    loaded = hw.load_record(path)
    world = _made_in()
    assert loaded == record and hw.verify(loaded, world=world).evidence == "verified"
    for forged in ({"lost_requests": 0}, {"lost_input_tokens_estimate": 12}):
        usage = msgspec.structs.replace(loaded.usage, **forged)
        result = hw.verify(msgspec.structs.replace(loaded, usage=usage), world=world)
        assert result.evidence == "ungraded" and result.mismatches[0].path == "digest"


def test_the_documented_digest_recipe_recomputes_the_digest(tmp_path: Path) -> None:
    text = (REPO / "docs" / "record-format.md").read_text()
    found = re.search(r"To recompute it outside the library:\n\n```python\n(.*?)```", text, re.S)
    assert found is not None
    recipe = found.group(1)
    for record in (hw.load_record(DATA / BEFORE[0]), _with_lost(hw.load_record(DATA / BEFORE[0]))):
        path = hw.save_record(record, tmp_path / "example.json")
        exec(compile(recipe.replace('"example.json"', repr(str(path))), "recipe", "exec"), {})
