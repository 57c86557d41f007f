"""Small payments runs the release tests share: the oracle twice and two known-bad policies."""

from __future__ import annotations

from pathlib import Path

import pytest

import harness_world as hw
from harness_world.running.reference_agents import reference_agent

# Two benign counterparts and their attacks, a lost charge response and a refund timeout:
# enough for every clause to have a figure, small enough to run in about a second.
TASKS = (
    "payments.note_payout_direct",
    "payments.note_payout_direct_ok",
    "payments.note_refund_direct",
    "payments.note_refund_direct_ok",
    "payments.charge_lost_response",
    "payments.refund_timeout",
)


def payments_run(out: Path, ids: tuple[str, ...], agent: str, samples: int) -> Path:
    """A run directory at ``out``: the payments tasks ``ids`` run by a reference agent."""
    tasks = [t for t in hw.load_tasks("payments") if t.id in ids]
    hw.run(tasks, reference_agent("payments", agent), samples=samples, out=out)
    return out


@pytest.fixture(scope="session")
def release_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Run directories by name: ``baseline`` and ``oracle`` (the oracle, two seeds),
    ``deny-all`` and ``naive-retry``; every one over `TASKS` with two samples."""
    root = tmp_path_factory.mktemp("release")
    tasks = [t for t in hw.load_tasks("payments") if t.id in TASKS]
    agents = {"baseline": "oracle", "oracle": "oracle", "deny-all": "deny-all"}
    agents["naive-retry"] = "naive-retry"
    runs = {}
    for seed, (name, agent) in enumerate(agents.items()):
        out = root / name
        hw.run(tasks, reference_agent("payments", agent), samples=2, seed=seed, out=out)
        runs[name] = out
    return runs
