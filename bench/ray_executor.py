"""The Ray executor against the local ones: attempts and verifications per second, side by side.

A local Ray instance (``ray.init(num_cpus=2)``, started before timing) against 1 worker in this
process and 2 worker processes; the oracle agent on every helpdesk task, without and with 20 ms
of simulated model latency per attempt. Every run must end with every attempt valid, and the
Ray run's records must equal the local run's apart from their context. Then batching: a Ray
run with one attempt per Ray task against the default batches; and ``verify``: one run
directory's records verified here (`RunReader.read`) against verified on Ray (its mapper),
one record per Ray task and in default batches, every scan equal to the local one. Those two
comparisons alternate their ways three times and keep each way's best.

    python bench/ray_executor.py [--quick]

Needs the extra ``[ray]``. Last line: one JSON object.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import ray

import harness_world as hw
from harness_world.coverage import Script, ScriptContext, load_oracles
from harness_world.grading.verifier import Verifier
from harness_world.running.agents import ScriptedAgent
from harness_world.running.rayverify import ray_verifier
from harness_world.running.reader import RunReader
from harness_world.running.rundir import RunScan

QUICK = "--quick" in sys.argv
SAMPLES = 2 if QUICK else 8
VERIFY_SAMPLES = 8 if QUICK else 40
REPEATS = 1 if QUICK else 3  # alternating repeats of the batching and verify figures; best kept
LATENCY_S = 0.02


class _WithLatency:
    """A picklable script wrapper: sleeps (standing in for a model round trip), then solves."""

    def __init__(self, script: Script) -> None:
        self.script = script

    def __call__(self, ctx: ScriptContext) -> str:
        time.sleep(LATENCY_S)
        return self.script(ctx)


def _agent(latency: bool) -> ScriptedAgent:
    oracles = load_oracles("helpdesk")
    if latency:
        oracles = {k: _WithLatency(v) for k, v in oracles.items()}
    return ScriptedAgent(name=f"oracle{'+latency' if latency else ''}", scripts=oracles)


def _rate(
    out: Path, agent: ScriptedAgent, executor: hw.Serial | hw.Processes | hw.Ray
) -> tuple[float, hw.RunResult]:
    tasks = hw.load_tasks("helpdesk")
    start = time.perf_counter()
    result = hw.run(tasks, agent, samples=SAMPLES, out=out, executor=executor)
    elapsed = time.perf_counter() - start
    assert result.counts.valid == len(tasks) * SAMPLES, result.counts
    return len(tasks) * SAMPLES / elapsed, result


def _body(path: str) -> bytes:
    data = Path(path).read_bytes()
    head, _, tail = data.partition(b'"context"')
    return head + tail.partition(b"\n },")[2]


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def _parallelism() -> float:
    """How many of Ray's 2 CPUs were free: 2 busy Ray tasks' work over 1's, per wall second."""
    spin = ray.remote(num_cpus=1)(_spin)
    ray.get([spin.remote(10) for _ in range(4)])  # workers up
    start = time.perf_counter()
    ray.get(spin.remote(5_000_000))
    one = time.perf_counter() - start
    start = time.perf_counter()
    ray.get([spin.remote(5_000_000) for _ in range(2)])
    return 2 * one / (time.perf_counter() - start)


def _batching(tmp: Path) -> dict[str, float]:
    """Ray runs: one attempt per Ray task against the default batches, best of alternating runs."""
    agent = _agent(False)
    hw.run(hw.load_tasks("helpdesk"), agent, out=tmp / "warm", executor=hw.Ray())  # workers up
    best = {"run_ray_batch_1": 0.0, "run_ray_batched": 0.0}
    bodies = []
    for n in range(REPEATS):
        for key, batch in (("run_ray_batch_1", 1), ("run_ray_batched", None)):
            rate, result = _rate(tmp / f"{key}-{n}", agent, hw.Ray(batch=batch))
            best[key] = max(best[key], rate)
            bodies.append([_body(s.path) for s in result.slots])
    assert all(b == bodies[0] for b in bodies)
    one, batched = best["run_ray_batch_1"], best["run_ray_batched"]
    print(
        f"ray run attempts/s: 1 per Ray task {one:7.1f}  default batches {batched:7.1f}  "
        f"x{batched / one:.2f}"
    )
    return best


