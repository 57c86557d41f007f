"""Each process metric pinned on a tiny record built to give a known value (docs/metrics.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis.process import (
    PROCESS_METRICS,
    AttemptProcess,
    ProcessSummary,
    metrics_markdown,
    process_change,
    process_of,
    run_process,
    summarize_process,
)
from harness_world.cli import main
from harness_world.engine.calls import CallRecord, ToolError, WriteImage
from harness_world.evidence import WorldRef
from harness_world.running.reader import RunReader
from harness_world.stats import PairedTask, TaskTally

OPEN = {"id": "T-1", "status": "open", "subject": "x"}
SOLVED = {"id": "T-1", "status": "solved", "subject": "x"}
T2 = {"id": "T-2", "status": "open"}
T3 = {"id": "T-3", "status": "open"}
COMMENT = {"id": "C-1", "ticket_id": "T-1", "body": "hi"}


def _ok(seq: int, tool: str, args: dict[str, Any], result: Any = None, **kw: Any) -> CallRecord:
    return CallRecord(seq=seq, tool=tool, args=args, ok=True, result=result, **kw)


CALLS = [
    _ok(1, "get_ticket", {"id": "T-1"}, OPEN),
    _ok(2, "list_tickets", {"status": "open"}, {"tickets": [T2, T3], "next_offset": None}),
    _ok(
        3,
        "update_ticket",
        {"id": "T-1", "status": "solved"},
        writes=[WriteImage(entity="tickets", key="T-1", before=OPEN, after=SOLVED)],
    ),
    CallRecord(
        seq=4, tool="update_ticket", args={"id": "T-9"}, ok=False, error=ToolError("refused", "no")
    ),
    _ok(5, "get_ticket", {"id": "T-1"}, SOLVED),
    _ok(
        6,
        "add_comment",
        {"ticket_id": "T-1", "body": "hi"},
        writes=[WriteImage(entity="comments", key="C-1", before=None, after=COMMENT)],
    ),
]
RECORD = hw.Record(
    world=WorldRef(name="helpdesk", size="small", hash="h", contract_hash="c"),
    calls=CALLS,
    final=[],
    outcome=hw.Outcome(status="completed"),
    final_message="Solved T-1; T-3 noted.",
)


def _size(row: dict[str, Any]) -> int:
    return len(msgspec.json.encode(row))


def test_the_attempt_figures() -> None:
    p = process_of(RECORD, passed=True, call_budget=12)
    assert (p.tool_calls, p.failed_calls, p.write_calls) == (6, 1, 2)
    assert p.refused_calls == 1  # call 4: an escalation the world refused
    assert p.irreversible == 1  # call 6 created a row
    assert p.backtracked == 0  # nothing written twice
    assert p.verification_calls == 1  # call 5 read T-1 back; call 2 came before any write
    assert p.postcondition_checked == 1  # call 3's status was seen; call 6's row never read
    # rows read: T-1 (open), T-2, T-3, T-1 (solved); T-2 is never named again
    assert p.rows_read_bytes == _size(OPEN) + _size(T2) + _size(T3) + _size(SOLVED)
    assert p.rows_used_bytes == p.rows_read_bytes - _size(T2)
    assert p.efficiency == 0.5  # passed x (1 - 6 / 12)


def test_the_summary_rates() -> None:
    summary = summarize_process([process_of(RECORD, passed=True, call_budget=12)])
    assert summary.tool_calls == 6
    assert summary.failure_rate is not None and summary.failure_rate.estimate == 1 / 6
    assert summary.escalation_rate is not None and summary.escalation_rate.estimate == 1.0
    assert summary.verification_cost is not None and summary.verification_cost.estimate == 1 / 6
    assert summary.postcondition_rate is not None and summary.postcondition_rate.estimate == 0.5
    read = _size(OPEN) + _size(T2) + _size(T3) + _size(SOLVED)
    assert summary.context_efficiency == pytest.approx((read - _size(T2)) / read)
    assert summary.context_efficiency_mean == summary.context_efficiency
    # the ratio's own numerator and denominator, and the mean's count, beside it
    assert (summary.rows_used_bytes, summary.rows_read_bytes) == (read - _size(T2), read)
    assert summary.context_efficiency_n == 1
    assert (summary.efficiency_adjusted, summary.efficiency_n) == (0.5, 1)
    assert summary.per_attempt["refused_calls"] == 1.0


def test_a_read_that_only_names_the_written_row_is_no_verification() -> None:
    """Looking at a written row means a result that holds it; an argument naming it is the
    agent's own echo (what the agent was shown: `harness_world.grading.shown`)."""
    named_only = _ok(4, "list_comments", {"ticket_id": "T-1"}, {"comments": [], "total": 0})
    p = process_of(msgspec.structs.replace(RECORD, calls=[*CALLS[:3], named_only]))
    assert p.write_calls == 1 and (p.verification_calls, p.verified) == (0, 0)
    shown = _ok(4, "get_ticket", {"id": "T-1"}, SOLVED)
    p = process_of(msgspec.structs.replace(RECORD, calls=[*CALLS[:3], shown]))
    assert (p.verification_calls, p.verified) == (1, 1)


