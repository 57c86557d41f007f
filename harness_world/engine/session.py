"""Private copy-on-write sessions over a world, and the context tools run in."""

from __future__ import annotations

import functools
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs
import msgspec

from harness_world.engine.calls import CallRecord, FinalRow, Observation, ToolError, WriteImage
from harness_world.engine.canonical import from_json, to_json
from harness_world.engine.contract import Tool, ToolFailure, validate_row
from harness_world.engine.limits import ARGUMENT_DEPTH, check_json_value, clean_text
from harness_world.engine.values import ABSENT, Key, index_token

if TYPE_CHECKING:
    # Annotations only: the world module opens sessions, so it imports this one; the fault
    # policy type likewise (faults import the session for their own annotations).
    from harness_world.engine.faults import FaultPolicy
    from harness_world.engine.world import World

__all__ = ["Session", "ToolContext", "ToolFunction"]

_NOT_IN_LAYER: Final = object()
_UNENCODABLE_PREFIX: Final = "\x00not-json: "


class ToolFunction(Protocol):
    """The signature of a tool implementation: reads and writes through the context."""

    def __call__(self, ctx: ToolContext, params: Any, /) -> Any:
        """Run the tool once; return a JSON value or raise `ToolFailure`."""
        ...


def _field_values(row: Mapping[str, Any], field: str) -> list[object]:
    if field not in row:
        return [ABSENT]
    value = row[field]
    return list(value) if isinstance(value, list) else [value]


def _matches(row: Mapping[str, Any], where: Mapping[str, object]) -> bool:
    for field, wanted in where.items():
        token = index_token(wanted)
        if not any(index_token(v) == token for v in _field_values(row, field)):
            return False
    return True


def _row_matches(data: bytes | None, where: Mapping[str, object]) -> bool:
    """Whether a stored row exists and matches every filter (no filter: decoded not at all)."""
    return data is not None and (not where or _matches(from_json(data), where))


def _narrowest_hits(
    world: World, entity: str, where: Mapping[str, object]
) -> tuple[Key, ...] | None:
    """The fewest keys one indexed filter admits, or None when no filter is indexed."""
    base: tuple[Key, ...] | None = None
    for field, value in where.items():
        hits = world.lookup(entity, field, value)
        if hits is not None and (base is None or len(hits) < len(base)):
            base = hits
    return base


