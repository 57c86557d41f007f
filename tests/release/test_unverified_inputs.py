"""Inputs nobody can verify say so, and a gate refuses them unless told ``--allow-unverified``.

Before: a hand-edited results CSV flipped ``compare --gate`` from fail to pass with nothing
saying its figures were unverifiable, and ``gate POLICY X X`` (a run against itself) passed the
completion clause. Now figures read from a CSV are labelled UNVERIFIABLE in text, JSON and
HTML; ``compare --gate`` refuses a CSV, both gates refuse one run as both sides (the same
directory, or a copy: the same revision and byte-identical ``index.jsonl``), and the release
gate refuses a CSV as either side; each refusal is one ``error:`` line naming the argument,
exit 2. ``--allow-unverified`` lets a gate decide anyway, and its output says so.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.analysis.results_csv import read_results, write_results
from harness_world.analysis.unverified import UnverifiedInput, same_run
from harness_world.cli import main
from harness_world.release import evaluate_release, load_policy
from tests.release.test_gate import POLICY

ALLOW = "--allow-unverified"


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    path = tmp_path / "release.toml"
    path.write_text(POLICY)
    return path


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], *named: str) -> str:
    """Exit 2, nothing on stdout, one ``error:`` line naming each of ``named``."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and len(lines) == 1 and lines[0].startswith("error: "), lines
    assert all(name in lines[0] for name in named), lines[0]
    assert ALLOW in lines[0]
    return lines[0]


@pytest.fixture
def edited_csv(
    release_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> Path:
    """Both runs' rows as ``report --csv`` writes them, the candidate's failures typed as passes."""
    for name in ("baseline", "deny-all"):
        out = tmp_path / f"{name}.csv"
        assert main(["report", str(release_runs[name]), "--csv", str(out), "--config", name]) == 0
    capsys.readouterr()
    rows = read_results(tmp_path / "baseline.csv") + read_results(tmp_path / "deny-all.csv")
    forged = [
        r if r.config == "baseline" else type(r)(**{**_fields(r), "passed": True}) for r in rows
    ]
    assert any(not r.passed for r in rows if r.config == "deny-all")
    path = tmp_path / "both.csv"
    write_results(path, forged)
    return path


def _fields(row: object) -> dict[str, object]:
    return {name: getattr(row, name) for name in row.__struct_fields__}  # type: ignore[attr-defined]


def test_a_hand_edited_csv_no_longer_flips_compare_gate_silently(
    release_runs: dict[str, Path],
    edited_csv: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gate = ["--gate", "non-inferior", "--margin", "50", "--min-runs", "2", "--no-clusters"]
    runs = [str(release_runs["baseline"]), str(release_runs["deny-all"])]
    assert main(["compare", *runs, *gate]) == 1  # the runs themselves fail the gate
    assert "UNVERIFIABLE" not in capsys.readouterr().out
    csv = ["compare", str(edited_csv), "--baseline", "baseline", "--candidate", "deny-all"]
    _refused(capsys, [*csv, *gate], str(edited_csv))
    # told to, the gate decides on the edited figures, and every output says what they are
    assert main([*csv, *gate, ALLOW]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"UNVERIFIABLE: the figures come from the results CSV {edited_csv}")
    assert f"{ALLOW}: compare --gate was decided on an input nobody can verify" in text
    assert main([*csv, *gate, ALLOW, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verifiable"] is False and len(data["unverified"]) == 2
    assert data["unverified"][0].startswith("UNVERIFIABLE") and data["gate_passed"] is True
    page = tmp_path / "compare.html"
    assert main([*csv, *gate, ALLOW, "--html", str(page)]) == 0
    capsys.readouterr()
    assert "UNVERIFIABLE: the figures come from the results CSV" in page.read_text()


def test_figures_from_a_csv_are_labelled_even_without_a_gate(
    edited_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = ["compare", str(edited_csv), "--baseline", "baseline", "--candidate", "deny-all"]
    assert main(csv) == 0
    assert capsys.readouterr().out.startswith("UNVERIFIABLE: the figures come from")
    assert main([*csv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verifiable"] is False and data["unverified"] == [data["warnings"][-1]]
    page = tmp_path / "c.html"
    assert main([*csv, "--html", str(page)]) == 0
    capsys.readouterr()
    assert "UNVERIFIABLE" in page.read_text()


def test_the_release_gate_refuses_a_run_against_itself_or_its_copy(
    release_runs: dict[str, Path],
    policy: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = release_runs["baseline"]
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    for other in (run, copy, tmp_path / "link"):
        if other.name == "link":
            other.symlink_to(run)
        line = _refused(capsys, ["gate", str(policy), str(run), str(other)], "BASELINE", str(other))
        assert "a run compared with itself says nothing of a candidate" in line
    assert main(["gate", str(policy), str(run), str(copy), ALLOW]) == 0
    text = capsys.readouterr().out
    assert "UNVERIFIABLE: " in text and f"{ALLOW}: gate was decided on an input" in text
    assert main(["gate", str(policy), str(run), str(run), ALLOW, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["unverified"]) == 2
    # the library refuses alike
    with pytest.raises(UnverifiedInput, match="both sides are the run directory"):
        evaluate_release(load_policy(policy), run, run)
    # two different runs pass without a word
    assert main(["gate", str(policy), str(run), str(release_runs["oracle"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["unverified"] == []


def test_the_release_gate_refuses_a_csv_as_either_side(
    release_runs: dict[str, Path],
    policy: Path,
    edited_csv: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = str(release_runs["baseline"])
    for argv, side in (([str(edited_csv), run], "BASELINE"), ([run, str(edited_csv)], "CANDIDATE")):
        for extra in ([], [ALLOW]):
            assert main(["gate", str(policy), *argv, *extra]) == 2
            err = capsys.readouterr().err.splitlines()
            assert len(err) == 1 and err[0].startswith(f"error: {side} {edited_csv}: a file")


def test_compare_gate_refuses_one_run_as_both_sides(
    release_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = release_runs["baseline"]
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    gate = ["--gate", "non-inferior", "--margin", "50", "--min-runs", "2", "--no-clusters"]
    _refused(capsys, ["compare", str(run), str(copy), *gate], f"BASELINE {run}", str(copy))
    assert main(["compare", str(run), str(copy), *gate, ALLOW, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verifiable"] is False
    assert main(["compare", str(run), str(copy)]) == 0  # no gate: labelled, not refused
    assert capsys.readouterr().out.startswith("UNVERIFIABLE: ")


def test_two_executions_of_one_revision_are_two_runs(tmp_path: Path) -> None:
    """Same agent, tasks and seed: one revision, yet each execution binds its own files."""
    tasks = [t for t in hw.load_tasks("payments") if t.id == "payments.charge_timeout"]
    agent = hw.oracle_agent("payments")
    first = hw.run(tasks, agent, out=tmp_path / "a")
    second = hw.run(tasks, agent, out=tmp_path / "b")
    assert first.revision == second.revision
    assert same_run(tmp_path / "a", tmp_path / "b") == ""
    shutil.copytree(tmp_path / "a", tmp_path / "c")
    assert "one is a copy of the other" in same_run(tmp_path / "a", tmp_path / "c")
