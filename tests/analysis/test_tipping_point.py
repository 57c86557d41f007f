"""The tipping point takes lost runs most damaging first, so harmless losses do not count."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world import stats
from harness_world.stats import MissingTask, TaskTally
from harness_world.stats.gate import _lost_runs, _padded
from tests.analysis.test_gate import rows_for

_THIRTEEN = {
    "m00": (3, 5, 4, 5), "m01": (3, 5, 4, 5), "m02": (3, 5, 2, 5), "m03": (2, 5, 3, 5),
    "m04": (3, 5, 2, 5), "m05": (1, 5, 2, 5), "m06": (2, 5, 5, 5), "m07": (1, 5, 5, 5),
    "m08": (3, 5, 2, 5), "m09": (3, 5, 3, 5),
    "z0": (1, 5, 3, 3), "z1": (1, 5, 3, 3), "z2": (2, 5, 3, 3),
}  # fmt: skip
# Eight of the complete tasks twice: with the two tasks below the suite has 23 tasks, and its
# gain of 21.7 points clears the floor a hidden broken class sets there (17.4 points).
STEADY = _THIRTEEN | {
    f"{task}b": tally
    for task, tally in _THIRTEEN.items()
    if task[0] == "m" and task not in ("m00", "m09")
}


def _tipping(spec: dict[str, tuple[int, int, int, int]]) -> int | None:
    _, result = stats.assess(
        rows_for(spec), "main", "pr", gate="improved", allow_missing=True, min_runs=5
    )
    assert result.passed
    return result.tipping_point


def test_losses_a_failure_cannot_worsen_do_not_count() -> None:
    # a0 and a1 never passed on the candidate: counting their two lost runs each as failures
    # changes nothing, so the tipping point is the one of the suite where they are complete.
    lossy = STEADY | {"a0": (0, 5, 0, 3), "a1": (1, 5, 0, 3)}
    complete = STEADY | {"a0": (0, 5, 0, 5), "a1": (1, 5, 0, 5)}
    assert _tipping(complete) is not None
    assert _tipping(lossy) == _tipping(complete)


def _mean(paired: list[stats.PairedTask]) -> float:
    return math.fsum(p.difference for p in paired) / len(paired)


tally = st.tuples(st.integers(0, 4), st.integers(1, 4)).map(lambda t: (min(t), max(t)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(tally, tally), min_size=2, max_size=6), st.randoms())
def test_each_prefix_drops_the_mean_at_least_as_much_as_any_other_order(
    sides: list[tuple[tuple[int, int], tuple[int, int]]], rng: random.Random
) -> None:
    base = {f"t{i}": TaskTally(task_id=f"t{i}", runs=b[1], passes=b[0]) for i, (b, _) in
            enumerate(sides)}  # fmt: skip
    cand = {f"t{i}": TaskTally(task_id=f"t{i}", runs=c[1], passes=c[0]) for i, (_, c) in
            enumerate(sides)}  # fmt: skip
    missing = [MissingTask(task_id=t, expected_runs=6, baseline_runs=base[t].runs,
               candidate_runs=cand[t].runs, reason="") for t in base]  # fmt: skip
    greedy = _lost_runs(base, cand, missing)
    other = list(greedy)
    rng.shuffle(other)
    for count in range(len(greedy) + 1):
        best = _mean(_padded(base, cand, greedy[:count]))
        assert best <= _mean(_padded(base, cand, other[:count])) + 1e-12
