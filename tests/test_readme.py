"""The README's library example runs as written, and the docs name only options that exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def test_the_library_example_runs(tmp_path: Path) -> None:
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Library") : text.index("## Command line")]
    example = re.search(r"```python\n(.*?)```", section, re.S)
    assert example is not None
    script = tmp_path / "example.py"
    script.write_text(example.group(1))
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", str(script)],
        check=False,
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "r.json").is_file() and (tmp_path / "runs" / "x" / "manifest.json").is_file()


_SPAN = re.compile(r"`([^`\n]+)`")
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _run_options_named(text: str) -> set[str]:
    """The `run` options a page names: in code spans that start with ``--``, in the
    ``python -m harness_world run`` commands of its code blocks, and in plain prose.

    A span or command of another program (``llama-server --jinja``, ``report --json``) names
    that program's options, and is not counted.
    """
    named: set[str] = set()
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
    for block in blocks:
        for command in block.replace("\\\n", " ").splitlines():
            if command.strip().startswith("python -m harness_world run "):
                named |= set(_OPTION.findall(command))
    prose = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
    for span in _SPAN.findall(prose):
        if span.startswith("--"):
            named |= set(_OPTION.findall(span))
    named |= set(_OPTION.findall(_SPAN.sub("", prose)))
    return named


def test_every_option_the_local_models_page_names_is_a_run_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from harness_world.cli import main

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    known = set(_OPTION.findall(capsys.readouterr().out))
    named = _run_options_named((REPO / "docs" / "local-models.md").read_text())
    wanted = {"--base-url", "--api-key-env", "--request-timeout", "--max-tokens"}
    assert wanted | {"--temperature", "--tool-calling", "--model"} <= named
    assert sorted(named - known) == []
    assert _run_options_named("use `--no-such-option` and `llama-server --jinja`") == {
        "--no-such-option"
    }
