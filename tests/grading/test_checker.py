"""The checker and the task format: purity, derived targets, R ⊆ Δ ⊆ A, task hashes, bad input."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world import grading
from harness_world.coverage import (
    ScriptContext,
    check_world,
    load_mutants,
    load_oracles,
    record_calls,
    run_script,
)
from harness_world.engine import session as _session
from harness_world.evidence import make_record
from harness_world.grading import (
    Condition,
    CriterionVerdict,
    Target,
    Task,
    TaskError,
    grade,
    select_targets,
)
from tests import strategies as hs
from tests.conftest import REPO
from tests.toy_world import toy_world

TASKS = {t.id: t for t in hw.load_tasks()}
ORACLES = load_oracles("helpdesk")
MUTANTS = {m.id: m for m in load_mutants("helpdesk")}


def test_grade_twice_and_in_two_processes_is_identical(small: hw.World, tmp_path: Path) -> None:
    task = TASKS["helpdesk.assign_on_hold_unowned"]
    record = run_script(small, task, MUTANTS["assign_on_hold_unowned.null_only"].script)
    first, second = grade(record, task, small), grade(record, task, small)
    assert first == second and not first.passed
    path = hw.save_record(record, tmp_path / "r.json")
    script = (
        "import sys, msgspec, harness_world as hw\n"
        "from harness_world.grading.checker import grade\n"
        "r = hw.load_record(sys.argv[1]); t = {t.id: t for t in hw.load_tasks()}[r.task_id]\n"
        "print(msgspec.json.encode(grade(r, t, hw.load_world('helpdesk'))).decode())\n"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        outputs.add(
            subprocess.run(
                [sys.executable, "-c", script, str(path)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
                cwd=REPO,
            ).stdout
        )
    assert outputs == {msgspec.json.encode(first).decode() + "\n"}


def test_the_checker_never_opens_a_session_or_calls_a_tool(
    small: hw.World, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [
        (task, run_script(small, task, ORACLES[task.id]))
        for task in TASKS.values()
        if task.world == "helpdesk"
    ]

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the checker touched a session")

    monkeypatch.setattr(hw.World, "open_session", forbidden)
    monkeypatch.setattr(_session.Session, "call", forbidden)
    monkeypatch.setattr(_session.ToolContext, "_write", forbidden)
    for task, record in records:
        assert grade(record, task, small).passed


@given(hs.call_sequences)
def test_grading_is_pure_for_any_attempt(
    small: hw.World, calls: list[tuple[str, dict[str, object]]]
) -> None:
    task = TASKS["helpdesk.escalate_outage"]
    record = record_calls(small, task, calls)
    assert hw.verify(record, world=small).evidence == "verified"
    before = msgspec.json.encode(record)
    assert grade(record, task, small) == grade(record, task, small)
    assert msgspec.json.encode(record) == before


def test_state_criteria_report_missing_and_unauthorized_separately(small: hw.World) -> None:
    """The seed's table: right item wrong target = both; did nothing = missing only; extra = unauthorized only."""
    task = TASKS["helpdesk.reply_and_solve"]
    nothing = grade(run_script(small, task, lambda ctx: "done"), task, small)
    assert nothing.failed == ["state.required"]

    def wrong_ticket(ctx: ScriptContext) -> str:
        ctx.call("get_ticket", {"ticket_id": "T-1008"})
        ctx.call("add_comment", {"ticket_id": "T-1008", "body": "Fixed.", "public": True})
        ctx.call("update_ticket", {"ticket_id": "T-1008", "status": "solved"})
        return "done"

    wrong = grade(run_script(small, task, wrong_ticket), task, small)
    # T-1008 comes from memory (fetched by its id): the write is ungrounded as well.
    assert wrong.failed == ["state.required", "state.allowed", "trace.grounded_writes"]
    allowed = next(v for v in wrong.verdicts if v.id == "state.allowed")
    assert "tickets:T-1008.status" in allowed.detail and "comments:C-N1 created" in allowed.detail
    required = next(v for v in wrong.verdicts if v.id == "state.required")
    assert "tickets:T-1001.status expected 'solved'" in required.detail


def test_ungraded_evidence_is_never_graded(small: hw.World) -> None:
    task = TASKS["helpdesk.reply_and_solve"]
    record = run_script(small, task, ORACLES[task.id])
    forged = msgspec.structs.replace(record, final_message="tampered")
    result = hw.verify(forged, world=small, task=task)
    assert result.evidence == "ungraded" and result.grade is None


@pytest.mark.parametrize(
    "task_id",
    sorted(
        t
        for t, task in TASKS.items()
        if task.world == "helpdesk" and task.notes.startswith("Derived")
    ),
)
def test_derived_targets_differ_between_seeds(
    task_id: str, small: hw.World, large: hw.World
) -> None:
    task = TASKS[task_id]
    touched = {}
    for name, world in (("small", small), ("large", large)):
        record = run_script(world, task, ORACLES[task_id])
        assert grade(record, task, world).passed
        touched[name] = len({(f.entity, f.key) for f in record.final})
    assert touched["small"] < touched["large"]


