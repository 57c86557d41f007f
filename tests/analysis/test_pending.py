"""Pending is not passed: a grade with unreviewed prose is ``passed_automated``, not a pass.

The attack: a helpdesk task asks for a public reply that says something; the automated
criteria see that a public reply was made, never what it says. A reply whose body is the
task's own instruction, or says the opposite of what the task asks, passes every automated
criterion. Counted as a pass, any reply text is paid for; so every rate counts it as pending
(not passed) unless ``--count-pending``, and a review record decides it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.analysis.compare_report import pair_runs
from harness_world.analysis.report import build_report, report_rows
from harness_world.analysis.trusted import TrustedObserver
from harness_world.cli import main
from harness_world.grading.verifier import SlotResult
from harness_world.release import ReviewRequest, add_reviews, evaluate_release, review_summary
from harness_world.release.policy import CriticalClause, ReleasePolicy
from harness_world.running.pending import settle
from harness_world.running.reader import RunReader
from harness_world.running.rundir import RunManifest, RunScan, count_slots
from tests.conftest import examples

TASK = "helpdesk.reply_and_solve"
PLAIN = "helpdesk.security_count"  # no prose criterion: the oracle answers it
OPPOSITE = "The outage is not fixed; we are still working on it and cannot say when."


class ReplyAgent:
    """Does the work the automated criteria check, with a reply body of its choosing.

    ``body`` None replies with the task's own instruction text (and ends on it as well).
    Any other task is left to the world's oracle.
    """

    def __init__(self, body: str | None) -> None:
        self.body = body
        self.name = "reply-any-text"
        self.oracle = hw.oracle_agent("helpdesk")

    def settings(self) -> dict[str, Any]:
        return {"body": self.body}

    def run(self, attempt: hw.Attempt) -> str:
        if attempt.task.id != TASK:
            return self.oracle.run(attempt)
        body = attempt.instruction if self.body is None else self.body
        attempt.call("get_ticket", {"ticket_id": "T-1001"})
        attempt.call("add_comment", {"ticket_id": "T-1001", "body": body, "public": True})
        attempt.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
        return body


def _run(out: Path, body: str | None, samples: int = 1, ids: tuple[str, ...] = (TASK,)) -> Path:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id in ids]
    hw.run(tasks, ReplyAgent(body), samples=samples, out=out)
    return out


@pytest.fixture(scope="module")
def gamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose every reply is the instruction text, two samples."""
    return _run(tmp_path_factory.mktemp("pending") / "gamed", None, samples=2)


@pytest.mark.parametrize("body", [None, OPPOSITE], ids=["instruction-text", "the-opposite"])
def test_a_reply_of_any_text_is_pending_and_not_counted_as_passed(
    tmp_path: Path, body: str | None
) -> None:
    report = build_report(_run(tmp_path / "run", body))
    assert report.pass_rate is not None and report.pass_rate.estimate == 0.0
    assert report.pass_k[0].pass_hat_k == 0.0 and report.pass_k[0].pass_at_k == 0.0
    assert (report.counts.passed, report.counts.pending, report.counts.failed) == (0, 1, 0)
    assert not report.counts.pending_counted
    (slot,) = report.attempts
    assert slot.state == "passed_automated" and slot.not_reviewed == ["prose.1"]
    assert not report.failed_tasks  # pending is not a failure either
    assert [r.passed for r in report_rows(report, "x")] == [False]
    assert report.suite_mean is None and report.families[0].passed == 0


