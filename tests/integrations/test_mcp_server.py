"""The MCP server, driven by the official SDK's own client over stdio (a real subprocess)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.grading.briefing import briefing
from harness_world.running import RevisionMismatch
from harness_world.running.rundir import scan_run

pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra")
import anyio
from mcp import Client, StdioServerParameters

from harness_world.mcp_server import AttemptServer, AttemptTarget, plan_run

ROOT = Path(__file__).resolve().parents[2]
TASK = "helpdesk.reply_and_solve"
SOLVE = [
    ("get_ticket", {"ticket_id": "T-1001"}),
    ("add_comment", {"ticket_id": "T-1001", "body": "The outage is fixed.", "public": True}),
    ("update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
]


def task(task_id: str = TASK) -> hw.Task:
    return {t.id: t for t in hw.load_tasks()}[task_id]


def server(*args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "harness_world",
            "mcp",
            "--world",
            "helpdesk",
            "--task",
            TASK,
            "--reveal-grade",
            *args,
        ],
        env={"PYTHONPATH": str(ROOT)},
        cwd=str(ROOT),
    )


def structured(result: Any) -> dict[str, Any]:
    content = json.loads(result.content[0].text)
    assert content == result.structured_content
    return content


def test_sdk_client_solves_the_task_and_the_saved_record_verifies(tmp_path: Path) -> None:
    record_file = tmp_path / "r.json"

    async def session() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with Client(server("--record", str(record_file))) as client:
            seen["instructions"] = client.instructions
            listed = await client.list_tools()
            seen["tools"] = {t.name: t for t in listed.tools}
            prompt = await client.get_prompt("task")
            seen["prompt"] = prompt.messages[0].content.text
            bad = await client.call_tool("get_ticket", {"ticket_id": 5})
            seen["bad"] = (bad.is_error, structured(bad))
            for name, args in SOLVE:
                result = await client.call_tool(name, args)
                assert not result.is_error, result
            done = await client.call_tool("finish", {"message": "Replied and solved."})
            seen["finish"] = (done.is_error, structured(done))
            after = await client.call_tool("get_ticket", {"ticket_id": "T-1001"})
            seen["after"] = (after.is_error, structured(after))
        return seen

    seen = anyio.run(session)
    # what `play` states: the instruction with its budgets and how an answer is read
    assert seen["instructions"] == briefing(task()) == seen["prompt"]
    assert task().instruction in seen["instructions"] and "budget" in seen["instructions"]
    world = hw.load_world("helpdesk")
    assert set(seen["tools"]) == {t.name for t in world.contract.tools} | {"finish"}
    schemas = {s["name"]: s for s in hw.tool_schemas(world, format="mcp")}
    assert seen["tools"]["get_ticket"].input_schema == schemas["get_ticket"]["inputSchema"]
    assert seen["tools"]["get_ticket"].annotations.read_only_hint is True
    assert seen["tools"]["update_ticket"].annotations.read_only_hint is False
    is_error, content = seen["bad"]
    assert is_error and content["error"]["kind"] == "invalid_arguments" and content["seq"] == 1
    is_error, summary = seen["finish"]
    assert not is_error and summary["outcome"] == "completed"
    assert summary["evidence"] == "verified" and summary["grade"] == "passed"
    assert summary["record"] == str(record_file) and summary["remaining"] == 0
    is_error, content = seen["after"]
    assert is_error and content["error"]["kind"] == "ended"

    record = hw.load_record(record_file)
    assert [c.tool for c in record.calls] == ["get_ticket", *(n for n, _ in SOLVE)]
    assert record.final_message == "Replied and solved."
    result = hw.verify(record, task=task())
    assert result.evidence == "verified" and result.grade is not None and result.grade.passed
    from harness_world.cli import main

    assert main(["verify", str(record_file), "--require-pass"]) == 0


def test_disconnect_mid_attempt_saves_an_interrupted_record_that_verifies(tmp_path: Path) -> None:
    record_file = tmp_path / "r.json"

    async def session() -> None:
        async with Client(server("--record", str(record_file))) as client:
            await client.call_tool(*SOLVE[0])
            await client.call_tool(*SOLVE[1])
        # leaving the block closes the server's stdin: the client has gone

    anyio.run(session)
    record = hw.load_record(record_file)
    assert record.outcome.status == "interrupted"
    assert record.outcome.reason == "client disconnected" and len(record.calls) == 2
    result = hw.verify(record, task=task())
    assert result.evidence == "verified"


def test_samples_into_a_run_directory_then_resume_after_a_disconnect(tmp_path: Path) -> None:
    out = tmp_path / "run"

    async def first() -> list[dict[str, Any]]:
        answers = []
        async with Client(server("--samples", "3", "--out", str(out))) as client:
            for _ in range(2):
                for name, args in SOLVE:
                    await client.call_tool(name, args)
                answers.append(structured(await client.call_tool("finish", {"message": "ok"})))
            await client.call_tool(*SOLVE[0])  # the third attempt, abandoned
        return answers

    answers = anyio.run(first)
    assert [a["sample"] for a in answers] == [0, 1] and answers[0]["remaining"] == 2
    assert all(a["grade"] == "passed" for a in answers) and "next" in answers[0]
    records = out / "records" / TASK
    assert hw.load_record(records / "2.json").outcome.status == "interrupted"
    inventory = scan_run(out).counts
    assert inventory.valid == 2 and inventory.invalid == 1 and inventory.passed == 2

    async def resume() -> dict[str, Any]:
        async with Client(server("--samples", "3", "--out", str(out))) as client:
            for name, args in SOLVE:
                await client.call_tool(name, args)
            return structured(await client.call_tool("finish", {"message": "ok"}))

    last = anyio.run(resume)
    assert last["sample"] == 2 and last["grade"] == "passed" and last["remaining"] == 0
    assert (records / "2.interrupted-1.json").is_file()
    inventory = scan_run(out).counts
    assert inventory.valid == 3 and inventory.passed == 3 and inventory.missing == 0
    seeds = {hw.load_record(records / f"{i}.json").seed for i in range(3)}
    assert len(seeds) == 3  # each sample its own seed, as in `run`
    from harness_world.cli import main

    assert main(["verify", str(out)]) == 0  # every file verifies, the set-aside one included
    finals = [str(records / f"{i}.json") for i in range(3)]
    assert main(["verify", *finals, "--require-pass"]) == 0
    assert main(["report", str(out), "--json"]) == 0


def test_budget_hit_seals_the_record_as_budget_limit(tmp_path: Path) -> None:
    record_file = tmp_path / "r.json"

    async def session() -> dict[str, Any]:
        async with Client(server("--record", str(record_file), "--tool-calls", "1")) as client:
            await client.call_tool(*SOLVE[0])
            over = await client.call_tool(*SOLVE[1])
            assert over.is_error
            return structured(over)

    content = anyio.run(session)
    assert content["error"]["kind"] == "budget_limit" and content["outcome"] == "budget_limit"
    record = hw.load_record(record_file)
    assert record.outcome.status == "budget_limit" and len(record.calls) == 1
    result = hw.verify(record, task=task())
    assert result.evidence == "verified" and result.grade is not None and not result.grade.passed


def test_attempt_server_without_the_protocol(tmp_path: Path) -> None:
    world = hw.load_world("helpdesk")
    state = AttemptServer(
        world=world,
        task=task(),
        targets=[AttemptTarget(sample=0, seed=0, path=str(tmp_path / "r.json"))],
    )
    assert state.close("nothing started") is None  # no call yet: nothing to seal
    answer = state.call("no_such_tool", {})
    assert answer.is_error and answer.content["error"]["kind"] == "unknown_tool"
    saved = state.close("stopped")
    assert saved is not None and saved.outcome == "interrupted" and saved.evidence == "verified"
    assert state.close("again") is None and state.done


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from harness_world.cli import main

    base = ["mcp", "--world", "helpdesk"]
    assert main([*base, "--task", "nope"]) == 2
    assert "--task 'nope' is not a task of helpdesk" in capsys.readouterr().err
    assert main([*base, "--task", TASK, "--samples", "2"]) == 2
    assert "--samples and --out go together" in capsys.readouterr().err
    assert main([*base, "--task", TASK, "--samples", "0", "--out", str(tmp_path)]) == 2
    assert "--samples must be at least 1" in capsys.readouterr().err


def test_a_changed_revision_refuses_to_resume(tmp_path: Path) -> None:
    world = hw.load_world("helpdesk")
    plan_run(world, task(), samples=2, out=tmp_path / "run")
    with pytest.raises(RevisionMismatch):
        plan_run(world, task(), samples=3, out=tmp_path / "run")


def test_sigterm_mid_attempt_saves_an_interrupted_record(tmp_path: Path) -> None:
    """A client that kills the server (the SDK does after a grace period) still leaves evidence."""
    import signal
    import subprocess

    record_file = tmp_path / "r.json"
    params = server("--record", str(record_file))
    proc = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=params.env,
        cwd=params.cwd,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        proc.stdin.flush()

    try:
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert json.loads(proc.stdout.readline())["id"] == 1
        send({"method": "notifications/initialized"})
        name, args = SOLVE[0]
        send({"id": 2, "method": "tools/call", "params": {"name": name, "arguments": args}})
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 2 and reply["result"]["isError"] is False
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    record = hw.load_record(record_file)
    assert record.outcome.status == "interrupted" and record.outcome.reason == "server terminated"
    assert len(record.calls) == 1
    assert hw.verify(record, task=task()).evidence == "verified"


def _authorised(url: str, token: str) -> Any:
    """A streamable HTTP transport that sends the server's bearer token."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return streamable_http_client(url, http_client=http)


