"""The one reader of run directories: every file read once, every slot judged once.

Every command that reads runs (``verify``, ``report``, ``compare``, ``gate``, ``review``,
``split``, ``conditions``, ``diagnose``, ``attribute``, the HTML pages, the inspect scorer,
Ray verify) goes through a `RunReader`, and nothing else opens a run's files:

1. `open_run` reads the manifest, the index, the signature and the reviews once each, from a
   regular-file descriptor inside the run (`harness_world.evidence.runfiles`), and lists each
   task's record folder once;
2. with a trusted key, the signature is checked over exactly those bytes; a run that fails
   it is judged slot by slot as ``ungraded`` and nothing of it is replayed;
3. slots are bound from the same index bytes: each slot's final record and every earlier try
   its index binds or its folder holds (failed, interrupted);
4. each record file is read once (the same safe read) and judged from those bytes by the one
   `Verifier`, its bytes checked against the index line's hash: a file swapped after the check
   is a file the verdict was never about.

The result is a `RunScan`: one `SlotResult` per scheduled slot, holding every executed try.
"""

from __future__ import annotations

import gc
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

import attrs

from harness_world.engine.limits import RECORD_BYTES
from harness_world.engine.world import World, WorldError
from harness_world.errors import HarnessWorldError
from harness_world.evidence.binding import INDEX, IndexTable, parse_index, try_name
from harness_world.evidence.runfiles import RunFileError, RunFiles, read_run_file, read_run_files
from harness_world.grading.judgement_cache import JudgementCache
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verifier import (
    FileBytes,
    Judgement,
    Measure,
    Observer,
    Slot,
    SlotBytes,
    SlotResult,
    TrustRoot,
    TrySlot,
    Verifier,
)
from harness_world.running.rundir import (
    MANIFEST,
    RunManifest,
    RunScan,
    count_slots,
    decode_manifest,
    record_path,
    sample_seed,
    write_counts,
)
from harness_world.running.workers import ProcessSlots

__all__ = [
    "MAX_TRIES",
    "Measuring",
    "OpenRun",
    "ProvenanceRefused",
    "RunReadError",
    "RunReader",
    "SlotMapper",
    "collector_paused",
    "judge_here",
    "open_run",
    "read_bound",
    "read_slot",
    "refresh_counts",
]

MAX_TRIES = 64
"""Most earlier tries of one slot a reader judges; past it the slot's evidence is refused."""

_TRY = re.compile(r"(0|[1-9]\d*)\.(failed|interrupted)-([1-9]\d{0,6})\.json")
_FINAL = re.compile(r"(0|[1-9]\d*)\.json")

SlotMapper = Callable[
    [Verifier, Sequence[Slot], Callable[[Slot], SlotBytes], Mapping[str, str], Sequence[Measure]],
    list[Judgement],
]
"""Where a scan's slots are judged: every slot through `Verifier.judgement` (with the measures
given) from the bytes the reader's read function gives for it (called once per slot, in this
process or in a forked copy of it), in any order or place, the judgements in the slots' order
(`judge_here` in this process; forked worker processes read and judge their batches; Ray's
mapper reads here and ships the bytes)."""


class Measuring(Protocol):
    """A reader's observer that takes one figure of each verified final record (cacheable).

    Unlike an `Observer`, it never sees the record: its `measure` computes the figure where
    the record is judged, and the figure (computed now, in a worker, or cached with the
    judgement) is handed to `take`.
    """

    @property
    def measure(self) -> Measure:
        """What it takes of each verified final record."""
        ...

    def take(self, path: Path, slot: tuple[str, int], figure: Any) -> None:
        """One slot's figure: its record path, (task id, sample) and the measure's value."""
        ...


class RunReadError(HarnessWorldError, ValueError):
    """A run directory cannot be read: no manifest, an invalid one, or an unsafe file."""


class ProvenanceRefused(HarnessWorldError):
    """A run read with a trusted key is not signed by it: nothing of it is judged.

    Commands report it as a failed check (exit 1), as ``verify`` reports such a run's slots.
    """

    exit_code: ClassVar[int] = 1