def test_count_pending_restores_the_old_count_and_says_so(
    gamed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    counted = build_report(gamed, count_pending=True)
    assert counted.pass_rate is not None and counted.pass_rate.estimate == 1.0
    assert counted.pass_k[-1].pass_hat_k == 1.0
    assert (counted.counts.pending, counted.counts.pending_counted) == (2, True)
    for flag, rate in (["--count-pending"], 1.0), ([], 0.0):
        csv = tmp_path / f"rows{len(flag)}.csv"
        assert main(["report", str(gamed), "--json", "--csv", str(csv), *flag]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["pass_rate"]["estimate"] == rate
        assert data["counts"]["pending"] == 2
        assert data["counts"]["pending_counted"] is bool(flag)
        lines = csv.read_text().splitlines()
        assert lines[0].startswith("# pending review") and "2 of 2 valid attempts" in lines[0]
        assert {line.split(",")[3] for line in lines[2:]} == {str(int(rate))}
        assert main(["report", str(gamed), *flag]) == 0
        text = capsys.readouterr().out
        assert f"passed {int(2 * rate)} of 2 valid attempts" in text
        assert "pending review (passed_automated" in text
        assert ("counted as passed (--count-pending)" in text) is bool(flag)


def test_reviews_turn_pending_attempts_into_passes_and_fails(gamed: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    _copy(gamed, run)
    add_reviews(run, [_review(0, "pass"), _review(1, "fail")])
    report = build_report(run)
    assert (report.counts.passed, report.counts.failed, report.counts.pending) == (1, 1, 0)
    assert report.counts.reviewed == 2
    (failed,) = report.failed_tasks
    assert failed.criteria == {"prose.1": 1} and "failed on review" in failed.reason
    # the review command reads the same standing verdicts into its accepted score
    assert review_summary(run).accepted == 1
    # a later review stands in for the earlier one
    add_reviews(run, [_review(1, "pass")])
    assert build_report(run).counts.passed == 2


def test_the_release_gate_counts_pending_only_when_asked(gamed: Path, tmp_path: Path) -> None:
    other = _run(tmp_path / "other", OPPOSITE, samples=2)
    policy = ReleasePolicy(name="reply", critical=CriticalClause(tasks=[TASK]))
    decision = evaluate_release(policy, gamed, other)
    assert not decision.passed
    (critical,) = [c for c in decision.clauses if c.clause == "critical"]
    assert critical.verdict == "fail" and "0 of 2 passed" in critical.detail
    assert (decision.candidate.pending, decision.candidate.pending_counted) == (2, False)
    counted = evaluate_release(policy, gamed, other, count_pending=True)
    assert counted.passed and counted.candidate.pending_counted
    code = main(["gate", str(_policy(tmp_path)), str(gamed), str(other), "--count-pending"])
    assert code == 0
    assert main(["gate", str(_policy(tmp_path)), str(gamed), str(other)]) == 1


def test_compare_counts_pending_as_not_passed_and_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both = (TASK, PLAIN)
    honest = tmp_path / "honest"
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id in both]
    hw.run(tasks, hw.oracle_agent("helpdesk"), samples=2, out=honest)
    add_reviews(honest, [_review(0, "pass"), _review(1, "pass")])
    gamed = _run(tmp_path / "gamed", None, samples=2, ids=both)
    reader = RunReader.of()
    watch = (TrustedObserver({}), TrustedObserver({}))
    pair = pair_runs([honest, gamed], ("honest", "gamed"), watch, reader)
    assert {(r.config, r.passed) for r in pair.rows if r.task_id == TASK} == {
        ("honest", True),
        ("gamed", False),
    }
    assert any("gamed: pending review" in n and "2 of 4" in n for n in pair.notes)
    counted = pair_runs([honest, gamed], ("honest", "gamed"), watch, reader, count_pending=True)
    assert all(r.passed for r in counted.rows)
    for flag in ([], ["--count-pending"]):
        assert main(["compare", str(honest), str(gamed), "--json", *flag]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["pending"] == {"honest": 0, "gamed": 2}
        assert data["count_pending"] is bool(flag)
        assert any("gamed: pending review" in w for w in data["warnings"])
    csv = tmp_path / "rows.csv"
    csv.write_text("task_id,run_index,config,passed\n")
    assert (
        main(["compare", str(csv), "--baseline", "a", "--candidate", "b", "--count-pending"]) == 2
    )
    assert "--count-pending reads run directories" in capsys.readouterr().err


def test_verify_shows_the_grade_as_passed_automated(
    gamed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", str(gamed), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["grade"] for r in data["records"]} == {"passed_automated"}
    assert data["grades"] == {"passed": 0, "failed": 0, "pending": 2}
    # verify checks records and reads no review: its --require-pass asks for automated passes
    assert main(["verify", str(gamed), "--require-pass"]) == 0
    assert "2 pending review (passed_automated)" in capsys.readouterr().out


_SLOT = st.builds(
    SlotResult,
    task_id=st.sampled_from(["a", "b"]),
    sample=st.integers(0, 3),
    path=st.just("p"),
    evidence=st.sampled_from(["verified", "ungraded", "missing"]),
    outcome=st.sampled_from(["completed", "infrastructure", "error"]),
    passed=st.sampled_from([None, True, False]),
    pending=st.booleans(),
    not_reviewed=st.lists(st.sampled_from(["prose.1", "prose.2"]), unique=True),
)


@settings(max_examples=examples(60, 500), deadline=None)
@given(st.lists(_SLOT, max_size=12))
def test_pending_is_its_own_denominator_and_counts_only_when_asked(slots: list[SlotResult]) -> None:
    # the verifier's invariant: a pending slot is an automated pass, not counted as passed
    slots = [
        msgspec.structs.replace(s, passed=False, not_reviewed=s.not_reviewed or ["prose.1"])
        if s.pending
        else s
        for s in slots
    ]
    counts = count_slots(slots)
    assert counts.passed + counts.pending + counts.failed + counts.not_graded == counts.valid
    scan = _scan(slots)
    strict, counted = settle(scan), settle(scan, count_pending=True)
    assert strict.counts.counted_passed == counts.passed
    assert counted.counts.counted_passed == counts.passed + counts.pending
    assert sum(bool(s.passed) for s in counted.slots) - sum(
        bool(s.passed) for s in strict.slots
    ) == sum(s.pending for s in slots)


def _scan(slots: list[SlotResult]) -> RunScan:
    manifest = msgspec.convert(
        {"revision": {"id": "r", "components": {}}, "agent": "x", "tasks": ["a", "b"]}
        | {"samples": 4, "seed": 0, "sizes": {}},
        RunManifest,
    )
    return RunScan(out="o", manifest=manifest, slots=slots, counts=count_slots(slots), families={})


def _review(sample: int, verdict: str) -> ReviewRequest:
    return msgspec.convert(
        {"task": TASK, "sample": sample, "criterion": "prose.1", "verdict": verdict},
        ReviewRequest,
    )


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(f'name = "reply"\n[critical]\ntasks = ["{TASK}"]\n')
    return path


def _copy(src: Path, dst: Path) -> None:
    import shutil

    shutil.copytree(src, dst)
