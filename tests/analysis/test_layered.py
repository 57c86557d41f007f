"""Per-dimension score sheets: a hand-made run whose figures are computed by hand, and the
invariants every run keeps (Z_H within F_H, joint states summing to one, order not mattering)."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world.analysis.layered import dimension_sheet, layered_tables
from harness_world.grading import Admission, Dimension, LayeredResult
from harness_world.grading.authority_spec import CandidateLink
from harness_world.running.reviews import Review
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


def _review(task: str, sample: int, claim: str, criterion: str) -> Review:
    return Review(
        task=task, sample=sample, criterion=criterion, verdict="pass", note="", reviewer="",
        time="", record_digest="", claim=claim,  # type: ignore[arg-type]
    )  # fmt: skip


def test_claims_count_each_level_apart_and_reviewed_ones_only_from_reviews() -> None:
    bare = layered_tables(RUN).pooled.claims
    # F_H: h1 (exec1/1), h1 and h2 (exec2/0), h2 (tool1/0); one link activated (exec1/1)
    assert (bare.failed_verdicts, bare.activated_links) == (4, 1)
    assert (bare.confirmed_defects, bare.validated_links, bare.unmatched) == (0, 0, 0)
    reviews = [
        _review("t.exec1", 1, "validated-link", "h1 -> a1"),
        _review("t.exec2", 0, "confirmed-defect", "h1"),  # bypassed, still a failed verdict
        _review("t.exec1", 0, "confirmed-defect", "h2"),  # h2 passed there: unmatched
        _review("t.tool1", 1, "confirmed-defect", "h2"),  # not admitted: unmatched
        _review("t.gone", 0, "validated-link", "h1 -> a1"),  # no such record: the pool's
        _review("t.exec2", 0, "verdict", "h2"),  # a verdict is no claim at all
    ]
    tables = layered_tables(RUN, reviews)
    ex, tools = (s.claims for s in tables.dimensions)
    assert (ex.confirmed_defects, ex.validated_links, ex.unmatched) == (1, 1, 1)
    assert (tools.confirmed_defects, tools.validated_links, tools.unmatched) == (0, 0, 1)
    pooled = tables.pooled.claims
    assert (pooled.confirmed_defects, pooled.validated_links, pooled.unmatched) == (1, 1, 3)
    assert (pooled.failed_verdicts, pooled.activated_links) == (4, 1)  # reviews add no verdict


_CLAIMS = st.builds(
    _review,
    st.sampled_from(("t.a", "t.b", "t.e")),
    st.integers(0, 3),
    st.sampled_from(("confirmed-defect", "validated-link")),
    st.sampled_from(("harness.same_key_retry", "harness.same_key_retry -> state.required")),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(layered_results(), max_size=12), st.lists(_CLAIMS, max_size=8))
def test_each_claim_lands_at_one_level_never_above_what_it_claims_about(
    results: list[LayeredResult], reviews: list[Review]
) -> None:
    tables = layered_tables(results, reviews)
    for sheet in [*tables.dimensions, tables.pooled]:
        c = sheet.claims
        assert c.confirmed_defects <= c.failed_verdicts and c.validated_links <= c.activated_links
    c = tables.pooled.claims
    distinct = {(r.task, r.sample, r.claim, r.criterion) for r in reviews}
    assert c.confirmed_defects + c.validated_links + c.unmatched == len(distinct)
    assert layered_tables(results).pooled.claims == msgspec.structs.replace(
        c, confirmed_defects=0, validated_links=0, unmatched=0
    )


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


def test_the_conditions_report_layer_figures_of_the_hand_made_run() -> None:
    """Admitted and refused records, both layers' rates, joint states and the links."""
    from harness_world.analysis.conditions import _layer_figures

    figures = _layer_figures([*RUN, _r("t.tool2", 0, "Tools", {}, {}, admission=NO)])
    assert (figures.admitted, figures.refused) == (4, 2)
    assert figures.refusal_reasons == {"ledger rows rewritten": 2}
    assert (figures.agent_success.count, figures.agent_success.n) == (2, 4)
    assert (figures.harness_micro.count, figures.harness_micro.n) == (3, 7)
    assert figures.harness_macro == (1 + 0.5 + 0 + 0) / 4
    assert figures.joint == {"clean": 1, "harness_only": 1, "agent_only": 0, "both": 2}
    assert (figures.linked, figures.harness_with_clean_agent, figures.unlinked_agent) == (1, 1, 1)
    assert figures.activations == {"h1 -> a1": 1}
    empty = _layer_figures([])
    assert empty.harness_macro is None and empty.activations == {} and empty.admitted == 0
