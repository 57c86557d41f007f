"""Statistics for comparing agent configurations over repeated runs of a task suite.

Every estimator here works on per-task counts first and averages over tasks second, because
task difficulty varies too much for a pooled rate to stand in for a suite. Inputs are validated:
a computation that would need more data than it was given raises `StatsInputError` (a
`ValueError`) with a message naming what was missing; nothing returns NaN. Results that leave
this module are frozen `msgspec.Struct` objects, so they encode to JSON unchanged. SciPy is
imported only inside the functions that need it, so importing this module stays cheap.

Conventions used throughout:

* A *pass rate* is a fraction in [0, 1]; a *difference* is candidate minus baseline, also a
  fraction (the CLI prints points, i.e. fractions times 100).
* Sums use `math.fsum` (or exact integer/`Fraction` arithmetic) and inputs are put in a canonical
  order before any order-sensitive step, so reordering the input never changes a result, not
  even in the last bit.
* The descriptive band multiplier is a normal quantile *z* for 30 or more paired tasks and a
  Student *t* quantile with n - 1 degrees of freedom below that (see `band_multiplier`), as
  in the seed articles. The ``compare`` gate does not use that switch: `assess` / `decide`
  (`harness_world.stats.gate`) test one-sidedly with a wild cluster bootstrap-t with Webb
  weights over task families (CR2-studentized, skew-corrected) and floor a degenerate spread;
  ``non-inferior`` also needs the tasks `hidden_class.min_tasks` names for its margin;
  `gate_options` checks a gate's options as a person gives them (points, alpha or z).

Example:
    >>> from harness_world import stats
    >>> stats.pass_hat_k_exact(10, 8, 3)
    Fraction(7, 15)
    >>> stats.pass_at_k(10, 8, 3)
    1.0

"""

from harness_world.stats.cluster import bell_mccaffrey_df, cr2_variance, effective_clusters
from harness_world.stats.estimators import (
    DEFAULT_ALPHA,
    DEFAULT_Z,
    SMALL_SAMPLE_TASKS,
    BootstrapInterval,
    ClassCounts,
    ClusteredMean,
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
    TasksNeeded,
    TaskTally,
    Verdict,
    band_multiplier,
    classify,
    clopper_pearson_interval,
    clustered_standard_error,
    compare_results,
    count_classes,
    flipped_tasks,
    mcnemar_midp,
    noise_band,
    pair_tallies,
    paired_cluster_bootstrap,
    pass_at_k,
    pass_at_k_exact,
    pass_hat_k,
    pass_hat_k_exact,
    pass_k_summary,
    regressions,
    tally_runs,
    tasks_needed,
    wilson_interval,
)
from harness_world.stats.gate import (
    Decision,
    GateName,
    GateResult,
    MissingTask,
    Plan,
    PlanRow,
    TaskChange,
    assess,
    decide,
    gate_passes,
    holm_adjust,
    mean_bounds,
    p_value,
    plan_power,
    task_families,
    tasks_for_power,
)
from harness_world.stats.options import GateOptions, gate_options
from harness_world.stats.outcome import ComparisonOutcome, outcome_of
from harness_world.stats.wild import WildClusterTest, wild_cluster_test

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_Z",
    "SMALL_SAMPLE_TASKS",
    "BootstrapInterval",
    "ClassCounts",
    "ClusteredMean",
    "Comparison",
    "ComparisonOutcome",
    "Decision",
    "ExcludedTask",
    "Flip",
    "GateName",
    "GateOptions",
    "GateResult",
    "McNemarResult",
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
    "TasksNeeded",
    "Verdict",
    "WildClusterTest",
    "assess",
    "band_multiplier",
    "bell_mccaffrey_df",
    "classify",
    "clopper_pearson_interval",
    "clustered_standard_error",
    "compare_results",
    "count_classes",
    "cr2_variance",
    "decide",
    "effective_clusters",
    "flipped_tasks",
    "gate_options",
    "gate_passes",
    "holm_adjust",
    "mcnemar_midp",
    "mean_bounds",
    "noise_band",
    "outcome_of",
    "p_value",
    "pair_tallies",
    "paired_cluster_bootstrap",
    "pass_at_k",
    "pass_at_k_exact",
    "pass_hat_k",
    "pass_hat_k_exact",
    "pass_k_summary",
    "plan_power",
    "regressions",
    "tally_runs",
    "task_families",
    "tasks_for_power",
    "tasks_needed",
    "wild_cluster_test",
    "wilson_interval",
]
