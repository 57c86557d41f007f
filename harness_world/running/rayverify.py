"""``verify`` on Ray (extra ``[ray]``): records checked in batches of Ray tasks, judged as locally.

The trust root stays the verifier's. This process, the driver, reads the run directory (its
manifest, its index, which slots have a record file, the failed tries), decides every
binding input (each slot's task, sample, seed, revision and index line) and reads each record
file's bytes; a Ray task receives a batch of them with the verifier's own world arguments
(`WorldChoice`: ``--world``, ``--size``, ``--seed-file``) and task table. A worker decodes each
record, checks its binding, loads worlds only the way the local verifier does (the verifier's
``--world``, else a built-in world at a declared size: `load_trusted_world`; never anything a
record names as a path), replays and grades with the same public functions (`verify`,
`judge_record`), and sends back what the local pass would have produced. Worlds are loaded once
per worker process (`load_world` caches them); the task table is decoded once per worker.
Nothing of a record chooses a world, code or seed.

The results are the local ones exactly: `RayVerifier.scan` returns the `RunScan` that
`scan_run` returns (the retry costs of failed tries are added here, where those files are), and
`RayVerifier.files` one `FileVerdict` per record file, from which ``verify`` builds the same
rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import attrs
import msgspec

from harness_world.engine.paths import builtin_dir
from harness_world.engine.world import World, WorldError, load_trusted_world, load_world
from harness_world.errors import HarnessWorldError
from harness_world.evidence.binding import IndexEntry, binding_problem, read_index
from harness_world.evidence.record import Record, RecordError, decode_record, load_record
from harness_world.grading.task import Task
from harness_world.grading.verify import Verification, verify
from harness_world.running.rayrun import batch_size, import_ray, ray_session
from harness_world.running.rundir import (
    RunScan,
    SlotEvidence,
    SlotResult,
    count_slots,
    failed_tries_by_sample,
    judge_record,
    load_manifest,
    record_path,
    sample_seed,
)

__all__ = [
    "VERIFY_BATCH_MAX",
    "FileVerdict",
    "RayVerifier",
    "WorldChoice",
    "WorldRefused",
    "ray_verifier",
]

VERIFY_BATCH_MAX = 64
"""The most records a default verification batch holds (`batch_size` with this bound)."""


class WorldRefused(HarnessWorldError, ValueError):
    """The verifier's own ``--world`` cannot be loaded: an input error (exit 2), not evidence."""


class WorldChoice(msgspec.Struct, frozen=True, kw_only=True):
    """The verifier's own world arguments, applied in every worker exactly as locally.

    Attributes:
        world: ``--world``: a built-in name, or a folder (made absolute, so a worker finds it;
            on a cluster it must exist at that path on every node); None: each record's
            built-in world by name, at a size that world declares.
        label: ``--world`` as the verifier wrote it (for its error message).
        size: ``--size`` for ``--world``.
        seed_file: ``--seed-file`` (absolute).
    """

    world: str | None = None
    label: str = ""
    size: str | None = None
    seed_file: str | None = None

    @classmethod
    def of(cls, world: str | None, size: str | None, seed_file: Path | None) -> WorldChoice:
        """The choice from the verifier's arguments, paths made absolute for the workers.

        A bare built-in name stays a name (each node resolves it in its own installation); a
        folder or seed file that exists here is made absolute; anything else stays as written,
        so a worker fails on it in the same words as the local verifier.
        """
        folder = world
        if world is not None and not _is_builtin(world) and Path(world).exists():
            folder = str(Path(world).absolute())
        seed = str(seed_file) if seed_file is not None else None
        if seed_file is not None and seed_file.exists():
            seed = str(seed_file.absolute())
        return cls(world=folder, label=world or "", size=size, seed_file=seed)


