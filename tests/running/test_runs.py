"""Runs: end to end, resume after kill -9, revision pinning per component, feasibility."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis import build_report
from harness_world.cli import main
from harness_world.coverage import ScriptContext, load_oracles
from harness_world.grading import verify_file
from harness_world.running import (
    RevisionMismatch,
    load_manifest,
    make_revision,
    precheck,
    run,
)
from harness_world.running import revision as _revision
from harness_world.running.reader import RunReader
from tests.conftest import REPO


def test_oracle_run_of_every_task_verifies_and_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    for world in ("helpdesk", "inventory"):
        if not hw.load_tasks(world=world):
            continue
        code = main(
            [
                "run",
                "--world",
                world,
                "--agent",
                "oracle",
                "--samples",
                "5",
                "--out",
                str(out / world),
                "--json",
            ]
        )
        assert code == 0
        summary = json.loads(capsys.readouterr().out)
        inventory = summary["counts"]
        scheduled = len(hw.load_tasks(world=world)) * 5
        assert inventory["scheduled"] == inventory["executed"] == inventory["valid"] == scheduled
        # an oracle's prose (a reply, a note) is pending review: passed_automated, not passed
        assert inventory["passed"] + inventory["pending"] == scheduled
        assert inventory["invalid"] == inventory["missing"] == inventory["failed"] == 0
        assert main(["verify", str(out / world), "--json", "--require-pass"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["evidence"] == {"verified": scheduled, "ungraded": 0, "lost": 0}
        assert report["grades"]["passed"] + report["grades"]["pending"] == scheduled
    manifest = load_manifest(out / "helpdesk")
    seeds = {hw.load_record(p).seed for p in (out / "helpdesk" / "records").rglob("*.json")}
    assert len(seeds) == manifest.samples * len(manifest.tasks)  # every sample its own seed


class StubAgent:
    """An agent with chosen settings that does nothing (revision tests)."""

    def __init__(self, **settings: Any) -> None:
        self._settings = settings
        self.name = "stub"

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)

    def run(self, attempt: hw.Attempt) -> str:
        return "nothing"


BASE: dict[str, Any] = {"model": "m1", "temperature": 0.0, "system_prompt_sha256": "p1"}


@pytest.mark.parametrize(
    ("component", "change"),
    [
        ("world:helpdesk", {"size": "large"}),
        ("task:helpdesk.reply_and_solve", {"task_edit": True}),
        ("system_prompt", {"agent": {**BASE, "system_prompt_sha256": "p2"}}),
        ("agent", {"agent": {**BASE, "model": "m2"}}),
        ("agent", {"agent": {**BASE, "temperature": 1.0}}),
        ("budgets", {"limits": {"turns": 3}}),
        ("samples", {"samples": 2}),
        ("seed", {"seed": 9}),
        ("build", {"build": "another build"}),
        ("tasks", {"more_tasks": True}),
    ],
)
def test_resuming_across_a_changed_component_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, component: str, change: dict[str, Any]
) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.reply_and_solve"]
    out = tmp_path / "run"
    run(tasks, StubAgent(**BASE), samples=1, out=out)
    if "task_edit" in change:
        tasks = [msgspec.structs.replace(tasks[0], instruction=tasks[0].instruction + " Be quick.")]
    if "more_tasks" in change:
        tasks = [
            *tasks,
            next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.security_count"),
        ]
    if "build" in change:
        monkeypatch.setattr(_revision, "build_identity", lambda: change["build"])
    with pytest.raises(RevisionMismatch) as caught:
        run(
            tasks,
            StubAgent(**change.get("agent", BASE)),
            samples=change.get("samples", 1),
            seed=change.get("seed", 0),
            out=out,
            size=change.get("size", "small"),
            limits=change.get("limits"),
        )
    assert component in caught.value.components
    assert component in str(caught.value)


def test_context_is_not_part_of_the_revision(tmp_path: Path) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.reply_and_solve"]
    first = run(tasks, StubAgent(**BASE), samples=2, out=tmp_path / "a")
    second = run(tasks, StubAgent(**BASE), samples=2, out=tmp_path / "b", executor=hw.Processes(2))
    assert first.revision == second.revision


SLOW_SCRIPTS = """
import time
import harness_world as hw
from harness_world.coverage import load_oracles
ORACLES = load_oracles("helpdesk")

def slowly(script):
    def run(ctx):
        time.sleep(0.03)
        return script(ctx)
    return run

