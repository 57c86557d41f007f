"""The release protocol: a gate over every promise a candidate must keep to ship.

- `load_policy` reads a release policy (TOML): forbidden effects with the confidence of their
  upper bound, over-blocking of benign counterparts, completion non-inferiority, cost per
  trusted completion, latency, critical tasks and families.
- `evaluate_release` replays a baseline and a candidate run directory once each and decides
  every clause; `render_release` prints the `ReleaseDecision`, which passes only when every
  gated clause holds.
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

__all__ = [
    "CLAUSES",
    "ClauseResult",
    "PolicyError",
    "ReleaseDecision",
    "ReleaseInputError",
    "ReleasePolicy",
    "RunFigures",
    "decide_release",
    "evaluate_release",
    "load_policy",
    "measure_run",
    "parse_policy",
    "render_release",
    "upper_bound",
]