def test_streamable_http_on_loopback(tmp_path: Path) -> None:
    import signal
    import subprocess

    out = tmp_path / "run"
    params = server("--transport", "http", "--samples", "2", "--out", str(out))
    proc = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=params.env,
        cwd=params.cwd,
        text=True,
    )
    assert proc.stderr is not None
    try:
        announced = json.loads(proc.stderr.readline())
        url, token = announced["url"], announced["token"]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

        async def session() -> dict[str, Any]:
            # announced once listening: the first connection is served, with no retry
            async with Client(_authorised(url, token)) as client:
                assert client.instructions == briefing(task())
                for name, args in SOLVE:
                    assert not (await client.call_tool(name, args)).is_error
                done = structured(await client.call_tool("finish", {"message": "ok"}))
            async with Client(_authorised(url, token)) as again:  # a new connection continues
                await again.call_tool(*SOLVE[0])
            return done

        done = anyio.run(session)
        assert done["grade"] == "passed" and done["remaining"] == 1
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    records = out / "records" / TASK
    first, second = (hw.load_record(records / f"{i}.json") for i in range(2))
    assert first.outcome.status == "completed"
    assert second.outcome.status == "interrupted" and second.outcome.reason == "server stopped"
    assert len(second.calls) == 1
    assert hw.verify(second, task=task()).evidence == "verified"


def test_finish_keeps_the_grade_from_the_client_unless_asked(tmp_path: Path) -> None:
    """A client told its grade carries it into the next sample: by default finish says only
    what was saved and whether it replays; the operator's summary keeps the grade."""
    state = AttemptServer(
        world=hw.load_world("helpdesk"),
        task=task(),
        targets=[AttemptTarget(sample=0, seed=0, path=str(tmp_path / "r.json"))],
    )
    state.call("get_ticket", {"ticket_id": "T-1001"})
    reply = state.call("finish", {"message": "done"}).content
    assert reply["evidence"] == "verified" and "grade" not in reply and "failed" not in reply
    assert "--reveal-grade" in reply["graded"]
    assert state.saved[0].grade in ("passed", "failed")  # the operator still has it
