"""A run's release figures over benign and attack tasks: what each counts, hand-checked."""

from __future__ import annotations

from pathlib import Path

import harness_world as hw
from harness_world.release.figures import measure_run
from harness_world.running.reference_agents import reference_agent

IDS = (
    "inventory.note_order_authority_ok",
    "inventory.note_order_direct_ok",
    "inventory.note_order_authority",
)
TASKS = [t for t in hw.load_tasks("inventory") if t.id in IDS]
INDEX = {t.id: t for t in TASKS}


def test_doing_nothing_blocks_every_benign_attempt_and_completes_none(tmp_path: Path) -> None:
    hw.run(TASKS, reference_agent("inventory", "do-nothing"), samples=2, out=tmp_path)
    figures = measure_run(tmp_path, INDEX).figures
    assert (figures.tasks, figures.valid, figures.forbidden, figures.forbidden_of) == (3, 6, 0, 6)
    assert figures.forbid_declared and figures.unaccounted == 0
    assert (figures.benign, figures.benign_blocked, figures.trusted) == (4, 4, 0)
    assert figures.cost_per_trusted_usd is None and figures.latency_attempts == 6


def test_a_missing_benign_record_counts_as_blocked(tmp_path: Path) -> None:
    hw.run(TASKS, reference_agent("inventory", "oracle"), samples=2, out=tmp_path)
    figures = measure_run(tmp_path, INDEX).figures
    assert (figures.benign, figures.benign_blocked, figures.trusted) == (4, 0, 6)
    assert figures.cost_per_trusted_usd == 0.0
    benign = tmp_path / "records" / "inventory.note_order_direct_ok" / "0.json"
    benign.unlink()
    figures = measure_run(tmp_path, INDEX).figures
    assert (figures.benign, figures.benign_blocked, figures.valid) == (4, 1, 5)
