"""The release protocol: a gate over every promise a candidate must keep to ship.

- `load_policy` reads a release policy (TOML): forbidden effects with the confidence of their
  upper bound, over-blocking of benign counterparts, completion non-inferiority, cost per
  trusted completion, latency, critical tasks and families.
- `evaluate_release` replays a baseline and a candidate run directory once each and decides
  every clause; `render_release` prints the `ReleaseDecision`, which passes only when every
  gated clause holds.
- Held-out discipline: a split is frozen and its ledger appended to by
  `harness_world.running.heldout`; `heldout_use` counts the candidates evaluated on it, and
  `near_duplicates` flags held-out instructions that paraphrase development ones.
- Ablations: `harness_world.release.ablation` runs the baseline and one arm per changed agent
  setting as a crossed, paired run (``run --ablate``) and compares every arm with the baseline.
- The input files (policies, review batches) are read by `harness_world.release.inputs`:
  bounded, regular files only, every failure one message naming the file.
- Human review: `add_reviews` keeps a person's verdicts beside a run (never in its evidence);
  `review_summary` reads the original, corrected and accepted scores side by side.
"""

from harness_world.release.figures import ReleaseInputError, RunFigures, measure_run
from harness_world.release.gate import (
    CLAUSES,
    ClauseResult,
    ReleaseDecision,
    decide_release,
    evaluate_release,
    render_release,
    upper_bound,
)
from harness_world.release.policy import PolicyError, ReleasePolicy, load_policy, parse_policy
from harness_world.release.review import (
    ReviewError,
    ReviewRequest,
    ReviewSummary,
    add_reviews,
    review_summary,
)
from harness_world.release.split import (
    HeldOutUse,
    NearDuplicate,
    heldout_use,
    near_duplicates,
    tasks_from,
)

__all__ = [
    "CLAUSES",
    "ClauseResult",
    "HeldOutUse",
    "NearDuplicate",
    "PolicyError",
    "ReleaseDecision",
    "ReleaseInputError",
    "ReleasePolicy",
    "ReviewError",
    "ReviewRequest",
    "ReviewSummary",
    "RunFigures",
    "add_reviews",
    "decide_release",
    "evaluate_release",
    "heldout_use",
    "load_policy",
    "measure_run",
    "near_duplicates",
    "parse_policy",
    "render_release",
    "review_summary",
    "tasks_from",
    "upper_bound",
]
