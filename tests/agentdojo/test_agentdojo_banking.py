"""AgentDojo's banking suite: imported tasks checked, published traces regraded (data in ../shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[3] / "shared" / "external" / "agentdojo"
pytest.importorskip("yaml", reason="AgentDojo data needs PyYAML (extra agentdojo)")
pytest.importorskip(
    "email_validator", reason="AgentDojo's code needs pydantic[email] (extra agentdojo)"
)
pytest.importorskip("deepdiff", reason="AgentDojo's code needs deepdiff (extra agentdojo)")
pytest.importorskip("docstring_parser", reason="AgentDojo's code needs docstring-parser")
if not (DATA / "traces").is_dir():
    pytest.skip(f"no AgentDojo data at {DATA}", allow_module_level=True)

from harness_world.agentdojo.check import check_suite  # noqa: E402
from harness_world.agentdojo.regrade import Regrader, trace_files  # noqa: E402


def test_every_banking_oracle_passes_and_agentdojo_agrees() -> None:
    checks = check_suite(DATA, "banking", "v1.2.1")
    assert len(checks) == 25
    assert all(c.oracle_passed and c.oracle_dojo for c in checks)
    # AgentDojo's own checks pass doing nothing on user tasks 5 (a March payment already
    # matches), 8 (no check), 9 and 10 (nothing may change); ours follow the ground truth.
    assert {c.task_id for c in checks if c.nothing_dojo} == {
        "agentdojo_banking.user_task_5",
        "agentdojo_banking.user_task_8",
        "agentdojo_banking.user_task_9",
        "agentdojo_banking.user_task_10",
    }


def test_every_published_banking_trace_gets_the_stored_verdicts() -> None:
    regrader = Regrader(DATA)
    verdicts = [
        regrader.regrade(p) for p in trace_files(sorted((DATA / "traces").glob("*/banking")))
    ]
    assert len(verdicts) == 507
    assert [v.path for v in verdicts if not v.agrees] == []
    # the bill's default text changed after those runs (see the data folder's README)
    differs = sorted(
        Path(v.path).relative_to(DATA / "traces").as_posix() for v in verdicts if not v.reproduced
    )
    assert differs == [
        f"{p}/banking/user_task_0/none/none.json"
        for p in (
            "claude-3-7-sonnet-20250219",
            "gemini-2.0-flash-001",
            "meta-llama_Llama-3.3-70B-Instruct",
        )
    ]
