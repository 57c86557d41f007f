"""Reward throughput: rollouts per second and reward cost per rollout, adapters against the library.

One rollout is the oracle's calls on ``helpdesk.comment_close_direct_ok`` (read, close, list
comments, ...) followed by reads of its ticket up to 10 tool calls, then ``finish``: a 10-call
rollout that earns 1.0 everywhere (a task without prose criteria: an unreviewed reply is
pending, and pending earns nothing from the adapters). Each path plays it from a fresh attempt
to a reward:

- ``library``: harness_world called directly, as ``run`` does: an `Attempt`, its calls, the
  record sealed (`Attempt.finish`), then `judge_record` (the sealed bytes decoded, replayed
  and graded) and the reward rule (`reward_of`); nothing saved.
- ``saved``: the same, and each record saved as ``run`` saves it: sealed once, judged from
  its sealed bytes (`finished`) and made durable in a run directory by group commit. This is
  the library's own cost of what an adapter does per rollout: the adapters' baseline.
- ``reward``: the plain reward function, `harness_world.rewards.reward`, on the rollout as a
  chat completion (parse, fresh attempt, seal, replay, grade).
- ``rollouts``: the core both adapters serve (`harness_world.integrations.rollouts`): open,
  calls, ``finish``, seal with the transcript (judged from the sealed bytes and saved by group
  commit in a run directory; the batch's time includes making every record durable).
- ``openenv``: `WorldEnvironment.reset` and ``step(CallToolAction)``, what openenv-core's
  server calls for each WebSocket message (needs openenv-core).
- ``verifiers``: a `WorldTask` of a `WorldTaskset`: ``setup``, `WorldToolset.call_tool` under
  the rollout's route (what the shared tool server runs per MCP request), ``finalize`` on the
  rollout's trace (its messages as verifiers types: turns, transcript, seal) and the ``world``
  reward (needs verifiers).

The adapters' sets of rollouts are made before timing (a run directory each, with one rollout
that is not counted), and a batch's time ends when every record it sealed is durable; writing
the round's counts when the rollouts close (once per round, whatever its size) is timed apart
(``round_close_ms``). Reward milliseconds are the seal + replay + grade part alone:
`judge_record` of a sealed record (``library``; ``saved``: `finished` with it),
`Rollouts.seal` (``rollouts``, with the save), the ``finish`` step (``openenv``), ``finalize``
and the reward (``verifiers``), the whole call (``reward``, which also plays the episode).

Measured under load: every round runs one batch of every path, in an order that rotates
each round, and each batch is timed twice, in wall-clock seconds and in the process's CPU
seconds (every thread's, the flushing thread's too; time spent waiting for a core or a disk
is not CPU time). A ratio is taken within each round (the path's batch over ``saved``'s batch
of the same round, a second or so apart) and the figure is the median over rounds, so a spell
of load that hits one round moves one ratio, not the figure. The goals (each adapter at most
1.25 of ``saved``, the reward under 2 ms, no process started) are checked on those medians
and printed with the load average before and after. Processes started while timing are
counted.

    python bench/rl.py            # full: 61 rounds of 40 rollouts a path
    python bench/rl.py --quick    # 7 rounds of 10 (CI smoke)

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
ROUNDS = 7 if QUICK else 61
PER_BATCH = 10 if QUICK else 40
TASK = "helpdesk.comment_close_direct_ok"
CALLS = 10
GOAL_RATIO = 1.25
GOAL_REWARD_MS = 2.0
BASELINE = {"rollouts": "saved", "verifiers": "saved", "openenv": "bare"}
"""What each adapter is held against: the library saving the same record (verifiers keeps
the model's conversation, as a model-backed agent of ``run`` does; OpenEnv sees tool calls
only, so its records hold none)."""

Calls = list[tuple[str, dict[str, Any]]]


def rollout_calls(world: hw.World, task: hw.Task) -> tuple[Calls, str]:
    """The oracle's calls, then reads of the ticket up to CALLS, and its final message."""
    record = run_script(world, task, load_routes("helpdesk")[TASK][0], seed=sample_seed(0, TASK, 0))
    calls: Calls = [(c.tool, dict(c.args)) for c in record.calls]
    calls += [("get_ticket", {"ticket_id": "T-1001"})] * (CALLS - len(calls))
    return calls, record.final_message


def turns(calls: Calls, final: str) -> list[Calls]:
    """One call per model turn, ``finish`` beside the last: CALLS turns."""
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
    """The conversation an adapter hands the seal: the same turns, with results."""
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


