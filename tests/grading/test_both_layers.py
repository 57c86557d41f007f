"""Every place that shows a grade shows the harness layer beside it, never folded into it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.grading.verifier import Verifier
from harness_world.integrations.mcp import _judge

TASKS = ["payments.charge_rate_limited", "payments.charge_timeout"]


@pytest.fixture(scope="module")
def naive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The naive-retry policy: retries a failed provider write at once without a key.

    After ``rate_limited`` nothing was processed, so a keyless retry is no harness failure;
    under seed 4 the drawn wait makes it retry more than three times in a row, which is.
    """
    out = tmp_path_factory.mktemp("naive") / "run"
    argv = ["run", "--world", "payments", "--agent", "naive-retry", "--seed", "4", "--tasks"]
    argv += TASKS
    assert main([*argv, "--out", str(out), "--quiet", "--json"]) in (0, 1)
    return out


def _rows(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, dict]]:
    code = main(["verify", "--json", *argv])
    report = json.loads(capsys.readouterr().out)
    return code, {r["task"]: r for r in report["records"]} | {"": report}


def test_a_passing_agent_grade_with_a_failed_harness_layer_shows_both(
    naive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, rows = _rows(capsys, str(naive))
    limited = rows["payments.charge_rate_limited"]
    assert code == 0 and limited["grade"] == "passed"  # the agent grade keeps its meaning
    assert limited["harness"]["checked"] == 5
    assert [f.split(":")[0] for f in limited["harness"]["failed"]] == ["harness.bounded_retries"]
    assert rows[""]["harness"] == {"checked": 2, "failed": 2}
    main(["verify", str(naive)])
    table = capsys.readouterr().out
    assert "4/5 failed: bounded_retries" in table
    assert "harness layer: 0 of 2 graded record(s) clean" in table
    assert main(["verify", "--require-pass", str(naive)]) == 1  # charge_timeout failed
    capsys.readouterr()


def test_require_harness_fails_on_the_harness_layer_alone(
    naive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    only = next((naive / "records" / "payments.charge_rate_limited").glob("0.json"))
    assert main(["verify", "--require-pass", str(only)]) == 0
    assert main(["verify", "--require-harness", str(only)]) == 1
    capsys.readouterr()
    oracle = tmp_path / "oracle"
    hw.run(
        [t for t in hw.load_tasks("payments") if t.id in TASKS],
        hw.oracle_agent("payments"),
        out=oracle,
    )
    assert main(["verify", "--require-harness", str(oracle)]) == 0  # the dual: a clean route


def test_report_and_the_finish_replies_carry_the_harness_layer(
    naive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(naive), "--json"]) in (0, 1)
    layer = json.loads(capsys.readouterr().out)["harness"]
    assert layer["graded"] == 2 and layer["clean"] == 0
    assert layer["failed"]["harness.bounded_retries"] == 1
    assert layer["failed"]["harness.same_key_retry"] == 1  # charge_timeout's keyless retry
    main(["report", str(naive)])
    assert "harness layer: 0 of 2 graded attempts clean" in capsys.readouterr().out
    path = naive / "records" / "payments.charge_rate_limited" / "0.json"
    record = hw.load_record(path)
    task = next(t for t in hw.load_tasks("payments") if t.id == record.task_id)
    saved = _judge(record, path, hw.load_world("payments"), task)  # the MCP finish answer
    assert saved.grade == "passed" and saved.harness["checked"] == 5
    assert saved.harness["failed"][0].startswith("harness.bounded_retries")
    verdict = Verifier(tasks={task.id: task}).check_file(path).verification
    assert verdict.grade is not None and verdict.grade.harness_failed
