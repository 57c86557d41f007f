"""Reach of advisories, and attribution of failures (automatic and reviewed) over a run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.analysis import (
    ATTRIBUTIONS,
    AdviceObserver,
    AttributionError,
    FailureObserver,
    add_label,
    advise_scan,
    attribute_scan,
    automatic_source,
    oracle_check,
    reach,
    reach_lines,
)
from harness_world.cli import main
from harness_world.coverage import ScriptContext, load_mutants, load_oracles, record_calls
from harness_world.coverage.demo import demo_advice, demo_agent
from harness_world.evidence import Outcome
from harness_world.grading import ADVISORIES, Advisory, SlotResult
from harness_world.grading.verifier import VerifiedRecord
from harness_world.running.reader import RunReader
from harness_world.running.rundir import RunScan
from tests.conftest import REPO

ORACLES = load_oracles("helpdesk")
MUTANTS = {m.id: m for m in load_mutants("helpdesk")}


def test_reach_counts_explained_failures_and_false_alarms() -> None:
    found = reach(
        [
            (False, ["unfollowed_page"]),
            (False, []),
            (False, ["no_writes", "skipped_step"]),
            (True, []),
            (True, [Advisory(name="repeated_call", detail="x")]),
        ]
    )
    assert (found.failed, found.explained, found.passed, found.false_alarms) == (3, 2, 2, 1)
    rows = {r.name: (r.failed, r.passed) for r in found.by_name}
    assert rows["unfollowed_page"] == (1, 0)
    assert rows["repeated_call"] == (0, 1)
    assert rows["hedged_answer"] == (0, 0)
    assert reach_lines(found)[0].startswith("Advisories explained 2 of 3 failed attempts; 1 of 2")


def test_reach_of_nothing_is_zero_of_zero() -> None:
    found = reach([])
    assert (found.failed, found.explained, found.passed, found.false_alarms) == (0, 0, 0, 0)


def test_demo_reach_is_measured(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--demo", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    measured = payload["reach"]
    assert measured["failed"] == 12 and measured["passed"] == 18
    assert measured["explained"] >= 10
    # Every correct route is measured, not only the oracle. A transfer writes the destination's
    # stock row unread: a row the tool derives, which the advisory exempts as the grader does.
    alarms = {
        (a["task_id"], a["sample"], v["name"])
        for a in payload["advice"]
        if a["passed"]
        for v in a["advisories"]
    }
    assert alarms == set()
    assert measured["false_alarms"] == 0


def test_demo_advice_numbers_the_samples_the_demo_run_gives(tmp_path: Path) -> None:
    agent, _ = demo_agent()
    numbered = {(a.task_id, a.sample) for a in demo_advice()}
    assert numbered == set(agent.plays)


def test_a_page_left_behind_is_no_advisory_when_the_answer_is_its_total() -> None:
    """security_count: the second route reads one row and the listing's total; the mistake
    reads the first page and counts its rows."""
    by_slot = {(a.task_id, a.sample): a for a in demo_advice()}
    names = {k: {v.name for v in a.advisories} for k, a in by_slot.items()}
    assert by_slot[("helpdesk.security_count", 2)].passed
    assert "unfollowed_page" not in names[("helpdesk.security_count", 2)]
    assert "unfollowed_page" in names[("helpdesk.security_count", 1)]
    assert "unfollowed_page" not in names[("helpdesk.reply_and_solve", 2)]


def _reply_anyway(ctx: ScriptContext) -> str:
    """Try to reply (the tool may be missing), solve the ticket, and say so."""
    ctx.call("get_ticket", {"ticket_id": "T-1001"})
    ctx.call("add_comment", {"ticket_id": "T-1001", "body": "Fixed.", "public": True})
    ctx.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    return "Replied and solved."


@pytest.fixture
def impossible_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[hw.Task]]:
    """A run in a copy of helpdesk without add_comment: reply_and_solve cannot be done."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "helpdesk_notool"
    shutil.copytree(REPO / "worlds" / "helpdesk", folder)
    source = (folder / "world.py").read_text()
    assert "        add_comment,\n        create_ticket," in source
    source = source.replace(
        "        add_comment,\n        create_ticket,", "        create_ticket,"
    )
    (folder / "world.py").write_text(source.replace('name="helpdesk",', 'name="helpdesk_notool",'))
    chosen = ("helpdesk.reply_and_solve", "helpdesk.escalate_outage", "helpdesk.vip_two_statuses")
    tasks = [
        msgspec.structs.replace(t, world="helpdesk_notool")
        for t in hw.load_tasks("helpdesk")
        if t.id in chosen
    ]
    agent = hw.ScriptedAgent(
        name="mixed",
        scripts={
            "helpdesk.reply_and_solve": _reply_anyway,
            "helpdesk.escalate_outage": MUTANTS["escalate_outage.first_page"].script,
            "helpdesk.vip_two_statuses": ORACLES["helpdesk.vip_two_statuses"],
        },
    )
    hw.run(tasks, agent, out=tmp_path / "run")
    return tmp_path / "run", tasks


def _read(
    out: Path, tasks: list[hw.Task], vouched: dict[str, hw.World]
) -> tuple[RunScan, dict[tuple[str, int], list[Advisory]], dict[tuple[str, int], Any]]:
    """Read a run once, with the advisories and the kept failures diagnose reads."""
    advice, failures = AdviceObserver({t.id: t for t in tasks}), FailureObserver()

    def observe(path: Path, verified: VerifiedRecord) -> None:
        advice(path, verified)
        failures(path, verified)

    scan = RunReader.of(tasks, worlds=vouched).read(out, observe=observe)
    return scan, advice.advised, failures.kept


