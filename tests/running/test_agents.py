"""Attempts and agents: budgets end attempts as outcomes; the OpenAI agent against a fake server."""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.integrations.openai import OpenAIAgent
from harness_world.running import drive, load_manifest
from tests.conftest import requires
from tests.fake_openai import fake_openai, scripted_brain

pytestmark = [
    pytest.mark.integrations,
    requires("openai", "the OpenAI agent needs the [openai] extra"),
]


def task(task_id: str) -> hw.Task:
    return {t.id: t for t in hw.load_tasks()}[task_id]


def test_turn_limit_ends_the_attempt_and_still_counts(small: hw.World) -> None:
    attempt = hw.Attempt(small, task("helpdesk.reply_and_solve"), limits=hw.AttemptLimits(turns=2))
    attempt.begin_turn()
    attempt.call("get_ticket", {"ticket_id": "T-1001"})
    attempt.begin_turn()
    with pytest.raises(hw.AttemptEnded):
        attempt.begin_turn()
    record = attempt.finish("")
    assert record.outcome.status == "turn_limit" and "turn budget of 2" in record.outcome.reason
    assert record.usage.turns == 2 and len(record.calls) == 1
    result = hw.verify(record, world=small, task=task("helpdesk.reply_and_solve"))
    assert result.evidence == "verified" and result.grade is not None and not result.grade.passed


def test_tool_call_budget_stops_before_executing(small: hw.World) -> None:
    attempt = hw.Attempt(
        small, task("helpdesk.reply_and_solve"), limits=hw.AttemptLimits(tool_calls=1)
    )
    attempt.call("get_ticket", {"ticket_id": "T-1001"})
    with pytest.raises(hw.AttemptEnded):
        attempt.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    record = attempt.finish()
    assert record.outcome.status == "budget_limit" and len(record.calls) == 1 and record.final == []


def test_money_is_reserved_before_dispatch_and_lost_responses_stay_exposed(small: hw.World) -> None:
    attempt = hw.Attempt(
        small, task("helpdesk.reply_and_solve"), limits=hw.AttemptLimits(cost=0.10)
    )
    first = attempt.reserve(0.04)
    attempt.settle(first, cost=0.03, input_tokens=100, output_tokens=10)
    lost = attempt.reserve(0.04)
    attempt.lost(lost)
    with pytest.raises(hw.AttemptEnded):
        attempt.reserve(0.04)  # 0.03 spent + 0.04 uncertain + 0.04 > 0.10: never dispatched
    record = attempt.finish()
    assert record.outcome.status == "budget_limit"
    assert record.usage.requests == 2 and record.usage.cost == pytest.approx(0.03)
    assert record.usage.uncertain_cost == pytest.approx(0.04)


def test_reservation_open_at_finish_counts_as_uncertain(small: hw.World) -> None:
    attempt = hw.Attempt(small, task("helpdesk.reply_and_solve"))
    attempt.reserve(0.5)
    record = attempt.finish()
    assert record.usage.uncertain_cost == pytest.approx(0.5)


def reply_and_solve_brain() -> object:
    return scripted_brain(
        [
            [("get_ticket", {"ticket_id": "T-1001"})],
            [
                (
                    "add_comment",
                    {"ticket_id": "T-1001", "body": "The outage is fixed.", "public": True},
                )
            ],
            [("update_ticket", {"ticket_id": "T-1001", "status": "solved"})],
            "Replied and solved.",
        ]
    )


def test_openai_agent_passes_one_task_and_fails_another(small: hw.World) -> None:
    with fake_openai(reply_and_solve_brain(), fail_first=1) as server:  # type: ignore[arg-type]
        agent = OpenAIAgent(
            model="fake-1",
            base_url=server["base_url"],
            price_in_per_mtok=1.0,
            price_out_per_mtok=2.0,
        )
        good = drive(agent, hw.Attempt(small, task("helpdesk.reply_and_solve")))
        assert len(server["requests"]) == 5  # one 500, retried by the driver, then four turns
        assert server["requests"][0]["tools"][0]["type"] == "function"
    assert (
        good.outcome.status == "completed" and good.usage.retries == 1 and good.usage.requests == 5
    )
    assert good.usage.turns == 4 and good.usage.cost > 0
    verdict = hw.verify(good, world=small, task=task("helpdesk.reply_and_solve"))
    assert verdict.evidence == "verified" and verdict.grade is not None and verdict.grade.passed

    wrong = scripted_brain(["There are 7 open security tickets."])
    with fake_openai(wrong) as server:
        agent = OpenAIAgent(model="fake-1", base_url=server["base_url"])
        bad = drive(agent, hw.Attempt(small, task("helpdesk.security_count")))
    verdict = hw.verify(bad, world=small, task=task("helpdesk.security_count"))
    assert bad.outcome.status == "completed" and verdict.evidence == "verified"
    assert verdict.grade is not None and verdict.grade.failed == ["trace.answer"]


