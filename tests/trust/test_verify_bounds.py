"""Verify is bounded: provenance before replay, a call bound before replay, a work bound during it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.evidence.record import Outcome, make_record
from harness_world.grading import slot_result
from tests.conftest import Cli
from tests.trust._helpers import keypair, oracle_run


def _no_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any replay fail loudly: a record judged without replaying shows no trace of it."""

    def refuse(*_: object, **__: object) -> object:
        raise AssertionError("replayed")

    monkeypatch.setattr(slot_result, "verify", refuse)  # what the verifier replays with


def _over_budget(folder: Path) -> tuple[Path, int]:
    """A record of ``helpdesk.comment_assign_authority`` with more calls than its budget."""
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.comment_assign_authority")
    budget = task.budgets.tool_calls
    assert budget is not None
    session = hw.load_world("helpdesk").open_session(0)
    for _ in range(budget + 5):
        session.call("get_ticket", {"ticket_id": "T-1001"})
    record = make_record(
        session, outcome=Outcome(status="completed"), task_id=task.id, task_hash=task.hash
    )
    path = folder / "over.json"
    hw.save_record(record, path)
    return path, budget


def test_a_record_over_its_tasks_call_budget_is_refused_before_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    path, budget = _over_budget(tmp_path)
    _no_replay(monkeypatch)
    code, out, _ = cli("verify", "--json", str(path))
    (row,) = json.loads(out)["records"]
    assert code == 1 and row["evidence"] == "ungraded", row
    assert "more than task 'helpdesk.comment_assign_authority'" in row["first_problem"]
    assert f"({budget}); not replayed" in row["first_problem"]
    # evidence only (no tasks): the verifier's own bound applies, and can be lowered
    code, out, _ = cli("verify", "--json", "--no-grade", "--max-calls", "3", str(path))
    (row,) = json.loads(out)["records"]
    assert (
        code == 1
        and "more than the verifier's call bound allows (3); not replayed" in row["first_problem"]
    )


def test_the_call_bound_holds_in_run_directories_and_bad_values_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    run = oracle_run(tmp_path / "run")
    code, out, _ = cli("verify", "--json", str(run))
    assert code == 0
    _no_replay(monkeypatch)
    code, out, _ = cli("verify", "--json", "--max-calls", "1", str(run))
    rows = json.loads(out)["records"]
    assert code == 1 and rows and all("not replayed" in r["first_problem"] for r in rows), rows
    code, _, err = cli("verify", "--max-calls", "0", str(run))
    assert code == 2 and err.strip() == "error: --max-calls must be at least 1, not 0"


def test_the_work_bound_ends_a_costly_replay_as_lost_with_its_reason(
    tmp_path: Path, cli: Cli
) -> None:
    run = oracle_run(tmp_path / "run")
    code, out, _ = cli("verify", "--json", "--max-work", "5", str(run))
    rows = json.loads(out)["records"]
    lost = [r for r in rows if r["evidence"] == "lost"]
    assert code == 1 and lost, rows
    assert all("more than the work bound of 5" in r["first_problem"] for r in lost)
    # the same records within the default bound verify: the bound is not the verdict
    code, out, _ = cli("verify", "--json", str(run))
    assert code == 0 and json.loads(out)["evidence"]["verified"] == len(rows)


def test_a_bad_signature_is_reported_before_any_record_is_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    pytest.importorskip("cryptography", reason="signing needs the [sign] extra")
    from harness_world.evidence.signing import sign_run

    private, public = keypair(tmp_path)
    run = tmp_path / "run"
    result = hw.run(hw.load_tasks("helpdesk")[:3], hw.oracle_agent("helpdesk"), out=run)
    sign_run(run, result.revision.id, private)
    signature = json.loads((run / "index.sig.json").read_text())
    signature["signature"] = "00" * 64
    (run / "index.sig.json").write_text(json.dumps(signature))
    _no_replay(monkeypatch)
    code, out, _ = cli("verify", "--json", "--trust-key", str(public), str(run))
    rows = json.loads(out)["records"]
    assert code == 1 and len(rows) == 3
    assert all(r["evidence"] == "ungraded" for r in rows)
    assert all(r["first_problem"].startswith("provenance: ") for r in rows), rows
    assert not any("replayed" in r["first_problem"] for r in rows)


def test_a_long_verify_of_a_run_directory_shows_progress_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    pytest.importorskip("rich", reason="the live display needs rich")
    run = tmp_path / "run"
    hw.run(hw.load_tasks("helpdesk")[:2], hw.oracle_agent("helpdesk"), samples=12, out=run)
    seen: list[tuple[int, int]] = []

    class Recorder:
        def __init__(self, total: int, label: str) -> None:
            self.total = total

        def update(self, done: int, *_: object) -> None:
            seen.append((done, self.total))

    from harness_world.running import live_progress as _progress

    monkeypatch.setattr(_progress, "live_enabled", lambda **_: True)
    monkeypatch.setattr(_progress, "LiveProgress", Recorder)
    code, _, _ = cli("verify", str(run))
    assert code == 0
    assert seen and seen[-1] == (24, 24) and [d for d, _ in seen] == list(range(1, 25))