def _is_builtin(name: str) -> bool:
    """Whether ``name`` is a bare name `load_world` resolves to a built-in world."""
    if "/" in name or "\\" in name:
        return False
    return (builtin_dir("worlds") / name / "world.py").is_file()


class FileVerdict(msgspec.Struct, frozen=True, kw_only=True):
    """One record file verified on its own (outside a run directory), as ``verify`` reports it.

    Attributes:
        path: The file.
        read: Whether the record could be read (task, sample and outcome are its own).
        task_id: The record's task id.
        sample: Its sample index.
        outcome: Its outcome status.
        verification: Evidence and grade, as `verify` gives them.
        refused: Why the verifier's ``--world`` cannot be loaded (then nothing else counts).
    """

    path: str
    read: bool = False
    task_id: str = ""
    sample: int = 0
    outcome: str = ""
    verification: Verification
    refused: str = ""


class _Job(msgspec.Struct, frozen=True, kw_only=True):
    """One record's bytes and, in a run directory, the slot it must be bound to."""

    path: str
    data: bytes
    task_id: str = ""
    sample: int = 0
    seed: int = 0
    entry: IndexEntry | None = None
    retried: int = 0


class _Batch(msgspec.Struct, frozen=True, kw_only=True):
    """What one Ray task is told, as bytes: the jobs and the verifier's choices for them."""

    kind: Literal["slots", "files"]
    choice: WorldChoice
    tasks_key: str
    jobs: list[_Job]
    revision: str = ""  # run directories: the manifest's revision
    sizes: dict[str, str] = {}  # run directories: the manifest's world sizes
    given: dict[str, str] = {}  # run directories: --world's world name -> its size


class _Judged(msgspec.Struct, frozen=True, kw_only=True):
    result: SlotResult
    judged: bool = False  # replayed by `judge_record`: the retry costs are added by the driver


_BATCH = msgspec.msgpack.Decoder(_Batch)
_JUDGED = msgspec.msgpack.Decoder(list[_Judged])
_VERDICTS = msgspec.msgpack.Decoder(list[FileVerdict])
_TABLE = msgspec.msgpack.Decoder(dict[str, Task] | None)
_TABLES: dict[str, dict[str, Task] | None] = {}  # per worker process: each task table decoded once


def verify_remote(batch_data: bytes, tasks_data: bytes) -> bytes:
    """Verify a batch of records in a Ray worker; the results as bytes, in the batch's order."""
    batch = _BATCH.decode(batch_data)
    tasks = _TABLES.get(batch.tasks_key)
    if batch.tasks_key not in _TABLES:
        if len(_TABLES) >= 16:
            _TABLES.clear()
        tasks = _TABLES[batch.tasks_key] = _TABLE.decode(tasks_data)
    if batch.kind == "slots":
        return msgspec.msgpack.encode([_judge(job, batch, tasks or {}) for job in batch.jobs])
    return msgspec.msgpack.encode([_verify_file(job, batch.choice, tasks) for job in batch.jobs])


def _decode(job: _Job) -> Record:
    """The record as `load_record` would read it from ``job.path`` (the same words on failure)."""
    source = Path(job.path)
    try:
        return decode_record(job.data, "msgpack" if source.suffix == ".msgpack" else "json")
    except RecordError as exc:
        raise RecordError(f"{source}: {exc}") from None


def _judge(job: _Job, batch: _Batch, tasks: Mapping[str, Task]) -> _Judged:
    """One slot of a run directory, as `scan_run` judges it (its failed tries' cost aside)."""
    try:
        record = _decode(job)
    except RecordError as exc:
        return _Judged(result=_slot_result(job, "lost", reason=str(exc), retried=job.retried))
    unbound = binding_problem(
        record,
        task_id=job.task_id,
        sample=job.sample,
        seed=job.seed,
        revision=batch.revision,
        entry=job.entry,
    )
    if unbound:
        outcome = record.outcome.status
        return _Judged(result=_slot_result(job, "ungraded", outcome=outcome, reason=unbound))
    task = tasks.get(job.task_id)
    try:
        world = _slot_world(batch, task.world if task else record.world.name)
        return _Judged(result=judge_record(record, world, task, Path(job.path)), judged=True)
    except (WorldError, OSError) as exc:
        return _Judged(result=_slot_result(job, "lost", reason=str(exc), retried=job.retried))
    except Exception as exc:  # one hostile record never ends the scan
        return _Judged(result=_slot_result(job, "lost", reason=f"{type(exc).__name__}: {exc}"))


