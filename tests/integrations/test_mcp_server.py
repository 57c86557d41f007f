"""The MCP server, driven by the official SDK's own client over stdio (a real subprocess)."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import harness_world as hw
from harness_world.grading.briefing import TOOL_BUDGETS, briefing
from harness_world.integrations.mcp import AttemptServer, AttemptTarget, plan_run
from harness_world.running import RevisionMismatch
from harness_world.running.reader import RunReader
from tests.conftest import requires

if TYPE_CHECKING:
    from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.integrations, requires("mcp", "the MCP server needs the [mcp] extra")]
# Loaded already by its pytest plugin wherever the extra is installed, so free to import here.
anyio = pytest.importorskip("anyio", reason="the MCP server needs the [mcp] extra")

ROOT = Path(__file__).resolve().parents[2]
TASK = "helpdesk.reply_and_solve"
SOLVE = [
    ("get_ticket", {"ticket_id": "T-1001"}),
    ("add_comment", {"ticket_id": "T-1001", "body": "The outage is fixed.", "public": True}),
    ("update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
]


def task(task_id: str = TASK) -> hw.Task:
    return {t.id: t for t in hw.load_tasks()}[task_id]


def connect(transport: Any, **options: Any) -> Client:
    """The SDK's client, imported when a test connects rather than while collecting."""
    from mcp import Client

    return Client(transport, **options)


def server(*args: str, world: str = "helpdesk", task_id: str = TASK) -> StdioServerParameters:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "harness_world",
            "mcp",
            "--world",
            world,
            "--task",
            task_id,
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
        async with connect(server("--record", str(record_file))) as client:
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
    assert seen["instructions"] == briefing(task(), TOOL_BUDGETS) == seen["prompt"]
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
        async with connect(server("--record", str(record_file))) as client:
            await client.call_tool(*SOLVE[0])
            await client.call_tool(*SOLVE[1])
        # leaving the block closes the server's stdin: the client has gone

    anyio.run(session)
    record = hw.load_record(record_file)
    assert record.outcome.status == "interrupted"
    assert record.outcome.reason == "client disconnected" and len(record.calls) == 2
    result = hw.verify(record, task=task())
    assert result.evidence == "verified"


def test_stdio_serves_one_sample_per_connection_and_the_next_connection_resumes(
    tmp_path: Path,
) -> None:
    """A stdio server is one client connection, so it serves one sample; the next connection
    (a new server process on the same --out) serves the next one, from a fresh world; an
    abandoned sample is that sample's attempt, and a connection that calls nothing takes none."""
    out = tmp_path / "run"
    params = server("--samples", "2", "--out", str(out))

    async def first() -> tuple[dict[str, Any], Any]:
        async with connect(params) as client:
            for name, args in SOLVE:
                await client.call_tool(name, args)
            done = structured(await client.call_tool("finish", {"message": "ok"}))
            return done, await client.call_tool(*SOLVE[0])  # the same conversation again

    done, again = anyio.run(first)
    assert done["sample"] == 0 and done["grade"] == "passed" and done["remaining"] == 1
    assert "start this server again with the same --samples and --out" in done["next"]
    refusal = structured(again)["error"]
    assert again.is_error and refusal["kind"] == "ended"
    assert "1 sample(s) remain: reconnect" in refusal["message"]

    async def abandoned() -> dict[str, Any]:
        async with connect(params) as client:
            return structured(await client.call_tool(*SOLVE[0]))

    async def idle() -> None:
        async with connect(params) as client:
            await client.list_tools()  # no tool call: no attempt begun

    anyio.run(idle)
    assert not (out / "records" / TASK / "1.json").exists()
    fresh = anyio.run(abandoned)  # a new connection: sample 1, from the start world
    assert fresh["seq"] == 1 and fresh["result"]["status"] == "open"
    records = out / "records" / TASK
    assert hw.load_record(records / "1.json").outcome.status == "interrupted"
    inventory = RunReader.of().read(out).counts  # the abandoned attempt counts: graded, failed
    assert inventory.valid == 2 and inventory.passed + inventory.pending == 1
    assert inventory.failed == 1  # an unreviewed reply is pending, not passed

    async def resume() -> Any:
        async with connect(params) as client:
            return await client.call_tool(*SOLVE[0])

    spent = anyio.run(resume)  # sample 1 is never served again
    assert spent.is_error and "nothing is left to serve" in structured(spent)["error"]["message"]
    assert sorted(p.name for p in records.iterdir()) == ["0.json", "1.json"]
    kept = [hw.load_record(records / f"{i}.json") for i in range(2)]
    assert [[c.tool for c in r.calls] for r in kept] == [[n for n, _ in SOLVE], [SOLVE[0][0]]]
    assert len({r.seed for r in kept}) == 2  # each sample its own seed, as in `run`
    from harness_world.cli import main

    assert main(["verify", str(out)]) == 0
    assert main(["verify", str(out), "--require-pass"]) == 1  # the abandoned attempt failed
    assert main(["report", str(out), "--json"]) == 0


