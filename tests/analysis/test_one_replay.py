"""`report` and `conditions` replay each record once, however many sections they print."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.running.reference_agents import reference_agent

# The module, not the function `harness_world.grading.verify` that the package exports.
verify_module = importlib.import_module("harness_world.grading.verify")


@pytest.fixture(scope="module")
def payments_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A run whose tasks declare faults and forbidden effects (so trusted figures print)."""
    tasks = [t for t in hw.load_tasks("payments") if t.faults or t.authority is not None][:6]
    out = tmp_path_factory.mktemp("one-replay") / "run"
    result = hw.run(tasks, reference_agent("payments", "oracle"), samples=2, out=out)
    assert result.counts.valid == len(tasks) * 2
    return out, len(tasks) * 2


def _count_replays(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = verify_module.replay

    def counting(record: hw.Record, world: hw.World, **kw: object) -> object:
        seen.append(f"{record.task_id}/{record.sample}")
        return real(record, world, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(verify_module, "replay", counting)
    return seen


@pytest.mark.parametrize("command", [["report"], ["conditions"]])
def test_each_record_is_replayed_once(
    payments_run: tuple[Path, int],
    command: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, records = payments_run
    seen = _count_replays(monkeypatch)
    assert main([*command, str(out), "--no-cache"]) == 0  # counts replays: none cached
    printed = capsys.readouterr().out
    assert sorted(set(seen)) == sorted(seen), "a record was replayed twice"
    assert len(seen) == records
    if command == ["report"]:
        assert "trusted" in printed.lower()  # the section that used to scan the run again


def test_compare_replays_each_record_of_each_run_once(
    payments_run: tuple[Path, int],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, records = payments_run
    copy = tmp_path / "candidate"
    shutil.copytree(out, copy)
    seen = _count_replays(monkeypatch)
    assert main(["compare", str(out), str(copy), "--no-cache"]) in (0, 1)
    assert "trusted" in capsys.readouterr().out.lower()  # the pairing that scanned again
    assert len(seen) == 2 * records
