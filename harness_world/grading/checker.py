"""The checker: a pure function of (verified record, task, start world) to a grade.

It reads the record and the start state only: it never opens a session, calls a tool or asks a
model. State criteria compare delta = diff(start, final) with the required set R and the allowed
set A (R ⊆ delta and delta ⊆ A, reported separately); trace criteria read the call log.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs
from msgspec import UNSET

from harness_world.engine.calls import CallRecord, WriteImage
from harness_world.engine.canonical import to_json
from harness_world.engine.contract import Entity
from harness_world.engine.values import typed_equal
from harness_world.engine.world import Key, World
from harness_world.evidence.record import Record
from harness_world.grading.answers import IdAnswer, judge
from harness_world.grading.briefing import briefing
from harness_world.grading.criteria import Check, CriterionRegistry
from harness_world.grading.grade import CriterionKind, CriterionVerdict, Grade, RequiredItem
from harness_world.grading.harness import HARNESS_TAXA, harness_criteria
from harness_world.grading.task import Answer, Requirement, Task, select_targets
from harness_world.grading.taxonomy import Dimension, Taxon
from harness_world.grading.trusted import observed, trusted_criteria

__all__ = [
    "CRITERIA",
    "Change",
    "grade",
    "net_changes",
    "required_items",
    "returned_row_keys",
    "returned_rows",
]

_MISSING = object()
_SHOWN = 6
_SCALAR_TYPES = frozenset({str, int, float, bool})


@attrs.frozen(slots=True)
class Change:
    """One row's net change: start row and final row (None when absent at that end)."""

    entity: str
    key: Key
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @functools.cached_property
    def _changed(self) -> tuple[str, ...]:
        before, after = self.before or {}, self.after or {}
        changed = []
        for name in before.keys() | after.keys():
            old, new = before.get(name, _MISSING), after.get(name, _MISSING)
            kind = type(old)
            # Most fields are one scalar type on both sides: decided inline, no call.
            if kind is type(new) and kind in _SCALAR_TYPES:
                if old is not new and old != new:
                    changed.append(name)
            elif not typed_equal(old, new):
                changed.append(name)
        changed.sort()
        return tuple(changed)

    def fields(self) -> list[str]:
        """Fields whose value differs, type-aware at every depth (absent is not null)."""
        return list(self._changed)


def net_changes(record: Record, world: World) -> list[Change]:
    """delta: every touched key whose final row differs from the start row."""
    out = []
    for final in record.final:
        start = world.get(final.entity, final.key)
        if start != final.row or not typed_equal(start, final.row):
            out.append(Change(final.entity, final.key, start, final.row))
    return out


def _is_row(value: dict[str, Any], entity: Entity) -> bool:
    if entity.key not in value:
        return False
    for name, spec in entity.fields.items():
        if name not in value and not spec.optional:
            return False
    return all(name in entity.fields for name in value)


def _walk_dicts(value: Any) -> Iterator[dict[str, Any]]:
    """Every dict inside ``value``, itself included, outer before inner (iterative)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(reversed(item.values()))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def returned_row_keys(call: CallRecord, entities: Iterable[Entity]) -> set[tuple[str, Key]]:
    """(entity, key) of every whole row of any of ``entities`` in a call's result (one walk)."""
    if not call.ok:
        return set()
    candidates = [(e, e.key) for e in entities]
    found: set[tuple[str, Key]] = set()
    for d in _walk_dicts(call.result):
        for entity, key_field in candidates:
            if key_field in d and _is_row(d, entity):
                found.add((entity.name, d[key_field]))
    return found


def returned_rows(call: CallRecord, entity: Entity) -> set[Key]:
    """Keys of whole rows of ``entity`` that a call's result actually contained."""
    return {key for _, key in returned_row_keys(call, [entity])}


def _findings(
    id_: str, kind: CriterionKind, found: list[str], prefix: str, clean: str
) -> CriterionVerdict:
    """A verdict that fails when anything was found, naming what (or saying ``clean``)."""
    return CriterionVerdict(
        id=id_,
        kind=kind,
        status="failed" if found else "passed",
        detail=f"{prefix}{_show(found)}" if found else clean,
    )


def _unread_targets(ctx: _Context) -> list[str]:
    """Target rows no successful call ever returned whole."""
    first_read = _first_returned(ctx)
    return [f"{e}:{k}" for (e, k) in _all_targets(ctx) if (e, k) not in first_read]


