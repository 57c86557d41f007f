"""The sequential (longitudinal) track and its drift against the fresh track (issue 19, seed 002)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.analysis.drift import DriftError, track_drift
from harness_world.cli import main
from harness_world.running import RevisionMismatch, oracle_agent
from harness_world.running.sequential import RememberingAgent, load_sequence

TASKS = hw.load_tasks("helpdesk")[:5]
SCRIPTS = oracle_agent("helpdesk").scripts


def _remembering() -> RememberingAgent:
    return RememberingAgent(name="remembering", scripts=SCRIPTS)


def test_a_memory_that_goes_stale_shows_drift_on_the_sequential_track(tmp_path: Path) -> None:
    fresh = hw.run(TASKS, _remembering(), samples=2, out=tmp_path / "fresh")
    assert fresh.counts.passed == 10  # the fresh track resets the memory before each attempt
    seq = hw.run(TASKS, _remembering(), samples=2, out=tmp_path / "seq", track=hw.Sequential())
    assert seq.counts.valid == 10 and seq.counts.passed < 10
    report = track_drift(tmp_path / "fresh", tmp_path / "seq")
    assert report.fresh == 1.0 and report.drift < 0 and report.lower_on_sequential
    # Two samples a task: no single task's drop survives the Holm correction (issue 28).
    assert report.regressions == []
    assert report.low is not None and report.high is not None and report.low <= report.drift
    sequence = load_sequence(tmp_path / "seq")
    assert sequence is not None and sorted(sequence.passes[0]) == sorted(t.id for t in TASKS)
    by_task = {r.task_id: r for r in report.tasks}
    for task_id in report.lower_on_sequential:
        assert by_task[task_id].sequential < by_task[task_id].fresh
    assert [(p, n) for p, n, _ in report.by_pass] == [(0, 5), (1, 5)]
    assert report.by_pass[1][2] < 0  # the second pass meets tasks the memory has seen
    for row in report.tasks:  # after N earlier tasks: the second pass comes after all five
        assert row.positions[0] < 5 <= row.positions[1]


def test_an_agent_without_memory_does_not_drift(tmp_path: Path) -> None:
    agent = oracle_agent("helpdesk")
    hw.run(TASKS, agent, samples=2, out=tmp_path / "fresh")
    hw.run(TASKS, agent, samples=2, out=tmp_path / "seq", track=hw.Sequential())
    report = track_drift(tmp_path / "fresh", tmp_path / "seq")
    assert report.drift == 0 and report.regressions == [] and len(report.tasks) == 5
    with pytest.raises(DriftError, match="not a run of the sequential track"):
        track_drift(tmp_path / "seq", tmp_path / "fresh")


def test_the_track_is_part_of_the_revision(tmp_path: Path) -> None:
    agent = oracle_agent("helpdesk")
    hw.run(TASKS[:1], agent, out=tmp_path / "r")
    with pytest.raises(RevisionMismatch):
        hw.run(TASKS[:1], agent, out=tmp_path / "r", track=hw.Sequential())


@pytest.mark.parametrize(
    "executor", [hw.Processes(2), hw.Processes(1), hw.Concurrent(2), hw.Concurrent(1)]
)
def test_the_sequential_track_refuses_every_executor_but_serial(
    executor: hw.Processes | hw.Concurrent, tmp_path: Path
) -> None:
    agent = oracle_agent("helpdesk")
    with pytest.raises(ValueError, match=r"one at a time in this process: it runs with Serial\(\)"):
        hw.run(TASKS[:1], agent, out=tmp_path / "w", track=hw.Sequential(), executor=executor)
    assert not (tmp_path / "w").exists()  # refused before anything is written
    assert repr(executor) in _refusal(executor)


def _refusal(executor: hw.Processes | hw.Concurrent) -> str:
    try:
        hw.Sequential().check(executor)
    except ValueError as exc:
        return str(exc)
    raise AssertionError("accepted")


def test_report_with_fresh_prints_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hw.run(TASKS, _remembering(), samples=2, out=tmp_path / "fresh")
    hw.run(TASKS, _remembering(), samples=2, out=tmp_path / "seq", track=hw.Sequential())
    assert main(["report", str(tmp_path / "seq"), "--fresh", str(tmp_path / "fresh")]) == 0
    text = capsys.readouterr().out
    assert "regressions (sequential below fresh after Holm correction" in text
    assert "drift" in text and "lower on the sequential track" in text
    argv = ["report", str(tmp_path / "seq"), "--fresh", str(tmp_path / "fresh"), "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["drift"] < 0
    assert main(["report", str(tmp_path / "fresh"), "--fresh", str(tmp_path / "seq")]) == 2
    run = ["run", "--world", "helpdesk", "--tasks", TASKS[0].id, "--out", str(tmp_path / "c")]
    capsys.readouterr()
    assert main([*run, "--track", "sequential", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --track sequential with --workers 2: the sequential track")
    assert main([*run, "--track", "sequential", "--json"]) == 0
