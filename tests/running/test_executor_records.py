"""Every executor writes the serial run's records, byte for byte apart from ``context``.

Tasks reach worker processes by pickle (and Ray workers by msgpack); a struct that travelled
must encode as one built in place. Fault tasks carry a fault schedule into the record (the
digest covers it) and attack tasks carry an ``[authority]`` condition: these are the tasks run
here, for every built-in world with oracles. CI draws a few of each per world (hypothesis);
``HW_FULL=1`` runs every one.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.cli import main
from harness_world.evidence.binding import read_index
from harness_world.running import Executor
from harness_world.running.executors import Concurrent, Processes, Serial
from harness_world.running.rayrun import Ray
from tests.conftest import FULL, examples

WORLDS = ("helpdesk", "inventory", "payments")
FAULTS = {w: [t for t in hw.load_tasks(w) if t.faults] for w in WORLDS}
ATTACKS = {w: [t for t in hw.load_tasks(w) if t.authority is not None] for w in WORLDS}
PER_KIND = examples(2, 1000)  # tasks of each kind per world and example (all under HW_FULL)
HAVE_RAY = importlib.util.find_spec("ray") is not None


@pytest.fixture(scope="module")
def local_ray():  # type: ignore[no-untyped-def]
    if not HAVE_RAY:
        yield None
        return
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _executors(ray: object) -> list[Executor]:
    executors: list[Executor] = [Processes(2), Concurrent(2)]
    return executors + ([Ray()] if ray is not None else [])


def _without_context(data: bytes) -> bytes:
    head, _, tail = data.partition(b'"context"')
    assert tail, "a record without a context"
    return head + tail.partition(b"\n },")[2]  # the context object is one indented block


def _records(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): _without_context(p.read_bytes())
        for p in sorted((root / "records").rglob("*.json"))
    }


def _chosen(data: st.DataObject) -> dict[str, list[hw.Task]]:
    """Per world, the first ``PER_KIND`` of a drawn order of its fault and its attack tasks."""
    out = {}
    for world in WORLDS:
        by_id = {t.id: t for t in FAULTS[world] + ATTACKS[world]}
        picked: set[str] = set()
        for kind, pool in (("fault", FAULTS[world]), ("attack", ATTACKS[world])):
            order = data.draw(st.permutations([t.id for t in pool]), label=f"{world} {kind}")
            picked.update(order[:PER_KIND])
        out[world] = [by_id[i] for i in sorted(picked)]
    return out


def test_every_world_has_fault_and_attack_tasks_to_run() -> None:
    assert all(FAULTS[w] and ATTACKS[w] for w in WORLDS)
    assert sum(len(FAULTS[w]) for w in WORLDS) >= 15


@pytest.mark.skipif(HAVE_RAY, reason="ray is installed: the property runs it")
def test_ray_is_left_out_only_when_it_is_not_installed() -> None:
    pytest.skip("ray is not installed (extra [ray]): the property runs Processes and Concurrent")


@settings(max_examples=examples(2, 1) if not FULL else 1)
@given(data=st.data())
def test_every_executor_writes_the_serial_records_on_fault_and_attack_tasks(
    data: st.DataObject, local_ray: object
) -> None:
    chosen = _chosen(data)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for world, tasks in chosen.items():
            agent = hw.oracle_agent(world)
            serial = hw.run(tasks, agent, out=root / world / "serial", executor=Serial())
            here = _records(root / world / "serial")
            counts = serial.counts  # an oracle's prose is pending review, never failed
            assert len(here) == len(tasks) and counts.passed + counts.pending == len(tasks)
            bound = {k: e.digest for k, e in read_index(root / world / "serial")[0].items()}
            for executor in _executors(local_ray):
                out = root / world / type(executor).__name__
                other = hw.run(tasks, agent, out=out, executor=executor)
                assert other.revision == serial.revision
                assert _records(out) == here, f"{executor!r} on {world}"
                assert {k: e.digest for k, e in read_index(out)[0].items()} == bound
                assert main(["verify", str(out), "--require-pass"]) == 0, f"{executor!r}"
