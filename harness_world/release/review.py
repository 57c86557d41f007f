"""Human review: verdicts a person gives, kept beside a run and never inside its evidence.

A review names one criterion of one slot (task, sample) and the digest of the record it was
given on. Reviews are appended to ``reviews.jsonl`` in the run directory; nothing rewrites a
line, and a later review of the same criterion of the same record stands in for an earlier one
when they are read. The file is outside ``index.jsonl``, so a signed run stays verifiable after
a review, and the automated grade is never changed: `review_summary` reads three scores side by
side, each with its count:

- **original**: the automated grade (every automated criterion passed);
- **corrected**: the automated grade with the reviewed criteria's verdicts in place of the
  checker's (an ambiguous oracle failure a person overturned, or a pass found wrong);
- **accepted**: corrected, and every prose criterion reviewed and passed (automated success
  plus the human acceptance the task requires).

A review of a record that was since replaced (its digest no longer bound to the slot) is
stale and ignored; one naming a criterion the grade does not have is unmatched. Both are
counted.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from harness_world.engine.limits import text_problem
from harness_world.errors import HarnessWorldError
from harness_world.evidence.binding import read_index
from harness_world.grading.listing import task_criteria
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verifier import VerifiedRecord
from harness_world.release.inputs import read_toml
from harness_world.running.journal import append_jsonl, read_jsonl
from harness_world.running.rundir import MANIFEST, scan_run

__all__ = [
    "REVIEWS",
    "Review",
    "ReviewError",
    "ReviewRequest",
    "ReviewSummary",
    "SlotReview",
    "add_reviews",
    "load_review_batch",
    "load_reviews",
    "review_summary",
]

REVIEWS = "reviews.jsonl"


class ReviewError(HarnessWorldError, ValueError):
    """A review that names no saved record, or a review file that cannot be read."""


class ReviewRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a reviewer says of one criterion (a ``[[review]]`` table of a batch file).

    Attributes:
        task: The task id.
        sample: The sample index.
        criterion: The criterion id, e.g. ``prose.1`` or ``state.required``.
        verdict: ``pass`` or ``fail``.
        note: Why, in the reviewer's words.
        reviewer: Who reviewed.
    """

    task: str
    sample: int
    criterion: str
    verdict: Literal["pass", "fail"]
    note: str = ""
    reviewer: str = ""


class Review(msgspec.Struct, frozen=True, kw_only=True):
    """A line of ``reviews.jsonl``: a request bound to the record it was given on.

    Attributes:
        task: The task id.
        sample: The sample index.
        criterion: The criterion id.
        verdict: ``pass`` or ``fail``.
        note: The reviewer's note.
        reviewer: Who reviewed.
        time: When (UTC, ISO 8601).
        record_digest: The digest of the record the slot was bound to when reviewed.
    """

    task: str
    sample: int
    criterion: str
    verdict: Literal["pass", "fail"]
    note: str
    reviewer: str
    time: str
    record_digest: str


def _criterion_problem(r: ReviewRequest, tasks: Mapping[str, Task] | None) -> str:
    """Why a review's criterion is not one its task's grade holds (empty: it is, or unknown)."""
    if not r.criterion:
        return "names no criterion"
    task = (tasks or {}).get(r.task)
    if task is None:
        return ""
    criteria = task_criteria(task)
    if r.criterion in criteria:
        return ""
    return f"names criterion {r.criterion!r}, which {r.task} has not ({', '.join(criteria)})"


def add_reviews(
    run_dir: str | Path,
    requests: Sequence[ReviewRequest],
    tasks: Mapping[str, Task] | None = None,
) -> list[Review]:
    """Append reviews to a run, each bound to its slot's current record; all or none.

    Args:
        run_dir: The run directory.
        requests: The reviews.
        tasks: The tasks graded against, by id: a criterion their grade does not hold is
            refused (without them, any criterion is taken; `review_summary` counts it).

    Raises:
        ReviewError: when ``run_dir`` is not a run directory, a request names a slot with no
            saved record or a criterion its task has not, or the file cannot be written.
    """
    root = Path(run_dir)
    if not (root / MANIFEST).is_file():
        raise ReviewError(f"{root}: not a run directory (no {MANIFEST})")
    index, _ = read_index(root)
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    reviews = []
    for number, r in enumerate(requests, start=1):
        where = f"{root}: review {number} ({r.task} sample {r.sample})"
        if index.get((r.task, r.sample)) is None:
            raise ReviewError(f"{where}: no saved record for that slot")
        problem = _criterion_problem(r, tasks) or next(
            (f"{key}: {p}" for key in ("note", "reviewer") if (p := text_problem(getattr(r, key)))),
            "",
        )
        if problem:
            raise ReviewError(f"{where}: {problem}")
        entry = index[(r.task, r.sample)]
        fields = msgspec.structs.asdict(r)
        reviews.append(Review(**fields, time=now, record_digest=entry.digest))
    try:
        append_jsonl(root / REVIEWS, reviews)
    except OSError as exc:
        raise ReviewError(f"{root / REVIEWS}: cannot append: {exc.strerror or exc}") from None
    return reviews


def load_reviews(run_dir: str | Path) -> list[Review]:
    """Every review of a run, in the order given (none when it has no review file).

    Raises:
        ReviewError: when the file is unreadable or a line is not a review.
    """
    path = Path(run_dir) / REVIEWS
    try:
        return read_jsonl(path, Review)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ReviewError(f"{path}: not a review file: {exc}") from None


