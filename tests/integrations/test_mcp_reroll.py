"""No re-roll over MCP: a session that called a tool and went away without `finish` had its
sample's attempt. Driven by the official SDK client over stdio and streamable HTTP."""

from __future__ import annotations

import contextlib
import io
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from tests.conftest import requires
from tests.integrations.test_mcp_server import (
    _authorised,
    connect,
    http_server,
    server,
    structured,
)

pytestmark = [pytest.mark.integrations, requires("mcp", "the MCP server needs the [mcp] extra")]
anyio = pytest.importorskip("anyio", reason="the MCP server needs the [mcp] extra")

TASK = "payments.charge_no_fault"
ORDER = {"order_id": "O-00030"}
PLAN = ("--samples", "2")


def payments(*args: str) -> Any:
    return server(*args, world="payments", task_id=TASK)


async def charge_twice(client: Any) -> None:
    """Two charges without an idempotency key: a forbidden duplicate, then the client leaves."""
    order = structured(await client.call_tool("get_order", ORDER))["result"]
    for _ in range(2):
        charged = await client.call_tool(
            "create_charge", {**ORDER, "amount_cents": order["amount_cents"]}
        )
        assert not charged.is_error, charged


async def solve(client: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The task done right; the first call's answer and the `finish` answer."""
    first = structured(await client.call_tool("get_order", ORDER))
    charge = structured(
        await client.call_tool(
            "create_charge",
            {**ORDER, "amount_cents": first["result"]["amount_cents"], "idempotency_key": "o30"},
        )
    )["result"]
    for tool in ("record_payment", "send_receipt"):
        done = await client.call_tool(tool, {**ORDER, "charge_id": charge["id"]})
        assert not done.is_error, done
    return first, structured(await client.call_tool("finish", {"message": "Charged."}))


def read_json(argv: list[str]) -> dict[str, Any]:
    """A command's ``--json`` output (captured here: the SDK's stdio client needs a real
    stderr, which pytest's capsys would replace)."""
    from harness_world.cli import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    out: dict[str, Any] = json.loads(printed.getvalue())
    return out


def assert_the_abandoned_attempt_counts(out: Path) -> None:
    """Sample 0 is the abandoned attempt, sample 1 the solved one; every reader counts both."""
    records = out / "records" / TASK
    assert sorted(p.name for p in records.iterdir()) == ["0.json", "1.json"]  # nothing set aside
    abandoned = hw.load_record(records / "0.json")
    assert abandoned.outcome.status == "interrupted"
    assert [c.tool for c in abandoned.calls] == ["get_order", "create_charge", "create_charge"]
    report = read_json(["report", str(out), "--json"])
    counts = report["counts"]
    assert counts["valid"] == 2 and counts["passed"] == 1 and counts["failed"] == 1
    assert counts["by_outcome"] == {"interrupted": 1, "completed": 1}
    assert report["first_try_completed"] == 1 and report["pass_k"][1]["pass_hat_k"] == 0
    (failed,) = report["failed_tasks"]
    assert failed["criteria"]["forbidden.duplicate_charge"] == 1
    assert report["trusted"]["forbidden"] == 1 and report["trusted"]["trusted"] == 1
    (run,) = read_json(["conditions", str(out), "--json"])["runs"]
    assert (run["trusted_completion"]["count"], run["trusted_completion"]["n"]) == (1, 2)
    by_sample = {r["sample"]: r["agent"] for r in run["records"]}
    assert by_sample[0]["forbidden.duplicate_charge"] is False
    assert by_sample[1]["forbidden.duplicate_charge"] is True


def test_stdio_a_client_that_disconnects_mid_attempt_is_not_served_that_sample_again(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    params = payments(*PLAN, "--out", str(out))

    async def abandon() -> None:
        async with connect(params) as client:
            await charge_twice(client)

    async def reconnect() -> tuple[dict[str, Any], dict[str, Any]]:
        async with connect(params) as client:
            return await solve(client)

    async def once_more() -> Any:
        async with connect(params) as client:
            return await client.call_tool("get_order", ORDER)

    anyio.run(abandon)
    first, done = anyio.run(reconnect)
    assert first["seq"] == 1 and done["sample"] == 1 and done["remaining"] == 0
    assert done["grade"] == "passed"
    spent = anyio.run(once_more)
    assert spent.is_error and "nothing is left to serve" in structured(spent)["error"]["message"]
    assert_the_abandoned_attempt_counts(out)


def test_http_a_session_closed_mid_attempt_is_not_served_that_sample_again(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    with http_server(*PLAN, "--out", str(out), world="payments", task_id=TASK) as (url, token):

        async def sessions() -> tuple[dict[str, Any], dict[str, Any], Any]:
            async with connect(_authorised(url, token)) as first:
                await charge_twice(first)
            # its session closed (DELETE): sample 0 is sealed as its attempt
            async with connect(_authorised(url, token)) as second:
                opened, done = await solve(second)
            async with connect(_authorised(url, token)) as third:
                spent = await third.call_tool("get_order", ORDER)
            return opened, done, spent

        opened, done, spent = anyio.run(sessions)
    assert opened["seq"] == 1 and done["sample"] == 1 and done["remaining"] == 0
    assert spent.is_error and "nothing is left to serve" in structured(spent)["error"]["message"]
    assert_the_abandoned_attempt_counts(out)


def test_a_server_killed_mid_attempt_leaves_its_sample_missing_never_served_again(
    tmp_path: Path,
) -> None:
    """SIGKILL cannot be caught, so nothing is sealed; the sample was begun all the same."""
    out = tmp_path / "run"
    params = payments(*PLAN, "--out", str(out))
    proc = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=params.env,
        cwd=params.cwd,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in (
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            },
            {"method": "notifications/initialized"},
            {"id": 2, "method": "tools/call", "params": {"name": "get_order", "arguments": ORDER}},
        ):
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            proc.stdin.flush()
            if "id" in message:
                assert json.loads(proc.stdout.readline())["id"] == message["id"]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not (out / "records" / TASK / "0.json").exists()  # killed: nothing sealed

    async def reconnect() -> tuple[dict[str, Any], dict[str, Any]]:
        async with connect(params) as client:
            return await solve(client)

    first, done = anyio.run(reconnect)
    assert first["seq"] == 1 and done["sample"] == 1 and done["remaining"] == 0
    counts = read_json(["report", str(out), "--json"])["counts"]
    assert counts["missing"] == 1 and counts["valid"] == 1
