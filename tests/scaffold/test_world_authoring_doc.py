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


def _documented(name: str) -> set[str]:
    """The names in the first column of the table a ``<!-- parameters: NAME -->`` mark heads."""
    text = DOC.read_text()
    marker = f"<!-- parameters: {name} -->\n"
    assert text.count(marker) == 1, f"docs/world-authoring.md has no table of {name}'s parameters"
    table = text.split(marker, 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    return {re.fullmatch(r"\| `(\w+)` \|.*", row)[1] for row in table}  # type: ignore[index]


def _public_parameters() -> dict[str, set[str]]:
    """What a world's author can pass to each declaration, read from the code itself."""
    import inspect

    import attrs

    from harness_world.coverage import Mutant, Mutants, Oracles
    from harness_world.coverage.gate import _ENTRY_KEYS
    from harness_world.engine import Contract, Derived, WorldSpec, entity, tool

    def signature(fn: object) -> set[str]:
        return {p for p in inspect.signature(fn).parameters if p != "self"}  # type: ignore[arg-type]

    def fields(cls: type) -> set[str]:
        return {f.alias for f in attrs.fields(cls) if f.init}  # type: ignore[arg-type, misc]

    return {
        "tool": signature(tool),
        "Derived": set(Derived.__struct_fields__),
        "entity": signature(entity),
        "Contract": fields(Contract),
        "WorldSpec": fields(WorldSpec),
        "Oracles": fields(Oracles),
        "Mutants": fields(Mutants),
        "Mutants.add": signature(Mutants.add),
        "Mutant": fields(Mutant),
        "equivalent.toml": set(_ENTRY_KEYS),
    }


@pytest.mark.parametrize("name", sorted(_public_parameters()))
def test_every_public_parameter_of_a_declaration_is_documented(name: str) -> None:
    """The reference section lists exactly what each declaration takes: a parameter added to
    the code and not to the guide (or one the code no longer has) fails here."""
    assert _documented(name) == _public_parameters()[name]
