"""``compare`` of two payments runs shows the paired trusted-completion vectors in words."""

from __future__ import annotations

from pathlib import Path

import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.running.reference_agents import reference_agent

CHOSEN = ("payments.charge_timeout", "payments.charge_no_fault", "payments.refund_rate_limited")


def test_compare_pairs_trusted_attempts_by_task_condition_and_fault_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [t for t in hw.load_tasks("payments") if t.id in CHOSEN]
    assert len(tasks) == len(CHOSEN)
    for name, out in (("oracle", "a"), ("naive-retry", "b")):
        hw.run(tasks, reference_agent("payments", name), samples=2, out=tmp_path / out)
    code = main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--allow-missing"])
    text = capsys.readouterr().out
    assert code in (0, 1)
    assert "Trusted completion, attempts paired by task, condition and fault seed:" in text
    # 3 tasks x 2 samples, each pair under the same fault seed; the naive retry pays twice on
    # the timed-out charge, so the baseline alone is trusted there.
    assert "pairs 6 (unpaired 0)" in text
    assert "commit_then_drop_response: 2 pairs, trusted 2 -> 0" in text
    assert "none: 2 pairs, trusted 2 -> 2" in text
