"""The demo (the README's first command): golden output, and its records re-verify."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from harness_world.cli import main
from harness_world.running.reader import RunReader

GOLDEN = Path(__file__).parent / "golden" / "demo.txt"


def test_demo_prints_outcome_evidence_and_grade_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    text = capsys.readouterr().out.replace(str(out), "runs/demo")
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()
    assert "12 attempts completed cleanly and still failed" in text
    assert main(["verify", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["evidence"] == {"verified": 30, "ungraded": 0, "lost": 0}
    # reply_and_solve's two correct routes reply in prose nobody has reviewed: pending
    assert report["grades"] == {"passed": 16, "failed": 12, "pending": 2}
    # --json never cuts a reason: each is the judged slot's whole `id: detail`.
    slots = {(s.task_id, s.sample): s for s in RunReader.of().read(out).slots}
    reasons = [(r, slots[(r["task"], r["sample"])].failed) for r in report["records"]]
    assert all(row["reasons"] == failed for row, failed in reasons)
    assert max(len(line) for _, failed in reasons for line in failed) > 120


def test_the_demo_is_a_run_directory_report_and_html_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    counts = report["counts"]
    assert (counts["scheduled"], counts["valid"], counts["passed"], counts["failed"]) == (
        30,
        30,
        16,
        12,
    )
    assert counts["pending"] == 2 and report["pass_rate"]["successes"] == 16
    # the HTML report reads it too (extra [report])
    if importlib.util.find_spec("matplotlib") is not None:
        page = tmp_path / "demo.html"
        assert main(["report", str(out), "--html", str(page)]) == 0
        capsys.readouterr()
        html = page.read_text()
        assert "create_for_john" in html and "https://" not in html
    # running it again rewrites the same run (a demo directory only; anything else is refused)
    assert main(["demo", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    assert main(["demo", "--out", str(other)]) == 2
    assert "not a demo run directory" in capsys.readouterr().err
    assert (other / "keep.txt").read_text() == "mine"
