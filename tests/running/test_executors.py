"""Executors: each checks its own parameters, and every one makes the same run directory."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.cli import main
from harness_world.running import Executor, Track
from harness_world.running.attempt import InfrastructureError
from harness_world.running.crossed import CrossedConfig, run_crossed
from harness_world.running.executors import Concurrent, Processes, Serial
from harness_world.running.rayrun import Ray
from harness_world.running.reader import RunReader
from harness_world.running.sequential import Sequential
from harness_world.running.tracks import Fresh, track_named

TASKS = hw.load_tasks("helpdesk")[:3]
ORACLE = hw.oracle_agent("helpdesk")
HAVE_RAY = importlib.util.find_spec("ray") is not None
COUNTED = {Processes: "workers", Concurrent: "attempts"}


@given(st.integers(min_value=1, max_value=10_000))
def test_a_count_of_at_least_one_is_kept(n: int) -> None:
    assert Processes(n).workers == n and Concurrent(n).attempts == n
    assert Concurrent(n).workers == 1 and Serial().workers == 1  # in this process


@pytest.mark.parametrize("kind", [Processes, Concurrent])
@given(n=st.integers(max_value=0))
def test_a_count_below_one_is_refused_naming_the_parameter(kind: Any, n: int) -> None:
    with pytest.raises(ValueError, match=rf"^{kind.__name__}: {COUNTED[kind]} must be at least 1"):
        kind(n)


@pytest.mark.parametrize("kind", [Processes, Concurrent])
@given(value=st.one_of(st.booleans(), st.floats(), st.text(), st.none()))
def test_a_count_that_is_not_an_int_is_refused(kind: Any, value: object) -> None:
    with pytest.raises(TypeError, match=rf"^{kind.__name__}: {COUNTED[kind]} must be an int"):
        kind(value)


@given(batch=st.integers(max_value=0))
def test_a_ray_batch_below_one_is_refused_before_ray_is_looked_for(batch: int) -> None:
    with pytest.raises(ValueError, match=r"^Ray: batch must be at least 1"):
        Ray(batch=batch)


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_ray_address_is_refused(address: str) -> None:
    with pytest.raises(ValueError, match=r"^Ray: address must name a cluster"):
        Ray(address=address)
    with pytest.raises(TypeError, match=r"^Ray: address must be a str"):
        Ray(address=6379)  # type: ignore[arg-type]


@pytest.mark.skipif(not HAVE_RAY, reason="ray is not installed (extra [ray])")
def test_ray_keeps_what_it_was_given() -> None:
    assert Ray() == Ray(address=None, batch=None) and Ray().workers == 1
    assert Ray(address="auto", batch=4).batch == 4


def test_executors_are_frozen_values() -> None:
    assert Serial() == Serial() and Processes(2) == Processes(2) != Processes(3)
    assert len({Serial(), Processes(2), Processes(2), Concurrent(2)}) == 3
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Processes(2).workers = 3  # type: ignore[misc]
    executors: list[Executor] = [Serial(), Processes(1), Concurrent(1)]
    assert [e.workers for e in executors] == [1, 1, 1]


def test_a_track_names_itself_and_says_which_executors_it_runs_with() -> None:
    tracks: list[Track] = [track_named("fresh"), track_named("sequential")]
    assert tracks == [Fresh(), Sequential()]
    with pytest.raises(ValueError, match="'fresh' or 'sequential'"):
        track_named("longitudinal")
    for executor in (Serial(), Processes(2), Concurrent(2)):
        Fresh().check(executor)
    Sequential().check(Serial())
    with pytest.raises(ValueError, match=r"runs with Serial\(\), not Concurrent\(attempts=2\)"):
        Sequential().check(Concurrent(2))
    assert Fresh().pin({"a": 1}) == {"a": 1}
    assert Sequential().pin({"a": 1}) == {"a": 1, "track": "sequential"}


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
        return ORACLE.run(attempt)


def _without_context(data: bytes) -> bytes:
    head, _, tail = data.partition(b'"context"')
    assert tail, "a record without a context"
    return head + tail.partition(b"\n },")[2]  # the context object is one indented block


def _unhashed(line: bytes) -> bytes:
    """An index line without the hash of its record file's bytes (they hold the context)."""
    entry = json.loads(line)
    assert len(entry.pop("file_sha256")) == 64
    return json.dumps(entry, sort_keys=True).encode() + b"\n"


def _directory(root: Path) -> dict[str, bytes]:
    """Every file of a run directory that is not context, records without their context."""
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = str(path.relative_to(root))
        if name.startswith("records/"):
            files[name] = _without_context(path.read_bytes())
        elif name == "index.jsonl":  # in the order attempts ended; a resume binds again
            files[name] = b"".join(
                sorted({_unhashed(line) for line in path.read_bytes().splitlines()})
            )
        elif name in ("pins.json", "counts.json", "sequence.json"):
            files[name] = path.read_bytes()
    return files


EXECUTORS = [Serial(), Processes(2), Concurrent(2)]


@pytest.mark.parametrize("executor", EXECUTORS[1:], ids=repr)
def test_every_executor_makes_the_serial_run_directory(executor: Executor, tmp_path: Path) -> None:
    (tmp_path / "m0").mkdir()
    (tmp_path / "m1").mkdir()
    serial = hw.run(TASKS, FlakyOracle(str(tmp_path / "m0")), samples=2, out=tmp_path / "s")
    other = hw.run(
        TASKS, FlakyOracle(str(tmp_path / "m1")), samples=2, out=tmp_path / "o", executor=executor
    )
    assert other.revision == serial.revision  # the executor is context
    assert other.counts == serial.counts and serial.counts.retried == len(TASKS)
    here, there = _directory(tmp_path / "s"), _directory(tmp_path / "o")
    assert len(here) == 3 * len(TASKS) + 3  # two records and one failed try per task
    assert here == there
    for slot in other.slots:
        assert hw.load_record(slot.path).context.workers == executor.workers


