"""The verifiers adapter, driven by verifiers' own evaluation command and its env machinery.

A scripted model on loopback stands in for the model; everything else is verifiers' own: the
``vf-eval`` command (in a subprocess) or the env's serving and rollout loop (in process).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.evidence.record import load_record
from harness_world.integrations.rollouts import plan_rollouts
from harness_world.rewards import reward_of, transcript_calls
from harness_world.running.reader import RunReader
from tests.conftest import REPO, requires
from tests.rl.rl_support import (
    Policy,
    ScriptedModel,
    counting_processes,
    guessing,
    idle,
    oracle_scripts,
    scripted,
    stalling,
)

pytestmark = [
    pytest.mark.rl,
    requires("verifiers", "the verifiers adapter needs the [verifiers] extra"),
]

# no prose criterion: a reply left for review is pending, and pending earns 0.0
TASKS = ["helpdesk.create_for_john", "helpdesk.vip_two_statuses"]


def scripts(out: Path, tasks: list[str] = TASKS, seeds: int = 2) -> dict[str, Any]:
    plan = plan_rollouts(
        "helpdesk", tasks, seeds, out=out, kind="test", counted={"tool_calls", "turns"}
    )
    return oracle_scripts(plan)


def vf_eval(
    model: ScriptedModel, out: Path, tmp: Path, tasks: list[str], rollouts: int
) -> list[dict[str, Any]]:
    """Run ``vf-eval`` on the world's taskset; every trace it wrote."""
    command = Path(sys.executable).with_name("vf-eval")
    argv = [
        str(command) if command.exists() else sys.executable,
        *([] if command.exists() else ["-m", "verifiers.v1.cli.eval.main"]),
        "harness-world-verifiers",
        "--env.taskset.world", "helpdesk",
        "--env.taskset.tasks", json.dumps(tasks),
        "--env.taskset.seeds", "2",
        "--env.taskset.out", str(out),
        "--model", "scripted",
        "--client.base-url", model.url,
        "--client.api-key-var", "SCRIPTED_KEY",
        "--no-push",
        "-r", str(rollouts),
        "--rich", "None",
        "--output-dir", str(tmp / "vf"),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp), "SCRIPTED_KEY": "none"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    [traces] = list((tmp / "vf").rglob("traces.jsonl"))
    return [t for line in traces.read_text().splitlines() for t in json.loads(line)["traces"]]


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


