"""The OpenEnv adapter, served by openenv-core's own server and driven by its own client.

The server is openenv-core's ``HTTPEnvServer`` (production mode: the ``/ws`` session transport
only) under uvicorn on loopback; the client is openenv-core's ``MCPToolClient`` (the adapter's
`WorldClient` only reads the reset observation whole). Episodes are scripted: the oracle's
calls, nothing, or a blind guess.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.evidence.record import load_record
from harness_world.integrations.rollouts import Rollouts
from harness_world.rewards import reward_of
from harness_world.running.reader import RunReader
from tests.conftest import REPO, requires
from tests.rl.rl_support import Script, oracle_scripts

pytestmark = [
    pytest.mark.rl,
    requires("openenv", "the OpenEnv adapter needs the [openenv] extra (openenv-core)"),
]

# no prose criterion: a reply left for review is pending, and pending earns 0.0
TASKS = ["helpdesk.create_for_john", "helpdesk.vip_two_statuses"]
GUESS: Script = (
    [
        ("add_comment", {"ticket_id": "T-1001", "body": "The outage is fixed.", "public": True}),
        ("update_ticket", {"ticket_id": "T-1001", "status": "solved"}),
    ],
    "Replied and solved.",
)


def rollouts(out: Path, tasks: list[str] = TASKS, seeds: int = 2) -> Rollouts:
    from harness_world.integrations.openenv import world_rollouts

    return world_rollouts("helpdesk", tasks, seeds, out=out)


def scripts_by_row(made: Rollouts) -> dict[str, Script]:
    by_prompt = oracle_scripts(made.plan)
    return {row.key: by_prompt[made.plan.prompt(row.task_id)] for row in made.plan.rows()}


@contextlib.contextmanager
def served(held: Rollouts) -> Iterator[str]:
    """openenv-core's server for the rollouts, on loopback, for the block; its base URL."""
    import uvicorn

    from harness_world.integrations.openenv import create_world_app

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_world_app(held), log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


async def episode(url: str, task: str, seed: int, script: Script) -> dict[str, Any]:
    """One episode on its own session: reset, the script's calls, finish; what it ended with."""
    from openenv.core.env_server.mcp_types import CallToolAction

    from harness_world.integrations.openenv import EpisodeObservation, WorldClient

    async with WorldClient(base_url=url) as env:
        first = await env.reset(seed=seed, task=task)
        assert isinstance(first.observation, EpisodeObservation)
        assert first.observation.row == f"{task}@{seed}" and not first.done
        assert [t.name for t in first.observation.tools][-1] == "finish"
        calls, final = script
        for tool, arguments in calls:
            step = await env.step(CallToolAction(tool_name=tool, arguments=arguments))
            assert not step.done and step.observation.error is None
            result = step.observation.result  # the text beside the data says the same
            assert json.loads(result["content"][0]["text"]) == result["data"]
        last = await env.step(CallToolAction(tool_name="finish", arguments={"message": final}))
        assert last.done
        ended = last.observation.result["data"]["ended"]
        assert ended["reward"] == last.reward
        return dict(ended)


def rederived(out: Path) -> dict[str, float]:
    """Each record's reward, read back through the one run reader: what verify re-derives."""
    rewards: dict[str, float] = {}
    for round_dir in sorted(p for p in out.iterdir() if p.is_dir()):
        records: dict[str, hw.Record] = {}
        scan = RunReader.of(hw.load_tasks("helpdesk")).read(
            round_dir, observe=lambda path, got: records.update({str(path): got.record})
        )
        for slot in scan.slots:
            if slot.evidence != "missing":
                rewards[slot.path] = reward_of(slot, records.get(slot.path)).reward
    return rewards


