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
and by which call first" without walking every result: a result is walked only when its JSON
text holds the value looked for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from harness_world.engine.calls import CallRecord
from harness_world.engine.canonical import to_json
from harness_world.engine.contract import PAGING_FIELDS, Entity
from harness_world.engine.world import World

__all__ = ["Observations", "stated"]

_WORD = re.compile(r"[\w-]+")


def _scalars(value: Any) -> Iterator[Any]:
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


def _holds_row(value: dict[str, Any], entity: Entity) -> bool:
    if entity.key not in value:
        return False
    return all(name in value for name, spec in entity.fields.items() if not spec.optional)


@attrs.define(slots=True)
class Observations:
    """What the calls of one attempt showed the agent (see the module docstring).

    Attributes:
        calls: The call log.
        world: The start world (its entities say what a row is, its keys what an id is).
        written: Keys of rows the attempt wrote (a created row's key is an id too).
    """

    calls: Sequence[CallRecord]
    world: World
    written: frozenset[object] = frozenset()
    _argued: dict[bytes, int] | None = attrs.field(default=None, init=False)
    _values: dict[int, frozenset[bytes]] = attrs.field(factory=dict, init=False)
    _blobs: dict[int, bytes] = attrs.field(factory=dict, init=False)

    @property
    def argued(self) -> dict[bytes, int]:
        """Every argument value and word of the attempt, with the first call that sent it."""
        if self._argued is None:
            argued: dict[bytes, int] = {}
            for call in self.calls:
                for scalar in _scalars(call.args):
                    for _, form in _forms(scalar):
                        argued.setdefault(form, call.seq)
            self._argued = argued
        return self._argued

    def blob(self, index: int) -> bytes:
        """The canonical JSON of one call's result (kept: several questions search it)."""
        found = self._blobs.get(index)
        if found is None:
            found = self._blobs[index] = to_json(self.calls[index].result)
        return found

    def _is_key(self, value: Any) -> bool:
        if value in self.written:
            return True
        return any(self.world.raw(e.name, value) is not None for e in self.world.contract.entities)

    def _world_values(self, call: CallRecord) -> frozenset[bytes]:
        """What one successful result returned about the world, echoes not yet removed."""
        out: set[bytes] = set()
        entities = self.world.contract.entities
        result = call.result
        spec = self.world.contract.tool(call.tool)
        if isinstance(result, dict) and spec is not None:
            for name in spec.aggregates:
                out.update(form for _, form in _forms(result.get(name)))
        stack: list[tuple[Any, bool, bool]] = [(result, False, True)]
        while stack:
            value, inside, top = stack.pop()
            if isinstance(value, dict):
                row = inside or any(_holds_row(value, e) for e in entities)
                for name, item in value.items():
                    if top and not row and name in PAGING_FIELDS:
                        continue
                    stack.append((item, row, False))
            elif isinstance(value, list):
                stack.extend((item, inside, False) for item in value)
            elif inside:
                out.update(form for _, form in _forms(value))
            else:
                out.update(form for plain, form in _forms(value) if self._is_key(plain))
        return frozenset(out)

    def by_call(self, index: int) -> frozenset[bytes]:
        """What call ``index`` (0-based) showed.

        Its world values that were never an argument of it or of an earlier call.
        """
        values = self._values.get(index)
        if values is None:
            call = self.calls[index]
            values = self._world_values(call) if call.ok else frozenset()
            argued = self.argued
            values = frozenset(v for v in values if argued.get(v, call.seq + 1) > call.seq)
            self._values[index] = values
        return values

    def find(
        self, needle: bytes, accept: Callable[[bytes], bool], before: int | None = None
    ) -> int | None:
        """The sequence number of the first call that showed a value ``accept`` takes.

        Only results whose JSON text holds ``needle`` (the value's text, or a part of it every
        accepted value holds) are walked; with ``before``, only calls numbered below it.
        """
        for index, call in enumerate(self.calls):
            if before is not None and call.seq >= before:
                break
            if not call.ok or needle not in self.blob(index):
                continue
            if any(accept(v) for v in self.by_call(index)):
                return call.seq
        return None

    def first(self, value: bytes, before: int | None = None) -> int | None:
        """The sequence number of the first call (below ``before``) that showed ``value``."""
        needle = value[1:-1] if value.startswith(b'"') else value
        return self.find(needle, value.__eq__, before)

    def any(self) -> bool:
        """Whether any call showed anything about the world."""
        return any(self.by_call(i) for i in range(len(self.calls)))


def stated(message: str) -> frozenset[bytes]:
    """The words of a message that hold a digit (ids, numbers, dates), as canonical JSON.

    A word of digits is also given as the number it reads as, the form a result's number
    takes in `Observations`.
    """
    words = [w for w in _WORD.findall(message) if any(c.isdigit() for c in w)]
    return frozenset(
        [to_json(w) for w in words] + [to_json(int(w)) for w in words if w.isdecimal()]
    )
