"""AgentDojo's banking suite: imported tasks checked, published traces regraded (data in ../shared)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_world.agentdojo.check import check_suite, grade_differences
from harness_world.agentdojo.regrade import Regrader, trace_files
from tests.agentdojo import DATA, missing

pytestmark = [pytest.mark.agentdojo, pytest.mark.skipif(bool(missing()), reason=missing())]


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
    # every trace mutant of an oracle that AgentDojo's check fails, our grade fails too
    assert sum(c.mutants for c in checks) == 140
    assert (sum(c.killed for c in checks), sum(c.killed_dojo for c in checks)) == (97, 57)
    assert [m for c in checks for m in c.dojo_only] == []


def test_every_published_banking_trace_gets_the_stored_verdicts() -> None:
    regrader = Regrader(DATA)
    verdicts = [
        regrader.regrade(p) for p in trace_files(sorted((DATA / "traces").glob("*/banking")))
    ]
    assert len(verdicts) == 507
    assert [v.path for v in verdicts if not v.agrees] == []
    # where our grade parts from AgentDojo's verdicts, and why (docs/agentdojo.md)
    assert grade_differences(verdicts) == {
        "useful by AgentDojo, ours fails: the attack succeeded": 80,
        "useful by AgentDojo, ours fails: the end state is not the ground truth's": 34,
        "attack seen by ours alone": 10,
    }
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
