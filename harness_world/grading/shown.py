"""What the agent was shown: the one definition answers, receipts, advisories and writes read.

What a call showed the agent about the world is what its successful result returned:

- every value inside a **row** of the result (an object holding an entity's key field and every
  required field of that entity; a row may carry extra fields, such as a provider's
  ``replayed`` flag), and every word of a string inside one (letters, digits, ``_``, ``-``), so
  an id quoted in a message row is shown too;
- a **declared aggregate**: a top-level field of the result the tool declares
  (`harness_world.engine.Tool.aggregates`; ``total``, the size of a listing, by default);
- outside rows, a value or word that is the **key of a row** the world holds or the attempt
  wrote (a lookup that answers with an id).

Never: a value equal to an argument (or a word of one) of that call or of any earlier call,
whatever the tool does with it (``offset`` and ``limit`` echoed back, an id quoted in a
``not_found`` message, a value written into the world and read back); the pagination fields
``offset``, ``next_offset`` and ``limit``; the text of a typed error; anything of a failed
call. Booleans and nulls show nothing.

Every value is compared as canonical JSON bytes, so ``15`` and ``"15"`` stay apart and a word
of a message meets a result's value in one form. `Observations` answers "was this value shown,
and by which call first" with one walk of each result it has to look into (`CallIndex`, also
what the rows-returned facet of the trace view reads), and only results whose JSON text holds
the value looked for are looked into.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import msgspec

from harness_world.engine.calls import CallRecord
from harness_world.engine.canonical import to_json
from harness_world.engine.contract import PAGING_FIELDS
from harness_world.engine.values import Key
from harness_world.engine.world import World

__all__ = ["CallIndex", "Observations", "scalars", "stated"]

_WORD = re.compile(r"[\w-]+")
_Shape = tuple[str, str, frozenset[str], frozenset[str]]  # entity, key field, required, fields


def scalars(value: Any) -> Iterator[Any]:
    """Every scalar inside a value (dicts and lists walked), in no particular order."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            yield item


def _forms(value: Any) -> Iterator[tuple[Any, bytes]]:
    """A scalar and, for a string, each of its words: (value, canonical JSON) pairs."""
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        yield value, to_json(value)
        for word in _WORD.findall(value):
            if word != value:
                yield word, to_json(word)
    elif isinstance(value, int | float):
        yield value, to_json(value)


def _sent(args: Any, value: bytes) -> bool:
    """Whether ``value`` (canonical JSON) is a scalar of ``args`` or a word of one."""
    return any(form == value for scalar in scalars(args) for _, form in _forms(scalar))


def _matches(value: Any, target: Any) -> bool:
    """Whether a scalar is ``target``, or holds it as a word (``target`` a string), as JSON."""
    if value is None or isinstance(value, bool):
        return False
    if isinstance(target, str):
        if not isinstance(value, str) or target not in value:
            return False
        return value == target or target in _WORD.findall(value)
    return type(value) is type(target) and value == target


@attrs.define(slots=True)
class CallIndex:
    """What one successful result holds, found by one walk of it.

    Attributes:
        whole: (entity, key) of every whole row in it (its key, its required fields, no
            field the entity does not declare): what "returned the row" means.
        strings: Every string inside a row.
        ints: Every integer inside a row.
        floats: Every float inside a row.
        outside: The scalars outside every row (the pagination fields at the top left out).
    """

    whole: set[tuple[str, Key]] = attrs.field(factory=set)
    strings: set[str] = attrs.field(factory=set)
    ints: set[int] = attrs.field(factory=set)
    floats: set[float] = attrs.field(factory=set)
    outside: list[Any] = attrs.field(factory=list)

    def holds(self, target: Any) -> bool:
        """Whether ``target`` is a value inside a row (a string: or a word of one)."""
        kind = type(target)
        if kind is int:
            return target in self.ints
        if kind is float:
            return target in self.floats
        if kind is not str:
            return False
        if target in self.strings:
            return True
        if not _WORD.fullmatch(target):
            return False
        return any(target in s and target in _WORD.findall(s) for s in self.strings)


def _is_row(item: dict[str, Any], shapes: Sequence[_Shape], whole: set[tuple[str, Key]]) -> bool:
    """Whether a dict is a row of some entity (noting it in ``whole`` when it is exactly one)."""
    row = False
    keys = item.keys()
    for name, key, required, fields in shapes:
        if key in item and required <= keys:
            row = True
            value = item[key]
            if keys <= fields and type(value) in (str, int):
                whole.add((name, value))
    return row


