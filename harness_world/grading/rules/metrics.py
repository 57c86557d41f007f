"""Process metrics: how an attempt went about its task, counted from its call log.

Each entry counts, per attempt, the figures its rate is made of (``AttemptProcess`` fields);
``harness_world.analysis.process`` pools them over a run. They read the trace view's task-free
part (`CallLog`), so they are the same for every reader, also on a record read for viewing
(results as undecoded JSON). Backtracking reads the same chains of write images as
``trace.no_reverted_writes`` (`CallLog.rewritten`), and "changed" is the one typed meaning
(`CallLog.changed`, `harness_world.grading.rows.changed_fields`). Definitions: ``docs/metrics.md``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import msgspec

from harness_world.engine.calls import WriteImage
from harness_world.engine.values import Key
from harness_world.grading.criteria import Metric
from harness_world.grading.trace import CallLog, LoggedCall

__all__ = ["ENTRIES"]


def _mentions(value: Any, key: Key) -> bool:
    """Whether a value is or contains the key as a whole scalar of the key's type.

    A walk with a stack, stopping at the first match: a scalar of the key's type, a plain
    dict and a plain list are told by their exact type (the values a result or arguments
    hold); anything else is asked as ``isinstance`` asks, undecoded JSON searched as text.
    """
    kind = type(key)
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        found = type(item)
        if found is kind:
            if item == key:
                return True
        elif found is dict:
            extend(item.values())
        elif found is list:
            extend(item)
        elif isinstance(item, msgspec.Raw):  # undecoded JSON: search its text for the key
            if _key_pattern(key).search(bytes(item)) is not None:
                return True
        elif isinstance(item, dict):
            extend(item.values())
        elif isinstance(item, (list, tuple)):
            extend(item)
    return False


_PATTERNS: dict[Key, re.Pattern[bytes]] = {}


def _key_pattern(key: Key) -> re.Pattern[bytes]:
    """The key as a whole JSON scalar: a quoted string, or a number not inside another."""
    pattern = _PATTERNS.get(key)
    if pattern is None:
        if len(_PATTERNS) > 100_000:
            _PATTERNS.clear()
        text = re.escape(msgspec.json.encode(key))
        if isinstance(key, int):
            text = rb"(?<![\w.\-\"])" + text + rb"(?![\w.\"])"
        pattern = _PATTERNS[key] = re.compile(text)
    return pattern


_IDS = (str, int)
"""The types of a row's id (`_rows` also takes their subclasses, but for ``bool``)."""


def _decoded(value: Any) -> Any:
    return msgspec.json.decode(bytes(value)) if isinstance(value, msgspec.Raw) else value


