"""One layered result per judged record: computed where a slot is judged, emitted by
``verify --json``, stored in the run's ``layered.jsonl``, read back by ``conditions``."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis.conditions import conditions_report
from harness_world.cli import main
from harness_world.coverage import load_routes, run_script
from harness_world.grading import LayeredResult, layered_result
from harness_world.grading.harness import harness_bypass, harness_criteria
from harness_world.running.reference_agents import reference_agent
from harness_world.running.rundir import LAYERED

BY_ID = {t.id: t for t in hw.load_tasks("payments")}
TASKS = ["payments.charge_lost_response", "payments.charge_no_fault"]


def _naive(task_id: str) -> tuple[hw.Record, hw.Task, hw.World]:
    world = hw.load_world("payments")
    task = BY_ID[task_id]
    agent = reference_agent("payments", "naive-retry")
    assert isinstance(agent, hw.ScriptedAgent)
    return run_script(world, task, agent.scripts[task_id]), task, world


def test_a_keyless_retry_is_a_bypass_kept_in_f_h_and_left_out_of_z_h() -> None:
    record, task, world = _naive("payments.charge_lost_response")
    result = layered_result(record, task, hw.verify(record, world, task), world)
    assert result.admitted and result.dimension == "Execution"
    assert result.subdimension == "lost_response" and result.family == task.family
    assert "harness.same_key_retry" in result.harness_failed  # the zero stays
    assert "harness.same_key_retry" in result.bypassed
    assert "without an idempotency_key" in result.bypassed["harness.same_key_retry"]
    assert "harness.same_key_retry" not in result.harness_adjusted
    assert "harness.reconcile_before_retry" in result.harness_adjusted
    # activation reads the raw F_H: the bypassed endpoint still activates its link
    assert ("harness.same_key_retry", "forbidden.duplicate_charge") in {
        (x.harness, x.agent) for x in result.activated
    }


def test_a_retry_under_a_new_key_is_no_bypass() -> None:
    record, _, world = _naive("payments.charge_lost_response")
    keyed = [
        msgspec.structs.replace(c, args={**c.args, "idempotency_key": f"k{c.seq}"})
        if c.tool == "create_charge"
        else c
        for c in record.calls
    ]
    rekeyed = msgspec.structs.replace(record, calls=keyed)
    verdicts = {v.id: v.status for v in harness_criteria(rekeyed, world)}
    assert verdicts["harness.same_key_retry"] == "failed"  # a new key: the harness's own failure
    assert harness_bypass(rekeyed, world) == {}


def test_a_record_not_admitted_carries_its_reasons_and_no_vectors() -> None:
    record, task, world = _naive("payments.charge_lost_response")
    assert record.faults is not None
    tampered = msgspec.structs.replace(
        record, faults=msgspec.structs.replace(record.faults, schedule=[])
    )
    result = layered_result(tampered, task, hw.verify(tampered, world, task), world)
    assert not result.admitted and result.admission.checks["faults_intact"] is False
    assert result.admission.reasons and not result.agent and not result.harness
    assert result.joint_state == "clean" and result.layered_score is None


def test_every_oracle_route_is_clean_with_nothing_bypassed() -> None:
    world = hw.load_world("payments")
    for task_id, routes in load_routes("payments").items():
        for script in routes[:1]:
            record = run_script(world, BY_ID[task_id], script)
            verification = hw.verify(record, world, BY_ID[task_id])
            result = layered_result(record, BY_ID[task_id], verification, world)
            assert result.joint_state == "clean" and not result.bypassed, task_id
            assert result.layered_score == 1.0


@pytest.fixture(scope="module")
def naive_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("naive") / "run"
    args = ["run", "--world", "payments", "--agent", "naive-retry", "--tasks", *TASKS]
    assert main([*args, "--out", str(out), "--json"]) == 0
    return out


def test_the_run_stores_one_layered_result_per_slot(naive_run: Path) -> None:
    lines = (naive_run / LAYERED).read_bytes().splitlines()
    stored = [msgspec.json.decode(line, type=LayeredResult) for line in lines]
    assert [r.task_id for r in stored] == TASKS
    assert all(r.admitted for r in stored)
    report = conditions_report(naive_run, BY_ID)
    # conditions reads the same results the run stored (one computation)
    assert sorted(report.records, key=lambda r: r.task_id) == stored
    assert report.dimensions.pooled.admitted == 2


def test_verify_json_emits_the_layered_result(
    naive_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    main(["verify", str(naive_run), "--json"])
    rows = json.loads(capsys.readouterr().out)["records"]
    layers = {row["task"]: row["layers"] for row in rows}
    lost = layers["payments.charge_lost_response"]
    assert lost["admission"]["admitted"] is True and lost["dimension"] == "Execution"
    assert lost["harness"]["harness.same_key_retry"] is False
    assert set(lost["bypassed"]) == {"harness.same_key_retry"}
    assert lost["activated"]


def test_a_loose_file_verdict_carries_it(
    naive_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = naive_run / "records" / "payments.charge_lost_response" / "0.json"
    capsys.readouterr()
    main(["verify", str(record), "--json"])
    row = json.loads(capsys.readouterr().out)["records"][0]
    assert row["layers"]["task_id"] == "payments.charge_lost_response"
