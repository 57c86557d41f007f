"""The review file beside a run: one line per human review, appended, never rewritten.

A review names one slot (task, sample), the digest of the record the slot was bound to when it
was given, and what it says. Most reviews are criterion *verdicts* (`harness_world.release`
reads them into corrected and accepted scores). Two kinds are *claims*, the upper rungs of the
ladder criterion verdict → activated link → confirmed defect → validated link, which no
automated figure ever reaches:

- ``confirmed-defect``: a person looked at a failed harness criterion of the record and
  confirms the harness did what the criterion says it must not (``criterion`` names it);
- ``validated-link``: a person looked at an activated candidate link of the record and
  confirms its mechanism operated (``criterion`` names the link as ``HARNESS -> AGENT``).

For a claim, verdict ``pass`` affirms it and ``fail`` withdraws it. The last review of the same
thing on the same record stands; one given on a record since replaced is stale.

Because the last review stands, deleting a withdrawal would bring back what it withdrew: the
file is a chained journal (`harness_world.running.journal`) anchored on the run's revision,
with a head beside it (``reviews.head.json``) that each signing reviewer signs. Deleting,
reordering, editing or cutting lines is named when the file is read; with a trusted key, also
by a forger who recomputed the chain (without one: "unsigned: integrity only").
`parse_reviews` is a function of the bytes read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, Literal, get_args

import attrs
import msgspec

from harness_world.engine.canonical import to_json
from harness_world.errors import HarnessWorldError
from harness_world.evidence.signing import signed_message_problem
from harness_world.running.journal import (
    BrokenChain,
    Chained,
    ChainState,
    head_path,
    parse_chained,
    read_journal_files,
)
from harness_world.running.rundir import RunScan, load_manifest

__all__ = [
    "CLAIM_LEVELS",
    "REVIEWS",
    "ClaimLevel",
    "Review",
    "ReviewError",
    "ReviewKind",
    "ReviewLog",
    "link_name",
    "load_reviews",
    "parse_reviews",
    "prose_review",
    "read_review_log",
    "review_anchor",
    "review_message",
    "scan_claims",
    "scan_reviews",
    "standing_claims",
    "standing_reviews",
    "standing_verdicts",
    "trusted_reviews",
]

REVIEWS = "reviews.jsonl"
ClaimLevel = Literal["confirmed-defect", "validated-link"]
CLAIM_LEVELS: Final[tuple[str, ...]] = get_args(ClaimLevel)
ReviewKind = Literal["verdict", "confirmed-defect", "validated-link"]
_ARROW = " -> "


class ReviewError(HarnessWorldError, ValueError):
    """A review that names no saved record, or a review file that cannot be read."""


class Review(msgspec.Struct, frozen=True, kw_only=True):
    """A line of ``reviews.jsonl``: what a person said, bound to the record it was given on.

    Attributes:
        task: The task id.
        sample: The sample index.
        criterion: The criterion id; for a ``validated-link`` claim, the link as
            ``HARNESS -> AGENT``.
        verdict: ``pass`` or ``fail`` (for a claim: affirmed or withdrawn).
        note: The reviewer's note.
        reviewer: Who reviewed.
        time: When (UTC, ISO 8601).
        record_digest: The digest of the record the slot was bound to when reviewed.
        previous: The SHA-256 of the line before this one (for the first line, of
            `review_anchor`): signed with the rest, so a signed line vouches for every line
            before it. Empty only in a review made in memory; a line read without it does
            not follow the chain.
        claim: ``verdict`` (a criterion verdict; a line without it reads as one),
            ``confirmed-defect`` or ``validated-link``.
        public_key: The signer's raw Ed25519 public key, hex (absent when unsigned). A
            reader checks with the key it trusts, never this one.
        signature: Ed25519 signature of `review_message` of every other field, hex.
    """

    task: str
    sample: int
    criterion: str
    verdict: Literal["pass", "fail"]
    note: str
    reviewer: str
    time: str
    record_digest: str
    previous: str = ""
    claim: ReviewKind = "verdict"
    public_key: str | msgspec.UnsetType = msgspec.UNSET
    signature: str | msgspec.UnsetType = msgspec.UNSET


_DOMAIN = b"harness_world review signature v1\n"


def review_message(review: Review) -> bytes:
    """What a review's signature signs: every field but the key and signature, canonically.

    So a forger who edits the verdict, the note, the slot or the record digest of a signed
    line breaks its signature.
    """
    fields = msgspec.structs.asdict(review)
    fields.pop("public_key")
    fields.pop("signature")
    return _DOMAIN + to_json(fields)


def link_name(harness: str, agent: str) -> str:
    """A candidate link as a ``validated-link`` review names it: ``HARNESS -> AGENT``."""
    return f"{harness}{_ARROW}{agent}"


def review_anchor(revision: str) -> tuple[bytes, str]:
    """What a run's review journal is anchored on: its revision (reviews of one run only)."""
    return b"harness_world reviews of run " + revision.encode(), "the run's revision"


