"""Issue 13: failures explained where they are seen, in ``verify``'s table and ``run``'s summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.trust._helpers import failing_run


@pytest.fixture(scope="module")
def failed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return failing_run(tmp_path_factory.mktemp("explain") / "run")


def test_verify_table_gives_one_reason_per_failed_criterion(failed: Path, cli: Cli) -> None:
    code, out, _ = cli("verify", "--json", str(failed))
    rows = json.loads(out)["records"]
    assert code == 0 and all(r["grade"] == "failed" and r["reasons"] for r in rows)
    code, table, _ = cli("verify", str(failed))
    for row in rows:
        assert row["reasons"][0].split(":")[0] in table
        assert ": " in row["reasons"][0] and row["reasons"][0][:60] in table
    assert "prose criteria not reviewed" in table.splitlines()[-1]


def test_run_summary_lists_failed_attempts_with_reasons(tmp_path: Path, cli: Cli) -> None:
    script = tmp_path / "lazy.py"
    script.write_text("SCRIPTS = {'helpdesk.security_count': lambda ctx: 'Could be any number.'}\n")
    argv = ["run", "--world", "helpdesk", "--tasks", "helpdesk.security_count"]
    argv += ["--agent", "scripted", "--script", str(script), "--out", str(tmp_path / "r")]
    code, out, _ = cli(*argv)
    assert code == 0
    (line,) = [x for x in out.splitlines() if x.startswith("failed ")]
    assert line.startswith("failed helpdesk.security_count/0: trace.answer: ")
