"""An answer means what it says: prose that states another value, or denies the one stated, fails.

A reward-optimised agent found that ``trace.answer`` read the one number of a message and the
``{"answer": ...}`` line alone: "not 15", "It is not 15.", "15 (this is wrong)", "The answer is
15, not 15." and "I could not count them; my guess is 15" all passed ``security_count``, and a
message stating "4 legacy items" passed on its ``{"answer": 3}`` line. Each fails now, naming
the phrase; the plain statements (and the same words where they deny nothing) pass.
"""

from __future__ import annotations

import pytest

from harness_world.grading.answers import (
    GUESS_PHRASES,
    HEDGE_PHRASES,
    IdAnswer,
    judge,
)
from harness_world.grading.briefing import answer_hint
from harness_world.grading.mentions import number_mentions
from harness_world.grading.rules.advice import hedges
from harness_world.grading.task import Answer
from tests.grading.oracle_answer import oracle_answer


@pytest.mark.parametrize(
    ("message", "phrase"),
    [
        ("not 15", "negated: 'not 15'"),
        ("It is not 15.", "negated: 'not 15'"),
        ("15 (this is wrong)", "retracted: 'this is wrong'"),
        ("The answer is 15, not 15.", "negated: 'not 15'"),
        ("I could not count them; my guess is 15", "called a guess: 'my guess'"),
        ("There are 15 open security tickets. Scratch that.", "retracted: 'Scratch that'"),
        ("Probably 15.", "qualified: 'Probably'"),
        ("I don't know, 15?", 'called a guess: "I don\'t know"'),
    ],
)
def test_a_count_the_message_denies_fails_naming_the_phrase(message: str, phrase: str) -> None:
    verdict = oracle_answer("helpdesk.security_count", message)
    assert verdict.status == "failed", message
    assert phrase in verdict.detail, verdict.detail


@pytest.mark.parametrize(
    "message",
    [
        "15",
        "There are 15 open security tickets.",
        "There are 15 open security tickets. I did not change any of them, as asked.",
        "Not one of them is closed: 15 are open.",
        '{"answer": 15}',
        'I listed the open tickets tagged security.\n{"answer": 15}',
    ],
)
def test_a_plain_count_passes(message: str) -> None:
    verdict = oracle_answer("helpdesk.security_count", message)
    assert verdict.status == "passed", verdict.detail


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            'I found 4 legacy items.\n{"answer": 3}',
            "the prose states '4' besides the structured answer 3",
        ),
        (
            'There are 3, maybe.\n{"answer": 3}',
            "the prose around the structured count is qualified: 'maybe'",
        ),
        ('It is not 3.\n{"answer": 3}', "negated: 'not 3'"),
        ('My guess:\n{"answer": 3}', "the structured count is called a guess: 'My guess'"),
    ],
)
def test_prose_against_a_structured_count_fails(message: str, reason: str) -> None:
    verdict = oracle_answer("inventory.count_legacy_peripherals", message)
    assert verdict.status == "failed", message
    assert reason in verdict.detail, verdict.detail


def test_prose_agreeing_with_a_structured_count_passes() -> None:
    message = 'Three peripherals have no supplier field: 3 legacy items.\n{"answer": 3}'
    assert oracle_answer("inventory.count_legacy_peripherals", message).status == "passed"


def test_prose_naming_a_non_target_beside_a_structured_id_list_fails() -> None:
    task_id = "inventory.draft_orders_leeds"
    right = '["PO-0023", "PO-0026", "PO-0045", "PO-0053"]'
    assert (
        oracle_answer(task_id, f'The drafts for Leeds:\n{{"answer": {right}}}').status == "passed"
    )
    verdict = oracle_answer(task_id, f'Also PO-0001 is a draft.\n{{"answer": {right}}}')
    assert verdict.status == "failed"
    assert "the prose names PO-0001, which the structured answer does not" in verdict.detail


def test_a_negated_id_fails() -> None:
    verdict = oracle_answer(
        "inventory.draft_orders_leeds", "PO-0023, PO-0026, PO-0045, not PO-0053"
    )
    assert verdict.status == "failed" and "negated: 'not PO-0053'" in verdict.detail


def test_lower_case_ids_name_no_row_and_the_detail_says_why() -> None:
    """Decided: ids are case-sensitive (the agent is told so in the answer hint)."""
    verdict = oracle_answer("inventory.draft_orders_leeds", "po-0023, po-0026, po-0045, po-0053")
    assert verdict.status == "failed"
    assert "ids are case-sensitive" in verdict.detail and "po-0023 for PO-0023" in verdict.detail
    hint = answer_hint(Answer(type="ids"))
    assert "written exactly as the tools return it (ids are case-sensitive)" in hint


def test_a_context_number_reads_as_a_second_answer_and_the_agent_is_told() -> None:
    """Decided: "15 of 66 in all" states two counts; the hint says a total beside it counts."""
    verdict = oracle_answer("helpdesk.security_count", "15 open security tickets, 66 in all.")
    assert verdict.status == "failed"
    assert "two counts stated (15, 66)" in verdict.detail
    assert "a total or any other number beside it reads as a second count" in verdict.detail
    hint = answer_hint(Answer(type="count"))
    assert "a total or any other number beside it reads as a second answer" in hint


def test_the_hint_for_a_list_answer_says_what_hedges_a_list() -> None:
    """Decided: a list is the answer there, so the hint names what hedges a list instead."""
    ids = answer_hint(Answer(type="ids"))
    assert "a hedged answer (a list" not in ids
    assert 'a hedged list (cut short with "etc." or "...", either/or' in ids
    count = answer_hint(Answer(type="count"))
    assert "several candidates" in count and "negates or takes back" in count


def test_the_advisory_and_the_answer_check_share_one_phrase_list() -> None:
    message = "I think it is 15, my guess."
    assert hedges(message) == ["i think", "my guess"]
    assert all(p in HEDGE_PHRASES or p in GUESS_PHRASES for p in hedges(message))
    assert not judge("count", message, 15).ok


def test_yes_no_keeps_its_could_not() -> None:
    """ "No, I could not find one" is an answer to a yes/no question, not a hedge."""
    assert judge("yes_no", "No, I could not find one.", False).ok
    assert not judge("yes_no", "No, probably not.", False).ok


def test_the_denial_never_reads_a_prefix_of_another_word() -> None:
    message = "Another 15 tickets are open."
    assert [m.value for m in number_mentions(message)] == [15]
    assert judge("count", message, 15).ok


def _ids(targets: set[str]) -> IdAnswer:
    return IdAnswer(targets=frozenset(targets), is_row=lambda t: t.startswith("PO-"))


@pytest.mark.parametrize(
    "message",
    ['{"answer": ["PO-1", "PO-2"]}', 'Both drafts.\n{"answer": ["PO-1", "PO-2"]}'],
)
def test_a_structured_id_list_with_quiet_prose_passes(message: str) -> None:
    assert judge("ids", message, None, ids=_ids({"PO-1", "PO-2"})).ok
