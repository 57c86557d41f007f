"""Group commit (issue 19): batched durability, write-ahead index, nothing counted early."""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.evidence.binding import read_index
from harness_world.grading import verify_file
from harness_world.grading.verifier import judge_record
from harness_world.running import oracle_agent
from harness_world.running.commit import Finished, GroupCommit, finished
from harness_world.running.rundir import record_path
from tests.conftest import REPO
from tests.running.test_runs import ORIGINAL_TASKS, SLOW_SCRIPTS

commit_module = importlib.import_module("harness_world.running.commit")
TASKS = hw.load_tasks("helpdesk")[:3]


def _items(root: Path) -> list[Finished]:
    world = hw.load_world("helpdesk")
    out = []
    for sample, task in enumerate(TASKS):
        attempt = hw.Attempt(world, task, seed=sample, sample=sample, revision="r")
        record = attempt.finish("done")
        path = record_path(root, task.id, sample)
        out.append(finished(record, path, lambda r: judge_record(r, world, task, path)))
    return out


def test_a_batch_is_reported_once_durable_with_the_index_written_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_replace = os.replace

    def flush(root: Path, paths: list[Path]) -> None:
        events.append("flush:" + ",".join(sorted(p.name[:5] for p in paths)))

    def replace(src: object, dst: object) -> None:
        index_lines = len((tmp_path / "index.jsonl").read_bytes().splitlines())
        events.append(f"rename(index={index_lines})")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(commit_module, "_flush_file_system", flush)
    monkeypatch.setattr(commit_module.os, "replace", replace)
    reported: list[Sequence[Finished]] = []
    commit = GroupCommit(tmp_path, reported.append, window_s=3600)
    items = _items(tmp_path)
    for item in items:
        commit.add(item)
    assert reported == [] and events == []  # nothing durable, nothing counted
    commit.flush()
    assert reported == [items] and commit.batches == 1
    # the index (3 lines) and the data flushed once, before the first rename
    assert events[0].startswith("flush:") and "index" in events[0]
    assert events[1:4] == ["rename(index=3)"] * 3
    assert events[4].startswith("flush:") and len(events) == 5
    for item in items:
        assert item.path.read_bytes() == item.data
    assert not list(tmp_path.rglob("*.tmp"))


def test_group_commit_writes_the_same_files_as_saving_one_by_one(tmp_path: Path) -> None:
    agent = oracle_agent("helpdesk")
    one = hw.run(TASKS, agent, samples=2, out=tmp_path / "one", group_commit=False)
    many = hw.run(TASKS, agent, samples=2, out=tmp_path / "many")
    assert one.counts == many.counts and many.counts.passed == 6
    for slot in many.slots:
        a = hw.load_record(slot.path)
        b = hw.load_record(slot.path.replace(str(tmp_path / "many"), str(tmp_path / "one")))
        assert msgspec.structs.replace(a, context=b.context) == b
    index, _ = read_index(tmp_path / "many")
    assert len(index) == 6
    lines = (tmp_path / "many" / "index.jsonl").read_bytes().splitlines()
    assert len(lines) == 6  # one line per record: nothing double


def test_a_failed_write_commits_the_records_before_it_then_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = commit_module._write_temporary
    calls: list[int] = []

    def second_fails(item: Finished) -> Path:
        calls.append(1)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(item)

    monkeypatch.setattr(commit_module, "_write_temporary", second_fails)
    reported: list[Sequence[Finished]] = []
    commit = GroupCommit(tmp_path, reported.append, window_s=3600)
    items = _items(tmp_path)
    for item in items:
        commit.add(item)
    with pytest.raises(OSError, match="No space"):
        commit.flush()
    assert reported == [items[:1]]
    assert items[0].path.is_file() and not items[1].path.exists() and not items[2].path.exists()
    assert not list(tmp_path.rglob("*.tmp"))


def test_resuming_removes_temporaries_a_killed_batch_left(tmp_path: Path) -> None:
    agent = oracle_agent("helpdesk")
    out = tmp_path / "r"
    hw.run(TASKS[:1], agent, out=out)
    stray = record_path(out, TASKS[0].id, 0).with_name(".0.json.abc.tmp")
    stray.write_bytes(b"{half")
    result = hw.run(TASKS[:1], agent, out=out)
    assert result.resumed == 1 and not stray.exists()


def test_a_batch_is_reported_only_after_the_next_flush_made_its_renames_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[list[str]] = []

    def flush(root: Path, paths: list[Path]) -> None:
        flushed.append(sorted(p.name for p in paths))

    monkeypatch.setattr(commit_module, "_flush_file_system", flush)
    reported: list[Sequence[Finished]] = []
    commit = GroupCommit(tmp_path, reported.append, window_s=3600)
    first, second, third = _items(tmp_path)
    commit.add(first)
    commit.flush(settle=False)  # renamed, not yet durable: not reported
    assert reported == [] and first.path.is_file() and commit.due()
    commit.add(second)
    commit.add(third)
    commit.flush(settle=False)  # one flush: the first batch's folder, this batch's data
    assert reported == [[first]] and len(flushed) == 2
    assert first.path.parent.name in flushed[1] and "index.jsonl" in flushed[1]
    commit.flush()
    assert reported == [[first], [second, third]] and len(flushed) == 3 and not commit.due()


def test_kill_9_during_a_concurrent_group_committed_run_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW_SCRIPTS)
    out = tmp_path / "run"
    command = [sys.executable, "-m", "harness_world", "run", "--world", "helpdesk"]
    command += ["--tasks", *ORIGINAL_TASKS]  # hdattack: the counts below are these twelve's
    command += ["--agent", "scripted", "--script", str(script), "--samples", "4"]
    command += ["--out", str(out), "--json", "--concurrency", "6"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        command, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 60
    while time.time() < deadline and len(list((out / "records").rglob("*.json"))) < 8:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = {p: p.read_bytes() for p in (out / "records").rglob("*.json")}
    assert 8 <= len(saved) < 48, len(saved)
    index, _ = read_index(out)
    for path in saved:  # every record on disk is whole and bound (index written ahead)
        assert verify_file(path)[1].evidence == "verified"
        assert (path.parent.name, int(path.stem)) in index
    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)["counts"]
    assert counts["scheduled"] == counts["valid"] == counts["passed"] + counts["pending"] == 48
    assert counts["failed"] == 0  # pending: an oracle's reply nobody has reviewed
    assert len(list((out / "records").rglob("*.json"))) == 48
    assert not list(out.rglob(".*.tmp"))
    for path, blob in saved.items():
        assert path.read_bytes() == blob  # kept, not re-run
