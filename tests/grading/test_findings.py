"""One findings registry over one trace view: a behaviour is defined once, and every reader of
it (criterion, advisory, metric) agrees."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.analysis.process import PROCESS_METRICS, process_of
from harness_world.coverage import load_mutants, load_routes, record_calls, run_script
from harness_world.grading import ADVISORIES, CRITERIA, advise
from harness_world.grading import trace as trace_module
from harness_world.grading.checker import grade
from harness_world.grading.criteria import AdviceRule, Check, Metric
from harness_world.grading.harness import HARNESS_CRITERIA
from harness_world.grading.rules import FINDINGS
from harness_world.grading.trace import trace_view
from tests.conftest import examples
from tests.strategies import call_sequences

WORLDS = ("helpdesk", "inventory", "payments")


def test_one_registry_holds_every_kind_and_the_others_are_its_views() -> None:
    kinds = {e.kind for e in FINDINGS.entries}
    assert kinds == {"grade", "harness", "policy", "advisory", "metric"}
    assert all(e.name and e.definition and "\n" not in e.definition for e in FINDINGS.entries)
    checked = FINDINGS.of_kind("grade", "harness", "policy")
    assert [c.name for c in CRITERIA] == [e.name for e in checked]
    assert all(e.name.startswith("policy.") for e in FINDINGS.of_kind("policy"))
    assert list(ADVISORIES) == [e.name for e in FINDINGS.of_kind("advisory")]
    assert [m.name for m in PROCESS_METRICS] == [e.name for e in FINDINGS.of_kind("metric")]
    assert [e.name for e in FINDINGS.of_kind("harness")] == list(HARNESS_CRITERIA)
    assert all(isinstance(e, Check) for e in checked)
    assert all(isinstance(e, AdviceRule) for e in FINDINGS.of_kind("advisory"))
    assert all(isinstance(e, Metric) for e in FINDINGS.of_kind("metric"))


def test_a_name_is_registered_once_across_every_kind() -> None:
    rule = FINDINGS.advisories[0]
    clash = AdviceRule(FINDINGS.criteria.entries[0].name, "d", rule.rule)
    with pytest.raises(ValueError, match=r"registered twice: state\.required"):
        type(FINDINGS)([*FINDINGS.entries, clash])


# -- derived rows: the advisory exempts what the grader exempts -----------------------------

MOVE = [
    ("get_stock", {"item_id": "I-0172", "warehouse_id": "W-01"}),
    (
        "create_transfer",
        {
            "item_id": "I-0172",
            "from_warehouse_id": "W-01",
            "to_warehouse_id": "W-05",
            "quantity": 257,
        },
    ),
]


def test_a_row_a_tool_derives_is_no_write_without_read() -> None:
    """The transfer writes the destination's stock row as a declared consequence: the grade's
    read_before_write exempts it, and so does the advisory (it flagged it before)."""
    world = hw.load_world("inventory")
    task = next(
        t for t in hw.load_tasks("inventory") if t.id == "inventory.move_available_adapters"
    )
    record = record_calls(world, task, MOVE, final_message="Moved 257.")
    listed = msgspec.structs.replace(task, trace=["read_before_write"])
    verdicts = {v.id: v for v in grade(record, listed, world).verdicts}
    assert verdicts["trace.read_before_write"].status == "passed"
    assert "write_without_read" not in {a.name for a in advise(record, task, world)}
    # a row the agent addressed is still flagged: the source row, written unread
    blind = record_calls(world, task, MOVE[1:], final_message="Moved 257.")
    found = {a.name: a for a in advise(blind, task, world)}
    assert found["write_without_read"].detail == (
        "call 1 create_transfer wrote stock:I-0172@W-01 unread"
    )


def _blind_targets(record: hw.Record, task: hw.Task, world: hw.World) -> set[str] | None:
    """The target rows read_before_write names (None: more than its detail names)."""
    listed = msgspec.structs.replace(task, trace=["read_before_write"])
    (verdict,) = [v for v in grade(record, listed, world).verdicts if v.id.endswith("_write")]
    if verdict.status == "passed":
        return set()
    if verdict.detail.endswith("more"):
        return None
    return {item.split(" (call")[0] for item in verdict.detail.split(": ", 1)[1].split(", ")}


def _flagged_targets(record: hw.Record, task: hw.Task, world: hw.World) -> set[str] | None:
    """The target rows write_without_read names (None: more than its detail names)."""
    targets = {f"{e}:{k}" for e, k in trace_view(record, task, world).target_atoms}
    found = {a.name: a.detail for a in advise(record, task, world)}
    detail = found.get("write_without_read", "")
    if detail.endswith("more"):
        return None
    rows = {part.split(" wrote ")[1].removesuffix(" unread") for part in detail.split("; ") if part}
    return rows & targets


@pytest.mark.parametrize("world_name", WORLDS)
def test_the_advisory_and_the_criterion_flag_the_same_target_rows(world_name: str) -> None:
    """Over every oracle route and hand mutant: the rows read_before_write fails are the target
    rows write_without_read names (the advisory reads the criterion's facet)."""
    world = hw.load_world(world_name)
    tasks = {t.id: t for t in hw.load_tasks(world_name)}
    scripts = [(tid, s) for tid, routes in load_routes(world_name).items() for s in routes]
    scripts += [(m.task_id, m.script) for m in load_mutants(world_name)]
    disagreements, flagged = [], 0
    for task_id, script in scripts:
        task, record = tasks[task_id], run_script(world, tasks[task_id], script)
        blind, named = _blind_targets(record, task, world), _flagged_targets(record, task, world)
        if blind is None or named is None:
            continue  # a detail cut short: the named rows are not all there to compare
        flagged += bool(blind)
        if blind != named:
            disagreements.append((task_id, blind, named))
    assert not disagreements
    assert flagged >= 2  # the comparison saw blind writes, not only clean traces


# -- backtracking and reverted writes read one chain of images -------------------------------


@settings(max_examples=examples(60, 600))
@given(call_sequences, st.sampled_from(["helpdesk.reply_and_solve", "helpdesk.escalate_outage"]))
def test_a_reverted_write_is_always_a_backtracked_write(
    made: list[tuple[str, Any]], task_id: str
) -> None:
    world = hw.load_world("helpdesk")
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == task_id)
    record = record_calls(world, task, made, final_message="Done.")
    listed = msgspec.structs.replace(task, trace=["no_reverted_writes"])
    (verdict,) = [
        v for v in grade(record, listed, world).verdicts if v.id.endswith("reverted_writes")
    ]
    figures = process_of(record)
    if verdict.status == "failed":
        assert figures.backtracked >= 1, verdict.detail
    if figures.backtracked == 0:
        assert verdict.status == "passed"


# -- the view is read once per grade -------------------------------------------------------


def test_a_grade_walks_the_results_once_and_shares_the_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = hw.load_world("inventory")
    task = next(
        t for t in hw.load_tasks("inventory") if t.id == "inventory.count_legacy_peripherals"
    )
    listed = msgspec.structs.replace(task, trace=["pages_followed", "targets_read"])
    record = record_calls(world, listed, [("list_items", {"category": "peripherals"})])
    walks: list[int] = []
    real = trace_module._first_returned

    def counted(*args: Any) -> Any:
        walks.append(1)
        return real(*args)

    monkeypatch.setattr(trace_module, "_first_returned", counted)
    grade(record, listed, world)  # three criteria read the rows returned: one walk
    advise(record, listed, world)  # the advisories share the grade's view
    assert len(walks) == 1
    assert trace_view(record, listed, world) is trace_view(record, listed, world)