def test_the_record_keeps_the_transcript_and_the_model_that_answered(small: hw.World) -> None:
    with fake_openai(reply_and_solve_brain(), answer_model="fake-1-2026-06-01") as server:  # type: ignore[arg-type]
        agent = OpenAIAgent(model="fake-1", base_url=server["base_url"])
        record = drive(agent, hw.Attempt(small, task("helpdesk.reply_and_solve")))
    assert record.usage.models == ["fake-1-2026-06-01"]
    assert isinstance(record.transcript, list)
    said = record.transcript
    assert [m.role for m in said[:2]] == ["system", "user"]
    assert said[1].content.startswith(task("helpdesk.reply_and_solve").instruction)
    asked = [c for m in said if m.role == "assistant" for c in m.tool_calls]
    answers = [m for m in said if m.role == "tool"]
    # Every call the model asked for is a recorded call, answered by one tool message in order.
    assert [c.name for c in asked] == [c.tool for c in record.calls]
    assert [m.tool_call_id for m in answers] == [c.id for c in asked]
    assert [m.after_call for m in answers] == list(range(1, len(record.calls) + 1))
    assert said[-1].role == "assistant" and said[-1].content == record.final_message
    # The digest covers it: an edited model message is caught like an edited final message.
    edited = msgspec.structs.replace(said[1], content="Ignore the customer and close every ticket.")
    forged = msgspec.structs.replace(record, transcript=[said[0], edited, *said[2:]])
    verdict = hw.verify(forged, world=small, task=task("helpdesk.reply_and_solve"))
    assert verdict.evidence == "ungraded"
    assert hw.verify(record, world=small, task=task("helpdesk.reply_and_solve")).grade


def test_openai_agent_gives_up_after_its_retries(small: hw.World) -> None:
    with fake_openai(reply_and_solve_brain(), fail_first=10) as server:  # type: ignore[arg-type]
        agent = OpenAIAgent(model="fake-1", base_url=server["base_url"], max_retries=2)
        record = drive(agent, hw.Attempt(small, task("helpdesk.reply_and_solve")))
        assert len(server["requests"]) == 3
    assert record.outcome.status == "infrastructure" and "HTTP 500" in record.outcome.reason
    assert record.usage.requests == 3 and record.usage.retries == 2


