"""Run throughput: attempts per second with the scripted (oracle) agent, saves one by one
against group commit, 1 and 2 workers, async concurrency 1 against 32, and the harness's own
overhead per tool call, measured side by side in one run.

Group commit (issue 19): records finished within 50 ms are made durable by one flush of the file
system instead of three fsyncs each; repeats alternate the two modes so load falls on both.
Async: a plan-replaying agent with ``async def run`` awaits 20 ms of simulated model latency
before every tool call (one model turn per call), at ``concurrency`` 1 and 32.

Overhead per call = (time of a full attempt through Attempt/drive/save/verify - time of the same
calls made directly on a bare session) / number of calls. Conditions: helpdesk small seed, every
task, oracle agent; records written to a temporary folder; 2-core machine.

    python bench/run.py [--quick]

Last line: one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness_world as hw
from harness_world.coverage import Script, ScriptContext, load_oracles, run_script
from harness_world.grading.task import Task
from harness_world.running import oracle_agent
from harness_world.running.run import run

QUICK = "--quick" in sys.argv
SAMPLES = 2 if QUICK else 10
REPEATS = 1 if QUICK else 3


class _WithLatency:
    """A picklable script wrapper: sleeps (standing in for model round trips), then solves."""

    def __init__(self, script: Script) -> None:
        self.script = script

    def __call__(self, ctx: ScriptContext) -> str:
        time.sleep(LATENCY_S)
        return self.script(ctx)


LATENCY_S = 0.02


class _AsyncPlans:
    """An async agent replaying each task's oracle calls, awaiting a model turn before each."""

    name = "oracle-plans+latency"

    def __init__(self, plans: dict[str, list[tuple[str, object]]]) -> None:
        self.plans = plans

    def settings(self) -> dict[str, object]:
        return {"kind": "bench-async", "latency_s": LATENCY_S}

    async def run(self, attempt: hw.Attempt) -> str:
        for tool, args in self.plans[attempt.task.id]:
            await asyncio.sleep(LATENCY_S)  # the model's round trip
            attempt.call(tool, args)
        return "done"


def _plans() -> tuple[list[Task], dict[str, list[tuple[str, object]]]]:
    world = hw.load_world("helpdesk")
    tasks = hw.load_tasks("helpdesk")
    oracles = load_oracles("helpdesk")
    plans = {
        t.id: [(c.tool, c.args) for c in run_script(world, t, oracles[t.id]).calls] for t in tasks
    }
    return tasks, plans


def attempts_per_second(
    workers: int, root: Path, tag: str, latency: bool = False, group: bool = True
) -> float:
    tasks = hw.load_tasks("helpdesk")
    agent = oracle_agent("helpdesk")
    if latency:
        scripts: dict[str, Script] = {k: _WithLatency(v) for k, v in agent.scripts.items()}
        agent = hw.ScriptedAgent(name="oracle+latency", scripts=scripts)
    rates = []
    for i in range(REPEATS):
        start = time.perf_counter()
        result = run(
            tasks,
            agent,
            samples=SAMPLES,
            out=root / f"{tag}-{i}",
            executor=hw.Processes(workers) if workers > 1 else hw.Serial(),
            group_commit=group,
        )
        elapsed = time.perf_counter() - start
        rates.append(result.counts.executed / elapsed)
    return statistics.median(rates)


def group_commit_rates(root: Path) -> tuple[float, float]:
    """Attempts/s with saves one by one and with group commit, repeats alternating."""
    alone, grouped = [], []
    for i in range(REPEATS + 1):
        alone.append(attempts_per_second(1, root, f"g0-{i}", group=False))
        grouped.append(attempts_per_second(1, root, f"g1-{i}", group=True))
    return statistics.median(alone), statistics.median(grouped)


def async_rates(root: Path) -> tuple[float, float, int]:
    """Attempts/s of the async agent at concurrency 1 and 32 (20 ms before every call).

    Each sample runs every task once, so rates over 1 and over 10 samples share a task mix;
    concurrency 32 needs many attempts in flight to show its rate.
    """
    tasks, plans = _plans()
    agent = _AsyncPlans(plans)
    rates = {}
    for concurrency, samples in ((1, 1), (32, 10)):
        start = time.perf_counter()
        result = run(
            tasks,
            agent,
            samples=samples,
            out=root / f"a{concurrency}",
            executor=hw.Concurrent(concurrency),
        )
        rates[concurrency] = result.counts.executed / (time.perf_counter() - start)
        assert result.counts.valid == result.counts.scheduled, result.counts
    return rates[1], rates[32], len(tasks) * 11


def fsync_ms(root: Path) -> float:
    """Median time to write and fsync a 4 kB file here: what group commit saves depends on it."""
    times = []
    for i in range(40):
        start = time.perf_counter()
        with open(root / f"fsync-{i}", "wb") as handle:
            handle.write(b"x" * 4096)
            handle.flush()
            os.fsync(handle.fileno())
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def reexecution(world: hw.World, records: list[hw.Record]) -> None:
    """Replay's own re-execution alone: each recorded call run again on a fresh session, in
    replay's raw mode (no argument copy, results and images left as JSON), not compared."""
    for record in records:
        session = world.open_session(record.seed)
        for call in record.calls:
            session._run(call.tool, call.args, raw=True)


