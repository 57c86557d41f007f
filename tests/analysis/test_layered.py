"""Per-dimension score sheets: a hand-made run whose figures are computed by hand, and the
invariants every run keeps (Z_H within F_H, joint states summing to one, order not mattering)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world.analysis.layered import dimension_sheet, layered_tables
from harness_world.grading import Admission, Dimension, LayeredResult
from harness_world.grading.authority_spec import CandidateLink
from harness_world.stats import wilson_interval
from tests.strategies import layered_results

YES = Admission(admitted=True, checks={"evidence_verified": True})
NO = Admission(admitted=False, checks={"ledger_intact": False}, reasons=["ledger rows rewritten"])
LINK = CandidateLink(harness="h1", agent="a1", mechanism="m")


def _r(
    task: str,
    sample: int,
    dim: Dimension,
    agent: dict[str, bool],
    harness: dict[str, bool],
    **extra: Any,
) -> LayeredResult:
    extra.setdefault("admission", YES)
    return LayeredResult(
        task_id=task, sample=sample, dimension=dim, agent=agent, harness=harness, **extra
    )


RUN = [
    _r("t.exec1", 0, "Execution", {"a1": True, "a2": True}, {"h1": True, "h2": True}),
    _r(
        "t.exec1",
        1,
        "Execution",
        {"a1": False, "a2": True},
        {"h1": False, "h2": True},
        activated=[LINK],
    ),
    _r(
        "t.exec2",
        0,
        "Execution",
        {"a1": False},
        {"h1": False, "h2": False},
        bypassed={"h1": "hidden by the agent"},
    ),
    _r("t.tool1", 0, "Tools", {"a1": True}, {"h2": False}),
    _r("t.tool1", 1, "Tools", {}, {}, admission=NO),
]


def test_the_hand_made_run_by_dimension() -> None:
    tables = layered_tables(RUN)
    assert [s.dimension for s in tables.dimensions] == ["Execution", "Tools"]
    ex, tools = tables.dimensions
    assert (ex.records, ex.admitted, ex.tasks) == (3, 3, 2)
    assert (ex.agent_success.count, ex.agent_success.n) == (1, 3)
    assert ex.agent_score.mean == pytest.approx(0.5)  # (1 + 1/2 + 0) / 3
    assert (ex.harness_micro.count, ex.harness_micro.n) == (3, 6)
    assert ex.harness_macro.mean == pytest.approx(0.5)  # (1 + 1/2 + 0) / 3
    assert ex.layered_score.mean == pytest.approx(0.5)  # ((1+1)/2 + (.5+.5)/2 + 0) / 3
    assert {k: v.count for k, v in ex.joint.items()} == {
        "clean": 1, "harness_only": 0, "agent_only": 0, "both": 2,
    }  # fmt: skip
    assert (ex.joint_failures, ex.linked) == (2, 1) and ex.link_rate.rate == 0.5
    assert ex.harness_failed == {"h1": 2, "h2": 1}  # F_H, raw
    assert ex.bypassed == {"h1": 1}  # B
    assert ex.harness_adjusted == {"h1": 1, "h2": 1}  # Z_H = F_H minus B
    assert ex.with_harness_failure.count == 2 and ex.with_adjusted_failure.count == 2
    assert (tools.records, tools.admitted) == (2, 1)
    assert tools.joint["harness_only"].rate == 1.0
    assert tools.link_rate.n == 0 and tools.link_rate.rate is None  # undefined, never zero


def test_the_hand_made_run_pooled() -> None:
    pooled = layered_tables(RUN).pooled
    assert (pooled.records, pooled.admitted) == (5, 4)
    assert (pooled.agent_success.count, pooled.agent_success.n) == (2, 4)
    assert (pooled.harness_micro.count, pooled.harness_micro.n) == (3, 7)
    assert pooled.layered_score.mean == pytest.approx(0.5)  # (1 + .5 + 0 + .5) / 4
    # the pooled link rate is sum |L_d| / sum |J_d|, not a mean of the dimension rates
    assert (pooled.linked, pooled.joint_failures) == (1, 2)


def test_the_hand_made_intervals() -> None:
    ex = layered_tables(RUN).dimensions[0]
    wilson = wilson_interval(1, 3)
    assert (ex.agent_success.low, ex.agent_success.high) == (wilson.low, wilson.high)
    # t.exec1 repeats: 0/1 flags clustered by task, residual sums +1/3 and -1/3, CR1 factor
    # 2/(2-1): se = sqrt(2 * 2/9) / 3 = 2/9
    half = 1.959963984540054 * 2 / 9
    assert ex.agent_success.cluster_low == 0.0  # 1/3 - 0.436 clipped
    assert ex.agent_success.cluster_high == pytest.approx(1 / 3 + half)
    assert ex.agent_score.method == "cluster"
    tools = layered_tables(RUN).dimensions[1]
    assert tools.agent_success.cluster_low is None  # one admitted record: nothing repeats
    assert tools.agent_score.method == "independent" and tools.agent_score.low is None


@settings(max_examples=200, deadline=None)
@given(st.lists(layered_results(), max_size=12))
def test_z_h_is_within_f_h_and_b_makes_up_the_difference(results: list[LayeredResult]) -> None:
    for r in results:
        assert set(r.harness_adjusted) <= set(r.harness_failed)
        assert set(r.bypassed) <= set(r.harness_failed)
    sheet = dimension_sheet(results)
    for name, raw in sheet.harness_failed.items():
        assert sheet.bypassed.get(name, 0) + sheet.harness_adjusted.get(name, 0) == raw
    assert set(sheet.harness_adjusted) <= set(sheet.harness_failed)
    assert sheet.with_adjusted_failure.count <= sheet.with_harness_failure.count


@settings(max_examples=200, deadline=None)
@given(st.lists(layered_results(), max_size=12))
def test_joint_states_are_proportions_that_sum_to_one(results: list[LayeredResult]) -> None:
    sheet = dimension_sheet(results)
    assert sum(p.count for p in sheet.joint.values()) == sheet.admitted
    rates = [p.rate for p in sheet.joint.values()]
    if sheet.admitted:
        assert math.isclose(math.fsum(r for r in rates if r is not None), 1.0)
    else:
        assert all(r is None for r in rates)
    for p in sheet.joint.values():
        assert p.low is None or p.low <= (p.rate or 0) <= (p.high or 1)
    assert sheet.linked <= sheet.joint_failures == sheet.joint["both"].count


@settings(max_examples=150, deadline=None)
@given(st.lists(layered_results(), max_size=12), st.randoms(use_true_random=False))
def test_order_does_not_matter(results: list[LayeredResult], rng: object) -> None:
    shuffled = list(results)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    assert layered_tables(shuffled) == layered_tables(results)


@settings(max_examples=150, deadline=None)
@given(st.lists(layered_results(), max_size=12))
def test_dimension_sheets_partition_the_pool(results: list[LayeredResult]) -> None:
    tables = layered_tables(results)
    parts = tables.dimensions
    assert sum(s.records for s in parts) == tables.pooled.records == len(results)
    assert sum(s.admitted for s in parts) == tables.pooled.admitted
    assert sum(s.joint_failures for s in parts) == tables.pooled.joint_failures
    assert sum(s.linked for s in parts) == tables.pooled.linked
    for s in (*parts, tables.pooled):
        for share in (s.agent_score, s.harness_macro, s.layered_score):
            assert share.mean is None or 0.0 <= share.mean <= 1.0
