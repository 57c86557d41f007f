"""The Ray executor against the local ones: attempts and verifications per second, side by side.

A local Ray instance (``ray.init(num_cpus=2)``, started before timing) against 1 worker in this
process and 2 worker processes; the oracle agent on every helpdesk task, without and with 20 ms
of simulated model latency per attempt. Every run must end with every attempt valid, and the
Ray run's records must equal the local run's apart from their context. Then batching: a Ray
run with one attempt per Ray task against the default batches; and ``verify``: one run
directory's records verified here (`scan_run`) against verified on Ray (`RayVerifier.scan`),
one record per Ray task and in default batches, every scan equal to the local one.

    python bench/ray_executor.py [--quick]

Needs the extra ``[ray]``. Last line: one JSON object.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import ray

import harness_world as hw
from harness_world.coverage import Script, ScriptContext, load_oracles
from harness_world.running.agents import ScriptedAgent
from harness_world.running.rayverify import WorldChoice, ray_verifier
from harness_world.running.rundir import scan_run

QUICK = "--quick" in sys.argv
SAMPLES = 2 if QUICK else 8
VERIFY_SAMPLES = 8 if QUICK else 40
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


def _rate(out: Path, agent: ScriptedAgent, **how: object) -> tuple[float, hw.RunResult]:
    tasks = hw.load_tasks("helpdesk")
    start = time.perf_counter()
    result = hw.run(tasks, agent, samples=SAMPLES, out=out, **how)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - start
    assert result.counts.valid == len(tasks) * SAMPLES, result.counts
    return len(tasks) * SAMPLES / elapsed, result


def _body(path: str) -> bytes:
    data = Path(path).read_bytes()
    head, _, tail = data.partition(b'"context"')
    return head + tail.partition(b"\n },")[2]


def _batching(tmp: Path) -> dict[str, float]:
    """Ray runs: one attempt per Ray task against the default batches."""
    agent = _agent(False)
    hw.run(hw.load_tasks("helpdesk"), agent, out=tmp / "warm", executor="ray")  # workers up
    one, single = _rate(tmp / "batch-1", agent, executor="ray", ray_batch=1)
    batched, default = _rate(tmp / "batch-default", agent, executor="ray")
    assert [_body(s.path) for s in single.slots] == [_body(s.path) for s in default.slots]
    print(
        f"ray run attempts/s: 1 per Ray task {one:7.1f}  default batches {batched:7.1f}  "
        f"x{batched / one:.2f}"
    )
    return {"run_ray_batch_1": one, "run_ray_batched": batched}


def _verification(tmp: Path) -> dict[str, float]:
    """One run directory verified here and on Ray (one record per Ray task, and batched)."""
    tasks = hw.load_tasks("helpdesk")
    out = tmp / "to-verify"
    hw.run(tasks, _agent(False), samples=VERIFY_SAMPLES, out=out)
    records = len(tasks) * VERIFY_SAMPLES
    scan_run(out, tasks, write_counts=False)  # worlds loaded and cached: timing starts warm
    start = time.perf_counter()
    local = scan_run(out, tasks, write_counts=False)
    figures = {"verify_local": records / (time.perf_counter() - start)}
    assert local.counts.passed == records, local.counts
    by_id = {t.id: t for t in tasks}
    for key, batch in (("verify_ray_batch_1", 1), ("verify_ray_batched", None)):
        with ray_verifier(address=None, choice=WorldChoice(), tasks=by_id, batch=batch) as remote:
            remote.scan(out)  # every worker warm (its worlds loaded), as locally
            start = time.perf_counter()
            scan = remote.scan(out)
            figures[key] = records / (time.perf_counter() - start)
        assert scan == local
    print(
        f"verify records/s ({records}): here {figures['verify_local']:7.1f}  "
        f"ray 1 per task {figures['verify_ray_batch_1']:7.1f}  "
        f"ray batched {figures['verify_ray_batched']:7.1f}  "
        f"ray batched / here x{figures['verify_ray_batched'] / figures['verify_local']:.2f}"
    )
    return figures


def main() -> None:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        figures |= _batching(Path(tmp))
        figures |= _verification(Path(tmp))
        for latency in (False, True):
            agent = _agent(latency)
            key = "latency" if latency else "plain"
            one, local = _rate(Path(tmp) / f"{key}-1", agent)
            two, _ = _rate(Path(tmp) / f"{key}-2", agent, workers=2)
            on_ray, remote = _rate(Path(tmp) / f"{key}-ray", agent, executor="ray")
            assert [_body(s.path) for s in local.slots] == [_body(s.path) for s in remote.slots]
            figures |= {f"{key}_1_worker": one, f"{key}_2_workers": two, f"{key}_ray": on_ray}
            print(
                f"{key:8} attempts/s: 1 worker {one:7.1f}  2 workers {two:7.1f}  "
                f"ray (2 CPUs) {on_ray:7.1f}  ray / 1 worker x{on_ray / one:.2f}"
            )
    ray.shutdown()
    figures = {k: round(v, 1) for k, v in figures.items()}
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
