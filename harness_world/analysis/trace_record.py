"""A record read for viewing: every field a trace shows, call results left undecoded.

A report of 10,000 attempts reads 10,000 records; most of their bytes are call results (a
listing page of 100 tickets), which the page shows cut to a few hundred characters and the
process metrics only search for a key. Keeping each result as `msgspec.Raw` (the JSON text,
not Python objects) makes reading a record several times cheaper. Nothing here is evidence:
the scan behind the report has already replayed and checked the same files.
"""

from __future__ import annotations

from typing import Any

import msgspec

from harness_world.engine.calls import ToolError, WriteImage
from harness_world.evidence.record import (
    Outcome,
    RecordContext,
    TranscriptMessage,
    Usage,
    UserTurn,
)

__all__ = ["TraceCall", "TraceRecord", "decode_trace", "raw_text"]

_NULL = msgspec.Raw(b"null")


class TraceCall(msgspec.Struct, frozen=True, kw_only=True):
    """One call as the trace viewer reads it (see `harness_world.engine.CallRecord`).

    Attributes:
        seq: Position in the call log.
        tool: The tool called.
        args: The arguments as given.
        ok: Whether the call returned a result (else a typed error).
        result: The result's JSON text, undecoded.
        error: The typed error, if any.
        writes: The rows written, before and after.
        clock_before: The logical clock before the call.
        clock_after: The logical clock after it.
    """

    seq: int
    tool: str
    args: Any
    ok: bool
    result: msgspec.Raw = _NULL
    error: ToolError | None = None
    writes: list[WriteImage] = []
    clock_before: int = 0
    clock_after: int = 0


class TraceRecord(msgspec.Struct, frozen=True, kw_only=True):
    """The fields of a record a trace shows (unknown fields are skipped when reading).

    Attributes:
        task_id: The task attempted.
        sample: The sample index.
        calls: The call log, results undecoded.
        outcome: How execution ended.
        final_message: The agent's last message.
        usage: Turns, requests, tokens and cost.
        context: Wall-clock facts (latency).
        user_turns: The exchanges with a simulated user, in order (empty without a user).
        transcript: The model conversation of a model-backed agent, in order (empty when the
            record has none).
    """

    task_id: str = ""
    sample: int = 0
    calls: list[TraceCall]
    outcome: Outcome
    final_message: str = ""
    usage: Usage = Usage()
    context: RecordContext = RecordContext()
    user_turns: list[UserTurn] = []
    transcript: list[TranscriptMessage] = []


_DECODER = msgspec.json.Decoder(TraceRecord)


def raw_text(raw: msgspec.Raw) -> str:
    """A raw JSON value as compact text."""
    return msgspec.json.format(bytes(raw), indent=0).decode()


def decode_trace(data: bytes) -> TraceRecord | None:
    """A record file's bytes (as the run reader read them) for viewing; None when unreadable."""
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
