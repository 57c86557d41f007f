"""Records and replay: tampering is caught, saves are atomic, bytes are stable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.engine import FinalRow
from harness_world.evidence import RecordContext, make_record, record_digest
from harness_world.grading import verify_file
from tests.conftest import REPO, examples, scenario_record
from tests.toy_world import toy_world


def reseal(record: hw.Record) -> hw.Record:
    """What a careful forger does after editing: recompute the digest."""
    return msgspec.structs.replace(record, digest=record_digest(record))


def edited(record: hw.Record, edit: Any) -> hw.Record:
    data = msgspec.to_builtins(record)
    edit(data)
    return reseal(msgspec.convert(data, hw.Record))


@pytest.fixture(scope="module")
def record(small: hw.World) -> hw.Record:
    return scenario_record(small)


def test_an_honest_record_verifies(record: hw.Record, small: hw.World) -> None:
    result = hw.verify(record)
    assert result.evidence == "verified" and result.mismatches == [] and result.grade is None
    assert hw.verify(record, world=small) == result


def test_substituted_read_result_is_ungraded(record: hw.Record) -> None:
    """The seed's defect: a verifier that skipped read results let a substitution through."""

    def substitute(data: dict[str, Any]) -> None:
        call = data["calls"][2]
        assert call["tool"] == "get_ticket"
        call["result"]["status"] = "solved" if call["result"]["status"] != "solved" else "open"

    result = hw.verify(edited(record, substitute))
    assert result.evidence == "ungraded"
    assert result.mismatches[0].seq == 3 and result.mismatches[0].path == "calls[2].result.status"


EDITS = {
    "write image": lambda d: d["calls"][3]["writes"][0]["after"].update(owner_id="U-0003"),
    "argument": lambda d: d["calls"][2]["args"].update(ticket_id="T-1001"),
    "seq": lambda d: d["calls"][4].update(seq=40),
    "error kind": lambda d: d["calls"][5]["error"].update(kind="conflict"),
    "error message": lambda d: d["calls"][5]["error"].update(message="nothing"),
    "clock": lambda d: d["calls"][4].update(clock_after=9),
    "final row": lambda d: d["final"][0]["row"].update(priority="low"),
    "final row removed": lambda d: d["final"].pop(),
    "dropped call": lambda d: d["calls"].pop(3),
    "swapped calls": lambda d: d["calls"].__setitem__(slice(0, 2), d["calls"][1::-1]),
    "appended call": lambda d: d["calls"].append(dict(d["calls"][0])),
    "world hash": lambda d: d["world"].update(hash="0" * 64),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_every_edit_is_ungraded_even_when_resealed(record: hw.Record, name: str) -> None:
    result = hw.verify(edited(record, EDITS[name]))
    assert result.evidence == "ungraded", name
    assert result.mismatches, name


@pytest.mark.parametrize("field", ["final_message", "usage", "outcome", "task_id", "sample"])
def test_unrecomputable_fields_are_held_by_the_digest(record: hw.Record, field: str) -> None:
    data = msgspec.to_builtins(record)
    data[field] = {
        "final_message": "Nothing done.",
        "usage": {**data["usage"], "cost": 0.0},
        "outcome": {"status": "interrupted", "reason": "x"},
        "task_id": "other",
        "sample": 7,
    }[field]
    result = hw.verify(msgspec.convert(data, hw.Record))
    assert result.evidence == "ungraded" and result.mismatches[-1].path == "digest"


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


def _apply(data: Any, path: tuple[Any, ...], action: str, new: Any) -> Any:
    if not path:
        return new if action == "replace" else data
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "insert" and isinstance(parent[last], dict):
        parent[last]["zz_inserted"] = new
    elif action == "insert" and isinstance(parent[last], list):
        parent[last].append(new)
    else:
        parent[last] = new
    return data


edit_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2),
    st.text(max_size=4),
    st.just([]),
    st.just({}),
)


def _meaning(record: hw.Record) -> bytes:
    return msgspec.json.encode(msgspec.structs.replace(record, context=RecordContext()))


@settings(max_examples=examples(1_000, 10_000))
@given(st.data())
def test_random_single_edits_are_never_verified(small: hw.World, data: st.DataObject) -> None:
    original = scenario_record(small)
    tree = msgspec.to_builtins(original)
    path = data.draw(st.sampled_from(_paths(tree)))
    action = data.draw(st.sampled_from(["replace", "delete", "insert"]))
    new = data.draw(edit_values)
    if action == "delete" and not path:
        return
    mutated = _apply(tree, path, action, new)
    blob = msgspec.json.encode(mutated)
    try:
        candidate = msgspec.json.decode(blob, type=hw.Record)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return  # unreadable: evidence would be lost, never verified
    result = hw.verify(candidate, world=small)
    if result.evidence == "verified":
        assert _meaning(candidate) == _meaning(original), f"edit at {path} ({action}) verified"