def harness_world(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m harness_world ARGV`` in its own process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "harness_world", *map(str, argv)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def paid(traces: list[dict[str, Any]]) -> dict[str, float]:
    return {t["info"]["harness_world"]["record"]: t["rewards"]["world"]["score"] for t in traces}


@pytest.mark.parametrize(
    ("name", "tasks", "expected"),
    [
        ("oracle", TASKS, 1.0),
        ("idle", TASKS, 0.0),
        ("guessing", ["helpdesk.reply_and_solve"], 0.0),
    ],
)
def test_vf_eval_pays_the_oracle_and_nothing_else_and_verify_rederives_it(
    tmp_path: Path, name: str, tasks: list[str], expected: float
) -> None:
    policies: dict[str, Policy] = {
        "oracle": scripted(scripts(tmp_path / "plan", tasks)),
        "idle": idle,
        "guessing": guessing,
    }
    out = tmp_path / "rl"
    with ScriptedModel(policies[name]) as model:
        traces = vf_eval(model, out, tmp_path, tasks, rollouts=2)
    assert len(traces) == len(tasks) * 2 * 2  # rows (task x seed) x rollouts
    rewards = paid(traces)
    assert set(rewards.values()) == {expected}
    assert {Path(r).parents[2].name for r in rewards} == {"0", "1"}  # the k-th rollout: round k
    assert rederived(out) == rewards
    for round_dir in ("0", "1"):
        assert harness_world("verify", out / round_dir).returncode == 0  # every record verified
        passed = harness_world("verify", "--require-pass", out / round_dir)
        assert passed.returncode == (0 if expected else 1), passed.stdout[-2000:]


def test_rollouts_record_their_transcripts_and_the_calls_they_made(tmp_path: Path) -> None:
    from harness_world.integrations.verifiers import load_environment

    env = load_environment("helpdesk", TASKS, 2, out=tmp_path / "rl")
    with ScriptedModel(scripted(scripts(tmp_path / "plan"))) as model:
        traces = asyncio.run(_run(env, model, rollouts=1))
    for trace in traces:
        result = trace.info["harness_world"]
        record = load_record(result["record"])
        said = transcript_calls(record)
        assert said is not None and len(said) == len(record.calls) > 0
        asked = [c.name for m in trace.assistant_messages for c in m.tool_calls or []]
        assert asked == [c.tool for c in record.calls] + ["finish"]
        assert record.usage.turns == len(trace.assistant_messages) == result["budget"]["turns"][0]
        spoken = [m.content for m in record.transcript or [] if m.role == "assistant"]
        assert spoken and "null" not in spoken  # a turn of calls only says nothing, not "null"


def test_the_turn_budget_binds_a_model_that_never_finishes(tmp_path: Path) -> None:
    from harness_world.integrations.verifiers import load_environment

    env = load_environment("helpdesk", ["helpdesk.reply_and_solve"], 1, out=tmp_path / "rl")
    with ScriptedModel(stalling) as model:
        [trace] = asyncio.run(_run(env, model, rollouts=1))
    result = trace.info["harness_world"]
    assert trace.stop_condition == "turn_budget" and trace.num_turns == 10
    assert (result["outcome"], result["reward"]) == ("turn_limit", 0.0)
    assert load_record(result["record"]).usage.turns == 10


def test_concurrent_rollouts_on_one_env_each_record_what_it_would_alone(tmp_path: Path) -> None:
    from harness_world.integrations.verifiers import load_environment

    with ScriptedModel(scripted(scripts(tmp_path / "plan"))) as model:
        alone: dict[str, str] = {}  # each row alone: the same plan, only that row, one rollout
        for row in (f"{t}@{s}" for t in TASKS for s in (0, 1)):
            alone_env = load_environment("helpdesk", TASKS, 2, out=tmp_path / "alone" / row)
            [trace] = asyncio.run(_run(alone_env, model, rollouts=1, only=row))
            alone[row] = load_record(trace.info["harness_world"]["record"]).digest
        # verifiers runs git and uname once per process for its metadata: done above already
        env = load_environment("helpdesk", TASKS, 2, out=tmp_path / "together")
        with counting_processes() as started:
            together = asyncio.run(_run(env, model, rollouts=3))
    assert started == []  # no rollout started a process
    assert len(together) == len(alone) * 3
    for trace in together:
        mine = load_record(trace.info["harness_world"]["record"])
        assert trace.info["harness_world"]["reward"] == 1.0
        assert mine.digest == alone[trace.task.data.row], trace.task.data.row


def test_a_tool_request_not_signed_for_a_rollout_reaches_no_attempt(tmp_path: Path) -> None:
    from harness_world.integrations.verifiers import load_environment

    env = load_environment("helpdesk", ["helpdesk.reply_and_solve"], 1, out=tmp_path / "rl")
    rollouts = env.taskset.rollouts
    rollouts.open("victim", "helpdesk.reply_and_solve@0")

    async def forge() -> list[Any]:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        answers = []
        async with env.shared_tools() as shared:
            [server] = shared.values()
            for query in ("", "?vf_state_url=x&vf_state_route=victim&vf_state_signature=00"):
                async with Client(streamable_http_client(server.url + query)) as client:
                    call = {"ticket_id": "T-1001", "status": "solved"}
                    answers.append(await client.call_tool("update_ticket", call))
        return answers

    for answer in asyncio.run(forge()):
        assert answer.is_error and answer.structured_content["error"]["kind"] == "no_rollout"
        assert json.loads(answer.content[0].text) == answer.structured_content
    result = rollouts.seal("victim")
    rollouts.close()
    assert load_record(result.record).calls == []


async def _run(env: Any, model: ScriptedModel, rollouts: int, only: str = "") -> list[Any]:
    """Every row's rollouts (or one row's), all at once, through the env's own serving loop."""
    import verifiers.v1 as vf

    client = vf.EvalClientConfig(base_url=model.url, api_key_var="SCRIPTED_KEY")
    context = vf.ModelContext(model="scripted", client=client)
    async with env.serving():
        rows = [task for task in env.taskset if only in ("", task.key)]
        slots = [s for task in rows for s in env.slots(task, rollouts)]
        episodes = await asyncio.gather(*(env.run_slot(slot, context) for slot in slots))
    return [trace for episode in episodes for trace in episode.traces]
