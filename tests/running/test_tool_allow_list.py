"""A task's tool allow-list: offered alone to every driver, enforced by the session, replayed."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.engine.schemas import SCHEMA_FORMATS
from harness_world.evidence import record_digest
from harness_world.evidence.record import encode_record
from harness_world.running.attempt import offered_schemas
from tests.conftest import requires

TASK = "helpdesk.reply_and_solve"
READ_ONLY = ["get_ticket", "list_comments"]


def _tasks() -> tuple[hw.Task, hw.Task]:
    """The task as shipped (every tool) and the same task allowed only to read."""
    task = {t.id: t for t in hw.load_tasks("helpdesk")}[TASK]
    return task, msgspec.structs.replace(task, tools=READ_ONLY)


def _names(schemas: list[dict[str, object]]) -> list[str]:
    return [str((s.get("function") or s)["name"]) for s in schemas]  # type: ignore[index]


@pytest.mark.parametrize("fmt", SCHEMA_FORMATS)
def test_the_attempt_offers_only_the_allowed_tools(small: hw.World, fmt: str) -> None:
    plain, narrow = _tasks()
    assert len(hw.Attempt(small, plain).tool_schemas(fmt)) == len(small.contract.tools)  # type: ignore[arg-type]
    assert _names(hw.Attempt(small, narrow).tool_schemas(fmt)) == READ_ONLY  # type: ignore[arg-type]


@given(st.lists(st.sampled_from(["get_ticket", "update_ticket", "add_comment"]), unique=True))
def test_offered_schemas_keep_exactly_the_allowed_names_in_world_order(allowed: list[str]) -> None:
    world = hw.load_world("helpdesk")
    every = hw.tool_schemas(world, "openai")
    kept = _names(offered_schemas(every, allowed))
    assert kept == [n for n in _names(every) if n in allowed]
    assert offered_schemas(every, None) == every


def _refused_record(world: hw.World, task: hw.Task) -> hw.Record:
    attempt = hw.Attempt(world, task)
    attempt.call("get_ticket", {"ticket_id": "T-1001"})
    refused = attempt.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    assert not refused.ok and refused.error is not None
    assert refused.error.kind == "tool_not_allowed"
    assert "'update_ticket' is not offered" in refused.error.message
    return attempt.finish("I could not solve it")


def test_a_call_outside_the_list_is_a_typed_error_that_replays(
    small: hw.World, tmp_path: Path
) -> None:
    _, narrow = _tasks()
    record = _refused_record(small, narrow)
    assert record.tools == sorted(READ_ONLY)
    assert record.final == []  # nothing ran: no write
    assert record.calls[1].error == hw.ToolError(
        "tool_not_allowed",
        "tool 'update_ticket' is not offered in this attempt; tools: get_ticket, list_comments",
    )
    graded = hw.verify(record, world=small, task=narrow)
    assert graded.evidence == "verified" and graded.grade is not None
    assert not graded.grade.passed
    assert hw.verify(record, world=small).evidence == "verified"  # without its task, too
    saved = hw.load_record(hw.save_record(record, tmp_path / "0.json"))
    assert saved == record and hw.verify(saved, world=small, task=narrow).evidence == "verified"


def test_a_record_forged_to_say_the_refused_call_ran_fails_verification(small: hw.World) -> None:
    plain, narrow = _tasks()
    record = _refused_record(small, narrow)
    # The same calls where every tool is offered: the write really ran there.
    ran = hw.Attempt(small, plain)
    ran.call("get_ticket", {"ticket_id": "T-1001"})
    ran.call("update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    real = ran.finish("I could not solve it")
    assert real.calls[1].ok
    # Forgery 1: the allow-list kept, the refused call's entry and final rows swapped in.
    swapped = msgspec.structs.replace(record, calls=real.calls, final=real.final)
    swapped = msgspec.structs.replace(swapped, digest=record_digest(swapped))
    result = hw.verify(swapped, world=small, task=narrow)
    assert result.evidence == "ungraded" and result.mismatches[0].seq == 2
    # Forgery 2: the allow-list dropped, so replay runs the write; the task says otherwise.
    dropped = msgspec.structs.replace(real, task_hash=narrow.hash)
    dropped = msgspec.structs.replace(dropped, digest=record_digest(dropped))
    assert hw.verify(dropped, world=small).evidence == "verified"  # consistent on its own
    result = hw.verify(dropped, world=small, task=narrow)
    assert result.evidence == "ungraded" and result.grade is None
    assert "offers ['get_ticket', 'list_comments']" in result.reason


def test_a_record_without_an_allow_list_keeps_its_encoding(small: hw.World) -> None:
    plain, _ = _tasks()
    record = hw.Attempt(small, plain).finish("")
    assert isinstance(record.tools, msgspec.UnsetType)
    assert b'"tools"' not in encode_record(record)


def test_the_mcp_server_lists_only_the_allowed_tools_and_finish(small: hw.World) -> None:
    from harness_world.integrations.mcp import AttemptServer, AttemptTarget

    _, narrow = _tasks()
    server = AttemptServer(
        world=small, task=narrow, targets=[AttemptTarget(sample=0, seed=0, path="unused.json")]
    )
    assert [t["name"] for t in server.tools()] == [*READ_ONLY, "finish"]


@requires("openai", "the OpenAI agent needs the [openai] extra")
def test_the_openai_driver_sends_only_the_allowed_tools(small: hw.World) -> None:
    from harness_world.integrations.openai import OpenAIAgent
    from harness_world.running import drive
    from tests.fake_openai import fake_openai, scripted_brain

    _, narrow = _tasks()
    brain = scripted_brain([[("update_ticket", {"ticket_id": "T-1001", "status": "solved"})], "x"])
    with fake_openai(brain) as server:
        record = drive(
            OpenAIAgent(model="m", base_url=server["base_url"]), hw.Attempt(small, narrow)
        )
        sent = server["requests"][0]["tools"]
    assert _names(sent) == READ_ONLY
    assert record.calls[0].error is not None and record.calls[0].error.kind == "tool_not_allowed"
    assert hw.verify(record, world=small, task=narrow).evidence == "verified"


@requires("openai", "the OpenAI agent needs the [openai] extra")
@requires("anthropic", "the Anthropic agent needs the [anthropic] extra")
def test_a_task_allowing_no_tool_sends_no_tool_list(small: hw.World) -> None:
    from harness_world.integrations.anthropic import AnthropicAgent
    from harness_world.integrations.openai import OpenAIAgent
    from harness_world.running import drive
    from tests.fake_openai import fake_openai, scripted_brain
    from tests.integrations.fake_anthropic import fake_anthropic
    from tests.integrations.fake_anthropic import scripted_brain as anthropic_brain

    none = msgspec.structs.replace(_tasks()[0], tools=[])
    with fake_openai(scripted_brain(["nothing to do"])) as server:
        drive(OpenAIAgent(model="m", base_url=server["base_url"]), hw.Attempt(small, none))
        assert "tools" not in server["requests"][0]
    with fake_anthropic(anthropic_brain(["nothing to do"])) as server:  # type: ignore[arg-type]
        drive(AnthropicAgent(model="m", base_url=server["base_url"]), hw.Attempt(small, none))
        assert "tools" not in server["requests"][0]
