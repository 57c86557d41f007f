"""The weighted suite pass rate: each task's per-attempt pass rate, weighted as its task file says.

A task file may declare ``weight`` (a positive number, 1 when not declared). When some task of
a run weighs other than 1, ``report`` prints the weighted mean of the per-task pass rates beside
the unweighted one; the macro-average is `harness_world.stats.pass_k_summary` at k = 1, whose
per-task estimate is passed / valid attempts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from harness_world.stats import RunRow, pass_k_summary, tally_runs

__all__ = ["WeightedMean", "weighted_mean"]


class WeightedMean(msgspec.Struct, frozen=True, kw_only=True):
    """The suite's mean per-task pass rate with the declared task weights.

    Attributes:
        tasks: Tasks with at least one graded valid attempt (the tasks averaged).
        mean: ``sum_t w_t * p_t / sum_t w_t``, with ``p_t`` the task's passed / valid attempts.
        unweighted: The same mean with every weight 1.
        weights: The weights other than 1 among the tasks averaged, by task id.
    """

    tasks: int
    mean: float
    unweighted: float
    weights: dict[str, float]


def weighted_mean(rows: Sequence[RunRow], weights: Mapping[str, float]) -> WeightedMean | None:
    """The weighted mean per-task pass rate of one configuration's rows (see `WeightedMean`).

    Args:
        rows: Graded valid attempts of one configuration.
        weights: Declared weights by task id; a task not named weighs 1.

    Returns:
        None when no task averaged weighs other than 1 (the weighted figure would be the
        unweighted one), or when there are no rows.
    """
    tallies = tally_runs(rows, rows[0].config) if rows else []
    declared = {t.task_id: weights[t.task_id] for t in tallies if weights.get(t.task_id, 1) != 1}
    if not declared:
        return None
    every = {t.task_id: weights.get(t.task_id, 1.0) for t in tallies}
    return WeightedMean(
        tasks=len(tallies),
        mean=pass_k_summary(tallies, 1, weights=every).pass_hat_k,
        unweighted=pass_k_summary(tallies, 1).pass_hat_k,
        weights=dict(sorted(declared.items())),
    )
