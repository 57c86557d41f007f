"""Advisory observations: what a verified trace shows, stored beside the grade, never changing it.

A grade names the criterion that failed; an advisory names a pattern in the trace that often
explains why (a page never followed, a write to a row never read, a question left at the end).
Each advisory is a pure function of (verified record, task, start world), like the checker; it
reads the task's targets, requirements and allowances but never decides pass or fail, and a
passing attempt can carry one. Call `advise` on verified evidence only: on an unverified record
the trace is not evidence of anything.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import msgspec

from harness_world.engine.calls import CallRecord, WriteImage
from harness_world.engine.canonical import to_json
from harness_world.engine.schemas import tool_schemas
from harness_world.engine.values import Key
from harness_world.engine.world import World
from harness_world.evidence.record import Record
from harness_world.grading.checker import returned_row_keys
from harness_world.grading.task import Task, select_targets
from harness_world.grading.trusted import stated

__all__ = ["ADVISORIES", "Advisory", "advise"]


class Advisory(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One advisory observation on a verified record.

    Attributes:
        name: One of `ADVISORIES`.
        detail: What was seen, naming calls or rows.
        calls: Sequence numbers of the calls concerned (empty when about the whole attempt).
    """

    name: str
    detail: str
    calls: list[int] = []


_SHOWN = 4
_NEAR_NAME = 0.85
_NAME_FIELDS = ("name", "subject", "title", "sku", "email")
_HEDGES = (
    "i think",
    "i believe",
    "probably",
    "possibly",
    "perhaps",
    "might",
    "may have",
    "not sure",
    "unsure",
    "seems",
    "appears to",
    "could not",
    "couldn't",
    "unable to",
    "i assume",
    "likely",
)
_HEDGE_RE = re.compile(r"\b(" + "|".join(re.escape(h) for h in _HEDGES) + r")\b", re.IGNORECASE)


@attrs.define(slots=True)
class _Trace:
    record: Record
    task: Task
    world: World

    @property
    def calls(self) -> list[CallRecord]:
        return self.record.calls

    def writes(self) -> Iterator[tuple[CallRecord, WriteImage]]:
        for call in self.calls:
            for image in call.writes:
                yield call, image

    def targets(self) -> dict[str, set[Key]]:
        """Target keys per entity (all target sets of that entity together)."""
        out: dict[str, set[Key]] = {}
        for target in self.task.targets:
            out.setdefault(target.entity, set()).update(
                select_targets(self.world, self.task, target.name)
            )
        return out


@attrs.frozen(slots=True)
class AdviceRule:
    """One advisory's declaration: its name, its definition and the rule that finds it.

    Attributes:
        name: The advisory's name (`Advisory.name`).
        definition: What it observes, in one line (`ADVISORIES`, docs, ``diagnose``).
        rule: Finds it in a trace, or returns None.
    """

    name: str
    definition: str
    rule: Callable[[_Trace], Advisory | None]


def _seqs(items: list[tuple[int, str]]) -> tuple[list[int], str]:
    shown = "; ".join(text for _, text in items[:_SHOWN])
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return [seq for seq, _ in items], shown + more


def _found(name: str, items: list[tuple[int, str]]) -> Advisory | None:
    if not items:
        return None
    seqs, detail = _seqs(items)
    return Advisory(name=name, detail=detail, calls=seqs)


