"""The user channel on τ² tasks: scripted and model users, the OpenAI agent, τ² observation mode.

The data (and, for τ² mode, τ²'s code) is read from the shared copy; tests are skipped with
the reason when it is absent.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.evidence import UserTurn, load_record, record_digest, replay
from harness_world.grading import grade
from harness_world.integrations.openai import OpenAIAgent
from harness_world.running.agents import drive
from harness_world.running.attempt import Attempt
from harness_world.running.user import GREETING, STOP
from harness_world.tau2 import ImportedTask, importer
from harness_world.tau2.conversation import run_conversations
from harness_world.tau2.faithful import Tau2Shape
from harness_world.tau2.scripted_user import NAME_IT, NO, YES
from harness_world.tau2.users import ConversationalOracle, OpenAIUser, ScriptedUser, Tau2View
from tests.conftest import TAU2_DATA, Cli
from tests.fake_openai import fake_openai, tool_call
from tests.tau2.reference import needs_tau2, tau2_env, tau2_source

pytestmark = [
    pytest.mark.tau2,
    pytest.mark.skipif(
        not (TAU2_DATA / "db.json").is_file() or not (TAU2_DATA / "tasks_train.json").is_file(),
        reason=f"τ² retail data not found in {TAU2_DATA}",
    ),
]


@pytest.fixture(scope="module")
def world() -> hw.World:
    return importer.load_world(TAU2_DATA)


@pytest.fixture(scope="module")
def imported(world: hw.World) -> list[ImportedTask]:
    return importer.import_tasks(world, TAU2_DATA / "tasks_train.json")


def test_every_train_task_with_a_scripted_user_and_the_oracle_verifies_and_passes(
    world: hw.World, imported: list[ImportedTask]
) -> None:
    done = run_conversations(
        world,
        imported,
        ConversationalOracle,
        lambda item: ScriptedUser.from_scenario(item.user_scenario, item.gold),
    )
    assert len(done) == 74
    by_id = {item.task.id: item for item in imported}
    for result, record in done:
        assert result.evidence == "verified" and result.passed, result
        assert result.user_stopped and result.user_turns >= 3
        assert record.user_turns[0].agent == GREETING
        reason = record.user_turns[0].user
        assert reason and reason != STOP
        # the oracle authenticates and asks before each write; the user says yes to the gold's
        sheet = grade(record, by_id[result.task_id].task, world)
        assert sheet.policy_failed == [], (result.task_id, sheet.policy_failed)
        assert len(sheet.policy_verdicts) == 3


def test_the_cli_runs_them_and_saves_records(tmp_path: Path, cli: Cli) -> None:
    code, out, err = cli("tau2", "run", "--data", str(TAU2_DATA), "--out", str(tmp_path), "--json")
    assert code == 0, err
    runs = json.loads(out)["runs"]
    assert len(runs) == 74 and all(r["passed"] for r in runs)
    record = load_record(runs[0]["record"])
    assert record.user_turns
    assert replay(record, importer.load_world(TAU2_DATA))[1] == []
    code, _, err = cli("tau2", "run", "--data", str(TAU2_DATA), "--agent", "openai")
    assert code == 2 and "--model" in err
    code, _, err = cli("tau2", "run", "--data", str(TAU2_DATA), "--observations", "tau2")
    assert code == 2 and "--tau2-src" in err


def test_user_turns_are_covered_by_the_digest_and_never_recomputed(
    world: hw.World, imported: list[ImportedTask]
) -> None:
    item = imported[0]
    attempt = Attempt(
        world, item.task, user=ScriptedUser.from_scenario(item.user_scenario, item.gold)
    )
    record = drive(ConversationalOracle(item), attempt)
    assert replay(record, world)[1] == []
    turns = list(record.user_turns)
    turns[1] = msgspec.structs.replace(turns[1], user="I am somebody else.")
    edited = msgspec.structs.replace(record, user_turns=turns)
    assert [m.path for m in replay(edited, world)[1]] == ["digest"]
    assert hw.verify(edited, world=world, task=item.task).evidence == "ungraded"
    # a record without user turns keeps the digest it had before the field existed
    plain = msgspec.structs.replace(record, user_turns=[])
    fields = msgspec.to_builtins(
        msgspec.structs.replace(plain, digest="", context=hw.evidence.RecordContext())
    )
    del fields["user_turns"]
    del fields["faults"]  # null: also left out (no fault schedule)
    del fields["usage"]["lost_requests"]  # zero: left out too
    del fields["usage"]["lost_input_tokens_estimate"]
    del fields["usage"]["models"]  # empty: left out too
    from harness_world.engine.canonical import sha256_hex, to_json

    assert record_digest(plain) == sha256_hex(to_json(fields))


def _talk(user: ScriptedUser) -> Any:
    history: list[UserTurn] = []

    def say(message: str) -> str:
        answer = user.reply(history, message)
        history.append(UserTurn(after_call=0, agent=message, user=answer, stop=STOP in answer))
        return answer

    return say


def _item(imported: list[ImportedTask], tau2_id: str) -> ImportedTask:
    (item,) = [i for i in imported if i.source.endswith(f" #{tau2_id}")]
    return item


def test_the_scripted_user_reveals_its_scenario_only_when_asked(
    imported: list[ImportedTask],
) -> None:
    item = _item(imported, "2")
    scenario = item.user_scenario["instructions"]
    say = _talk(ScriptedUser.from_scenario(item.user_scenario, item.gold))
    opening = say(GREETING)
    assert opening == (
        "I want to know exactly how many tshirt options are available in the online store "
        "right now."
    )
    assert "return" not in opening and "Yusuf" not in opening and "You " not in opening
    assert say("Let me look into that.") == "Okay."  # not a question: nothing more is told
    assert say("Could you give me your name and zip code?") == (
        "I am Yusuf Rossi in zip code 19122. I do not remember my email address."
    )
    assert say("There are 10 t-shirt options. Is there something else you need?") == (
        "I want to also return the cleaner, headphone, and smart watch."
    )
    assert say("Which items exactly?") == "That is all I can tell you."
    assert say("Is there anything else I can help with?") == STOP
    assert scenario["reason_for_call"] not in opening


def test_the_scripted_user_never_says_the_scenarios_conditions(
    imported: list[ImportedTask],
) -> None:
    item = _item(imported, "0")  # "If there is no keyboard that is clicky, ... you'd go for ..."
    user = ScriptedUser.from_scenario(item.user_scenario, item.gold)
    assert len(user.told) == 1 and not any("If " in s or "you'd" in s for s in user.told)
    say = _talk(user)
    said = [say(GREETING), say("Anything more?"), say("Anything else?")]
    assert not any("no backlight" in s for s in said) and said[-1] == STOP


def test_the_scripted_user_refuses_a_cancellation_its_scenario_forbids(
    imported: list[ImportedTask],
) -> None:
    """τ² task 24: the customer asks to cancel the grill, "but if the agent asks you to
    confirm, you regret and want to keep it"; its gold cancels nothing."""
    item = _item(imported, "24")
    assert "regret" in item.user_scenario["instructions"]["reason_for_call"]
    say = _talk(ScriptedUser.from_scenario(item.user_scenario, item.gold))
    assert "cancel the grill" in say(GREETING)
    asked = "I can cancel your pending order #W3561391 (the grill). Shall I proceed (yes/no)?"
    assert say(asked) == NO
    named = 'I will now run cancel_pending_order with {"order_id": "#W3561391"}. Confirm?'
    assert say(named) == NO
    # a request to confirm that names no change is never a yes
    assert say("Please confirm: shall I proceed?") == NAME_IT
    assert say("Do you confirm (yes/no)?") == NAME_IT


