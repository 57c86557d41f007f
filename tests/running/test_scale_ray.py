"""The Ray executor (issue 19): the same run directory and records as the local executors."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
from msgspec.structs import replace

import harness_world as hw
from harness_world.cli import main
from harness_world.evidence.binding import read_index
from harness_world.grading.verifier import SlotResult
from harness_world.running import oracle_agent
from harness_world.running.attempt import InfrastructureError
from harness_world.running.rayrun import RayTasksLost, RayUnavailable

pytestmark = pytest.mark.ray

TASKS = hw.load_tasks("helpdesk")[:2]
HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(
    not HAVE_RAY, reason="ray is not installed (extra [ray], part of [dev])"
)


@pytest.fixture(scope="module")
def local_ray():  # one local Ray instance for the module's tests
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _without_context(data: bytes) -> bytes:
    head, _, tail = data.partition(b'"context"')
    assert tail, "a record without a context"
    return head + tail.partition(b"\n },")[2]  # the context object is one indented block


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "records").rglob("*.json"))
    }


def _judged(slot: SlotResult, root: Path) -> SlotResult:
    """A slot as judged, without its run directory, latency and queue time (context)."""
    tries = [msgspec.structs.replace(t, path=t.path.replace(str(root), "")) for t in slot.tries]
    return msgspec.structs.replace(
        slot, path=slot.path.replace(str(root), ""), latency_s=0.0, queue_s=0.0, tries=tries
    )


@needs_ray
def test_ray_records_match_the_local_executor(tmp_path: Path, local_ray: object) -> None:
    agent = oracle_agent("helpdesk")
    here = hw.run(TASKS, agent, samples=2, out=tmp_path / "local")
    there = hw.run(TASKS, agent, samples=2, out=tmp_path / "ray", executor=hw.Ray())
    assert there.counts == here.counts and there.counts.valid == 4
    assert there.revision == here.revision
    local, remote = _files(tmp_path / "local"), _files(tmp_path / "ray")
    assert sorted(local) == sorted(remote) and len(local) == 4
    for name, data in local.items():
        assert remote[name] != data  # the context differs (another process)...
        assert _without_context(remote[name]) == _without_context(data)  # ...nothing else
    index_here, _ = read_index(tmp_path / "local")
    index_there, _ = read_index(tmp_path / "ray")
    # the same bindings, each line hashing the bytes its own file holds (context included)
    assert {k: replace(e, file_sha256="") for k, e in index_here.items()} == {
        k: replace(e, file_sha256="") for k, e in index_there.items()
    }
    for root, index in ((tmp_path / "local", index_here), (tmp_path / "ray", index_there)):
        for entry in index.values():
            data = (root / "records" / entry.task / f"{entry.sample}.json").read_bytes()
            assert entry.file_sha256 == hashlib.sha256(data).hexdigest()
    assert [_judged(s, tmp_path / "local") for s in here.slots] == [
        _judged(s, tmp_path / "ray") for s in there.slots
    ]


@needs_ray
def test_a_ray_run_resumes_what_is_missing(tmp_path: Path, local_ray: object) -> None:
    agent = oracle_agent("helpdesk")
    first = hw.run(TASKS[:1], agent, samples=2, out=tmp_path / "r", executor=hw.Ray())
    assert first.counts.valid == 2 and first.resumed == 0
    kept = _files(tmp_path / "r")
    (tmp_path / "r" / next(iter(kept))).unlink()
    again = hw.run(TASKS[:1], agent, samples=2, out=tmp_path / "r", executor=hw.Ray())
    assert again.resumed == 1 and again.counts.valid == 2
    assert sorted(_files(tmp_path / "r")) == sorted(kept)


@attrs.frozen
class FlakyOracle:
    """The oracle, whose first try of every odd sample fails in the infrastructure."""

    marks: str
    name: str = "flaky-oracle"

    def settings(self) -> dict[str, Any]:
        return {"kind": "test-flaky"}

    def run(self, attempt: hw.Attempt) -> str:
        mark = Path(self.marks) / f"{attempt.task.id}.{attempt.sample}"
        if attempt.sample % 2 and not mark.exists():
            mark.touch()
            raise InfrastructureError("the provider went away")
        return oracle_agent("helpdesk").run(attempt)


@needs_ray
def test_failed_tries_are_saved_here_and_counted_alike(tmp_path: Path, local_ray: object) -> None:
    (tmp_path / "m1").mkdir()
    (tmp_path / "m2").mkdir()
    here = hw.run(TASKS, FlakyOracle(str(tmp_path / "m1")), samples=2, out=tmp_path / "local")
    there = hw.run(
        TASKS, FlakyOracle(str(tmp_path / "m2")), samples=2, out=tmp_path / "ray", executor=hw.Ray()
    )
    assert here.counts == there.counts and there.counts.retried == 2 and there.counts.valid == 4
    local, remote = _files(tmp_path / "local"), _files(tmp_path / "ray")
    assert sorted(local) == sorted(remote) and len(local) == 6  # two failed tries kept
    for name, data in local.items():
        assert _without_context(remote[name]) == _without_context(data)
    assert [(s.retried, s.retry_cost) for s in here.slots] == [
        (s.retried, s.retry_cost) for s in there.slots
    ]


@needs_ray
def test_the_ray_executor_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    agent = oracle_agent("helpdesk")
    with pytest.raises(ValueError, match=r"runs with Serial\(\), not Ray\(address=None"):
        hw.run(TASKS, agent, out=tmp_path / "w", executor=hw.Ray(), track=hw.Sequential())
    assert not (tmp_path / "w").exists()
    with pytest.raises(ValueError, match="Ray: batch must be at least 1, not 0"):
        hw.Ray(batch=0)
    with pytest.raises(ValueError, match="Ray: address must name a cluster"):
        hw.Ray(address=" ")


def _without_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``ray`` look absent, installed or not."""
    real_import, real_find = importlib.import_module, importlib.util.find_spec

    def fake_import(name: str, package: str | None = None) -> Any:
        if name == "ray":
            raise ModuleNotFoundError("No module named 'ray'")
        return real_import(name, package)

    def fake_find(name: str, package: str | None = None) -> Any:
        return None if name == "ray" else real_find(name, package)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    monkeypatch.setattr(importlib.util, "find_spec", fake_find)