@attrs.define(slots=True, eq=False, init=False)
class Session:
    """A private, copy-on-write view of a world with a logical clock and a call log.

    Writes stay in the session's layer; reads fall through to the world. Opening one copies
    nothing. Every `call` is appended to `log` with its arguments, result or typed error, the
    before and after image of each write, and the clock before and after.

    Attributes:
        world: The immutable world underneath.
        seed: The sample seed, recorded and available to tools; it never changes ids or time.
        faults: The fault policy consulted around every tool execution (None: no faults).
            Given when the session is opened (`World.open_session`), so the same schedule
            and seed fire the same faults on replay.
        tools: The only tools calls may run (None: every tool of the world); a call to
            another is logged with a typed ``tool_not_allowed`` error and runs nothing, so
            replay under the same allow-list refuses it the same way.

    """

    world: World
    seed: int
    faults: FaultPolicy | None
    tools: frozenset[str] | None
    _layer: dict[str, dict[Key, bytes | None]]
    _created: dict[str, dict[Key, int]]
    _counters: dict[str, int]
    _clock: int
    _log: list[CallRecord]
    _raw_images: bool
    _work: int

    def __init__(
        self,
        world: World,
        seed: int = 0,
        faults: FaultPolicy | None = None,
        tools: Iterable[str] | None = None,
    ) -> None:
        self.world = world
        self.seed = seed
        self.faults = faults
        self.tools = None if tools is None else frozenset(tools)
        self._layer = {}
        self._created = {}
        self._counters = {}
        self._clock = 0
        self._log = []
        self._raw_images = False  # replay's calls log write images as raw JSON (see `_run`)
        self._work = 0

    # -- public, agent-independent view -------------------------------------------------------

    @property
    def clock(self) -> int:
        """The logical clock: the number of row writes so far."""
        return self._clock

    @property
    def log(self) -> tuple[CallRecord, ...]:
        """The call log, oldest first."""
        return tuple(self._log)

    @property
    def call_count(self) -> int:
        """How many calls the log holds (``len(log)`` without copying the log)."""
        return len(self._log)

    @property
    def work(self) -> int:
        """Rows the tools examined so far through their context (selects, pages, reads).

        A deterministic measure of what the calls cost, the same on every replay of them: a
        verifier bounds it per record. Rows a tool reads from ``ctx.world`` directly are not
        counted (the call count bounds those).
        """
        return self._work

    def get(self, entity: str, key: Key) -> dict[str, Any] | None:
        """An independent copy of a row as this session sees it (not logged; for harness code)."""
        data = self._raw(entity, key)
        return None if data is None else from_json(data)

    def call(self, tool: object, args: object = None) -> Observation:
        """Run one tool call and return its observation; agent mistakes never raise.

        Args:
            tool: The tool's name.
            args: A JSON object of arguments (``None`` means no arguments).

        """
        record, result_blob = self._run(tool, args)
        return Observation(
            seq=record.seq,
            tool=record.tool,
            ok=record.ok,
            result=from_json(result_blob) if record.ok else None,
            error=record.error,
        )

    def rerun(self, tool: object, args: object) -> CallRecord:
        """Run a recorded call again, as replay does, and return its new log entry.

        The arguments are used as given (a record's come out of a JSON decoder, so no
        normalising copy is made; the limits still apply), and the entry keeps its result and
        write images as `msgspec.Raw` JSON, which an encoder splices without decoding. The
        caller compares the entries and then puts decoded ones in their place with
        `adopt_log`.
        """
        return self._run(tool, args, raw=True)[0]

    def adopt_log(self, records: Sequence[CallRecord]) -> None:
        """Replace the call log with ``records`` (replay's decoded twins of `rerun` entries)."""
        self._log = list(records)

    def _run(self, tool: object, args: object, *, raw: bool = False) -> tuple[CallRecord, bytes]:
        """Run one tool call and log it; returns the log entry and the result's JSON bytes.

        With ``raw``, see `rerun`.
        """
        seq = len(self._log) + 1
        name = (
            tool
            if type(tool) is str and len(tool) <= 200 and tool.isascii()  # clean already
            else clean_text(tool if isinstance(tool, str) else repr(tool))[:200]  # limits
        )
        clock_before = self._clock
        recorded_args, given = _normalise_args(args, copy=not raw)
        self._raw_images = raw
        writes: list[WriteImage] = []
        result_blob = b"null"
        error: ToolError | None
        spec = self.world.contract.tool(name)
        if spec is None:
            error = ToolError("unknown_tool", _unknown_tool_message(name, self.world))
        elif self.tools is not None and name not in self.tools:
            offered = ", ".join(sorted(self.tools)) or "none"
            error = ToolError(
                "tool_not_allowed",
                f"tool {name!r} is not offered in this attempt; tools: {offered}",
            )
        elif isinstance(given, str):
            error = ToolError("invalid_arguments", given)
        else:
            error, result_blob = self._execute(spec, given, writes)
        ok = error is None
        record = CallRecord(
            seq=seq,
            tool=name,
            args=recorded_args,
            ok=ok,
            result=(msgspec.Raw(result_blob) if raw else from_json(result_blob)) if ok else None,
            error=error,
            writes=writes,
            clock_before=clock_before,
            clock_after=self._clock,
        )
        self._log.append(record)
        return record, result_blob

    def diff(self) -> list[WriteImage]:
        """Net changes: one entry per touched key whose final row differs from the start.

        Keys written and then restored to their start state are omitted. Entries are ordered
        by entity (contract order) and then by the row's position.
        """
        out: list[WriteImage] = []
        for entity in self._ordered_layer_entities():
            layer = self._layer[entity]
            for key in sorted(layer, key=lambda k: self._position(entity, k)):
                start = self.world.raw(entity, key)
                final = layer[key]
                if start != final:
                    out.append(
                        WriteImage(
                            entity=entity,
                            key=key,
                            before=None if start is None else from_json(start),
                            after=None if final is None else from_json(final),
                        )
                    )
        return out

    def touched(self) -> list[FinalRow]:
        """The final state of every key the session wrote, whether or not it changed."""
        return self._touched(from_json)

    def touched_json(self) -> bytes:
        """`touched` as canonical JSON, splicing the stored row bytes (no decode, no copy)."""
        return to_json(self._touched(msgspec.Raw))

    def _touched(self, row: Callable[[bytes], Any]) -> list[FinalRow]:
        out: list[FinalRow] = []
        for entity in self._ordered_layer_entities():
            layer = self._layer[entity]
            for key in sorted(layer, key=lambda k: self._position(entity, k)):
                final = layer[key]
                out.append(
                    FinalRow(entity=entity, key=key, row=None if final is None else row(final))
                )
        return out

    # -- the one place a tool executes, and where the fault policy acts ------------------------

    def _execute(
        self, spec: Tool, given: object, writes: list[WriteImage]
    ) -> tuple[ToolError | None, bytes]:
        try:
            params = msgspec.convert(given, spec.params, strict=True)
        except msgspec.ValidationError as exc:
            return ToolError("invalid_arguments", f"{spec.name}: {exc}"), b"null"
        # The fault policy (engine/faults.py) decides before the tool runs (fail it,
        # rate-limit it, set modes) and adjusts the outcome after it ran (drop the response of
        # a committed write, deliver it twice). No policy: no change.
        firing = None
        if self.faults is not None:
            firing = self.faults.before(spec.name, params, len(self._log) + 1)
            if firing is not None and firing.error is not None:
                return firing.error, b"null"
        ctx = (
            ToolContext(self, writes)
            if firing is None
            else ToolContext(self, writes, modes=firing.modes)
        )
        try:
            raw_result = spec.run(ctx, params)
            blob = to_json(raw_result)
        except ToolFailure as failure:
            ctx.rollback()
            return ToolError(failure.kind, failure.message), b"null"
        except Exception as exc:  # a defect in the world's tool: typed, rolled back, never raised
            ctx.rollback()
            return ToolError(
                "internal", f"{spec.name} failed: {type(exc).__name__}: {exc}"
            ), b"null"
        if firing is not None and firing.acts_after and self.faults is not None:  # fault hook
            modes = firing.modes
            return self.faults.after(
                firing,
                spec.name,
                None,
                blob,
                lambda: self._deliver_again(spec, params, writes, modes),
                spec.lookup_hint(given) if firing.drop_response else "",
            )
        return None, blob

    def _deliver_again(
        self, spec: Tool, params: object, writes: list[WriteImage], modes: frozenset[str]
    ) -> None:
        """Fault hook: run a tool a second time (a duplicated delivery); keep what it wrote."""
        extra: list[WriteImage] = []
        ctx = ToolContext(self, extra, modes=modes)
        try:
            to_json(spec.run(ctx, params))
        except Exception:  # the second delivery's failure is the provider's, never the caller's
            ctx.rollback()
            return
        writes.extend(extra)

    # -- internals shared with ToolContext ----------------------------------------------------

    def _raw(self, entity: str, key: Key) -> bytes | None:
        layer = self._layer.get(entity)
        if layer is not None and key in layer:
            return layer[key]
        return self.world.raw(entity, key)

    def _reader(self, entity: str) -> Callable[[Key], bytes | None]:
        """A fast row lookup for one entity (the layer first, then the world's table)."""
        layer = self._layer.get(entity)
        rows = self.world._table(entity).rows
        if not layer:
            return rows.get
        return lambda key: layer[key] if key in layer else rows.get(key)

    def _position(self, entity: str, key: Key) -> int:
        pos = self.world.position(entity, key)
        if pos is not None:
            return pos
        return self.world.count(entity) + self._created[entity][key]

    def _ordered_layer_entities(self) -> list[str]:
        return [e for e in self.world.entities() if e in self._layer]