def _rows(value: Any) -> list[dict[str, Any]]:
    """The outermost JSON objects with an ``id`` in a result.

    In no set order: each figure sums them or searches them.
    """
    # `isinstance` with a tuple, not a union: the same test, made for every value walked, and
    # cheaper to make.
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            key = item.get("id")
            if isinstance(key, (str, int)) and not isinstance(key, bool):
                found.append(item)
            else:
                stack += [v for v in item.values() if isinstance(v, (dict, list))]
        elif isinstance(item, list):
            for v in item:  # a listing's rows taken here, not pushed and popped one by one
                if type(v) is dict and type(v.get("id")) in _IDS:
                    found.append(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return found


def _failed(log: CallLog) -> Mapping[str, int]:
    calls = log.calls
    return {"tool_calls": len(calls), "failed_calls": sum(1 for c in calls if not c.ok)}


def _escalations(log: CallLog) -> Mapping[str, int]:
    refused = sum(1 for c in log.calls if c.error is not None and c.error.kind == "refused")
    return {"refused_calls": refused}


def _backtracking(log: CallLog) -> Mapping[str, int]:
    return {"write_calls": len(log.write_calls), "backtracked": len(log.backtracked)}


def _verified(calls: Sequence[LoggedCall], index: int, facts: _Facts) -> bool:
    reads = facts.reads_after(index)
    if not reads:  # most writes come last: nothing read after them
        return False
    keys = {image.key for image in calls[index].writes}
    return any(any(facts.returns(later, k) for k in keys) for later in reads)


def _verification(log: CallLog) -> Mapping[str, int]:
    """Verification calls, and the write calls some later read verified.

    A verification call is a read after a write whose result holds a written row's key (its
    arguments naming the key show nothing: `harness_world.grading.shown`).
    """
    facts = _facts(log)
    written: set[Key] = set()
    count = 0
    for index, call in enumerate(log.calls):
        if call.writes:
            for image in call.writes:
                written.add(image.key)
        elif written and call.ok and any(facts.returns(index, k) for k in written):
            count += 1
    last = facts.last_read()  # a write after the last read has nothing read after it
    verified = sum(1 for i in log.write_calls if i < last and _verified(log.calls, i, facts))
    return {"verification_calls": count, "verified": verified}


def _shows(row: dict[str, Any], image: WriteImage, log: CallLog) -> bool:
    after = image.after
    if after is None or row.get("id") != image.key:
        return False
    return all(f in after and f in row and row[f] == after[f] for f in log.changed(image))


def _postcondition_checked(log: CallLog, index: int, facts: _Facts) -> bool:
    """Whether a later read showed one of the call's written rows at its written values."""
    written = [w for w in log.calls[index].writes if w.after is not None]
    if not written:
        return False
    return any(
        _shows(row, w, log)
        for later in facts.reads_after(index)
        for w in written
        for row in facts.rows_by_id(later).get(w.key, ())
    )


def _postconditions(log: CallLog) -> Mapping[str, int]:
    facts = _facts(log)
    last = facts.last_read()  # a write after the last read has nothing read after it
    checked = sum(1 for i in log.write_calls if i < last and _postcondition_checked(log, i, facts))
    return {"postcondition_checked": checked}


def _irreversible(log: CallLog) -> Mapping[str, int]:
    calls, count = log.calls, 0
    for i in log.write_calls:
        for w in calls[i].writes:
            if w.before is None or w.after is None:
                count += 1
                break  # a write call counts once
    return {"irreversible": count}


def _word_pattern(key: Key) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(str(key))}(?![\w-])")


def _row_bytes(log: CallLog) -> Mapping[str, int]:
    """Bytes of the rows read, and of those whose id was used after them (see the docs).

    A row's id is looked for in what later calls name (`_Later`: the keys they write, then
    their arguments) and in what the agent said. Each row is encoded once, its size added to
    the bytes read and, when used, to the bytes used: encoding costs by the byte, so a second
    encoding of the used rows would cost that much again.
    """
    facts = _facts(log)
    said = log.said
    words: frozenset[str] = frozenset()
    later: _Later | None = None  # made at the first row: not for a log that read none
    read = used = 0
    encode = _JSON.encode
    for i in range(len(log.calls)):
        rows = facts.rows(i)
        if not rows:
            continue
        if later is None:
            later, words = _Later.of(log), frozenset(_WORD.findall(said))
        for row in rows:
            size = len(encode(row))
            read += size
            key = row["id"]
            if later.written.get(key, -1) > i or later.argued(key, i) or _in_text(key, words, said):
                used += size
    return {"rows_read_bytes": read, "rows_used_bytes": used}


_WORD = re.compile(r"[\w-]+")


def _in_text(key: Key, words: frozenset[str], text: str) -> bool:
    """Whether the key is a whole word of ``text`` (``words``: its runs of word characters)."""
    name = str(key)
    if name not in text:  # a whole word of the text, or a match of its pattern, is in it
        return False
    if _WORD.fullmatch(name):  # a whole word is exactly one maximal run of word characters
        return name in words
    return _word_pattern(key).search(text) is not None


