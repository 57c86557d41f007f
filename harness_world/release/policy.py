"""A release policy: the clauses a candidate must meet to ship, read from a TOML file.

Every table is optional; a clause the policy leaves out is listed in the decision as not
gated, so a reader sees what was never asked. Unknown tables and keys are refused, and every
error names the file, the key and what was expected.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from harness_world.errors import HarnessWorldError
from harness_world.release.inputs import parse_toml, read_toml

__all__ = [
    "CompletionClause",
    "CostClause",
    "CriticalClause",
    "ForbiddenClause",
    "LatencyClause",
    "OverBlockingClause",
    "PolicyError",
    "ReleasePolicy",
    "load_policy",
    "parse_policy",
]

Confidence = Annotated[float, msgspec.Meta(gt=0.5, lt=1.0)]
Fraction01 = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]


class PolicyError(HarnessWorldError, ValueError):
    """A release policy file that cannot be read, is not TOML, or breaks its schema."""


class ForbiddenClause(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[forbidden_effects]``: attempts with a forbidden transition, over valid attempts.

    Attributes:
        max_count: Attempts of the candidate allowed to make a forbidden transition.
        confidence: One-sided confidence of the Clopper-Pearson upper bound on the rate (0 of
            9 at 0.95 is "at most 28 %", never "never").
        max_upper_bound: When set, that upper bound must not exceed it (a fraction): it is how
            a policy demands enough attempts for a zero to mean something.
    """

    max_count: Annotated[int, msgspec.Meta(ge=0)] = 0
    confidence: Confidence = 0.95
    max_upper_bound: Fraction01 | None = None


class OverBlockingClause(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[over_blocking]``: benign counterparts the candidate refused or left undone.

    Attributes:
        max_rate: The largest share of benign attempts that may end as a safe stop.
        confidence: One-sided confidence of the reported Clopper-Pearson upper bound.
        gate_on: ``observed`` compares the observed rate with ``max_rate``; ``upper_bound``
            compares the bound (stricter: it needs enough benign attempts).
    """

    max_rate: Fraction01
    confidence: Confidence = 0.95
    gate_on: Literal["observed", "upper_bound"] = "observed"


class CompletionClause(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[completion]``: the candidate's pass rate non-inferior to the baseline's.

    Decided by the ``compare --gate non-inferior`` test (`harness_world.stats.assess`).

    Attributes:
        margin_points: The largest drop tolerated, in points (0 < margin <= 100).
        alpha: One-sided level of the test.
        clusters: Cluster over task families (``compare --no-clusters`` is false).
        allow_missing: Decide on the observed runs when some are missing.
    """

    margin_points: Annotated[float, msgspec.Meta(gt=0.0, le=100.0)]
    alpha: Annotated[float, msgspec.Meta(gt=0.0, lt=0.5)] = 0.025
    clusters: bool = True
    allow_missing: bool = False


class CostClause(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[cost]``: US dollars spent (failed tries included) per trusted completion.

    Attributes:
        max_per_trusted_usd: The candidate's cost per trusted completion must not exceed it.
        max_ratio_to_baseline: Nor this multiple of the baseline's. It fails when the baseline
            has no trusted completion (undefined) or cost nothing while the candidate did.
    """

    max_per_trusted_usd: Annotated[float, msgspec.Meta(ge=0.0)] | None = None
    max_ratio_to_baseline: Positive | None = None


class LatencyClause(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[latency]``: wall-clock seconds per attempt (a record's context, not its evidence).

    Attributes:
        max_p95_s: The 95th percentile must not exceed it.
        max_p50_s: Nor the median this, when set.
    """

    max_p95_s: Positive
    max_p50_s: Positive | None = None


class CriticalClause(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[critical]``: tasks and task families that must pass on their own.

    Attributes:
        tasks: Task ids.
        families: Task family names (every task of the family counts together).
        min_pass_rate: The pass rate each must reach over its valid attempts (1.0: all).
    """

    tasks: list[str] = []
    families: list[str] = []
    min_pass_rate: Fraction01 = 1.0


class ReleasePolicy(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A release policy: one optional table per clause.

    Attributes:
        name: What the policy is for (printed with the decision).
        forbidden_effects: See `ForbiddenClause`.
        over_blocking: See `OverBlockingClause`.
        completion: See `CompletionClause`.
        cost: See `CostClause`.
        latency: See `LatencyClause`.
        critical: See `CriticalClause`.
    """

    name: str = ""
    forbidden_effects: ForbiddenClause | None = None
    over_blocking: OverBlockingClause | None = None
    completion: CompletionClause | None = None
    cost: CostClause | None = None
    latency: LatencyClause | None = None
    critical: CriticalClause | None = None


_WHERE = re.compile(r"^(?P<what>.*?)(?: - at `\$\.?(?P<where>[^`]*)`)?$", re.DOTALL)
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<key>[^`]+)`$")


def _explain(source: str, exc: msgspec.ValidationError) -> PolicyError:
    """A policy error naming the file, the dotted key and what was expected."""
    found = _WHERE.match(str(exc))
    what, where = (found["what"], found["where"] or "") if found else (str(exc), "")
    unknown = _UNKNOWN.match(what)
    if unknown:
        key = f"{where}.{unknown['key']}" if where else unknown["key"]
        return PolicyError(f"{source}: key `{key}`: not a release policy key")
    return PolicyError(f"{source}: key `{where or '(top level)'}`: {what}")


def _check(source: str, policy: ReleasePolicy) -> ReleasePolicy:
    """The checks a schema cannot state: a clause that gates nothing is a mistake."""
    cost = policy.cost
    if cost is not None and cost.max_per_trusted_usd is None and cost.max_ratio_to_baseline is None:
        raise PolicyError(
            f"{source}: key `cost`: expected max_per_trusted_usd or max_ratio_to_baseline"
        )
    critical = policy.critical
    if critical is not None and not (critical.tasks or critical.families):
        raise PolicyError(f"{source}: key `critical`: expected a task id in tasks or families")
    return policy


def _policy(data: dict[str, Any], source: str) -> ReleasePolicy:
    try:
        policy = msgspec.convert(data, ReleasePolicy)
    except msgspec.ValidationError as exc:
        raise _explain(source, exc) from None
    return _check(source, policy)


def parse_policy(text: str, source: str = "<policy>") -> ReleasePolicy:
    """A policy from TOML text; ``source`` names it in errors.

    Raises:
        PolicyError: for text that is not TOML or does not fit the schema.
    """
    return _policy(parse_toml(text, source, PolicyError), source)


def load_policy(path: str | Path) -> ReleasePolicy:
    """Read a release policy file.

    Raises:
        PolicyError: when it is unreadable (missing, not a regular file, over
            `harness_world.release.inputs.MAX_INPUT_BYTES`), not TOML, or breaks the schema.
    """
    return _policy(read_toml(path, "the policy", PolicyError), str(path))
