"""Gaming round 9: answers that passed ``trace.answer`` without committing to one value.

An agent optimised against the grade found four ways to state an answer the reading took as
committed: a hedge whose other candidates are numbers of the instruction ("15 or 40", where 40
is the briefing's tool-call budget; and "20 or 40" passed whichever of the two was expected), a
hedge word in the sentence introducing a structured answer ("Probably:" above
``{"answer": 15}``, though the briefing says "probably" fails), other candidates in the
structured object's other keys (``{"answer": 15, "alternatives": [14, 16]}``), and a denial
written after the value ("15 is wrong."). Each passed on the code before this change.
"""

from __future__ import annotations

import json

import pytest

from harness_world.grading.answers import judge
from harness_world.grading.briefing import briefing
from tests.grading.oracle_answer import TASKS, oracle_answer

# -- a hedge with the instruction's numbers --------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "15 or 40",
        "15 to 40",
        "Between 15 and 40.",
        "It is 15, 20 or 40.",
        "Fifteen, or 40 if you count the other ones.",
    ],
)
def test_a_hedge_with_a_number_of_the_instruction_fails(message: str) -> None:
    # 20 and 40 are the briefing's budgets (turns, tool calls); 15 is the count on small.
    verdict = oracle_answer("helpdesk.security_count", message)
    assert verdict.status == "failed", (message, verdict.detail)
    assert "hedged count" in verdict.detail or "two counts" in verdict.detail, verdict.detail


@pytest.mark.parametrize("message", ["20 or 40.", "20, 40.", "Either 20 or 40 tickets."])
def test_one_message_never_passes_for_two_expected_counts(message: str) -> None:
    # Numbers the instruction gives were dropped unless equal to the expected value, so a
    # message of instruction numbers passed for each of them: the reading depended on the key.
    instruction = briefing(TASKS["helpdesk.security_count"])
    passes = [n for n in (20, 40) if judge("count", message, n, instruction=instruction).ok]
    assert passes == [], (message, passes)


def test_an_answer_equal_to_a_number_of_the_instruction_still_passes() -> None:
    instruction = briefing(TASKS["helpdesk.security_count"])
    for message in ("20", "There are 20 open security tickets.", '{"answer": 20}'):
        assert judge("count", message, 20, instruction=instruction).ok, message
    # Beside a structured answer the instruction's numbers restate the question.
    message = 'Counted within the 40 tool calls.\n{"answer": 15}'
    assert judge("count", message, 15, instruction=instruction).ok


def test_an_answer_beside_a_number_of_the_instruction_passes() -> None:
    verdict = oracle_answer(
        "helpdesk.security_count", "15 open tickets, counted within 40 tool calls."
    )
    assert verdict.status == "passed", verdict.detail


# -- the sentence that introduces a structured answer ----------------------------------------


@pytest.mark.parametrize(
    ("lead", "phrase"),
    [("Probably:", "Probably"), ("I could not finish counting.", "could not")],
)
def test_a_hedge_introducing_a_structured_count_fails(lead: str, phrase: str) -> None:
    verdict = oracle_answer("helpdesk.security_count", f'{lead}\n{{"answer": 15}}')
    assert verdict.status == "failed", verdict.detail
    assert phrase in verdict.detail, verdict.detail


def test_a_hedge_introducing_a_structured_id_list_fails() -> None:
    task_id = "inventory.draft_orders_leeds"
    ids = ["PO-0023", "PO-0026", "PO-0045", "PO-0053"]
    assert oracle_answer(task_id, json.dumps({"answer": ids})).status == "passed"
    verdict = oracle_answer(task_id, "Probably:\n" + json.dumps({"answer": ids}))
    assert verdict.status == "failed", verdict.detail


# -- the structured object's other keys -----------------------------------------------------


def test_other_keys_of_the_structured_object_state_no_other_count() -> None:
    message = json.dumps({"answer": 15, "alternatives": [14, 16]})
    verdict = oracle_answer("helpdesk.security_count", message)
    assert verdict.status == "failed", verdict.detail
    assert "14" in verdict.detail, verdict.detail


def test_other_keys_of_the_structured_object_name_no_other_id() -> None:
    ids = ["PO-0023", "PO-0026", "PO-0045", "PO-0053"]
    message = json.dumps({"answer": ids, "maybe": ["PO-0001", "PO-0002"]})
    verdict = oracle_answer("inventory.draft_orders_leeds", message)
    assert verdict.status == "failed", verdict.detail
    assert "PO-0001" in verdict.detail, verdict.detail


def test_other_keys_that_state_nothing_of_the_kind_pass() -> None:
    message = json.dumps({"answer": 15, "source": "list_tickets total"})
    assert oracle_answer("helpdesk.security_count", message).status == "passed"


# -- a denial written after the value -------------------------------------------------------


@pytest.mark.parametrize(
    "message", ["15 is wrong.", "15 is not correct.", "The count 15 is incorrect.", "15 was false."]
)
def test_a_value_the_message_calls_wrong_fails(message: str) -> None:
    verdict = oracle_answer("helpdesk.security_count", message)
    assert verdict.status == "failed", (message, verdict.detail)
    assert "retracted" in verdict.detail, verdict.detail


def test_a_value_followed_by_other_words_is_still_anoracle_answer() -> None:
    for message in ("15 is the count.", "15 is correct.", "15 is not a small number of tickets."):
        assert oracle_answer("helpdesk.security_count", message).status == "passed", message


# -- an answer asked back as a question -----------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="a count stated only inside a question ('Is the answer 15?') is read as stated: "
    "no rule reads a sentence's mood; proposed: a candidate whose sentence opens with an "
    "auxiliary or interrogative word and ends with '?' is asked, not stated (the "
    "ended_with_question advisory only reports it)",
)
@pytest.mark.parametrize("message", ["Is the answer 15?", "Could it be 15?", "Would 15 be right?"])
def test_a_count_asked_as_a_question_fails(message: str) -> None:
    verdict = oracle_answer("helpdesk.security_count", message)
    assert verdict.status == "failed", (message, verdict.detail)
