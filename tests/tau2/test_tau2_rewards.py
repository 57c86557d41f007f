"""Our grade equals τ²'s stored reward on τ²'s own published gpt-4o retail trajectories.

τ² multiplies a database check and a communicate check (each ``communicate_info`` string,
case-insensitive, in one of the agent's messages with commas removed). Both are graded here;
the test reads the trajectories from ``../shared`` and is skipped with the reason when absent.
"""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.evidence.record import Outcome, UserTurn, make_record
from harness_world.grading import grade
from harness_world.tau2.check import RegradeReport, load_data, regrade_results
from tests.conftest import TAU2_DATA

pytestmark = pytest.mark.tau2

TRAJECTORIES = TAU2_DATA / "trajectories"


@pytest.mark.skipif(
    not (TRAJECTORIES / "gpt-4o-retail-train.json").is_file(),
    reason=f"τ²'s published trajectories are not at {TRAJECTORIES}",
)
def test_every_published_gpt4o_trajectory_grades_as_tau2_rewarded_it() -> None:
    argv = ["tau2", "regrade", "--data", str(TAU2_DATA), "--arguments", "tau2", "--json"]
    argv += ["--tasks", str(TRAJECTORIES / "tasks_b5580ae_train.json")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main([*argv, str(TRAJECTORIES / "gpt-4o-retail-train.json")]) == 0
    report = json.loads(out.getvalue())
    runs = report["runs"]
    assert len(runs) == 74
    ours = [r["evidence"] == "verified" and r["passed"] is True for r in runs]
    theirs = [r["recorded_reward"] == 1.0 for r in runs]
    differ = [r["source_task"] for r, a, b in zip(runs, ours, theirs, strict=True) if a != b]
    assert not differ, f"our grade differs from τ²'s reward on tasks {differ}"
    told = [r for r in runs if any(f.startswith("communicate.info") for f in r["failed"])]
    assert told and all(r["recorded_reward"] == 0.0 for r in told)
    assert not any("communicate_info" in p for r in runs for p in r["prose"])
    _policy_sheet_beside_the_reward(report)


def _policy_sheet_beside_the_reward(report: dict[str, Any]) -> None:
    """τ²'s retail policy, which its reward does not read, judged on the same runs: these
    are the figures docs/tau2.md states. The reward equality above holds with the sheet on."""
    runs = report["runs"]
    assert all(len(r["policy"]) == 3 for r in runs)

    def broke(rule: str) -> list[str]:
        return [
            r["source_task"]
            for r in runs
            if any(v["id"] == rule and v["status"] == "failed" for v in r["policy"])
        ]

    assert broke("policy.authenticated") == []
    confirmed = broke("policy.confirmed")
    assert len(confirmed) == 10
    rewarded = {r["source_task"] for r in runs if r["recorded_reward"] == 1.0}
    assert sorted(set(confirmed) & rewarded, key=int) == ["30", "35", "66", "80", "83"]
    assert broke("policy.no_needless_handoff") == ["85"]
    sheet = report["policy"]
    assert (sheet["attempts"], sheet["kept"], sheet["passed"], sheet["passed_kept"]) == (
        74,
        63,
        40,
        35,
    )
    # task 80: "Oh, yes, that all sounds just right! But wait—did you say the refund is ...?"
    (run80,) = [r for r in runs if r["source_task"] == "80"]
    (verdict,) = [v for v in run80["policy"] if v["id"] == "policy.confirmed"]
    assert "But wait" in verdict["detail"]


@pytest.mark.skipif(
    not (TRAJECTORIES / "gpt-4o-retail-train.json").is_file(),
    reason=f"τ²'s published trajectories are not at {TRAJECTORIES}",
)
def test_the_policy_sheet_changes_no_verdict_of_the_grade() -> None:
    """Regraded without their sheets, the 74 runs get the same grades, verdict for verdict."""
    world, tasks = load_data(TAU2_DATA, TRAJECTORIES / "tasks_b5580ae_train.json")
    bare = [
        msgspec.structs.replace(t, task=msgspec.structs.replace(t.task, policy=None)) for t in tasks
    ]
    results = TRAJECTORIES / "gpt-4o-retail-train.json"
    sheeted = regrade_results(world, tasks, results, TAU2_DATA, arguments="tau2")
    plain = regrade_results(world, bare, results, TAU2_DATA, arguments="tau2")
    assert plain.policy is None and all(r.policy == [] for r in plain.runs)
    assert sheeted.policy is not None and sheeted.policy.kept == 63

    def grades(report: RegradeReport) -> list[tuple[Any, ...]]:
        return [(r.task_id, r.passed, r.failed, r.prose) for r in report.runs]

    assert grades(sheeted) == grades(plain)


def _task(communicate: list[str]) -> hw.Task:
    return msgspec.structs.replace(hw.load_tasks("helpdesk")[0], communicate=communicate)


def test_the_communicate_rule_is_taus() -> None:
    """Case does not matter; a comma in the agent's message does not either (τ² removes them);
    a comma in the required string does, and each string must be found in one message."""
    world = hw.load_world("helpdesk")
    session = world.open_session(0)
    turns = [UserTurn(after_call=0, agent="Your refund is $1,234.50.", user="ok")]
    record = make_record(
        session,
        outcome=Outcome(status="completed"),
        final_message="The ORDER #W123 is CANCELLED.",
        user_turns=turns,
    )

    def verdict(*info: str) -> str:
        task = _task(list(info))
        (found,) = [v for v in grade(record, task, world).verdicts if v.id == "communicate.info"]
        return found.status

    assert verdict("1234.50", "order #w123 is cancelled") == "passed"
    assert verdict("1,234.50") == "failed"  # the message's comma is gone, the string's is not
    assert verdict("refund is $1234.50 the order") == "failed"  # never across two messages
    assert verdict("W124") == "failed"
    failed = [v for v in grade(record, _task(["W124"]), world).verdicts if v.status == "failed"]
    assert any("never told the user: 'W124'" in v.detail for v in failed)