@attrs.frozen(slots=True)
class OpenRun:
    """A run directory as read once: its files' bytes, decoded, and its provenance.

    Attributes:
        root: The run directory.
        files: The bytes of its manifest, index, signature and reviews.
        manifest: The manifest, decoded from ``files.manifest``.
        index: What ``files.index`` binds.
        provenance: Why its provenance is refused (empty when it is accepted or unchecked).
        trusted: Whether a trusted key's signature covers these bytes.
        listing: The file names of each scheduled task's record folder, listed once.
        strays: Record files that are no scheduled slot and no kept try of one.
        real_root: The run directory's real path when it was opened: its records are reached
            from it (empty: resolved at each read).
    """

    root: Path
    files: RunFiles
    manifest: RunManifest
    index: IndexTable
    provenance: str
    trusted: bool
    listing: Mapping[str, frozenset[str]]
    strays: list[str]
    real_root: str = ""


def open_run(out: str | Path, *, trust_key: Path | None = None) -> OpenRun:
    """Read a run directory's own files once and check its provenance over those bytes.

    Args:
        out: The run directory.
        trust_key: A public key that must have signed the run (None: provenance unchecked).

    Raises:
        RunReadError: when it is not a readable run directory (the message names the file).
        harness_world.evidence.signing.SigningError: when the trusted key cannot be read.
    """
    root = Path(out)
    try:
        files = read_run_files(root)
        manifest = decode_manifest(files.manifest, root / MANIFEST)
    except (FileNotFoundError, ValueError) as exc:
        raise RunReadError(str(exc)) from None
    provenance = ""
    if trust_key is not None:
        problem = _signature_problem(files, manifest.revision.id, trust_key)
        provenance = f"provenance: {problem}" if problem else ""
    listing, strays = _list_records(root, manifest)
    return OpenRun(
        root=root,
        files=files,
        manifest=manifest,
        index=parse_index(files.index, present=files.has_index),
        provenance=provenance,
        trusted=trust_key is not None and not provenance,
        listing=listing,
        strays=strays,
        real_root=os.path.realpath(root),
    )


def _signature_problem(files: RunFiles, revision: str, trust_key: Path) -> str:
    """Why the bytes read are not signed by the trusted key (empty when they are)."""
    from harness_world.evidence.signing import SIGNATURE, run_signature_problem, trusted_key_hex

    if files.signature is None:
        trusted_key_hex(trust_key)  # the verifier's own key must be readable, signed run or not
        return f"no valid signature: the run has no {SIGNATURE}"
    return run_signature_problem(
        files.signature, files.index, files.manifest, revision=revision, public_key_file=trust_key
    )


def _list_records(root: Path, manifest: RunManifest) -> tuple[dict[str, frozenset[str]], list[str]]:
    """Each scheduled task's record file names (one listing each), and the stray files.

    A stray is any file under ``records/`` that is not ``<task>/<sample>.json`` or a kept try
    of a scheduled slot (hidden temporary files of an interrupted save aside).
    """
    scheduled = set(manifest.tasks)
    listing: dict[str, frozenset[str]] = {}
    strays: list[str] = []
    base = root / "records"
    for folder, dirs, names in os.walk(base):
        where = Path(folder)
        dirs.sort()
        depth = len(where.relative_to(base).parts)
        if depth == 1 and where.name in scheduled:
            listing[where.name] = frozenset(names)
        for name in sorted(names):
            if name.startswith("."):
                continue
            if depth != 1 or where.name not in scheduled or not _is_slot_file(name, manifest):
                strays.append(str(where / name))
    return listing, strays


def _is_slot_file(name: str, manifest: RunManifest) -> bool:
    match = _FINAL.fullmatch(name) or _TRY.fullmatch(name)
    return match is not None and int(match[1]) < manifest.samples


def plan_slots(run: OpenRun, only: str | None = None) -> list[Slot]:
    """Every scheduled slot in manifest order, bound from the index bytes read once.

    Args:
        run: The run, as opened.
        only: Plan the slots of this task only (None: every task).
    """
    manifest, slots = run.manifest, []
    override = manifest.limits.get("tool_calls")
    calls = override if isinstance(override, int) and not isinstance(override, bool) else None
    for task_id in manifest.tasks if only is None else [t for t in manifest.tasks if t == only]:
        tries = _tries_on_disk(run.listing.get(task_id, frozenset()))
        for sample in range(manifest.samples):
            path = record_path(run.root, task_id, sample)
            slots.append(
                Slot(
                    path=str(path),
                    task_id=task_id,
                    sample=sample,
                    seed=sample_seed(manifest.seed, task_id, sample),
                    revision=manifest.revision.id,
                    entry=run.index.finals.get((task_id, sample)),
                    tool_calls=calls,
                    tries=_slot_tries(run, path, task_id, sample, tries.get(sample, set())),
                )
            )
    return slots


