"""Statistics for comparing agent configurations over repeated runs of a task suite.

Every estimator works on per-task counts first and averages over tasks second, because task
difficulty varies too much for a pooled rate to stand in for a suite. A computation that would
need more data than it was given raises `StatsInputError` (a `ValueError`) naming what was
missing; nothing returns NaN. Results are frozen `msgspec.Struct` objects, so they encode to
JSON unchanged; inputs are put in a canonical order first and sums are exact, so reordering the
input never changes a result. SciPy is imported only inside the functions that need it.

There is one comparison verb: `decide` takes a `Design` (what is paired with what, the task
families, the gate asked, its one-sided level, the seed) and returns a `Decision` with its
figures; `assess` runs it the way ``compare`` does over run rows, with missing data, a worst
case and a tipping point. Beside it, descriptive figures: pass^k and pass@k, proportion
intervals, the paired noise band, solid / flaky / broken classes and flips, McNemar. A rate is
a fraction; a difference is candidate minus baseline, also a fraction (the CLI prints points).

Example:
    >>> from harness_world import stats
    >>> stats.pass_hat_k_exact(10, 8, 3)
    Fraction(7, 15)
    >>> stats.pass_at_k(10, 8, 3)
    1.0

"""

from harness_world.stats.decision import (
    Contrast,
    Decision,
    Design,
    GateName,
    Method,
    TaskChange,
    decide,
    holm_adjust,
    mean_bounds,
    p_values,
    paired_samples,
    task_changes,
)
from harness_world.stats.estimators import (
    DEFAULT_ALPHA,
    DEFAULT_Z,
    SMALL_SAMPLE_TASKS,
    ClassCounts,
    Comparison,
    ExcludedTask,
    Flip,
    McNemarResult,
    Multiplier,
    NoiseBand,
    PairedTask,
    PassKSummary,
    ProportionInterval,
    RunRow,
    StatsInputError,
    TaskClass,
    TaskPassK,
    TaskTally,
    Verdict,
    band_multiplier,
    classify,
    clopper_pearson_interval,
    compare_results,
    count_classes,
    flipped_tasks,
    mcnemar_midp,
    noise_band,
    pair_tallies,
    pass_at_k,
    pass_at_k_exact,
    pass_hat_k,
    pass_hat_k_exact,
    pass_k_summary,
    regressions,
    tally_runs,
    wilson_interval,
)
from harness_world.stats.gate import (
    ComparisonOutcome,
    GateOptions,
    GateResult,
    MissingTask,
    Plan,
    PlanRow,
    assess,
    gate_options,
    outcome_of,
    plan_power,
    task_families,
)
from harness_world.stats.wild import DEFAULT_SEED, bell_mccaffrey_df

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_SEED",
    "DEFAULT_Z",
    "SMALL_SAMPLE_TASKS",
    "ClassCounts",
    "Comparison",
    "ComparisonOutcome",
    "Contrast",
    "Decision",
    "Design",
    "ExcludedTask",
    "Flip",
    "GateName",
    "GateOptions",
    "GateResult",
    "McNemarResult",
    "Method",
    "MissingTask",
    "Multiplier",
    "NoiseBand",
    "PairedTask",
    "PassKSummary",
    "Plan",
    "PlanRow",
    "ProportionInterval",
    "RunRow",
    "StatsInputError",
    "TaskChange",
    "TaskClass",
    "TaskPassK",
    "TaskTally",
    "Verdict",
    "assess",
    "band_multiplier",
    "bell_mccaffrey_df",
    "classify",
    "clopper_pearson_interval",
    "compare_results",
    "count_classes",
    "decide",
    "flipped_tasks",
    "gate_options",
    "holm_adjust",
    "mcnemar_midp",
    "mean_bounds",
    "noise_band",
    "outcome_of",
    "p_values",
    "pair_tallies",
    "paired_samples",
    "pass_at_k",
    "pass_at_k_exact",
    "pass_hat_k",
    "pass_hat_k_exact",
    "pass_k_summary",
    "plan_power",
    "regressions",
    "tally_runs",
    "task_changes",
    "task_families",
    "wilson_interval",
]