def _show(items: list[str]) -> str:
    head = ", ".join(items[:_SHOWN])
    return head + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _fmt(value: Any) -> str:
    return "absent" if value is _MISSING else repr(value)


@attrs.define(slots=True)
class _Context:
    record: Record
    task: Task
    world: World
    changes: list[Change]
    targets: dict[str, tuple[Key, ...]]
    _first_read: dict[tuple[str, Key], int] | None = None
    _required: tuple[CriterionVerdict, set[tuple[str, Key, str]]] | None = None

    def required(self) -> tuple[CriterionVerdict, set[tuple[str, Key, str]]]:
        """The ``state.required`` verdict and the atoms R makes allowed (computed once)."""
        if self._required is None:
            self._required = _required(self)
        return self._required

    def target_keys(self, name: str) -> tuple[Key, ...]:
        return self.targets[self.task.target(name).name]

    def created(self, entity: str) -> list[Change]:
        return [
            c
            for c in self.changes
            if c.entity == entity and c.before is None and c.after is not None
        ]


_Atoms = set[tuple[str, Key, str]]
_ByKey = dict[tuple[str, Key], Change]


def _required(ctx: _Context) -> tuple[CriterionVerdict, _Atoms]:
    """R ⊆ delta; also returns the atoms R makes allowed.

    One phase per kind of requirement (set, row, delete, create), each listing what is missing
    and adding the atoms it makes allowed.
    """
    missing: list[str] = []
    allowed: _Atoms = set()
    by_key = {(c.entity, c.key): c for c in ctx.changes}
    phases = {
        "set": _set_required,
        "row": _row_required,
        "delete": _delete_required,
        "create": _create_required,
    }
    for req in ctx.task.require:
        missing += phases[req.kind](ctx, req, by_key, allowed)
    verdict = CriterionVerdict(
        id="state.required",
        kind="state",
        status="failed" if missing else "passed",
        detail=f"missing {len(missing)}: {_show(missing)}"
        if missing
        else "every required change is present",
    )
    return verdict, allowed


def _set_required(ctx: _Context, req: Requirement, by_key: _ByKey, allowed: _Atoms) -> list[str]:
    """Each target's ``req.field`` ends at the expected value (start-relative for delta/add)."""
    target = ctx.task.target(req.target)
    as_set = req.add is not UNSET or req.remove is not UNSET
    missing: list[str] = []
    for key in ctx.target_keys(req.target):
        allowed.add((target.entity, key, req.field))
        start = ctx.world.get(target.entity, key) or {}
        change = by_key.get((target.entity, key))
        final = change.after if change is not None else start
        found = _MISSING if final is None else final.get(req.field, _MISSING)
        expected = _expected(req, start)
        if not _equal(found, expected, as_set=as_set):
            where = f"{target.entity}:{key}.{req.field}"
            missing.append(f"{where} expected {_fmt(expected)}, found {_fmt(found)}")
    return missing


def _delete_required(ctx: _Context, req: Requirement, by_key: _ByKey, allowed: _Atoms) -> list[str]:
    """Each target row is gone at the end."""
    target = ctx.task.target(req.target)
    missing: list[str] = []
    for key in ctx.target_keys(req.target):
        allowed.add((target.entity, key, "<deleted>"))
        change = by_key.get((target.entity, key))
        if change is None or change.after is not None:
            missing.append(f"{target.entity}:{key} not deleted")
    return missing


def _create_required(ctx: _Context, req: Requirement, by_key: _ByKey, allowed: _Atoms) -> list[str]:
    """``req.count`` new matching rows (per target, through ``req.link``, when linked)."""
    del by_key  # creates are found among the created rows, not by key
    good = [c for c in ctx.created(req.entity) if _row_matches(c.after, req.match)]
    what = ", ".join(f"{k}={v!r}" for k, v in sorted(req.match.items()))
    if not req.link:
        allowed.update((req.entity, c.key, "<created>") for c in good[: req.count])
        if len(good) < req.count:
            return [f"{req.count - len(good)} new {req.entity} row(s) missing ({what})"]
        return []
    target = ctx.task.target(req.target)
    missing: list[str] = []
    for key in ctx.target_keys(req.target):
        linked = [c for c in good if c.after is not None and c.after.get(req.link) == key]
        allowed.update((req.entity, c.key, "<created>") for c in linked[: req.count])
        if len(linked) < req.count:
            missing.append(f"{target.entity}:{key} lacks a new {req.entity} row ({what})")
    return missing