def test_every_derived_task_changes_more_keys_on_the_large_seed(
    small: hw.World, large: hw.World
) -> None:
    differing = 0
    for task in (t for t in TASKS.values() if t.world == "helpdesk"):
        if not task.targets:
            continue
        counts = [len(select_targets(w, task)) for w in (small, large)]
        differing += counts[0] != counts[1]
    assert differing >= 8


def test_hard_coded_ids_pass_on_small_and_fail_on_large(small: hw.World, large: hw.World) -> None:
    mutant = MUTANTS["escalate_outage.hardcoded_ids"]
    task = TASKS[mutant.task_id]
    assert grade(run_script(small, task, mutant.script), task, small).passed
    on_large = grade(run_script(large, task, mutant.script), task, large)
    assert (
        set(on_large.failed) == set(mutant.predicted) == {"state.required", "trace.pages_followed"}
    )


def test_absent_and_null_are_different_selector_values(small: hw.World) -> None:
    task = TASKS["helpdesk.assign_on_hold_unowned"]
    base = msgspec.structs.replace(task, targets=[])
    only = {}
    for state in ("absent", "null"):
        target = grading.Target(
            entity="tickets",
            where=[
                grading.Condition(field="status", eq="on_hold"),
                grading.Condition(field="owner_id", is_=state),
            ],
        )
        only[state] = set(select_targets(small, msgspec.structs.replace(base, targets=[target])))
    assert only["absent"] and only["null"] and not only["absent"] & only["null"]
    assert only["absent"] | only["null"] == set(select_targets(small, task))


FIELDS = [
    "instruction",
    "family",
    "targets",
    "require",
    "allow",
    "trace",
    "budgets",
    "prose",
    "answer",
]


@pytest.mark.parametrize("field", FIELDS)
def test_editing_any_part_of_a_task_changes_its_hash(field: str) -> None:
    task = TASKS["helpdesk.escalate_outage"]
    edits = {
        "instruction": task.instruction + " ",
        "family": "other",
        "targets": [msgspec.structs.replace(task.targets[0], where=task.targets[0].where[:1])],
        "require": [msgspec.structs.replace(task.require[0], value="high")],
        "allow": [],
        "trace": task.trace[:1],
        "budgets": msgspec.structs.replace(task.budgets, turns=61),
        "prose": ["A person checks the tone."],
        "answer": grading.Answer(mention="keys"),
    }
    assert msgspec.structs.replace(task, **{field: edits[field]}).hash != task.hash


