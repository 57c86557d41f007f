"""A run's slots judged in worker processes, in batches: the reader's mapper for ``--workers``.

A batch of slots goes to a worker: a forked copy of the reading process, which holds the
reader's open run, its read function and its `Verifier` (the same objects: its trust root,
tasks, loaded worlds, bounds, judgement cache and measures are the ones the reader holds). The
worker reads each slot's files once with that read function (`harness_world.running.reader.
read_slot`, the reader's one way to read a slot, inside the run's real directory as resolved
when the run was opened), judges each from those bytes and sends back the batch's
judgements, msgpack-encoded. A batch, not a slot, is one message, so the cost of a message is
spread over many records; the reading process sends slot descriptions only, so on two cores
it takes next to no time from the workers (reading and pickling every file's bytes there cost
about a seventh of the workers' time); a few batches per worker stay in flight.
"""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence

import attrs
import msgspec

from harness_world.grading.verifier import Judgement, Measure, Slot, SlotBytes, Verifier

__all__ = ["BATCH_MOST", "ProcessSlots", "batches"]

BATCH_MOST = 64
"""The most slots one batch holds."""

_RESULTS = msgspec.msgpack.Decoder(list[Judgement])
# What a forked worker reads and judges with: the reader's read function, its verifier, the
# run's sizes and the measures asked for, set in the parent just before the workers are
# forked (and cleared after).
_JOB: list[tuple[Callable[[Slot], SlotBytes], Verifier, Mapping[str, str], Sequence[Measure]]] = []


def batches(items: int, workers: int, most: int = BATCH_MOST, *, per_worker: int = 8) -> int:
    """Items per batch: about ``per_worker`` batches per worker (an even finish), 1 to ``most``."""
    return max(1, min(most, math.ceil(items / (per_worker * max(1, workers)))))


def _judge_batch(batch: list[Slot]) -> bytes:
    """In a worker: read each slot of a batch once (the reader's read function), then judge it."""
    read, verifier, sizes, measures = _JOB[-1]
    judged = [verifier.judgement(s, sizes, read(s), measures=measures) for s in batch]
    if verifier.cache is not None:
        verifier.cache.flush()  # a forked worker ends without exit handlers: write them now
    return msgspec.msgpack.encode(judged)


@attrs.frozen(slots=True)
class ProcessSlots:
    """Judges a read's slots in ``workers`` forked worker processes, in batches.

    Attributes:
        workers: Worker processes (at least 2 to be worth it; 1 still works).
        batch: Slots per batch (None: `batches` of the slots).
    """

    workers: int
    batch: int | None = None

    def __call__(
        self,
        verifier: Verifier,
        slots: Sequence[Slot],
        read: Callable[[Slot], SlotBytes],
        sizes: Mapping[str, str],
        measures: Sequence[Measure],
    ) -> list[Judgement]:
        """Every slot's judgement, in slot order (the reader's `SlotMapper`)."""
        if not slots:
            return []
        size = self.batch or batches(len(slots), self.workers)
        chunks = (list(slots[i : i + size]) for i in range(0, len(slots), size))
        _JOB.append((read, verifier, sizes, measures))
        try:
            judged = list(self._map(chunks))
        finally:
            _JOB.pop()
        if verifier.cache is not None:
            verifier.cache.mark_written()  # the workers wrote its entries: bound it here
        return judged

    def _map(self, chunks: Iterator[list[Slot]]) -> Iterator[Judgement]:
        """Submit batches with a few in flight per worker; yield judgements in order."""
        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(self.workers, mp_context=context) as pool:
            pending: deque[concurrent.futures.Future[bytes]] = deque()
            for chunk in chunks:
                pending.append(pool.submit(_judge_batch, chunk))
                while len(pending) >= 3 * self.workers:
                    yield from _RESULTS.decode(pending.popleft().result())
            while pending:
                yield from _RESULTS.decode(pending.popleft().result())
