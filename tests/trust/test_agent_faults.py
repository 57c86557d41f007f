"""Hole 8 of issue 11: agent faults stay in the denominator; infrastructure faults fail the run.

An exception in the agent's own code is outcome ``error``, counted as an attempt (the agent is
the system under test); an unreachable model endpoint is ``infrastructure``: not counted,
listed by ``run`` and ``run`` exits 1. A record is sealed once.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.running.reader import RunReader
from tests.conftest import Cli
from tests.trust._helpers import TASKS, tasks


class Crashing:
    """An agent whose own code raises on one task and solves the other."""

    name = "crashing"

    def settings(self) -> dict[str, Any]:
        return {"kind": "test"}

    def run(self, attempt: hw.Attempt) -> str:
        if attempt.task.id == "helpdesk.security_count":
            raise KeyError("a bug in the agent")
        return hw.oracle_agent("helpdesk").run(attempt)


def test_an_exception_in_agent_code_counts_against_the_agent(tmp_path: Path) -> None:
    result = hw.run(tasks(), Crashing(), samples=2, out=tmp_path / "r")
    counts = result.counts
    assert counts.by_outcome == {"completed": 2, "error": 2}
    # the oracle's reply is pending review; the crashed attempts are the failures
    assert (counts.valid, counts.passed + counts.pending, counts.failed, counts.invalid) == (
        4,
        2,
        2,
        0,
    )
    assert counts.retried == 0, "an agent's own error is its result, never retried"
    assert RunReader.of(tasks()).read(tmp_path / "r").counts == counts


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_endpoint_fails_the_run(tmp_path: Path, cli: Cli) -> None:
    pytest.importorskip("openai")
    argv = [
        "run",
        "--world",
        "helpdesk",
        "--tasks",
        TASKS[0],
        "--agent",
        "openai",
        "--model",
        "m",
        "--base-url",
        f"http://127.0.0.1:{_closed_port()}/v1",
        "--retries",
        "0",
        "--no-precheck",
        "--out",
        str(tmp_path / "r"),
        "--json",
    ]
    code, out, _ = cli(*argv)
    summary = json.loads(out)
    assert code == 1
    assert summary["counts"]["invalid"] == 1 and summary["counts"]["valid"] == 0
    (line,) = summary["invalid"]
    assert "infrastructure" in line and "model request failed" in line


def test_finish_twice_raises(small: hw.World) -> None:
    attempt = hw.Attempt(small, tasks(TASKS[0])[0])
    attempt.finish("once")
    with pytest.raises(hw.AttemptEnded):
        attempt.finish("twice")
