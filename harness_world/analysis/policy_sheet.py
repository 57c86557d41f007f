"""The policy sheet over a run: how many graded attempts kept each rule, beside the pass rate.

A task may declare a policy sheet (`harness_world.grading.policy_spec.PolicySheet`); its
``policy.*`` verdicts sit beside the grade and never change it. `policy_summary` counts, over
the valid graded attempts whose task has a sheet, those that kept every rule, and per rule
those that broke it, each also among the attempts the grade passed: how much of a pass rate
was earned by breaking the policy. ``report`` prints it (`policy_lines`) under the figures
and puts it in its JSON; an imported benchmark's regrade prints it beside that benchmark's
own reward.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from harness_world.grading.grade import PolicyCheck
from harness_world.grading.rules import FINDINGS

__all__ = ["PolicySummary", "RuleCount", "policy_lines", "policy_summary", "rule_names"]


class RuleCount(msgspec.Struct, frozen=True, kw_only=True):
    """One rule of the sheet over the attempts.

    Attributes:
        rule: Its id (``policy.confirmed``).
        broken: Attempts that broke it.
        broken_passed: Of those, attempts whose grade passed.
    """

    rule: str
    broken: int
    broken_passed: int


class PolicySummary(msgspec.Struct, frozen=True, kw_only=True):
    """The policy sheet over the valid graded attempts whose task has one.

    Attributes:
        attempts: Those attempts.
        kept: Attempts that kept every rule.
        passed: Attempts whose grade passed.
        passed_kept: Passed attempts that kept every rule too.
        rules: Per rule, in registry order.
    """

    attempts: int
    kept: int
    passed: int
    passed_kept: int
    rules: list[RuleCount]


def rule_names() -> list[str]:
    """The policy sheet's rules, in registry order."""
    return [entry.name for entry in FINDINGS.of_kind("policy")]


def _broken(check: PolicyCheck) -> set[str]:
    return {line.split(":", 1)[0] for line in check.failed}


def policy_summary(
    attempts: Iterable[tuple[bool, PolicyCheck | msgspec.UnsetType]],
) -> PolicySummary | None:
    """Count the sheet over (passed, sheet) pairs of graded attempts (None: no sheet at all).

    Pairs whose sheet is unset (a task without one) are left out.
    """
    sheets = [(p, s) for p, s in attempts if not isinstance(s, msgspec.UnsetType)]
    if not sheets:
        return None
    broken = [(passed, _broken(sheet)) for passed, sheet in sheets]
    rules = [
        RuleCount(
            rule=name,
            broken=sum(name in names for _, names in broken),
            broken_passed=sum(passed and name in names for passed, names in broken),
        )
        for name in rule_names()
    ]
    return PolicySummary(
        attempts=len(broken),
        kept=sum(not names for _, names in broken),
        passed=sum(passed for passed, _ in broken),
        passed_kept=sum(passed and not names for passed, names in broken),
        rules=rules,
    )


def policy_lines(
    summary: PolicySummary,
    beside: str = "the grade",
    unit: str = "attempts",
    passed: str = "passed",
) -> list[str]:
    """The sheet as text lines: the overall sentence, then one line per rule.

    ``beside`` names what the sheet stands beside, ``unit`` what was graded and ``passed``
    what the grade said (an imported benchmark's regrade: its reward, runs, rewarded).
    """
    lines = [
        f"policy sheet (beside {beside}, never in it): {summary.kept} of {summary.attempts} "
        f"graded {unit} kept every rule; {summary.passed_kept} of the {summary.passed} "
        f"{passed} {unit} did"
    ]
    width = max(len(r.rule) for r in summary.rules)
    lines += [
        f"  {r.rule:<{width}}  broken in {r.broken} of {summary.attempts}, "
        f"{r.broken_passed} of them {passed}"
        for r in summary.rules
    ]
    return lines