def test_budget_hit_seals_the_record_as_budget_limit(tmp_path: Path) -> None:
    record_file = tmp_path / "r.json"

    async def session() -> dict[str, Any]:
        async with connect(server("--record", str(record_file), "--tool-calls", "1")) as client:
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
    plan_run(world, task(), samples=2, out=tmp_path / "run").release()
    with pytest.raises(RevisionMismatch):
        plan_run(world, task(), samples=3, out=tmp_path / "run")
    plan_run(world, task(), samples=2, out=tmp_path / "run").release()  # the refusal let go


def test_a_run_directory_is_served_by_one_server_at_a_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Over stdio each connection is its own process: two at once must not serve one slot."""
    from harness_world.cli import main

    out = tmp_path / "run"
    held = plan_run(hw.load_world("helpdesk"), task(), samples=2, out=out)
    try:
        argv = ["mcp", "--world", "helpdesk", "--task", TASK, "--samples", "2", "--out", str(out)]
        assert main(argv) == 2
        assert "another run is writing here" in capsys.readouterr().err
    finally:
        held.release()


def test_one_session_serves_one_attempt(tmp_path: Path) -> None:
    """The rule without the protocol: a session's calls after its attempt is sealed are refused
    (naming what remains and how to go on), another session's calls wait while one is in flight,
    and a session that ends mid-attempt has had its sample's attempt: the next session gets
    the next sample."""
    state = plan_run(hw.load_world("helpdesk"), task(), samples=2, out=tmp_path / "run")
    state.transport = "http"
    ticket = {"ticket_id": "T-1001"}
    try:
        assert not state.call("get_ticket", ticket, "a").is_error
        busy = state.call("get_ticket", ticket, "b")
        assert busy.is_error and busy.content["error"]["kind"] == "busy"
        assert not state.call("finish", {"message": "done"}, "a").is_error
        refused = state.call("get_ticket", ticket, "a")
        assert refused.is_error and refused.content["error"] == {
            "kind": "ended",
            "message": "this MCP session's attempt (sample 0) is sealed and saved; one session "
            "serves one attempt, so that no sample starts from another's conversation. 1 "
            "sample(s) remain: open a new MCP session (initialize again, same URL and token) "
            "for the next one, which starts in a fresh copy of the world",
        }
        assert [s.sample for s in state.saved] == [0]  # the refusals went into no attempt
        state.call("update_ticket", {**ticket, "status": "solved"}, "b")  # sample 1 for b
        assert state.current is not None and state.current.sample == 1
        cut = state.end_session("b", "client closed its session")
        assert cut is not None and cut.outcome == "interrupted" and state.remaining == 0
        again = state.call("get_ticket", ticket, "c")  # sample 1 is not served again
        assert again.is_error and again.content["error"]["kind"] == "ended"
        assert state.current is None and [s.sample for s in state.saved] == [0, 1]
        records = tmp_path / "run" / "records" / TASK
        assert sorted(p.name for p in records.iterdir()) == ["0.json", "1.json"]
        assert state.end_session("a", "closed") is None  # a spent session holds nothing
    finally:
        state.release()


def test_sigterm_mid_attempt_saves_an_interrupted_record(tmp_path: Path) -> None:
    """A client that kills the server (the SDK does after a grace period) still leaves evidence."""
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


def _authorised(url: str, token: str, *, terminate_on_close: bool = True) -> Any:
    """A streamable HTTP transport that sends the server's bearer token."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return streamable_http_client(url, http_client=http, terminate_on_close=terminate_on_close)


