"""The generic pieces behind imported tasks, on the helpdesk world (no external data needed).

Exact-row requirements, the ``targets_read`` criterion, key lookups in target selection, the
opt-in ``drop_read`` operator, exact effects derived from a diff, and whole-database hashes.
"""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import OPERATORS, record_calls, trace_mutants
from harness_world.engine import Contract, Entity, Field, FinalRow
from harness_world.engine.canonical import to_json
from harness_world.grading import Condition, Requirement, Target, TaskError, select_targets
from harness_world.tau2 import DatabaseHasher, exact_effects

pytestmark = pytest.mark.tau2

Calls = list[tuple[str, dict[str, Any]]]


def row_task(tmp_path: Path, row: str, trace: str = "[]") -> hw.Task:
    path = tmp_path / "row.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            id = "helpdesk.row"
            world = "helpdesk"
            family = "row"
            instruction = "Solve T-1001."
            trace = {trace}

            [[targets]]
            name = "t"
            entity = "tickets"
            where = [{{ field = "id", in = ["T-1001"] }}]

            [[require]]
            kind = "row"
            target = "t"
            row = {row}
            """
        )
    )
    return hw.load_task(path)


def graded(world: hw.World, task: hw.Task, calls: Calls) -> hw.Grade:
    record = record_calls(world, task, calls)
    result = hw.verify(record, world=world, task=task)
    assert result.grade is not None, result.reason
    return result.grade


def toml_row(row: dict[str, Any]) -> str:
    inner = ", ".join(f"{k} = {to_json(v).decode()}" for k, v in row.items())
    return "{ " + inner.replace('":', '" =') + " }"


def solved_row(small: hw.World) -> dict[str, Any]:
    session = small.open_session()
    assert session.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"}).ok
    row = session.get("tickets", "T-1001")
    assert row is not None
    return row


def status(grade: hw.Grade) -> dict[str, str]:
    """The verdicts a task built here asks for (``trace.grounded_writes``, on by default and
    about how ids were found, not about the effects, left out)."""
    return {v.id: v.status for v in grade.verdicts if v.id != "trace.grounded_writes"}


def test_a_row_requirement_holds_the_whole_final_row(small: hw.World, tmp_path: Path) -> None:
    row = solved_row(small)
    task = row_task(tmp_path, toml_row(row))
    assert task.require[0].kind == "row" and task.require[0].row == row
    update = ("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    assert graded(small, task, [update]).passed  # status and updated_at: both in the row
    nothing = graded(small, task, [])
    assert status(nothing)["state.required"] == "failed"
    detail = next(v.detail for v in nothing.verdicts if v.id == "state.required")
    assert "tickets:T-1001.status expected 'solved', found 'open'" in detail
    assert "tickets:T-1001.updated_at" in detail
    also_priority = ("update_ticket", {"ticket_id": "T-1001", "priority": "low"})
    extra = graded(small, task, [update, also_priority])
    # Every field of a target row is required (so allowed): a wrong field is missing work.
    assert status(extra) == {"state.required": "failed", "state.allowed": "passed"}
    other = ("update_ticket", {"ticket_id": "T-1002", "status": "solved"})
    elsewhere = graded(small, task, [update, other])
    assert status(elsewhere) == {"state.required": "passed", "state.allowed": "failed"}


def test_a_row_requirement_is_type_aware_and_absent_is_not_null(
    small: hw.World, tmp_path: Path
) -> None:
    start = small.get("tickets", "T-1001")
    assert start is not None
    as_is = graded(small, row_task(tmp_path, toml_row(start)), [])
    assert as_is.passed  # the row already is as required: nothing to do
    without_group = {k: v for k, v in start.items() if k != "group_id"}
    missing_field = graded(small, row_task(tmp_path, toml_row(without_group)), [])
    detail = next(v.detail for v in missing_field.verdicts if v.id == "state.required")
    assert "group_id expected absent, found 'G-1'" in detail
    # In memory a row may hold null (TOML cannot): null is not absent.
    base = row_task(tmp_path, toml_row(start))
    nulled = msgspec.structs.replace(
        base, require=[Requirement(kind="row", target="t", row={**start, "group_id": None})]
    )
    assert not graded(small, nulled, []).passed
    contract = Contract(
        name="numbers",
        version="1",
        entities=(
            Entity(
                name="things",
                key="id",
                fields={"id": Field(type="str"), "n": Field(type="float")},
            ),
        ),
        tools=(),
    )
    numbers = hw.World.from_data(contract, {"things": [{"id": "a", "n": 1.0}]})

    def number_task(value: float) -> hw.Task:
        return hw.Task(
            id="n",
            world="numbers",
            family="f",
            instruction="i",
            targets=[Target(name="t", entity="things", where=[Condition(field="id", eq="a")])],
            require=[Requirement(kind="row", target="t", row={"id": "a", "n": value})],
        )

    assert graded(numbers, number_task(1.0), []).passed
    assert not graded(numbers, number_task(1), []).passed  # 1 is not 1.0
    assert not graded(numbers, number_task(1.0 + 1e-12), []).passed  # no tolerance


def test_row_and_kind_go_together(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly when kind is 'row'"):
        Requirement(kind="row", target="t")
    with pytest.raises(ValueError, match="exactly when kind is 'row'"):
        Requirement(kind="set", field="status", value="x", row={"id": "T-1"})
    path = tmp_path / "bad.toml"
    path.write_text(
        'id = "x"\nworld = "helpdesk"\nfamily = "f"\ninstruction = "i"\n'
        '[[targets]]\nentity = "tickets"\n[[require]]\nkind = "row"\n'
    )
    with pytest.raises(TaskError, match=r"bad\.toml"):
        hw.load_task(path)


def test_targets_read_fails_until_every_target_row_was_returned(
    small: hw.World, tmp_path: Path
) -> None:
    start = small.get("tickets", "T-1001")
    assert start is not None
    task = row_task(tmp_path, toml_row(start), trace='["targets_read"]')
    blind = graded(small, task, [])
    verdict = next(v for v in blind.verdicts if v.id == "trace.targets_read")
    assert verdict.status == "failed" and "tickets:T-1001" in verdict.detail
    wrong = graded(small, task, [("get_ticket", {"ticket_id": "T-1002"})])
    assert status(wrong)["trace.targets_read"] == "failed"
    missing = graded(small, task, [("get_ticket", {"ticket_id": "T-99999"})])
    assert status(missing)["trace.targets_read"] == "failed"  # an error returns no row
    read = graded(small, task, [("get_ticket", {"ticket_id": "T-1001"})])
    assert read.passed


def test_key_conditions_select_by_lookup_and_match_a_scan(small: hw.World) -> None:
    keys = ["T-1003", "T-1001", "T-99999", "U-0001"]
    by_key = hw.Task(
        id="k",
        world="helpdesk",
        family="f",
        instruction="i",
        targets=[Target(entity="tickets", where=[Condition(field="id", in_=keys)])],
    )
    selected = select_targets(small, by_key)
    assert selected == ("T-1001", "T-1003")  # seed order, unknown keys dropped
    scanned = [r["id"] for r in small.rows("tickets") if r["id"] in keys]
    assert list(selected) == scanned
    narrowed = msgspec.structs.replace(
        by_key,
        id="k2",
        targets=[
            msgspec.structs.replace(
                by_key.targets[0],
                where=[*by_key.targets[0].where, Condition(field="status", eq="open")],
            )
        ],
    )
    expected = tuple(k for k in selected if (small.get("tickets", k) or {}).get("status") == "open")
    assert select_targets(small, narrowed) == expected


def test_drop_read_is_opt_in(small: hw.World) -> None:
    task = hw.Task(id="d", world="helpdesk", family="f", instruction="i")
    calls: Calls = [
        ("get_ticket", {"ticket_id": "T-1001"}),
        ("get_ticket", {"ticket_id": "T-99999"}),
        ("update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
    ]
    oracle = record_calls(small, task, calls)
    default = trace_mutants(oracle, task, small)
    assert all(m.operator in OPERATORS for m in default)
    assert "drop_read" not in {m.operator for m in default}
    reads = trace_mutants(oracle, task, small, operators=("drop_read",))
    assert [m.id for m in reads] == ["drop_read@1"]  # the failed read is not dropped
    assert reads[0].calls == calls[1:]
    with pytest.raises(ValueError, match="unknown mutation operator"):
        trace_mutants(oracle, task, small, operators=("drop_everything",))


def test_exact_effects_require_the_gold_end_state_and_nothing_else(small: hw.World) -> None:
    gold: Calls = [
        ("update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
        ("add_comment", {"ticket_id": "T-1001", "body": "Fixed.", "public": True}),
    ]
    session = small.open_session()
    for tool, args in gold:
        assert session.call(tool, args).ok
    targets, require = exact_effects(small, session.diff())
    assert [t.name for t in targets] == ["tickets:T-1001"]
    assert [r.kind for r in require] == ["row", "create"]
    assert "id" not in require[1].match and require[1].match["body"] == "Fixed."
    task = hw.Task(
        id="e",
        world="helpdesk",
        family="f",
        instruction="Solve T-1001 and tell them: Fixed.",
        targets=targets,
        require=require,
    )
    assert graded(small, task, gold).passed
    assert not graded(small, task, gold[:1]).passed
    other = ("add_comment", {"ticket_id": "T-1001", "body": "Other.", "public": True})
    wrong_text = graded(small, task, [gold[0], other])
    assert status(wrong_text) == {"state.required": "failed", "state.allowed": "failed"}
    twice = graded(small, task, [*gold, gold[1]])
    assert status(twice)["state.allowed"] == "failed"


def test_database_hash_is_the_hash_of_the_materialised_database(small: hw.World) -> None:
    hasher = DatabaseHasher(small)
    start = hasher.database()
    assert sorted(start) == sorted(small.entities())
    assert len(start["tickets"]) == small.count("tickets")

    def plain(db: dict[str, Any]) -> str:
        return hashlib.sha256(to_json(db)).hexdigest()

    assert hasher.hash() == plain(start)
    session = small.open_session()
    session.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    session.call("add_comment", {"ticket_id": "T-1001", "body": "Fixed.", "public": True})
    final = session.touched()
    assert any(f.entity == "comments" and small.get("comments", f.key) is None for f in final)
    assert hasher.hash(final) == plain(hasher.database(final)) != hasher.hash()
    again = small.open_session()
    again.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    again.call("update_ticket", {"ticket_id": "T-1001", "status": "open"})
    restored = again.touched()
    changed = hasher.database(restored)["tickets"]["T-1001"]
    assert changed != start["tickets"]["T-1001"]  # updated_at moved on
    assert hasher.hash(restored) == plain(hasher.database(restored))
    first = {"id": "C-0000", "ticket_id": "T-1001", "body": "x"}  # a new key sorting first
    early = [FinalRow(entity="comments", key="C-0000", row=first)]
    assert next(iter(hasher.database(early)["comments"])) == "C-0000"
    assert hasher.hash(early) == plain(hasher.database(early))
    gone = [FinalRow(entity="tickets", key="T-1001", row=None)]
    assert "T-1001" not in hasher.database(gone)["tickets"]
    assert hasher.hash(gone) == plain(hasher.database(gone))