def _row_required(ctx: _Context, req: Requirement, by_key: _ByKey, allowed: _Atoms) -> list[str]:
    """Each target row ends exactly as ``req.row``; every field of the row is a required atom."""
    assert isinstance(req.row, dict)
    expected: dict[str, Any] = req.row
    target = ctx.task.target(req.target)
    missing: list[str] = []
    for key in ctx.target_keys(req.target):
        start = ctx.world.get(target.entity, key) or {}
        allowed.update((target.entity, key, name) for name in set(start) | set(expected))
        change = by_key.get((target.entity, key))
        final = change.after if change is not None else start
        where = f"{target.entity}:{key}"
        if final is None:
            missing.append(f"{where} deleted, expected a row")
            continue
        for name in sorted(set(final) | set(expected)):
            want = expected.get(name, _MISSING)
            found = final.get(name, _MISSING)
            if not typed_equal(want, found):  # _MISSING only ever equals itself
                missing.append(f"{where}.{name} expected {_fmt(want)}, found {_fmt(found)}")
    return missing


def _expected(req: Requirement, start: dict[str, Any]) -> Any:
    if req.absent:
        return _MISSING
    if req.null:
        return None
    if req.delta is not UNSET:
        return start.get(req.field, 0) + req.delta
    if req.add is not UNSET or req.remove is not UNSET:
        items = list(start.get(req.field) or [])
        if req.add is not UNSET and req.add not in items:
            items.append(req.add)
        return [i for i in items if req.remove is UNSET or i != req.remove]
    return req.value


def _equal(found: Any, expected: Any, *, as_set: bool) -> bool:
    if found is _MISSING or expected is _MISSING:
        return found is expected
    if as_set and isinstance(found, list) and isinstance(expected, list):
        return sorted(map(repr, found)) == sorted(map(repr, expected))
    if (
        isinstance(expected, float)
        and isinstance(found, int | float)
        and not isinstance(found, bool)
    ):
        return abs(found - expected) < 1e-9
    return typed_equal(found, expected)


def _row_matches(row: dict[str, Any] | None, match: dict[str, Any]) -> bool:
    if row is None:
        return False
    return all(name in row and typed_equal(row[name], v) for name, v in match.items())


def _allowed(ctx: _Context, required_atoms: set[tuple[str, Key, str]]) -> CriterionVerdict:
    """Delta ⊆ A, with A = required atoms ∪ the task's allowances."""
    unauthorized: list[str] = []
    created_budget: dict[tuple[int, Key | None], int] = {}
    for change in ctx.changes:
        if change.before is None:
            atom = (change.entity, change.key, "<created>")
            if atom in required_atoms or _create_allowed(ctx, change, created_budget):
                continue
            unauthorized.append(f"{change.entity}:{change.key} created")
        elif change.after is None:
            atom = (change.entity, change.key, "<deleted>")
            if atom in required_atoms or any(
                a.delete and a.entity == change.entity and change.key in ctx.target_keys(a.target)
                for a in ctx.task.allow
            ):
                continue
            unauthorized.append(f"{change.entity}:{change.key} deleted")
        else:
            for field in change.fields():
                if (change.entity, change.key, field) in required_atoms:
                    continue
                if any(
                    a.entity == change.entity
                    and (field in a.fields or "*" in a.fields)
                    and (a.anywhere or change.key in ctx.target_keys(a.target))
                    for a in ctx.task.allow
                ):
                    continue
                unauthorized.append(f"{change.entity}:{change.key}.{field} changed")
    return _findings(
        "state.allowed",
        "state",
        unauthorized,
        f"unauthorized {len(unauthorized)}: ",
        "every change is required or allowed",
    )


def _create_allowed(
    ctx: _Context, change: Change, budget: dict[tuple[int, Key | None], int]
) -> bool:
    for i, allowance in enumerate(ctx.task.allow):
        if not allowance.create or allowance.entity != change.entity or change.after is None:
            continue
        bucket: Key | None = None
        if allowance.link:
            bucket = change.after.get(allowance.link)
            if bucket not in ctx.target_keys(allowance.target):
                continue
        used = budget.get((i, bucket), 0)
        if allowance.max_created and used >= allowance.max_created:
            continue
        budget[(i, bucket)] = used + 1
        return True
    return False


