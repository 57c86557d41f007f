"""``new NAME``: a minimal world of your own that runs, passes the gates, and is small."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness_world.cli import main
from harness_world.engine import load_world
from harness_world.grading.task import load_tasks
from harness_world.grading.taxonomy import DIMENSIONS, taxon_problem
from harness_world.scaffold import template_files, write_scaffold

REPO = Path(__file__).resolve().parents[2]
CONTRACT_AND_TOOLS_MAX = 120


def test_new_writes_every_part_in_the_usual_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["new", "library", "--out", str(tmp_path), "--json"]) == 0
    files = {
        Path(p).relative_to(tmp_path).as_posix()
        for p in json.loads(capsys.readouterr().out)["files"]
    }
    assert files == {
        "worlds/library/world.py",
        "worlds/library/seeds/small.json",
        "tasks/library/lend_dune.toml",
        "oracles/library/oracles.py",
        "mutants/library/mutants.py",
    }
    assert len(template_files()) == len(files)
    world = load_world(tmp_path / "worlds" / "library")
    assert world.name == "library"
    assert [t.name for t in world.contract.tools] == ["find_books", "lend_book"]
    assert {t.kind for t in world.contract.tools} == {"read", "write"}
    assert world.entities() == ("books", "loans")


def test_the_scaffold_passes_the_coverage_gate_and_the_matrix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_scaffold("library", tmp_path)
    world = str(tmp_path / "worlds" / "library")
    assert main(["mutants", "--world", world, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (gate,) = report["worlds"]
    assert gate["ok"] and gate["problems"] == [] and gate["score"] == 1.0
    assert gate["routes"] == {"library.lend_dune": 2}
    killed = gate["killed_by"]
    assert all(killed.values()), killed  # every criterion has a hand mutant failing it
    assert main(["matrix", "--world", world]) == 0
    assert "MATRIX GATE PASSED" in capsys.readouterr().out


def test_a_scaffolded_task_names_a_valid_dimension(tmp_path: Path) -> None:
    write_scaffold("library", tmp_path)
    tasks = load_tasks(folder=tmp_path / "tasks" / "library")  # loading validates the taxon
    assert [t.id for t in tasks] == ["library.lend_dune"]
    for task in tasks:
        assert task.dimension in DIMENSIONS and task.subdimension
        assert taxon_problem(task.dimension, task.subdimension) == ""


def test_a_second_name_is_a_second_world(tmp_path: Path) -> None:
    write_scaffold("shelf", tmp_path)
    assert main(["mutants", "--world", str(tmp_path / "worlds" / "shelf")]) == 0
    assert load_world(tmp_path / "worlds" / "shelf").contract.name == "shelf"


def test_contract_and_tools_fit_in_120_lines(tmp_path: Path) -> None:
    write_scaffold("library", tmp_path)
    lines = (tmp_path / "worlds" / "library" / "world.py").read_text().splitlines()
    print(f"scaffold contract and tools: {len(lines)} lines (at most {CONTRACT_AND_TOOLS_MAX})")
    assert len(lines) <= CONTRACT_AND_TOOLS_MAX


def test_the_scaffold_is_lint_and_strict_type_clean(tmp_path: Path) -> None:
    write_scaffold("library", tmp_path)
    files = [
        str(tmp_path / p)
        for p in (
            "worlds/library/world.py",
            "oracles/library/oracles.py",
            "mutants/library/mutants.py",
        )
    ]
    bin_dir = Path(sys.executable).parent
    ruff = subprocess.run(
        [str(bin_dir / "ruff"), "check", "--config", str(REPO / "pyproject.toml"), *files],
        capture_output=True,
        check=False,
        text=True,
    )
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr
    mypy = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--no-incremental",
            *files,
        ],
        capture_output=True,
        check=False,
        text=True,
        cwd=tmp_path,
    )
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Library", "lower-case letters"),
        ("1books", "lower-case letters"),
        ("class", "lower-case letters"),
        ("a" * 41, "lower-case letters"),
        ("helpdesk", "is a built-in world's"),
    ],
)
def test_a_bad_name_is_one_error_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, expected: str
) -> None:
    assert main(["new", name, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0]
    assert not any(tmp_path.iterdir())


def test_existing_files_are_never_overwritten_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_scaffold("library", tmp_path)
    world_py = tmp_path / "worlds" / "library" / "world.py"
    world_py.write_text("# my edits\n")
    assert main(["new", "library", "--out", str(tmp_path)]) == 2
    assert "would overwrite 5 file(s)" in capsys.readouterr().err
    assert world_py.read_text() == "# my edits\n"
    assert main(["new", "library", "--out", str(tmp_path), "--force"]) == 0
    assert "WorldSpec" in world_py.read_text()
    a_file = tmp_path / "plain"
    a_file.write_text("")
    assert main(["new", "library", "--out", str(a_file)]) == 2
