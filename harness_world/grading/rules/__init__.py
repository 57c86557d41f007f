"""Every finding about a record, by family, assembled into the one registry `FINDINGS`.

Families: ``state`` (R ⊆ Δ ⊆ A), ``trace_criteria`` (what a task lists by name), ``grounded``
(the ids a write names were given or shown first, on by default), ``answer``
(the answer and what the user was told), ``harness_world.grading.trusted`` (forbidden
transitions, receipts, the fault schedule), ``attack`` (the attacker's goal), ``budget``
(budgets and prose), ``harness_world.grading.harness`` (the harness layer), ``policy`` (a
task's service policy sheet, beside the grade), ``advice`` and ``advice_task``
(advisories), ``metrics`` (process metrics). Each module declares its entries; the order here
is the grading order of the criteria and the report order of advisories and metrics.
"""

from __future__ import annotations

from harness_world.grading.criteria import Findings
from harness_world.grading.harness import ENTRIES as HARNESS
from harness_world.grading.rules.advice import (
    ANSWERED_WITHOUT_READING,
    EMPTY_FINAL_MESSAGE,
    ENDED_WITH_QUESTION,
    HEDGED_ANSWER,
    NO_WRITES,
    REFUSED_CALLS,
    REPEATED_CALL,
    STOPPED_NEAR_BUDGET,
    UNFOLLOWED_PAGE,
    UNGROUNDED_WRITE,
    WRITE_WITHOUT_READ,
)
from harness_world.grading.rules.advice_task import (
    ACTED_ON_WRONG_ROW,
    ADDED_STEP,
    PARTIAL_FILTER,
    SKIPPED_STEP,
)
from harness_world.grading.rules.answer import ENTRIES as ANSWER
from harness_world.grading.rules.attack import ENTRY as ATTACK
from harness_world.grading.rules.budget import BUDGET, PROSE
from harness_world.grading.rules.grounded import ENTRY as GROUNDED
from harness_world.grading.rules.metrics import ENTRIES as METRICS
from harness_world.grading.rules.policy import ENTRIES as POLICY
from harness_world.grading.rules.state import ENTRIES as STATE
from harness_world.grading.rules.trace_criteria import ENTRIES as TRACE
from harness_world.grading.trusted import ENTRY as TRUSTED

__all__ = ["FINDINGS"]

FINDINGS = Findings(
    [
        *STATE,
        *TRACE,
        GROUNDED,
        *ANSWER,
        TRUSTED,
        ATTACK,
        BUDGET,
        PROSE,
        *HARNESS,
        *POLICY,
        UNFOLLOWED_PAGE,
        NO_WRITES,
        WRITE_WITHOUT_READ,
        UNGROUNDED_WRITE,
        REFUSED_CALLS,
        ENDED_WITH_QUESTION,
        REPEATED_CALL,
        HEDGED_ANSWER,
        STOPPED_NEAR_BUDGET,
        ACTED_ON_WRONG_ROW,
        PARTIAL_FILTER,
        SKIPPED_STEP,
        ADDED_STEP,
        ANSWERED_WITHOUT_READING,
        EMPTY_FINAL_MESSAGE,
        *METRICS,
    ]
)
"""The one findings registry: criteria in grading order (``grade``, then ``harness``, then
``policy``), advisories and process metrics in report order."""
