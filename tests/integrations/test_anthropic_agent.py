"""The Anthropic Messages API agent against a loopback fake: tool loop, retries, metering, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.integrations.anthropic import AnthropicAgent
from harness_world.running import drive
from harness_world.running.rundir import load_manifest
from tests.conftest import requires
from tests.integrations.fake_anthropic import fake_anthropic, scripted_brain

pytestmark = [
    pytest.mark.integrations,
    requires("anthropic", "the Anthropic agent needs the [anthropic] extra"),
]


def task(task_id: str) -> hw.Task:
    return {t.id: t for t in hw.load_tasks()}[task_id]


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


def test_tool_loop_to_a_pass_with_one_529_retried_and_counted(small: hw.World) -> None:
    with fake_anthropic(reply_and_solve_brain(), fail_first=1) as server:  # type: ignore[arg-type]
        agent = AnthropicAgent(
            model="fake-claude",
            base_url=server["base_url"],
            price_in_per_mtok=3.0,
            price_out_per_mtok=15.0,
        )
        record = drive(agent, hw.Attempt(small, task("helpdesk.reply_and_solve")))
        requests = list(server["requests"])
    assert len(requests) == 5  # one 529, retried by the driver, then four turns
    assert set(server["paths"]) == {"/v1/messages"}
    first = requests[0]
    assert first["tools"][0].keys() == {"name", "description", "input_schema"}
    assert first["system"] == agent.system_prompt and first["max_tokens"] == agent.max_tokens
    assert "temperature" not in first  # left to the API unless set
    # tool results go back as a user turn of tool_result blocks, paired by id
    last = requests[-1]["messages"]
    assert [m["role"] for m in last] == ["user"] + ["assistant", "user"] * 3
    assert last[-1]["content"][0]["type"] == "tool_result"
    assert last[-1]["content"][0]["tool_use_id"] == last[-2]["content"][0]["id"]
    assert record.outcome.status == "completed" and record.final_message == "Replied and solved."
    assert record.usage.requests == 5 and record.usage.retries == 1 and record.usage.turns == 4
    # metering: every prompt token (the fake reports 5 cache-read tokens per answer) at the input
    # price, every output token at the output price, summed over the four answered requests
    answered = requests[1:]
    expected_in = sum(
        (len(json.dumps(r["messages"])) + len(r["system"])) // 4 + 5 for r in answered
    )
    assert record.usage.input_tokens == expected_in and record.usage.output_tokens == 80
    assert record.usage.cost == pytest.approx((expected_in * 3.0 + 80 * 15.0) / 1e6)
    assert record.usage.uncertain_cost == 0
    verdict = hw.verify(record, world=small, task=task("helpdesk.reply_and_solve"))
    assert verdict.evidence == "verified" and verdict.grade is not None and verdict.grade.passed
    # the transcript: the system prompt, the instruction, then each turn; one tool message per
    # tool_result block, answering the recorded calls in order
    said = record.transcript
    assert isinstance(said, list) and said[0].role == "system"
    assert said[0].content == agent.system_prompt
    asked = [c for m in said if m.role == "assistant" for c in m.tool_calls]
    assert [c.name for c in asked] == [c.tool for c in record.calls]
    answers = [m for m in said if m.role == "tool"]
    assert [m.tool_call_id for m in answers] == [c.id for c in asked]
    assert [m.after_call for m in answers] == [1, 2, 3]
    assert json.loads(asked[0].arguments) == record.calls[0].args
    assert record.usage.models == [requests[-1]["model"]]


def test_gives_up_after_its_retries_and_a_client_error_is_not_retried(small: hw.World) -> None:
    with fake_anthropic(reply_and_solve_brain(), fail_first=10) as server:  # type: ignore[arg-type]
        agent = AnthropicAgent(model="m", base_url=server["base_url"], max_retries=2)
        record = drive(agent, hw.Attempt(small, task("helpdesk.reply_and_solve")))
        assert len(server["requests"]) == 3
    # the provider failed, not the agent: not counted (issue 11), retried by `run --retries`
    assert record.outcome.status == "infrastructure" and "HTTP 529" in record.outcome.reason
    assert record.usage.requests == 3 and record.usage.retries == 2

    with fake_anthropic(reply_and_solve_brain(), fail_first=1, fail_status=400) as server:  # type: ignore[arg-type]
        agent = AnthropicAgent(model="m", base_url=server["base_url"], max_retries=2)
        record = drive(agent, hw.Attempt(small, task("helpdesk.reply_and_solve")))
        assert len(server["requests"]) == 1
    assert record.outcome.status == "infrastructure" and "HTTP 400" in record.outcome.reason
    assert record.usage.retries == 0


def test_lost_response_keeps_its_reservation_as_uncertain(small: hw.World) -> None:
    # nothing listens on this port: every request is a connection error (a lost response)
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    agent = AnthropicAgent(
        model="m",
        base_url=f"http://127.0.0.1:{port}",
        max_retries=1,
        price_in_per_mtok=3.0,
        price_out_per_mtok=15.0,
        timeout_s=2.0,
    )
    record = drive(agent, hw.Attempt(small, task("helpdesk.reply_and_solve")))
    assert record.outcome.status == "infrastructure" and record.usage.requests == 2
    assert record.usage.cost == 0 and record.usage.uncertain_cost > 2 * 1024 * 15.0 / 1e6


def test_typed_tool_errors_reach_the_model_as_error_results(small: hw.World) -> None:
    brain = scripted_brain([[("get_ticket", {"ticket_id": 5})], "giving up"])
    with fake_anthropic(brain) as server:
        record = drive(
            AnthropicAgent(model="m", base_url=server["base_url"]),
            hw.Attempt(small, task("helpdesk.reply_and_solve")),
        )
        result = server["requests"][-1]["messages"][-1]["content"][0]
    assert result["is_error"] is True
    assert json.loads(result["content"])["error"]["kind"] == "invalid_arguments"
    assert record.calls[0].error is not None and record.calls[0].error.kind == "invalid_arguments"
    assert hw.verify(record, world=small).evidence == "verified"


def test_run_command_drives_the_anthropic_agent_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness_world.cli import main

    with fake_anthropic(reply_and_solve_brain(), fail_first=1) as server:  # type: ignore[arg-type]
        code = main(
            [
                "run",
                "--world",
                "helpdesk",
                "--tasks",
                "helpdesk.reply_and_solve",
                "--agent",
                "anthropic",
                "--model",
                "fake-claude",
                "--base-url",
                server["base_url"],
                "--samples",
                "2",
                "--out",
                str(tmp_path / "run"),
                "--json",
            ]
        )
        assert code == 0 and len(server["requests"]) == 9
    summary = json.loads(capsys.readouterr().out)
    assert summary["counts"]["valid"] == 2
    assert summary["counts"]["passed"] + summary["counts"]["pending"] == 2
    manifest = load_manifest(tmp_path / "run")
    assert manifest.revision.values["agent"]["kind"] == "anthropic"
    retried = [hw.load_record(p) for p in sorted((tmp_path / "run" / "records").rglob("*.json"))]
    assert sum(r.usage.retries for r in retried) == 1
    assert main(["verify", str(tmp_path / "run"), "--require-pass"]) == 0


def test_run_command_anthropic_needs_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    from harness_world.cli import main

    assert main(["run", "--world", "helpdesk", "--agent", "anthropic"]) == 2
    assert "--agent anthropic needs --model" in capsys.readouterr().err


def test_the_async_client_records_what_the_sync_one_does(tmp_path: Path) -> None:
    import msgspec

    from harness_world.integrations.anthropic import AsyncAnthropicAgent

    tasks = [task("helpdesk.reply_and_solve")]
    with fake_anthropic(reply_and_solve_brain()) as server:  # type: ignore[arg-type]
        config = AnthropicAgent(model="m", base_url=server["base_url"], price_in_per_mtok=3.0)
        sync = hw.run(tasks, config, samples=3, out=tmp_path / "sync")
        concurrent = hw.run(
            tasks,
            AsyncAnthropicAgent(config),
            samples=3,
            out=tmp_path / "async",
            executor=hw.Concurrent(3),
        )
    assert sync.revision == concurrent.revision
    assert concurrent.counts.passed + concurrent.counts.pending == 3
    for sample in range(3):
        name = Path("records") / "helpdesk.reply_and_solve" / f"{sample}.json"
        a, b = hw.load_record(tmp_path / "sync" / name), hw.load_record(tmp_path / "async" / name)
        blank = hw.evidence.RecordContext()
        assert msgspec.json.encode(msgspec.structs.replace(a, context=blank)) == (
            msgspec.json.encode(msgspec.structs.replace(b, context=blank))
        )