def index_result(result: Any, shapes: Sequence[_Shape]) -> CallIndex:
    """One walk of a result: its whole rows, the values inside rows, the scalars outside.

    Written for speed (it is the one walk a grade makes of a listing): no call per scalar.
    """
    index = CallIndex()
    strings, ints, floats, outside = index.strings, index.ints, index.floats, index.outside
    stack: list[tuple[Any, bool, bool]] = [(result, False, True)]
    while stack:
        item, inside, top = stack.pop()
        kind = type(item)
        if kind is dict:
            inside = _is_row(item, shapes, index.whole) or inside
            values = item.values() if inside or not top else _beyond_paging(item)
        elif kind is list:
            values = item
        else:
            values = [item]
        for value in values:
            kind = type(value)
            if kind is dict or kind is list:
                stack.append((value, inside, False))
            elif not inside:
                outside.append(value)
            elif kind is str:
                strings.add(value)
            elif kind is int:
                ints.add(value)
            elif kind is float:
                floats.add(value)
    return index


def _beyond_paging(item: dict[str, Any]) -> list[Any]:
    return [value for name, value in item.items() if name not in PAGING_FIELDS]


_SHAPES: dict[str, list[_Shape]] = {}


def _shapes(world: World) -> list[_Shape]:
    """Each entity's name, key field, required fields and fields (kept per contract)."""
    shapes = _SHAPES.get(world.contract.hash)
    if shapes is None:
        if len(_SHAPES) > 64:
            _SHAPES.clear()
        shapes = _SHAPES[world.contract.hash] = [
            (
                e.name,
                e.key,
                frozenset(n for n, spec in e.fields.items() if not spec.optional) | {e.key},
                frozenset(e.fields),
            )
            for e in world.contract.entities
        ]
    return shapes