@functools.lru_cache(maxsize=64)
def _epoch_seconds(epoch: str) -> int:
    return int(datetime.fromisoformat(epoch.replace("Z", "+00:00")).timestamp())


def _timestamp(epoch: str, ticks: int) -> str:
    """ISO-8601 UTC of the epoch plus ``ticks`` seconds (no wall clock involved)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_epoch_seconds(epoch) + ticks))


def _normalise_args(args: object, *, copy: bool = True) -> tuple[Any, object]:
    """Return (what the log records, what validation receives).

    Validation receives an error message string instead of arguments when they are not a JSON
    object; the recorded form is chosen so that replaying it yields the same message. With
    ``copy`` (live calls) the arguments are normalised through a JSON round trip, so the log
    owns plain values the caller cannot change afterwards; without it (replay) they are used
    as they are, once the same limits have accepted them.
    """
    if isinstance(args, str) and args.startswith(_UNENCODABLE_PREFIX):
        return args, f"arguments are not valid JSON ({args[len(_UNENCODABLE_PREFIX) :]})"
    # Limits (depth, integer range, strings, JSON types): one typed error, never a crash.
    problem = check_json_value(args, ARGUMENT_DEPTH)
    if problem:
        return _UNENCODABLE_PREFIX + problem, f"arguments are not valid JSON ({problem})"
    try:
        recorded = from_json(to_json(args)) if copy else args
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError, msgspec.DecodeError) as exc:
        reason = f"{type(exc).__name__}: {exc}"
        return _UNENCODABLE_PREFIX + reason, f"arguments are not valid JSON ({reason})"
    given = {} if recorded is None else recorded
    if not isinstance(given, dict):
        kind = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
        return recorded, f"arguments must be a JSON object, got {kind.get(type(given), 'value')}"
    return recorded, given


def _page_over_layer(
    session: Session,
    entity: str,
    hits: tuple[Key, ...],
    where: Mapping[str, object],
    offset: int,
    limit: int,
) -> tuple[list[Key], int]:
    """`ToolContext.select_page` for one indexed filter when the session has written ``entity``.

    The answer is the world's index hits (in seed order) minus the keys the session wrote, plus
    the written rows that match, in position order: exactly what `ToolContext.select` returns.
    Only the written keys are sorted; the runs of untouched hits between them are located by
    binary search and sliced, so the cost follows the layer and the page, not the hit count.
    """
    world = session.world
    layer = session._layer[entity]
    out: list[Key] = []
    total = len(hits)
    end = offset + limit
    passed = 0  # rows of the merged sequence walked past so far
    lo = 0

    def take(hi: int) -> None:
        nonlocal passed, lo
        start, stop = max(offset - passed, 0), min(end - passed, hi - lo)
        if start < stop:
            out.extend(hits[lo + start : lo + stop])
        passed += hi - lo
        lo = hi

    seed_position = world._table(entity).position.__getitem__  # hits are all world keys
    for key in sorted(layer, key=lambda k: session._position(entity, k)):
        take(bisect_left(hits, session._position(entity, key), lo, key=seed_position))
        if lo < len(hits) and hits[lo] == key:  # the session's row replaces the world's
            lo += 1
            total -= 1
        data = layer[key]
        if data is not None and _matches(from_json(data), where):
            total += 1
            if offset <= passed < end:
                out.append(key)
            passed += 1
    take(len(hits))
    session._work += len(layer) + len(out)
    return out, total


def _unknown_tool_message(name: str, world: World) -> str:
    names = ", ".join(t.name for t in world.contract.tools)
    return f"no tool named {name!r} in world {world.name!r}; tools: {names}"


@attrs.define(slots=True, eq=False)
class ToolContext:
    """The view of a session a tool runs in: reads, indexed selects, writes, ids and time.

    Every write is validated against the contract, recorded as a `WriteImage` and advances the
    logical clock by one; if the tool then fails, all of its writes are rolled back.
    """

    _session: Session
    _writes: list[WriteImage]
    _undo: list[tuple[str, Key, object]] = attrs.field(factory=list)
    modes: frozenset[str] = attrs.field(default=frozenset(), kw_only=True)
    """Fault modes this call runs under (fault hook): ``stale_read`` (serve the start
    state), ``ignore_idempotency`` (a repeat creates again). Empty without faults."""
    _start_clock: int = attrs.field(init=False)
    _start_counters: dict[str, int] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._start_clock = self._session._clock
        self._start_counters = dict(self._session._counters)

    @property
    def seed(self) -> int:
        """The session's sample seed."""
        return self._session.seed

    @property
    def world(self) -> World:
        """The world underneath (start state)."""
        return self._session.world

    def now(self) -> str:
        """The timestamp of this call: the contract's epoch plus one second per clock tick.

        Fixed for the whole call (the clock value when the call started, plus one), never
        wall time.
        """
        return _timestamp(self._session.world.contract.epoch, self._start_clock + 1)

    def get(self, entity: str, key: Key) -> dict[str, Any] | None:
        """An independent copy of a row, or None if it does not exist."""
        self._session._work += 1
        data = self._session._raw(entity, key)
        return None if data is None else from_json(data)

    def get_json(self, entity: str, key: Key) -> msgspec.Raw | None:
        """A row as canonical JSON for a tool to return unchanged, or None if it does not exist.

        The stored bytes are handed over as `msgspec.Raw` (no decode, no copy): the result's
        encoding splices them, so a read tool that returns a whole row costs no per-field work.
        """
        self._session._work += 1
        data = self._session._raw(entity, key)
        return None if data is None else msgspec.Raw(data)

    def get_many(self, entity: str, keys: Sequence[Key]) -> list[dict[str, Any] | None]:
        """Independent copies of several rows (None for a missing one), in the order given."""
        self._session._work += len(keys)
        read = self._session._reader(entity)
        return [None if (data := read(key)) is None else from_json(data) for key in keys]

    def exists(self, entity: str, key: Key) -> bool:
        """Whether the row exists in this session."""
        return self._session._raw(entity, key) is not None

    def select(self, entity: str, where: Mapping[str, object] | None = None) -> list[Key]:
        """Keys of rows matching every filter, in seed order (new rows last).

        A filter value matches a scalar field by type-aware equality and a list field by
        membership; ``ABSENT`` matches rows without the field and ``None`` rows where it is null.
        Indexed filters are answered from the world's index merged with the session's layer,
        so the cost follows the result size (and the layer), not the world size.
        """
        session = self._session
        world = session.world
        where = dict(where or {})
        base = _narrowest_hits(world, entity, where)
        candidates = world.keys(entity) if base is None else base
        layer = session._layer.get(entity) or {}
        session._work += len(candidates) + len(layer)
        unwritten = [key for key in candidates if key not in layer]
        # One indexed filter, or none at all: every candidate matches, nothing is decoded.
        if not ((base is not None and len(where) == 1) or not where):
            unwritten = [k for k in unwritten if _row_matches(world.raw(entity, k), where)]
        if not layer:
            return unwritten
        written = [key for key, data in layer.items() if _row_matches(data, where)]
        return sorted(unwritten + written, key=lambda k: session._position(entity, k))

    def select_page(
        self, entity: str, where: Mapping[str, object] | None, offset: int, limit: int
    ) -> tuple[list[Key], int]:
        """One page of `select` and the total count: ``(keys[offset:offset+limit], total)``.

        With one indexed filter the page is sliced straight from the world's index (merged with
        the session's written rows when it has written ``entity``): the cost follows the page
        size and the session's writes, not the number of matching rows in the world.
        """
        where = dict(where or {})
        if len(where) == 1:
            ((field, value),) = where.items()
            hits = self._session.world.lookup(entity, field, value)
            if hits is not None:
                if entity not in self._session._layer:
                    page = list(hits[offset : offset + limit])
                    self._session._work += len(page)
                    return page, len(hits)
                return _page_over_layer(self._session, entity, hits, where, offset, limit)
        keys = self.select(entity, where)
        return keys[offset : offset + limit], len(keys)

    def page(
        self,
        entity: str,
        field: str,
        offset: int,
        limit: int,
        *,
        where: Mapping[str, object] | None = None,
        keys: Sequence[Key] | None = None,
    ) -> dict[str, Any]:
        """One page of a listing, in the shape every list tool returns.

        ``{field: rows, "total": n, "offset": offset, "next_offset": next or None}``; the rows
        are those matching ``where`` (see `select`), or the given ``keys`` in their order.
        """
        if keys is None:
            chosen, total = self.select_page(entity, where, offset, limit)
        else:
            chosen, total = list(keys[offset : offset + limit]), len(keys)
        end = offset + len(chosen)
        self._session._work += len(chosen)
        read = self._session._reader(entity)
        # Rows are stored as canonical JSON: the page splices them in without decoding.
        rows = [msgspec.Raw(data) for key in chosen if (data := read(key)) is not None]
        return {
            field: rows,
            "total": total,
            "offset": offset,
            "next_offset": end if end < total else None,
        }

    def new_key(self, entity: str) -> str:
        """Mint a key for a new row: the entity's id prefix, ``N``, and a per-session counter."""
        session = self._session
        count = session._counters.get(entity, 0) + 1
        session._counters[entity] = count
        prefix = session.world.contract.entity(entity).id_prefix
        return f"{prefix}N{count}"

    def put(self, entity: str, row: dict[str, Any]) -> Key:
        """Create or replace a whole row; returns its key.

        Raises:
            ToolFailure: kind ``internal`` if the row violates the contract (a tool defect).

        """
        spec = self._session.world.contract.entity(entity)
        problems = validate_row(spec, row)
        if problems:
            raise ToolFailure("internal", f"tool wrote an invalid row: {problems[0]}")
        key: Key = row[spec.key]
        self._write(entity, key, to_json(row))
        return key

    def delete(self, entity: str, key: Key) -> None:
        """Delete a row (a no-op image is still recorded if it did not exist)."""
        self._write(entity, key, None)

    def _write(self, entity: str, key: Key, data: bytes | None) -> None:
        session = self._session
        layer = session._layer.setdefault(entity, {})
        previous = layer.get(key, _NOT_IN_LAYER)
        self._undo.append((entity, key, previous))
        before = session._raw(entity, key)
        if key not in layer and session.world.position(entity, key) is None:
            created = session._created.setdefault(entity, {})
            if key not in created:
                created[key] = len(created)
        layer[key] = data
        session._clock += 1
        row: Callable[[bytes], Any] = msgspec.Raw if session._raw_images else from_json
        self._writes.append(
            WriteImage(
                entity=entity,
                key=key,
                before=None if before is None else row(before),
                after=None if data is None else row(data),
            )
        )

    def rollback(self) -> None:
        """Undo every write of this call, the clock and the id counters."""
        session = self._session
        for entity, key, previous in reversed(self._undo):
            layer = session._layer[entity]
            if previous is _NOT_IN_LAYER:
                del layer[key]
                created = session._created.get(entity)
                if created is not None and key in created and created[key] == len(created) - 1:
                    del created[key]
            else:
                layer[key] = previous  # type: ignore[assignment]
            if not layer:
                del session._layer[entity]
        self._undo.clear()
        self._writes.clear()
        session._clock = self._start_clock
        session._counters = dict(self._start_counters)