def _filters(args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        return {}
    return {k: v for k, v in args.items() if k not in ("offset", "limit")}


def _every_target_shown(t: _Trace) -> bool:
    """Whether some result showed every target row whole (a page left behind hid none)."""
    wanted = {(entity, key) for entity, keys in t.targets().items() for key in keys}
    if not wanted:
        return False
    entities = list(t.world.contract.entities)
    shown: set[tuple[str, Key]] = set()
    for call in t.calls:
        shown.update(returned_row_keys(call, entities))
    return wanted <= shown


def _unfollowed_page(t: _Trace) -> Advisory | None:
    if _every_target_shown(t):
        return None
    message = stated(t.record.final_message)
    found: list[tuple[int, str]] = []
    for i, call in enumerate(t.calls):
        result = call.result
        if not (call.ok and isinstance(result, dict) and result.get("next_offset") is not None):
            continue
        if result.get("total") is not None and to_json(result["total"]) in message:
            continue  # the answer rests on the listing's own total, not on its rows
        wanted, base = result["next_offset"], _filters(call.args)
        if not any(
            later.tool == call.tool
            and isinstance(later.args, dict)
            and later.args.get("offset") == wanted
            and _filters(later.args) == base
            for later in t.calls[i + 1 :]
        ):
            total = result.get("total")
            of = f" of {total}" if total is not None else ""
            found.append((call.seq, f"call {call.seq} {call.tool}: next_offset {wanted}{of}"))
    return _found("unfollowed_page", found)


def _no_writes(t: _Trace) -> Advisory | None:
    if not t.task.require or any(call.writes for call in t.calls):
        return None
    return Advisory(
        name="no_writes",
        detail=f"{len(t.task.require)} required effect(s), {len(t.calls)} call(s), no write",
    )


def _write_without_read(t: _Trace) -> Advisory | None:
    seen: set[tuple[str, Key]] = set()
    found: list[tuple[int, str]] = []
    entities = list(t.world.contract.entities)
    for call in t.calls:
        for image in call.writes:
            atom = (image.entity, image.key)
            if image.before is not None and atom not in seen:
                found.append(
                    (
                        call.seq,
                        f"call {call.seq} {call.tool} wrote {image.entity}:{image.key} unread",
                    )
                )
                seen.add(atom)  # report each row once
        seen.update(returned_row_keys(call, entities))
    return _found("write_without_read", found)


def _ids(args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        return {}
    return {k: v for k, v in args.items() if k.endswith("_id") or k == "id"}


def _refused_calls(t: _Trace) -> Advisory | None:
    found: list[tuple[int, str]] = []
    reads = {tool.name for tool in t.world.contract.tools if tool.kind == "read"}
    for i, call in enumerate(t.calls):
        if call.ok or call.error is None:
            continue
        # A malformed call's ids may be what was wrong: any later success of the tool recovers
        # it; otherwise the same tool must later succeed on the same ids. A lost response may
        # have committed: a later successful read, which shows whether it did, recovers it too
        # (sending the write again would be the mistake).
        ids = None if call.error.kind == "invalid_arguments" else _ids(call.args)
        looked = call.error.kind == "timeout" and call.tool not in reads
        recovered = any(
            later.ok
            and (
                (later.tool == call.tool and (ids is None or _ids(later.args) == ids))
                or (looked and later.tool in reads and later.tool != "wait")
            )
            for later in t.calls[i + 1 :]
        )
        if not recovered:
            found.append((call.seq, f"call {call.seq} {call.tool}: {call.error.kind}"))
    return _found("refused_calls", found)


def _last_sentence(message: str) -> str:
    text = message.strip()
    parts = re.split(r"(?<=[.!?])\s+", text)
    return parts[-1] if parts else ""


def _ended_with_question(t: _Trace) -> Advisory | None:
    last = _last_sentence(t.record.final_message)
    if not last.endswith("?"):
        return None
    return Advisory(name="ended_with_question", detail=f"final message ends: {last[-120:]!r}")


def _repeated_call(t: _Trace) -> Advisory | None:
    found: list[tuple[int, str]] = []
    last_seen: dict[bytes, int] = {}
    last_write = 0
    for index, call in enumerate(t.calls):
        key = msgspec.json.encode([call.tool, call.args], order="sorted")
        earlier = last_seen.get(key)
        if earlier is not None and last_write <= earlier:
            found.append(
                (call.seq, f"call {call.seq} {call.tool} repeats call {t.calls[earlier].seq}")
            )
        last_seen[key] = index
        if call.writes:
            last_write = index + 1  # a later repeat after this write may learn something new
    return _found("repeated_call", found)


def _hedged_answer(t: _Trace) -> Advisory | None:
    hedges = sorted({m.group(0).lower() for m in _HEDGE_RE.finditer(t.record.final_message)})
    if not hedges:
        return None
    return Advisory(name="hedged_answer", detail="final message says " + ", ".join(hedges))


def _near(used: int, budget: int | None) -> bool:
    return budget is not None and used >= budget - max(1, budget // 10)


def _stopped_near_budget(t: _Trace) -> Advisory | None:
    outcome = t.record.outcome
    budgets = t.task.budgets
    if outcome.status in ("turn_limit", "budget_limit"):
        detail = f"ended {outcome.status}: {outcome.reason}"
    elif _near(len(t.calls), budgets.tool_calls):
        detail = f"{len(t.calls)} tool calls of a budget of {budgets.tool_calls}"
    elif _near(t.record.usage.turns, budgets.turns):
        detail = f"{t.record.usage.turns} turns of a budget of {budgets.turns}"
    else:
        return None
    return Advisory(name="stopped_near_budget", detail=detail)


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
    t: _Trace, image: WriteImage, targets: dict[str, set[Key]]
) -> Iterator[tuple[str, Key]]:
    """The rows a write touched directly, and the rows its new values point to by key."""
    if image.entity in targets:
        yield image.entity, image.key
    for field, value in (image.after or {}).items():
        if field == t.world.contract.entity(image.entity).key or not isinstance(value, str):
            continue
        if (image.before or {}).get(field) == value:
            continue
        for entity in targets:
            if t.world.get(entity, value) is not None:
                yield entity, value


def _acted_on_wrong_row(t: _Trace) -> Advisory | None:
    targets = t.targets()
    found: list[tuple[int, str]] = []
    reported: set[tuple[str, Key]] = set()
    for call, image in t.writes():
        for entity, key in _touched_rows(t, image, targets):
            row = t.world.get(entity, key)
            if key in targets[entity] or row is None or (entity, key) in reported:
                continue
            for target_key in sorted(targets[entity]):
                target = t.world.get(entity, target_key)
                why = _same_name(row, target) if target is not None else ""
                if why:
                    reported.add((entity, key))
                    found.append(
                        (
                            call.seq,
                            f"call {call.seq} {call.tool}: {entity}:{key} is "
                            f"not a target but matches {target_key} ({why})",
                        )
                    )
                    break
    return _found("acted_on_wrong_row", found)


def _mentions(instruction: str, value: str) -> bool:
    words = value.replace("_", "[ _-]?")
    return re.search(rf"\b{words}\b", instruction, re.IGNORECASE) is not None


def _partial_filter(t: _Trace) -> Advisory | None:
    found: list[tuple[int, str]] = []
    for schema in tool_schemas(t.world):
        if schema.get("kind") != "read":
            continue
        for param, spec in schema["parameters"].get("properties", {}).items():
            values = [v for v in spec.get("enum", []) if isinstance(v, str)]
            named = {v for v in values if _mentions(t.task.instruction, v)}
            if len(named) < 2:
                continue
            used = {
                c.args.get(param): c.seq
                for c in t.calls
                if c.tool == schema["name"] and isinstance(c.args, dict)
            }
            listed = named & set(used)
            if listed and listed != named:
                seq = min(used[v] for v in listed)
                found.append(
                    (
                        seq,
                        f"{schema['name']} {param}: listed {sorted(listed)}, "
                        f"never {sorted(named - listed)}",
                    )
                )
    return _found("partial_filter", found)


def _changed_fields(image: WriteImage) -> set[str]:
    before, after = image.before or {}, image.after or {}
    return {f for f in set(before) | set(after) if before.get(f, _GONE) != after.get(f, _GONE)}


_GONE = object()


def _attempted(t: _Trace, index: int) -> bool:
    req = t.task.require[index]
    entity = req.entity if req.kind == "create" else t.task.target(req.target).entity
    for _, image in t.writes():
        if image.entity != entity:
            continue
        if req.kind == "create" and image.before is None and image.after is not None:
            return True
        if req.kind == "delete" and image.before is not None and image.after is None:
            return True
        if req.kind == "row" or (req.kind == "set" and req.field in _changed_fields(image)):
            return True
    return False


def _skipped_step(t: _Trace) -> Advisory | None:
    skipped = []
    for index, req in enumerate(t.task.require):
        if not _attempted(t, index):
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


def _mentioned(task: Task) -> tuple[set[tuple[str, str]], set[str], set[str]]:
    """(entity, field) pairs that may change ('*' for any), entities created, entities deleted."""
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
    return fields, created, deleted


def _added_step(t: _Trace) -> Advisory | None:
    fields, created, deleted = _mentioned(t.task)
    found: list[tuple[int, str]] = []
    for call, image in t.writes():
        if image.before is None:
            extra = [] if image.entity in created else [f"created {image.entity}"]
        elif image.after is None:
            extra = [] if image.entity in deleted else [f"deleted {image.entity}"]
        elif (image.entity, "*") in fields:
            extra = []
        else:
            extra = [
                f"{image.entity}.{f}"
                for f in sorted(_changed_fields(image))
                if (image.entity, f) not in fields
            ]
        if extra and found and found[-1][0] == call.seq:  # one line per call
            found[-1] = (call.seq, f"{found[-1][1]}, {', '.join(extra)}")
        elif extra:
            found.append((call.seq, f"call {call.seq} {call.tool}: {', '.join(extra)}"))
    return _found("added_step", found)


def _answered_without_reading(t: _Trace) -> Advisory | None:
    if t.task.answer is None:
        return None
    reads = {tool.name for tool in t.world.contract.tools if tool.kind == "read"}
    if any(call.ok and call.tool in reads for call in t.calls):
        return None
    made = f"{len(t.calls)} call(s), none a successful read" if t.calls else "no call at all"
    return Advisory(name="answered_without_reading", detail=f"answered after {made}")


def _empty_final_message(t: _Trace) -> Advisory | None:
    if t.record.final_message.strip():
        return None
    return Advisory(
        name="empty_final_message",
        detail=f"the attempt ended {t.record.outcome.status} with an empty final message",
    )


_ADVICE: tuple[AdviceRule, ...] = (
    AdviceRule(
        "unfollowed_page",
        "a listing returned a next_offset that no later call of the same "
        "listing (same filters) asked for",
        _unfollowed_page,
    ),
    AdviceRule(
        "no_writes",
        "the task requires effects and no call wrote anything",
        _no_writes,
    ),
    AdviceRule(
        "write_without_read",
        "a call changed an existing row that no earlier successful call had returned whole",
        _write_without_read,
    ),
    AdviceRule(
        "refused_calls",
        "a call ended in a typed error and no later call of the same tool "
        "succeeded on the same ids (for invalid arguments: at all; for a write's lost response: "
        "nor did any later read)",
        _refused_calls,
    ),
    AdviceRule(
        "ended_with_question",
        "the final message ends with a question (the agent stopped to ask)",
        _ended_with_question,
    ),
    AdviceRule(
        "repeated_call",
        "a call repeated an earlier one exactly (tool and arguments) with no "
        "write in between, so it could learn nothing new",
        _repeated_call,
    ),
    AdviceRule(
        "hedged_answer",
        "the final message hedges (probably, I think, not sure, could not, ...)",
        _hedged_answer,
    ),
    AdviceRule(
        "stopped_near_budget",
        "the attempt ended by a budget, or within 10% (at least 1) of its tool-call or turn budget",
        _stopped_near_budget,
    ),
    AdviceRule(
        "acted_on_wrong_row",
        "a write touched, or pointed to, a row the targets exclude that "
        "matches a target by name (same or near-same name, or the same item "
        "elsewhere)",
        _acted_on_wrong_row,
    ),
    AdviceRule(
        "partial_filter",
        "the instruction names several values of a listing filter and the "
        "trace listed with some of them but not all",
        _partial_filter,
    ),
    AdviceRule(
        "skipped_step",
        "a required effect (a field set, a row created or deleted) that no "
        "call attempted on any row",
        _skipped_step,
    ),
    AdviceRule(
        "added_step",
        "a write changed an entity or field that no requirement or allowance mentions",
        _added_step,
    ),
    AdviceRule(
        "answered_without_reading",
        "the task asks for an answer and no read call of the attempt "
        "succeeded, so the answer was not read from the world",
        _answered_without_reading,
    ),
    AdviceRule(
        "empty_final_message",
        "the attempt ended without a final message (nothing states an answer "
        "or reports what was done)",
        _empty_final_message,
    ),
)
"""Every advisory, in the order `advise` reports them."""

ADVISORIES: dict[str, str] = {a.name: a.definition for a in _ADVICE}
"""Every advisory's name and one-line definition, in the order `advise` reports them."""


def advise(record: Record, task: Task, world: World) -> list[Advisory]:
    """Every advisory observation a verified record carries, in `ADVISORIES` order.

    Args:
        record: A record whose evidence is verified (replayed without difference): the caller
            checks that; on unverified evidence the result means nothing.
        task: The task the record was made for.
        world: The start world (targets are derived from it, as the checker derives them).

    Returns:
        The advisories found; an empty list when the trace shows none. Never a grade.
    """
    trace = _Trace(record, task, world)
    return [a for a in (entry.rule(trace) for entry in _ADVICE) if a]