def _all_targets(ctx: _Context) -> dict[tuple[str, Key], str]:
    return {(ctx.task.target(n).entity, k): n for n, keys in ctx.targets.items() for k in keys}


_PREFILTER_MAX = 8
"""Up to this many pending targets, a call's JSON is searched for each one's key pair before
its result is walked; beyond it the search costs more than the walk it would save."""


def _first_returned(ctx: _Context) -> dict[tuple[str, Key], int]:
    """For each target row, the first call whose result contained it whole (computed once).

    Only target rows not yet found are looked for, and the scan stops once every target has
    been found. A dict is tested as a row only when its key field holds a pending key. With
    few targets pending, a call whose canonical JSON holds none of their ``"<key field>":<key>``
    pairs is skipped unwalked (the search is C; the walk is Python and dearer).
    """
    if ctx._first_read is not None:
        return ctx._first_read
    entities: dict[str, Entity] = {}
    pending: dict[tuple[str, Key], bytes] = {}
    wanted: dict[str, tuple[Entity, set[Key]]] = {}
    for entity_name, key in _all_targets(ctx):
        entity = entities.setdefault(entity_name, ctx.world.contract.entity(entity_name))
        pending[(entity_name, key)] = to_json(entity.key) + b":" + to_json(key)
        wanted.setdefault(entity_name, (entity, set()))[1].add(key)
    seen: dict[tuple[str, Key], int] = {}
    for call in ctx.record.calls:
        if not pending:
            break
        if not call.ok:
            continue
        looked_for = [wanted[name] for name in sorted(wanted) if wanted[name][1]]
        if len(pending) <= _PREFILTER_MAX:
            blob = to_json(call.result)
            present = [atom for atom, spelling in pending.items() if spelling in blob]
            if not present:
                continue
            few: dict[str, tuple[Entity, set[Key]]] = {}
            for entity_name, key in present:
                few.setdefault(entity_name, (entities[entity_name], set()))[1].add(key)
            looked_for = [few[name] for name in sorted(few)]
        found_before = len(seen)
        _rows_returned(call, looked_for, seen)
        if len(seen) != found_before:
            for atom in [a for a in pending if a in seen]:
                del pending[atom]
                wanted[atom[0]][1].discard(atom[1])
    ctx._first_read = seen
    return seen


def _rows_returned(
    call: CallRecord, looked_for: list[tuple[Entity, set[Key]]], seen: dict[tuple[str, Key], int]
) -> None:
    """Note (first call only) every looked-for row inside ``call.result``, at any depth."""
    stack = [call.result]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for entity, keys in looked_for:
                key = item.get(entity.key)
                if isinstance(key, str | int) and key in keys and _is_row(item, entity):
                    seen.setdefault((entity.name, key), call.seq)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _read_before_write(ctx: _Context) -> CriterionVerdict:
    """Every target row the agent addressed was returned by a tool before a call wrote it.

    Rows a tool writes as a declared consequence (`harness_world.engine.Derived`, e.g. a
    transfer's destination stock row) are not addressed by the agent and are skipped here; the
    state criteria still see their changes.
    """
    targets = _all_targets(ctx)
    first_read = _first_returned(ctx)
    blind: list[str] = []
    flagged: set[tuple[str, Key]] = set()
    for call in ctx.record.calls:
        spec = ctx.world.contract.tool(call.tool)
        for image in call.writes:
            atom = (image.entity, image.key)
            if spec is not None and spec.derived(image.entity, image.key, call.args):
                continue
            if atom in targets and atom not in flagged:
                read_at = first_read.get(atom)
                if read_at is None or read_at >= call.seq:
                    blind.append(f"{image.entity}:{image.key} (call {call.seq})")
                    flagged.add(atom)
    return _findings(
        "trace.read_before_write",
        "trace",
        blind,
        "written before any tool returned it: ",
        "every written target was read first",
    )


