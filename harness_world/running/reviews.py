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
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, get_args

import msgspec

from harness_world.engine.canonical import to_json
from harness_world.errors import HarnessWorldError
from harness_world.evidence.runfiles import REVIEWS_BYTES, RunFileError, read_run_file
from harness_world.running.journal import decode_jsonl

if TYPE_CHECKING:
    from harness_world.running.rundir import RunScan

__all__ = [
    "CLAIM_LEVELS",
    "REVIEWS",
    "ClaimLevel",
    "Review",
    "ReviewError",
    "ReviewKind",
    "decode_reviews",
    "link_name",
    "load_reviews",
    "review_message",
    "scan_claims",
    "standing_claims",
    "standing_reviews",
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
        claim: ``verdict`` (a criterion verdict; every line written before claims existed
            reads as one), ``confirmed-defect`` or ``validated-link``.
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


def load_reviews(run_dir: str | Path) -> list[Review]:
    """Every review of a run, in the order given (none when it has no review file).

    Raises:
        ReviewError: when the file is unreadable or a line is not a review.
    """
    path = Path(run_dir) / REVIEWS
    try:
        data = read_run_file(Path(run_dir), REVIEWS, REVIEWS_BYTES)
    except RunFileError as exc:
        raise ReviewError(f"{path}: not a review file: {exc}") from None
    return decode_reviews(data, path)


def decode_reviews(data: bytes | None, path: Path) -> list[Review]:
    """Every review in a review file's bytes, as read once (none without a file).

    Raises:
        ReviewError: naming ``path`` and the line, when a line is not a review.
    """
    if data is None:
        return []
    try:
        return decode_jsonl(data, Review)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ReviewError(f"{path}: not a review file: {exc}") from None


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


def standing_claims(
    reviews: bytes | None, bound: Mapping[tuple[str, int], str], where: Path
) -> list[Review]:
    """The affirmed claims of a run that stand (its confirmed defects and validated links).

    None without a review file; a verdict review is never a claim.

    Args:
        reviews: The run's review file's bytes, as its reader read them (None: no file).
        bound: The digest of the record each slot holds, as its reader judged it.
        where: The review file, for errors.

    Raises:
        ReviewError: when the review file is unreadable.
    """
    claims = [r for r in decode_reviews(reviews, where) if r.claim != "verdict"]
    if not claims:
        return []
    standing, _ = standing_reviews(claims, bound)
    return [r for r in standing if r.verdict == "pass"]


def scan_claims(scan: RunScan) -> list[Review]:
    """`standing_claims` of a judged run: its review bytes and digests, as its reader read them.

    Raises:
        ReviewError: when the review file is unreadable.
    """
    bound = {(s.task_id, s.sample): s.digest for s in scan.slots if s.digest}
    return standing_claims(scan.reviews, bound, Path(scan.out) / REVIEWS)