def test_the_scripted_user_confirms_only_the_changes_its_gold_makes(
    imported: list[ImportedTask],
) -> None:
    item = _item(imported, "0")  # the gold exchanges items of #W2378156
    user = ScriptedUser.from_scenario(item.user_scenario, item.gold)
    assert user.allowed == (("exchange_delivered_order_items", "#W2378156"),)
    say = _talk(user)
    say(GREETING)
    assert say("Shall I exchange the keyboard and thermostat of order #W2378156?") == YES
    assert say("Should I exchange items of order #W1111111 instead (yes/no)?") == NO
    assert say("Would you like me to cancel order #W2378156?") == NO
    assert say("Do you want me to return the keyboard of #W2378156?") == NO
    # a warning is not a proposal: the question after it is answered from the scenario
    assert say("Order #W2378156 cannot be cancelled. Shall I go ahead with the exchange?") == YES


def test_without_gold_calls_the_scripted_user_agrees_to_no_change() -> None:
    scenario = {"instructions": {"reason_for_call": "You want to cancel order #W1."}}
    user = ScriptedUser.from_scenario(scenario)
    assert user.told == ("I want to cancel order #W1.",)
    say = _talk(user)
    assert say(GREETING) == "I want to cancel order #W1."
    assert say("Shall I cancel order #W1 (yes/no)?") == NO


