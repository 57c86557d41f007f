"""Replay verification: re-execute a record in a fresh session and compare everything."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import msgspec

from harness_world.engine.calls import CallRecord
from harness_world.engine.canonical import normalised, to_json
from harness_world.engine.faults import FaultPolicy
from harness_world.engine.session import Session
from harness_world.engine.world import World
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import Record, record_digest

__all__ = ["Evidence", "Mismatch", "ReplayBound", "replay"]

Evidence = Literal["verified", "ungraded", "lost"]
_SNIPPET = 160
_MAX_MISMATCHES = 200


class Mismatch(msgspec.Struct, frozen=True, kw_only=True):
    """One difference between a record and its replay.

    Attributes:
        seq: The call's sequence number (null for record-level differences).
        path: Where, e.g. ``calls[3].result.tickets[0].status`` or ``final[tickets:T-1].row``.
        recorded: The recorded value as JSON text (``<absent>`` if missing), shortened.
        replayed: The recomputed value, likewise.
    """

    seq: int | None
    path: str
    recorded: str
    replayed: str

    def __str__(self) -> str:
        where = f"call {self.seq} " if self.seq is not None else ""
        return f"{where}{self.path}: recorded {self.recorded}, replayed {self.replayed}"


def _snippet(value: Any) -> str:
    if value is _ABSENT_MARK:
        return "<absent>"
    try:
        text = to_json(value).decode()
    except (TypeError, ValueError, msgspec.EncodeError):
        text = repr(value)
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "…"


_ABSENT_MARK = object()


def _differences(
    recorded: Any, replayed: Any, path: str, seq: int | None, out: list[Mismatch]
) -> None:
    if len(out) >= _MAX_MISMATCHES:
        return
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in sorted(set(recorded) | set(replayed), key=str):
            _differences(
                recorded.get(key, _ABSENT_MARK),
                replayed.get(key, _ABSENT_MARK),
                f"{path}.{key}",
                seq,
                out,
            )
        return
    if isinstance(recorded, list) and isinstance(replayed, list):
        for i in range(max(len(recorded), len(replayed))):
            _differences(
                recorded[i] if i < len(recorded) else _ABSENT_MARK,
                replayed[i] if i < len(replayed) else _ABSENT_MARK,
                f"{path}[{i}]",
                seq,
                out,
            )
        return
    same_type = type(recorded) is type(replayed)
    if not same_type or recorded != replayed:
        out.append(
            Mismatch(seq=seq, path=path, recorded=_snippet(recorded), replayed=_snippet(replayed))
        )


class ReplayBound(HarnessWorldError):
    """Replay of one record examined more rows than the verifier's work bound allows."""


def _builtins(value: Any) -> Any:
    return msgspec.to_builtins(normalised(value))


def replay(
    record: Record,
    world: World,
    *,
    on_call: Callable[[int], None] | None = None,
    work_limit: int | None = None,
) -> tuple[Session, list[Mismatch]]:
    """Re-execute every recorded call in a fresh session and compare the whole of each.

    Compares, per call, the sequence number, tool, arguments, result, typed error kind and
    message, every write image and the clock before and after; then the set of touched keys and
    each final row; then the record's digest. Nothing the record says that replay can recompute
    is trusted. Returns the replayed session (usable to continue from the prefix) and every
    difference.

    Raises:
        ReplayBound: when the calls examine more than ``work_limit`` rows (`Session.work`).
    """
    mismatches = _world_mismatches(record, world)
    if mismatches and mismatches[0].path == "world.hash":
        return world.open_session(record.seed), mismatches
    # The same schedule and seed fire the same faults; the same allow-list refuses the same
    # calls (the verifier holds it to the task's).
    faults = None if record.faults is None else FaultPolicy.from_log(record.faults)
    tools = None if isinstance(record.tools, msgspec.UnsetType) else record.tools
    session = world.open_session(record.seed, faults=faults, tools=tools)
    calls_json = _replay_calls(record, session, mismatches, on_call, work_limit)
    final_json = _compare_final(record, session, mismatches)
    _compare_faults(record, session, mismatches)
    # The digest splices the encodings made for the comparisons instead of encoding again.
    expected = record_digest(record, calls_json=calls_json, final_json=final_json)
    if record.digest != expected:
        mismatches.append(
            Mismatch(seq=None, path="digest", recorded=record.digest, replayed=expected)
        )
    return session, mismatches


def _world_mismatches(record: Record, world: World) -> list[Mismatch]:
    """Phase 1: the world hash (replay stops on a difference) and the contract hash."""
    if world.hash != record.world.hash:
        return [
            Mismatch(seq=None, path="world.hash", recorded=record.world.hash, replayed=world.hash)
        ]
    if world.contract.hash != record.world.contract_hash:
        return [
            Mismatch(
                seq=None,
                path="world.contract_hash",
                recorded=record.world.contract_hash,
                replayed=world.contract.hash,
            )
        ]
    return []