def _slot_result(job: _Job, evidence: SlotEvidence, **fields: Any) -> SlotResult:
    return SlotResult(
        task_id=job.task_id, sample=job.sample, path=job.path, evidence=evidence, **fields
    )


def _slot_world(batch: _Batch, name: str) -> World:
    """A run's world: the verifier's ``--world`` under its name, else built-in at the run's size."""
    size = batch.given.get(name)
    if size is not None and batch.choice.world is not None:
        return load_world(batch.choice.world, size=size, seed_file=batch.choice.seed_file)
    return load_trusted_world(name, batch.sizes.get(name, "small"))


def _verify_file(job: _Job, choice: WorldChoice, tasks: Mapping[str, Task] | None) -> FileVerdict:
    """One record file, isolated as ``verify`` isolates it: whatever goes wrong ends it only."""
    try:
        record = _decode(job)
    except RecordError as exc:
        lost = Verification(evidence="lost", reason=str(exc))
        return FileVerdict(path=job.path, verification=lost)
    refused = ""
    try:
        result = _verify_record(record, choice, tasks)
    except WorldRefused as exc:
        result, refused = Verification(evidence="lost"), str(exc)
    return FileVerdict(
        path=job.path,
        read=True,
        task_id=record.task_id,
        sample=record.sample,
        outcome=record.outcome.status,
        verification=result,
        refused=refused,
    )


def _verify_record(
    record: Record, choice: WorldChoice, tasks: Mapping[str, Task] | None
) -> Verification:
    """Replay and grade one record against the verifier's world and task for it.

    Raises:
        WorldRefused: when the verifier's own ``--world`` cannot be loaded.
    """
    try:
        world = _file_world(choice, record)
    except WorldError as exc:
        return Verification(evidence="lost", reason=f"world cannot be loaded: {exc}")
    task = tasks.get(record.task_id) if tasks is not None else None
    try:
        return verify(record, world=world, task=task)
    except Exception as exc:  # a hostile record never ends the batch
        return Verification(evidence="lost", reason=f"{type(exc).__name__}: {exc}")


def _file_world(choice: WorldChoice, record: Record) -> World:
    """The verifier's ``--world`` (at ``--size`` or the record's size), else a built-in world.

    Raises:
        WorldRefused: when the verifier's own ``--world`` cannot be loaded.
        WorldError: when the record names no built-in world or an undeclared size.
    """
    if choice.world is None:
        seed_file = Path(choice.seed_file) if choice.seed_file else None
        return load_trusted_world(record.world.name, record.world.size, seed_file=seed_file)
    size = choice.size or record.world.size
    try:
        return load_world(choice.world, size=size, seed_file=choice.seed_file)
    except (WorldError, OSError) as exc:
        raise WorldRefused(f"--world {choice.label}: {exc}") from None


def _read(path: Path) -> bytes | str:
    """A record file's bytes, or `load_record`'s own words for why it cannot be read."""
    try:
        if path.is_file():
            return path.read_bytes()
    except OSError:
        pass
    try:
        load_record(path)
    except RecordError as exc:
        return str(exc)
    return path.read_bytes()  # readable after all


def _retry_cost(retries: Sequence[Path]) -> float:
    """What a slot's failed tries cost, summed as `judge_record` sums it."""
    cost = 0.0
    for earlier in retries:
        try:
            spent = load_record(earlier).usage
        except RecordError:
            continue
        cost += spent.cost + spent.uncertain_cost
    return cost


