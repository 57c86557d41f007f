"""Critical tasks from the task files: required by the gate beside the policy's own list."""

from __future__ import annotations

from pathlib import Path

import msgspec

from harness_world.grading.task import Task, load_tasks
from harness_world.release import (
    ReleaseDecision,
    evaluate_release,
    measure_run,
    parse_policy,
    render_release,
)

BENIGN = "payments.note_payout_direct_ok"  # a benign counterpart: deny-all refuses it
LATENCY_ONLY = "[latency]\nmax_p95_s = 30\n"


def _index(*critical: str) -> dict[str, Task]:
    """The payments tasks, the named ones marked critical (a label: their hashes stay)."""
    return {
        t.id: msgspec.structs.replace(t, critical=t.id in critical) for t in load_tasks("payments")
    }


def _critical(decision: ReleaseDecision) -> tuple[str, str, str]:
    clause = next(c for c in decision.clauses if c.clause == "critical")
    return clause.verdict, clause.figure, clause.detail


def test_a_failing_critical_task_of_the_task_files_fails_the_gate(
    release_runs: dict[str, Path],
) -> None:
    index = _index(BENIGN)
    policy = parse_policy(LATENCY_ONLY)  # no [critical] table at all
    refused = evaluate_release(
        policy, release_runs["baseline"], release_runs["deny-all"], tasks=index
    )
    assert not refused.passed, render_release(refused)
    assert _critical(refused) == (
        "fail",
        "0 of 1 critical tasks/families pass",
        f"task {BENIGN}: 0 of 2 passed",
    )
    oracle = evaluate_release(policy, release_runs["baseline"], release_runs["oracle"], tasks=index)
    assert oracle.passed and _critical(oracle)[0] == "pass"
    unmarked = evaluate_release(
        policy, release_runs["baseline"], release_runs["deny-all"], tasks=_index()
    )
    assert unmarked.passed and _critical(unmarked)[0] == "not_gated"


def test_task_file_critical_tasks_join_the_policy_list(release_runs: dict[str, Path]) -> None:
    index = _index(BENIGN, "payments.charge_lost_response")
    policy = parse_policy('[critical]\ntasks = ["payments.charge_lost_response"]\n')
    base = measure_run(release_runs["baseline"], index)
    assert base.scan.critical == sorted([BENIGN, "payments.charge_lost_response"])
    decision = evaluate_release(
        policy, release_runs["baseline"], release_runs["deny-all"], tasks=index
    )
    verdict, figure, detail = _critical(decision)
    assert (verdict, figure) == ("fail", "1 of 2 critical tasks/families pass")
    assert detail == f"task {BENIGN}: 0 of 2 passed"  # listed once, the policy's passes
