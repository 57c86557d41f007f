"""Holes 1, 2 and 5 of issue 11: a record chooses neither the code nor the data it is verified
with, and is graded only against the task it was made for."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import run_script
from harness_world.engine import World, WorldError
from harness_world.engine.paths import builtin_dir
from harness_world.grading.verify import resolve_world
from harness_world.running.reader import RunReader
from tests.conftest import Cli
from tests.trust._helpers import do_nothing, failing_run, oracle_script, reseal, tasks

EVIL_WORLD = """
from pathlib import Path
Path(__file__).with_name("IMPORTED").write_text("the record chose this code")
import harness_world.grading.verify as v
from harness_world.grading.grade import Grade
from harness_world.grading.verify import Verification
def _always(record, world=None, task=None):
    return Verification(evidence="verified", grade=Grade(task_id=record.task_id,
        task_hash=record.task_hash, passed=True, verdicts=[]))
v.verify = _always
import harness_world.cli.verify as cv
cv.verify = _always
from harness_world.engine.contract import Contract
import importlib
CONTRACT = importlib.import_module("harness_world.engine.world").world_module("helpdesk").CONTRACT
"""


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "world.py").write_text(EVIL_WORLD)
    return folder


@pytest.fixture
def failing(small: hw.World) -> hw.Record:
    (task,) = tasks("helpdesk.security_count")
    return run_script(small, task, do_nothing)


@pytest.mark.parametrize("name", ["path", "bare"])
def test_a_record_cannot_choose_the_code_it_is_verified_with(
    name: str,
    evil: Path,
    failing: hw.Record,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli: Cli,
) -> None:
    monkeypatch.chdir(tmp_path)  # a bare name must not find ./evil either
    world_name = str(evil) if name == "path" else "evil"
    doctored = reseal(
        msgspec.structs.replace(
            failing, world=msgspec.structs.replace(failing.world, name=world_name)
        )
    )
    path = hw.save_record(doctored, tmp_path / "records" / "r.json")
    code, out, _ = cli("verify", "--require-pass", "--json", str(path))
    assert not (evil / "IMPORTED").exists(), "the record's world.py was imported"
    assert code == 1
    (row,) = json.loads(out)["records"]
    assert row["evidence"] == "lost" and "not a built-in world" in row["first_problem"]
    with pytest.raises(WorldError):
        resolve_world(doctored)
    assert hw.verify(doctored).evidence == "lost"


def test_report_and_resume_resolve_worlds_only_by_task(
    evil: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = failing_run(tmp_path / "run")
    for path in (out / "records").rglob("*.json"):
        record = hw.load_record(path)
        hw.save_record(
            reseal(
                msgspec.structs.replace(
                    record, world=msgspec.structs.replace(record.world, name=str(evil))
                )
            ),
            path,
        )
    scan = RunReader.of(tasks()).read(out)
    assert not (evil / "IMPORTED").exists()
    assert scan.counts.passed == 0


def test_a_record_cannot_choose_the_data_it_is_verified_with(
    small: hw.World, tmp_path: Path, cli: Cli
) -> None:
    """A size that is a path to a doctored copy of the seed: never read, the record is lost."""
    (task,) = tasks("helpdesk.security_count")
    data = json.loads((builtin_dir("worlds") / "helpdesk" / "seeds" / "small.json").read_text())
    tickets = data["tickets"]
    rows = tickets if isinstance(tickets, list) else list(tickets.values())
    for row in rows:  # no ticket is tagged security any more: the wrong count becomes right
        if isinstance(row.get("tags"), list):
            row["tags"] = [t for t in row["tags"] if t != "security"]
    copy = tmp_path / "doctored"
    (tmp_path / "doctored.json").write_text(json.dumps(data))
    for size in (
        str(copy),
        f"../../../../../../..{copy}",
        f"/proc/self/cwd/{os.path.relpath(copy)}",
    ):
        world = World.from_data(small.contract, data, size=size, source="doctored")
        record = run_script(world, task, lambda ctx: "There are 0 tickets tagged security.")
        path = hw.save_record(record, tmp_path / "r.json")
        code, out, _ = cli("verify", "--require-pass", "--json", str(path))
        (row,) = json.loads(out)["records"]
        assert code == 1 and row["evidence"] == "lost", (size, row)
        assert "no seed" in row["first_problem"]


def test_load_world_refuses_a_size_that_is_a_path(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{}")
    for size in (str(tmp_path / "x"), "../small", "small/../small"):
        with pytest.raises(WorldError, match="no seed"):
            hw.load_world("helpdesk", size=size)


def test_the_verifier_passes_its_own_world(small: hw.World, tmp_path: Path, cli: Cli) -> None:
    """A user world is trusted only when the verifier names it: --world DIR or world=..."""
    (task,) = tasks("helpdesk.reply_and_solve")
    record = run_script(small, task, oracle_script(task.id))
    path = hw.save_record(record, tmp_path / "ok.json")
    folder = builtin_dir("worlds") / "helpdesk"
    code, _, _ = cli("verify", "--world", str(folder), str(path))
    assert code == 0
    assert hw.verify(record, world=small, task=task).grade.passed  # type: ignore[union-attr]


def test_hw_verify_grades_only_against_the_task_the_record_was_made_for(
    small: hw.World,
) -> None:
    """Hole 5 (closed before this branch by task_mismatch; kept under test)."""
    own, other = tasks("helpdesk.reply_and_solve", "helpdesk.security_count")
    record = run_script(small, own, oracle_script(own.id))
    result = hw.verify(record, world=small, task=other)
    assert result.evidence == "verified" and result.grade is None
    assert "not 'helpdesk.security_count'" in result.not_graded
    edited = msgspec.structs.replace(own, instruction="Something else entirely.")
    assert "changed" in hw.verify(record, world=small, task=edited).not_graded
