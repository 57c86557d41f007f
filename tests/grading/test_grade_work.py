"""A grade does its work once: per task, per record and per value, counted (never timed).

What a grade derives from the task alone (the criteria that apply, the target sets) is derived
once per task, not per attempt; what it derives from a record (each call's arguments as JSON,
the rows each result returned) once per record, whichever criteria read it. The fast forms
decide exactly as their plain definitions.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.coverage import load_mutants, load_routes, run_script
from harness_world.engine import canonical
from harness_world.evidence.record import Record
from harness_world.grading import advise
from harness_world.grading import harness as harness_module
from harness_world.grading import trace as trace_module
from harness_world.grading.checker import grade, grade_view
from harness_world.grading.criteria import Check
from harness_world.grading.rows import changed_fields, is_row, walk_dicts
from harness_world.grading.task import Target, Task
from harness_world.grading.trace import CallLog, TraceView, call_log
from tests.conftest import examples
from tests.strategies import typed_tags

WORLDS = ("helpdesk", "inventory", "payments")


def _records(world_name: str) -> list[tuple[Task, Record]]:
    world = hw.load_world(world_name)
    tasks = {t.id: t for t in hw.load_tasks(world_name)}
    return [
        (tasks[task_id], run_script(world, tasks[task_id], script))
        for task_id, scripts in sorted(load_routes(world_name).items())
        for script in scripts
    ]


# -- per task -------------------------------------------------------------------------------


def test_the_criteria_of_a_task_are_chosen_once_for_all_its_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = hw.load_world("helpdesk")
    (task, record), *_ = _records("helpdesk")
    asked: list[str] = []
    real = Check.applies

    def counted(self: Check[Any], of: Task) -> bool:
        asked.append(self.name)
        return real(self, of)

    monkeypatch.setattr(Check, "applies", counted)
    grade(record, task, world)
    first = len(asked)
    for _ in range(3):
        trace_module._LAST.clear()  # a fresh view each time, as for another attempt
        grade(record, task, world)
    assert first > 0
    assert len(asked) == first


def test_a_tasks_target_sets_are_derived_once_for_all_its_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = hw.load_world("helpdesk")
    firsts = {task.id: (task, record) for task, record in reversed(_records("helpdesk"))}
    pairs = [p for p in firsts.values() if p[0].targets][:4]
    monkeypatch.setattr(trace_module, "_TARGETS", {})
    selected: list[str] = []
    real = trace_module.select_targets

    def counted(world: hw.World, task: Task, name: str = "") -> Any:
        selected.append(name)
        return real(world, task, name)

    monkeypatch.setattr(trace_module, "select_targets", counted)
    for _ in range(3):
        for task, record in pairs:
            trace_module._LAST.clear()
            grade(record, task, world)
    assert len(selected) == sum(len(task.targets) for task, _ in pairs)


def test_tasks_that_differ_in_their_targets_never_share_target_sets() -> None:
    world = hw.load_world("helpdesk")
    task, record = next(p for p in _records("helpdesk") if p[0].targets)
    first = task.targets[0]
    other = msgspec.structs.replace(
        task, targets=[Target(name=first.name, entity=first.entity, where=[]), *task.targets[1:]]
    )
    mine = TraceView(record, task, world, call_log(record))
    theirs = TraceView(record, other, world, call_log(record))
    assert mine.target_keys(first.name) != theirs.target_keys(first.name)
    assert len(theirs.target_keys(first.name)) == world.count(first.entity)


# -- per record -----------------------------------------------------------------------------


@pytest.mark.parametrize("world_name", WORLDS)
def test_a_grade_encodes_each_calls_arguments_once(
    world_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = hw.load_world(world_name)
    encoded: list[int] = []
    real = canonical.to_json

    def counted(value: Any) -> bytes:
        encoded.append(id(value))
        return real(value)

    for name, module in list(sys.modules.items()):
        if name.startswith("harness_world.grading") and getattr(module, "to_json", None) is real:
            monkeypatch.setattr(module, "to_json", counted)
    checked = 0
    for task, record in _records(world_name):
        if any(not c.ok for c in record.calls):
            continue  # a refused call's arguments are compared by the harness layer too
        encoded.clear()
        trace_module._LAST.clear()
        grade(record, task, world)
        advise(record, task, world)
        args = {id(c.args) for c in record.calls}
        counts = [encoded.count(i) for i in args]
        assert max(counts, default=0) <= 1, task.id
        checked += 1
    assert checked >= 5


def test_facets_are_kept_without_an_attribute_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view's facets and a net change's fields are computed once and kept, and none of the
    classes has the ``__getattr__`` hook attrs adds for `functools.cached_property` on a
    slotted class (it slows every attribute read of the class)."""
    from harness_world.grading import rows as rows_module

    for kind in (TraceView, CallLog, rows_module.Change):
        assert "__getattr__" not in kind.__dict__, kind.__name__
    world = hw.load_world("helpdesk")
    task, record = next((t, r) for t, r in _records("helpdesk") if r.final)
    computed: list[str] = []
    real_changes, real_fields = trace_module.net_changes, rows_module.changed_fields

    def changes(*args: Any) -> Any:
        computed.append("changes")
        return real_changes(*args)

    def fields(*args: Any) -> Any:
        computed.append("fields")
        return real_fields(*args)

    monkeypatch.setattr(trace_module, "net_changes", changes)
    monkeypatch.setattr(rows_module, "changed_fields", fields)
    view = TraceView(record, task, world, call_log(record))
    assert view.changes is view.changes
    change = view.changes[0]
    assert change.fields() == change.fields()
    assert computed == ["changes", "fields"]
    assert view.log.arguments is view.log.arguments
    assert TraceView.changes.__doc__  # the facet keeps its documentation


