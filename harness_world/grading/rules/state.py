"""State criteria: with delta = diff(start, final), R ⊆ delta and delta ⊆ A, reported apart.

``state.required`` lists what is missing; ``state.allowed`` what changed that is neither
required nor allowed. One phase per kind of requirement (set, row, delete, create) lists what
is missing and adds the atoms (entity, key, field) it makes allowed; the atoms are computed once
per view and shared by both criteria.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

import attrs
from msgspec import UNSET

from harness_world.engine.values import typed_equal
from harness_world.engine.world import Key, World
from harness_world.grading.criteria import Check
from harness_world.grading.grade import CriterionVerdict, RequiredItem
from harness_world.grading.rows import MISSING, Change
from harness_world.grading.rules.common import findings, fmt, show, taxon
from harness_world.grading.task import Allowance, Requirement, Task
from harness_world.grading.trace import TraceView

__all__ = [
    "ENTRIES",
    "Effect",
    "EffectVerdict",
    "missing_required",
    "net_effects",
    "required_items",
]

_Atoms = set[tuple[str, Key, str]]
_ByKey = dict[tuple[str, Key], Change]


class _Rows(Protocol):
    """What a requirement's phase reads: a `TraceView`, or one narrowed to a target row."""

    @property
    def task(self) -> Task: ...

    @property
    def world(self) -> World: ...

    @property
    def changes(self) -> Sequence[Change]: ...

    def target_keys(self, name: str) -> tuple[Key, ...]: ...


@attrs.frozen(slots=True)
class _OneRow:
    """A view whose target set ``target`` holds only ``key``: one member of R at a time."""

    view: TraceView
    target: str
    key: Key

    @property
    def task(self) -> Task:
        return self.view.task

    @property
    def world(self) -> World:
        return self.view.world

    @property
    def changes(self) -> Sequence[Change]:
        return self.view.changes

    def target_keys(self, name: str) -> tuple[Key, ...]:
        if self.view.task.target(name).name == self.target:
            return (self.key,)
        return self.view.target_keys(name)


def _missing(view: TraceView) -> tuple[list[str], _Atoms]:
    """The required effects missing from delta, and the atoms R makes allowed."""
    missing: list[str] = []
    allowed: _Atoms = set()
    by_key = {(c.entity, c.key): c for c in view.changes}
    for req in view.task.require:
        missing += _PHASES[req.kind](view, req, by_key, allowed)
    return missing, allowed


def missing_required(view: TraceView) -> list[str]:
    """Each required effect delta lacks, as ``state.required`` names it (whole, not cut)."""
    return list(view.once(_missing)[0])


def _required(view: TraceView) -> tuple[CriterionVerdict, _Atoms]:
    """R ⊆ delta; also returns the atoms R makes allowed."""
    missing, allowed = view.once(_missing)
    verdict = CriterionVerdict(
        id="state.required",
        kind="state",
        status="failed" if missing else "passed",
        detail=f"missing {len(missing)}: {show(missing)}"
        if missing
        else "every required change is present",
    )
    return verdict, allowed


def required_items(view: TraceView) -> list[RequiredItem]:
    """The required set R member by member, each with whether Δ holds it.

    Each item is decided by the phase ``state.required`` runs for its kind, on that one target
    row (an unlinked ``create`` counts once), so ``state.required`` passes exactly when every
    item is met; the partial-credit reward of `harness_world.rewards` counts them.
    """
    by_key = {(c.entity, c.key): c for c in view.changes}
    items: list[RequiredItem] = []
    for index, req in enumerate(view.task.require):
        phase = _PHASES[req.kind]
        if req.kind == "create" and not req.link:
            rows: list[tuple[str, _Rows]] = [(req.entity, view)]
        else:
            target = view.task.target(req.target)
            rows = [
                (f"{target.entity}:{key}", _OneRow(view, target.name, key))
                for key in view.target_keys(req.target)
            ]
        for where, narrowed in rows:
            missing = phase(narrowed, req, by_key, set())
            item = RequiredItem(
                requirement=index,
                kind=req.kind,
                where=where,
                met=not missing,
                detail="; ".join(missing),
            )
            items.append(item)
    return items