SCRIPTS = {task: slowly(script) for task, script in ORACLES.items()}
"""
_LOST_RESPONSE = {"helpdesk.reply_lost_response", "helpdesk.reply_no_fault"}
ORIGINAL_TASKS = [
    t.id for t in hw.load_tasks("helpdesk") if t.authority is None and t.id not in _LOST_RESPONSE
]
"""The twelve helpdesk tasks outside the planted-request and lost-response conditions."""
assert len(ORIGINAL_TASKS) == 12, ORIGINAL_TASKS


def test_kill_9_midway_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(SLOW_SCRIPTS)
    out = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "harness_world",
        "run",
        "--world",
        "helpdesk",
        "--tasks",
        *ORIGINAL_TASKS,  # hdattack: the counts below are the twelve original tasks'
        "--agent",
        "scripted",
        "--script",
        str(script),
        "--samples",
        "4",
        "--out",
        str(out),
        "--json",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        command, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 60
    while time.time() < deadline and len(list(out.rglob("*.json"))) < 12:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = {p: p.read_bytes() for p in (out / "records").rglob("*.json")}
    assert 10 <= len(saved) < 48, len(saved)
    for path in saved:
        assert verify_file(path)[1].evidence == "verified"
    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    summary = json.loads(done.stdout)
    assert summary["resumed"] == len(saved)
    inventory = summary["counts"]
    assert inventory["scheduled"] == inventory["executed"] == inventory["valid"] == 48
    assert inventory["missing"] == 0 and inventory["retried"] == 0
    files = sorted((out / "records").rglob("*.json"))
    assert len(files) == 48 and not list(out.rglob(".*.tmp"))
    for path, blob in saved.items():
        assert path.read_bytes() == blob  # kept, not re-run
    assert len(load_manifest(out).contexts) == 2


def test_precheck_refuses_a_40_call_limit_for_42_writes(small: hw.World) -> None:
    base = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.escalate_outage")
    task = msgspec.structs.replace(base, id="test.forty_two_writes")

    def forty_two(ctx: ScriptContext) -> str:
        keys = [
            t["id"]
            for t in ctx.call("list_tickets", {"status": "open", "limit": 42}).result["tickets"]
        ]
        for key in keys:
            ctx.call("update_ticket", {"ticket_id": key, "priority": "urgent"})
        return "done"

    (verdict,) = precheck([task], limits={"tool_calls": 40}, oracles={task.id: forty_two})
    assert (
        verdict.verdict == "refuse" and verdict.oracle_writes == 42 and verdict.oracle_calls == 43
    )
    assert "below the 42 writes" in verdict.message
    (tight,) = precheck([task], limits={"tool_calls": 44}, oracles={task.id: forty_two})
    assert tight.verdict == "warn"
    (roomy,) = precheck(
        [task], limits={"tool_calls": 100, "turns": 100}, oracles={task.id: forty_two}
    )
    assert roomy.verdict == "ok"


def test_run_refuses_an_infeasible_setup_before_any_attempt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never"
    code = main(
        [
            "run",
            "--world",
            "helpdesk",
            "--tasks",
            "helpdesk.billing_review_tag",
            "--agent",
            "oracle",
            "--tool-calls",
            "40",
            "--out",
            str(out),
        ]
    )
    assert code == 1 and not out.exists()
    assert "below the 43 writes" in capsys.readouterr().err
    assert main(["precheck", "--world", "helpdesk", "--tool-calls", "40"]) == 1


def test_inventory_counts_error_outcomes_and_retries(tmp_path: Path) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.reply_and_solve"]

    class Flaky(StubAgent):
        def run(self, attempt: hw.Attempt) -> str:
            # A driver signals the provider's failure, not its own (see test_trust_agents).
            raise hw.InfrastructureError("provider down")

    result = run(tasks, Flaky(**BASE), samples=2, out=tmp_path / "r", retries=1)
    inventory = result.counts
    assert inventory.scheduled == inventory.executed == 2 and inventory.retried == 2
    assert inventory.valid == 0 and inventory.invalid == 2
    assert inventory.by_outcome == {"infrastructure": 2}
    assert RunReader.of().read(tmp_path / "r").counts == inventory


def test_a_task_edited_after_the_run_is_not_graded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.security_count"]
    agent = hw.ScriptedAgent(name="o", scripts=load_oracles("helpdesk"))
    hw.run(tasks, agent, samples=1, out=tmp_path / "r")
    edited = [msgspec.structs.replace(tasks[0], instruction="Something else.")]
    inventory = RunReader.of(edited).read(tmp_path / "r").counts
    assert (inventory.valid, inventory.passed, inventory.failed, inventory.not_graded) == (
        1,
        0,
        0,
        1,
    )
    report = build_report(tmp_path / "r", RunReader.of(edited))
    assert [a.passed for a in report.attempts] == [None]


def test_the_revision_does_not_depend_on_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = hw.load_tasks("helpdesk")[:1]
    first = make_revision(
        worlds={"helpdesk": hw.load_world("helpdesk")},
        tasks=tasks,
        agent_settings={},
        budgets={},
        samples=1,
        seed=0,
    )
    (tmp_path / "helpdesk").mkdir()
    monkeypatch.chdir(tmp_path)
    second = make_revision(
        worlds={"helpdesk": hw.load_world("helpdesk")},
        tasks=tasks,
        agent_settings={},
        budgets={},
        samples=1,
        seed=0,
    )
    assert first == second and first.values["world:helpdesk"]["code"]


def test_run_with_an_unknown_size_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--world", "helpdesk", "--size", "huge", "--out", os.devnull]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --size huge") and err.count("\n") == 1
