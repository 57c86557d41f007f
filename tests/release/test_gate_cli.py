"""``gate``: exit 0 only when every clause holds, 1 when one fails, 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_world.cli import main
from tests.release.test_gate import POLICY


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    path = tmp_path / "release.toml"
    path.write_text(POLICY)
    return path


@pytest.mark.parametrize(
    ("candidate", "code", "failing"),
    [("oracle", 0, set()), ("deny-all", 1, {"over_blocking", "completion"})],
)
def test_the_exit_code_and_the_json_follow_the_clauses(
    release_runs: dict[str, Path],
    policy: Path,
    candidate: str,
    code: int,
    failing: set[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["gate", str(policy), str(release_runs["baseline"]), str(release_runs[candidate])]
    assert main([*argv, "--json"]) == code
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is (code == 0)
    assert {c["clause"] for c in data["clauses"] if c["verdict"] != "pass"} == failing
    assert main(argv) == code
    text = capsys.readouterr().out
    assert f"release gate: {'PASSED' if code == 0 else 'FAILED'}" in text
    assert "Clopper-Pearson upper bound" in text


def test_bad_input_exits_2(
    release_runs: dict[str, Path], policy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = str(release_runs["baseline"])
    assert main(["gate", str(tmp_path / "absent.toml"), base, base]) == 2
    assert "cannot read the policy" in capsys.readouterr().err
    assert main(["gate", str(policy), str(tmp_path), base]) == 2
    assert "not a readable run directory" in capsys.readouterr().err