class _Batch(msgspec.Struct, forbid_unknown_fields=True):
    review: list[ReviewRequest] = []


def load_review_batch(path: str | Path) -> list[ReviewRequest]:
    """The ``[[review]]`` tables of a TOML batch file.

    Raises:
        ReviewError: when it is unreadable, not TOML, or a table does not fit.
    """
    data = read_toml(path, "the review batch", ReviewError)
    try:
        return msgspec.convert(data, _Batch).review
    except msgspec.ValidationError as exc:
        raise ReviewError(f"{path}: {exc}") from None


class SlotReview(msgspec.Struct, frozen=True, kw_only=True):
    """One graded slot's three scores.

    Attributes:
        task: The task id.
        sample: The sample index.
        original: The automated grade.
        corrected: The automated grade with reviewed verdicts in place of the checker's.
        accepted: Corrected, and every prose criterion reviewed and passed.
        overturned: Automated criteria whose verdict a review changed.
        pending: Prose criteria nobody has reviewed.
    """

    task: str
    sample: int
    original: bool
    corrected: bool
    accepted: bool
    overturned: list[str] = []
    pending: list[str] = []


class ReviewSummary(msgspec.Struct, frozen=True, kw_only=True):
    """A run's original, corrected and accepted scores, with their counts.

    Attributes:
        run: The run directory.
        corpus: SHA-256 over the id and hash of every task graded against: the corpus version
            the scores belong to (a corrected task corpus has another).
        graded: Graded slots.
        original: Slots the automated grade passed.
        corrected: Slots passed once reviewed verdicts stand in for the checker's.
        accepted: Slots corrected-passed with every prose criterion reviewed and passed.
        pending: Slots with a prose criterion nobody has reviewed.
        reviews: Reviews read.
        stale: Reviews of a record since replaced (ignored).
        unmatched: Reviews naming a criterion the slot's grade does not have (ignored).
        slots: Every graded slot.
    """

    run: str
    corpus: str
    graded: int
    original: int
    corrected: int
    accepted: int
    pending: int
    reviews: int
    stale: int
    unmatched: int
    slots: list[SlotReview]


def _slot_review(
    slot: tuple[str, int], verdicts: Mapping[str, str], given: Mapping[str, str]
) -> tuple[SlotReview, int]:
    """A slot's scores from its automated verdicts and its standing reviews; unmatched count."""
    unmatched = sum(1 for c in given if c not in verdicts)
    automated = {c: s for c, s in verdicts.items() if s != "not_reviewed"}
    prose = [c for c, s in verdicts.items() if s == "not_reviewed"]
    corrected = dict(automated)
    for criterion, verdict in given.items():
        if criterion in automated:
            corrected[criterion] = "passed" if verdict == "pass" else "failed"
    overturned = sorted(c for c in automated if corrected[c] != automated[c])
    passed = all(s == "passed" for s in corrected.values())
    review = SlotReview(
        task=slot[0],
        sample=slot[1],
        original=all(s == "passed" for s in automated.values()),
        corrected=passed,
        accepted=passed and all(given.get(c) == "pass" for c in prose),
        overturned=overturned,
        pending=sorted(c for c in prose if c not in given),
    )
    return review, unmatched


def review_summary(
    run_dir: str | Path,
    tasks: Sequence[Task] | None = None,
    *,
    folders: Mapping[str, Path] | None = None,
) -> ReviewSummary:
    """Replay and grade a run once and read its reviews beside the automated grades.

    Raises:
        ReviewError: when the review file is unreadable.
        FileNotFoundError: when ``run_dir`` is not a run directory.
    """
    root = Path(run_dir)
    index = {t.id: t for t in (tasks if tasks is not None else load_tasks())}
    verdicts: dict[tuple[str, int], dict[str, str]] = {}

    def observe(path: Path, verified: VerifiedRecord) -> None:
        grade, record = verified.verification.grade, verified.record
        task = index.get(record.task_id)
        if grade is not None and task is not None and verified.graded_against(task):
            verdicts[(record.task_id, record.sample)] = {v.id: v.status for v in grade.verdicts}

    scan = scan_run(root, index.values(), write_counts=False, observe=observe, folders=folders)
    bound = {slot: entry.digest for slot, entry in read_index(root)[0].items()}
    reviews = load_reviews(root)
    standing: dict[tuple[str, int], dict[str, str]] = {}
    stale = 0
    for r in reviews:  # in file order: the last review of a criterion stands
        if bound.get((r.task, r.sample)) != r.record_digest:
            stale += 1
            continue
        standing.setdefault((r.task, r.sample), {})[r.criterion] = r.verdict
    slots, unmatched = [], sum(len(v) for k, v in standing.items() if k not in verdicts)
    for slot in sorted(verdicts):
        review, missed = _slot_review(slot, verdicts[slot], standing.get(slot, {}))
        slots.append(review)
        unmatched += missed
    tasks_used = sorted({t for t in scan.manifest.tasks if t in index})
    corpus = hashlib.sha256("".join(f"{t}:{index[t].hash}\n" for t in tasks_used).encode())
    return ReviewSummary(
        run=str(root),
        corpus=corpus.hexdigest(),
        graded=len(slots),
        original=sum(s.original for s in slots),
        corrected=sum(s.corrected for s in slots),
        accepted=sum(s.accepted for s in slots),
        pending=sum(bool(s.pending) for s in slots),
        reviews=len(reviews),
        stale=stale,
        unmatched=unmatched,
        slots=slots,
    )
