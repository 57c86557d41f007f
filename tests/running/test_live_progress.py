"""A run's progress off a terminal: whole lines now and then, redrawn only when asked for."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from harness_world.cli import main
from harness_world.running.live_progress import PeriodicLines
from harness_world.running.units import RunProgress

_LINE = re.compile(r"(\d+)/(\d+) attempts: \d+ passed, \d+ failed, \d+ ungraded")


def _run(tmp_path: Path, *flags: str) -> list[str]:
    return ["run", "--world", "helpdesk", "--samples", "2", "--out", str(tmp_path / "r"), *flags]


def test_a_run_into_a_pipe_prints_whole_lines_ending_at_the_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(tmp_path)) == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.splitlines()
    assert len(lines) >= 2
    counts = [_LINE.fullmatch(line) for line in lines]
    assert all(counts), lines
    done = [int(m.group(1)) for m in counts if m]
    total = int(counts[-1].group(2)) if counts[-1] else 0
    assert done == sorted(set(done)) and done[-1] == total and total > 10
    assert len(done) < total  # not one line per attempt


def test_progress_flag_redraws_in_place_and_quiet_or_json_still_silence_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(tmp_path, "--progress")) == 0
    err = capsys.readouterr().err
    assert err.count("\r") > 10 and err.endswith("\n") and err.count("\n") == 1
    for flag in ("--quiet", "--json"):
        assert main(_run(tmp_path / flag, "--progress", flag)) == 0
        assert capsys.readouterr().err == ""


def test_lines_come_every_tenth_of_the_attempts_or_when_time_passed() -> None:
    def steps(total: int) -> list[RunProgress]:
        return [
            RunProgress(done=i, total=total, passed=i, failed=0, ungraded=0)
            for i in range(1, total + 1)
        ]

    still = io.StringIO()
    quiet_clock = PeriodicLines(still, clock=lambda: 0.0)
    for step in steps(95):
        quiet_clock(step)
    shown = [int(line.split("/")[0]) for line in still.getvalue().splitlines()]
    assert shown == [9, 18, 27, 36, 45, 54, 63, 72, 81, 90, 95]
    ticks = iter(range(0, 10_000, 11))
    slow = io.StringIO()
    every_11_s = PeriodicLines(slow, clock=lambda: float(next(ticks)))
    for step in steps(95):
        every_11_s(step)
    assert len(slow.getvalue().splitlines()) == 95