@attrs.frozen(slots=True)
class ReviewLog:
    """A run's reviews as read: every line, and what the chain vouches for.

    Attributes:
        reviews: Every review, in file order (with a trusted key, only those it signed).
        read: Lines read.
        chain: Lines, head and how many lines the trusted key's signed head covers.
    """

    reviews: list[Review]
    read: int
    chain: ChainState


def parse_reviews(
    data: bytes,
    head: bytes | None,
    *,
    revision: str,
    source: Path,
    trust_key: Path | None = None,
) -> ReviewLog:
    """A run's reviews from the bytes of ``reviews.jsonl`` and its head, checked.

    Without ``trust_key`` every line is read and the chain is checked for integrity only.
    With it only lines that key signed are kept, and every one of them must lie within the
    head it signed: a line it signed that the file no longer holds, or one after the head
    it signed (a head replaced by an older one), is named.

    Args:
        data: The review file's bytes (empty when there is none).
        head: The head's bytes (None when there is none).
        revision: The run's revision id (the chain's anchor).
        source: The review file's path, for messages.
        trust_key: An Ed25519 public key (PEM) whose reviews alone count.

    Raises:
        ReviewError: when a line is not a review, or the chain or head does not agree.
        SigningError: when ``trust_key`` cannot be read.
    """
    try:
        chain = parse_chained(data, head, review_anchor(revision), Review, source)
        signed = chain.signed_by(trust_key) if trust_key is not None else None
    except BrokenChain as exc:
        raise ReviewError(str(exc)) from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ReviewError(f"{source}: not a review file: {exc}") from None
    if trust_key is None:
        return ReviewLog(reviews=chain.items, read=len(chain.items), chain=chain.state())
    kept = trusted_reviews(chain.items, trust_key)
    covered = signed.lines if signed is not None else 0
    _check_covered(chain, kept, covered)
    return ReviewLog(reviews=kept, read=len(chain.items), chain=chain.state(covered))


def _check_covered(chain: Chained[Review], kept: Sequence[Review], covered: int) -> None:
    """Every review the trusted key signed must lie within the head it signed."""
    position = {id(r): n for n, r in enumerate(chain.items, start=1)}
    late = [position[id(r)] for r in kept if position[id(r)] > covered]
    if late:
        raise ReviewError(
            f"{head_path(chain.source)}: line {late[0]} is signed by the trusted key but lies "
            f"after the head it signed ({covered} line(s)): the head was removed or replaced "
            "by an older one, so lines it signed may have been cut"
        )


def trusted_reviews(reviews: Sequence[Review], trust_key: Path) -> list[Review]:
    """The reviews the trusted key signed, in file order (an edited line's signature fails).

    Raises:
        SigningError: when the trusted key cannot be read.
    """
    return [
        r
        for r in reviews
        if not signed_message_problem(
            trust_key,
            r.public_key if isinstance(r.public_key, str) else "",
            r.signature if isinstance(r.signature, str) else "",
            review_message(r),
        )
    ]


def read_review_log(run_dir: str | Path, revision: str, trust_key: Path | None = None) -> ReviewLog:
    """`parse_reviews` over a run's review file and head, each read once from a regular file.

    Raises:
        ReviewError: when either is unreadable (a FIFO, a device, over its limit) or as
            `parse_reviews`.
        SigningError: when ``trust_key`` cannot be read.
    """
    path = Path(run_dir) / REVIEWS
    try:
        data, head = read_journal_files(path)
    except OSError as exc:
        raise ReviewError(f"{exc.filename or path}: cannot read: {exc.strerror or exc}") from None
    return parse_reviews(data, head, revision=revision, source=path, trust_key=trust_key)