def _reference_first_returned(view: TraceView) -> dict[tuple[str, Any], int]:
    """Plain definition: the first successful call with the row whole at any depth."""
    atoms = set(view.target_atoms)
    atoms.update((i.entity, i.key) for _, i in view.addressed if i.before is not None)
    out: dict[tuple[str, Any], int] = {}
    for entity_name, key in atoms:
        entity = view.world.contract.entity(entity_name)
        for call in view.record.calls:
            if call.ok and any(
                type(d.get(entity.key)) is type(key)
                and d.get(entity.key) == key
                and is_row(d, entity)
                for d in walk_dicts(call.result)
            ):
                out[(entity_name, key)] = call.seq
                break
    return out


@pytest.mark.parametrize("world_name", WORLDS)
def test_the_rows_returned_are_the_plain_definitions(world_name: str) -> None:
    world = hw.load_world(world_name)
    for task, record in _records(world_name):
        view = TraceView(record, task, world, call_log(record))
        assert dict(view.first_returned) == _reference_first_returned(view), task.id


def _reshaped(value: Any, extra: bool) -> Any:
    """``value`` with every dict given one field no entity has (``extra``), or one field less."""
    if isinstance(value, list):
        return [_reshaped(v, extra) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _reshaped(v, extra) for k, v in value.items()}
    if extra:
        out["zz_not_a_field"] = 1
    elif len(out) > 1:
        out.pop(sorted(out)[-1])  # the last field by name: a key field stays most of the time
    return out


@pytest.mark.parametrize("world_name", WORLDS)
def test_a_row_with_a_field_too_many_or_too_few_is_not_returned_whole(world_name: str) -> None:
    """Every result of every route, its dicts given a field no entity has (even calls) or one
    field less (every third): the walk's whole-row test is `is_row`, as the plain definition."""
    world = hw.load_world(world_name)
    differs = 0
    for task, record in _records(world_name):
        calls = [
            msgspec.structs.replace(c, result=_reshaped(c.result, i % 2 == 0))
            if i % 2 == 0 or i % 3 == 0
            else c
            for i, c in enumerate(record.calls)
        ]
        reshaped = msgspec.structs.replace(record, calls=calls)
        view = TraceView(reshaped, task, world, call_log(reshaped))
        original = TraceView(record, task, world, call_log(record))
        assert dict(view.first_returned) == _reference_first_returned(view), task.id
        differs += dict(view.first_returned) != dict(original.first_returned)
    assert differs >= 3  # the reshaping moved or removed some first returns


# -- the fast forms decide as the plain ones ------------------------------------------------


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([0.0, 1.0, -0.0, 2.5, "", "1", "a"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=6,
)
_ROWS = st.none() | st.dictionaries(st.sampled_from(["id", "n", "tags", "x"]), _VALUES)


@settings(max_examples=examples(600, 3000), deadline=None)
@given(_ROWS, _ROWS)
def test_changed_fields_are_the_fields_not_typed_equal(
    before: dict[str, Any] | None, after: dict[str, Any] | None
) -> None:
    old, new = before or {}, after or {}
    missing = object()
    expected = sorted(
        name
        for name in old.keys() | new.keys()
        if name not in old
        or name not in new
        or typed_tags(old[name]) != typed_tags(new.get(name, missing))
    )
    assert list(changed_fields(before, after)) == expected


def test_a_view_whose_log_is_not_its_records_reads_the_records_own_arguments() -> None:
    world = hw.load_world("helpdesk")
    task, record = next(
        p for p in _records("helpdesk") if any(f.kind == "pattern" for f in p[0].forbid)
    )
    own = grade_view(TraceView(record, task, world, call_log(record)))
    other = grade_view(TraceView(record, task, world, CallLog(calls=[])))
    forbidden = [v for v in own.verdicts if v.id.startswith("forbidden.")]
    assert forbidden
    assert forbidden == [v for v in other.verdicts if v.id.startswith("forbidden.")]


def _with_failures(world_name: str) -> list[tuple[Task, Record]]:
    """Every route, and every hand mutant of the small world (many with failed calls)."""
    world = hw.load_world(world_name)
    tasks = {t.id: t for t in hw.load_tasks(world_name)}
    mutants = [
        (tasks[m.task_id], run_script(world, tasks[m.task_id], m.script))
        for m in load_mutants(world_name)
        if m.task_id in tasks and "small" in m.sizes
    ]
    return _records(world_name) + mutants


@pytest.mark.parametrize("world_name", WORLDS)
def test_the_harness_findings_of_a_view_are_the_call_logs_whole_reading(world_name: str) -> None:
    """A record without a failed call skips the harness walk: the findings stay the same."""
    world = hw.load_world(world_name)
    failed = clean = 0
    for task, record in _with_failures(world_name):
        view = TraceView(record, task, world, call_log(record))
        assert harness_module._of_view(view) == harness_module._found(record, world), task.id
        if any(not c.ok for c in record.calls):
            failed += 1
        else:
            clean += 1
    assert failed >= 3 and clean >= 3
