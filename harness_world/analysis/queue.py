"""Queue time: how long a run's attempts waited before they started (context, never evidence).

Each record's context keeps ``queue_s``: the seconds from when its run scheduled the attempt
to when the attempt opened (its world loaded), e.g. behind other attempts for a worker, a
Ray batch or a slot of ``--concurrency``. Like ``latency_s`` it is outside the digest and
replay never checks it: it describes the run's machinery, not the agent. A serial run's
attempts each wait for all the earlier ones, so there the p95 is most of the run's length;
with ``--workers`` or ``--concurrency`` it shows how long the backlog was.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from harness_world.grading.verifier import SlotResult

__all__ = ["QueueTimes", "queue_line", "queue_times"]


class QueueTimes(msgspec.Struct, frozen=True, kw_only=True):
    """Percentiles of the queue times of a run's attempts.

    Attributes:
        p50_s: Median seconds waited.
        p95_s: 95th percentile.
        attempts: Executed attempts whose record measured it.
    """

    p50_s: float
    p95_s: float
    attempts: int


def queue_times(slots: Iterable[SlotResult]) -> QueueTimes | None:
    """The queue times of the slots that recorded one (None: none did, e.g. older records)."""
    import numpy as np

    waits = [s.queue_s for s in slots if s.queue_s > 0]
    if not waits:
        return None
    return QueueTimes(
        p50_s=float(np.percentile(waits, 50)),
        p95_s=float(np.percentile(waits, 95)),
        attempts=len(waits),
    )


def queue_line(slots: Iterable[SlotResult]) -> str:
    """``queue time ...`` as one line of the report (empty when nothing measured it)."""
    q = queue_times(slots)
    if q is None:
        return ""
    return (
        f"queue time (scheduled to started; context, not evidence): p50 {q.p50_s:.3f} s, "
        f"p95 {q.p95_s:.3f} s over {q.attempts} attempts\n"
    )