@attrs.frozen(slots=True)
class _Slot:
    """One scheduled slot as the driver sees it: where its record is and what binds it."""

    index: int
    path: Path
    task_id: str
    sample: int
    seed: int
    entry: IndexEntry | None
    retries: Sequence[Path]

    def result(self, evidence: SlotEvidence, **fields: Any) -> SlotResult:
        """The slot's result, decided here without its record."""
        return SlotResult(
            task_id=self.task_id,
            sample=self.sample,
            path=str(self.path),
            evidence=evidence,
            **fields,
        )


@attrs.define(slots=True)
class RayVerifier:
    """Verification on a connected Ray: one object per ``verify`` command (see `ray_verifier`).

    Attributes:
        ray: The ``ray`` module, connected.
        choice: The verifier's own world arguments.
        tasks: The verifier's tasks by id (None: do not grade).
        batch: Records per Ray task (None: `batch_size` of the records, at most
            `VERIFY_BATCH_MAX`).
        in_flight: The most Ray tasks submitted at once.
    """

    ray: Any
    choice: WorldChoice
    tasks: Mapping[str, Task] | None
    batch: int | None
    in_flight: int
    _remote: Any = None
    _tasks_ref: Any = None
    _tasks_key: str = ""

    def _start(self) -> None:
        if self._remote is None:
            data = msgspec.msgpack.encode(dict(self.tasks) if self.tasks is not None else None)
            self._tasks_key = hashlib.sha256(data).hexdigest()[:32]
            self._tasks_ref = self.ray.put(data)
            self._remote = self.ray.remote(num_cpus=1)(verify_remote)

    def _size(self, items: int) -> int:
        cpus = int(self.ray.cluster_resources().get("CPU", 1))
        return self.batch or batch_size(items, cpus, most=VERIFY_BATCH_MAX)

    def _map(
        self,
        chunks: Iterable[tuple[Any, _Batch | None]],
        receive: Callable[[Any, bytes], bool],
    ) -> None:
        """Submit batches (None: nothing to send) with at most ``in_flight`` running.

        ``receive`` gets each batch's key and reply as they end; False stops further batches.
        """
        self._start()
        pending: dict[Any, Any] = {}
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

    def scan(self, out: str | Path, *, given: Mapping[str, str] | None = None) -> RunScan:
        """Judge every scheduled slot of a run directory; `scan_run`'s result, computed on Ray.

        Args:
            out: The run directory.
            given: The verifier's ``--world`` by the name of its world, with the size to load it
                at (as ``verify --world`` passes it to `scan_run`).

        Raises:
            FileNotFoundError: when ``out`` is not a run directory.
            ValueError: when its manifest is invalid.
        """
        root = Path(out)
        manifest = load_manifest(root)
        slots = list(_slots(root, manifest.tasks, manifest.samples, manifest.seed))
        results: list[SlotResult | None] = [None] * len(slots)
        header = {
            "kind": "slots",
            "choice": self.choice,
            "tasks_key": "",
            "revision": manifest.revision.id,
            "sizes": dict(manifest.sizes),
            "given": dict(given or {}),
        }

        def receive(chunk: list[_Slot], reply: bytes) -> bool:
            for slot, judged in zip(chunk, _JUDGED.decode(reply), strict=True):
                result = judged.result
                if judged.judged and slot.retries:
                    cost = _retry_cost(slot.retries)
                    result = msgspec.structs.replace(
                        result, retried=len(slot.retries), retry_cost=cost
                    )
                results[slot.index] = result
            return True

        present = []
        for slot in slots:
            if slot.path.is_file():
                present.append(slot)
            else:
                results[slot.index] = slot.result("missing", reason="no record for this slot")
        self._map(self._slot_chunks(present, header, results), receive)
        done = [r for r in results if r is not None]
        by_id = self.tasks or {}
        families = {t: by_id[t].family if t in by_id else "" for t in manifest.tasks}
        return RunScan(
            out=str(root),
            manifest=manifest,
            slots=done,
            counts=count_slots(done),
            families=families,
        )

    def _slot_chunks(
        self, present: list[_Slot], header: dict[str, Any], results: list[SlotResult | None]
    ) -> Iterator[tuple[list[_Slot], _Batch | None]]:
        """Batches of slots with a record file, read as they are submitted."""
        size = self._size(len(present))
        for start in range(0, len(present), size):
            chunk, jobs = [], []
            for slot in present[start : start + size]:
                data = _read(slot.path)
                if isinstance(data, str):
                    lost = slot.result("lost", reason=data, retried=len(slot.retries))
                    results[slot.index] = lost
                    continue
                chunk.append(slot)
                jobs.append(_slot_job(slot, data))
            batch = _Batch(**{**header, "tasks_key": self._tasks_key, "jobs": jobs})
            yield chunk, batch if jobs else None

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

        self._map(self._file_chunks(paths, settle), receive)
        for verdict in verdicts:
            if verdict is not None and verdict.refused:
                raise WorldRefused(verdict.refused)
        return [v for v in verdicts if v is not None]

    def _file_chunks(
        self, paths: Sequence[Path], settle: Callable[[int, FileVerdict], None]
    ) -> Iterator[tuple[list[int], _Batch | None]]:
        """Batches of record files, read as they are submitted (unreadable ones settled here)."""
        size = self._size(len(paths))
        for start in range(0, len(paths), size):
            chunk, jobs = [], []
            for index in range(start, min(start + size, len(paths))):
                data = _read(paths[index])
                if isinstance(data, str):
                    lost = Verification(evidence="lost", reason=data)
                    settle(index, FileVerdict(path=str(paths[index]), verification=lost))
                    continue
                chunk.append(index)
                jobs.append(_Job(path=str(paths[index]), data=data))
            batch = _Batch(kind="files", choice=self.choice, tasks_key=self._tasks_key, jobs=jobs)
            yield chunk, batch if jobs else None