def _pages_followed(ctx: _Context) -> CriterionVerdict:
    unread = _unread_targets(ctx)
    unfollowed: list[str] = []
    calls = ctx.record.calls
    for i, call in enumerate(calls):
        result = call.result
        if not (call.ok and isinstance(result, dict) and result.get("next_offset") is not None):
            continue
        wanted = result["next_offset"]
        base = {k: v for k, v in (call.args or {}).items() if k not in ("offset", "limit")}
        followed = any(
            later.tool == call.tool
            and isinstance(later.args, dict)
            and later.args.get("offset") == wanted
            and {k: v for k, v in later.args.items() if k not in ("offset", "limit")} == base
            for later in calls[i + 1 :]
        )
        if not followed:
            unfollowed.append(f"call {call.seq} ({call.tool}, next_offset {wanted})")
    failed = bool(unfollowed and unread)
    detail = "no page left behind while targets were unread"
    if failed:
        detail = f"unfollowed: {_show(unfollowed)}; targets never read: {_show(unread)}"
    return CriterionVerdict(
        id="trace.pages_followed",
        kind="trace",
        status="failed" if failed else "passed",
        detail=detail,
    )


def _targets_read(ctx: _Context) -> CriterionVerdict:
    """Every target row was returned whole by at least one successful call."""
    return _findings(
        "trace.targets_read",
        "trace",
        _unread_targets(ctx),
        "never returned by a tool: ",
        "every target row was read",
    )


def _no_refused(ctx: _Context) -> CriterionVerdict:
    refused = [
        f"call {c.seq} ({c.tool})"
        for c in ctx.record.calls
        if c.error is not None and c.error.kind == "refused"
    ]
    return _findings("trace.no_refused_calls", "trace", refused, "refused: ", "no call was refused")


def _no_repeated(ctx: _Context) -> CriterionVerdict:
    """An identical successful write (same tool, same arguments) issued twice: a blind retry."""
    tools = {t.name: t for t in ctx.world.contract.tools}
    seen: dict[bytes, int] = {}
    repeated: list[str] = []
    for call in ctx.record.calls:
        spec = tools.get(call.tool)
        if not (call.ok and spec is not None and spec.kind == "write"):
            continue
        fingerprint = to_json([call.tool, call.args])
        if fingerprint in seen:
            repeated.append(f"call {call.seq} repeats call {seen[fingerprint]} ({call.tool})")
        else:
            seen[fingerprint] = call.seq
    return _findings("trace.no_repeated_writes", "trace", repeated, "", "no write was issued twice")


def _no_reverted(ctx: _Context) -> CriterionVerdict:
    """A field changed by a write and back at its start value at the end (an undone write).

    A row written once cannot have been restored: its one image goes from the start row to
    the final row (the images of a session chain, a rolled-back call leaves none), so only
    rows written two or more times are diffed image by image.
    """
    final = {(f.entity, f.key): f.row for f in ctx.record.final}
    images: dict[tuple[str, Key], list[WriteImage]] = {}
    for call in ctx.record.calls:
        for image in call.writes:
            images.setdefault((image.entity, image.key), []).append(image)
    written: dict[tuple[str, Key], set[str]] = {}
    created: set[tuple[str, Key]] = set()
    for atom, chain in images.items():
        if len(chain) < 2:
            continue
        for image in chain:
            if image.before is None and image.after is not None:
                created.add(atom)
            change = Change(image.entity, image.key, image.before, image.after)
            written.setdefault(atom, set()).update(change.fields())
    reverted: list[str] = []
    for atom, fields in written.items():
        start = ctx.world.get(*atom)
        end = final.get(atom)
        if start is None and end is None and atom in created:
            reverted.append(f"{atom[0]}:{atom[1]} created then deleted")
            continue
        if start is None or end is None:
            continue
        for field in sorted(fields):
            if typed_equal(start.get(field, _MISSING), end.get(field, _MISSING)):
                reverted.append(f"{atom[0]}:{atom[1]}.{field}")
    return _findings(
        "trace.no_reverted_writes",
        "trace",
        reverted,
        "changed, then restored to the start value: ",
        "no write was undone",
    )