def test_without_ray_the_executor_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _without_ray(monkeypatch)
    with pytest.raises(RayUnavailable, match=r"harness_world\[ray\]"):
        hw.run(TASKS, oracle_agent("helpdesk"), out=tmp_path / "r", executor=hw.Ray())
    assert not (tmp_path / "r").exists()  # refused before the run directory is made
    with pytest.raises(ValueError, match="Ray: batch"):  # its parameters are checked first
        hw.Ray(batch=0)
    args = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id, "--out", str(tmp_path / "c")]
    assert main([*args, "--executor", "ray"]) == 2
    assert "pip install 'harness_world[ray]'" in capsys.readouterr().err


@needs_ray
def test_run_executor_ray_on_the_command_line_reports_alike(
    tmp_path: Path, local_ray: object, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id, TASKS[1].id]
    common += ["--samples", "2", "--json"]
    assert main([*common, "--out", str(tmp_path / "local")]) == 0
    assert main([*common, "--out", str(tmp_path / "ray"), "--executor", "ray"]) == 0
    capsys.readouterr()
    reports = []
    for name in ("local", "ray"):  # latency and queue time are context: they differ
        assert main(["report", str(tmp_path / name), "--full"]) == 0
        text = capsys.readouterr().out.replace(str(tmp_path / name), "RUN")
        text = re.sub(r"(latency \(context\)|queue time \(scheduled).*", "", text)
        # the process table's "latency s" column follows its 4-decimal "cost $" column
        reports.append(re.sub(r"(\d\.\d{4}\s+)\d+\.\d{3}", r"\1LATENCY", text))
    assert reports[0] == reports[1]
    assert "executed" in reports[0] and "of 4 passed" in reports[0]