def _gold_conversation(item: ImportedTask, world: hw.World) -> list[Any]:
    """The gold calls as a model would make them, with confirmations before writes."""
    steps: list[Any] = ["(greeting: sent by the driver)"]
    steps.append("Could you give me your email address, or your name and zip code?")
    for call in item.gold:
        spec = world.contract.tool(call.tool)
        if spec is not None and spec.kind == "write":
            steps.append(f"I will now run {call.tool}. Do you confirm (yes/no)?")
        steps.append([(call.tool, call.args)])
    steps.append("Your request is handled. Is there anything else I can do?")
    return steps


def _replaying_brain(steps: list[Any]) -> Any:
    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        turn = sum(1 for m in messages if m["role"] == "assistant")
        step = steps[min(turn, len(steps) - 1)]
        if isinstance(step, str):
            return {"role": "assistant", "content": step}
        calls = [tool_call(turn * 10 + i, name, args) for i, (name, args) in enumerate(step)]
        return {"role": "assistant", "content": None, "tool_calls": calls}

    return brain


@needs_tau2
def test_openai_agent_replaying_the_gold_conversation_passes_in_tau2_mode(
    world: hw.World, imported: list[ImportedTask]
) -> None:
    source = tau2_source()
    env: Any = tau2_env()
    view = Tau2View(
        shape=Tau2Shape.from_data(world, TAU2_DATA / "db.json"), schemas=source.tool_schemas(env)
    )
    passed = 0
    for item in imported[:12]:
        with fake_openai(_replaying_brain(_gold_conversation(item, world))) as server:
            agent = OpenAIAgent(model="fake", base_url=server["base_url"])
            attempt = Attempt(
                world,
                item.task,
                user=ScriptedUser.from_scenario(item.user_scenario, item.gold),
                view=view,
            )
            record = drive(agent, attempt)
        checked = hw.verify(record, world=world, task=item.task)
        assert checked.evidence == "verified" and checked.grade is not None, checked.reason
        assert checked.grade.passed, (item.task.id, checked.grade.failed)
        passed += 1
        request = server["requests"][-1]
        assert request["tools"] == source.tool_schemas(env)  # τ²'s own descriptions
        # every tool message is τ²'s string for the same call on τ²'s side
        tau2 = tau2_env()
        tool_messages = [m for m in request["messages"] if m["role"] == "tool"]
        for call, message in zip(item.gold, tool_messages, strict=True):
            assert message["content"] == source.call(tau2, call.tool, call.args).content
        assert record.user_turns[-1].stop
    assert passed == 12


def test_openai_agent_over_every_train_task_with_a_scripted_user(
    world: hw.World, imported: list[ImportedTask]
) -> None:
    """Every train task: one fake server, whose brain replays the current task's conversation."""
    current: dict[str, Any] = {}

    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        reply: dict[str, Any] = current["brain"](messages)
        return reply

    with fake_openai(brain) as server:
        agent = OpenAIAgent(model="fake", base_url=server["base_url"])
        for item in imported:
            current["brain"] = _replaying_brain(_gold_conversation(item, world))
            user = ScriptedUser.from_scenario(item.user_scenario, item.gold)
            record = drive(agent, Attempt(world, item.task, user=user))
            checked = hw.verify(record, world=world, task=item.task)
            assert checked.grade is not None and checked.grade.passed, item.task.id
            assert record.user_turns[-1].stop


