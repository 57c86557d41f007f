"""Advisories about the task's structure: a look-alike row, a partial filter, a step skipped.

Also a step added. Each compares the writes of the trace with the task's targets, requirements
and allowances (the trace view's target sets, and the one meaning of a changed field).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from harness_world.engine.calls import WriteImage
from harness_world.engine.schemas import tool_schemas
from harness_world.engine.values import Key
from harness_world.grading.criteria import AdviceRule, Advisory
from harness_world.grading.rules.advice import found
from harness_world.grading.task import Task
from harness_world.grading.trace import LoggedCall, TraceView

__all__ = ["ACTED_ON_WRONG_ROW", "ADDED_STEP", "PARTIAL_FILTER", "SKIPPED_STEP"]

_NEAR_NAME = 0.85
_NAME_FIELDS = ("name", "subject", "title", "sku", "email")


def _writes(view: TraceView) -> Iterator[tuple[LoggedCall, WriteImage]]:
    for call in view.log.calls:
        for image in call.writes:
            yield call, image


def _normal(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _same_name(row: dict[str, Any], target: dict[str, Any]) -> str:
    """The field by which ``row`` looks like ``target`` (empty when it does not)."""
    named = [f for f in _NAME_FIELDS if isinstance(row.get(f), str) and f in target]
    for field in named:
        a, b = _normal(row[field]), _normal(str(target[field]))
        if a and b and difflib.SequenceMatcher(None, a, b).ratio() >= _NEAR_NAME:
            return f"{field} {row[field]!r} ~ {target[field]!r}"
    if named:
        return ""
    # Rows without a name (stock, orders) are named by what they refer to: the same item.
    for field, value in row.items():
        if field.endswith("_id") and isinstance(value, str) and target.get(field) == value:
            return f"same {field} {value!r}"
    return ""


def _touched_rows(
    view: TraceView, image: WriteImage, targets: Mapping[str, frozenset[Key]]
) -> Iterator[tuple[str, Key]]:
    """The rows a write touched directly, and the rows its new values point to by key."""
    if image.entity in targets:
        yield image.entity, image.key
    after = image.after
    if after is None:
        return
    world = view.world
    key_field = world.contract.entity(image.entity).key
    # The fields it set to a new string, in the row's own field order: every one of a new row,
    # else those of the write's one diff (a string's typed change is an unequal value), which
    # is sorted by name: put in the row's order only where two of them point to rows (most
    # point to none).
    fields: Iterable[str] = after if image.before is None else view.log.changed(image)
    pointed: list[tuple[str, str]] = []
    for field in fields:
        value = after.get(field)
        if field == key_field or not isinstance(value, str):
            continue
        for entity in targets:
            if world.raw(entity, value) is not None:  # exists: no copy of it is needed
                pointed.append((field, entity))
    if len(pointed) > 1 and image.before is not None:
        order = {f: n for n, f in enumerate(after)}
        pointed.sort(key=lambda hit: order[hit[0]])  # stable: a field's entities keep theirs
    for field, entity in pointed:
        yield entity, after[field]


_LOOKS: dict[tuple[str, str, str, type, Key], str] = {}


def _look_alike(view: TraceView, entity: str, key: Key, targets: frozenset[Key]) -> str:
    """Why a non-target row looks like one of the targets (empty when it does not).

    A function of the start world and the task (its targets) alone: kept per (world, task)
    hash, as `_named_filters` is, since comparing names reads every target row of the entity.
    """
    if key in targets:
        return ""
    asked = (view.world.hash, view.task.hash, entity, type(key), key)
    known = _LOOKS.get(asked)
    if known is None:
        if len(_LOOKS) > 65_536:
            _LOOKS.clear()
        known = _LOOKS[asked] = _looks_like(view, entity, key, targets)
    return known


def _looks_like(view: TraceView, entity: str, key: Key, targets: frozenset[Key]) -> str:
    row = view.world.get(entity, key)
    if row is None:
        return ""
    for target_key in sorted(targets):
        target = view.world.get(entity, target_key)
        why = _same_name(row, target) if target is not None else ""
        if why:
            return f"not a target but matches {target_key} ({why})"
    return ""


def _acted_on_wrong_row(view: TraceView) -> Advisory | None:
    targets = view.targets_by_entity
    items: list[tuple[int, str]] = []
    reported: set[tuple[str, Key]] = set()
    for call in view.log.calls:
        for image in call.writes:
            for entity, key in _touched_rows(view, image, targets):
                if (entity, key) in reported:
                    continue
                why = _look_alike(view, entity, key, targets[entity])
                if why:
                    reported.add((entity, key))
                    text = f"call {call.seq} {call.tool}: {entity}:{key} is {why}"
                    items.append((call.seq, text))
    return found("acted_on_wrong_row", items)


def _mentions(instruction: str, value: str) -> bool:
    words = value.replace("_", "[ _-]?")
    return re.search(rf"\b{words}\b", instruction, re.IGNORECASE) is not None


_Filter = tuple[str, str, frozenset[str]]
_FILTERS: dict[tuple[str, str], tuple[_Filter, ...]] = {}


def _named_filters(view: TraceView) -> tuple[_Filter, ...]:
    """(read tool, parameter, the enum values the instruction names) where it names two or more.

    A function of the contract and the instruction alone: kept per (contract, task) hash, so a
    run reads the schemas and searches the instruction once per task, not once per record.
    """
    key = (view.world.contract.hash, view.task.hash)
    known = _FILTERS.get(key)
    if known is not None:
        return known
    out: list[_Filter] = []
    for schema in tool_schemas(view.world):
        if schema.get("kind") != "read":
            continue
        for param, spec in schema["parameters"].get("properties", {}).items():
            values = [v for v in spec.get("enum", []) if isinstance(v, str)]
            named = frozenset(v for v in values if _mentions(view.task.instruction, v))
            if len(named) >= 2:
                out.append((schema["name"], param, named))
    if len(_FILTERS) > 4096:
        _FILTERS.clear()
    known = _FILTERS[key] = tuple(out)
    return known


def _partial_filter(view: TraceView) -> Advisory | None:
    items: list[tuple[int, str]] = []
    for tool, param, named in _named_filters(view):
        used = {
            c.args.get(param): c.seq
            for c in view.log.calls
            if c.tool == tool and isinstance(c.args, dict)
        }
        listed = named & set(used)
        if listed and listed != named:
            seq = min(used[v] for v in listed)
            text = f"listed {sorted(listed)}, never {sorted(named - listed)}"
            items.append((seq, f"{tool} {param}: {text}"))
    return found("partial_filter", items)


def _attempted(view: TraceView, index: int) -> bool:
    req = view.task.require[index]
    entity = req.entity if req.kind == "create" else view.task.target(req.target).entity
    for _, image in _writes(view):
        if image.entity != entity:
            continue
        if req.kind == "create" and image.before is None and image.after is not None:
            return True
        if req.kind == "delete" and image.before is not None and image.after is None:
            return True
        changed = req.kind == "set" and req.field in view.log.changed(image)
        if req.kind == "row" or changed:
            return True
    return False


def _skipped_step(view: TraceView) -> Advisory | None:
    skipped = []
    for index, req in enumerate(view.task.require):
        if not _attempted(view, index):
            what = {
                "set": f"set {req.field}",
                "create": f"create {req.entity}",
                "delete": "delete",
                "row": "write",
            }[req.kind]
            skipped.append(f"require[{index}] ({what}) never attempted")
    if not skipped:
        return None
    return Advisory(name="skipped_step", detail="; ".join(skipped))


_Mentioned = tuple[frozenset[tuple[str, str]], frozenset[str], frozenset[str]]
_MENTIONED: dict[str, _Mentioned] = {}


def _mentioned(task: Task) -> _Mentioned:
    """(entity, field) pairs that may change ('*' for any), entities created, entities deleted.

    A function of the task alone: kept per task hash, as `_named_filters` is.
    """
    known = _MENTIONED.get(task.hash)
    if known is None:
        if len(_MENTIONED) > 4096:
            _MENTIONED.clear()
        known = _MENTIONED[task.hash] = _mentioned_by(task)
    return known


def _mentioned_by(task: Task) -> _Mentioned:
    fields: set[tuple[str, str]] = set()
    created: set[str] = set()
    deleted: set[str] = set()
    for req in task.require:
        entity = req.entity if req.kind == "create" else task.target(req.target).entity
        if req.kind == "set":
            fields.add((entity, req.field))
        elif req.kind == "row":
            fields.add((entity, "*"))
        elif req.kind == "create":
            created.add(entity)
        else:
            deleted.add(entity)
    for allowed in task.allow:
        fields.update((allowed.entity, f) for f in allowed.fields)
        if allowed.create:
            created.add(allowed.entity)
        if allowed.delete:
            deleted.add(allowed.entity)
    return frozenset(fields), frozenset(created), frozenset(deleted)


def _extra(
    view: TraceView,
    image: WriteImage,
    mentioned: _Mentioned,
) -> list[str]:
    """What a write changed that no requirement or allowance mentions."""
    fields, created, deleted = mentioned
    if image.before is None:
        return [] if image.entity in created else [f"created {image.entity}"]
    if image.after is None:
        return [] if image.entity in deleted else [f"deleted {image.entity}"]
    if (image.entity, "*") in fields:
        return []
    return [
        f"{image.entity}.{f}" for f in view.log.changed(image) if (image.entity, f) not in fields
    ]


def _added_step(view: TraceView) -> Advisory | None:
    mentioned = _mentioned(view.task)
    items: list[tuple[int, str]] = []
    for call, image in _writes(view):
        extra = _extra(view, image, mentioned)
        if extra and items and items[-1][0] == call.seq:  # one line per call
            items[-1] = (call.seq, f"{items[-1][1]}, {', '.join(extra)}")
        elif extra:
            items.append((call.seq, f"call {call.seq} {call.tool}: {', '.join(extra)}"))
    return found("added_step", items)


ACTED_ON_WRONG_ROW = AdviceRule(
    "acted_on_wrong_row",
    "a write touched, or pointed to, a row the targets exclude that "
    "matches a target by name (same or near-same name, or the same item "
    "elsewhere)",
    _acted_on_wrong_row,
)
PARTIAL_FILTER = AdviceRule(
    "partial_filter",
    "the instruction names several values of a listing filter and the "
    "trace listed with some of them but not all",
    _partial_filter,
)
SKIPPED_STEP = AdviceRule(
    "skipped_step",
    "a required effect (a field set, a row created or deleted) that no call attempted on any row",
    _skipped_step,
)
ADDED_STEP = AdviceRule(
    "added_step",
    "a write changed an entity or field that no requirement or allowance mentions",
    _added_step,
)