def _set_required(view: _Rows, req: Requirement, by_key: _ByKey, allowed: _Atoms) -> list[str]:
    """Each target's ``req.field`` ends at the expected value (start-relative for delta/add)."""
    target = view.task.target(req.target)
    as_set = req.add is not UNSET or req.remove is not UNSET
    missing: list[str] = []
    for key in view.target_keys(req.target):
        allowed.add((target.entity, key, req.field))
        change = by_key.get((target.entity, key))
        start = (change.before if change is not None else view.world.get(target.entity, key)) or {}
        final = change.after if change is not None else start
        found = MISSING if final is None else final.get(req.field, MISSING)
        if req.grown:
            if not _longer(found, start.get(req.field, MISSING)):
                where = f"{target.entity}:{key}.{req.field}"
                missing.append(f"{where} expected longer than {fmt(start.get(req.field))}")
            continue
        expected = _expected(req, start)
        if not _equal(found, expected, as_set=as_set):
            where = f"{target.entity}:{key}.{req.field}"
            missing.append(f"{where} expected {fmt(expected)}, found {fmt(found)}")
    return missing


def _delete_required(view: _Rows, req: Requirement, by_key: _ByKey, allowed: _Atoms) -> list[str]:
    """Each target row is gone at the end."""
    target = view.task.target(req.target)
    missing: list[str] = []
    for key in view.target_keys(req.target):
        allowed.add((target.entity, key, "<deleted>"))
        change = by_key.get((target.entity, key))
        if change is None or change.after is not None:
            missing.append(f"{target.entity}:{key} not deleted")
    return missing


def _created(view: _Rows, entity: str) -> list[Change]:
    return [
        c for c in view.changes if c.entity == entity and c.before is None and c.after is not None
    ]


def _create_required(view: _Rows, req: Requirement, by_key: _ByKey, allowed: _Atoms) -> list[str]:
    """``req.count`` new matching rows (per target, through ``req.link``, when linked)."""
    del by_key  # creates are found among the created rows, not by key
    good = [c for c in _created(view, req.entity) if _row_matches(c.after, req.match)]
    what = ", ".join(f"{k}={v!r}" for k, v in sorted(req.match.items()))
    if not req.link:
        allowed.update((req.entity, c.key, "<created>") for c in good[: req.count])
        if len(good) < req.count:
            return [f"{req.count - len(good)} new {req.entity} row(s) missing ({what})"]
        return []
    target = view.task.target(req.target)
    missing: list[str] = []
    for key in view.target_keys(req.target):
        linked = [c for c in good if c.after is not None and c.after.get(req.link) == key]
        allowed.update((req.entity, c.key, "<created>") for c in linked[: req.count])
        if len(linked) < req.count:
            missing.append(f"{target.entity}:{key} lacks a new {req.entity} row ({what})")
    return missing


def _row_required(view: _Rows, req: Requirement, by_key: _ByKey, allowed: _Atoms) -> list[str]:
    """Each target row ends exactly as ``req.row``; every field of the row is a required atom."""
    assert isinstance(req.row, dict)
    expected: dict[str, Any] = req.row
    target = view.task.target(req.target)
    missing: list[str] = []
    for key in view.target_keys(req.target):
        start = view.world.get(target.entity, key) or {}
        allowed.update((target.entity, key, name) for name in set(start) | set(expected))
        change = by_key.get((target.entity, key))
        final = change.after if change is not None else start
        where = f"{target.entity}:{key}"
        if final is None:
            missing.append(f"{where} deleted, expected a row")
            continue
        for name in sorted(set(final) | set(expected)):
            want = expected.get(name, MISSING)
            found = final.get(name, MISSING)
            if not typed_equal(want, found):  # MISSING only ever equals itself
                missing.append(f"{where}.{name} expected {fmt(want)}, found {fmt(found)}")
    return missing


_PHASES = {
    "set": _set_required,
    "row": _row_required,
    "delete": _delete_required,
    "create": _create_required,
}
"""One phase per kind of requirement: what is missing, adding the atoms it makes allowed."""


def _expected(req: Requirement, start: dict[str, Any]) -> Any:
    if req.absent:
        return MISSING
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


def _longer(found: Any, start: Any) -> bool:
    """Whether ``found`` is a text or list longer than ``start`` (of the same type)."""
    sized = (str, list)
    return isinstance(found, sized) and type(found) is type(start) and len(found) > len(start)


def _equal(found: Any, expected: Any, *, as_set: bool) -> bool:
    if found is MISSING or expected is MISSING:
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


def _field_allowed(
    view: TraceView, change: Change, field: str, covering: Sequence[Allowance]
) -> bool:
    """Whether an allowance of the change's entity (``covering``) allows the field."""
    # A loop, not any(): asked once per changed field, of one or two allowances, where
    # making a generator costs more than the test.
    for a in covering:
        if (field in a.fields or "*" in a.fields) and (
            a.anywhere or change.key in view.target_set(a.target)
        ):
            return True
    return False


def _delete_allowed(view: TraceView, change: Change) -> bool:
    return any(
        a.delete and a.entity == change.entity and change.key in view.target_set(a.target)
        for a in view.task.allow
    )