def _answer(ctx: _Context) -> CriterionVerdict:
    """The expected answer, derived from the start state, is the only one the message states."""
    answer = ctx.task.answer
    assert answer is not None
    keys = ctx.target_keys(answer.target)
    entity = ctx.task.target(answer.target).entity
    ids = IdAnswer(
        targets=frozenset(str(k) for k in keys),
        is_row=lambda token: ctx.world.raw(entity, token) is not None,
    )
    expected = _expected_answer(ctx, answer, keys)
    judgement = judge(
        answer.kind,
        ctx.record.final_message,
        expected,
        instruction=briefing(ctx.task),
        structured_only=answer.read == "structured",
        ids=ids,
    )
    unseen = _ungrounded(ctx, answer, keys, expected) if judgement.ok else None
    return CriterionVerdict(
        id="trace.answer",
        kind="trace",
        status="passed" if judgement.ok and unseen is None else "failed",
        detail=judgement.detail if unseen is None else f"{judgement.detail}, but {unseen}",
    )


def _ungrounded(ctx: _Context, answer: Answer, keys: tuple[Key, ...], expected: Any) -> str | None:
    """Why a right answer is a guess, or None when the attempt's tool results support it.

    Ids are the same in every fresh session and a task's answer is the same in every attempt
    of it, so a right answer alone may be remembered or guessed. An id or date the answer
    states must be a value some tool result of this attempt returned. A derived answer (a
    count, an amount, yes/no) must rest on what was returned: its value itself (a listing's
    ``total``), or every target row, and at least one successful call (a "none" read from
    nowhere is a guess too).
    """
    shown = observed(ctx.record)
    guess = "no tool result of this attempt showed it: an answer must come from what was read"
    if answer.kind == "ids":
        unseen = [str(k) for k in keys if to_json(k) not in shown and to_json(str(k)) not in shown]
        return f"{_show(unseen)} ({guess})" if unseen else None
    if answer.kind == "date":
        prefix = to_json(str(expected))[:-1]
        return None if any(v.startswith(prefix) for v in shown) else f"the date {guess}"
    if not any(call.ok for call in ctx.record.calls):
        return f"no tool call succeeded ({guess})"
    entity = ctx.world.contract.entity(ctx.task.target(answer.target).entity)
    read = set().union(*(returned_rows(call, entity) for call in ctx.record.calls))
    unread = [k for k in keys if k not in read]
    if answer.kind == "yes_no":
        return None if not keys or len(unread) < len(keys) else f"no target row ({guess})"
    values = {to_json(expected)}
    if isinstance(expected, float) and expected.is_integer():
        values.add(to_json(int(expected)))
    if not unread or values & shown:
        return None
    return f"neither the value nor every target row ({guess})"


def _expected_answer(ctx: _Context, answer: Answer, keys: tuple[Key, ...]) -> Any:
    """The expected value: a count, an amount, a date or yes/no (ids compare the keys)."""
    kind = answer.kind
    if kind == "count":
        return len(keys)
    if kind == "yes_no":
        return bool(keys)
    if kind == "ids":
        return sorted(str(k) for k in keys)
    entity = ctx.task.target(answer.target).entity
    values = [(ctx.world.get(entity, k) or {}).get(answer.field) for k in keys]
    present = [v for v in values if v is not None]
    if kind == "amount":
        return round(sum(float(v) for v in present), 2)
    dates = sorted(str(v)[:10] for v in present)
    if not dates:
        return ""
    return dates[-1] if answer.pick == "latest" else dates[0]


def _communicate(ctx: _Context) -> CriterionVerdict:
    """Every string the task requires told to the user, found in one of the agent's messages.

    The agent's messages are what it said to the user (each recorded user turn) and its final
    message. A string is found when its lower case is a substring of a message's lower case
    with the message's commas removed, the rule the public conversational benchmarks grade
    the information an agent must communicate by.
    """
    said = [turn.agent for turn in ctx.record.user_turns] + [ctx.record.final_message]
    plain = [text.lower().replace(",", "") for text in said]
    missing = [info for info in ctx.task.communicate if not any(info.lower() in m for m in plain)]
    detail = (
        f"told the user all {len(ctx.task.communicate)} required piece(s) of information"
        if not missing
        else "never told the user: " + "; ".join(repr(m) for m in missing)
    )
    return CriterionVerdict(
        id="communicate.info",
        kind="trace",
        status="failed" if missing else "passed",
        detail=detail,
    )


