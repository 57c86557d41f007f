"""Verify does not pass what it did not check: an emptied run, a run without its manifest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_world.cli import main
from tests.trust._helpers import failing_run, oracle_run, rescheduled


def test_a_run_with_nothing_scheduled_never_passes_require_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = oracle_run(tmp_path / "run")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["tasks"] = []
    manifest["revision"] = rescheduled(manifest["revision"], tasks=[])
    (run / "manifest.json").write_text(json.dumps(manifest))
    shutil.rmtree(run / "records")
    (run / "index.jsonl").write_text("")
    code = main(["verify", str(run), "--require-pass"])
    captured = capsys.readouterr()
    assert code == 1, captured.out
    assert "nothing was graded" in captured.err
    assert main(["verify", str(run)]) == 0  # without --require-pass: an empty run is no failure


def test_a_run_folder_without_its_manifest_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = failing_run(tmp_path / "failing")
    passing = oracle_run(tmp_path / "passing")
    one_pass = next((passing / "records").rglob("*.json"))
    copies = sorted((run / "records").rglob("*.json"))
    for path in copies:  # every failing record replaced by one passing record
        path.write_bytes(one_pass.read_bytes())
    (run / "manifest.json").unlink()
    assert main(["verify", str(run), "--require-pass"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no manifest.json: not a run directory" in err[0], err
    # asked for loose records knowingly: the copies count once
    assert main(["verify", str(run), "--loose", "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["evidence"]["verified"] == 1
    assert len(report["duplicates"]) == len(copies) - 1
    assert "counted once" in captured.err


def test_a_second_writer_of_one_run_directory_is_refused_naming_the_holder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import subprocess
    import sys

    import harness_world as hw
    from harness_world.running.lock import RunDirectoryBusy, lock_run_directory
    from tests.trust._helpers import tasks

    out = tmp_path / "run"
    held = lock_run_directory(out)  # as a run in progress holds it
    with pytest.raises(RunDirectoryBusy, match=f"process {os.getpid()}"):
        hw.run(tasks(), hw.oracle_agent("helpdesk"), out=out)
    argv = ["run", "--world", "helpdesk", "--tasks", "helpdesk.reply_and_solve", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "another run is writing here" in err[0], err
    assert not (out / "index.jsonl").exists()  # nothing was scheduled twice
    held.release()
    oracle_run(out)  # released: the run goes ahead
    # a holder killed with SIGKILL leaves no stale lock: the kernel releases flock
    code = "from harness_world.running.lock import lock_run_directory as l; import os, sys; "
    code += f"l(__import__('pathlib').Path({str(out)!r})); os.kill(os.getpid(), 9)"
    subprocess.run([sys.executable, "-c", code], check=False)
    lock_run_directory(out).release()


def test_a_schedule_edited_under_its_revision_is_refused_without_any_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The failing task dropped from ``manifest.tasks`` (its records deleted): the revision
    no longer hashes that schedule, so the manifest is refused; recomputing the revision too
    leaves every record bound to the old one (ungraded), and its index line is listed."""
    run = failing_run(tmp_path / "run")
    manifest = json.loads((run / "manifest.json").read_text())
    kept = manifest["tasks"][:-1]
    dropped = manifest["tasks"][-1]
    shutil.rmtree(run / "records" / dropped)
    manifest["tasks"] = kept
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", str(run), "--require-pass"]) == 2
    err = capsys.readouterr().err
    assert "invalid manifest: the schedule's tasks differ from the revision's" in err, err
    manifest["revision"] = rescheduled(manifest["revision"], tasks=kept)
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", str(run), "--json"]) == 1
    rows = json.loads(capsys.readouterr().out)["records"]
    assert {r["evidence"] for r in rows} == {"ungraded"}
    assert any("does not schedule" in r["first_problem"] and dropped in r["path"] for r in rows)


def test_stray_records_are_every_file_that_is_no_slot_and_no_kept_try(tmp_path: Path) -> None:
    from harness_world.running.reader import open_run
    from harness_world.running.rundir import record_path

    run = oracle_run(tmp_path / "run", samples=2)
    manifest = open_run(run).manifest
    task = manifest.tasks[0]
    slot = record_path(run, task, 0)
    kept = [slot.with_name("1.failed-1.json"), slot.with_name("0.interrupted-2.json")]
    strays = [
        slot.with_name("007.json"),  # not the slot's own name
        slot.with_name("2.json"),  # beyond the samples
        slot.with_name("2.failed-1.json"),  # a try of no scheduled sample
        slot.with_name("0.failed-x.json"),
        run / "records" / "helpdesk.unscheduled" / "0.json",
        run / "records" / task / "deeper" / "0.json",
        run / "records" / "0.json",
    ]
    for path in [*kept, *strays]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(slot.read_bytes())
    assert sorted(open_run(run).strays) == sorted(map(str, strays))