@pytest.mark.parametrize("executor", EXECUTORS, ids=repr)
def test_a_run_begun_by_one_executor_is_resumed_by_another(
    executor: Executor, tmp_path: Path
) -> None:
    hw.run(TASKS, ORACLE, samples=2, out=tmp_path / "whole")
    out = tmp_path / "r"
    hw.run(TASKS, ORACLE, samples=2, out=out, executor=Processes(2))
    for path in sorted((out / "records").rglob("*.json"))[::2]:
        path.unlink()
    resumed = hw.run(TASKS, ORACLE, samples=2, out=out, executor=executor)
    assert resumed.resumed == len(TASKS) and resumed.counts.valid == 2 * len(TASKS)
    assert _directory(out) == _directory(tmp_path / "whole")


class LoopBound:
    """An async agent that keeps the event loop its first attempt ran on (as a client does)."""

    name = "loop-bound"

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None

    def settings(self) -> dict[str, Any]:
        return {"kind": "test-loop-bound"}

    async def run(self, attempt: hw.Attempt) -> str:
        loop = asyncio.get_running_loop()
        if self.loop not in (None, loop):
            raise RuntimeError("attached to a different loop")
        self.loop = loop
        await asyncio.sleep(0)
        return ORACLE.run(attempt)  # type: ignore[arg-type]


def test_serial_awaits_an_async_agent_on_one_loop_for_the_whole_run(tmp_path: Path) -> None:
    result = hw.run(TASKS, LoopBound(), samples=2, out=tmp_path / "r")
    assert result.counts.by_outcome == {"completed": 6}
    sequential = hw.run(TASKS, LoopBound(), out=tmp_path / "q", track=Sequential())
    assert sequential.counts.by_outcome == {"completed": 3}


RUN = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--workers", "2", "--concurrency", "2"], "--workers 2 and --concurrency 2: choose one"),
        (["--workers", "2", "--executor", "ray"], "--workers 2 and --executor ray: choose one"),
        (["--concurrency", "3", "--executor", "ray"], "--concurrency 3 and --executor ray:"),
        (["--workers", "0"], "--workers 0: Processes: workers must be at least 1, not 0"),
        (["--concurrency", "-1"], "--concurrency -1: Concurrent: attempts must be at least 1"),
        (["--address", "auto"], "--address needs --executor ray"),
        (["--ray-batch", "2"], "--ray-batch needs --executor ray"),
        (["--track", "sequential", "--workers", "2"], "--track sequential with --workers 2: the"),
        (["--track", "sequential", "--concurrency", "2"], "it runs with Serial(), not Concurrent"),
        (["--crossed", "x.json", "--track", "sequential"], "--crossed runs every configuration"),
    ],
)
def test_conflicting_execution_flags_are_one_usage_error(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*RUN, "--out", str(tmp_path / "r"), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "flags", [[], ["--workers", "2"], ["--concurrency", "2"], ["--track", "sequential"]]
)
def test_each_executor_flag_alone_runs(
    flags: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*RUN, "--samples", "2", "--json", "--out", str(tmp_path / "r"), *flags]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("executor", EXECUTORS[1:], ids=repr)
def test_a_crossed_run_makes_the_same_directories_under_any_executor(
    executor: Executor, tmp_path: Path
) -> None:
    without = hw.ScriptedAgent(
        name="B", scripts={k: v for k, v in ORACLE.scripts.items() if k != TASKS[0].id}
    )
    configs = [
        (CrossedConfig(name="A", harness="A", profile="p"), ORACLE),
        (CrossedConfig(name="B", harness="B", profile="p"), without),
    ]
    serial = run_crossed(configs, TASKS, out=tmp_path / "s", samples=2)
    other = run_crossed(configs, TASKS, out=tmp_path / "o", samples=2, executor=executor)
    assert {n: r.counts for n, r in other.runs.items()} == {
        n: r.counts for n, r in serial.runs.items()
    }
    assert other.runs["B"].counts.failed == 2
    for name in ("A", "B"):
        assert _directory(tmp_path / "o" / name) == _directory(tmp_path / "s" / name)


def test_worker_processes_make_records_that_replay_for_tasks_with_faults(tmp_path: Path) -> None:
    """A task's fault schedule pickled into a worker kept equal but not identical defaults,
    which msgspec then wrote into the record: every record of a fault task was ungraded."""
    faulted = [t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.reply_lost_response"]
    assert faulted and faulted[0].faults
    result = hw.run(faulted, ORACLE, samples=3, out=tmp_path / "run", executor=Processes(2))
    assert result.counts.valid == 3 and result.counts.passed + result.counts.pending == 3
    scan = RunReader.of(faulted).read(tmp_path / "run")
    assert [s.evidence for s in scan.slots] == ["verified"] * 3


def test_worker_processes_send_units_in_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Units go to the workers a batch per message, and every slot is still made once."""
    from harness_world.running import executors

    sent: list[int] = []
    real = executors.batches

    def counting(items: int, workers: int, most: int = 64) -> int:
        size = real(items, workers, most)
        sent.append(size)
        return size

    monkeypatch.setattr(executors, "batches", counting)
    result = hw.run(TASKS, ORACLE, samples=20, out=tmp_path / "run", executor=Processes(2))
    assert sent and sent[0] > 1  # 60 units, several per message
    assert result.counts.valid == result.counts.scheduled == 60