def test_a_model_user_over_the_loopback_fake(world: hw.World, imported: list[ImportedTask]) -> None:
    item = imported[0]
    lines = iter(["I want to exchange two items of order #W2378156.", "I am Yusuf Rossi, 19122."])

    def customer(messages: list[dict[str, Any]]) -> dict[str, Any]:
        assert (
            messages[0]["role"] == "system" and "Why you are contacting" in messages[0]["content"]
        )
        return {"role": "assistant", "content": next(lines, STOP)}

    with fake_openai(customer) as server:
        user = OpenAIUser(scenario=item.user_scenario, model="fake", base_url=server["base_url"])
        record = drive(ConversationalOracle(item), Attempt(world, item.task, user=user))
    assert [t.user for t in record.user_turns][:2] == [
        "I want to exchange two items of order #W2378156.",
        "I am Yusuf Rossi, 19122.",
    ]
    assert record.user_turns[-1].stop
    checked = hw.verify(record, world=world, task=item.task)
    assert checked.grade is not None and checked.grade.passed


def test_play_bridge_talks_to_the_user_and_reports_the_turns(
    tmp_path: Path, world: hw.World, imported: list[ImportedTask]
) -> None:
    from harness_world.running.bridge import serve

    item = imported[0]
    attempt = Attempt(
        world, item.task, user=ScriptedUser.from_scenario(item.user_scenario, item.gold)
    )
    lines = [json.dumps({"user": GREETING}), json.dumps({"user": "Your email or zip, please?"})]
    lines += [json.dumps({"tool": g.tool, "args": g.args}) for g in item.gold]
    lines += [json.dumps({"user": "Anything else?"}), json.dumps({"user": "Hello?"})]
    lines.append(json.dumps({"finish": "Bye."}))
    out = io.StringIO()
    assert serve(attempt, io.StringIO("\n".join(lines)), out, tmp_path / "r.json").user_turns
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[1]["user"].startswith("You received") or answers[1]["user"]
    assert answers[1]["stop"] is False
    stopped = [a for a in answers if a.get("stop")]
    assert len(stopped) == 1 and stopped[0]["user"] == STOP
    assert "the user stopped" in answers[-2]["error"]["message"]
    final = answers[-1]
    assert final["grade"] == "passed" and len(final["user_turns"]) == 3
    assert load_record(tmp_path / "r.json").user_turns[2].stop


def test_tau2_run_runs_a_task_with_the_openai_agent_and_a_model_user(
    tmp_path: Path, world: hw.World, imported: list[ImportedTask], cli: Cli
) -> None:
    raw = json.loads((TAU2_DATA / "tasks_train.json").read_text())[0]
    item = next(i for i in imported if i.task.id == f"tau2_retail.{raw['id']}")
    (tmp_path / "db.json").symlink_to(TAU2_DATA / "db.json")
    (tmp_path / "tasks.json").write_text(json.dumps([raw]))
    (tmp_path / "split_tasks.json").write_text(json.dumps({"train": [raw["id"]]}))
    customer_lines = iter(["I want to exchange two items.", "Yusuf Rossi, 19122.", "yes", "yes"])

    def customer(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"role": "assistant", "content": next(customer_lines, STOP)}

    with (
        fake_openai(_replaying_brain(_gold_conversation(item, world))) as agent_server,
        fake_openai(customer) as user_server,
    ):
        code, out, err = cli(
            "tau2",
            "run",
            "--data",
            str(tmp_path),
            "--agent",
            "openai",
            "--model",
            "fake",
            "--base-url",
            agent_server["base_url"],
            "--user",
            "openai",
            "--user-base-url",
            user_server["base_url"],
            "--out",
            str(tmp_path / "records"),
            "--json",
        )
    assert code == 0, err
    (run,) = json.loads(out)["runs"]
    assert run["passed"] and run["evidence"] == "verified" and run["user_stopped"]
    record = load_record(run["record"])
    assert record.user_turns[0].user == "I want to exchange two items."