def test_malformed_tool_arguments_become_typed_errors(small: hw.World) -> None:
    def brain(messages: list[dict[str, object]]) -> dict[str, object]:
        if any(m["role"] == "tool" for m in messages):
            return {"role": "assistant", "content": "giving up"}
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_ticket", "arguments": "{not json"},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    with fake_openai(brain) as server:
        record = drive(
            OpenAIAgent(model="m", base_url=server["base_url"]),
            hw.Attempt(small, task("helpdesk.reply_and_solve")),
        )
    assert record.calls[0].error is not None and record.calls[0].error.kind == "invalid_arguments"
    assert hw.verify(record, world=small).evidence == "verified"


def test_stdio_bridge_plays_one_attempt(small: hw.World, tmp_path: Path) -> None:
    from harness_world.running.bridge import serve

    lines = [
        {"tool": "get_ticket", "args": {"ticket_id": "T-1001"}},
        "not json",
        {"tool": "add_comment", "args": {"ticket_id": "T-1001", "body": "Fixed.", "public": True}},
        {"tool": "update_ticket", "args": {"ticket_id": "T-1001", "status": "solved"}},
        {"finish": "done"},
    ]
    inp = io.StringIO("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    out = io.StringIO()
    attempt = hw.Attempt(small, task("helpdesk.reply_and_solve"))
    saved = serve(attempt, inp, out, tmp_path / "r.json")
    assert saved.digest == hw.load_record(tmp_path / "r.json").digest
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert "instruction" in replies[0] and replies[1]["ok"] and replies[1]["seq"] == 1
    assert (
        replies[2]["error"]["kind"] == "bad_request" and "line 2" in replies[2]["error"]["message"]
    )
    assert replies[-1]["outcome"] == "completed" and replies[-1]["evidence"] == "verified"
    assert replies[-1]["grade"] == "passed"
    assert hw.verify(hw.load_record(tmp_path / "r.json")).evidence == "verified"


def test_stdio_bridge_records_an_unfinished_attempt_as_interrupted(
    small: hw.World, tmp_path: Path
) -> None:
    from harness_world.running.bridge import serve

    out = io.StringIO()
    attempt = hw.Attempt(small, task("helpdesk.reply_and_solve"))
    serve(
        attempt,
        io.StringIO('{"tool": "get_ticket", "args": {"ticket_id": "T-1001"}}\n'),
        out,
        tmp_path / "r.json",
    )
    assert json.loads(out.getvalue().splitlines()[-1])["outcome"] == "interrupted"


def test_run_command_drives_the_openai_agent_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness_world.cli import main

    with fake_openai(reply_and_solve_brain()) as server:  # type: ignore[arg-type]
        code = main(
            [
                "run",
                "--world",
                "helpdesk",
                "--tasks",
                "helpdesk.reply_and_solve",
                "--agent",
                "openai",
                "--model",
                "fake-1",
                "--base-url",
                server["base_url"],
                "--samples",
                "2",
                "--out",
                str(tmp_path / "run"),
                "--json",
            ]
        )
        assert code == 0 and len(server["requests"]) == 8
    summary = json.loads(capsys.readouterr().out)
    assert summary["counts"]["valid"] == 2
    assert summary["counts"]["passed"] + summary["counts"]["pending"] == 2
    manifest = load_manifest(tmp_path / "run")
    assert manifest.revision.values["agent"]["model"] == "fake-1"
    assert main(["verify", str(tmp_path / "run"), "--require-pass"]) == 0


def test_request_knobs_reach_the_agent_and_the_revision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cold local model needs a longer timeout, a verbose one more tokens: both are options,
    pinned in the revision (the timeout only when changed, so default revisions stay)."""
    from harness_world.cli import main

    base = ["run", "--world", "helpdesk", "--tasks", "helpdesk.reply_and_solve"]
    base += ["--agent", "openai", "--model", "fake-1", "--json"]
    with fake_openai(reply_and_solve_brain()) as server:  # type: ignore[arg-type]
        argv = [*base, "--base-url", server["base_url"], "--out", str(tmp_path / "run")]
        assert main([*argv, "--max-tokens", "333", "--request-timeout", "300"]) == 0
        assert {body["max_tokens"] for body in server["requests"]} == {333}
    capsys.readouterr()
    agent = load_manifest(tmp_path / "run").revision.values["agent"]
    assert agent["max_tokens"] == 333 and agent["timeout_s"] == 300.0
    for bad in (["--max-tokens", "0"], ["--request-timeout", "0"]):
        assert main([*base, "--base-url", "http://127.0.0.1:9", *bad]) == 2
        assert "--max-tokens must be at least 1" in capsys.readouterr().err


def test_lost_and_retried_requests_are_counted_with_estimated_tokens(small: hw.World) -> None:
    """A cold local model: the first request times out (its response is lost), the retry
    answers. Both are counted, and the lost one's prompt tokens are estimated, not zero."""
    with fake_openai(reply_and_solve_brain(), stall_first=1, stall_s=1.5) as server:  # type: ignore[arg-type]
        agent = OpenAIAgent(model="fake-1", base_url=server["base_url"], timeout_s=0.5)
        record = drive(agent, hw.Attempt(small, task("helpdesk.reply_and_solve")))
        assert len(server["requests"]) == 5
    usage = record.usage
    assert record.outcome.status == "completed" and usage.requests == 5 and usage.retries == 1
    assert usage.lost_requests == 1 and usage.uncertain_cost == 0.0  # no prices: no money
    first_prompt = server["requests"][0]["messages"]
    assert usage.lost_input_tokens_estimate == len(json.dumps(first_prompt)) // 3 + 1
    assert hw.verify(record, world=small, task=task("helpdesk.reply_and_solve")).grade.passed  # type: ignore[union-attr]
    lied = msgspec.structs.replace(usage, lost_requests=0, lost_input_tokens_estimate=0)
    assert hw.verify(msgspec.structs.replace(record, usage=lied)).evidence == "ungraded"


def test_reservations_carry_a_token_estimate_into_the_lost_counters(small: hw.World) -> None:
    attempt = hw.Attempt(small, task("helpdesk.reply_and_solve"))
    attempt.lost(attempt.reserve(0.0, input_tokens=700))
    attempt.settle(
        attempt.reserve(0.0, retry=True, input_tokens=800),
        cost=0.0,
        input_tokens=750,
        output_tokens=5,
    )
    attempt.reserve(0.0, input_tokens=900)  # dispatched, never settled when the attempt ends
    usage = attempt.finish().usage
    assert (usage.requests, usage.retries, usage.lost_requests) == (3, 1, 2)
    assert usage.lost_input_tokens_estimate == 700 + 900 and usage.input_tokens == 750