def _replay_calls(
    record: Record,
    session: Session,
    mismatches: list[Mismatch],
    on_call: Callable[[int], None] | None,
    work_limit: int | None = None,
) -> list[bytes] | bytes:
    """Phase 2: re-execute each call and compare the whole entry; returns the calls' JSON.

    The recorded calls are encoded before any call runs (a tool that mutated the arguments it
    was given would then show as a difference); the fresh entries keep their results and write
    images as raw JSON bytes, which their encoding splices. The two lists are compared whole,
    one encode per side; only when they differ is each entry encoded and compared alone, to
    name every difference. The recorded arguments are handed to the tool as they are: they
    came out of a JSON decoder (or are the caller's in-memory values, which the same limits
    then check). Returns the calls' JSON whole, or entry by entry after a difference.
    """
    recorded_json = to_json(record.calls)
    for index, recorded in enumerate(record.calls):
        session.rerun(recorded.tool, recorded.args)
        if work_limit is not None and session.work > work_limit:
            raise ReplayBound(
                f"replay stopped at call {index + 1} of {len(record.calls)}: its calls "
                f"examined {session.work} rows, more than the work bound of {work_limit}"
            )
        if on_call is not None:
            on_call(index)
    fresh = list(session.log)
    if recorded_json == to_json(fresh):
        session.adopt_log(record.calls)  # byte-identical: keep the decoded twins
        return recorded_json
    return _compare_each(record, session, fresh, mismatches)


def _compare_each(
    record: Record, session: Session, fresh: list[CallRecord], mismatches: list[Mismatch]
) -> list[bytes]:
    """Entry by entry: every difference named; the log keeps decoded values either way.

    ``fresh`` holds one entry per recorded call (replay ran each once).
    """
    encoded: list[bytes] = []
    log: list[CallRecord] = []
    for index, recorded in enumerate(record.calls):
        recorded_json = to_json(recorded)
        encoded.append(recorded_json)
        fresh_json = to_json(fresh[index])
        if recorded_json == fresh_json:
            log.append(recorded)
            continue
        decoded = msgspec.json.decode(fresh_json, type=CallRecord)
        log.append(decoded)
        _differences(
            _builtins(recorded), _builtins(decoded), f"calls[{index}]", recorded.seq, mismatches
        )
    session.adopt_log(log)
    return encoded


def _compare_final(record: Record, session: Session, mismatches: list[Mismatch]) -> bytes:
    """Phase 3: the touched keys and each final row; returns the recorded final rows' JSON."""
    recorded_json = to_json(record.final)
    if recorded_json == session.touched_json():
        return recorded_json
    final = session.touched()
    # Keys are typed: the integer 1 and the string "1" are different rows.
    recorded_rows = {f"{r.entity}:{to_json(r.key).decode()}": r.row for r in record.final}
    replayed_rows = {f"{r.entity}:{to_json(r.key).decode()}": r.row for r in final}
    before = len(mismatches)
    if list(recorded_rows) != list(replayed_rows):
        mismatches.append(
            Mismatch(
                seq=None,
                path="final (touched keys)",
                recorded=_snippet(list(recorded_rows)),
                replayed=_snippet(list(replayed_rows)),
            )
        )
    for key in recorded_rows.keys() & replayed_rows.keys():
        _differences(
            _builtins(recorded_rows[key]),
            _builtins(replayed_rows[key]),
            f"final[{key}].row",
            None,
            mismatches,
        )
    if len(record.final) != len(recorded_rows):
        mismatches.append(
            Mismatch(seq=None, path="final", recorded="duplicate keys", replayed="unique keys")
        )
    if len(mismatches) == before:  # the bytes differ: never let that pass unreported
        mismatches.append(
            Mismatch(
                seq=None,
                path="final",
                recorded=_snippet(_builtins(record.final)),
                replayed=_snippet(_builtins(final)),
            )
        )
    return recorded_json


def _compare_faults(record: Record, session: Session, mismatches: list[Mismatch]) -> None:
    """Phase 4: every fault fired, as recorded (fault schedules)."""
    if record.faults is None or session.faults is None:
        return
    fired = session.faults.log().fired
    if to_json(record.faults.fired) != to_json(fired):
        mismatches.append(
            Mismatch(
                seq=None,
                path="faults.fired",
                recorded=_snippet(_builtins(record.faults.fired)),
                replayed=_snippet(_builtins(fired)),
            )
        )