def test_a_row_used_only_by_an_aggregate_answer_is_not_used() -> None:
    # the stated limit: a count read from rows names none of them
    counted = msgspec.structs.replace(RECORD, calls=CALLS[1:2], final_message="2")
    p = process_of(counted)
    assert p.rows_used_bytes == 0 and p.rows_read_bytes == _size(T2) + _size(T3)


def test_undefined_figures_are_null_never_zero() -> None:
    empty = msgspec.structs.replace(RECORD, calls=[], final_message="")
    summary = summarize_process([process_of(empty)])
    assert summary.failure_rate is None and summary.verification_cost is None
    assert summary.postcondition_rate is None and summary.context_efficiency is None
    assert summary.efficiency_adjusted is None and summary.efficiency_n == 0
    assert summary.rows_read_bytes == summary.context_efficiency_n == 0
    assert process_of(RECORD, passed=None, call_budget=12).efficiency is None
    assert process_of(RECORD, passed=False, call_budget=12).efficiency == 0.0


def _paired(task: str, base: tuple[int, int], cand: tuple[int, int]) -> PairedTask:
    return PairedTask(
        task_id=task,
        baseline=TaskTally(task_id=task, runs=base[0], passes=base[1]),
        candidate=TaskTally(task_id=task, runs=cand[0], passes=cand[1]),
        difference=cand[1] / cand[0] - base[1] / base[0],
    )


def test_improvements_and_net_delta_beside_regressions() -> None:
    change = process_change(
        [
            _paired("a", (3, 3), (3, 1)),  # solid -> not: a regression
            _paired("b", (3, 0), (3, 3)),  # not -> solid: an improvement
            _paired("c", (3, 2), (3, 3)),  # flaky -> solid: an improvement
            _paired("d", (3, 3), (3, 3)),  # unchanged
        ]
    )
    assert change.regressions == ["a"] and change.improvements == ["b", "c"]
    assert (change.net_delta, change.tasks) == (1, 4)


def test_a_run_directory_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    tasks = ["payments.charge_lost_response", "payments.charge_no_fault"]
    args = ["run", "--world", "payments", "--agent", "naive-retry", "--tasks", *tasks]
    assert main([*args, "--out", str(out), "--json"]) == 0
    summary = run_process(out, RunReader.of(hw.load_tasks("payments")))
    assert summary.attempts == 2 and summary.tool_calls > 0
    assert summary.efficiency_n == 2  # both tasks declare a tool-call budget


def test_the_docs_table_is_the_code() -> None:
    docs = Path(__file__).parents[2] / "docs" / "metrics.md"
    assert metrics_markdown() in docs.read_text()
    for metric in PROCESS_METRICS:
        assert metric.field in ProcessSummary.__struct_fields__, metric.name


def test_the_summary_pools_each_rate_over_its_own_denominator() -> None:
    """Each pooled rate counts its numerator over the right total (writes, calls, attempts)."""
    figures = {
        "tool_calls": (9, 5, 3),
        "failed_calls": (2, 0, 1),
        "write_calls": (4, 2, 0),
        "backtracked": (1, 0, 0),
        "verified": (3, 1, 0),
        "irreversible": (1, 0, 0),
        "tokens": (900, 300, 100),
        "cost": (0.25, 0.125, 0.0),
        "latency_s": (3.5, 1.5, 0.5),
        "refused_calls": (1, 0, 0),
        "verification_calls": (2, 1, 0),
        "postcondition_checked": (2, 1, 0),
        "rows_read_bytes": (400, 0, 50),
        "rows_used_bytes": (100, 0, 50),
        "efficiency": (0.5, None, 1.0),
        "passed": (True, False, None),
    }
    items = [
        AttemptProcess(task_id=f"t.{i}", sample=0, **{k: v[i] for k, v in figures.items()})
        for i in range(3)
    ]
    summary = summarize_process(items)
    pooled = {
        name: (rate.successes, rate.trials)
        for name in (
            "backtrack_rate",
            "verification_rate",
            "irreversible_rate",
            "failure_rate",
            "escalation_rate",
            "verification_cost",
            "postcondition_rate",
        )
        if (rate := getattr(summary, name)) is not None
    }
    assert pooled == {
        "backtrack_rate": (1, 6),
        "verification_rate": (4, 6),
        "irreversible_rate": (1, 6),
        "failure_rate": (3, 17),
        "escalation_rate": (1, 3),
        "verification_cost": (3, 17),
        "postcondition_rate": (3, 6),
    }
    assert (summary.attempts, summary.passed, summary.write_calls, summary.tool_calls) == (
        3,
        1,
        6,
        17,
    )
    assert summary.per_attempt["tokens"] == 1300 / 3 and summary.per_pass["tokens"] == 1300
    assert summary.per_pass["refused_calls"] == 1 and summary.per_attempt["cost"] == 0.125
    assert (summary.context_efficiency, summary.context_efficiency_mean) == (150 / 450, 0.625)
    assert (summary.context_efficiency_n, summary.rows_read_bytes, summary.rows_used_bytes) == (
        2,
        450,
        150,
    )
    assert (summary.efficiency_adjusted, summary.efficiency_n) == (0.75, 2)
    empty = summarize_process([])
    assert empty.per_attempt["tokens"] is None and empty.per_pass["cost"] is None
    assert empty.escalation_rate is None and empty.context_efficiency_mean is None
