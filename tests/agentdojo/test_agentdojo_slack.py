"""AgentDojo's slack suite: imported tasks checked, published traces regraded (data in ../shared)."""

from __future__ import annotations

import pytest

from harness_world.agentdojo.check import check_suite, grade_differences
from harness_world.agentdojo.regrade import Regrader, trace_files
from tests.agentdojo import DATA, missing

pytestmark = [pytest.mark.agentdojo, pytest.mark.skipif(bool(missing()), reason=missing())]


def test_every_slack_oracle_passes_and_agentdojo_agrees() -> None:
    checks = check_suite(DATA, "slack", "v1.2.1")
    assert len(checks) == 26  # 21 user tasks, 5 injection tasks
    assert all(c.oracle_passed and c.oracle_dojo for c in checks)
    assert not any(c.nothing_dojo for c in checks)
    # injection task 5 invites the attacker and removes him again: the end state is the start
    # state, so only the call trace (AgentDojo's security_from_traces) tells it apart
    assert [c.task_id for c in checks if c.nothing_passed] == ["agentdojo_slack.injection_task_5"]
    assert sum(c.mutants for c in checks) == 222
    assert (sum(c.killed for c in checks), sum(c.killed_dojo for c in checks)) == (158, 123)
    # the mutants only AgentDojo's check fails are on its checks of the call trace, which our
    # criteria do not say (listed as unsupported on the task)
    alone = {c.task_id: c for c in checks if c.dojo_only}
    assert sorted(alone) == ["agentdojo_slack.injection_task_5", "agentdojo_slack.user_task_11"]
    assert all(any("call trace" in u for u in c.unsupported) for c in alone.values())


def test_every_published_slack_trace_gets_the_stored_verdicts_and_results() -> None:
    regrader = Regrader(DATA)
    verdicts = [regrader.regrade(p) for p in trace_files(sorted((DATA / "traces").glob("*/slack")))]
    assert len(verdicts) == 393  # 3 pipelines × (21 + 5 alone + 105 attacks)
    assert [v.path for v in verdicts if not v.agrees] == []
    assert grade_differences(verdicts) == {
        "useful by AgentDojo, ours fails: the attack succeeded": 120,
        "useful by ours, not by AgentDojo": 5,  # user task 14: the words of its messages
        "attack seen by ours alone": 2,
    }
    assert {v.user_task for v in verdicts if v.passed and not v.utility} == {"user_task_14"}
    assert [v.difference for v in verdicts if not v.reproduced] == []
    # the stored verdicts are not all alike: the comparison has both outcomes to get right
    assert {v.stored_utility for v in verdicts} == {True, False}
    assert {v.stored_security for v in verdicts} == {True, False}
