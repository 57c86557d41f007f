"""Held-out splits: a frozen manifest of tasks and a ledger of every candidate run on it.

A split is frozen once, before anything is tuned: ``heldout.lock`` names each task by id and by
the hash of its whole definition (`Task.hash`, as ``pins.json`` does). Every run whose tasks
meet the split appends one line to the ledger beside the lock (``heldout.ledger.jsonl``): its
revision, its agent, the hash of what ran (`candidate_hash`: the agent's settings, its code
among them, and the system prompt) and when. Choosing the best of twenty candidates on the
held-out tasks then shows as twenty candidates, not one, whatever their file names; a
candidate run again (another seed, a resume) is still one. The ledger is append-only; nothing
here rewrites a line. It is a chained journal (`harness_world.running.journal`) anchored on the
lock, with a head beside it: a line edited, removed, moved or cut from the end, or a lock edited
after a candidate ran, is named when it is read. A run given a key signs the head; a reader
trusting that key (`read_ledger(trust_key=...)`) then also catches a forger who rewrote the
chain and the head; without one the ledger is "unsigned: integrity only".
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Final

import attrs
import msgspec

from harness_world.engine.canonical import sha256_hex, to_json
from harness_world.engine.limits import TASK_ID_PATTERN, read_regular_file
from harness_world.errors import HarnessWorldError
from harness_world.evidence.signing import public_key_hex
from harness_world.grading.task import Task
from harness_world.running.journal import (
    BrokenChain,
    ChainState,
    append_chained,
    head_path,
    parse_chained,
    read_journal_files,
    sign_head,
)
from harness_world.running.revision import Revision

__all__ = [
    "SIGN_HELP",
    "SPLIT_HELP",
    "HeldOutSplit",
    "HeldOutSplits",
    "Ledger",
    "LedgerEntry",
    "SplitError",
    "candidate_hash",
    "candidate_key",
    "candidates_on",
    "check_split_tasks",
    "freeze_split",
    "ledger_path",
    "load_split",
    "parse_ledger",
    "read_ledger",
    "read_ledger_state",
    "record_candidate",
    "record_candidates",
    "split_hooks",
]

SPLIT_FORMAT = 1
MAX_LOCK_BYTES: Final = 16 * 1024 * 1024
"""Largest lock file read (about 150 000 tasks)."""

SPLIT_HELP: Final = (
    "a frozen held-out split (a lock of `split freeze`): refuse a run that schedules none of "
    "its tasks, else log this candidate (revision, agent, time) in its ledger"
)
"""``run --split``'s help, beside what it describes."""
SIGN_HELP: Final = (
    "Ed25519 private key (PEM): sign the empty ledger's head, so a reader trusting the key "
    "tells a ledger removed later from none (extra: [sign])"
)
"""``split freeze --sign-key``'s help."""

_TaskId = Annotated[str, msgspec.Meta(pattern=f"^{TASK_ID_PATTERN}$")]
_Sha256 = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")]


class SplitError(HarnessWorldError, ValueError):
    """A split lock or ledger that cannot be written or read back."""


