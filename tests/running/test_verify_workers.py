"""`verify --workers N`: forked workers read and judge their batches as the reader would here.

Each worker reads its slots' files with the reader's own read function (inside the run's real
directory, as resolved when the run was opened) and judges them from those bytes; the verdicts,
reasons and exit code are the ones one process gives, also for a record changed on disk and a
record replaced by a link that leaves the run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness_world.cli import main
from tests.trust._helpers import oracle_run


def _verify(run: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, object]:
    code = main(["verify", str(run), "--json", "--no-cache", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_workers_read_and_judge_each_slot_as_one_process_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = oracle_run(tmp_path / "run", samples=12)  # batches of two slots for two workers
    records = sorted((run / "records").rglob("*.json"))
    edited = records[0]
    edited.write_bytes(edited.read_bytes().replace(b'"final_message": "', b'"final_message": "x'))
    outside = tmp_path / "outside.json"
    outside.write_bytes(records[1].read_bytes())
    records[1].unlink()
    os.symlink(outside, records[1])
    alone = _verify(run, capsys)
    assert alone[0] != 0  # the edited record and the link are refused, not passed
    assert _verify(run, capsys, "--workers", "2") == alone
    assert _verify(run, capsys, "--workers", "3") == alone
