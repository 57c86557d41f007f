"""What one tool call leaves behind: the observation an agent sees and the call-log entry."""

from __future__ import annotations

from typing import Any

import msgspec

from harness_world.engine.values import Key

__all__ = ["CallRecord", "FinalRow", "Observation", "ToolError", "WriteImage"]


class ToolError(msgspec.Struct, frozen=True):
    """A typed error returned instead of a result.

    Attributes:
        kind: ``invalid_arguments``, ``unknown_tool``, ``tool_not_allowed`` (a tool of the
            world its task's allow-list does not offer), ``not_found``, ``conflict``,
            ``refused``, ``internal`` (a defect in the world's tool, never the agent's fault),
            or a world-specific kind.
        message: Human-readable text naming the argument or row concerned.

    """

    kind: str
    message: str


class WriteImage(msgspec.Struct, frozen=True, kw_only=True):
    """A row before and after a write (also the shape of one `Session.diff` entry).

    Attributes:
        entity: The entity written.
        key: The row's key.
        before: The whole row before the write, or null when the row did not exist.
        after: The whole row after the write, or null when the write deleted it.

    """

    entity: str
    key: Key
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class CallRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of a session's call log: the whole observation and the whole effect.

    Attributes:
        seq: 1-based position of the call in the session.
        tool: The tool name as requested (the ``repr`` of a non-string name).
        args: The arguments after JSON normalisation: exactly what the tool was given.
        ok: Whether the call returned a result (True) or a typed error (False).
        result: The result when ``ok``; null otherwise.
        error: The typed error when not ``ok``; null otherwise.
        writes: Every row write the call made, in order; empty for reads and failed calls
            (a failed call's writes are rolled back).
        clock_before: The logical clock when the call started.
        clock_after: The logical clock when it ended (one tick per write).

    """

    seq: int
    tool: str
    args: Any
    ok: bool
    result: Any = None
    error: ToolError | None = None
    writes: list[WriteImage] = []
    clock_before: int = 0
    clock_after: int = 0


class Observation(msgspec.Struct, frozen=True, kw_only=True):
    """What the caller of a tool gets back; its values are independent copies.

    Attributes:
        seq: The call's sequence number in the session's log.
        tool: The tool name as requested.
        ok: True for a result, False for a typed error.
        result: The tool's result (null when not ``ok``).
        error: The typed error (null when ``ok``).

    """

    seq: int
    tool: str
    ok: bool
    result: Any = None
    error: ToolError | None = None

    def to_message(self) -> dict[str, Any]:
        """The observation as a JSON object to show a model."""
        if self.ok:
            return {"ok": True, "result": self.result}
        assert self.error is not None
        return {"ok": False, "error": {"kind": self.error.kind, "message": self.error.message}}


class FinalRow(msgspec.Struct, frozen=True, kw_only=True):
    """The final state of one key a session touched.

    Attributes:
        entity: The entity.
        key: The row's key.
        row: The whole final row, or null when the row does not exist at the end.

    """

    entity: str
    key: Key
    row: dict[str, Any] | None
