"""``verify`` on Ray (extra ``[ray]``): the one `Verifier` mapped over batches of Ray tasks.

This module holds no trust rule. The driver's run reader (`harness_world.running.reader`)
reads the run directory (manifest, index, tries) and each slot's files once; a Ray task
receives a batch of them with
the verifier's `TrustRoot` and task table, builds the same `Verifier` (once per worker
process and table) and calls the same `Verifier.judge` or `Verifier.check_file` the local
verifier calls. Nothing of a record chooses a world, code or seed; the results are the local
ones exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import attrs
import msgspec

from harness_world.engine.limits import RECORD_BYTES, read_regular_file
from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.grading.verifier import (
    FileVerdict,
    Judgement,
    Measure,
    Slot,
    SlotBytes,
    SlotResult,
    TrustRoot,
    Verifier,
    WorldRefused,
)
from harness_world.running.rayrun import RayUnavailable, batch_size, import_ray, ray_session
from harness_world.running.verification import VerifyError, VerifyOptions

__all__ = ["VERIFY_BATCH_MAX", "RayVerifier", "ray_verifier"]

VERIFY_BATCH_MAX = 64
"""The most records a default verification batch holds (`batch_size` with this bound)."""


class _Job(msgspec.Struct, frozen=True, kw_only=True):
    """One record's bytes, or a run directory's slot with the bytes of its every file.

    A slot's files are read by the driver's run reader; a loose file's bytes by the driver.
    """

    path: str
    data: bytes = b""
    slot: Slot | None = None
    files: SlotBytes | None = None


class _Batch(msgspec.Struct, frozen=True, kw_only=True):
    """What one Ray task is told, as bytes: the jobs and the verifier's own choices."""

    kind: Literal["slots", "files"]
    root: TrustRoot
    tasks_key: str
    jobs: list[_Job]
    sizes: dict[str, str] = {}  # run directories: the manifest's world sizes
    max_calls: int
    max_work: int


_BATCH = msgspec.msgpack.Decoder(_Batch)
_RESULTS = msgspec.msgpack.Decoder(list[SlotResult])
_VERDICTS = msgspec.msgpack.Decoder(list[FileVerdict])
_TABLE = msgspec.msgpack.Decoder(dict[str, Task] | None)
_VERIFIERS: dict[bytes, Verifier] = {}  # per worker process: one per root, table and bounds


def verify_remote(batch_data: bytes, tasks_data: bytes) -> bytes:
    """Verify a batch of records in a Ray worker; the results as bytes, in the batch's order."""
    batch = _BATCH.decode(batch_data)
    key = msgspec.msgpack.encode([batch.root, batch.tasks_key, batch.max_calls, batch.max_work])
    verifier = _VERIFIERS.get(key)
    if verifier is None:
        if len(_VERIFIERS) >= 16:
            _VERIFIERS.clear()
        verifier = _VERIFIERS[key] = Verifier(
            batch.root,
            _TABLE.decode(tasks_data),
            max_calls=batch.max_calls,
            max_work=batch.max_work,
        )
    if batch.kind == "slots":
        return msgspec.msgpack.encode(
            [
                verifier.judge(job.slot, batch.sizes, job.files)
                for job in batch.jobs
                if job.slot is not None and job.files is not None
            ]
        )
    return msgspec.msgpack.encode([verifier.check_file(Path(j.path), j.data) for j in batch.jobs])


def _read(path: Path) -> bytes | None:
    """A record file's bytes; None when it is not a readable regular file (judged locally)."""
    try:
        return read_regular_file(path, RECORD_BYTES)
    except OSError:
        return None


