"""What an MCP server serves, decided without the MCP SDK: one record, or k samples into a run."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.integrations.mcp import attempt_server, serve_summary, token_problem

pytestmark = pytest.mark.integrations

TASK = "helpdesk.reply_and_solve"


def _task() -> hw.Task:
    return next(t for t in hw.load_tasks("helpdesk") if t.id == TASK)


def test_one_attempt_goes_to_its_record_and_k_samples_into_a_run(tmp_path: Path) -> None:
    world = hw.load_world("helpdesk")
    single = attempt_server(world, _task(), record=tmp_path / "r.json", seed=7)
    assert [(t.sample, t.seed, t.path) for t in single.targets] == [
        (0, 7, str(tmp_path / "r.json"))
    ]
    plan = attempt_server(world, _task(), samples=3, out=tmp_path / "run", reveal_grade=True)
    try:
        assert plan.reveal_grade and plan.remaining == 3 and len(plan.targets) == 3
        summary = msgspec.to_builtins(serve_summary(plan))
        assert summary == {"saved": [], "remaining": 3}
    finally:
        plan.release()


def test_a_bearer_token_is_a_header_value() -> None:
    assert token_problem("abc-._~+/==") == ""
    assert "no spaces" in token_problem("a b")