def _verification(tmp: Path) -> dict[str, float]:
    """One run directory verified here and on Ray (one record per Ray task, and batched)."""
    tasks = hw.load_tasks("helpdesk")
    out = tmp / "to-verify"
    hw.run(tasks, _agent(False), samples=VERIFY_SAMPLES, out=out)
    records = len(tasks) * VERIFY_SAMPLES
    reader = RunReader.of(tasks)
    local = reader.read(out)  # worlds loaded: timing starts warm
    assert local.counts.passed == records, local.counts
    by_id = {t.id: t for t in tasks}
    best = dict.fromkeys(("verify_local", "verify_ray_batch_1", "verify_ray_batched"), 0.0)
    with (
        ray_verifier(Verifier(tasks=by_id), address=None, batch=1) as single,
        ray_verifier(Verifier(tasks=by_id), address=None) as batched,
    ):
        ways: dict[str, Callable[[], RunScan]] = {
            "verify_local": lambda: reader.read(out),
            "verify_ray_batch_1": lambda: reader.read(out, mapper=single.map_slots),
            "verify_ray_batched": lambda: reader.read(out, mapper=batched.map_slots),
        }
        for way in ways.values():
            way()  # every worker warm (its worlds loaded), as here
        for _ in range(REPEATS):
            for key, way in ways.items():
                start = time.perf_counter()
                scan = way()
                best[key] = max(best[key], records / (time.perf_counter() - start))
                assert scan == local
    print(
        f"verify records/s ({records}): here {best['verify_local']:7.1f}  "
        f"ray 1 per task {best['verify_ray_batch_1']:7.1f}  "
        f"ray batched {best['verify_ray_batched']:7.1f}  "
        f"ray batched / here x{best['verify_ray_batched'] / best['verify_local']:.2f}"
    )
    return best


def main() -> None:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    figures: dict[str, float] = {"free_cpus": _parallelism()}
    print(f"Ray CPUs free (2 busy tasks' throughput over 1's): {figures['free_cpus']:.2f} of 2")
    with tempfile.TemporaryDirectory() as tmp:
        figures |= _batching(Path(tmp))
        figures |= _verification(Path(tmp))
        for latency in (False, True):
            agent = _agent(latency)
            key = "latency" if latency else "plain"
            one, local = _rate(Path(tmp) / f"{key}-1", agent, hw.Serial())
            two, _ = _rate(Path(tmp) / f"{key}-2", agent, hw.Processes(2))
            on_ray, remote = _rate(Path(tmp) / f"{key}-ray", agent, hw.Ray())
            assert [_body(s.path) for s in local.slots] == [_body(s.path) for s in remote.slots]
            figures |= {f"{key}_1_worker": one, f"{key}_2_workers": two, f"{key}_ray": on_ray}
            print(
                f"{key:8} attempts/s: 1 worker {one:7.1f}  2 workers {two:7.1f}  "
                f"ray (2 CPUs) {on_ray:7.1f}  ray / 1 worker x{on_ray / one:.2f}"
            )
    ray.shutdown()
    figures = {k: round(v, 2 if k == "free_cpus" else 1) for k, v in figures.items()}
    figures["plain_ray_over_1"] = round(figures["plain_ray"] / figures["plain_1_worker"], 2)
    figures["latency_ray_over_1"] = round(figures["latency_ray"] / figures["latency_1_worker"], 2)
    figures["run_batched_over_batch_1"] = round(
        figures["run_ray_batched"] / figures["run_ray_batch_1"], 2
    )
    figures["verify_ray_over_local"] = round(
        figures["verify_ray_batched"] / figures["verify_local"], 2
    )
    figures["verify_batched_over_batch_1"] = round(
        figures["verify_ray_batched"] / figures["verify_ray_batch_1"], 2
    )
    figures["samples"] = SAMPLES
    figures["verify_records"] = len(hw.load_tasks("helpdesk")) * VERIFY_SAMPLES
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