@attrs.define(slots=True)
class RayVerifier:
    """A `Verifier` mapped over Ray: one object per ``verify`` command (see `ray_verifier`).

    Attributes:
        ray: The ``ray`` module, connected.
        verifier: The local verifier: its root, task table and bounds go to every worker, and
            it judges here what needs no replay (missing and unreadable records).
        batch: Records per Ray task (None: `batch_size` of the records, at most
            `VERIFY_BATCH_MAX`).
        in_flight: The most Ray tasks submitted at once.
    """

    ray: Any
    verifier: Verifier
    batch: int | None
    in_flight: int
    _remote: Any = None
    _tasks_ref: Any = None
    _tasks_key: str = ""

    def _start(self) -> None:
        if self._remote is None:
            tasks = self.verifier.tasks
            data = msgspec.msgpack.encode(dict(tasks) if tasks is not None else None)
            self._tasks_key = hashlib.sha256(data).hexdigest()[:32]
            self._tasks_ref = self.ray.put(data)
            self._remote = self.ray.remote(num_cpus=1)(verify_remote)

    def _size(self, items: int) -> int:
        cpus = int(self.ray.cluster_resources().get("CPU", 1))
        return self.batch or batch_size(items, cpus, most=VERIFY_BATCH_MAX)

    def _batch(
        self, kind: Literal["slots", "files"], jobs: list[_Job], sizes: Mapping[str, str]
    ) -> _Batch:
        return _Batch(
            kind=kind,
            root=self.verifier.root,
            tasks_key=self._tasks_key,
            jobs=jobs,
            sizes=dict(sizes),
            max_calls=self.verifier.max_calls,
            max_work=self.verifier.max_work,
        )

    def _map(
        self,
        chunks: Iterable[tuple[list[int], _Batch | None]],
        receive: Callable[[list[int], bytes], bool],
    ) -> None:
        """Submit batches (None: nothing to send) with at most ``in_flight`` running.

        ``receive`` gets each batch's positions and reply as they end; False stops the rest.
        """
        self._start()
        pending: dict[Any, list[int]] = {}
        source = iter(chunks)
        going = True
        while going or pending:
            while going and len(pending) < self.in_flight:
                chunk = next(source, None)
                if chunk is None:
                    going = False
                elif chunk[1] is not None:
                    batch = msgspec.msgpack.encode(chunk[1])
                    pending[self._remote.remote(batch, self._tasks_ref)] = chunk[0]
            if not pending:
                continue
            ready, _ = self.ray.wait(list(pending), num_returns=1)
            for ref in ready:
                going = receive(pending.pop(ref), self.ray.get(ref)) and going

    def map_slots(
        self,
        verifier: Verifier,
        slots: Sequence[Slot],
        read: Callable[[Slot], SlotBytes],
        sizes: Mapping[str, str],
        measures: Sequence[Measure] = (),
    ) -> list[Judgement]:
        """The reader's `SlotMapper` on Ray: each slot's `Verifier.judge`, in slot order.

        Ray judges without the judgement cache and takes no measures (``verify`` asks none).

        Raises:
            HarnessWorldError: when measures are asked for.
        """
        if measures:
            raise HarnessWorldError("measures are not taken on Ray: read the run here")
        results: list[SlotResult | None] = [None] * len(slots)

        def receive(chunk: list[int], reply: bytes) -> bool:
            for index, result in zip(chunk, _RESULTS.decode(reply), strict=True):
                results[index] = result
            return True

        def chunks() -> Iterator[tuple[list[int], _Batch | None]]:
            size = self._size(len(slots))
            for start in range(0, len(slots), size):
                chunk, jobs = [], []
                for index in range(start, min(start + size, len(slots))):
                    slot = slots[index]
                    files = read(slot)
                    if files.final.data is None and not slot.tries:  # decided here, no replay
                        results[index] = verifier.judge(slot, sizes, files)
                        continue
                    chunk.append(index)
                    jobs.append(_Job(path=slot.path, slot=slot, files=files))
                yield chunk, self._batch("slots", jobs, sizes) if jobs else None

        self._map(chunks(), receive)
        return [Judgement(result=r) for r in results if r is not None]

    def files(
        self, paths: Sequence[Path], on_verdict: Callable[[int, FileVerdict], None] | None = None
    ) -> list[FileVerdict]:
        """Verify record files one by one (outside any run directory), in batches on Ray.

        Args:
            paths: The record files.
            on_verdict: Called with each file's position and verdict as it arrives.

        Raises:
            WorldRefused: when the verifier's own ``--world`` cannot be loaded (the first such
                record in order, as the local verifier stops there).
        """
        verdicts: list[FileVerdict | None] = [None] * len(paths)

        def settle(index: int, verdict: FileVerdict) -> None:
            verdicts[index] = verdict
            if on_verdict is not None and not verdict.refused:
                on_verdict(index, verdict)

        def receive(chunk: list[int], reply: bytes) -> bool:
            arrived = _VERDICTS.decode(reply)
            for index, verdict in zip(chunk, arrived, strict=True):
                settle(index, verdict)
            return not any(v.refused for v in arrived)  # the verifier's --world fails: stop

        def chunks() -> Iterator[tuple[list[int], _Batch | None]]:
            size = self._size(len(paths))
            for start in range(0, len(paths), size):
                chunk, jobs = [], []
                for index in range(start, min(start + size, len(paths))):
                    data = _read(paths[index])
                    if data is None:
                        settle(index, self.verifier.check_file(paths[index]))
                        continue
                    chunk.append(index)
                    jobs.append(_Job(path=str(paths[index]), data=data))
                yield chunk, self._batch("files", jobs, {}) if jobs else None

        self._map(chunks(), receive)
        for verdict in verdicts:
            if verdict is not None and verdict.refused:
                raise WorldRefused(verdict.refused)
        return [v for v in verdicts if v is not None]


@contextmanager
def ray_verifier(
    verifier: Verifier,
    *,
    address: str | None,
    batch: int | None = None,
    in_flight: int | None = None,
) -> Iterator[RayVerifier]:
    """A `RayVerifier` on the Ray this process uses, else on `ray_session`'s (local or cluster).

    Args:
        verifier: The verifier whose root, tasks and bounds every worker uses.
        address: A Ray cluster to connect to when not connected yet (``"auto"``: the one
            started on this machine); None starts a local Ray for the command.
        batch: Records per Ray task (None: about four batches per CPU, at most 64 records).
        in_flight: The most Ray tasks submitted at once (default: twice the cluster's CPUs).

    Raises:
        RayUnavailable: when Ray is not installed.
        ValueError: for a batch below 1.
    """
    if batch is not None and batch < 1:
        raise ValueError(f"a Ray batch holds at least 1 record, not {batch}")
    import_ray()
    with ray_session(address) as ray:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        yield RayVerifier(
            ray=ray, verifier=verifier, batch=batch, in_flight=in_flight or max(2, 2 * cpus)
        )


@contextmanager
def verify_on_ray(options: VerifyOptions, verifier: Verifier) -> Iterator[RayVerifier]:
    """The registered ``ray`` verifier: `ray_verifier` with ``verify``'s Ray options.

    Raises:
        VerifyError: when Ray is not installed, or a Ray task failed (then nothing is reported
            as verified).
    """
    try:
        import_ray()
    except RayUnavailable as exc:
        raise VerifyError(str(exc)) from None
    from ray.exceptions import RayError

    try:
        with ray_verifier(verifier, address=options.address, batch=options.ray_batch) as remote:
            yield remote
    except RayError as exc:  # a worker died or the cluster went away: no verdict at all
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise VerifyError(
            f"a Ray task failed, so nothing is reported as verified ({type(exc).__name__}: {first})"
        ) from None
