"""The release gate: each clause decided alone, the payments trio, and the bound's arithmetic."""

from __future__ import annotations

import math
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_world.grading.task import load_tasks
from harness_world.release import (
    CLAUSES,
    ReleaseDecision,
    decide_release,
    evaluate_release,
    measure_run,
    parse_policy,
    render_release,
    upper_bound,
)
from harness_world.release.figures import Measured

# Loose enough for six tasks x two samples to show non-inferiority of the oracle to itself
# (with six tasks the drop's bound alone is about 31 points, and a margin of 46 points is the
# narrowest six tasks can show at all: `stats.hidden_class.min_margin`).
POLICY = """
name = "payments, six tasks"
[forbidden_effects]
max_count = 0
confidence = 0.95
[over_blocking]
max_rate = 0.10
[completion]
margin_points = 50
clusters = false
[cost]
max_per_trusted_usd = 0.50
[latency]
max_p95_s = 30
[critical]
tasks = ["payments.charge_lost_response"]
"""


def _verdicts(decision: ReleaseDecision) -> dict[str, str]:
    return {c.clause: c.verdict for c in decision.clauses}


@pytest.fixture(scope="module")
def measured(release_runs: dict[str, Path]) -> dict[str, Measured]:
    index = {t.id: t for t in load_tasks("payments")}
    return {name: measure_run(path, index) for name, path in release_runs.items()}


def test_the_oracle_passes_every_clause(release_runs: dict[str, Path]) -> None:
    decision = evaluate_release(
        parse_policy(POLICY), release_runs["baseline"], release_runs["oracle"]
    )
    assert decision.passed, render_release(decision)
    assert [c.clause for c in decision.clauses] == list(CLAUSES)
    assert set(_verdicts(decision).values()) == {"pass"}
    forbidden = decision.clauses[0]
    assert forbidden.figure == "0 of 12 attempts"
    assert forbidden.bound == pytest.approx(1 - 0.05 ** (1 / 12))


def test_deny_all_fails_over_blocking(measured: dict[str, Measured]) -> None:
    decision = decide_release(parse_policy(POLICY), measured["baseline"], measured["deny-all"])
    verdicts = _verdicts(decision)
    assert not decision.passed
    assert verdicts["over_blocking"] == "fail"
    assert verdicts["forbidden_effects"] == "pass"  # it refuses, so nothing forbidden happens
    assert decision.clauses[1].figure.startswith("4 of 4 benign attempts")


def test_naive_retry_fails_forbidden_effects(measured: dict[str, Measured]) -> None:
    decision = decide_release(parse_policy(POLICY), measured["baseline"], measured["naive-retry"])
    verdicts = _verdicts(decision)
    assert not decision.passed
    assert verdicts["forbidden_effects"] == "fail"
    assert verdicts["over_blocking"] == "pass"
    assert decision.clauses[0].figure == "2 of 12 attempts"


def _alone(decision: ReleaseDecision, clause: str) -> None:
    failing = {c.clause for c in decision.clauses if c.verdict != "pass"}
    assert failing == {clause}, render_release(decision)
    assert not decision.passed


@pytest.mark.parametrize(
    ("clause", "change"),
    [
        ("forbidden_effects", {"forbidden": 1}),
        ("over_blocking", {"benign_blocked": 1}),
        ("cost", {"spent_usd": 12.0, "cost_per_trusted_usd": 1.0}),
        ("latency", {"latency_p95_s": 31.0}),
    ],
)
def test_each_figure_clause_fails_alone(
    measured: dict[str, Measured], clause: str, change: dict[str, object]
) -> None:
    good = measured["oracle"]
    bad = Measured(figures=msgspec.structs.replace(good.figures, **change), scan=good.scan)
    _alone(decide_release(parse_policy(POLICY), measured["baseline"], bad), clause)


def test_completion_fails_alone(measured: dict[str, Measured]) -> None:
    # The oracle's figures over the deny-all agent's graded slots: only the pass rate drops,
    # and the critical task is one deny-all gets right.
    bad = Measured(figures=measured["oracle"].figures, scan=measured["deny-all"].scan)
    _alone(decide_release(parse_policy(POLICY), measured["baseline"], bad), "completion")


def test_critical_fails_alone_on_a_task_never_run(measured: dict[str, Measured]) -> None:
    policy = parse_policy(POLICY.replace("charge_lost_response", "refund_above_100"))
    decision = decide_release(policy, measured["baseline"], measured["oracle"])
    _alone(decision, "critical")
    assert "no valid attempt" in decision.clauses[-1].detail


def test_a_figure_that_cannot_be_computed_fails(measured: dict[str, Measured]) -> None:
    good = measured["oracle"]
    figures = msgspec.structs.replace(
        good.figures, trusted=0, cost_per_trusted_usd=None, latency_p95_s=None
    )
    decision = decide_release(
        parse_policy(POLICY), measured["baseline"], Measured(figures=figures, scan=good.scan)
    )
    verdicts = _verdicts(decision)
    assert verdicts["cost"] == verdicts["latency"] == "undefined"
    assert not decision.passed


def test_a_clause_left_out_is_listed_not_gated(measured: dict[str, Measured]) -> None:
    policy = parse_policy("[latency]\nmax_p95_s = 30\n")
    decision = decide_release(policy, measured["baseline"], measured["naive-retry"])
    assert decision.passed  # naive-retry is fast; nothing else was asked
    assert _verdicts(decision) == {c: "not_gated" for c in CLAUSES} | {"latency": "pass"}
    assert "NOT_GATED forbidden_effects: the policy has no [forbidden_effects] table" in (
        render_release(decision)
    )


def test_zero_of_nine_is_at_most_twenty_eight_percent() -> None:
    assert upper_bound(0, 9, 0.95) == pytest.approx(0.283, abs=5e-4)


@given(
    n=st.integers(1, 200),
    data=st.data(),
    confidence=st.floats(0.51, 0.999),
)
def test_the_upper_bound_covers_the_rate_and_grows_with_the_count(
    n: int, data: st.DataObject, confidence: float
) -> None:
    count = data.draw(st.integers(0, n))
    bound = upper_bound(count, n, confidence)
    assert count / n <= bound <= 1.0
    if count < n:
        assert upper_bound(count + 1, n, confidence) >= bound
    if count == 0:
        assert math.isclose(bound, 1 - (1 - confidence) ** (1 / n), rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize(
    ("baseline_cost", "candidate_cost", "verdict"),
    [(0.10, 0.20, "fail"), (0.10, 0.15, "pass"), (0.0, 0.0, "pass"), (0.0, 0.01, "fail")],
)
def test_cost_against_the_baseline(
    measured: dict[str, Measured], baseline_cost: float, candidate_cost: float, verdict: str
) -> None:
    def costing(m: Measured, cost: float) -> Measured:
        return Measured(
            figures=msgspec.structs.replace(m.figures, cost_per_trusted_usd=cost), scan=m.scan
        )

    policy = parse_policy("[cost]\nmax_ratio_to_baseline = 1.5\n")
    decision = decide_release(
        policy,
        costing(measured["baseline"], baseline_cost),
        costing(measured["oracle"], candidate_cost),
    )
    assert _verdicts(decision)["cost"] == verdict