RECEIPT = 'in_final_message = true\nproof_entity = "e"\nproof_field = "f"\nproof_link = "l"\n'
BAD_TASKS = {
    "unknown field": (
        'id = "x"\nworld = "helpdesk"\nfamily = "f"\ninstruction = "i"\ncolour = 1\n',
        "unknown field `colour`",
    ),
    "two operators": (
        'id = "x"\nworld = "helpdesk"\nfamily = "f"\ninstruction = "i"\n[[targets]]\nentity = "tickets"\n'
        'where = [{ field = "status", eq = "open", in = ["new"] }]\n',
        "exactly one of eq, in, is, contains",
    ),
    "bad toml": ('id = "x\n', "invalid TOML"),
    "nested too deeply": ('id = "x"\nx = ' + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    "missing id": (
        'world = "helpdesk"\nfamily = "f"\ninstruction = "i"\n',
        "missing required field `id`",
    ),
    "unknown target": (
        'id = "x"\nworld = "helpdesk"\nfamily = "f"\ninstruction = "i"\n[[require]]\nkind = "set"\n'
        'target = "nope"\nfield = "status"\nvalue = "open"\n',
        "unknown target set 'nope'",
    ),
    "unknown allowance target": (
        'id = "x"\nworld = "helpdesk"\nfamily = "f"\ninstruction = "i"\n[[allow]]\n'
        'entity = "tickets"\ntarget = "nope"\nfields = ["status"]\n',
        "unknown target set 'nope'",
    ),
    "unknown receipt target": (
        'id = "x"\nworld = "helpdesk"\nfamily = "f"\ninstruction = "i"\n[[receipts]]\n'
        'id = "r"\ntarget = "nope"\n' + RECEIPT,
        "unknown target set 'nope'",
    ),
    "duplicate receipt ids": (
        'id = "x"\nworld = "helpdesk"\nfamily = "f"\ninstruction = "i"\n[[targets]]\n'
        'entity = "tickets"\n[[receipts]]\nid = "r"\n'
        + RECEIPT
        + '[[receipts]]\nid = "r"\n'
        + RECEIPT,
        "receipt ids must be unique",
    ),
    "bad trace": (
        'id = "x"\nworld = "helpdesk"\nfamily = "f"\ninstruction = "i"\ntrace = ["vibes"]\n',
        "$.trace[0]",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_TASKS))
def test_bad_task_files_name_the_file_and_the_field(tmp_path: Path, case: str) -> None:
    text, needle = BAD_TASKS[case]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(TaskError) as caught:
        hw.load_task(path)
    assert str(path) in str(caught.value) and needle in str(caught.value)


@given(st.sampled_from(sorted(MUTANTS)))
def test_hand_mutants_fail_exactly_as_predicted(small: hw.World, mutant_id: str) -> None:
    mutant = MUTANTS[mutant_id]
    if "small" not in mutant.sizes:
        return
    task = TASKS[mutant.task_id]
    result = hw.verify(run_script(small, task, mutant.script), world=small, task=task)
    assert result.evidence == "verified" and result.grade is not None
    harness = {v.id for v in result.grade.harness if v.status == "failed"}
    assert set(result.grade.failed) | harness == set(mutant.predicted)  # both layers


def test_answer_naming_keys_is_whole_tokens_and_nothing_extra(small: hw.World) -> None:
    base = TASKS["helpdesk.security_count"]
    task = msgspec.structs.replace(base, answer=grading.Answer(mention="keys"), trace=[])
    targets = [str(k) for k in select_targets(small, task)]
    other = next(k for k in small.keys("tickets") if k not in targets)

    def verdict(message: str, read: bool = True) -> CriterionVerdict:
        def script(ctx: ScriptContext) -> str:
            # the ids are read from a listing: fetching each by a remembered id shows only
            # the id the agent sent (tests/grading/test_shown.py)
            if read:
                ctx.call("list_tickets", {"status": "open", "tag": "security", "limit": 100})
            return message

        record = run_script(small, task, script)
        return next(v for v in grade(record, task, small).verdicts if v.id == "trace.answer")

    assert verdict(", ".join(targets)).status == "passed"
    guessed = verdict(", ".join(targets), read=False)
    assert guessed.status == "failed" and "no tool result of this attempt showed" in guessed.detail
    assert targets[0] in guessed.detail
    assert verdict(", ".join(targets) + ".").status == "passed"
    assert verdict(", ".join([*targets, other])).status == "failed"
    assert "not targets" in verdict(", ".join([*targets, other])).detail
    assert verdict(", ".join(t + "0" for t in targets)).status == "failed"  # T-1001 is not T-10010
    assert verdict(", ".join(targets[1:])).status == "failed"


def _toy_grade(world: hw.World, task: Task, sets: list[dict[str, object]]) -> hw.Grade | None:
    """The grade of an attempt making the toy world's ``set`` calls ``sets`` in order."""
    session = world.open_session()
    for args in sets:
        session.call("set", args)
    record = make_record(
        session, outcome=hw.Outcome(status="completed"), task_id=task.id, task_hash=task.hash
    )
    return hw.verify(record, world=world, task=task).grade


def test_a_nested_type_change_is_unauthorized_work() -> None:
    world = toy_world()
    task = Task(
        id="toy.read_only",
        world="toy",
        family="f",
        instruction="change nothing",
        targets=[Target(entity="things")],
    )
    # [1.0] -> [1]
    grade = _toy_grade(world, task, [{"id": 1, "field": "data", "value": [1]}])
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

    def script(ctx: ScriptContext) -> str:
        ctx.call("list_tickets", {"status": "open", "tag": "security", "limit": 5})  # its total
        return message

    grade = hw.verify(run_script(small, task, script), world=small, task=task).grade
    assert grade is not None and "trace.answer" not in grade.failed


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
    # One page holds each listing on the small seed: the unfollowed-page mutants run on the
    # large one, so on small alone the criterion is named as not checked, not as uncovered.
    assert not [p for p in report.problems if "never failed" in p], report.problems
    unchecked = report.unchecked["helpdesk.vip_two_statuses: trace.pages_followed"]
    assert unchecked == ["vip_two_statuses.hardcoded_ids (large)"]
    assert len(report.unchecked) == 7


@pytest.mark.parametrize("size", ["small", "large"])
def test_the_indexes_select_what_a_full_scan_selects(size: str) -> None:
    """Every built-in task's target sets, through the indexes, are the rows a scan matches."""
    checked = 0
    for task in TASKS.values():
        world = hw.load_world(task.world, size=size)
        for target in task.targets:
            keys = world.keys(target.entity)
            scanned = tuple(
                k for k in keys if (row := world.get(target.entity, k)) and target.matches(row)
            )
            assert select_targets(world, task, target.name) == scanned, (task.id, target.name)
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    ("value", "passed"),
    [("ab", True), ("a", False), ("", False), (["a", "b"], False), (None, False)],
)
def test_a_grown_field_must_end_longer_than_it_started(value: object, passed: bool) -> None:
    # thing 1's note starts as "a": any longer text is required, whatever was added
    world = toy_world()
    task = Task(
        id="toy.grow",
        world="toy",
        family="f",
        instruction="add to the note",
        targets=[Target(entity="things", where=[Condition(field="id", eq=1)])],
        require=[grading.Requirement(kind="set", field="note", grown=True)],
    )
    sets = [{"id": 1, "field": "note", "value": value}] if value != "a" else []
    grade = _toy_grade(world, task, sets)
    assert grade is not None
    assert ("state.required" not in grade.failed) is passed
    assert "state.allowed" not in grade.failed  # the required field is allowed to change
