"""Pending is not passed: a judged run's attempts with unreviewed prose, settled for counting.

A grade whose automated criteria all pass while prose criteria stand ``not_reviewed`` is
``passed_automated`` (`harness_world.grading.GradeState`): the verifier judges such a slot
``pending`` and not ``passed``, because an unreviewed reply may say anything (the task's own
instruction, or the opposite of what it asks). `settle` is the one step every counting reader
(``report``, ``compare``, ``gate``) takes between the run's reader and its figures:

- the run's standing verdict reviews (`harness_world.running.reviews.standing_verdicts`, the
  same reading ``review`` scores with) decide pending attempts: a prose criterion a review
  failed fails the attempt, and an attempt whose every open prose criterion a review passed
  is a pass;
- what is still pending after that counts as passed only when asked (``--count-pending``),
  and stays counted as pending either way, so every output can say how many there were.

Reviews of automated criteria change no count here: ``review`` reads those into its corrected
score. Reviews are read only when some attempt is pending; with a trusted key, only the
reviews it signed count (`harness_world.running.reviews.trusted_reviews`).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from harness_world.grading.verifier import SlotResult
from harness_world.running.reviews import prose_review, scan_reviews, standing_verdicts
from harness_world.running.rundir import RunCounts, RunScan, count_slots

__all__ = ["COUNT_PENDING_HELP", "pending_line", "settle"]

COUNT_PENDING_HELP = (
    "count attempts whose automated criteria passed while prose criteria stand unreviewed "
    "(passed_automated, pending review) as passed; by default they are not passes (review "
    "records decide them), and every figure says how many there were"
)
"""``--help`` of ``--count-pending`` (``report``, ``compare``, ``gate``)."""


def _settled(slot: SlotResult, given: dict[str, str], count_pending: bool) -> SlotResult:
    """One pending slot after its standing reviews, counted as asked."""
    state, open_ = prose_review(slot.not_reviewed, given)
    if state == "failed":
        failed = [f"{c}: failed on review" for c in slot.not_reviewed if given.get(c) == "fail"]
        return msgspec.structs.replace(
            slot, passed=False, pending=False, not_reviewed=open_, failed=slot.failed + failed
        )
    if state == "passed":
        return msgspec.structs.replace(slot, passed=True, pending=False, not_reviewed=[])
    return msgspec.structs.replace(slot, passed=count_pending, not_reviewed=open_)


def settle(scan: RunScan, *, count_pending: bool = False, trust_key: Path | None = None) -> RunScan:
    """The scan with its pending attempts decided by reviews, then counted as asked.

    Args:
        scan: A run as its reader judged it.
        count_pending: Count the attempts still pending as passed (they stay counted in
            ``counts.pending``, with ``counts.pending_counted`` set).
        trust_key: The reader's trusted key: only reviews it signed decide anything.

    Raises:
        harness_world.running.reviews.ReviewError: when some attempt is pending and the
            run's review file cannot be read or its chain is broken.
        harness_world.evidence.signing.SigningError: when ``trust_key`` cannot be read.
    """
    pending = [s for s in scan.slots if s.pending]
    verdicts: dict[tuple[str, int], dict[str, str]] = {}
    if pending and scan.reviews:
        bound = {(s.task_id, s.sample): s.digest for s in scan.slots if s.digest}
        verdicts, _ = standing_verdicts(scan_reviews(scan, trust_key).reviews, bound)
    slots = [
        _settled(s, verdicts.get((s.task_id, s.sample), {}), count_pending) if s.pending else s
        for s in scan.slots
    ]
    reviewed = sum(
        before.pending and after.counted and not after.pending
        for before, after in zip(scan.slots, slots, strict=True)
    )
    counts: RunCounts = msgspec.structs.replace(
        count_slots(slots), pending_counted=count_pending, reviewed=reviewed
    )
    return msgspec.structs.replace(scan, slots=slots, counts=counts)


def pending_line(counts: RunCounts, who: str = "") -> str:
    """One line saying how many valid attempts were pending and how they were counted."""
    head = f"{who}: " if who else ""
    reviewed = f"; {counts.reviewed} decided by review records" if counts.reviewed else ""
    how = (
        "counted as passed (--count-pending)"
        if counts.pending_counted
        else "not counted as passed (--count-pending counts them)"
    )
    return (
        f"{head}pending review (passed_automated: automated criteria passed, prose not "
        f"reviewed): {counts.pending} of {counts.valid} valid attempts, {how}{reviewed}"
    )