def load_reviews(run_dir: str | Path) -> list[Review]:
    """Every review of a run, in the order given (none when it has no review file).

    Raises:
        ReviewError: when the file is unreadable, a line is not a review, or the chain
            breaks (naming the line).
    """
    root = Path(run_dir)
    try:
        revision = load_manifest(root).revision.id
    except (FileNotFoundError, ValueError) as exc:
        raise ReviewError(str(exc)) from None
    return read_review_log(root, revision).reviews


def standing_reviews(
    reviews: list[Review], bound: Mapping[tuple[str, int], str]
) -> tuple[list[Review], int]:
    """The reviews that stand, in file order, and how many are stale.

    A review is stale when its slot is no longer bound to the digest it was given on; of the
    rest, the last one of each (slot, kind, criterion) stands in for the earlier ones.
    """
    latest: dict[tuple[str, int, str, str], Review] = {}
    stale = 0
    for r in reviews:
        if bound.get((r.task, r.sample)) != r.record_digest:
            stale += 1
            continue
        key = (r.task, r.sample, r.claim, r.criterion)
        latest.pop(key, None)  # re-inserted last: file order of the standing ones
        latest[key] = r
    return list(latest.values()), stale


def standing_verdicts(
    reviews: Sequence[Review], bound: Mapping[tuple[str, int], str]
) -> tuple[dict[tuple[str, int], dict[str, str]], int]:
    """The criterion verdicts that stand, by slot (criterion -> ``pass``/``fail``), and the stale.

    Claims are left out (they change no verdict); ``stale`` counts every review given on a
    record since replaced, claims included.

    Args:
        reviews: The run's reviews, as read (`parse_reviews`).
        bound: The digest of the record each slot holds, as the run's reader judged it.
    """
    kept, stale = standing_reviews(list(reviews), bound)
    verdicts: dict[tuple[str, int], dict[str, str]] = {}
    for r in kept:
        if r.claim == "verdict":
            verdicts.setdefault((r.task, r.sample), {})[r.criterion] = r.verdict
    return verdicts, stale


def prose_review(
    prose: Sequence[str], given: Mapping[str, str]
) -> tuple[Literal["passed", "failed", "pending"], list[str]]:
    """What standing reviews make of a record's unreviewed prose criteria, and which stay open.

    ``failed`` when a review failed one of them; else ``passed`` when every one was reviewed
    and passed; else ``pending`` (the open ones are listed).

    Args:
        prose: The prose criteria the grade left ``not_reviewed``.
        given: The slot's standing verdicts (`standing_verdicts`).
    """
    open_ = [c for c in prose if c not in given]
    if any(given.get(c) == "fail" for c in prose):
        return "failed", open_
    return ("pending" if open_ else "passed"), open_


def standing_claims(
    reviews: Sequence[Review], bound: Mapping[tuple[str, int], str]
) -> list[Review]:
    """The affirmed claims of a run that stand (its confirmed defects and validated links).

    A verdict review is never a claim.

    Args:
        reviews: The run's reviews, as read (`parse_reviews`).
        bound: The digest of the record each slot holds, as the run's reader judged it.
    """
    claims = [r for r in reviews if r.claim != "verdict"]
    if not claims:
        return []
    standing, _ = standing_reviews(claims, bound)
    return [r for r in standing if r.verdict == "pass"]


def scan_reviews(scan: RunScan, trust_key: Path | None = None) -> ReviewLog:
    """`parse_reviews` over the review file and head bytes a run's reader read with the run.

    Raises:
        ReviewError: when a line is not a review, or the chain or head does not agree.
        SigningError: when ``trust_key`` cannot be read.
    """
    return parse_reviews(
        scan.reviews or b"",
        scan.reviews_head,
        revision=scan.manifest.revision.id,
        source=Path(scan.out) / REVIEWS,
        trust_key=trust_key,
    )


def scan_claims(scan: RunScan, trust_key: Path | None = None) -> list[Review]:
    """`standing_claims` of a judged run: its reviews and digests, as its reader read them.

    Args:
        scan: The run, as its reader judged it.
        trust_key: The reader's trusted key: only claims it signed stand (as only verdicts
            it signed decide pending attempts); a claim anyone could append to a signed
            run's review file is not one the reader vouches for.

    Raises:
        ReviewError: when the review file is unreadable.
        SigningError: when ``trust_key`` cannot be read.
    """
    bound = {(s.task_id, s.sample): s.digest for s in scan.slots if s.digest}
    return standing_claims(scan_reviews(scan, trust_key).reviews, bound)
