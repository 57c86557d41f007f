"""The digest and replay's spliced encodings are byte for byte the plain definitions (#17)."""

from __future__ import annotations

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import load_oracles, run_script
from harness_world.engine.canonical import sha256_hex, to_json
from harness_world.evidence import (
    RecordContext,
    TranscriptMessage,
    TranscriptToolCall,
    UserTurn,
    record_digest,
    replay,
)


def _plain_digest(record: hw.Record) -> str:
    """The digest's definition: canonical JSON of the record's builtins, digest and context
    blanked, ``faults`` left out while null, ``user_turns`` while empty, and the usage
    counters of lost requests while zero."""
    body = msgspec.structs.replace(record, digest="", context=RecordContext())
    plain = msgspec.to_builtins(body)
    if record.faults is None:
        del plain["faults"]
    if not record.user_turns:
        del plain["user_turns"]
    for counter in ("lost_requests", "lost_input_tokens_estimate", "models"):
        if not plain["usage"][counter]:
            del plain["usage"][counter]
    return sha256_hex(to_json(plain))


def _oracle_records(world_name: str) -> list[hw.Record]:
    world = hw.load_world(world_name)
    oracles = load_oracles(world_name)
    return [run_script(world, t, oracles[t.id]) for t in hw.load_tasks(world_name)]


@pytest.mark.parametrize("world_name", ["helpdesk", "inventory", "payments"])
def test_digest_equals_its_plain_definition(world_name: str) -> None:
    records = _oracle_records(world_name)
    assert any(r.faults is not None for r in records) or world_name != "payments"
    for record in records:
        with_turns = msgspec.structs.replace(
            record, user_turns=[UserTurn(after_call=1, agent="who?", user="me", stop=True)]
        )
        lost = hw.Usage(requests=3, retries=2, lost_requests=2, lost_input_tokens_estimate=900)
        with_lost = msgspec.structs.replace(record, usage=lost)
        said = [
            TranscriptMessage(role="user", content="do it"),
            TranscriptMessage(
                role="assistant",
                tool_calls=[TranscriptToolCall(id="c1", name="get_ticket", arguments="{}")],
            ),
            TranscriptMessage(role="tool", content="{}", tool_call_id="c1", after_call=1),
        ]
        spoken = msgspec.structs.replace(
            record, transcript=said, usage=hw.Usage(requests=1, models=["m-2026-01-01"])
        )
        for variant in (record, with_turns, with_lost, spoken):
            spliced = record_digest(
                variant,
                calls_json=[to_json(c) for c in variant.calls],
                final_json=to_json(variant.final),
            )
            assert record_digest(variant) == _plain_digest(variant) == spliced


def test_replayed_session_log_holds_decoded_values() -> None:
    """Replay runs calls with raw JSON images; the session it returns holds plain values."""
    world = hw.load_world("payments")
    for record in _oracle_records("payments")[:6]:
        session, mismatches = replay(record, world)
        assert mismatches == []
        for entry in session.log:
            assert not isinstance(entry.result, msgspec.Raw)
            for image in entry.writes:
                assert not isinstance(image.before, msgspec.Raw)
                assert not isinstance(image.after, msgspec.Raw)
        assert to_json(list(session.log)) == to_json(record.calls)


def test_a_tool_that_mutates_its_arguments_is_a_difference() -> None:
    """Replay hands recorded arguments to the tool as they are; mutation cannot go unseen."""
    world = hw.load_world("helpdesk")
    record = _oracle_records("helpdesk")[0]
    args = record.calls[0].args
    assert isinstance(args, dict)
    args["__edited_after_recording__"] = 1  # in memory, after the digest was sealed
    _, mismatches = replay(record, world)
    assert mismatches
