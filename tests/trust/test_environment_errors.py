"""Hole 7 of issue 11: environment errors are one ``error:`` line and exit 2, never a lost record.

``play --record`` is checked before any work; a failing disk during ``run`` leaves every saved
record intact and the run resumable.
"""

from __future__ import annotations

import errno
import importlib
import io
import sys
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.cli import main
from tests.conftest import Cli
from tests.trust._helpers import TASKS, tasks

run_module = importlib.import_module("harness_world.running.run")  # the module, not `run`
# issue 19: records are written by the group commit; its per-record write is the seam
commit_module = importlib.import_module("harness_world.running.commit")


def test_play_refuses_a_folder_as_record_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"finish": "x"}\n'))
    argv = ["play", "--world", "helpdesk", "--task", TASKS[0], "--record", str(tmp_path)]
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    assert err.startswith("error: --record") and "folder" in err


def test_play_refuses_an_unwritable_record_path_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"finish": "x"}\n'))
    record = blocker / "r.json"  # a path under a regular file can never be created
    argv = ["play", "--world", "helpdesk", "--task", TASKS[0], "--record", str(record)]
    code, out, err = cli(*argv)
    assert code == 2 and out == "" and err.startswith("error: --record")


def test_play_refuses_an_existing_record_without_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    earlier = tmp_path / "r.json"
    earlier.write_text("an earlier attempt's record")
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"finish": "x"}\n'))
    argv = ["play", "--world", "helpdesk", "--task", TASKS[0], "--record", str(earlier)]
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    assert err == f"error: --record {earlier}: a file exists there: give --force to overwrite it\n"
    assert earlier.read_text() == "an earlier attempt's record"
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"finish": "x"}\n'))
    code, out, err = cli(*argv, "--force")
    assert code == 0 and hw.load_record(earlier).outcome.status == "completed"


def test_a_full_disk_during_run_is_one_error_line_and_resumable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    real = commit_module._write_temporary  # issue 19
    saved: list[Path] = []

    def fill_up(item: object) -> Path:
        if saved:
            raise OSError(errno.ENOSPC, "No space left on device", "record")
        saved.append(real(item))
        return saved[-1]

    monkeypatch.setattr(commit_module, "_write_temporary", fill_up)
    argv = ["run", "--world", "helpdesk", "--tasks", TASKS[0], TASKS[1]]
    argv += ["--out", str(tmp_path / "r"), "--no-precheck"]
    code, _, err = cli(*argv)
    last = err.strip().splitlines()[-1]
    assert code == 2 and last.startswith("error: ") and "No space left" in last
    assert "Traceback" not in err
    monkeypatch.setattr(commit_module, "_write_temporary", real)
    result = hw.run(tasks(), hw.oracle_agent("helpdesk"), out=tmp_path / "r")
    counts = result.counts  # reply_and_solve's reply is pending review, not failed
    assert result.resumed == 1 and (counts.passed, counts.pending, counts.failed) == (1, 1, 0)
    assert main(["verify", "--require-pass", str(tmp_path / "r")]) == 0


def test_a_read_only_run_directory_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    def read_only(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / "r"))

    monkeypatch.setattr(run_module, "write_json", read_only)
    argv = ["run", "--world", "helpdesk", "--tasks", TASKS[0], "--out", str(tmp_path / "r")]
    code, _, err = cli(*argv + ["--no-precheck"])
    assert code == 2 and "Read-only file system" in err and "Traceback" not in err
