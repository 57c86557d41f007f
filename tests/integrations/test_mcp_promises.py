"""What `mcp` and `play` promise they keep: only budgets they count are stated or accepted, and
τ² retail is served from its data folder (`--world-data`)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.integrations.mcp import AttemptServer, AttemptTarget
from harness_world.running.bridge import serve as bridge
from tests.conftest import TAU2_DATA, requires

pytestmark = pytest.mark.integrations

ROOT = Path(__file__).resolve().parents[2]
ENV = {"PYTHONPATH": str(ROOT)}
HAS_TAU2 = (TAU2_DATA / "db.json").is_file() and (TAU2_DATA / "tasks_train.json").is_file()
needs_tau2 = pytest.mark.skipif(not HAS_TAU2, reason=f"τ² retail data not found in {TAU2_DATA}")
needs_mcp = requires("mcp", "the MCP server needs the [mcp] extra")
TAU2_TASK = "tau2_retail.0"


def _task(task_id: str) -> hw.Task:
    return {t.id: t for t in hw.load_tasks()}[task_id]


def _command(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness_world", *argv],
        check=False,
        input=stdin,
        capture_output=True,
        env=ENV,
        cwd=ROOT,
        text=True,
        timeout=120,
    )


def test_mcp_and_play_state_only_the_budgets_they_count(tmp_path: Path) -> None:
    """They see tool calls, never model turns: a turn budget they stated could never fail."""
    task = _task("helpdesk.reply_and_solve")
    assert task.budgets.turns is not None and task.budgets.tool_calls is not None
    served = AttemptServer(
        world=hw.load_world("helpdesk"),
        task=task,
        targets=[AttemptTarget(sample=0, seed=0, path=str(tmp_path / "r.json"))],
    ).instruction
    out = io.StringIO()
    bridge(hw.Attempt(hw.load_world("helpdesk"), task), io.StringIO(""), out, tmp_path / "p.json")
    played = json.loads(out.getvalue().splitlines()[0])["instruction"]
    for text in (served, played):
        assert f"at most {task.budgets.tool_calls} tool calls" in text
        assert "model turns" not in text and "prompt tokens" not in text
    # a driver that counts model turns still states them
    assert "model turns" in hw.Attempt(hw.load_world("helpdesk"), task).instruction


@needs_mcp
@pytest.mark.parametrize("option", ["--turns", "--context-tokens", "--requests", "--cost"])
def test_mcp_refuses_a_budget_it_cannot_count(option: str, tmp_path: Path) -> None:
    done = _command(
        "mcp", "--world", "helpdesk", "--task", "helpdesk.reply_and_solve",
        "--record", str(tmp_path / "r.json"), option, "3",
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: {option}: the MCP server sees the client's tool calls")
    assert not (tmp_path / "r.json").exists()


def test_a_world_that_reads_outside_data_names_the_option_it_needs() -> None:
    for command in ("mcp", "play"):
        done = _command(command, "--world", "tau2_retail", "--task", TAU2_TASK)
        assert done.returncode == 2
        (line,) = done.stderr.splitlines()
        assert line.startswith("error: ") and "give it with --world-data DIR" in line


def _gold(task_id: str) -> list[tuple[str, Any]]:
    from harness_world.tau2 import importer

    world = importer.load_world(TAU2_DATA)
    _, tasks = importer.split_tasks(world, TAU2_DATA, "all")
    (imported,) = [t for t in tasks if t.task.id == task_id]
    return [(call.tool, call.args) for call in imported.gold]


@needs_tau2
@needs_mcp
def test_mcp_serves_a_tau2_retail_task_from_its_data_folder(tmp_path: Path) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    out = tmp_path / "run"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m", "harness_world", "mcp", "--world", "tau2_retail", "--world-data",
            str(TAU2_DATA), "--task", TAU2_TASK, "--samples", "1", "--out", str(out),
            "--reveal-grade",
        ],
        env=ENV,
        cwd=str(ROOT),
    )  # fmt: skip

    async def session() -> tuple[list[str], dict[str, Any]]:
        async with Client(params) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            for tool, args in _gold(TAU2_TASK):
                answer = await client.call_tool(tool, args)
                assert not answer.is_error, answer
            done = await client.call_tool("finish", {"message": "The exchange is placed."})
            return listed, json.loads(done.content[0].text)

    listed, done = anyio.run(session)
    assert "exchange_delivered_order_items" in listed and "finish" in listed
    assert done["outcome"] == "completed" and done["evidence"] == "verified"
    assert done["grade"] == "passed", done
    data = ["--world", "tau2_retail", "--world-data", str(TAU2_DATA)]
    verified = _command("verify", str(out), *data, "--require-pass")
    assert verified.returncode == 0, verified.stdout + verified.stderr


@needs_tau2
def test_play_serves_a_tau2_retail_task_from_its_data_folder(tmp_path: Path) -> None:
    record = tmp_path / "r.json"
    lines = [json.dumps({"tool": tool, "args": args}) for tool, args in _gold(TAU2_TASK)]
    lines.append(json.dumps({"finish": "The exchange is placed."}))
    done = _command(
        "play", "--world", "tau2_retail", "--world-data", str(TAU2_DATA), "--task", TAU2_TASK,
        "--record", str(record), stdin="\n".join(lines) + "\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(a["ok"] for a in answers[1:]), answers
    assert answers[-1]["grade"] == "passed" and answers[-1]["evidence"] == "verified"
    data = ["--world", "tau2_retail", "--world-data", str(TAU2_DATA)]
    verified = _command("verify", str(record), *data, "--require-pass")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    other = str(tmp_path / "other.json")
    refused = _command("play", *data, "--task", "tau2_retail.nope", "--record", other)
    assert refused.returncode == 2 and "is not a task of --world-data" in refused.stderr
