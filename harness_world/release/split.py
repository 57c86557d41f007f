"""Held-out discipline: where tasks come from, and near-duplicate instructions across a split.

A held-out task whose instruction is a paraphrase of a development task leaks: tuning on the
one tunes on the other. `near_duplicates` compares every development instruction with every
held-out one by the Jaccard similarity of their character shingles (5 characters of the
lower-cased word stream, so word order, inflection and ids all count) and flags pairs at or
above a threshold. The default, 0.25, sits in the widest gap of the built-in tasks' pairwise
similarities (docs/release.md gives the measured figures). Exact pairwise comparison is cheap
for hundreds of tasks; at tens of thousands, MinHash with locality-sensitive hashing would be
the step up.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from harness_world.grading.task import Task, TaskError, load_task_file, load_tasks
from harness_world.running.heldout import (
    SplitError,
    candidate_key,
    read_ledger_state,
)
from harness_world.running.journal import ChainState, describe_chain
from harness_world.running.revision import Revision
from harness_world.running.rundir import load_manifest

__all__ = [
    "DEFAULT_SHINGLE",
    "DEFAULT_THRESHOLD",
    "SPLIT_KEY_HELP",
    "HeldOutUse",
    "NearDuplicate",
    "heldout_use",
    "jaccard",
    "near_duplicates",
    "render_heldout_use",
    "render_ledger",
    "run_heldout_use",
    "shingles",
    "tasks_from",
]

SPLIT_KEY_HELP = (
    "Ed25519 public key (PEM) trusted to sign the split ledger's head: the ledger must carry "
    "a head it signed, and lines it covers cannot be removed, moved or edited unseen (without "
    "it the ledger is unsigned: integrity only)"
)
"""The help of ``--split-key`` (``gate``, ``report``) and ``split ledger --trust-key``."""

DEFAULT_SHINGLE = 5
DEFAULT_THRESHOLD = 0.25
_WORD = re.compile(r"\w+")


class NearDuplicate(msgspec.Struct, frozen=True, kw_only=True):
    """A development task and a held-out task whose instructions are alike.

    Attributes:
        development: The development task's id.
        heldout: The held-out task's id.
        similarity: Jaccard similarity of their instructions' shingles, in [0, 1].
    """

    development: str
    heldout: str
    similarity: float


def shingles(text: str, size: int = DEFAULT_SHINGLE) -> frozenset[str]:
    """The character shingles of ``text``'s lower-cased words joined by single spaces."""
    stream = " ".join(_WORD.findall(text.lower()))
    if len(stream) <= size:
        return frozenset({stream}) if stream else frozenset()
    return frozenset(stream[i : i + size] for i in range(len(stream) - size + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0 for two empty sets."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def near_duplicates(
    development: Iterable[Task],
    heldout: Iterable[Task],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    size: int = DEFAULT_SHINGLE,
) -> list[NearDuplicate]:
    """Every (development, held-out) pair at or above ``threshold``, most alike first.

    A task in both sets is its own pair at similarity 1.

    Raises:
        SplitError: for a threshold that is not a similarity in (0, 1], or a shingle size
            below 1.
    """
    if not 0.0 < threshold <= 1.0:  # nan fails this too
        raise SplitError(f"threshold {threshold}: expected a Jaccard similarity in (0, 1]")
    if size < 1:
        raise SplitError(f"shingle size {size}: expected at least 1")
    dev = [(t.id, shingles(t.instruction, size)) for t in development]
    out = []
    for held in heldout:
        mine = shingles(held.instruction, size)
        for dev_id, theirs in dev:
            similarity = jaccard(mine, theirs)
            if similarity >= threshold:
                out.append(
                    NearDuplicate(development=dev_id, heldout=held.id, similarity=similarity)
                )
    return sorted(out, key=lambda d: (-d.similarity, d.heldout, d.development))


def tasks_from(sources: Sequence[str | Path]) -> list[Task]:
    """The tasks a list of sources names.

    A source is a task file (every variant of a file of variants), a task folder, a built-in
    world name or a built-in task id (shell-style globs allowed).

    Raises:
        TaskError: for a source that is none of these, or an invalid task.
    """
    found: dict[str, Task] = {}
    for source in sources:
        found.update((t.id, t) for t in _tasks_of(source))
    return [found[k] for k in sorted(found)]


def _tasks_of(source: str | Path) -> list[Task]:
    path = Path(source)
    if path.is_file():
        return load_task_file(path)
    if path.is_dir():
        return load_tasks(folder=path)
    tasks = load_tasks(world=str(source)) or [
        t for t in load_tasks() if fnmatch.fnmatchcase(t.id, str(source))
    ]
    if not tasks:
        raise TaskError(
            f"{source}: not a task file, a task folder, a built-in world or a built-in task id"
        )
    return tasks


class HeldOutUse(msgspec.Struct, frozen=True, kw_only=True):
    """How much a held-out split has been used, as its ledger tells.

    Attributes:
        lock: The split's lock file.
        tasks: Tasks it froze.
        candidates: Distinct candidates evaluated on it, by the hash of what ran (agent
            settings with their code, and prompt; `harness_world.running.heldout.candidate_key`).
        runs: Runs recorded (a resumed or repeated run of one candidate counts again).
        candidate_recorded: Whether the revision asked about is among them (a candidate run on
            held-out tasks without its ``--split`` is not, and its score is suspect). With a
            trusted key, only lines its signed head covers record a candidate.
        recorded_unsigned: With a trusted key: the revision is named only in lines after the
            ones its signed head covers (lines anyone can append), so it is not recorded.
        changed: Held-out tasks the candidate ran in another definition than the frozen one
            (its figures on them are not held-out figures), from its own revision and from
            its ledger lines.
        chain: What the ledger's chain vouches for (unsigned: integrity only, or lines a
            trusted key's signed head covers).
    """

    lock: str
    tasks: int
    candidates: int
    runs: int
    candidate_recorded: bool
    recorded_unsigned: bool = False
    changed: list[str] = []
    chain: ChainState | None = None


def heldout_use(
    lock: str | Path, revision: Revision | str, *, trust_key: Path | None = None
) -> HeldOutUse:
    """The ledger's count of candidates, and whether ``revision`` is one of them.

    Args:
        lock: The split's lock.
        revision: The candidate run's revision (or only its id): a held-out task whose hash
            in it is not the frozen one is named in ``changed``, as is one its ledger lines
            name.
        trust_key: An Ed25519 public key (PEM) trusted to sign the ledger's head.

    Raises:
        SplitError: when the lock or its ledger is unreadable, broken, or (with
            ``trust_key``) not vouched for by that key.
        SigningError: when ``trust_key`` cannot be read.
    """
    ledger = read_ledger_state(lock, trust_key)
    frozen = ledger.split.tasks
    revision_id = revision if isinstance(revision, str) else revision.id
    mine = [e for e in ledger.entries if e.revision == revision_id]
    vouched = ledger.chain.trusted
    recorded = [e for e in ledger.entries[:vouched] if e.revision == revision_id]
    changed = {t for e in mine for t in e.changed}
    changed |= {t for t, h in _task_hashes(revision).items() if t in frozen and frozen[t] != h}
    return HeldOutUse(
        lock=str(lock),
        tasks=len(frozen),
        candidates=len({candidate_key(e) for e in ledger.entries}),
        runs=len(ledger.entries),
        candidate_recorded=bool(recorded),
        recorded_unsigned=bool(mine) and not recorded,
        changed=sorted(changed),
        chain=ledger.chain,
    )


def _task_hashes(revision: Revision | str) -> Mapping[str, Any]:
    """Each task's hash as a revision pins it (none for a bare id)."""
    if isinstance(revision, str):
        return {}
    prefix = "task:"
    return {k[len(prefix) :]: v for k, v in revision.values.items() if k.startswith(prefix)}


def run_heldout_use(lock: str | Path, run: str | Path, trust_key: Path | None) -> HeldOutUse:
    """`heldout_use` for the run directory ``run``, with the revision its manifest pins.

    Raises:
        SplitError: as `heldout_use`.
        FileNotFoundError, ValueError: when ``run`` has no valid manifest.
    """
    return heldout_use(lock, load_manifest(run).revision, trust_key=trust_key)


def render_ledger(lock: str | Path, trust_key: Path | None = None) -> str:
    """A split's ledger, a line per run, then the count and what the chain vouches for.

    Raises:
        SplitError: as `harness_world.running.heldout.read_ledger_state`.
        SigningError: when ``trust_key`` cannot be read.
    """
    ledger = read_ledger_state(lock, trust_key)
    lines = []
    for e in ledger.entries:
        changed = f"; CHANGED since frozen: {', '.join(e.changed)}" if e.changed else ""
        lines.append(
            f"{e.time}  {e.revision[:16]}  candidate {candidate_key(e)[:16]}  {e.agent}  "
            f"{e.covered} tasks  {e.run}{changed}"
        )
    candidates = len({candidate_key(e) for e in ledger.entries})
    lines.append(
        f"{candidates} candidate(s) in {len(ledger.entries)} run(s) on "
        f"{len(ledger.split.tasks)} tasks"
    )
    lines.append(f"ledger: {describe_chain(ledger.chain)}")
    return "\n".join(lines) + "\n"


def render_heldout_use(use: HeldOutUse) -> str:
    """The count of candidates as one line, and a line per warning (ends with a newline)."""
    line = (
        f"held-out split {use.lock}: {use.candidates} candidate(s) evaluated on its "
        f"{use.tasks} tasks ({use.runs} run(s)); this candidate "
        + ("is" if use.candidate_recorded else "is NOT")
        + " in its ledger"
        + (" (named only in lines the trusted key did not sign)" if use.recorded_unsigned else "")
        + "\n"
    )
    if use.chain is not None:
        line += f"  ledger: {describe_chain(use.chain)}\n"
    if use.changed:
        line += (
            f"  CHANGED since the freeze: {', '.join(use.changed)}: the candidate ran "
            "another definition of these held-out tasks; its figures on them are not "
            "held-out figures\n"
        )
    return line