@attrs.frozen(slots=True)
class _Later:
    """What the calls after a position name: a scalar of their arguments or a written key.

    Every call's arguments as canonical JSON (`CallLog.arguments`, which the grade encoded),
    joined one a line: an argument equal to a key holds the key's JSON text, so a key whose
    text is not in the later calls' part of the text is named by none of them, and where it
    is, `_mentions` decides for the call that holds it.

    Attributes:
        calls: The calls.
        text: Their arguments' JSON, one call a line.
        starts: Where each call's line starts in ``text`` (and, last, its length).
        written: Each key written, to the position of the last call that wrote it.
    """

    calls: Sequence[LoggedCall]
    text: bytes
    starts: list[int]
    written: dict[Any, int]

    @classmethod
    def of(cls, log: CallLog) -> _Later:
        """The arguments and written keys of ``log``'s calls."""
        starts, size = [], 0
        for encoded in log.arguments:
            starts.append(size)
            size += len(encoded) + 1
        starts.append(size)
        written = {w.key: i for i, call in enumerate(log.calls) for w in call.writes}
        return cls(log.calls, b"\n".join(log.arguments) + b"\n", starts, written)

    def argued(self, key: Key, after: int) -> bool:
        """Whether the arguments of a call after position ``after`` hold ``key`` (`_mentions`).

        A call after it names the key when it does, or writes the key (`written`).
        """
        needle, starts = _JSON.encode(key), self.starts
        at = self.text.find(needle, starts[after + 1])
        while at >= 0:
            index = bisect.bisect_right(starts, at) - 1
            if _mentions(self.calls[index].args, key):
                return True
            at = self.text.find(needle, starts[index + 1])
        return False


@attrs.define(slots=True)
class _Facts:
    """Each call's result rows and result JSON, made once per log for every metric.

    A result that holds a scalar equal to a key holds that key's JSON text, so a key whose text
    is absent from the result's is not returned by it; where it is present, `_mentions`
    decides (an undecoded result is its own text).
    """

    calls: Sequence[LoggedCall]
    _rows: dict[int, list[dict[str, Any]]] = attrs.field(factory=dict, alias="_rows")
    _by_id: dict[int, dict[Key, list[dict[str, Any]]]] = attrs.field(factory=dict, alias="_by_id")
    _texts: dict[int, bytes | None] = attrs.field(factory=dict, alias="_texts")
    _returned: dict[tuple[int, type, Key], bool] = attrs.field(factory=dict, alias="_returned")
    _reads: list[int] | None = attrs.field(default=None, alias="_reads")

    def last_read(self) -> int:
        """The position of the last successful call that wrote nothing (-1: none)."""
        reads = self.reads_after(-1)
        return reads[-1] if reads else -1

    def reads_after(self, index: int) -> list[int]:
        """Positions after ``index`` of the successful calls that wrote nothing, in order.

        A later read is what the verification and post-condition figures look for after each
        write call: listed once per log, not found again by a walk of every later call.
        """
        if self._reads is None:
            self._reads = [i for i, c in enumerate(self.calls) if c.ok and not c.writes]
        reads = self._reads
        return reads[bisect.bisect_right(reads, index) :]

    def rows(self, index: int) -> list[dict[str, Any]]:
        """The rows (`_rows`) of call ``index``'s result; none for a failed call."""
        found = self._rows.get(index)
        if found is None:
            call = self.calls[index]
            result = call.result
            if not call.ok:
                found = []
            elif type(result) is dict and type(result.get("id")) in _IDS:
                found = [result]  # a result that is one row (a read or write of one): no walk
            else:
                found = _rows(_decoded(result))
            self._rows[index] = found
        return found

    def rows_by_id(self, index: int) -> dict[Key, list[dict[str, Any]]]:
        """`rows` of call ``index`` by their ``id`` (a write image's rows are looked up by key).

        A dict finds a key exactly where ``==`` does, for the str and int ids a row has.
        """
        found = self._by_id.get(index)
        if found is None:
            found = self._by_id[index] = {}
            for row in self.rows(index):
                found.setdefault(row["id"], []).append(row)
        return found

    def _text(self, index: int) -> bytes | None:
        if index not in self._texts:
            result = self.calls[index].result
            try:
                text = bytes(result) if isinstance(result, msgspec.Raw) else _JSON.encode(result)
            except (TypeError, ValueError, OverflowError):  # not JSON: walked value by value
                text = None
            self._texts[index] = text
        return self._texts[index]

    def returns(self, index: int, key: Key) -> bool:
        """Whether call ``index``'s result mentions ``key`` (`_mentions`).

        Kept per call and key: the verification figures ask each read about each written key
        twice (as a verification call, and for the write it may verify).
        """
        asked = (index, type(key), key)
        known = self._returned.get(asked)
        if known is None:
            text = self._text(index)
            if text is not None and _JSON.encode(key) not in text:
                known = False
            else:
                known = _mentions(self.calls[index].result, key)
            self._returned[asked] = known
        return known