def _budgets(ctx: _Context) -> list[CriterionVerdict]:
    budgets = ctx.task.budgets
    usage = ctx.record.usage
    measured: dict[str, tuple[float | int | None, float | int]] = {
        "turns": (budgets.turns, usage.turns),
        "tool_calls": (budgets.tool_calls, len(ctx.record.calls)),
        "context_tokens": (budgets.context_tokens, usage.input_tokens),
        "cost": (budgets.cost, usage.cost + usage.uncertain_cost),
    }
    out = []
    for name, (limit, used) in measured.items():
        if limit is None:
            continue
        ok = used <= limit
        out.append(
            CriterionVerdict(
                id=f"budget.{name}",
                kind="budget",
                status="passed" if ok else "failed",
                detail=f"used {used} of {limit}",
            )
        )
    return out


def _one(
    check: Callable[[_Context], CriterionVerdict],
) -> Callable[[_Context], list[CriterionVerdict]]:
    return lambda ctx: [check(ctx)]


def _state_required(ctx: _Context) -> list[CriterionVerdict]:
    return [ctx.required()[0]]


def _state_allowed(ctx: _Context) -> list[CriterionVerdict]:
    return [_allowed(ctx, ctx.required()[1])]


def _trusted(ctx: _Context) -> list[CriterionVerdict]:
    return trusted_criteria(ctx.record, ctx.task, ctx.world)


def _prose(ctx: _Context) -> list[CriterionVerdict]:
    return [
        CriterionVerdict(id=f"prose.{i + 1}", kind="prose", status="not_reviewed", detail=text)
        for i, text in enumerate(ctx.task.prose)
    ]


def _harness(ctx: _Context) -> list[CriterionVerdict]:
    return harness_criteria(ctx.record, ctx.world)


def _taxon(dimension: Dimension, subdimension: str = "") -> Taxon:
    return Taxon(dimension=dimension, subdimension=subdimension)


def _trace(
    name: str, check: Callable[[_Context], CriterionVerdict], text: str, taxon: Taxon
) -> Check[_Context]:
    return Check(
        name=f"trace.{name}",
        kind="trace",
        layer="agent",
        definition=text,
        run=_one(check),
        taxon=taxon,
        task_name=name,
    )


CRITERIA: CriterionRegistry[_Context] = CriterionRegistry(
    [
        Check(
            name="state.required",
            kind="state",
            layer="agent",
            definition="some required effect is missing (R ⊄ Δ); names the keys",
            run=_state_required,
            taxon=_taxon("Lifecycle", "completion"),
            when=lambda task: bool(task.require),
        ),
        Check(
            name="state.allowed",
            kind="state",
            layer="agent",
            definition="something changed that is neither required nor allowed (Δ ⊄ A); names "
            "the keys",
            run=_state_allowed,
            taxon=_taxon("Governance", "scope"),
        ),
        _trace(
            "read_before_write",
            _read_before_write,
            "a target row the agent addressed was written before any tool result contained "
            "that whole row (rows a tool writes as a declared consequence are exempt)",
            _taxon("Verification", "read_before_write"),
        ),
        _trace(
            "pages_followed",
            _pages_followed,
            "a listing's `next_offset` was never fetched while some target was never returned",
            _taxon("Tools", "paging"),
        ),
        _trace(
            "no_refused_calls",
            _no_refused,
            "a call ended with a `refused` error",
            _taxon("Tools", "tool_refusal"),
        ),
        _trace(
            "no_reverted_writes",
            _no_reverted,
            "a field was changed and later restored to its start value (or a row created then "
            "deleted)",
            _taxon("Execution", "backtracking"),
        ),
        _trace(
            "no_repeated_writes",
            _no_repeated,
            "the same successful write (same tool and arguments) was issued twice",
            _taxon("Execution", "idempotency"),
        ),
        _trace(
            "targets_read",
            _targets_read,
            "some target row was never returned whole by a successful call (read-only tasks)",
            _taxon("Context", "completeness"),
        ),
        Check(
            name="trace.answer",
            kind="trace",
            layer="agent",
            definition="the answer is missing, wrong, hedged, or not grounded in this "
            "attempt's tool results; the detail names the hedge or the values read",
            run=_one(_answer),
            taxon=_taxon("Observability", "grounded_answer"),
            when=lambda task: task.answer is not None,
        ),
        Check(
            name="communicate.info",
            kind="trace",
            layer="agent",
            definition="a string the task requires told to the user is in none of the agent's "
            "messages (lower case, commas removed)",
            run=_one(_communicate),
            taxon=_taxon("Observability", "user_report"),
            when=lambda task: bool(task.communicate),
        ),
        Check(
            name="forbidden.*",
            kind="trace",
            layer="agent",
            definition="a forbidden effect happened (`forbidden.<id>`), a target has no "
            "ledger-proven receipt (`receipts.<id>`; a reported one must be named in the final "
            "message and shown by a tool of the attempt), or the record ran under another "
            "fault schedule than the task's (`faults.schedule`)",
            run=_trusted,
            taxon=_taxon("Governance", "forbidden_effect"),
            also=("receipts.*", "faults.schedule"),
            member_taxa={
                "receipts.*": _taxon("Observability", "receipt"),
                "faults.schedule": _taxon("Execution", "fault_schedule"),
            },
        ),
        Check(
            name="budget.*",
            kind="budget",
            layer="harness",
            definition="usage exceeded the budget (tool calls are recounted from the call log)",
            run=_budgets,
            taxon=_taxon("Lifecycle", "budget"),
            member_taxa={"budget.context_tokens": _taxon("Context", "bounding")},
        ),
        Check(
            name="prose.*",
            kind="prose",
            layer="agent",
            definition="never: always `not_reviewed` until a person reviews it",
            run=_prose,
            taxon=_taxon("Verification", "human_review"),
            when=lambda task: bool(task.prose),
        ),
        Check(
            name="harness.*",
            kind="trace",
            layer="harness",
            definition="a harness obligation of the call log broke (keys, retries, "
            "reconciling, acting on unverified output, re-sending a refused call); beside the "
            "grade, never in it",
            run=_harness,
            taxon=_taxon("Execution", "idempotency"),
            section="harness",
            member_taxa=HARNESS_TAXA,
        ),
    ]
)
"""Every criterion the checker runs, in grading order (see `harness_world.grading.criteria`)."""