@settings(max_examples=examples(300, 3_000))
@given(st.data())
def test_resealed_edits_to_recomputable_evidence_are_never_verified(
    small: hw.World, data: st.DataObject
) -> None:
    original = scenario_record(small)
    tree = msgspec.to_builtins(original)
    paths = [
        p
        for p in _paths(tree)
        if len(p) >= 3 and ((p[0] == "calls" and p[2] != "args") or p[0] == "final")
    ]
    path = data.draw(st.sampled_from(paths))
    action = data.draw(st.sampled_from(["replace", "delete", "insert"]))
    mutated = _apply(tree, path, action, data.draw(edit_values))
    try:
        candidate = reseal(msgspec.convert(mutated, hw.Record))
    except msgspec.ValidationError:
        return
    result = hw.verify(candidate, world=small)
    if result.evidence == "verified":
        assert _meaning(candidate) == _meaning(original), f"edit at {path} ({action}) verified"


@pytest.mark.parametrize("suffix", [".json", ".msgpack"])
def test_save_load_round_trip_replays_identically(
    record: hw.Record, tmp_path: Path, suffix: str
) -> None:
    path = hw.save_record(record, tmp_path / f"r{suffix}")
    loaded = hw.load_record(path)
    assert msgspec.json.encode(loaded) == msgspec.json.encode(record)
    assert hw.verify(loaded).evidence == "verified"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


RECORD_SCRIPT = """
import sys, harness_world as hw
from tests.conftest import scenario_record
from harness_world.evidence import RecordContext
ctx = RecordContext(host="fixed", pid=1)
hw.save_record(scenario_record(hw.load_world('helpdesk'), context=ctx), sys.argv[1])
"""


def test_records_are_byte_identical_across_processes(tmp_path: Path) -> None:
    blobs = set()
    for i, seed in enumerate(("0", "77", "4096")):
        out = tmp_path / f"{i}.json"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        subprocess.run(
            [sys.executable, "-c", RECORD_SCRIPT, str(out)], env=env, check=True, cwd=REPO
        )
        blobs.add(out.read_bytes())
    assert len(blobs) == 1


def test_truncated_and_invalid_files_are_lost_not_tracebacks(
    record: hw.Record, tmp_path: Path
) -> None:
    good = hw.save_record(record, tmp_path / "good.json").read_bytes()
    cases = {
        "truncated.json": good[: len(good) // 2],
        "empty.json": b"",
        "garbage.json": b"\x00\xff not json",
        "wrong.json": b'{"format": 1}',
        "future.json": good.replace(b'"format": 1', b'"format": 99'),
        "truncated.msgpack": msgspec.msgpack.encode(record)[:100],
    }
    for name, blob in cases.items():
        (tmp_path / name).write_bytes(blob)
        loaded, result = verify_file(tmp_path / name)
        assert loaded is None and result.evidence == "lost", name
        assert name in result.reason, name
    _, missing = verify_file(tmp_path / "nope.json")
    assert missing.evidence == "lost" and "cannot read" in missing.reason


KILL_SCRIPT = """
import sys, harness_world as hw
from tests.conftest import scenario_record
record = scenario_record(hw.load_world('helpdesk'))
folder = sys.argv[1]
print("ready", flush=True)
i = 0
while True:
    hw.save_record(record, f"{folder}/r{i % 7}.json")
    hw.save_record(record, f"{folder}/r{i % 5}.msgpack")
    i += 1
"""


def test_kill_9_during_save_never_leaves_a_partial_record(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for round_ in range(examples(6, 30)):
        folder = tmp_path / f"round{round_}"
        folder.mkdir()
        proc = subprocess.Popen(
            [sys.executable, "-c", KILL_SCRIPT, str(folder)],
            env=env,
            stdout=subprocess.PIPE,
            cwd=REPO,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        time.sleep(0.05 + 0.037 * round_)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        records = [p for p in folder.iterdir() if not p.name.startswith(".")]
        for path in records:
            loaded, result = verify_file(path)
            assert loaded is not None and result.evidence == "verified", (path, result.reason)


def test_a_final_key_retyped_from_int_to_str_is_ungraded() -> None:
    world = toy_world()
    session = world.open_session()
    session.call("set", {"id": 1, "field": "note", "value": "changed"})
    record = make_record(session, outcome=hw.Outcome(status="completed"))
    final = [FinalRow(entity=f.entity, key=str(f.key), row=f.row) for f in record.final]
    forged = msgspec.structs.replace(record, final=final)
    forged = msgspec.structs.replace(forged, digest=record_digest(forged))
    result = hw.verify(forged, world=world)
    assert result.evidence == "ungraded" and result.mismatches