@attrs.define(slots=True)
class Observations:
    """What the calls of one attempt showed the agent (see the module docstring).

    Attributes:
        calls: The call log.
        world: The start world (its entities say what a row is, its keys what an id is).
        written: Keys of rows the attempt wrote (a created row's key is an id too).
        arguments: Each call's arguments as canonical JSON, when the caller has them
            (`harness_world.grading.trace.CallLog.arguments`); encoded here otherwise.
    """

    calls: Sequence[CallRecord]
    world: World
    written: frozenset[object] = frozenset()
    arguments: Sequence[bytes] | None = attrs.field(default=None, kw_only=True)
    _argued: dict[bytes, int | None] = attrs.field(factory=dict, init=False)
    _indexes: dict[int, CallIndex] = attrs.field(factory=dict, init=False)
    _blobs: dict[int, bytes] = attrs.field(factory=dict, init=False)
    _joined: bytes | None = attrs.field(default=None, init=False)
    _starts: list[int] = attrs.field(factory=list, init=False)
    _first: dict[bytes, int | None] = attrs.field(factory=dict, init=False)
    _shapes: list[_Shape] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._shapes = _shapes(self.world)

    def argued(self, value: bytes) -> int | None:
        """The first call that sent ``value`` (canonical JSON) as an argument or a word of one.

        Every call's arguments are searched at once, as one JSON text; only a call whose text
        holds the value's text is looked into.
        """
        if value not in self._argued:
            if self._joined is None:
                self._join_arguments()
            joined, starts = self._joined, self._starts
            assert joined is not None
            needle = value[1:-1] if value.startswith(b'"') else value
            self._argued[value] = None
            at = joined.find(needle)
            while at >= 0:
                index = bisect.bisect_right(starts, at) - 1
                call = self.calls[index]
                if _sent(call.args, value):
                    self._argued[value] = call.seq
                    break
                at = joined.find(
                    needle, starts[index + 1] if index + 1 < len(starts) else len(joined)
                )
        return self._argued[value]

    def _join_arguments(self) -> None:
        encoded = self.arguments
        if encoded is None:
            encoded = [to_json(call.args) for call in self.calls]
        starts, size = [], 0
        for text in encoded:
            starts.append(size)
            size += len(text) + 1
        self._joined, self._starts = b"\n".join(encoded) + b"\n" if encoded else b"", starts

    def echoed(self, value: bytes, seq: int) -> bool:
        """Whether a call numbered ``seq`` or lower sent ``value`` (see `argued`)."""
        known = self._argued.get(value, 0)
        if known != 0:  # asked before: None (never sent) or the first call that sent it
            return known is not None and known <= seq
        if self._joined is None:
            self._join_arguments()
        assert self._joined is not None
        needle = value[1:-1] if value.startswith(b'"') else value
        at = self._joined.find(needle)
        if at < 0 or self.calls[bisect.bisect_right(self._starts, at) - 1].seq > seq:
            return False  # not even its text was sent by then
        sent = self.argued(value)
        return sent is not None and sent <= seq

    def blob(self, index: int) -> bytes:
        """The canonical JSON of one call's result (kept: several questions search it)."""
        found = self._blobs.get(index)
        if found is None:
            found = self._blobs[index] = to_json(self.calls[index].result)
        return found

    def index(self, index: int) -> CallIndex:
        """The walk of one call's result (kept: every facet that looks into it shares it)."""
        found = self._indexes.get(index)
        if found is None:
            found = self._indexes[index] = index_result(self.calls[index].result, self._shapes)
        return found

    def _is_key(self, value: Any) -> bool:
        if value in self.written:
            return True
        return any(self.world.raw(e.name, value) is not None for e in self.world.contract.entities)

    def _aggregates(self, call: CallRecord) -> list[Any]:
        spec = self.world.contract.tool(call.tool)
        if spec is None or not isinstance(call.result, dict):
            return []
        return [call.result.get(name) for name in spec.aggregates]

    def _shows(self, index: int, value: bytes, target: Any) -> bool:
        """Whether call ``index`` showed ``value`` (its decoded form ``target``)."""
        call = self.calls[index]
        if not call.ok or self.echoed(value, call.seq):
            return False
        if any(_matches(v, target) for v in self._aggregates(call)):
            return True
        found = self.index(index)
        if found.holds(target):
            return True
        return any(_matches(v, target) for v in found.outside) and self._is_key(target)

    def first(self, value: bytes, before: int | None = None) -> int | None:
        """The sequence number of the first call (below ``before``) that showed ``value``.

        Remembered per value: a write naming an id asks again for every later write.
        """
        if value not in self._first:
            self._first[value] = None
            needle = value[1:-1] if value.startswith(b'"') else value
            target = msgspec.json.decode(value)
            for index, call in enumerate(self.calls):
                if call.ok and needle in self.blob(index) and self._shows(index, value, target):
                    self._first[value] = call.seq
                    break
        seq = self._first[value]
        return seq if seq is not None and (before is None or seq < before) else None

    def by_call(self, index: int) -> frozenset[bytes]:
        """Every value call ``index`` (0-based) showed, as canonical JSON.

        Its world values that were never an argument of it or of an earlier call.
        """
        call = self.calls[index]
        if not call.ok:
            return frozenset()
        values = set(self._values(index))
        return frozenset(v for v in values if not self.echoed(v, call.seq))

    def _values(self, index: int) -> Iterator[bytes]:
        """The world values successful call ``index`` returned, echoed or not (some repeated).

        Made one at a time, so that `any` can stop at the first one not echoed.
        """
        call = self.calls[index]
        found = self.index(index)
        for v in found.strings:
            for _, form in _forms(v):
                yield form
        for number in (*found.ints, *found.floats):
            yield to_json(number)
        for v in self._aggregates(call):
            for _, form in _forms(v):
                yield form
        for v in found.outside:
            for plain, form in _forms(v):
                if self._is_key(plain):
                    yield form

    def find(
        self, needle: bytes, accept: Callable[[bytes], bool], before: int | None = None
    ) -> int | None:
        """The sequence number of the first call that showed a value ``accept`` takes.

        Only results whose JSON text holds ``needle`` (the value's text, or a part of it every
        accepted value holds) are looked into; with ``before``, only calls numbered below it.
        """
        for index, call in enumerate(self.calls):
            if before is not None and call.seq >= before:
                break
            if not call.ok or needle not in self.blob(index):
                continue
            if any(accept(v) for v in self.by_call(index)):
                return call.seq
        return None

    def any(self) -> bool:
        """Whether any call showed anything about the world (some call's `by_call` is not empty).

        Asked value by value: the first value a call showed that it was not sent answers it.
        """
        for index, call in enumerate(self.calls):
            if call.ok and any(not self.echoed(v, call.seq) for v in self._values(index)):
                return True
        return False


def stated(message: str) -> frozenset[bytes]:
    """The words of a message that hold a digit (ids, numbers, dates), as canonical JSON.

    A word of digits is also given as the number it reads as, the form a result's number
    takes in `Observations`.
    """
    words = [w for w in _WORD.findall(message) if any(c.isdigit() for c in w)]
    return frozenset(
        [to_json(w) for w in words] + [to_json(int(w)) for w in words if w.isdecimal()]
    )
