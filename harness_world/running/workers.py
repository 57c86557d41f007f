"""A run's slots judged in worker processes, in batches: the reader's mapper for ``--workers``.

The reader reads each slot's files once, here, as it always does (`harness_world.running.reader`);
the bytes of a batch of slots go to a worker, which judges each with the reader's own
`Verifier` (the same object: workers are forked from this process, so its trust root, tasks,
loaded worlds, bounds, judgement cache and measures are the ones this process holds) and sends
back the batch's judgements, msgpack-encoded. A batch, not a slot, is one message, so the cost
of a message is spread over many records; a few batches per worker stay in flight, so memory
holds a few batches' bytes, not the run's.
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
# What a forked worker judges with: the reader's verifier, the run's sizes and the measures
# asked for, set in the parent just before the workers are forked (and cleared after).
_JOB: list[tuple[Verifier, Mapping[str, str], Sequence[Measure]]] = []


def batches(items: int, workers: int, most: int = BATCH_MOST, *, per_worker: int = 8) -> int:
    """Items per batch: about ``per_worker`` batches per worker (an even finish), 1 to ``most``."""
    return max(1, min(most, math.ceil(items / (per_worker * max(1, workers)))))


def _judge_batch(batch: list[tuple[Slot, SlotBytes]]) -> bytes:
    """In a worker: judge each slot of a batch from the bytes the reader read."""
    verifier, sizes, measures = _JOB[-1]
    judged = [verifier.judgement(s, sizes, data, measures=measures) for s, data in batch]
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
        _JOB.append((verifier, sizes, measures))
        try:
            judged = list(self._map(chunks, read))
        finally:
            _JOB.pop()
        if verifier.cache is not None:
            verifier.cache.mark_written()  # the workers wrote its entries: bound it here
        return judged

    def _map(
        self, chunks: Iterator[list[Slot]], read: Callable[[Slot], SlotBytes]
    ) -> Iterator[Judgement]:
        """Submit batches with a few in flight per worker; yield judgements in order."""
        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(self.workers, mp_context=context) as pool:
            pending: deque[concurrent.futures.Future[bytes]] = deque()
            for chunk in chunks:
                pending.append(pool.submit(_judge_batch, [(s, read(s)) for s in chunk]))
                while len(pending) >= 3 * self.workers:
                    yield from _RESULTS.decode(pending.popleft().result())
            while pending:
                yield from _RESULTS.decode(pending.popleft().result())