class Clock:
    """Wall-clock and process CPU seconds of a batch, and of its reward part."""

    def __init__(self) -> None:
        self.wall = self.cpu = self.reward_wall = self.reward_cpu = 0.0
        self._mark = (0.0, 0.0)

    def start(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def stop(self) -> Clock:
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        return self

    def reward_starts(self) -> None:
        self._mark = (time.perf_counter(), time.process_time())

    def reward_ends(self) -> None:
        self.reward_wall += time.perf_counter() - self._mark[0]
        self.reward_cpu += time.process_time() - self._mark[1]

    def without(self, wall: float, cpu: float) -> Clock:
        """Less a part timed apart (closing a set of rollouts)."""
        self.wall, self.cpu = self.wall - wall, self.cpu - cpu
        return self


class VerifiersTrace:
    """What `WorldTask.finalize` reads of a verifiers ``Trace``, over verifiers' own messages."""

    def __init__(self, rollout: str, messages: list[Any], assistant: list[Any]) -> None:
        self.id = rollout
        self.messages = messages
        self.assistant_messages = assistant
        self.errors: list[Any] = []
        self.is_timeout = False
        self.stop_condition: str | None = None
        self.info: dict[str, Any] = {}


def verifiers_messages(calls: Calls, final: str) -> list[Any]:
    """The rollout's conversation as verifiers types (a prompt, assistant turns, tool results)."""
    import verifiers.v1 as vf

    messages: list[Any] = [vf.UserMessage(content="the task's briefing")]
    for number, turn in enumerate(turns(calls, final)):
        made = [
            vf.ToolCall(id=f"c{number}-{k}", name=tool, arguments=json.dumps(args))
            for k, (tool, args) in enumerate(turn)
        ]
        messages.append(vf.AssistantMessage(content=None, tool_calls=made))
        messages += [vf.ToolMessage(tool_call_id=c.id, content='{"ok": true}') for c in made]
    return messages


class Paths:
    """Each path's one-batch function: play PER_BATCH rollouts; its `Clock`."""

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

    def library(self) -> Clock:
        clock = Clock()
        clock.start()
        for sample in range(PER_BATCH):
            seed = sample_seed(0, TASK, sample)
            attempt = Attempt(self.world, self.task, seed=seed, sample=sample)
            for tool, args in self.calls:
                attempt.begin_turn()
                attempt.call(tool, args)
            clock.reward_starts()
            record = attempt.finish(self.final)
            slot = judge_record(record, self.world, self.task, Path(f"{sample}.json"))
            clock.reward_ends()
            self.paid("library", reward_of(slot, None).reward)
        return clock.stop()

    def bare(self) -> Clock:
        return self._saved("bare", keep=False)

    def saved(self) -> Clock:
        return self._saved("saved", keep=True)

    def _saved(self, name: str, *, keep: bool) -> Clock:
        self.batch += 1
        root = self.scratch / f"{name}-{self.batch}"
        revision = open_external_run(
            root,
            worlds={self.world.name: self.world},
            tasks=[self.task],
            kind="bench",
            label=name,
            samples=PER_BATCH,
            seed=0,
            overrides={},
        ).id
        commit = GroupCommit(root, lambda batch: None)
        clock = Clock()
        clock.start()
        for sample in range(PER_BATCH):
            seed = sample_seed(0, TASK, sample)
            attempt = Attempt(self.world, self.task, seed=seed, sample=sample, revision=revision)
            for tool, args in self.calls:
                attempt.begin_turn()
                attempt.call(tool, args)
            clock.reward_starts()
            if keep:  # the conversation, as a model-backed agent of `run` keeps it
                attempt.keep_transcript(self.transcript)
            record = attempt.finish(self.final)
            path = record_path(root, TASK, sample)
            item = finished(
                record, path, lambda r, p=path: judge_record(r, self.world, self.task, p)
            )
            clock.reward_ends()
            commit.add(item)
            self.paid(name, reward_of(item.result, None).reward)
        commit.flush()
        return clock.stop()

    def reward(self) -> Clock:
        clock = Clock()
        clock.start()
        for sample in range(PER_BATCH):
            clock.reward_starts()
            [paid] = reward([self.completion], task_id=[TASK], seed=[sample])
            clock.reward_ends()
            self.paid("reward", paid)
        return clock.stop()

    def _rollouts(self, name: str) -> Rollouts:
        """A fresh set of rollouts (a plan of PER_BATCH rows, one round): made before timing."""
        self.batch += 1
        out = self.scratch / f"{name}-{self.batch}"
        made = plan_rollouts("helpdesk", [TASK], PER_BATCH + 1, out=out, kind="bench", label=name)
        held = Rollouts(made)
        self._warm(held)
        return held

    @staticmethod
    def _warm(held: Rollouts) -> None:
        held.open("warm", f"{TASK}@{PER_BATCH}")  # makes the round's run directory
        held.seal("warm")

    def _closed(self, held: Rollouts, clock: Clock) -> Clock:
        """Every record durable (timed), then the round's counts written and let go (not)."""
        held.flush()
        wall, cpu = time.perf_counter(), time.process_time()
        held.close()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        self.closing.append(wall)
        return clock.stop().without(wall, cpu)

    def rollouts(self) -> Clock:
        held = self._rollouts("rollouts")
        clock = Clock()
        clock.start()
        for sample in range(PER_BATCH):
            rollout = f"r{sample}"
            held.open(rollout, f"{TASK}@{sample}")
            for tool, args in self.calls:
                held.call(rollout, tool, args)
            held.call(rollout, "finish", {"message": self.final})
            clock.reward_starts()
            result = held.seal(rollout, turns=CALLS, transcript=self.transcript)
            clock.reward_ends()
            self.paid("rollouts", result.reward)
        return self._closed(held, clock)

    def openenv(self) -> Clock:
        from openenv.core.env_server.mcp_types import CallToolAction

        from harness_world.integrations.openenv import WorldEnvironment

        held = self._rollouts("openenv")
        env = WorldEnvironment(held)
        finish = {"message": self.final}
        clock = Clock()
        clock.start()
        for sample in range(PER_BATCH):
            env.reset(seed=sample, task=TASK)
            for tool, args in self.calls:  # each action made as the server parses a message
                env.step(CallToolAction(tool_name=tool, arguments=args))
            clock.reward_starts()
            done = env.step(CallToolAction(tool_name="finish", arguments=finish))
            clock.reward_ends()
            self.paid("openenv", float(done.reward or 0.0))
        return self._closed(held, clock)

    def verifiers(self) -> Clock:
        return asyncio.run(self._verifiers())

    async def _verifiers(self) -> Clock:
        import verifiers.v1 as vf

        from harness_world.integrations import verifiers as adapter

        self.batch += 1
        config = adapter.WorldTasksetConfig(
            world="helpdesk",
            tasks=[TASK],
            seeds=PER_BATCH + 1,
            out=str(self.scratch / f"verifiers-{self.batch}"),
        )
        taskset = adapter.WorldTaskset(config)
        rows = taskset.load()
        held = taskset.rollouts
        self._warm(held)
        toolset = adapter.WorldToolset(vf.SharedToolsetConfig(), held)
        messages = verifiers_messages(self.calls, self.final)
        assistant = [m for m in messages if m.role == "assistant"]  # verifiers' work, not ours
        clock = Clock()
        clock.start()
        for sample in range(PER_BATCH):
            trace = VerifiersTrace(f"v{sample}", messages, assistant)
            row = rows[sample]
            await row.setup(trace, None)  # type: ignore[arg-type]
            token = adapter._ROUTE.set(trace.id)
            try:
                for tool, args in [*self.calls, ("finish", {"message": self.final})]:
                    await toolset.call_tool(tool, args)
            finally:
                adapter._ROUTE.reset(token)
            clock.reward_starts()
            await row.finalize(trace, None)  # type: ignore[arg-type]
            paid = await row.world(trace)  # type: ignore[arg-type]
            clock.reward_ends()
            self.paid("verifiers", paid)
        return self._closed(held, clock)


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


def measure(paths: Paths, names: list[str]) -> dict[str, list[Clock]]:
    """ROUNDS rounds; each runs one batch of every path, the order rotating round by round."""
    clocks: dict[str, list[Clock]] = {n: [] for n in names}
    for number in range(ROUNDS):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            clocks[name].append(getattr(paths, name)())
    return clocks


def per_round(clocks: dict[str, list[Clock]], base: str, cpu: bool) -> dict[str, float]:
    """Each path's median over rounds of its batch's time over ``base``'s in the same round."""
    out = {}
    for name, mine in clocks.items():
        ratios = [
            (m.cpu / b.cpu) if cpu else (m.wall / b.wall)
            for m, b in zip(mine, clocks[base], strict=True)
        ]
        out[name] = round(statistics.median(ratios), 3)
    return out


def figures_of(clocks: dict[str, list[Clock]], paths: Paths) -> dict[str, Any]:
    names = list(clocks)

    def median_ms(name: str, part: str) -> float:
        return statistics.median(getattr(c, part) for c in clocks[name]) / PER_BATCH * 1000

    wall = {n: median_ms(n, "wall") for n in names}
    return {
        "rollouts_per_s": {n: round(1000 / wall[n], 1) for n in names},
        "ms_per_rollout": {n: round(wall[n], 3) for n in names},
        "cpu_ms_per_rollout": {n: round(median_ms(n, "cpu"), 3) for n in names},
        "ratio_to_saved": per_round(clocks, "saved", cpu=False),
        "cpu_ratio_to_saved": per_round(clocks, "saved", cpu=True),
        "ratio_to_bare": per_round(clocks, "bare", cpu=False),
        "cpu_ratio_to_bare": per_round(clocks, "bare", cpu=True),
        "ratio_to_library": per_round(clocks, "library", cpu=False),
        "cpu_ratio_to_library": per_round(clocks, "library", cpu=True),
        "reward_ms": {n: round(median_ms(n, "reward_wall"), 3) for n in names},
        "reward_cpu_ms": {n: round(median_ms(n, "reward_cpu"), 3) for n in names},
        "rewards_paid": {n: sorted(set(v)) for n, v in paths.rewards.items()},
        "round_close_ms": round(statistics.median(paths.closing) * 1000, 1),
    }


def goals(figures: dict[str, Any], adapters: list[str]) -> dict[str, bool]:
    """Each goal, met or not, on the medians: ratios to the baseline, the reward's ms."""
    met = {}
    for name in adapters:
        base = BASELINE[name]
        met[f"{name}_cpu_ratio"] = figures[f"cpu_ratio_to_{base}"][name] <= GOAL_RATIO
        met[f"{name}_wall_ratio"] = figures[f"ratio_to_{base}"][name] <= GOAL_RATIO
    for name in ["reward", *adapters]:
        met[f"{name}_reward_cpu_ms"] = figures["reward_cpu_ms"][name] < GOAL_REWARD_MS
        met[f"{name}_reward_ms"] = figures["reward_ms"][name] < GOAL_REWARD_MS
    met["no_process_started"] = figures["processes_started"] == 0
    return met


def report(figures: dict[str, Any], names: list[str]) -> None:
    """One line per path, then the goals."""
    for name in names:
        base = BASELINE.get(name, "saved")
        print(
            f"{name:>9}: {figures['rollouts_per_s'][name]:7.1f} rollouts/s, "
            f"x{figures[f'cpu_ratio_to_{base}'][name]:.3f} CPU "
            f"(x{figures[f'ratio_to_{base}'][name]:.3f} wall) of {base}, "
            f"reward {figures['reward_cpu_ms'][name]:.3f} ms CPU "
            f"({figures['reward_ms'][name]:.3f} wall)"
        )
    print(
        f"processes started: {figures['processes_started']}; "
        f"load average {figures['load_average_1m']} on {figures['cpus']} cores"
    )
    print(
        "goals: "
        + ", ".join(f"{k} {'met' if v else 'MISSED'}" for k, v in figures["goals"].items())
    )


def main() -> None:
    world = hw.load_world("helpdesk")
    task = {t.id: t for t in hw.load_tasks("helpdesk")}[TASK]
    calls, final = rollout_calls(world, task)
    paths = Paths(world, task, calls, final)
    names = ["library", "bare", "saved", "reward", "rollouts"]
    missing = {n: why for n in ("openenv", "verifiers") if (why := unusable(n))}
    adapters = [n for n in ("openenv", "verifiers") if n not in missing]
    names += adapters
    for name in names:  # warm up: imports, caches
        getattr(paths, name)()
    paths.rewards.clear()
    paths.closing.clear()
    started: list[str] = []
    load_before = os.getloadavg()
    undo = counting_processes(started)
    try:
        clocks = measure(paths, names)
    finally:
        undo()
    figures: dict[str, Any] = {
        "task": TASK,
        "calls_per_rollout": len(calls),
        "rounds": ROUNDS,
        "rollouts_per_batch": PER_BATCH,
        **figures_of(clocks, paths),
        "processes_started": len(started),
        "not_measured": missing,
        "load_average_1m": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "cpus": os.cpu_count(),
    }
    figures["goals"] = goals(figures, ["rollouts", *adapters])
    report(figures, names)
    assert all(v == [1.0] for v in figures["rewards_paid"].values()), figures["rewards_paid"]
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