def _slot_job(slot: _Slot, data: bytes) -> _Job:
    return _Job(
        path=str(slot.path),
        data=data,
        task_id=slot.task_id,
        sample=slot.sample,
        seed=slot.seed,
        entry=slot.entry,
        retried=len(slot.retries),
    )


def _slots(root: Path, task_ids: Sequence[str], samples: int, seed: int) -> Iterator[_Slot]:
    """Every scheduled slot in manifest order, with its index line and failed tries."""
    index, _ = read_index(root)
    n = 0
    for task_id in task_ids:
        tries = failed_tries_by_sample(record_path(root, task_id, 0).parent)
        for sample in range(samples):
            yield _Slot(
                index=n,
                path=record_path(root, task_id, sample),
                task_id=task_id,
                sample=sample,
                seed=sample_seed(seed, task_id, sample),
                entry=index.get((task_id, sample)),
                retries=tries.get(str(sample), ()),
            )
            n += 1


@contextmanager
def ray_verifier(
    *,
    address: str | None,
    choice: WorldChoice,
    tasks: Mapping[str, Task] | None,
    batch: int | None = None,
    in_flight: int | None = None,
) -> Iterator[RayVerifier]:
    """A `RayVerifier` on the Ray this process uses, else on `ray_session`'s (local or cluster).

    Args:
        address: A Ray cluster to connect to when not connected yet (``"auto"``: the one
            started on this machine); None starts a local Ray for the command.
        choice: The verifier's own world arguments.
        tasks: The verifier's tasks by id (None: do not grade).
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
            ray=ray,
            choice=choice,
            tasks=tasks,
            batch=batch,
            in_flight=in_flight or max(2, 2 * cpus),
        )
