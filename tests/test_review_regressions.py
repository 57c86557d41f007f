"""Regressions for defects a code review found; each test failed before its fix."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis.report import build_report
from harness_world.cli import main
from harness_world.coverage import load_oracles, run_script
from harness_world.coverage.gate import check_world
from harness_world.engine import FinalRow
from harness_world.evidence import make_record
from harness_world.evidence.record import record_digest
from harness_world.grading import select_targets
from harness_world.grading.task import Condition, Target, Task
from harness_world.running.revision import make_revision
from harness_world.running.rundir import scan_run
from tests.conftest import REPO
from tests.toy_world import toy_world


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


def test_a_nested_type_change_is_unauthorized_work() -> None:
    world = toy_world()
    task = Task(
        id="toy.read_only",
        world="toy",
        family="f",
        instruction="change nothing",
        targets=[Target(entity="things")],
    )
    session = world.open_session()
    session.call("set", {"id": 1, "field": "data", "value": [1]})  # [1.0] -> [1]
    record = make_record(
        session, outcome=hw.Outcome(status="completed"), task_id=task.id, task_hash=task.hash
    )
    grade = hw.verify(record, world=world, task=task).grade
    assert grade is not None and grade.failed == ["state.allowed"]


def test_eq_with_a_list_on_an_indexed_list_field_selects_by_scanning() -> None:
    world = toy_world()
    task = Task(
        id="toy.c",
        world="toy",
        family="f",
        instruction="",
        targets=[Target(entity="things", where=[Condition(field="tags", eq=["x"])])],
    )
    assert select_targets(world, task) == (2,)


@pytest.mark.parametrize("message", ["15", "There are 15.", "15 open tickets are tagged security."])
def test_a_count_may_end_a_sentence(small: hw.World, message: str) -> None:
    task = {t.id: t for t in hw.load_tasks()}["helpdesk.security_count"]
    record = run_script(small, task, lambda ctx: message)
    grade = hw.verify(record, world=small, task=task).grade
    assert grade is not None and "trace.answer" not in grade.failed


def test_a_task_edited_after_the_run_is_not_graded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.security_count"]
    agent = hw.ScriptedAgent(name="o", scripts=load_oracles("helpdesk"))
    hw.run(tasks, agent, samples=1, out=tmp_path / "r")
    edited = [msgspec.structs.replace(tasks[0], instruction="Something else.")]
    inventory = scan_run(tmp_path / "r", edited).counts
    assert (inventory.valid, inventory.passed, inventory.failed, inventory.not_graded) == (
        1,
        0,
        0,
        1,
    )
    report = build_report(tmp_path / "r", edited)
    assert [a.passed for a in report.attempts] == [None]


def test_the_revision_does_not_depend_on_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = hw.load_tasks("helpdesk")[:1]
    first = make_revision(
        worlds={"helpdesk": hw.load_world("helpdesk")},
        tasks=tasks,
        agent_settings={},
        budgets={},
        samples=1,
        seed=0,
    )
    (tmp_path / "helpdesk").mkdir()
    monkeypatch.chdir(tmp_path)
    second = make_revision(
        worlds={"helpdesk": hw.load_world("helpdesk")},
        tasks=tasks,
        agent_settings={},
        budgets={},
        samples=1,
        seed=0,
    )
    assert first == second and first.values["world:helpdesk"]["code"]


def test_an_operator_marked_equivalent_for_every_task_is_honoured(tmp_path: Path) -> None:
    folder = tmp_path / "mutants"
    shutil.copytree(REPO / "mutants" / "helpdesk", folder)
    text = (folder / "equivalent.toml").read_text()
    (folder / "equivalent.toml").write_text(
        text.replace('task = "helpdesk.close_solved_duplicates"', 'task = "*"')
    )
    report = check_world("helpdesk", sizes=("small",), mutants_folder=folder)
    assert report.auto_survived == 0 and report.auto_equivalent >= 18
    assert not [p for p in report.problems if "surviving" in p]


def test_run_with_an_unknown_size_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--world", "helpdesk", "--size", "huge", "--out", os.devnull]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --size huge") and err.count("\n") == 1


def test_verify_with_a_missing_task_folder_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = hw.load_world("helpdesk").open_session()
    hw.save_record(
        make_record(session, outcome=hw.Outcome(status="completed")), tmp_path / "r.json"
    )
    assert main(["verify", str(tmp_path / "r.json"), "--tasks", str(tmp_path / "nope")]) == 2
    assert "error: --tasks" in capsys.readouterr().err


def test_report_survives_a_missing_sample_and_a_file_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [
        t
        for t in hw.load_tasks("helpdesk")
        if t.id in ("helpdesk.security_count", "helpdesk.reply_and_solve")
    ]
    hw.run(
        tasks,
        hw.ScriptedAgent(name="o", scripts=load_oracles("helpdesk")),
        samples=3,
        out=tmp_path / "r",
    )
    for task in tasks:
        (tmp_path / "r" / "records" / task.id / "2.json").unlink()
    report = build_report(tmp_path / "r")
    assert [p.k for p in report.pass_k] == [1, 2] and report.counts.missing == 2
    assert main(["report", str(tmp_path / "r" / "manifest.json")]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_tasks_needed_does_not_overshoot() -> None:
    from harness_world import stats

    assert stats.tasks_needed(0.45, 0.009).tasks == 9604
