"""Reward throughput: rollouts per second and reward cost per rollout, adapters against the library.

One rollout is the oracle's calls on ``helpdesk.reply_and_solve`` (read, reply, solve) followed
by reads of its ticket up to the task's budget of 10 tool calls, then ``finish``: a 10-call
rollout that earns 1.0 everywhere. Each path plays it from a fresh attempt to a reward:

- ``library``: harness_world called directly, as ``run`` does: an `Attempt`, its calls, the
  record sealed (`Attempt.finish`), then `judge_record` (the sealed bytes decoded, replayed
  and graded) and the reward rule (`reward_of`); nothing saved.
- ``saved``: the same, and each record saved as ``run`` saves it: sealed once, judged from
  its sealed bytes (`finished`) and made durable in a run directory by group commit. This is
  the library's own cost of what an adapter does per rollout: the adapters' baseline.
- ``reward``: the plain reward function, `harness_world.rewards.reward`, on the rollout as a
  chat completion (parse, fresh attempt, seal, replay, grade).
- ``rollouts``: the core both adapters serve (`harness_world.integrations.rollouts`): open,
  calls, ``finish``, seal (judged from the sealed bytes and saved by group commit in a run
  directory; the batch's time includes making every record durable).
- ``openenv``: `WorldEnvironment.reset` and ``step(CallToolAction)``, what openenv-core's
  server calls for each WebSocket message (needs openenv-core).
- ``verifiers``: `WorldToolset.call_tool` under the rollout's route, what the shared tool
  server runs per MCP request, and the seal `WorldTask.finalize` makes with the rollout's
  transcript (needs verifiers).

The adapters' rounds are made before timing (a run directory each, with one rollout that
is not counted), and a batch's time ends when every record it sealed is durable; writing the
round's counts when the rollouts close (once per round, whatever its size) is timed apart
(``round_close_ms``). Reward milliseconds are the seal + replay + grade part alone:
`judge_record` of a sealed record (``library``; ``saved``: `finished` with it),
`Rollouts.seal` (the adapters, with the save), the whole call (``reward``, which also plays
the episode). Every figure is the median over batches, the paths interleaved so machine noise
hits all alike; the ratios are the claim (goal: each adapter at most 1.25 of ``saved``, and
the reward under 2 ms). Processes started while timing are counted (goal: none).

    python bench/rl.py            # full
    python bench/rl.py --quick    # fewer repetitions (CI smoke)

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import harness_world as hw
from harness_world.coverage import load_routes, run_script
from harness_world.evidence.record import TranscriptMessage, TranscriptToolCall
from harness_world.grading.verifier import judge_record
from harness_world.integrations.rollouts import Rollouts, plan_rollouts
from harness_world.rewards import reward, reward_of
from harness_world.running.attempt import Attempt
from harness_world.running.commit import GroupCommit, finished
from harness_world.running.run import open_external_run
from harness_world.running.rundir import record_path, sample_seed

QUICK = "--quick" in sys.argv
BATCHES = 5 if QUICK else 21
PER_BATCH = 20 if QUICK else 100
TASK = "helpdesk.reply_and_solve"
CALLS = 10

Calls = list[tuple[str, dict[str, Any]]]


def rollout_calls(world: hw.World, task: hw.Task) -> tuple[Calls, str]:
    """The oracle's calls, then reads of the ticket up to CALLS, and its final message."""
    record = run_script(world, task, load_routes("helpdesk")[TASK][0], seed=sample_seed(0, TASK, 0))
    calls: Calls = [(c.tool, dict(c.args)) for c in record.calls]
    calls += [("get_ticket", {"ticket_id": "T-1001"})] * (CALLS - len(calls))
    return calls, record.final_message


def turns(calls: Calls, final: str) -> list[Calls]:
    """One call per model turn, ``finish`` beside the last: CALLS turns, the task's budget."""
    return [[c] for c in calls[:-1]] + [[calls[-1], ("finish", {"message": final})]]


def completion(calls: Calls, final: str) -> list[dict[str, Any]]:
    """The rollout as a chat completion: one assistant message per turn."""
    messages: list[dict[str, Any]] = []
    for number, turn in enumerate(turns(calls, final)):
        made = [
            {
                "id": f"c{number}-{k}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(args)},
            }
            for k, (tool, args) in enumerate(turn)
        ]
        messages.append({"role": "assistant", "content": None, "tool_calls": made})
    return messages


def transcript(calls: Calls, final: str) -> list[TranscriptMessage]:
    """The conversation `WorldTask.finalize` hands the seal: the same turns, with results."""
    out = []
    done = 0
    for number, turn in enumerate(turns(calls, final)):
        made = [
            TranscriptToolCall(id=f"c{number}-{k}", name=tool, arguments=json.dumps(args))
            for k, (tool, args) in enumerate(turn)
        ]
        out.append(
            TranscriptMessage(role="assistant", content="", tool_calls=made, after_call=done)
        )
        done += sum(1 for c in made if c.name != "finish")
        out += [
            TranscriptMessage(role="tool", content="{}", tool_call_id=c.id, after_call=done)
            for c in made
        ]
    return out