def grade(record: Record, task: Task, world: World) -> Grade:
    """Grade a record (whose evidence is verified) against a task on the start world.

    Pure: the same inputs always give the same grade; nothing is written, no tool is called.
    Every verdict comes from one criterion of `CRITERIA` that applies to the task; a grade
    passes when every automated (non-prose) verdict of the agent grade passed.
    """
    targets = {t.name: select_targets(world, task, t.name) for t in task.targets}
    ctx = _Context(record, task, world, net_changes(record, world), targets)
    sections: dict[str, list[CriterionVerdict]] = {"grade": [], "harness": []}
    for criterion in CRITERIA.for_task(task):
        sections[criterion.section] += criterion.check(ctx)
    verdicts = sections["grade"]
    automated = [v for v in verdicts if v.kind != "prose"]
    passed = bool(automated) and all(v.status == "passed" for v in automated)
    return Grade(
        task_id=task.id,
        task_hash=task.hash,
        passed=passed,
        verdicts=verdicts,
        harness=sections["harness"],
    )


def required_items(record: Record, task: Task, world: World) -> list[RequiredItem]:
    """The required set R member by member, each with whether Δ holds it.

    Each item is decided by the phase ``state.required`` runs for its kind, on that one target
    row, so ``state.required`` passes exactly when every item is met (the partial-credit
    reward of `harness_world.rewards` counts them). Pure, like `grade`.
    """
    targets = {t.name: select_targets(world, task, t.name) for t in task.targets}
    changes = net_changes(record, world)
    by_key = {(c.entity, c.key): c for c in changes}
    phases = {
        "set": _set_required,
        "row": _row_required,
        "delete": _delete_required,
        "create": _create_required,
    }
    items: list[RequiredItem] = []
    for index, req in enumerate(task.require):
        if req.kind == "create" and not req.link:
            rows: list[tuple[str, tuple[Key, ...] | None]] = [(req.entity, None)]
        else:
            target = task.target(req.target)
            rows = [(f"{target.entity}:{key}", (key,)) for key in targets[target.name]]
        for where, only in rows:
            narrowed = targets if only is None else {**targets, task.target(req.target).name: only}
            ctx = _Context(record, task, world, changes, narrowed)
            missing = phases[req.kind](ctx, req, by_key, set())
            items.append(
                RequiredItem(
                    requirement=index,
                    kind=req.kind,
                    where=where,
                    met=not missing,
                    detail="; ".join(missing),
                )
            )
    return items