def test_a_task_made_impossible_is_attributed_to_the_world(
    impossible_run: tuple[Path, list[hw.Task]],
) -> None:
    out, tasks = impossible_run
    # The verifier vouches for the user world (never resolved from the run directory).
    vouched = {"helpdesk_notool": hw.load_world(out.parent / "helpdesk_notool")}
    scan, advised, kept = _read(out, tasks, vouched)
    assert scan.counts.passed == 1 and scan.counts.failed == 2
    report = attribute_scan(scan, tasks, kept, oracles=ORACLES)
    sources = {a.task_id: a.source for a in report.attributions}
    assert sources == {"helpdesk.reply_and_solve": "world", "helpdesk.escalate_outage": "agent"}
    world = next(a for a in report.attributions if a.source == "world")
    assert "reference solution" in world.evidence and not world.reviewed
    assert report.counts["world"] == {"reviewed": 0, "automatic": 1}
    # the advisories of the same run name the unfollowed page; the grade is untouched
    advice = {a.task_id: a for a in advise_scan(scan, advised)}
    names = {x.name for x in advice["helpdesk.escalate_outage"].advisories}
    assert "unfollowed_page" in names and advice["helpdesk.escalate_outage"].passed is False
    # with the tool present (the built-in world) the same reference solution passes: agent
    built_in = {"helpdesk_notool": hw.load_world("helpdesk")}
    again = attribute_scan(scan, tasks, kept, oracles=ORACLES, worlds=built_in)
    assert {a.source for a in again.attributions} == {"agent"}


def test_reviewed_labels_override_and_are_counted_apart(
    impossible_run: tuple[Path, list[hw.Task]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, tasks = impossible_run
    code = main(
        [
            "attribute",
            str(out),
            "helpdesk.escalate_outage",
            "0",
            "--as",
            "task_text",
            "--why",
            "the instruction never says there are several pages",
        ]
    )
    assert code == 0 and (out / ATTRIBUTIONS).is_file()
    counts_before = (out / "counts.json").read_bytes()
    vouched = {"helpdesk_notool": hw.load_world(out.parent / "helpdesk_notool")}
    scan, _, kept = _read(out, tasks, vouched)
    report = attribute_scan(scan, tasks, kept, oracles=ORACLES)
    labelled = next(a for a in report.attributions if a.task_id == "helpdesk.escalate_outage")
    assert labelled.source == "task_text" and labelled.reviewed and labelled.automatic == "agent"
    assert report.counts["task_text"] == {"reviewed": 1, "automatic": 0}
    assert report.counts["agent"] == {"reviewed": 0, "automatic": 0}
    assert (out / "counts.json").read_bytes() == counts_before  # grades untouched
    capsys.readouterr()


def test_labels_refuse_what_the_run_did_not_schedule(
    impossible_run: tuple[Path, list[hw.Task]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = impossible_run
    with pytest.raises(AttributionError, match="no task"):
        add_label(out, "helpdesk.nope", 0, "agent", "x")
    with pytest.raises(AttributionError, match="not scheduled"):
        add_label(out, "helpdesk.reply_and_solve", 3, "agent", "x")
    with pytest.raises(AttributionError, match="needs a reason"):
        add_label(out, "helpdesk.reply_and_solve", 0, "agent", " ")
    assert main(["attribute", str(out), "helpdesk.nope", "0", "--as", "agent", "--why", "x"]) == 2
    assert "error:" in capsys.readouterr().err


def _slot(outcome: str, evidence: str = "verified") -> SlotResult:
    return SlotResult(task_id="t", sample=0, path="p", outcome=outcome, evidence=evidence)  # type: ignore[arg-type]


def test_automatic_rules_for_the_harness() -> None:
    world = hw.load_world("helpdesk")
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.reply_and_solve")
    never = oracle_check({})
    crashed = record_calls(
        world, task, [], outcome=Outcome(status="error", reason="connection lost")
    )
    assert automatic_source(_slot("error"), crashed, task, world, never)[0] == "harness"
    # a budget cut-off with consumption below every budget is mis-accounting
    cut = record_calls(
        world, task, [], outcome=Outcome(status="budget_limit", reason="tool_calls budget")
    )
    source, evidence = automatic_source(_slot("budget_limit"), cut, task, world, never)
    assert source == "harness" and "below every budget" in evidence
    # a real cut-off (10 calls of a budget of 10) is the agent's
    calls = [("get_ticket", {"ticket_id": "T-1001"})] * 10
    real = record_calls(world, task, calls, outcome=Outcome(status="budget_limit", reason="x"))
    assert automatic_source(_slot("budget_limit"), real, task, world, never)[0] == "agent"
    assert automatic_source(_slot("", "lost"), None, task, world, never)[0] == "harness"


@given(
    st.lists(
        st.tuples(st.booleans(), st.lists(st.sampled_from(sorted(ADVISORIES)), max_size=4)),
        max_size=30,
    )
)
def test_reach_never_exceeds_its_denominators(attempts: list[tuple[bool, list[str]]]) -> None:
    found = reach(attempts)
    assert found.failed + found.passed == len(attempts)
    assert 0 <= found.explained <= found.failed and 0 <= found.false_alarms <= found.passed
    for row in found.by_name:
        assert row.failed <= found.explained and row.passed <= found.false_alarms
