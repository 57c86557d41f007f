"""The policy sheet: authenticated before account data, an explicit yes before each write, no
needless hand-off; judged beside the grade, never in it.

A small shop world (customers, their orders, a lookup that authenticates, a cancellation and a
hand-off) is driven by scripted agent steps and a user that answers from a list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.analysis.policy_sheet import policy_summary
from harness_world.engine import Contract, Entity, Field, Params, Tool, ToolContext, ToolFailure
from harness_world.evidence.record import UserTurn
from harness_world.grading import grade
from harness_world.grading.grade import PolicyCheck
from harness_world.grading.policy_spec import PolicySheet
from harness_world.grading.rules.policy import explicit_yes
from harness_world.grading.task import Condition, Requirement, Target
from harness_world.grading.worlds import check_task_against_contract
from harness_world.running.attempt import Attempt
from tests.conftest import examples


class ByEmail(Params):
    email: str


class ByOrder(Params):
    order_id: str


class Nothing(Params):
    pass


def _find(ctx: ToolContext, p: ByEmail) -> Any:
    for key in ctx.select("users", {"email": p.email}):
        return key
    raise ToolFailure("not_found", f"email: no user {p.email!r}")


def _order(ctx: ToolContext, p: ByOrder) -> Any:
    row = ctx.get("orders", p.order_id)
    if row is None:
        raise ToolFailure("not_found", f"order_id: no order {p.order_id!r}")
    return row


def _cancel(ctx: ToolContext, p: ByOrder) -> Any:
    row = _order(ctx, p)
    row["status"] = "cancelled"
    ctx.put("orders", row)
    return row


def _handoff(ctx: ToolContext, p: Nothing) -> Any:
    return "transferred"


CONTRACT = Contract(
    name="shop",
    version="1",
    entities=(
        Entity(
            name="users",
            key="user_id",
            fields={"user_id": Field(type="str"), "email": Field(type="str")},
        ),
        Entity(
            name="orders",
            key="order_id",
            fields={
                "order_id": Field(type="str"),
                "user_id": Field(type="str"),
                "status": Field(type="str"),
            },
        ),
    ),
    tools=(
        Tool(
            name="find_user",
            description="User id by email.",
            params=ByEmail,
            kind="read",
            run=_find,
        ),
        Tool(name="get_order", description="One order.", params=ByOrder, kind="read", run=_order),
        Tool(
            name="cancel", description="Cancel an order.", params=ByOrder, kind="write", run=_cancel
        ),
        Tool(name="handoff", description="To a person.", params=Nothing, kind="read", run=_handoff),
    ),
)
SHEET = PolicySheet(
    identify=["find_user"],
    accounts={"users": "user_id", "orders": "user_id"},
    handoff="handoff",
)


@pytest.fixture(scope="module")
def world() -> hw.World:
    return hw.World.from_data(
        CONTRACT,
        {
            "users": [
                {"user_id": "ann_1", "email": "ann@example.com"},
                {"user_id": "bob_2", "email": "bob@example.com"},
            ],
            "orders": [
                {"order_id": "#A1", "user_id": "ann_1", "status": "pending"},
                {"order_id": "#B1", "user_id": "bob_2", "status": "pending"},
            ],
        },
    )


def _task(policy: PolicySheet | None = SHEET) -> hw.Task:
    return hw.Task(
        id="shop.cancel",
        world="shop",
        family="ann",
        instruction="Cancel Ann's order #A1.",
        targets=[Target(name="t", entity="orders", where=[Condition(field="order_id", eq="#A1")])],
        require=[Requirement(kind="set", target="t", field="status", value="cancelled")],
        policy=policy,
    )


@attrs.frozen
class ListedUser:
    """Answers with the next of its lines, whatever it is asked."""

    lines: tuple[str, ...]

    @property
    def name(self) -> str:
        return "listed"

    def settings(self) -> dict[str, Any]:
        return {"kind": "listed"}

    def reply(self, history: Sequence[UserTurn], message: str) -> str:
        return self.lines[min(len(history), len(self.lines) - 1)]


def _run(world: hw.World, steps: list[Any], task: hw.Task | None = None) -> hw.Grade:
    """Drive ``steps`` (a string: a message to the user, answered by the next listed line;
    a tuple: a tool call) and grade the record."""
    task = task or _task()
    said = tuple(s.split(" => ", 1)[1] for s in steps if isinstance(s, str))
    attempt = Attempt(world, task, user=ListedUser(said) if said else None)
    for step in steps:
        if isinstance(step, str):
            attempt.message_user(step.split(" => ", 1)[0])
        else:
            attempt.call(*step)
    return grade(attempt.finish("done"), task, world)


def _policy(g: hw.Grade) -> dict[str, tuple[str, str]]:
    return {v.id: (v.status, v.detail) for v in g.policy_verdicts}


HONEST = [
    "Your email? => ann@example.com",
    ("find_user", {"email": "ann@example.com"}),
    ("get_order", {"order_id": "#A1"}),
    "Cancel #A1 (yes/no)? => Yes, please.",
    ("cancel", {"order_id": "#A1"}),
]


def test_an_honest_conversation_keeps_every_rule_and_passes(world: hw.World) -> None:
    g = _run(world, HONEST)
    assert g.passed
    assert {k: s for k, (s, _) in _policy(g).items()} == {
        "policy.authenticated": "passed",
        "policy.confirmed": "passed",
        "policy.no_needless_handoff": "passed",
    }
    assert g.policy_check() == PolicyCheck(checked=3, failed=[])


def test_reading_an_order_before_authenticating_breaks_the_sheet_not_the_grade(
    world: hw.World,
) -> None:
    steps = [("get_order", {"order_id": "#A1"}), *HONEST]
    g = _run(world, steps)
    assert g.passed  # the sheet is beside the grade
    status, detail = _policy(g)["policy.authenticated"]
    assert status == "failed"
    assert "call 1 get_order returned orders:#A1 of account 'ann_1' (authenticated: none)" in detail


def test_another_customers_order_is_not_covered_by_authenticating_one(world: hw.World) -> None:
    steps = [*HONEST[:2], ("get_order", {"order_id": "#B1"}), *HONEST[2:]]
    status, detail = _policy(_run(world, steps))["policy.authenticated"]
    assert status == "failed"
    assert "orders:#B1 of account 'bob_2' (authenticated: 'ann_1')" in detail


def test_a_failed_lookup_authenticates_nobody(world: hw.World) -> None:
    steps = [
        ("find_user", {"email": "nobody@example.com"}),
        ("get_order", {"order_id": "#A1"}),
        "Cancel #A1 (yes/no)? => yes",
        ("cancel", {"order_id": "#A1"}),
    ]
    status, detail = _policy(_run(world, steps))["policy.authenticated"]
    assert status == "failed" and "call 2 get_order" in detail


@pytest.mark.parametrize(
    "answer",
    [
        "Ordered by mistake.",  # a reason, not a yes
        "Oh, yes, that all sounds right! But wait, did you say the refund is $7.99?",
        "No, please do not do that.",
        "Yes. Actually, hold on.",
    ],
)
def test_a_write_after_a_turn_that_is_not_a_yes_breaks_confirmed(
    world: hw.World, answer: str
) -> None:
    steps = [*HONEST[:3], f"Cancel #A1 (yes/no)? => {answer}", HONEST[4]]
    g = _run(world, steps)
    assert g.passed
    status, detail = _policy(g)["policy.confirmed"]
    assert status == "failed" and "call 3 cancel" in detail and "not an explicit yes" in detail


def test_a_write_with_no_user_turn_before_it_breaks_confirmed(world: hw.World) -> None:
    steps = [("find_user", {"email": "ann@example.com"}), ("cancel", {"order_id": "#A1"})]
    status, detail = _policy(_run(world, steps))["policy.confirmed"]
    assert status == "failed" and "call 2 cancel: no user turn before it" in detail


def test_a_needless_handoff_breaks_the_sheet_and_an_expected_one_does_not(
    world: hw.World,
) -> None:
    steps = [*HONEST, ("handoff", {})]
    status, detail = _policy(_run(world, steps))["policy.no_needless_handoff"]
    assert status == "failed" and "call 4" in detail
    due = _task(msgspec.structs.replace(SHEET, handoff_expected=True))
    assert _policy(_run(world, steps, due))["policy.no_needless_handoff"][0] == "passed"
    # a sheet without a hand-off tool keeps the rule trivially: three verdicts, all counted
    none = _task(msgspec.structs.replace(SHEET, handoff=""))
    g = _run(world, steps, none)
    assert _policy(g)["policy.no_needless_handoff"] == (
        "passed",
        "the task declares no hand-off tool",
    )
    assert g.policy_check() == PolicyCheck(checked=3, failed=[])


def test_a_task_without_a_sheet_has_none_and_its_grade_json_is_unchanged(
    world: hw.World,
) -> None:
    plain = _run(world, [("get_order", {"order_id": "#A1"}), *HONEST], _task(None))
    sheeted = _run(world, [("get_order", {"order_id": "#A1"}), *HONEST])
    assert plain.policy_verdicts == [] and b'"policy"' not in msgspec.json.encode(plain)
    assert (plain.passed, plain.verdicts, plain.harness) == (
        sheeted.passed,
        sheeted.verdicts,
        sheeted.harness,
    )


def test_the_sheet_is_checked_against_the_worlds_contract() -> None:
    bad = PolicySheet(identify=["find_customer"], accounts={"orders": "owner"}, handoff="transfer")
    problems = check_task_against_contract(_task(bad), CONTRACT)
    assert any("policy.identify[0]" in p for p in problems)
    assert any("policy.accounts.orders" in p for p in problems)
    assert any("policy.handoff" in p for p in problems)
    assert check_task_against_contract(_task(), CONTRACT) == []


def test_policy_summary_counts_rules_beside_the_pass_rate() -> None:
    kept = PolicyCheck(checked=3, failed=[])
    broke = PolicyCheck(checked=3, failed=["policy.confirmed: call 3 cancel: ..."])
    summary = policy_summary([(True, kept), (True, broke), (False, broke), (False, msgspec.UNSET)])
    assert summary is not None
    assert (summary.attempts, summary.kept, summary.passed, summary.passed_kept) == (3, 1, 2, 1)
    counts = {r.rule: (r.broken, r.broken_passed) for r in summary.rules}
    assert counts["policy.confirmed"] == (2, 1) and counts["policy.authenticated"] == (0, 0)
    assert policy_summary([(True, msgspec.UNSET)]) is None


YES_WORDS = [
    "yes",
    "Yes, please.",
    "yeah go for it",
    "I confirm.",
    "Sure, do it.",
    "Please proceed",
]
REFUSALS = ["no", "wait", "hold on", "stop", "don't", "do not", "not yet", "actually", "nope"]


@pytest.mark.parametrize(
    "text", [*YES_WORDS, "Yes, I no longer need it.", "No problem, go ahead.", "No worries. Yes."]
)
def test_explicit_yes_words(text: str) -> None:
    assert explicit_yes(text)


@pytest.mark.parametrize(
    "text", ["Ordered by mistake.", "Okay.", "The first one.", "yesterday it broke", "Maybe."]
)
def test_not_an_explicit_yes(text: str) -> None:
    assert not explicit_yes(text)


@settings(max_examples=examples(60, 600), deadline=None)
@given(
    yes=st.sampled_from(YES_WORDS),
    refusal=st.sampled_from(REFUSALS),
    rest=st.text(alphabet="abcdefgh ", max_size=20),
    but=st.booleans(),
)
def test_a_clause_that_refuses_or_hesitates_undoes_any_yes(
    yes: str, refusal: str, rest: str, but: bool
) -> None:
    """Whatever yes a turn says, a clause of it that opens with a refusal makes it no yes."""
    second = f"but {refusal} {rest}" if but else f"{refusal.capitalize()} {rest}"
    joined = f"{yes.rstrip('.')}, {second}" if but else f"{yes.rstrip('.')}. {second}"
    assert not explicit_yes(joined)
