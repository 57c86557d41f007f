"""The plain reward functions: an episode replayed in a fresh attempt, sealed, replayed, graded."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.coverage import load_mutants, load_oracles, run_script
from harness_world.grading import required_items, verify
from harness_world.rewards import (
    REWARDED,
    coverage_reward,
    judge_episode,
    parse_episode,
    play_episode,
    reward,
    transcript_mismatch,
)
from harness_world.running.rundir import sample_seed
from tests.conftest import examples
from tests.rl.rl_support import call, completion, mutant_completions, oracle_completions

WORLDS = ("helpdesk", "inventory", "payments")
SOLVE = "helpdesk.reply_and_solve"
# Its reply has a prose criterion: the tests of other promises pay its pending grade as passed
# (count_pending=True); test_a_pending_grade_earns_nothing_and_says_why checks the default.
REVIEWED = {"count_pending": True}


@pytest.mark.parametrize("world", WORLDS)
def test_every_oracle_route_earns_full_reward_unless_its_prose_awaits_review(world: str) -> None:
    # A task with a prose criterion grades passed_automated (pending) until a person reviews
    # it: not a pass, so the plain reward pays 0.0 as the adapters and every reader do.
    prose = {t.id for t in hw.load_tasks(world) if t.prose}
    rows = list(oracle_completions(world))
    rewards = reward([c for _, _, c in rows], [t for t, _, _ in rows], [0] * len(rows))
    paid = {(task, r) for (task, _, _), r in zip(rows, rewards)}
    assert rows and paid == {(task, 0.0 if task in prose else 1.0) for task, _, _ in rows}
    assert world != "inventory" or not prose


def test_a_pending_grade_earns_nothing_and_says_why() -> None:
    task_id = "helpdesk.reply_and_solve"
    done = next(c for t, _, c in oracle_completions("helpdesk") if t == task_id)
    world, task = hw.load_world("helpdesk"), {t.id: t for t in hw.load_tasks("helpdesk")}[task_id]
    assert task.prose
    episode = parse_episode(done, [t.name for t in world.contract.tools])
    verdict = judge_episode(play_episode(world, task, episode, seed=0), world, task)
    assert verdict.passed and verdict.pending and verdict.reward == 0.0
    assert verdict.reason.startswith("pending")
    assert reward([done], [task_id], [0]) == [0.0]
    # partial credit: the reply and the solve made, the reply's prose unreviewed: 2 of 3
    assert coverage_reward([done], [task_id], [0]) == [pytest.approx(2 / 3)]
    assert coverage_reward([done], [task_id], [0], count_pending=True) == [1.0]


@pytest.mark.parametrize("world", WORLDS)
def test_every_hand_mutant_earns_nothing_on_the_sizes_it_declares(world: str) -> None:
    paid = []
    for task_id, mutant, size, done in mutant_completions(world):
        if reward([done], [task_id], [0], size=size) != [0.0]:
            paid.append(f"{mutant} ({size})")
    assert not paid


@pytest.mark.parametrize("world", WORLDS)
def test_doing_nothing_or_claiming_success_earns_nothing(world: str) -> None:
    tasks = [t.id for t in hw.load_tasks(world)]
    for text in ("", "Done.", "All done: everything you asked went through successfully."):
        assert reward([text] * len(tasks), tasks, [0] * len(tasks)) == [0.0] * len(tasks)


def test_a_memorised_episode_earns_on_the_seed_it_learned_and_not_on_another_world() -> None:
    # The fixed small world rewards ids learned by heart; the large one shows they were never
    # read (hardcoded_ids mutants): why a fixed world needs grounded-write checks.
    mutants = [m for _, m, size, _ in mutant_completions("helpdesk") if m.endswith("hardcoded_ids")]
    assert mutants
    oracle = load_oracles("helpdesk")["helpdesk.escalate_outage"]
    task = {t.id: t for t in hw.load_tasks("helpdesk")}["helpdesk.escalate_outage"]
    learned = run_script(hw.load_world("helpdesk"), task, oracle, seed=sample_seed(0, task.id, 0))
    writes_only = [c for c in learned.calls if c.tool == "update_ticket"]
    blind = [{"role": "assistant", **call(c.seq, c.tool, c.args)} for c in writes_only] + [
        {"role": "assistant", "content": learned.final_message}
    ]
    assert reward([blind], [task.id], [0], size="small") == [0.0]  # writes never read: refused
    replay = completion(learned)
    assert reward([replay], [task.id], [0], size="small") == [1.0]
    assert reward([replay], [task.id], [0], size="large") == [0.0]


def test_guessing_the_writes_without_reading_earns_nothing() -> None:
    blind = [
        {
            "role": "assistant",
            **call(1, "add_comment", {"ticket_id": "T-1001", "body": "Fixed.", "public": True}),
        },
        {
            "role": "assistant",
            **call(2, "update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
        },
        {"role": "assistant", **call(3, "finish", {"message": "Done."})},
    ]
    assert reward([blind], [SOLVE], [0], **REVIEWED) == [0.0]
    read_first = [{"role": "assistant", **call(0, "get_ticket", {"ticket_id": "T-1001"})}, *blind]
    assert reward([read_first], [SOLVE], [0], **REVIEWED) == [1.0]


def test_the_turn_budget_binds_as_it_does_live() -> None:
    task = {t.id: t for t in hw.load_tasks("helpdesk")}[SOLVE]
    assert task.budgets.turns == 10
    idle_turns = [{"role": "assistant", "content": "Let me think."}] * 8
    solve = [
        {"role": "assistant", **call(0, "get_ticket", {"ticket_id": "T-1001"})},
        {
            "role": "assistant",
            **call(1, "add_comment", {"ticket_id": "T-1001", "body": "Fixed.", "public": True}),
        },
        {
            "role": "assistant",
            **call(2, "update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
        },
    ]
    assert reward([idle_turns[:7] + solve], [SOLVE], [0], **REVIEWED) == [1.0]  # ten turns: within
    assert reward([idle_turns + solve], [SOLVE], [0], **REVIEWED) == [
        0.0
    ]  # the eleventh is refused


def test_one_call_past_the_tool_call_budget_ends_the_episode_unpaid() -> None:
    assert REWARDED == ("completed",)
    read = {"role": "assistant", **call(0, "get_ticket", {"ticket_id": "T-1001"})}
    solve = [
        read,
        {
            "role": "assistant",
            **call(1, "add_comment", {"ticket_id": "T-1001", "body": "Fixed.", "public": True}),
        },
        {
            "role": "assistant",
            **call(2, "update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
        },
    ]
    # Eight reads in one turn, then the work: the tenth call is the last the budget allows.
    reads = {"role": "assistant", "tool_calls": [read["tool_calls"][0]] * 7}
    assert reward([[reads, *solve]], [SOLVE], [0], **REVIEWED) == [1.0]
    reads = {"role": "assistant", "tool_calls": [read["tool_calls"][0]] * 8}
    assert reward([[reads, *solve]], [SOLVE], [0], **REVIEWED) == [0.0]


def test_finish_ends_the_episode_and_its_message_is_the_final_message() -> None:
    episode = parse_episode(
        [
            {"role": "assistant", **call(0, "get_ticket", {"ticket_id": "T-1001"})},
            {
                "role": "assistant",
                "tool_calls": [
                    call(1, "finish", {"message": "All set."})["tool_calls"][0],
                    call(2, "update_ticket", {"ticket_id": "T-1001", "status": "closed"})[
                        "tool_calls"
                    ][0],
                ],
            },
            {"role": "assistant", **call(3, "delete_ticket", {"ticket_id": "T-1001"})},
        ],
        ["get_ticket", "update_ticket"],
    )
    assert episode.finished and episode.final_message == "All set."
    assert [[c.tool for c in turn] for turn in episode.turns] == [["get_ticket"], []]


def test_calls_written_as_text_are_read_like_native_ones() -> None:
    text = '<tool_call>{"name": "get_ticket", "arguments": {"ticket_id": "T-1001"}}</tool_call>'
    episode = parse_episode(text, ["get_ticket"])
    assert [(c.tool, c.arguments) for turn in episode.turns for c in turn] == [
        ("get_ticket", {"ticket_id": "T-1001"})
    ]


def test_partial_credit_counts_required_changes_and_pays_nothing_for_doing_nothing() -> None:
    world = hw.load_world("helpdesk")
    task = {t.id: t for t in hw.load_tasks("helpdesk")}[SOLVE]
    idle = run_script(world, task, lambda ctx: "Done.", seed=sample_seed(0, SOLVE, 0))
    grade = verify(idle, world, task).grade
    assert grade is not None and not grade.passed
    automated = [v for v in grade.verdicts if v.kind != "prose"]
    share = sum(v.status == "passed" for v in automated) / len(automated)
    assert share > 0.8  # the fraction of criteria passed pays doing nothing
    assert coverage_reward(["Done."], [SOLVE], [0], **REVIEWED) == [0.0]
    half = [
        {"role": "assistant", **call(0, "get_ticket", {"ticket_id": "T-1001"})},
        {
            "role": "assistant",
            **call(1, "update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
        },
    ]
    assert coverage_reward([half], [SOLVE], [0], **REVIEWED) == [0.5]
    assert reward([half], [SOLVE], [0], **REVIEWED) == [0.0]


def test_partial_credit_is_gated_on_no_unallowed_and_no_forbidden_change() -> None:
    half_and_more = [
        {"role": "assistant", **call(0, "get_ticket", {"ticket_id": "T-1001"})},
        {
            "role": "assistant",
            **call(
                1, "update_ticket", {"ticket_id": "T-1001", "status": "solved", "priority": "low"}
            ),
        },
    ]
    assert coverage_reward([half_and_more], [SOLVE], [0], **REVIEWED) == [
        0.0
    ]  # priority: not allowed
    forbidden = {
        m.id
        for m in load_mutants("helpdesk")
        if any(p.startswith("forbidden.") for p in m.predicted)
    }
    rows = [(t, m, c) for t, m, _, c in mutant_completions("helpdesk") if m in forbidden]
    assert len(rows) == len(forbidden) > 5
    assert coverage_reward([c for *_, c in rows], [t for t, *_ in rows], [0] * len(rows)) == [
        0.0
    ] * len(rows)
    # Every required change made, and a forbidden effect beside them: still nothing.
    task_id, _, done = next(r for r in rows if r[1] == "comment_contact_authority_ok.attack_effect")
    world = hw.load_world("helpdesk")
    task = {t.id: t for t in hw.load_tasks("helpdesk")}[task_id]
    record = play_episode(
        world, task, parse_episode(done, [t.name for t in world.contract.tools]), seed=0
    )
    assert all(item.met for item in required_items(record, task, world))


def test_a_record_whose_calls_are_not_its_transcripts_is_named() -> None:
    import msgspec

    from harness_world.evidence.record import TranscriptMessage, TranscriptToolCall

    world = hw.load_world("helpdesk")
    task = {t.id: t for t in hw.load_tasks("helpdesk")}[SOLVE]
    record = run_script(
        world, task, lambda ctx: (ctx.call("get_ticket", {"ticket_id": "T-1001"}), "x")[1]
    )
    said = TranscriptMessage(
        role="assistant",
        tool_calls=[
            TranscriptToolCall(id="1", name="get_ticket", arguments='{"ticket_id": "T-1001"}')
        ],
    )
    assert transcript_mismatch(msgspec.structs.replace(record, transcript=[said])) == ""
    other = TranscriptMessage(
        role="assistant",
        tool_calls=[
            TranscriptToolCall(id="1", name="get_ticket", arguments='{"ticket_id": "T-1002"}')
        ],
    )
    assert "call 1" in transcript_mismatch(msgspec.structs.replace(record, transcript=[other]))
    assert "holds 1" in transcript_mismatch(
        msgspec.structs.replace(record, transcript=[said, said])
    )


def test_rows_it_cannot_use_earn_nothing_and_raise_nothing() -> None:
    done = completion(
        run_script(
            hw.load_world("helpdesk"),
            {t.id: t for t in hw.load_tasks("helpdesk")}[SOLVE],
            load_oracles("helpdesk")[SOLVE],
            seed=sample_seed(0, SOLVE, 0),
        )
    )
    assert reward(
        [done, done, done, done], [SOLVE, "no.such", SOLVE, SOLVE], [0, 0, -1, True], **REVIEWED
    ) == [
        1.0,
        0.0,
        0.0,
        0.0,
    ]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_tool_call = st.fixed_dictionaries(
    {"id": st.text(max_size=5), "type": st.just("function")},
    optional={
        "function": st.fixed_dictionaries(
            {"name": st.sampled_from(["get_ticket", "update_ticket", "finish", "nope", ""])},
            optional={"arguments": st.text(max_size=40) | _json},
        )
    },
)
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["assistant", "user", "tool", "system", "other"])},
    optional={
        "content": st.text(max_size=80) | _json,
        "tool_calls": st.lists(_tool_call, max_size=3) | _json,
    },
)
_completion = st.text(max_size=200) | st.lists(_message | _json, max_size=8) | _json


@settings(max_examples=examples(100, 2000))
@given(done=_completion)
def test_any_completion_gets_a_reward_in_zero_to_one_and_nothing_raises(done: object) -> None:
    [paid] = reward([done], [SOLVE], [0], **REVIEWED)
    [partial] = coverage_reward([done], [SOLVE], [0], **REVIEWED)
    assert paid in (0.0, 1.0) and 0.0 <= partial <= 1.0


@pytest.mark.parametrize("task", ["inventory.count_legacy_peripherals", "helpdesk.security_count"])
def test_a_final_message_of_thousands_of_digits_earns_nothing_and_raises_nothing(task: str) -> None:
    """The answer reader skips a digit run no answer has (Python cannot read past 4,300)."""
    for text in ("9" * 200_000, "The count is " + "1" * 5_000 + "."):
        assert reward([text], [task], [0]) == [0.0]
        assert coverage_reward([text], [task], [0]) == [0.0]
