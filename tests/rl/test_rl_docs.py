"""docs/rl.md's scripts run as written: each pays the oracle's episode and says so.

The plain reward script needs nothing beyond the package; the verifiers and OpenEnv scripts
need their libraries (skipped without them).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, requires

pytestmark = pytest.mark.rl


def script(name: str) -> str:
    """The python block after ``<!-- script: NAME -->`` in docs/rl.md."""
    text = (REPO / "docs" / "rl.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- script: {name} -->\n```python\n(.*?)```", text, re.S)
    assert found is not None, name
    return found.group(1)


def run(name: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / f"rl_{name}.py"  # not openenv.py: it would shadow the package
    path.write_text(script(name), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning:harness_world", str(path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_the_plain_reward_script_runs(tmp_path: Path) -> None:
    done = run("reward", tmp_path)
    third = 1 / 3
    assert done.stdout.splitlines()[:2] == ["[0.0, 0.0, 0.0]", f"[{2 * third}, 0.0, {third}]"]


@requires("verifiers", "the verifiers script needs the [verifiers] extra")
def test_the_verifiers_script_runs(tmp_path: Path) -> None:
    assert "[1.0, 1.0]" in run("verifiers", tmp_path).stdout


@requires("openenv", "the OpenEnv script needs the [openenv] extra (openenv-core)")
def test_the_openenv_script_runs(tmp_path: Path) -> None:
    assert "[1.0, 1.0]" in run("openenv", tmp_path).stdout