class Paths:
    """Each path's one-batch function: play PER_BATCH rollouts; (seconds, reward seconds)."""

    def __init__(self, world: hw.World, task: hw.Task, calls: Calls, final: str) -> None:
        self.world, self.task, self.calls, self.final = world, task, calls, final
        self.completion = completion(calls, final)
        self.transcript = transcript(calls, final)
        self.scratch = Path(tempfile.mkdtemp(prefix="hw-bench-rl-"))
        self.batch = 0
        self.rewards: dict[str, list[float]] = {}
        self.closing: list[float] = []

    def paid(self, path: str, value: float) -> None:
        self.rewards.setdefault(path, []).append(value)

    def library(self) -> tuple[float, float]:
        judged = 0.0
        start = time.perf_counter()
        for sample in range(PER_BATCH):
            seed = sample_seed(0, TASK, sample)
            attempt = Attempt(self.world, self.task, seed=seed, sample=sample)
            for tool, args in self.calls:
                attempt.begin_turn()
                attempt.call(tool, args)
            sealing = time.perf_counter()
            record = attempt.finish(self.final)
            slot = judge_record(record, self.world, self.task, Path(f"{sample}.json"))
            judged += time.perf_counter() - sealing
            self.paid("library", reward_of(slot, None).reward)
        return time.perf_counter() - start, judged

    def saved(self) -> tuple[float, float]:
        self.batch += 1
        root = self.scratch / f"saved-{self.batch}"
        worlds = {self.world.name: self.world}
        revision = open_external_run(
            root,
            worlds=worlds,
            tasks=[self.task],
            kind="bench",
            label="saved",
            samples=PER_BATCH,
            seed=0,
            overrides={},
        ).id
        commit = GroupCommit(root, lambda batch: None)
        judged = 0.0
        start = time.perf_counter()
        for sample in range(PER_BATCH):
            seed = sample_seed(0, TASK, sample)
            attempt = Attempt(self.world, self.task, seed=seed, sample=sample, revision=revision)
            for tool, args in self.calls:
                attempt.begin_turn()
                attempt.call(tool, args)
            sealing = time.perf_counter()
            record = attempt.finish(self.final)
            path = record_path(root, TASK, sample)
            item = finished(
                record, path, lambda r, p=path: judge_record(r, self.world, self.task, p)
            )
            judged += time.perf_counter() - sealing
            commit.add(item)
            self.paid("saved", reward_of(item.result, None).reward)
        commit.flush()
        return time.perf_counter() - start, judged

    def reward(self) -> tuple[float, float]:
        start = time.perf_counter()
        for sample in range(PER_BATCH):
            [paid] = reward([self.completion], task_id=[TASK], seed=[sample])
            self.paid("reward", paid)
        spent = time.perf_counter() - start
        return spent, spent

    def _rollouts(self, name: str) -> Rollouts:
        """A fresh set of rollouts (a plan of PER_BATCH rows, one round): made before timing."""
        self.batch += 1
        out = self.scratch / f"{name}-{self.batch}"
        made = plan_rollouts("helpdesk", [TASK], PER_BATCH + 1, out=out, kind="bench", label=name)
        held = Rollouts(made)
        held.open("warm", f"{TASK}@{PER_BATCH}")  # makes the round's run directory
        held.seal("warm")
        return held

    def _closed(self, held: Rollouts) -> None:
        """Every record durable (timed), then the round's counts written and let go (not)."""
        held.flush()
        done = time.perf_counter()
        held.close()
        self.closing.append(time.perf_counter() - done)

    def rollouts(self) -> tuple[float, float]:
        held = self._rollouts("rollouts")
        sealing = 0.0
        start = time.perf_counter()
        for sample in range(PER_BATCH):
            rollout = f"r{sample}"
            held.open(rollout, f"{TASK}@{sample}")
            for tool, args in self.calls:
                held.call(rollout, tool, args)
            held.call(rollout, "finish", {"message": self.final})
            began = time.perf_counter()
            result = held.seal(rollout, turns=CALLS, transcript=self.transcript)
            sealing += time.perf_counter() - began
            self.paid("rollouts", result.reward)
        self._closed(held)
        return time.perf_counter() - start - self.closing[-1], sealing

    def openenv(self) -> tuple[float, float]:
        from openenv.core.env_server.mcp_types import CallToolAction

        from harness_world.integrations.openenv import WorldEnvironment

        held = self._rollouts("openenv")
        env = WorldEnvironment(held)
        sealing = 0.0
        start = time.perf_counter()
        for sample in range(PER_BATCH):
            env.reset(seed=sample, task=TASK)
            for tool, args in self.calls:
                env.step(CallToolAction(tool_name=tool, arguments=args))
            began = time.perf_counter()
            done = env.step(CallToolAction(tool_name="finish", arguments={"message": self.final}))
            sealing += time.perf_counter() - began
            self.paid("openenv", float(done.reward or 0.0))
        self._closed(held)
        return time.perf_counter() - start - self.closing[-1], sealing

    def verifiers(self) -> tuple[float, float]:
        return asyncio.run(self._verifiers())

    async def _verifiers(self) -> tuple[float, float]:
        import verifiers.v1 as vf

        from harness_world.integrations import verifiers as adapter

        held = self._rollouts("verifiers")
        toolset = adapter.WorldToolset(vf.SharedToolsetConfig(), held)
        sealing = 0.0
        start = time.perf_counter()
        for sample in range(PER_BATCH):
            rollout = f"v{sample}"
            held.open(rollout, f"{TASK}@{sample}")
            token = adapter._ROUTE.set(rollout)
            try:
                for tool, args in [*self.calls, ("finish", {"message": self.final})]:
                    await toolset.call_tool(tool, args)
            finally:
                adapter._ROUTE.reset(token)
            began = time.perf_counter()
            result = held.seal(rollout, turns=CALLS, transcript=self.transcript)
            sealing += time.perf_counter() - began
            self.paid("verifiers", result.reward)
        self._closed(held)
        return time.perf_counter() - start - self.closing[-1], sealing


