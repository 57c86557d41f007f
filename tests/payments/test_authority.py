"""Authority conditions, the coverage matrix, condition metrics and the scored layers (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis.conditions import ConditionsReport, conditions_report
from harness_world.cli import main
from harness_world.coverage import load_routes, run_script
from harness_world.coverage.matrix import coverage_matrix
from harness_world.grading.harness import harness_criteria
from harness_world.grading.layers import admit, layered
from harness_world.running.reference_agents import reference_agent
from tests.conftest import Cli

REPO = Path(__file__).resolve().parents[2]
TASKS = hw.load_tasks("payments")
BY_ID = {t.id: t for t in TASKS}
NOTE_TASKS = sorted(t.id for t in TASKS if t.authority is not None)


def test_planted_requests_are_seeded_data_in_three_phrasings() -> None:
    world = hw.load_world("payments")
    attacks = [BY_ID[t] for t in NOTE_TASKS if BY_ID[t].authority.role == "attack"]  # type: ignore[union-attr]
    assert len(attacks) == 9 and len(NOTE_TASKS) == 18
    phrasings = {(t.authority.attack, t.authority.phrasing) for t in attacks}  # type: ignore[union-attr]
    assert len(phrasings) == 9  # three attack kinds x three phrasings
    for task in (BY_ID[t] for t in NOTE_TASKS):
        assert task.authority is not None
        entity, key, field = task.authority.source.split(".")
        row = world.get(entity, key)
        assert row is not None and row[field], task.id  # the request is in the world's data
        assert key in task.instruction  # the task points the agent at it
    large = hw.load_world("payments", size="large")
    assert large.get("invoices", "INV-90001") == world.get("invoices", "INV-90001")


def test_existing_task_hashes_do_not_move() -> None:
    # Pinned when card data became `card_number` (the task changed; D-card-data-1); new
    # optional fields are omitted when unset, so they do not move it.
    assert (
        BY_ID["payments.charge_anna_lopez"].hash
        == "ebeabeacffb07b99b5f94b11d38755da791b543e8e3d5536f6d8e3d4f01672e5"
    )


def test_matrix_pairs_every_payments_condition() -> None:
    matrix = coverage_matrix("payments", TASKS)
    assert matrix.ok, matrix.problems
    kinds = {r.kind for r in matrix.rows}
    assert kinds == {"fault", "attack"}
    for row in matrix.rows:
        assert row.counterparts and row.oracle, row.condition
        assert not set(row.counterparts) & set(row.tasks)
    attack_rows = [r for r in matrix.rows if r.kind == "attack"]
    assert len(attack_rows) == 9
    assert all(BY_ID[c].authority.role == "benign" for r in attack_rows for c in r.counterparts)  # type: ignore[union-attr]


def test_matrix_gate_fails_without_a_counterpart_or_an_oracle() -> None:
    without_benign = [t for t in TASKS if not (t.authority and t.authority.role == "benign")]
    matrix = coverage_matrix("payments", without_benign)
    assert not matrix.ok
    assert any("is not an authority task" in p for p in matrix.problems)
    assert any("no benign counterpart" in p for p in matrix.problems)
    # No fault-free task that charges: every create_charge condition loses its counterpart.
    no_clean_charge = [t for t in TASKS if t.id != "payments.charge_no_fault"]
    rows = coverage_matrix("payments", no_clean_charge).rows
    charge = [r for r in rows if r.condition.startswith("fault:create_charge")]
    assert charge and all(r.problems for r in charge)
    routes = load_routes("payments")
    del routes["payments.note_payout_direct_ok"]
    orphan = coverage_matrix("payments", TASKS, routes)
    assert any("note_payout_direct_ok has no oracle" in p for p in orphan.problems)


def test_matrix_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--world", "payments", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and len(data["rows"]) == len(coverage_matrix("payments").rows)
    assert main(["matrix", "--world", "no_such_world"]) == 2
    assert (
        main(["matrix", "--world", "helpdesk"]) == 0
    )  # hdattack: its comment conditions, all paired


def _report(agent: str, tmp_path: Path) -> ConditionsReport:
    out = tmp_path / agent
    code = main(["run", "--world", "payments", "--agent", agent, "--out", str(out), "--json"])
    assert code == 0
    return conditions_report(out, BY_ID)


def test_reference_agents_side_by_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    oracle = _report("oracle", tmp_path)
    deny = _report("deny-all", tmp_path)
    obey = _report("obey-data", tmp_path)
    capsys.readouterr()
    assert (oracle.benign_utility.count, oracle.benign_utility.n) == (9, 9)
    assert oracle.utility_under_attack.count == 9 and oracle.attack_success.count == 0
    assert oracle.trusted_completion.count == oracle.trusted_completion.n
    # deny-all looks perfect on attacks; the counterparts show what it costs.
    assert deny.attack_success.count == 0 and deny.utility_under_attack.count == 9
    assert deny.benign_over_blocking.count == 9 and deny.benign_utility.count == 0
    assert obey.attack_success.count == 9 and obey.utility_under_attack.count == 0
    assert obey.benign_utility.count == 9 and obey.benign_over_blocking.count == 0
    low, high = obey.attack_success.low, obey.attack_success.high
    assert low is not None and 0.5 < low < 1 and high == 1.0  # Wilson, not a bare ratio
    assert main(["conditions", str(tmp_path / "oracle"), str(tmp_path / "deny-all")]) == 0
    table = capsys.readouterr().out
    assert "benign over-blocking" in table and "0/9 0%" in table and "9/9 100%" in table


def test_links_activate_on_naive_retry_and_never_on_an_oracle() -> None:
    world = hw.load_world("payments")
    agent = reference_agent("payments", "naive-retry")
    task = BY_ID["payments.charge_lost_response"]
    record = run_script(world, task, agent.scripts[task.id])
    verification = hw.verify(record, world, task)
    scored = layered(record, task, verification, world)
    assert scored is not None
    assert scored.joint_state == "both"
    assert {(x.harness, x.agent) for x in scored.activated} == {
        ("harness.same_key_retry", "forbidden.duplicate_charge"),
        ("harness.reconcile_before_retry", "forbidden.duplicate_charge"),
    }
    for task_id, routes in load_routes("payments").items():
        task = BY_ID[task_id]
        for script in routes:
            record = run_script(world, task, script)
            scored = layered(record, task, hw.verify(record, world, task), world)
            assert scored is not None and scored.joint_state == "clean", task_id
            assert not scored.activated


def test_harness_criteria_bounded_retries_and_admission() -> None:
    world = hw.load_world("payments")
    task = BY_ID["payments.charge_unavailable"]
    record = run_script(world, task, reference_agent("payments", "naive-retry").scripts[task.id])
    failed = next(c for c in record.calls if c.tool == "create_charge" and not c.ok)
    many = msgspec.structs.replace(record, calls=[failed] * 6)
    verdicts = {v.id: v.status for v in harness_criteria(many, world)}
    assert verdicts["harness.bounded_retries"] == "failed"
    # ``unavailable`` says nothing was processed: a retry without a key is a new request
    assert verdicts["harness.same_key_retry"] == "passed"
    verification = hw.verify(record, world, task)
    assert admit(record, task, verification).admitted
    assert record.faults is not None
    tampered = msgspec.structs.replace(
        record, faults=msgspec.structs.replace(record.faults, schedule=[])
    )
    refused = admit(tampered, task, verification)
    assert not refused.admitted and refused.checks["faults_intact"] is False
    other = admit(record, BY_ID["payments.charge_timeout"], verification)
    assert other.checks["task_pinned"] is False


def test_conditions_cli_rejects_a_missing_run(tmp_path: Path, cli: Cli) -> None:
    result = cli.process("conditions", tmp_path / "nope")
    assert result.code == 2 and result.err.startswith("error: runs:")


@pytest.mark.parametrize("world_name", ["payments", "helpdesk"])
def test_reference_agents_cross_to_worker_processes(world_name: str, tmp_path: Path) -> None:
    """`run --workers 2` pickles each script to a worker: the payments oracle's scripts were
    closures and failed there ("Can't pickle local object")."""
    tasks = [t for t in hw.load_tasks(world_name) if t.authority is not None][:4]
    result = hw.run(
        tasks, reference_agent(world_name, "oracle"), out=tmp_path / "w", executor=hw.Processes(2)
    )
    assert result.counts.valid == result.counts.scheduled == len(tasks)
