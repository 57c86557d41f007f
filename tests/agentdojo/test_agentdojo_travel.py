"""AgentDojo's travel suite: imported tasks checked, published traces regraded (data in ../shared)."""

from __future__ import annotations

import pytest

from harness_world.agentdojo.check import check_suite
from tests.agentdojo import DATA, missing

pytestmark = [pytest.mark.agentdojo, pytest.mark.skipif(bool(missing()), reason=missing())]


def test_every_travel_oracle_passes_and_agentdojo_agrees() -> None:
    checks = check_suite(DATA, "travel", "v1.2.1")
    assert len(checks) == 27  # 20 user tasks, 7 injection tasks
    assert all(c.oracle_passed and c.oracle_dojo for c in checks)
    # every travel check asks for a change or an answer: doing nothing fails both ways
    assert not any(c.nothing_dojo or c.nothing_passed for c in checks)
    assert sum(c.mutants for c in checks) == 69
    assert (sum(c.killed for c in checks), sum(c.killed_dojo for c in checks)) == (57, 53)
    # the one mutant only AgentDojo's check fails changes the e-mail's body, which user task
    # 3's check compares and our criteria do not name (listed as unsupported on the task)
    alone = {c.task_id: c.dojo_only for c in checks if c.dojo_only}
    assert alone == {"agentdojo_travel.user_task_3": ["change_value@5.body"]}
    assert any("body" in u for u in next(c for c in checks if c.dojo_only).unsupported)
