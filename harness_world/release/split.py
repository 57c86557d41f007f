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

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from harness_world.grading.task import Task, TaskError, load_task, load_tasks
from harness_world.running.heldout import SplitError, load_split, read_ledger

__all__ = [
    "DEFAULT_SHINGLE",
    "DEFAULT_THRESHOLD",
    "HeldOutUse",
    "NearDuplicate",
    "heldout_use",
    "jaccard",
    "near_duplicates",
    "render_heldout_use",
    "shingles",
    "tasks_from",
]

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
    """The tasks a list of sources names: task files, task folders or built-in world names.

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
        return [load_task(path)]
    if path.is_dir():
        return load_tasks(folder=path)
    tasks = load_tasks(world=str(source))
    if not tasks:
        raise TaskError(f"{source}: not a task file, a task folder or a built-in world")
    return tasks


class HeldOutUse(msgspec.Struct, frozen=True, kw_only=True):
    """How much a held-out split has been used, as its ledger tells.

    Attributes:
        lock: The split's lock file.
        tasks: Tasks it froze.
        candidates: Distinct candidates (revisions) evaluated on it.
        runs: Runs recorded (a resumed or repeated run of one candidate counts again).
        candidate_recorded: Whether the revision asked about is among them (a candidate run on
            held-out tasks without its ``--split`` is not, and its score is suspect).
    """

    lock: str
    tasks: int
    candidates: int
    runs: int
    candidate_recorded: bool


def heldout_use(lock: str | Path, revision: str) -> HeldOutUse:
    """The ledger's count of candidates, and whether ``revision`` is one of them.

    Raises:
        SplitError: when the lock or its ledger is unreadable.
    """
    entries = read_ledger(lock)
    return HeldOutUse(
        lock=str(lock),
        tasks=len(load_split(lock).tasks),
        candidates=len({e.revision for e in entries}),
        runs=len(entries),
        candidate_recorded=any(e.revision == revision for e in entries),
    )


def render_heldout_use(use: HeldOutUse) -> str:
    """The count of candidates as one line (ends with a newline)."""
    return (
        f"held-out split {use.lock}: {use.candidates} candidate(s) evaluated on its "
        f"{use.tasks} tasks ({use.runs} run(s)); this candidate "
        + ("is" if use.candidate_recorded else "is NOT")
        + " in its ledger\n"
    )
