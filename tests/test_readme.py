"""The README's library example runs as written (so it cannot rot)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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