def _tries_on_disk(names: Iterable[str]) -> dict[int, set[tuple[str, int]]]:
    """The kept tries a task folder's listing holds, by sample: (kind, number)."""
    found: dict[int, set[tuple[str, int]]] = {}
    for name in names:
        match = _TRY.fullmatch(name)
        if match is not None:
            found.setdefault(int(match[1]), set()).add((match[2], int(match[3])))
    return found


def _slot_tries(
    run: OpenRun, path: Path, task_id: str, sample: int, on_disk: set[tuple[str, int]]
) -> list[TrySlot]:
    """Every earlier try of a slot: bound by its index, held by its folder, or both."""
    bound = run.index.tries.get((task_id, sample), {})
    tries = []
    for kind, number in sorted(set(bound) | on_disk):
        where = path.with_name(try_name(sample, kind, number))  # type: ignore[arg-type]
        entry = bound.get((kind, number))
        tries.append(TrySlot(kind=kind, number=number, path=str(where), entry=entry))  # type: ignore[arg-type]
    return tries


def read_slot(run: OpenRun, slot: Slot) -> SlotBytes:
    """Read a slot's final record and each earlier try once, each safely inside the run."""
    tries = [_read(run, t.path) for t in slot.tries[:MAX_TRIES]]
    if len(slot.tries) > MAX_TRIES:
        refused = FileBytes(problem=f"not read: the slot has more than {MAX_TRIES} tries")
        tries += [refused] * (len(slot.tries) - MAX_TRIES)
    return SlotBytes(final=_read(run, slot.path), tries=tries)


def read_bound(run: OpenRun, slot: Slot) -> FileBytes:
    """A slot's final record read as `read_slot` reads it, only if it is the file its index binds.

    For readers that show a record a scan already judged (the HTML viewer): the bytes must be
    the ones the index line's ``file_sha256`` names (the bytes the judgement was about), so a
    file swapped after the scan is refused, with the reason, and never shown.
    """
    file = _read(run, slot.path)
    if file.data is None:
        return file
    bound = slot.entry.file_sha256 if slot.entry is not None else ""
    if not bound:
        return FileBytes(problem="its index line binds no file hash")
    if hashlib.sha256(file.data).hexdigest() != bound:
        return FileBytes(problem="not the file its index line binds (changed since it was judged?)")
    return file


def _read(run: OpenRun, path: str) -> FileBytes:
    base = str(run.root) + os.sep
    inside = path[len(base) :] if path.startswith(base) else Path(path).relative_to(run.root)
    try:
        data = read_run_file(run.root, inside, RECORD_BYTES, real_root=run.real_root or None)
    except RunFileError as exc:
        return FileBytes(problem=str(exc))
    return FileBytes(data=data)


def judge_here(
    verifier: Verifier,
    slots: Sequence[Slot],
    read: Callable[[Slot], SlotBytes],
    sizes: Mapping[str, str],
    measures: Sequence[Measure] = (),
    *,
    observe: Observer | None = None,
    progress: Callable[[SlotResult], None] | None = None,
) -> list[Judgement]:
    """Judge slots one after another in this process (the `SlotMapper` a scan uses by default).

    Each slot's files are read just before it is judged, so one record is held at a time.
    """
    judged: list[Judgement] = []
    for slot in slots:
        data = read(slot)
        judged.append(verifier.judgement(slot, sizes, data, measures=measures, observe=observe))
        if progress is not None:
            progress(judged[-1].result)
    return judged


def _refused(slots: Sequence[Slot], reason: str) -> list[SlotResult]:
    """Every slot of a run whose provenance is refused: ungraded, nothing replayed."""
    return [slot.result("ungraded", reason=reason) for slot in slots]


