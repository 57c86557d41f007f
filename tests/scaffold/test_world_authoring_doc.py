"""docs/world-authoring.md is true: its excerpts are the scaffold's text, its commands run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from harness_world.cli import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "world-authoring.md"
BLOCK = re.compile(
    r"(?:<!-- excerpt: (?P<file>\S+) -->\n)?```(?P<lang>\w+)\n(?P<body>.*?)```", re.S
)


def _blocks() -> list[tuple[str, str, str]]:
    return [(m["lang"], m["file"] or "", m["body"]) for m in BLOCK.finditer(DOC.read_text())]


def test_the_tutorial_has_excerpts_commands_and_code() -> None:
    kinds = [(lang, bool(file)) for lang, file, _ in _blocks()]
    assert ("python", True) in kinds and ("toml", True) in kinds
    assert ("console", False) in kinds and ("python", False) in kinds


def test_the_tutorial_runs_step_by_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    ran = 0
    for lang, file, body in _blocks():
        if file:  # an excerpt: verbatim in the file the scaffold wrote
            text = (tmp_path / "myproject" / file).read_text()
            assert body in text, f"docs/world-authoring.md excerpt of {file} is not its text"
        elif lang == "console":
            for line in body.splitlines():
                argv = shlex.split(line.removeprefix("$ "))
                assert argv[:3] == ["python", "-m", "harness_world"], line
                code = main(argv[3:])
                output = capsys.readouterr()
                assert code == 0, f"{line}\n{output.out}\n{output.err}"
                ran += 1
        elif lang == "python":
            exec(compile(body, str(DOC), "exec"), {})
            ran += 1
    assert ran >= 7
    assert (tmp_path / "runs" / "library-py" / "manifest.json").is_file()