def verify(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness_world", "verify", *map(str, argv)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(("name", "expected"), [("oracle", 1.0), ("idle", 0.0), ("guess", 0.0)])
def test_the_client_earns_one_for_the_oracle_and_nothing_else_and_verify_rederives_it(
    tmp_path: Path, name: str, expected: float
) -> None:
    out = tmp_path / "rl"
    held = rollouts(out)
    oracle = scripts_by_row(held)
    paid: dict[str, float] = {}
    with served(held) as url:
        for row in held.plan.rows():
            script = {"oracle": oracle[row.key], "idle": ([], "Done."), "guess": GUESS}[name]
            ended = asyncio.run(episode(url, row.task_id, row.seed, script))
            assert ended["outcome"] == "completed" and ended["row"] == row.key
            paid[ended["record"]] = ended["reward"]
    assert set(paid.values()) == {expected}
    assert rederived(out) == paid
    assert verify(out / "0").returncode == 0
    assert verify("--require-pass", out / "0").returncode == (0 if expected else 1)


def test_concurrent_sessions_each_record_what_their_episode_records_alone(tmp_path: Path) -> None:
    held = rollouts(tmp_path / "together")
    oracle = scripts_by_row(held)
    rows = held.plan.rows()

    async def together(url: str) -> list[dict[str, Any]]:
        return await asyncio.gather(
            *(episode(url, row.task_id, row.seed, oracle[row.key]) for row in rows)
        )

    with served(held) as url:
        ended = asyncio.run(together(url))
    for row, mine in zip(rows, ended, strict=True):
        alone_held = rollouts(tmp_path / f"alone-{row.task_id}-{row.seed}")
        with served(alone_held) as url:
            theirs = asyncio.run(episode(url, row.task_id, row.seed, oracle[row.key]))
        assert mine["reward"] == theirs["reward"] == 1.0
        assert load_record(mine["record"]).digest == load_record(theirs["record"]).digest, row


def test_the_tool_call_budget_ends_the_episode_with_nothing_paid(tmp_path: Path) -> None:
    from openenv.core.env_server.mcp_types import CallToolAction

    from harness_world.integrations.openenv import WorldClient

    held = rollouts(tmp_path / "rl", ["helpdesk.reply_and_solve"], 1)

    async def stall(url: str) -> tuple[int, Any]:
        async with WorldClient(base_url=url) as env:
            await env.reset(seed=0, task="helpdesk.reply_and_solve")
            for steps in range(1, 100):
                call = CallToolAction(tool_name="get_ticket", arguments={"ticket_id": "T-1001"})
                result = await env.step(call)
                if result.done:
                    return steps, result
        raise AssertionError("the budget never ended the episode")

    with served(held) as url:
        steps, result = asyncio.run(stall(url))
    ended = result.observation.result["data"]["ended"]
    assert (steps, result.reward, ended["outcome"]) == (11, 0.0, "budget_limit")
    assert len(load_record(ended["record"]).calls) == 10


def test_a_session_that_leaves_mid_episode_is_sealed_interrupted(tmp_path: Path) -> None:
    from openenv.core.env_server.mcp_types import CallToolAction

    from harness_world.integrations.openenv import WorldClient

    out = tmp_path / "rl"
    held = rollouts(out, ["helpdesk.reply_and_solve"], 1)

    async def leave(url: str) -> Any:
        async with WorldClient(base_url=url) as env:
            await env.reset(seed=0, task="helpdesk.reply_and_solve")
            call = CallToolAction(
                tool_name="update_ticket", arguments={"ticket_id": "T-1001", "status": "solved"}
            )
            return await env.step(call)

    with served(held) as url:
        answer = asyncio.run(leave(url))
        assert not answer.done and answer.observation.result["is_error"] is False
        deadline = time.monotonic() + 30
        while held.open_rollouts():  # the server notices the closed socket
            assert time.monotonic() < deadline, "the episode was never sealed"
            time.sleep(0.05)
    [record_path] = rederived(out)
    record = load_record(record_path)
    assert record.outcome.status == "interrupted" and len(record.calls) == 1
    assert rederived(out)[record_path] == 0.0


def test_what_the_episode_cannot_take_is_one_error_and_the_session_lives_on(
    tmp_path: Path,
) -> None:
    from openenv.core.env_server.mcp_types import CallToolAction

    from harness_world.integrations.openenv import WorldClient

    held = rollouts(tmp_path / "rl", ["helpdesk.reply_and_solve"], 1)

    async def misuse(url: str) -> list[Any]:
        seen: list[Any] = []
        async with WorldClient(base_url=url) as env:
            no_episode = await env.step(CallToolAction(tool_name="get_ticket", arguments={}))
            seen.append(no_episode.observation.error)
            for bad in ({"seed": 5, "task": "helpdesk.reply_and_solve"}, {"task": "nope"}):
                with pytest.raises(RuntimeError, match=r"is no row of this plan \(task@seed\)"):
                    await env.reset(**bad)
            await env.reset(seed=0, task="helpdesk.reply_and_solve")
            typed = await env.step(CallToolAction(tool_name="get_ticket", arguments={}))
            seen.append(typed.observation.result)
            done = await env.step(CallToolAction(tool_name="finish", arguments={"message": "x"}))
            seen.append(done.reward)
            after = await env.step(CallToolAction(tool_name="get_ticket", arguments={}))
            seen.append(after.observation.error)
        return seen

    with served(held) as url:
        no_episode, typed, reward, after = asyncio.run(misuse(url))
    assert no_episode is not None and "reset first" in no_episode.message
    assert typed["is_error"] is True  # a typed error of the world is the tool's own result
    assert reward == 0.0
    assert after is not None and "reset" in after.message