@contextlib.contextmanager
def http_server(*args: str, **which: str) -> Iterator[tuple[str, str]]:
    """An ``mcp --transport http`` process: its (url, token); stopped with SIGTERM after.

    ``which`` names another ``world`` and ``task_id`` than the default, as for `server`.
    """
    params = server("--transport", "http", *args, **which)
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
        yield url, token
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_http_serves_each_sample_to_a_fresh_session(tmp_path: Path) -> None:
    """Two SDK client sessions, each its own sample: the first is refused once it has finished,
    the second starts from the start world although the first solved the ticket."""
    out = tmp_path / "run"
    with http_server("--samples", "2", "--out", str(out)) as (url, token):

        async def sessions() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            # announced once listening: the first connection is served, with no retry
            async with connect(_authorised(url, token)) as first:
                assert first.instructions == briefing(task(), TOOL_BUDGETS)
                for name, args in SOLVE:
                    assert not (await first.call_tool(name, args)).is_error
                seen["done"] = structured(await first.call_tool("finish", {"message": "ok"}))
                async with connect(_authorised(url, token)) as second:
                    seen["fresh"] = structured(await second.call_tool(*SOLVE[0]))
                    seen["refused"] = await first.call_tool(*SOLVE[0])
                    for name, args in SOLVE[1:]:
                        assert not (await second.call_tool(name, args)).is_error
                    seen["last"] = structured(await second.call_tool("finish", {"message": "ok"}))
                    seen["spent"] = await first.call_tool(*SOLVE[0])
            return seen

        seen = anyio.run(sessions)
    done, last = seen["done"], seen["last"]
    assert done["sample"] == 0 and done["grade"] == "passed" and done["remaining"] == 1
    assert "open a new MCP session" in done["next"]
    assert seen["fresh"]["seq"] == 1 and seen["fresh"]["result"]["status"] == "open"
    assert seen["refused"].is_error
    refusal = structured(seen["refused"])["error"]
    assert refusal["kind"] == "ended" and "(sample 0) is sealed" in refusal["message"]
    assert "1 sample(s) remain: open a new MCP session" in refusal["message"]
    assert last["sample"] == 1 and last["grade"] == "passed" and last["remaining"] == 0
    spent = structured(seen["spent"])["error"]
    assert spent["kind"] == "ended" and "nothing is left to serve" in spent["message"]
    records = out / "records" / TASK
    kept = [hw.load_record(records / f"{i}.json") for i in range(2)]
    assert [r.outcome.status for r in kept] == ["completed", "completed"]
    assert [[c.tool for c in r.calls] for r in kept] == [[n for n, _ in SOLVE]] * 2
    assert [c.seq for c in kept[1].calls] == [1, 2, 3]
    inventory = RunReader.of().read(out).counts
    assert inventory.valid == 2 and inventory.passed + inventory.pending == 2
    assert inventory.missing == 0  # an unreviewed reply is pending, not passed


def test_http_serves_one_attempt_at_a_time_and_a_closed_session_is_its_samples_attempt(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    with http_server("--samples", "3", "--out", str(out)) as (url, token):

        async def sessions() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            async with connect(_authorised(url, token)) as waiting:
                async with connect(_authorised(url, token)) as first:
                    await first.call_tool(*SOLVE[0])
                    seen["busy"] = await waiting.call_tool(*SOLVE[0])
                # `first` closed its session mid-attempt: sample 0 is its attempt, sealed
                seen["fresh"] = structured(await waiting.call_tool(*SOLVE[0]))
                for name, args in SOLVE[1:]:
                    await waiting.call_tool(name, args)
                seen["done"] = structured(await waiting.call_tool("finish", {"message": "ok"}))
            async with connect(_authorised(url, token), mode="2026-07-28") as sessionless:
                seen["sessionless"] = await sessionless.call_tool(*SOLVE[0])
            # a client that vanishes without closing: its attempt stays open until the stop
            async with connect(_authorised(url, token, terminate_on_close=False)) as gone:
                await gone.call_tool(*SOLVE[0])
            return seen

        seen = anyio.run(sessions)
    busy = structured(seen["busy"])["error"]
    assert seen["busy"].is_error and busy["kind"] == "busy" and "sample 0" in busy["message"]
    assert seen["fresh"]["seq"] == 1 and seen["fresh"]["result"]["status"] == "open"
    assert seen["done"]["sample"] == 1 and seen["done"]["remaining"] == 1
    sessionless = structured(seen["sessionless"])["error"]
    assert sessionless["kind"] == "no_session" and "initialize" in sessionless["message"]
    records = out / "records" / TASK
    assert sorted(p.name for p in records.iterdir()) == ["0.json", "1.json", "2.json"]
    cut, served, stopped = (hw.load_record(records / f"{i}.json") for i in range(3))
    assert cut.outcome.status == "interrupted" and len(cut.calls) == 1
    assert cut.outcome.reason == "client closed its session"
    assert served.outcome.status == "completed" and len(served.calls) == len(SOLVE)
    assert stopped.outcome.status == "interrupted" and stopped.outcome.reason == "server stopped"
    assert len(stopped.calls) == 1
    for record in (cut, served, stopped):
        assert hw.verify(record, task=task()).evidence == "verified"


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