def overhead_per_call() -> tuple[float, float, float, int]:
    """Per tool call: the bare session call, attempt + record + replay + grade, and replay's
    re-execution alone, each the median of rounds that alternate the three (one statistic
    for all three, so that noise does not move their difference one way)."""
    world = hw.load_world("helpdesk")
    tasks = hw.load_tasks("helpdesk")
    oracles = load_oracles("helpdesk")
    records = [run_script(world, t, oracles[t.id]) for t in tasks]
    plans = [(t, [(c.tool, c.args) for c in r.calls]) for t, r in zip(tasks, records, strict=True)]
    calls = sum(len(p) for _, p in plans)
    bare, full, reexec = [], [], []
    for _ in range(5 if QUICK else 20):
        start = time.perf_counter()
        for _task, plan in plans:
            session = world.open_session()
            for tool, args in plan:
                session.call(tool, args)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        for task, plan in plans:
            attempt = hw.Attempt(world, task)
            for tool, args in plan:
                attempt.call(tool, args)
            record = attempt.finish("done")
            hw.verify(record, world=world, task=task)
        full.append(time.perf_counter() - start)
        start = time.perf_counter()
        reexecution(world, records)
        reexec.append(time.perf_counter() - start)
    return (
        statistics.median(bare) / calls,
        statistics.median(full) / calls,
        statistics.median(reexec) / calls,
        calls,
    )


def main() -> None:
    hw.load_world("helpdesk")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        alone, grouped = group_commit_rates(root)
        async_1, async_32, async_attempts = async_rates(root)
        one = attempts_per_second(1, root, "w1")
        two = attempts_per_second(2, root, "w2")
        slow_one = attempts_per_second(1, root, "s1", latency=True)
        slow_two = attempts_per_second(2, root, "s2", latency=True)
        fsync = fsync_ms(root)
    bare, full, reexec, calls = overhead_per_call()
    figures = {
        "attempts_per_s_1_worker_saves_one_by_one": round(alone, 1),
        "attempts_per_s_1_worker_group_commit": round(grouped, 1),
        "ratio_group_commit_over_one_by_one": round(grouped / alone, 3),
        "attempts_per_s_async_concurrency_1_20ms_per_turn": round(async_1, 2),
        "attempts_per_s_async_concurrency_32_20ms_per_turn": round(async_32, 2),
        "ratio_async_32_over_1": round(async_32 / async_1, 3),
        "async_attempts": async_attempts,
        "overhead_over_bare_call": round((full - bare) / bare, 3),
        "attempts_per_s_1_worker": round(one, 1),
        "attempts_per_s_2_workers": round(two, 1),
        "ratio_2_over_1_workers": round(two / one, 3),
        "attempts_per_s_1_worker_20ms_latency": round(slow_one, 1),
        "attempts_per_s_2_workers_20ms_latency": round(slow_two, 1),
        "ratio_2_over_1_workers_20ms_latency": round(slow_two / slow_one, 3),
        "tool_call_us_bare_session": round(bare * 1e6, 2),
        "tool_call_us_with_attempt_record_replay_grade": round(full * 1e6, 2),
        "harness_overhead_us_per_call": round((full - bare) * 1e6, 2),
        "calls_per_task_set": calls,
        "fsync_ms_median": round(fsync, 3),
        "replay_reexecution_us_per_call": round(reexec * 1e6, 2),
        "overhead_beyond_reexecution_over_bare_call": round((full - bare - reexec) / bare, 3),
    }
    print(
        f"1 worker, attempts/s: saves one by one {alone:.1f}, group commit {grouped:.1f} "
        f"(x{grouped / alone:.2f}; a 4 kB write + fsync here takes {fsync:.2f} ms, median)"
    )
    print(
        f"async agent, {LATENCY_S * 1000:.0f} ms before every tool call: concurrency 1 "
        f"{async_1:.2f}/s, concurrency 32 {async_32:.2f}/s (x{async_32 / async_1:.1f})"
    )
    print(
        f"attempts/s (run, save, verify, grade): 1 worker {one:.1f}, 2 workers {two:.1f} "
        f"(x{two / one:.2f})"
    )
    print(
        f"with {LATENCY_S * 1000:.0f} ms simulated model latency per attempt: 1 worker "
        f"{slow_one:.1f}, 2 workers {slow_two:.1f} (x{slow_two / slow_one:.2f})"
    )
    print(
        f"per tool call: bare session {bare * 1e6:.1f} us, with attempt + record + replay + grade "
        f"{full * 1e6:.1f} us -> harness overhead {(full - bare) * 1e6:.1f} us "
        f"(x{(full - bare) / bare:.2f} the bare call); of it, replay's re-execution alone "
        f"{reexec * 1e6:.1f} us, the rest (seal, compare, digest, grade) "
        f"x{(full - bare - reexec) / bare:.2f} the bare call"
    )
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
