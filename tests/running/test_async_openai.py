"""The OpenAI agent over the SDK's async client: concurrent attempts, the same records."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import harness_world as hw
from harness_world.integrations.openai import AsyncOpenAIAgent, OpenAIAgent
from tests.conftest import requires
from tests.fake_openai import fake_openai
from tests.running.test_agents import reply_and_solve_brain

pytestmark = [
    pytest.mark.integrations,
    requires("openai", "the OpenAI agent needs the [openai] extra"),
]

TASK = "helpdesk.reply_and_solve"


def _evidence(record: hw.Record) -> bytes:
    """Everything but context (wall-clock times, pid): what must not depend on concurrency."""
    return msgspec.json.encode(msgspec.structs.replace(record, context=hw.evidence.RecordContext()))


def test_concurrent_async_attempts_record_what_sequential_ones_do(tmp_path: Path) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id == TASK]
    with fake_openai(reply_and_solve_brain()) as server:  # type: ignore[arg-type]
        config = OpenAIAgent(model="fake-1", base_url=server["base_url"], price_in_per_mtok=1.0)
        sequential = hw.run(tasks, config, samples=4, out=tmp_path / "seq")
        concurrent = hw.run(
            tasks,
            AsyncOpenAIAgent(config),
            samples=4,
            out=tmp_path / "async",
            executor=hw.Concurrent(4),
        )
    assert sequential.revision == concurrent.revision  # the client kind changes no result
    assert concurrent.counts.valid == concurrent.counts.passed + concurrent.counts.pending == 4
    for sample in range(4):
        path = Path("records") / TASK / f"{sample}.json"
        seq = hw.load_record(tmp_path / "seq" / path)
        con = hw.load_record(tmp_path / "async" / path)
        assert _evidence(seq) == _evidence(con)
        assert con.usage.requests == 4 and con.usage.turns == 4


def test_an_unreachable_endpoint_is_an_infrastructure_failure(tmp_path: Path) -> None:
    tasks = [t for t in hw.load_tasks("helpdesk") if t.id == TASK]
    with fake_openai(reply_and_solve_brain(), fail_first=100) as server:  # type: ignore[arg-type]
        config = OpenAIAgent(model="fake-1", base_url=server["base_url"], max_retries=1)
        result = hw.run(
            tasks,
            AsyncOpenAIAgent(config),
            samples=2,
            out=tmp_path / "r",
            executor=hw.Concurrent(2),
            retries=0,
        )
    assert result.counts.valid == 0 and result.counts.by_outcome == {"infrastructure": 2}


def test_run_command_uses_the_async_client_with_concurrency(tmp_path: Path, capsys: object) -> None:
    from harness_world.cli import main

    with fake_openai(reply_and_solve_brain()) as server:  # type: ignore[arg-type]
        code = main(
            [
                "run",
                "--world",
                "helpdesk",
                "--tasks",
                TASK,
                "--agent",
                "openai",
                "--model",
                "fake-1",
                "--base-url",
                server["base_url"],
                "--samples",
                "3",
                "--concurrency",
                "3",
                "--out",
                str(tmp_path / "run"),
                "--json",
            ]
        )
    assert code == 0
    assert len(server["requests"]) == 12  # 3 attempts x 4 turns, all answered
