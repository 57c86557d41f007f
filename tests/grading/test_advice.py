"""Advisory observations: each fires on the trace it names and stays quiet on a near miss."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.coverage import load_mutants, load_oracles, record_calls, run_script
from harness_world.evidence import Outcome, Usage
from harness_world.grading import ADVISORIES, advise
from tests.strategies import call_sequences

TASKS = {t.id: t for t in hw.load_tasks()}
WORLDS = {name: hw.load_world(name) for name in ("helpdesk", "inventory")}
MUTANTS = {m.id: m for name in WORLDS for m in load_mutants(name)}


def names(record: hw.Record, task_id: str) -> set[str]:
    task = TASKS[task_id]
    assert hw.verify(record, WORLDS[task.world], task).evidence == "verified"
    return {a.name for a in advise(record, task, WORLDS[task.world])}


def calls(task_id: str, made: list[tuple[str, Any]], message: str = "Done.", **kw: Any) -> set[str]:
    task = TASKS[task_id]
    record = record_calls(WORLDS[task.world], task, made, final_message=message, **kw)
    return names(record, task_id)


def mutant(mutant_id: str, world: str = "helpdesk") -> set[str]:
    m = MUTANTS[mutant_id]
    return names(run_script(WORLDS[world], TASKS[m.task_id], m.script), m.task_id)


READ = ("get_ticket", {"ticket_id": "T-1001"})
SOLVE = ("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
REPLY = ("add_comment", {"ticket_id": "T-1001", "body": "Fixed now.", "public": True})
RS = "helpdesk.reply_and_solve"


def test_every_advisory_has_a_one_line_definition() -> None:
    assert len(ADVISORIES) >= 12
    assert all(text and "\n" not in text for text in ADVISORIES.values())


@pytest.mark.parametrize("world", sorted(WORLDS))
def test_reference_solutions_carry_no_advisory(world: str) -> None:
    for task_id, script in load_oracles(world).items():
        record = run_script(WORLDS[world], TASKS[task_id], script)
        assert names(record, task_id) == set(), task_id


def test_unfollowed_page() -> None:
    assert "unfollowed_page" in mutant("escalate_outage.first_page")
    one_page = ("list_tickets", {"status": "open", "tag": "outage", "limit": 100})
    assert "unfollowed_page" not in calls("helpdesk.escalate_outage", [one_page])


def test_no_writes() -> None:
    assert calls(RS, [READ]) >= {"no_writes"}
    assert "no_writes" not in calls(RS, [READ, SOLVE])
    # a counting task requires no effect: reading only is not a missing write
    assert "no_writes" not in calls("helpdesk.security_count", [], message="0")


def test_write_without_read() -> None:
    assert "write_without_read" in calls(RS, [SOLVE, REPLY])
    assert "write_without_read" not in calls(RS, [READ, SOLVE, REPLY])


def test_refused_calls_never_recovered() -> None:
    refused = ("assign_ticket", {"ticket_id": "T-1001", "owner_id": "U-0050"})
    assert "refused_calls" in calls(RS, [READ, refused, SOLVE, REPLY])
    unknown = ("get_ticket", {"ticket_id": "T-0000"})
    assert "refused_calls" in calls(RS, [unknown, READ, SOLVE, REPLY])
    # the same read, fixed and retried, is a recovery
    assert "refused_calls" not in calls(RS, [("get_ticket", {"ticket_id": 1001}), READ])


def test_a_lost_response_is_recovered_by_a_look() -> None:
    # The reply's response is lost: reading the comments shows whether it committed.
    task = "helpdesk.reply_lost_response"
    reply = ("add_comment", {"ticket_id": "T-1008", "body": "Refunded.", "public": True})
    look = ("list_comments", {"ticket_id": "T-1008"})
    solve = ("update_ticket", {"ticket_id": "T-1008", "status": "solved"})
    read = ("get_ticket", {"ticket_id": "T-1008"})
    assert "refused_calls" not in calls(task, [read, reply, look, solve])
    assert "refused_calls" in calls(task, [read, reply, solve])


def test_ended_with_question() -> None:
    assert "ended_with_question" in calls(RS, [READ], message="Done. Shall I reply as well?")
    assert "ended_with_question" not in calls(RS, [READ], message="Was it fixed? Yes. Done.")


def test_repeated_call() -> None:
    assert "repeated_call" in calls(RS, [READ, READ, SOLVE, REPLY])
    # reading again after a write can learn something new
    assert "repeated_call" not in calls(RS, [READ, SOLVE, READ, REPLY])


def test_hedged_answer() -> None:
    assert "hedged_answer" in calls(RS, [READ], message="It is probably solved now.")
    assert "hedged_answer" not in calls(RS, [READ], message="Mightily solved.")


def test_stopped_near_budget() -> None:
    # reply_and_solve allows 10 tool calls and 10 turns
    assert "stopped_near_budget" in calls(RS, [READ, SOLVE, REPLY], usage=Usage(turns=9))
    ended = Outcome(status="budget_limit", reason="tool_calls budget of 10 reached")
    assert "stopped_near_budget" in calls(RS, [READ], outcome=ended)
    assert "stopped_near_budget" not in calls(RS, [READ, SOLVE, REPLY], usage=Usage(turns=8))


def test_acted_on_wrong_row() -> None:
    assert "acted_on_wrong_row" in mutant("create_for_john.first_search_result")
    assert "acted_on_wrong_row" in mutant("transfer_copy_paper.wrong_destination", "inventory")
    # a different customer altogether is a wrong row, but not one that looks like the target
    create = (
        "create_ticket",
        {"subject": "Export to CSV fails", "requester_id": "U-0050", "priority": "high"},
    )
    assert "acted_on_wrong_row" not in calls("helpdesk.create_for_john", [create])


def test_a_look_alike_is_judged_against_each_tasks_own_targets() -> None:
    """The verdict on a row is kept per world and task: the same ticket for Jon Smith is a
    wrong row where John Smith is the target, and none where the target is someone else,
    in whichever order the two are advised."""
    task = TASKS["helpdesk.create_for_john"]
    (target,) = task.targets
    other_user = [{"field": "email", "eq": "keiko.baptiste37@inbox.example"}]  # U-0050
    retargeted = msgspec.convert(
        {
            **msgspec.to_builtins(task),
            "targets": [{**msgspec.to_builtins(target), "where": other_user}],
        },
        type(task),
    )
    assert retargeted.hash != task.hash
    world = WORLDS["helpdesk"]
    create = (
        "create_ticket",
        {"subject": "Export to CSV fails", "requester_id": "U-0013", "priority": "high"},
    )
    record = record_calls(world, task, [create], final_message="Done.")
    for first, second in ((task, retargeted), (retargeted, task)):
        for t in (first, second, first):
            found = {a.name for a in advise(record, t, world)}
            assert ("acted_on_wrong_row" in found) is (t is task), t.hash


def test_partial_filter() -> None:
    assert "partial_filter" in mutant("vip_two_statuses.one_status")
    both = [("list_tickets", {"status": s, "tag": "vip", "limit": 100}) for s in ("new", "pending")]
    assert "partial_filter" not in calls("helpdesk.vip_two_statuses", both)


def test_skipped_step() -> None:
    assert "skipped_step" in mutant("reply_and_solve.no_reply")
    assert "skipped_step" not in calls(RS, [READ, SOLVE, REPLY])


def test_added_step() -> None:
    assert "added_step" in mutant("create_for_john.described_in_comment")
    assert "added_step" not in calls(RS, [READ, SOLVE, REPLY])


def test_an_advisory_never_changes_the_grade() -> None:
    task = TASKS[RS]
    record = record_calls(WORLDS["helpdesk"], task, [READ, READ, SOLVE, REPLY], final_message="ok")
    before = msgspec.json.encode(hw.verify(record, WORLDS["helpdesk"], task))
    assert advise(record, task, WORLDS["helpdesk"])  # it carries one (repeated_call) ...
    after = hw.verify(record, WORLDS["helpdesk"], task)
    assert msgspec.json.encode(after) == before and after.grade is not None
    assert after.grade.passed  # ... and still passes


@given(call_sequences, st.sampled_from(sorted(t for t in TASKS if t.startswith("helpdesk."))))
def test_advisories_on_any_trace_are_known_and_leave_the_grade_alone(
    made: list[tuple[str, Any]], task_id: str
) -> None:
    task, world = TASKS[task_id], WORLDS["helpdesk"]
    record = record_calls(world, task, made, final_message="Done.")
    before = msgspec.json.encode(hw.verify(record, world, task))
    found = advise(record, task, world)
    assert {a.name for a in found} <= set(ADVISORIES)
    assert all(1 <= seq <= len(record.calls) for a in found for seq in a.calls)
    assert [a.name for a in found] == [n for n in ADVISORIES if n in {a.name for a in found}]
    assert msgspec.json.encode(hw.verify(record, world, task)) == before


def test_answered_without_reading() -> None:
    """A question answered with no successful read: the answer came from nowhere in the world."""
    question = "helpdesk.security_count"
    assert "answered_without_reading" in calls(question, [], message="7")
    refused = ("get_ticket", {"ticket_id": "T-0000"})
    assert "answered_without_reading" in calls(question, [refused], message="7")
    listing = ("list_tickets", {"tag": "security", "status": "open", "limit": 100})
    assert "answered_without_reading" not in calls(question, [listing], message="7")
    assert "answered_without_reading" not in calls(RS, [SOLVE])  # no answer asked for


def test_empty_final_message() -> None:
    assert "empty_final_message" in calls(RS, [READ, SOLVE], message="  ")
    assert "empty_final_message" not in calls(RS, [READ, SOLVE], message="Done.")
