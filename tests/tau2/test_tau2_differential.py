"""Differential property: our tau2_retail world against τ²'s own tools, call by call.

Random sequences of well- and ill-formed calls (tests/tau2/differential.py) run through both,
in both argument modes; every observation string, error and the whole end state are compared.
Reduced in CI, long under HW_FULL=1 (figures: ``python -m tests.tau2.differential N``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_world.tau2.arguments import coerce_call
from tests.conftest import examples
from tests.tau2.reference import needs_tau2

pytestmark = [pytest.mark.tau2, needs_tau2]


@pytest.fixture(scope="module")
def both() -> Any:
    from tests.tau2.differential import Differential, Pools

    return Pools.load(), Differential.create()


@settings(
    max_examples=examples(25, 600),
    suppress_health_check=[HealthCheck.large_base_example, HealthCheck.too_slow],
)
@given(data=st.data())
def test_every_call_and_end_state_agree_with_tau2(both: Any, data: st.DataObject) -> None:
    from tests.tau2.differential import COERCED, calls

    pools, diff = both

    def pick(options: Any) -> Any:
        return data.draw(st.sampled_from(list(options)))

    sequence = calls(pools, pick, data.draw(st.integers(1, 6)), 0.35)
    # τ²-compatible arguments: results, errors and end state all equal; ill-formed calls that
    # are not coerced are refused by both sides (only the error text differs).
    outcomes, same_state = diff.run(sequence, "tau2")
    assert same_state, sequence
    for (tool, args, label), outcome in zip(sequence, outcomes, strict=True):
        if label == "well" or label in COERCED:
            assert outcome == "same", (tool, args, label, outcome)
        else:
            assert outcome in ("same", "error_text"), (tool, args, label, outcome)
    # strict arguments: τ² accepts more, exactly the calls the compatible mode coerces
    outcomes, same_state = diff.run(sequence, "strict")
    accepted_by_tau2_only = False
    for (tool, args, label), outcome in zip(sequence, outcomes, strict=True):
        if outcome == "tau2_only":
            assert coerce_call(diff.world, tool, args)[1], (tool, args, label)
            accepted_by_tau2_only = True
        elif label == "well" and not accepted_by_tau2_only:
            assert outcome == "same", (tool, args, outcome)
        else:
            assert outcome in ("same", "error_text") or accepted_by_tau2_only
    assert same_state or accepted_by_tau2_only