EffectVerdict = Literal["required", "allowed", "unauthorized"]
"""How the state criteria judge one atom of delta: in R, in A beyond R, or in neither."""


@attrs.frozen(slots=True)
class Effect:
    """One atom of delta (a field changed, a row created or deleted) and how it is judged.

    Attributes:
        entity: The row's entity.
        key: The row's key.
        field: The field that changed; ``<created>`` or ``<deleted>`` for a whole row.
        verdict: ``required`` (an atom of R), ``allowed`` (an allowance of the task covers
            it) or ``unauthorized`` (neither: ``state.allowed`` names it).
    """

    entity: str
    key: Key
    field: str
    verdict: EffectVerdict

    @property
    def label(self) -> str:
        """How ``state.allowed`` names the atom: ``entity:key.field changed`` or ``created``."""
        return _label(self.entity, self.key, self.field)


def _label(entity: str, key: Key, field: str) -> str:
    if field == "<created>":
        return f"{entity}:{key} created"
    if field == "<deleted>":
        return f"{entity}:{key} deleted"
    return f"{entity}:{key}.{field} changed"


_Judged = tuple[str, Key, str, EffectVerdict]
"""An `Effect` as the judgement keeps it (entity, key, field, verdict): a plain tuple, made
for every atom of every record; the `Effect` objects are made when a reader asks."""


def net_effects(view: TraceView) -> list[Effect]:
    """Every atom of delta, in the order of delta, judged against R and A (kept per view).

    The one judgement both ``state.allowed`` and a reader of the record see: the criterion
    fails exactly on the ``unauthorized`` atoms.
    """
    return [Effect(*judged) for judged in view.once(_effects)]


def _effects(view: TraceView) -> tuple[_Judged, ...]:
    required_atoms = view.once(_required)[1]
    out: list[_Judged] = []
    created_budget: dict[tuple[int, Key | None], int] = {}
    by_entity: dict[str, list[Allowance]] = {}  # the allowances of each entity, found once
    for allowance in view.task.allow:
        by_entity.setdefault(allowance.entity, []).append(allowance)
    for change in view.changes:
        if change.before is None or change.after is None:
            field = "<created>" if change.before is None else "<deleted>"
            if (change.entity, change.key, field) in required_atoms:
                verdict: EffectVerdict = "required"
            elif (
                _create_allowed(view, change, created_budget)
                if change.before is None
                else _delete_allowed(view, change)
            ):
                verdict = "allowed"
            else:
                verdict = "unauthorized"
            out.append((change.entity, change.key, field, verdict))
            continue
        covering = by_entity.get(change.entity, [])
        for field in change.fields():
            if (change.entity, change.key, field) in required_atoms:
                verdict = "required"
            elif _field_allowed(view, change, field, covering):
                verdict = "allowed"
            else:
                verdict = "unauthorized"
            out.append((change.entity, change.key, field, verdict))
    return tuple(out)


def _allowed(view: TraceView) -> CriterionVerdict:
    """Delta ⊆ A, with A = required atoms ∪ the task's allowances."""
    unauthorized = [
        _label(entity, key, field)
        for entity, key, field, verdict in view.once(_effects)
        if verdict == "unauthorized"
    ]
    return findings(
        "state.allowed",
        "state",
        unauthorized,
        f"unauthorized {len(unauthorized)}: ",
        "every change is required or allowed",
    )


def _create_allowed(
    view: TraceView, change: Change, budget: dict[tuple[int, Key | None], int]
) -> bool:
    for i, allowance in enumerate(view.task.allow):
        if not allowance.create or allowance.entity != change.entity or change.after is None:
            continue
        bucket: Key | None = None
        if allowance.link:
            bucket = change.after.get(allowance.link)
            if bucket not in view.target_set(allowance.target):
                continue
        used = budget.get((i, bucket), 0)
        if allowance.max_created and used >= allowance.max_created:
            continue
        budget[(i, bucket)] = used + 1
        return True
    return False


ENTRIES = (
    Check[TraceView](
        name="state.required",
        verdict="state",
        layer="agent",
        definition="some required effect is missing (R ⊄ Δ); names the keys",
        run=lambda view: [view.once(_required)[0]],
        taxon=taxon("Lifecycle", "completion"),
        when=lambda task: bool(task.require),
    ),
    Check[TraceView](
        name="state.allowed",
        verdict="state",
        layer="agent",
        definition="something changed that is neither required nor allowed (Δ ⊄ A); names the keys",
        run=lambda view: [_allowed(view)],
        taxon=taxon("Governance", "scope"),
    ),
)
"""The state criteria, in grading order."""
