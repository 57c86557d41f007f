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

A review can also be a *claim* (``claim = "confirmed-defect"`` on a failed harness criterion,
``"validated-link"`` on an activated link named ``HARNESS -> AGENT``; see
`harness_world.running.reviews`): claims never change a score here; the layered sheets count
them (`harness_world.analysis.layered`), and only from these records.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from harness_world.engine.limits import text_problem
from harness_world.evidence.binding import read_index
from harness_world.evidence.signing import SIGNATURE, sign_message
from harness_world.grading.listing import task_criteria
from harness_world.grading.task import Task, load_tasks
from harness_world.grading.verifier import VerifiedRecord
from harness_world.release.inputs import read_toml
from harness_world.running.journal import BrokenChain, ChainState, append_chained_all
from harness_world.running.reader import RunReader
from harness_world.running.reviews import (
    CLAIM_LEVELS,
    REVIEWS,
    Review,
    ReviewError,
    ReviewKind,
    load_reviews,
    prose_review,
    review_anchor,
    review_message,
    scan_reviews,
    standing_verdicts,
    trusted_reviews,
)
from harness_world.running.rundir import load_manifest

__all__ = [
    "CLAIM_HELP",
    "CLAIM_LEVELS",
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
    "trusted_reviews",
]


CLAIM_HELP = (
    "a claim instead of a verdict: --criterion names the failed harness criterion "
    "(confirmed-defect) or the activated link as 'HARNESS -> AGENT' (validated-link); "
    "--verdict pass affirms it, fail withdraws it"
)
"""``review --claim``'s help: what a claim review names and what its verdict means."""


class ReviewRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a reviewer says of one criterion (a ``[[review]]`` table of a batch file).

    Attributes:
        task: The task id.
        sample: The sample index.
        criterion: The criterion id, e.g. ``prose.1`` or ``state.required``; for a
            ``validated-link`` claim the link, ``HARNESS -> AGENT``.
        verdict: ``pass`` or ``fail`` (for a claim: affirmed or withdrawn).
        note: Why, in the reviewer's words.
        reviewer: Who reviewed.
        claim: ``verdict`` (the default), ``confirmed-defect`` or ``validated-link``.
    """

    task: str
    sample: int
    criterion: str
    verdict: Literal["pass", "fail"]
    note: str = ""
    reviewer: str = ""
    claim: ReviewKind = "verdict"


def _request_problem(r: ReviewRequest, tasks: Mapping[str, Task] | None) -> str:
    """Why a review cannot be taken as given (empty: it can)."""
    if not r.criterion:
        return "names no criterion"
    if r.claim == "validated-link":
        if len(r.criterion.split(" -> ")) != 2:
            return (
                f"a validated-link review names its link as HARNESS -> AGENT, not {r.criterion!r}"
            )
    elif r.claim == "verdict" and (task := (tasks or {}).get(r.task)) is not None:
        # a confirmed defect names a harness criterion, which no task lists; the layered
        # sheets count a claim on one that did not fail as unmatched
        criteria = task_criteria(task)
        if r.criterion not in criteria:
            known = ", ".join(criteria)
            return f"names criterion {r.criterion!r}, which {r.task} has not ({known})"
    for key in ("note", "reviewer"):
        if problem := text_problem(getattr(r, key)):
            return f"{key}: {problem}"
    return ""


def add_reviews(
    run_dir: str | Path,
    requests: Sequence[ReviewRequest],
    tasks: Mapping[str, Task] | None = None,
    *,
    key_file: Path | None = None,
) -> list[Review]:
    """Append reviews to a run, each bound to its slot's current record; all or none.

    With ``key_file`` each review is signed (`review_message`). A signed run (one with
    ``index.sig.json``) takes signed reviews only: its readers trust a key, and an unsigned
    review beside a signed run would be one anybody could have written.

    Args:
        run_dir: The run directory.
        requests: The reviews.
        tasks: The tasks graded against, by id: a criterion their grade does not hold is
            refused (without them, any criterion is taken; `review_summary` counts it).
        key_file: The reviewer's Ed25519 private key (PEM), or None for unsigned reviews.

    Raises:
        ReviewError: when ``run_dir`` is not a run directory, a request names a slot with no
            saved record or a criterion its task has not, the run is signed and no key is
            given, or the file cannot be written.
        SigningError: when the key cannot be read.
    """
    root = Path(run_dir)
    try:
        revision = load_manifest(root).revision.id
    except (FileNotFoundError, ValueError) as exc:
        raise ReviewError(str(exc)) from None
    if key_file is None and os.path.lexists(root / SIGNATURE):
        raise ReviewError(
            f"{root}: the run is signed ({SIGNATURE}); sign its reviews too (--sign-key KEY)"
        )
    index, _ = read_index(root)
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    makes = []
    for number, r in enumerate(requests, start=1):
        where = f"{root}: review {number} ({r.task} sample {r.sample})"
        entry = index.get((r.task, r.sample))
        if entry is None:
            raise ReviewError(f"{where}: no saved record for that slot")
        if problem := _request_problem(r, tasks):
            raise ReviewError(f"{where}: {problem}")
        fields = {**msgspec.structs.asdict(r), "time": now, "record_digest": entry.digest}
        makes.append(functools.partial(_review, fields, key_file))
    path = root / REVIEWS
    try:
        return append_chained_all(path, review_anchor(revision), Review, makes, signer=key_file)
    except OSError as exc:
        raise ReviewError(f"{exc.filename or path}: cannot append: {exc.strerror or exc}") from None
    except BrokenChain as exc:
        raise ReviewError(f"not appending to a broken review file: {exc}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ReviewError(f"{path}: not a review file: {exc}") from None


def _review(fields: dict[str, object], key_file: Path | None, previous: str) -> Review:
    """One review line linked to the line before it, signed (with the link) when keyed."""
    review = msgspec.convert({**fields, "previous": previous}, Review)
    if key_file is None:
        return review
    public, signature = sign_message(key_file, review_message(review))
    return msgspec.structs.replace(review, public_key=public, signature=signature)


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
        unsigned: With a trusted key: reviews not signed by it, or whose signature does not
            verify (an edited line; ignored). Without one every review is read, and this is 0.
        chain: What the review file's chain vouches for: its lines and head, and with a
            trusted key how many lines the head it signed covers (without one: unsigned,
            integrity only).
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
    unsigned: int = 0
    chain: ChainState | None = None


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
    prose_state, open_ = prose_review(prose, given)  # as report and gate count pending ones
    review = SlotReview(
        task=slot[0],
        sample=slot[1],
        original=all(s == "passed" for s in automated.values()),
        corrected=passed,
        accepted=passed and prose_state == "passed",
        overturned=overturned,
        pending=sorted(open_),
    )
    return review, unmatched


def review_summary(
    run_dir: str | Path,
    tasks: Sequence[Task] | None = None,
    *,
    folders: Mapping[str, Path] | None = None,
    trust_key: Path | None = None,
) -> ReviewSummary:
    """Replay and grade a run once and read its reviews beside the automated grades.

    With ``trust_key`` the run itself must be signed by that key (`check_run_signature`),
    and only reviews that key signed count; the rest are counted as unsigned.

    Raises:
        ReviewError: when the review file is unreadable or its chain broken, or (with
            ``trust_key``) the run is not signed by the trusted key.
        SigningError: when the trusted key cannot be read.
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

    reader = RunReader.of(index.values(), folders=folders, trust_key=trust_key)
    scan = reader.read(root, observe=observe)  # provenance first: refused before any replay
    bound = {(s.task_id, s.sample): s.digest for s in scan.slots if s.digest}
    log = scan_reviews(scan, trust_key)
    # claims are the layered sheets' to count: they change no score
    standing, stale = standing_verdicts(log.reviews, bound)
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
        reviews=log.read,
        stale=stale,
        unmatched=unmatched,
        slots=slots,
        unsigned=log.read - len(log.reviews),
        chain=log.chain,
    )