@attrs.frozen(slots=True)
class RunReader:
    """How one command reads runs: its verifier (worlds and tasks) and the key it trusts.

    Attributes:
        verifier: Judges every record within the reader's trust root (with its judgement
            cache, when it has one).
        trust_key: A public key that must have signed every run read (None: unchecked).
        workers: Worker processes judging the slots of a read, in batches
            (`harness_world.running.workers.ProcessSlots`); 1: here, one after another.
    """

    verifier: Verifier
    trust_key: Path | None = None
    workers: int = 1

    @classmethod
    def of(
        cls,
        tasks: Iterable[Task] | None = None,
        *,
        folders: Mapping[str, Path] | None = None,
        worlds: Mapping[str, World] | None = None,
        trust_key: Path | None = None,
        cache: JudgementCache | None = None,
        workers: int = 1,
    ) -> RunReader:
        """A reader grading by ``tasks`` (default: the built-in tasks) within its own worlds.

        Args:
            tasks: The reader's tasks.
            folders: World folders the caller passes as its own trust root, by world name
                (loaded at the run's sizes); never a path from the run directory.
            worlds: Worlds the caller vouches for, by name.
            trust_key: A public key that must have signed every run read.
            cache: The judgement cache the verifier reuses and keeps judgements in (commands
                use this user's, `judgement_cache`, unless given ``--no-cache``).
            workers: Worker processes judging each read's slots (``--workers``).
        """
        by_id = {t.id: t for t in (tasks if tasks is not None else load_tasks())}
        verifier = Verifier(
            TrustRoot.of(folders=folders), by_id, given=dict(worlds or {}), cache=cache
        )
        return cls(verifier=verifier, trust_key=trust_key, workers=workers)

    def open(self, out: str | Path) -> OpenRun:
        """`open_run` with this reader's trusted key."""
        return open_run(out, trust_key=self.trust_key)

    def read(
        self,
        out: str | Path | OpenRun,
        *,
        known: Mapping[Path, SlotResult] | None = None,
        observe: Observer | None = None,
        measure: Sequence[Measuring] = (),
        mapper: SlotMapper | None = None,
        progress: Callable[[SlotResult], None] | None = None,
        refused: Literal["raise", "judge"] = "raise",
    ) -> RunScan:
        """Judge every scheduled slot of a run once, each record against its slot.

        Args:
            out: The run directory (or one already opened by this reader).
            known: Results this process computed for records it saved itself (not replayed
                again; a slot with earlier tries is judged here, tries and all).
            observe: Called with every final record verified in its slot (and its path)
                while the scan goes on, so readers computing figures of their own replay
                nothing again and hold no record after it. An observer sees the record
                itself, so with one every slot is replayed (no cached judgement is used).
            measure: Observers taking figures of each verified final record: computed where
                the record is judged and cached with its judgement, so a cached judgement
                gives the same figures without a replay.
            mapper: Where the slots are judged (default: in the reader's worker processes
                when it has several and there is no ``observe``, else here, one after
                another; ``observe`` applies only here).
            progress: Called with each slot's result as it is judged here.
            refused: What a run whose provenance the trusted key refuses, or whose worlds the
                reader cannot load, gives: an error (``raise``), or every slot judged with its
                reason (``judge``: ``ungraded``, or ``lost``; what ``verify`` reports).

        Raises:
            RunReadError: when ``out`` is not a readable run directory.
            ProvenanceRefused: when the trusted key refuses the run (and ``refused`` is
                ``raise``).
            RunReadError: when a world the run names is not one the reader can load (a world
                of the user's own that no ``--world`` folder gives), with ``raise``.
        """
        run = out if isinstance(out, OpenRun) else self.open(out)
        if run.provenance and refused == "raise":
            raise ProvenanceRefused(f"{run.root}: {run.provenance}")
        if refused == "raise":
            self._check_worlds(run)
        planned = plan_slots(run)
        if run.provenance:
            slots = _refused(planned, run.provenance)
        else:
            if mapper is None and self.workers > 1 and observe is None:
                mapper = ProcessSlots(self.workers)
            watch = _Watch(observe, measure, mapper, progress)
            with collector_paused():
                slots = self._judge(run, planned, known or {}, watch)
            if self.verifier.cache is not None:
                self.verifier.cache.trim()
        with collector_paused():
            return _scan(run, slots, self.verifier.tasks or {})

    def _check_worlds(self, run: OpenRun) -> None:
        """Every world the run names loads within the reader's trust root, or one clear error.

        Without it a run of a user's own world read without its folder is every slot lost
        and a report of nothing valid, with nothing said about the option that was missing.
        """
        for name, size in sorted(run.manifest.sizes.items()):
            try:
                self.verifier.world(name, size)
            except WorldError as exc:
                raise RunReadError(
                    f"{run.root}: cannot read its world {name!r} here: {exc} (a world of your "
                    "own: --world FOLDER, and --tasks FOLDER for tasks outside it)"
                ) from None

    def judge_slot(
        self, out: str | Path, task_id: str, sample: int, *, observe: Observer | None = None
    ) -> SlotResult | None:
        """Judge one slot of a run, as `read` judges it (None: the run schedules no such slot).

        Raises:
            RunReadError: when ``out`` is not a readable run directory.
        """
        run = self.open(out)
        slot = next(
            (
                s
                for s in plan_slots(run, only=task_id)
                if s.sample == sample and s.task_id == task_id
            ),
            None,
        )
        if slot is None:
            return None
        if run.provenance:
            return _refused([slot], run.provenance)[0]
        return self.verifier.judge(slot, run.manifest.sizes, read_slot(run, slot), observe=observe)

    def _judge(
        self, run: OpenRun, planned: list[Slot], done: Mapping[Path, SlotResult], watch: _Watch
    ) -> list[SlotResult]:
        reuse = {str(p): r for p, r in done.items() if not r.tries}
        todo = [s for s in planned if s.path not in reuse or s.tries]
        sizes = run.manifest.sizes
        verifier = self.verifier
        if verifier.cache is not None and not verifier.cache.serves(run.root):
            verifier = verifier.without_cache()  # a cache inside the run is the run's to forge

        def read(slot: Slot) -> SlotBytes:
            return read_slot(run, slot)

        measures = [m.measure for m in watch.measure]
        if watch.mapper is None:
            judged = judge_here(
                verifier,
                todo,
                read,
                sizes,
                measures,
                observe=watch.observe,
                progress=watch.progress,
            )
        else:
            judged = watch.mapper(verifier, todo, read, sizes, measures)
        for judgement in judged:
            watch.deliver(judgement)
            if watch.mapper is not None and watch.progress is not None:
                watch.progress(judgement.result)
        fresh = iter(j.result for j in judged)
        return [reuse[s.path] if s.path in reuse and not s.tries else next(fresh) for s in planned]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while many judgements or records are kept.

    They hold no reference cycles, so the collector has nothing to free in them; left on, it
    walks everything kept so far again at each full collection (a fifth of a cached read of
    9,600 slots; reading 10,000 records took 2.5 times as long). Reference counting still
    frees everything as usual.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@attrs.frozen(slots=True)