def unusable(adapter: str) -> str:
    """Why an adapter cannot be measured here ("" when it can): its library, importable."""
    try:
        importlib.import_module(f"harness_world.integrations.{adapter}")
    except ImportError as exc:  # not installed, or installed beside a conflicting version
        return f"{type(exc).__name__}: {str(exc)[:160]}"
    return ""


def counting_processes(started: list[str]) -> Callable[[], None]:
    """Count every process started from here on (subprocess and fork); the undo."""
    popen_init, fork = subprocess.Popen.__init__, os.fork

    def counted_popen(self: Any, args: Any, *rest: Any, **kwargs: Any) -> None:
        started.append(f"subprocess {args!r}"[:120])
        popen_init(self, args, *rest, **kwargs)

    def counted_fork() -> int:
        started.append("fork")
        return fork()

    subprocess.Popen.__init__ = counted_popen  # type: ignore[method-assign]
    os.fork = counted_fork

    def undo() -> None:
        subprocess.Popen.__init__ = popen_init  # type: ignore[method-assign]
        os.fork = fork

    return undo


def main() -> None:
    world = hw.load_world("helpdesk")
    task = {t.id: t for t in hw.load_tasks("helpdesk")}[TASK]
    calls, final = rollout_calls(world, task)
    paths = Paths(world, task, calls, final)
    names = ["library", "saved", "reward", "rollouts"]
    missing = {n: why for n in ("openenv", "verifiers") if (why := unusable(n))}
    names += [n for n in ("openenv", "verifiers") if n not in missing]
    for name in names:  # warm up: imports, caches
        getattr(paths, name)()
    paths.rewards.clear()
    times: dict[str, list[float]] = {n: [] for n in names}
    judged: dict[str, list[float]] = {n: [] for n in names}
    started: list[str] = []
    undo = counting_processes(started)
    try:
        for batch in range(BATCHES):
            for name in names[batch % len(names) :] + names[: batch % len(names)]:
                spent, reward_s = getattr(paths, name)()
                times[name].append(spent / PER_BATCH)
                judged[name].append(reward_s / PER_BATCH)
    finally:
        undo()
    per = {n: statistics.median(times[n]) for n in names}
    reward_ms = {n: round(statistics.median(judged[n]) * 1000, 3) for n in names}
    figures = {
        "task": TASK,
        "calls_per_rollout": len(calls),
        "batches": BATCHES,
        "rollouts_per_batch": PER_BATCH,
        "rollouts_per_s": {n: round(1 / per[n], 1) for n in names},
        "ms_per_rollout": {n: round(per[n] * 1000, 3) for n in names},
        "ratio_to_library": {n: round(per[n] / per["library"], 3) for n in names},
        "ratio_to_saved": {n: round(per[n] / per["saved"], 3) for n in names},
        "reward_ms": reward_ms,
        "rewards_paid": {n: sorted(set(v)) for n, v in paths.rewards.items()},
        "processes_started": len(started),
        "round_close_ms": round(statistics.median(paths.closing) * 1000, 1),
        "not_measured": missing,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    for name in names:
        print(
            f"{name:>9}: {figures['rollouts_per_s'][name]:8.1f} rollouts/s, "  # type: ignore[index]
            f"x{figures['ratio_to_library'][name]:.3f} of the library, "  # type: ignore[index]
            f"x{figures['ratio_to_saved'][name]:.3f} of it saving, "  # type: ignore[index]
            f"reward {reward_ms[name]:.3f} ms"
        )
    print(f"processes started: {len(started)}")
    assert all(v == [1.0] for v in figures["rewards_paid"].values()), figures["rewards_paid"]  # type: ignore[union-attr]
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