def test_the_command_line_refuses_a_ray_run_it_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id, "--out", str(tmp_path / "r")]
    assert main([*args, "--address", "auto"]) == 2
    assert "--address needs --executor ray" in capsys.readouterr().err
    if HAVE_RAY:
        assert main([*args, "--executor", "ray", "--workers", "2"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --workers 2 and --executor ray: choose one way to execute")
        assert main([*args, "--executor", "ray", "--track", "sequential"]) == 2
        assert "--track sequential with --executor ray: " in capsys.readouterr().err
        assert main([*args, "--executor", "ray", "--ray-batch", "0"]) == 2
        assert "--executor ray: Ray: batch must be at least 1" in capsys.readouterr().err


@attrs.frozen
class DyingOracle:
    """The oracle, whose worker process dies on the first try of chosen samples (kill -9 of a
    Ray worker, as when a node goes away); with ``always``, on every try."""

    marks: str
    samples: tuple[int, ...] = (1,)
    always: bool = False
    name: str = "dying-oracle"

    def settings(self) -> dict[str, Any]:
        return {"kind": "test-dying"}

    def run(self, attempt: hw.Attempt) -> str:
        mark = Path(self.marks) / f"{attempt.task.id}.{attempt.sample}"
        if attempt.sample in self.samples and (self.always or not mark.exists()):
            mark.touch()
            os._exit(1)  # the worker process ends mid-attempt: no reply, no record
        return oracle_agent("helpdesk").run(attempt)


@needs_ray
def test_a_dead_worker_costs_its_attempts_one_more_go_nothing_else(
    tmp_path: Path, local_ray: object
) -> None:
    """Ray runs a task again when its worker dies; the dead try left no record."""
    (tmp_path / "m").mkdir()
    agent = DyingOracle(str(tmp_path / "m"))
    result = hw.run(TASKS, agent, samples=2, out=tmp_path / "ray", executor=hw.Ray(batch=1))
    assert result.counts.valid == result.counts.scheduled == 2 * len(TASKS)
    assert result.counts.retried == 0  # no record was left by the dead try: nothing to count
    assert not list((tmp_path / "ray").rglob("*.failed-*.json"))


@needs_ray
def test_a_worker_that_always_dies_is_given_up_and_resumable(
    tmp_path: Path, local_ray: object, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "m").mkdir()
    agent = DyingOracle(str(tmp_path / "m"), always=True)
    out = tmp_path / "ray"
    one = TASKS[:1]  # every death costs a new worker process: one task shows it
    with pytest.raises(RayTasksLost, match=r"attempt\(s\) lost with their Ray tasks"):
        hw.run(one, agent, samples=2, out=out, executor=hw.Ray(batch=1), retries=1)
    saved = sorted(p.name for p in out.rglob("*.json") if p.parent.parent.name == "records")
    assert saved == ["0.json"]  # sample 0 committed, no sample 1
    recovered = DyingOracle(str(tmp_path / "m"))  # the same agent; its marks are left now
    resumed = hw.run(one, recovered, samples=2, out=out, executor=hw.Ray(batch=1), retries=1)
    assert resumed.counts.valid == 2


def test_lost_ray_tasks_end_run_with_exit_1_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import harness_world.cli.run as run_command

    def lost(*_: object, **__: object) -> object:
        raise RayTasksLost("1 attempt(s) lost with their Ray tasks (x#1: WorkerCrashedError)")

    monkeypatch.setattr(run_command, "run", lost)
    argv = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id, "--out", str(tmp_path / "r")]
    assert main(argv) == 1
    assert "error: 1 attempt(s) lost with their Ray tasks" in capsys.readouterr().err