class _Watch:
    """What a read reports to, and where it judges: its observers and its mapper."""

    observe: Observer | None
    measure: Sequence[Measuring]
    mapper: SlotMapper | None
    progress: Callable[[SlotResult], None] | None

    def deliver(self, judgement: Judgement) -> None:
        """Hand each measuring observer its figure of one judged slot (when it has one)."""
        if not judgement.figures:
            return
        result = judgement.result
        path, slot = Path(result.path), (result.task_id, result.sample)
        for taker in self.measure:
            figure = judgement.figure(taker.measure)
            if figure is not None:
                taker.take(path, slot, figure)


def _scan(run: OpenRun, slots: list[SlotResult], known: Mapping[str, Task]) -> RunScan:
    scheduled = run.manifest.tasks
    labelled = [known[t] for t in scheduled if t in known]
    planned = {(s.task_id, s.sample) for s in slots}
    lines = sorted(set(run.index.finals) - planned)
    return RunScan(
        out=str(run.root),
        manifest=run.manifest,
        slots=slots,
        counts=count_slots(slots),
        families={t: known[t].family if t in known else "" for t in scheduled},
        weights={t.id: t.weight for t in labelled if t.weight != 1},
        critical=sorted(t.id for t in labelled if t.critical),
        provenance=run.provenance,
        trusted=run.trusted,
        stray_files=run.strays,
        stray_lines=[f"{run.root / INDEX} [{task}/{sample}]" for task, sample in lines],
        reviews=run.files.reviews,
        reviews_head=run.files.reviews_head,
    )


def refresh_counts(
    out: str | Path, tasks: Iterable[Task] | None, worlds: Mapping[str, World] | None = None
) -> RunScan:
    """Judge a run its writer just added to, and write its counts and layered results.

    For writers outside `harness_world.running.run` (the MCP server, conversations with a
    simulated user, the inspect scorer): what they wrote is read back as any reader reads it.
    """
    scan = RunReader.of(tasks, worlds=worlds).read(out, refused="judge")  # counted, as verify does
    write_counts(scan)
    return scan