_JSON = msgspec.json.Encoder()
_LAST: list[tuple[CallLog, _Facts]] = []


def _facts(log: CallLog) -> _Facts:
    """The facts of ``log``: the last log's are kept, as every metric reads the same one."""
    if _LAST and _LAST[0][0] is log:
        return _LAST[0][1]
    facts = _Facts(log.calls)
    _LAST[:] = [(log, facts)]
    return facts


ENTRIES = (
    Metric(
        name="failed calls",
        field="failure_rate",
        unit="share of calls, Wilson 95 %",
        counts="calls that returned a typed error / tool calls, pooled",
        limits="an injected fault counts like the agent's own mistake; pooled calls of one "
        "attempt are not independent (the per-attempt mean `failed_calls` is the safer figure)",
        measure=_failed,
    ),
    Metric(
        name="permission escalation rate",
        field="escalation_rate",
        unit="share of attempts, Wilson 95 %",
        counts="attempts with at least one call the world refused on policy (`refused`) / attempts",
        limits="sees only what the world's policy refuses; a forbidden effect the world allows "
        "is the grade's `forbidden.*`, not this",
        measure=_escalations,
    ),
    Metric(
        name="backtracking",
        field="backtrack_rate",
        unit="share of write calls, Wilson 95 %",
        counts="write calls one of whose changed fields a later write changed again on the "
        "same row (or deleted the row) / write calls",
        limits="a deliberate two-step update of one field counts too",
        measure=_backtracking,
    ),
    Metric(
        name="verification cost",
        field="verification_cost",
        unit="share of calls, Wilson 95 %",
        counts="successful calls that wrote nothing, made after the first write, whose result "
        "holds the key of a row the attempt had written (an argument naming it shows nothing) "
        "/ tool calls",
        limits="calls, not tokens (a record holds no per-call token count); a read made for "
        "another reason that happens to return a written row counts",
        measure=_verification,
    ),
    Metric(
        name="post-condition rate",
        field="postcondition_rate",
        unit="share of write calls, Wilson 95 %",
        counts="write calls followed by a read returning one of the rows they wrote with "
        "every changed field at its written value / write calls",
        limits="one row seen is enough (a side-effect row the agent cannot read, such as a "
        "provider event, is not required); a write that only deletes has nothing to show and "
        "never counts as checked; a write whose response was lost is not a write call here "
        "(its reconciliation is `harness.reconcile_before_retry`); sent messages and receipts "
        "are rarely read back, so the rate is low even for correct work",
        measure=_postconditions,
    ),
    Metric(
        name="irreversible actions",
        field="irreversible_rate",
        unit="share of write calls, Wilson 95 %",
        counts="write calls that created or deleted a row / write calls",
        limits="irreversible in the world's terms (no field update undoes it); a world's own "
        "compensating tool (a refund) is not recognised",
        measure=_irreversible,
    ),
    Metric(
        name="context efficiency (useful-token ratio)",
        field="context_efficiency",
        unit="ratio of bytes (tokens ≈ bytes / 4 on both sides)",
        counts="bytes of rows read whose `id` is used afterwards / bytes of rows read, pooled; "
        "a row is an outermost JSON object with an `id` in a successful result, used when its "
        "id appears later as a whole argument value, a written key, or a whole word of the "
        "final message or a message to the user",
        limits="an answer aggregated over rows (a count, a sum) uses them without naming "
        "them; envelopes and results without rows are not counted; what the model read "
        "outside tool results (the prompt) is not seen",
        measure=_row_bytes,
    ),
    Metric(
        name="efficiency-adjusted score",
        field="efficiency_adjusted",
        unit="mean over attempts, 0 to 1",
        counts="per attempt passed × max(0, 1 − tool calls / the task's tool-call budget), "
        "over graded attempts of tasks with a budget",
        limits="depends on how generous each budget is: compare configurations over the same "
        "tasks only; the agent grade alone, harness criteria not included",
    ),
)
"""Every process metric, in the order ``docs/metrics.md`` lists them."""