class HeldOutSplit(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``heldout.lock``: the frozen held-out tasks.

    Attributes:
        format: Lock format version.
        frozen_at: When it was frozen (UTC, ISO 8601).
        tasks: Task id -> the SHA-256 of its definition when frozen.
    """

    format: Annotated[int, msgspec.Meta(ge=SPLIT_FORMAT, le=SPLIT_FORMAT)] = SPLIT_FORMAT
    frozen_at: str
    tasks: dict[_TaskId, _Sha256]


class LedgerEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One candidate evaluated on a split: a line of the ledger.

    Attributes:
        revision: The run's revision id (one per candidate configuration).
        agent: The agent's name.
        time: When the run was opened (UTC, ISO 8601).
        run: The run directory (context: where it was, not what it is).
        covered: Held-out tasks the run scheduled.
        previous: The SHA-256 of the ledger's line before this one (of the lock, for the
            first line): the chain that names an edited line.
        changed: Of those tasks, the ones whose definition differs from the frozen one.
        candidate: `candidate_hash` of the run's revision: what ran (empty in lines written
            before it was recorded, which count by revision).
    """

    revision: str
    agent: str
    time: str
    run: str
    covered: int
    previous: str
    changed: list[str] = []
    candidate: str = ""


@attrs.frozen(slots=True)
class Ledger:
    """A split's ledger as read: its entries and what its chain vouches for.

    Attributes:
        split: The lock the ledger belongs to (from the bytes its chain is anchored on).
        entries: The candidates' lines, in the order written.
        chain: Lines, head and how many lines a trusted key's signed head covers.
    """

    split: HeldOutSplit
    entries: list[LedgerEntry]
    chain: ChainState


def candidate_hash(revision: Revision) -> str:
    """The hash of what ran: the revision's ``agent`` (settings, code among them) and prompt.

    Five versions of a script under one file name are five candidates; one candidate run
    again with another seed, more samples or on other tasks is still one.
    """
    parts = {k: revision.components.get(k, "") for k in ("agent", "system_prompt")}
    return sha256_hex(to_json(parts))


def candidate_key(entry: LedgerEntry) -> str:
    """What a ledger line counts as: its candidate hash, or its revision in older lines."""
    return entry.candidate or entry.revision


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def ledger_path(lock: str | Path) -> Path:
    """The ledger beside a lock: ``heldout.lock`` -> ``heldout.ledger.jsonl``."""
    path = Path(lock)
    return path.with_name(f"{path.stem}.ledger.jsonl")


def freeze_split(
    tasks: Iterable[Task], out: str | Path, *, sign_key: Path | None = None
) -> HeldOutSplit:
    """Write a new lock of ``tasks``; an existing lock is never replaced.

    With ``sign_key`` the empty ledger's head is signed at once, so a reader trusting that
    key tells a ledger removed later from one never written.

    Raises:
        SplitError: for no tasks, or when ``out`` (or a ledger or head beside it) exists, or
            ``out`` cannot be written.
        SigningError: when ``sign_key`` cannot be read.
    """
    split = HeldOutSplit(
        frozen_at=_now(), tasks={t.id: t.hash for t in sorted(tasks, key=lambda t: t.id)}
    )
    if not split.tasks:
        raise SplitError(f"{out}: no tasks to freeze")
    for beside in (ledger_path(out), head_path(ledger_path(out))):
        if os.path.lexists(beside):  # a split re-frozen over its own history hides it
            raise SplitError(f"{out}: a ledger is already beside it ({beside.name})")
    if sign_key is not None:
        public_key_hex(sign_key)  # a key that cannot sign is refused before the lock is written
    data = msgspec.json.format(msgspec.json.encode(split, order="sorted"), indent=1) + b"\n"
    try:
        with open(out, "xb") as handle:  # "x": a frozen split stays frozen
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except FileExistsError:
        raise SplitError(f"{out}: a split is already frozen there; freeze to a new file") from None
    except OSError as exc:
        raise SplitError(f"{out}: cannot write the split: {exc.strerror or exc}") from None
    if sign_key is not None:
        path = ledger_path(out)
        try:
            sign_head(path, (data, f"the lock {out}"), LedgerEntry, sign_key)
        except OSError as exc:
            raise SplitError(f"{path}: cannot sign its head: {exc.strerror or exc}") from None
    return split


def _read_split(lock: str | Path) -> tuple[HeldOutSplit, bytes]:
    """A lock and its bytes (the anchor of its ledger's chain)."""
    try:
        data = read_regular_file(Path(lock), MAX_LOCK_BYTES)
    except OSError as exc:
        raise SplitError(f"{lock}: cannot read the split lock: {exc.strerror or exc}") from None
    return _decode_split(data, lock), data


def _decode_split(data: bytes, lock: str | Path) -> HeldOutSplit:
    try:
        return msgspec.json.decode(data, type=HeldOutSplit)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SplitError(f"{lock}: not a held-out split lock: {exc}") from None


def load_split(lock: str | Path) -> HeldOutSplit:
    """Read a lock.

    Raises:
        SplitError: when it is unreadable (missing, not a regular file, over
            `MAX_LOCK_BYTES`) or not a split lock.
    """
    return _read_split(lock)[0]


def check_split_tasks(locks: Iterable[str | Path], tasks: Sequence[Task]) -> None:
    """Refuse a run on a split that schedules none of its tasks (or a lock that is unreadable).

    Raises:
        SplitError: naming the lock, how many tasks it froze and a few of them.
    """
    ids = {t.id for t in tasks}
    for lock in locks:
        frozen = sorted(load_split(lock).tasks)
        read_ledger(lock)  # a broken ledger is refused before the run, not after
        if not ids.intersection(frozen):
            shown = ", ".join(frozen[:3]) + (", ..." if len(frozen) > 3 else "")
            raise SplitError(
                f"{lock}: none of the run's {len(ids)} task(s) is in this held-out split "
                f"(it froze {len(frozen)}: {shown}); select its tasks to run on it"
            )


def record_candidate(
    lock: str | Path,
    tasks: Sequence[Task],
    revision: Revision,
    agent: str,
    run: str | Path,
    *,
    signer: Path | None = None,
) -> LedgerEntry | None:
    """Append the run to the split's ledger when it schedules a held-out task.

    Returns the entry written, or None when no task of the run is held out by this split.
    With ``signer`` (the run's signing key) the ledger's head is signed too.

    Raises:
        SplitError: when the lock is unreadable or the ledger cannot be appended to.
        SigningError: when ``signer`` cannot be read.
    """
    split, anchor = _read_split(lock)
    frozen = split.tasks
    met = [t for t in tasks if t.id in frozen]
    if not met:
        return None

    def entry(previous: str) -> LedgerEntry:
        return LedgerEntry(
            revision=revision.id,
            agent=agent,
            time=_now(),
            run=str(run),
            covered=len(met),
            previous=previous,
            changed=sorted(t.id for t in met if t.hash != frozen[t.id]),
            candidate=candidate_hash(revision),
        )

    path = ledger_path(lock)
    try:
        return append_chained(path, (anchor, f"the lock {lock}"), LedgerEntry, entry, signer=signer)
    except OSError as exc:
        raise SplitError(f"{path}: cannot append: {exc.strerror or exc}") from None
    except (msgspec.DecodeError, msgspec.ValidationError, BrokenChain) as exc:
        raise SplitError(
            f"not appending to a broken ledger: {_ledger_problem(path, exc)}"
        ) from None


def record_candidates(
    locks: Iterable[str | Path],
    tasks: Sequence[Task],
    revision: Revision,
    agent: str,
    run: str | Path,
    *,
    signer: Path | None = None,
) -> list[LedgerEntry]:
    """`record_candidate` for each lock a run was given; the entries written."""
    written = (record_candidate(lock, tasks, revision, agent, run, signer=signer) for lock in locks)
    return [entry for entry in written if entry is not None]


@attrs.frozen(slots=True)
class HeldOutSplits:
    """The `harness_world.running.run.RunHook` of ``run --split``: a candidate on each lock.

    Attributes:
        locks: The split locks the run is a candidate on.
    """

    locks: tuple[Path, ...]

    def check(self, tasks: Sequence[Task]) -> None:
        """`check_split_tasks`: before anything is written."""
        check_split_tasks(self.locks, tasks)

    def opened(
        self,
        tasks: Sequence[Task],
        revision: Revision,
        agent: str,
        root: Path,
        signer: Path | None,
    ) -> None:
        """`record_candidates`: the run appended to each ledger (its head signed by ``signer``)."""
        record_candidates(self.locks, tasks, revision, agent, root, signer=signer)


def split_hooks(locks: Iterable[str | Path]) -> list[HeldOutSplits]:
    """The run hooks of split locks: one `HeldOutSplits`, or none without a lock."""
    paths = tuple(Path(lock) for lock in locks)
    return [HeldOutSplits(paths)] if paths else []


def parse_ledger(
    lock: bytes,
    ledger: bytes,
    head: bytes | None,
    *,
    source: Path,
    trust_key: Path | None = None,
) -> Ledger:
    """A ledger from the bytes of its lock, its lines and its head, checked.

    Without ``trust_key`` the chain and the head are checked for integrity only (a forger who
    rewrites both is not caught). With it, the head that key signed must exist, verify and
    cover lines the ledger still begins with; lines after them still count as candidates.

    Args:
        lock: The lock's bytes (the chain's anchor).
        ledger: The ledger's bytes (empty when it does not exist).
        head: The head's bytes (None when it does not exist).
        source: The ledger's path, for messages.
        trust_key: An Ed25519 public key (PEM) trusted to sign the ledger's head.

    Raises:
        SplitError: when the lock is not a lock, a line is not an entry, the chain or the
            head does not agree with the lines, or the trusted key signed no head of this
            ledger (naming the line).
        SigningError: when ``trust_key`` cannot be read.
    """
    split = _decode_split(lock, f"the lock of {source}")
    try:
        chain = parse_chained(ledger, head, (lock, "the lock"), LedgerEntry, source)
        signed = chain.signed_by(trust_key) if trust_key is not None else None
    except (msgspec.DecodeError, msgspec.ValidationError, BrokenChain) as exc:
        raise SplitError(_ledger_problem(source, exc)) from None
    if trust_key is not None and signed is None:
        raise SplitError(
            f"{head_path(source)}: no head signed by the trusted key: the ledger's count "
            "cannot be vouched for (sign runs on the split, or freeze it, with that key)"
        )
    trusted = signed.lines if signed else None
    return Ledger(split=split, entries=chain.items, chain=chain.state(trusted))


def read_ledger_state(lock: str | Path, trust_key: Path | None = None) -> Ledger:
    """A split's ledger and what its chain vouches for (`parse_ledger` over the files).

    Raises:
        SplitError: when the lock, the ledger or its head is unreadable (not a regular file,
            over its limit), or as `parse_ledger`.
        SigningError: when ``trust_key`` cannot be read.
    """
    path = ledger_path(lock)
    anchor = _read_split(lock)[1]
    try:
        ledger, head = read_journal_files(path)
    except OSError as exc:
        where = exc.filename or path
        raise SplitError(f"{where}: cannot read the ledger: {exc.strerror or exc}") from None
    return parse_ledger(anchor, ledger, head, source=path, trust_key=trust_key)


def read_ledger(lock: str | Path, trust_key: Path | None = None) -> list[LedgerEntry]:
    """Every entry of a split's ledger, in the order written (none when it has no ledger yet).

    Raises:
        SplitError: when the lock or the ledger is unreadable, a line is not an entry, or the
            chain or head breaks (a line edited, removed, moved or cut, or the lock edited
            since), naming the line.
        SigningError: when ``trust_key`` cannot be read.
    """
    return read_ledger_state(lock, trust_key).entries


def _ledger_problem(path: Path, exc: Exception) -> str:
    if isinstance(exc, BrokenChain):
        return str(exc)
    return f"{path}: not a held-out ledger: {exc}"


def candidates_on(lock: str | Path) -> int:
    """How many distinct candidates (by what ran: `candidate_key`) were evaluated on a split."""
    return len({candidate_key(entry) for entry in read_ledger(lock)})
