"""Run throughput: attempts per second with the scripted (oracle) agent at 1 and 2 workers,
and the harness's own overhead per tool call, measured side by side in one run.

Without model latency an attempt costs about 3 ms, two thirds of it the two fsyncs of a durable
save, so a second worker gains little on one disk; with (simulated) model latency the workers
overlap waiting and the ratio approaches 2.

Overhead per call = (time of a full attempt through Attempt/drive/save/verify - time of the same
calls made directly on a bare session) / number of calls. Conditions: helpdesk small seed, every
task, oracle agent; records written to a temporary folder; 2-core machine.

    python bench/run.py [--quick]

Last line: one JSON object.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness_world as hw
from harness_world.coverage import Script, ScriptContext, load_oracles, run_script
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


def attempts_per_second(workers: int, root: Path, tag: str, latency: bool = False) -> float:
    tasks = hw.load_tasks("helpdesk")
    agent = oracle_agent("helpdesk")
    if latency:
        scripts: dict[str, Script] = {k: _WithLatency(v) for k, v in agent.scripts.items()}
        agent = hw.ScriptedAgent(name="oracle+latency", scripts=scripts)
    rates = []
    for i in range(REPEATS):
        start = time.perf_counter()
        result = run(tasks, agent, samples=SAMPLES, out=root / f"{tag}-{i}", workers=workers)
        elapsed = time.perf_counter() - start
        rates.append(result.counts.executed / elapsed)
    return statistics.median(rates)


def overhead_per_call() -> tuple[float, float, int]:
    world = hw.load_world("helpdesk")
    tasks = hw.load_tasks("helpdesk")
    oracles = load_oracles("helpdesk")
    plans = [
        (t, [(c.tool, c.args) for c in run_script(world, t, oracles[t.id]).calls]) for t in tasks
    ]
    calls = sum(len(p) for _, p in plans)
    bare, full = [], []
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
    return statistics.median(bare) / calls, statistics.median(full) / calls, calls


def main() -> None:
    hw.load_world("helpdesk")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        one = attempts_per_second(1, root, "w1")
        two = attempts_per_second(2, root, "w2")
        slow_one = attempts_per_second(1, root, "s1", latency=True)
        slow_two = attempts_per_second(2, root, "s2", latency=True)
    bare, full, calls = overhead_per_call()
    figures = {
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
    }
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
        f"{full * 1e6:.1f} us -> harness overhead {(full - bare) * 1e6:.1f} us"
    )
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
