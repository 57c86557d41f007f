"""Claim levels: confirmed defects and validated links come only from review records.

An activated link is an activation, never more, until a person's review says otherwise; the
layered sheets of ``report`` and ``conditions`` count each level apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness_world.analysis.conditions import conditions_report
from harness_world.cli import main
from harness_world.release import ReviewError, ReviewRequest, add_reviews, review_summary
from harness_world.release.review import load_reviews
from harness_world.running.reader import RunReader
from harness_world.running.reviews import scan_claims
from tests.release.conftest import forge_reviews, payments_run, review_lines

LOST = "payments.charge_lost_response"  # naive-retry: two links activate here
CLEAN = "payments.note_payout_direct_ok"  # naive-retry: nothing fails
DEFECT = "harness.reconcile_before_retry"
LINK = f"{DEFECT} -> forbidden.duplicate_charge"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return payments_run(tmp_path / "run", (LOST, CLEAN), "naive-retry", samples=1)


def _claim(task: str, criterion: str, claim: str, verdict: str = "pass") -> ReviewRequest:
    return ReviewRequest(task=task, sample=0, criterion=criterion, verdict=verdict, claim=claim)  # type: ignore[arg-type]


def _claims(run: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["report", str(run), "--json"]) == 0
    claims: dict[str, Any] = json.loads(capsys.readouterr().out)["layered"]["pooled"]["claims"]
    return claims


def test_activated_links_are_not_validated_without_a_review(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = _claims(run_dir, capsys)
    assert claims["activated_links"] == 2 and claims["failed_verdicts"] >= 2
    assert (claims["confirmed_defects"], claims["validated_links"]) == (0, 0)
    ladder = f"{claims['failed_verdicts']} / 2 / 0 / 0"
    assert main(["report", str(run_dir), "--full"]) == 0
    assert ladder in capsys.readouterr().out
    assert main(["conditions", str(run_dir)]) == 0  # the side-by-side table, then the sheets
    text = capsys.readouterr().out
    sheets = text.split("layered sheets", 1)[1].splitlines()[1:]
    assert {"Execution", "Governance", "all"} <= {w for line in sheets for w in line.split()[:1]}
    assert ladder in text


def test_a_review_confirms_a_defect_and_validates_a_link(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = review_summary(run_dir)
    add_reviews(
        run_dir, [_claim(LOST, DEFECT, "confirmed-defect"), _claim(LOST, LINK, "validated-link")]
    )
    claims = _claims(run_dir, capsys)
    assert (claims["confirmed_defects"], claims["validated_links"]) == (1, 1)
    assert claims["activated_links"] == 2 and claims["unmatched"] == 0
    sheets = conditions_report(run_dir).dimensions
    assert sheets.pooled.claims.validated_links == 1
    by_dimension = {s.dimension: s.claims for s in sheets.dimensions}
    assert by_dimension["Execution"].confirmed_defects == 1  # the lost response's dimension
    assert by_dimension["Governance"].confirmed_defects == 0
    after = review_summary(run_dir)  # a claim changes no score
    assert (after.original, after.corrected, after.unmatched) == (
        before.original,
        before.corrected,
        0,
    )
    assert after.reviews == 2


def test_a_claim_on_nothing_that_failed_is_unmatched_and_a_withdrawn_one_is_gone(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add_reviews(
        run_dir,
        [
            _claim(LOST, "harness.bounded_retries", "confirmed-defect"),  # it passed
            _claim(CLEAN, LINK, "validated-link"),  # not activated there
            _claim(LOST, LINK, "validated-link"),
        ],
    )
    claims = _claims(run_dir, capsys)
    assert (claims["confirmed_defects"], claims["validated_links"], claims["unmatched"]) == (
        0,
        1,
        2,
    )
    add_reviews(run_dir, [_claim(LOST, LINK, "validated-link", verdict="fail")])
    assert _claims(run_dir, capsys)["validated_links"] == 0
    assert len(load_reviews(run_dir)) == 4  # nothing is rewritten


def test_a_claim_on_a_replaced_record_is_stale(run_dir: Path) -> None:
    add_reviews(run_dir, [_claim(LOST, DEFECT, "confirmed-defect")])
    assert len(scan_claims(RunReader.of().read(run_dir))) == 1
    (line,) = review_lines(run_dir)
    forge_reviews(run_dir, [line | {"record_digest": "0" * 64}])  # given on another record
    assert scan_claims(RunReader.of().read(run_dir)) == []
    assert review_summary(run_dir).stale == 1


def test_review_files_written_before_claims_read_as_verdicts(run_dir: Path) -> None:
    overturn = ReviewRequest(
        task=LOST, sample=0, criterion="forbidden.duplicate_charge", verdict="pass"
    )
    add_reviews(run_dir, [overturn])
    (line,) = review_lines(run_dir)
    del line["claim"]  # a line as the review command wrote it before claims existed
    forge_reviews(run_dir, [line])
    (review,) = load_reviews(run_dir)
    assert review.claim == "verdict" and scan_claims(RunReader.of().read(run_dir)) == []
    assert review_summary(run_dir).slots[0].overturned == ["forbidden.duplicate_charge"]


def test_the_review_command_takes_a_claim(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["review", str(run_dir), "--task", LOST, "--verdict", "pass", "--claim"]
    assert main([*argv, "validated-link", "--criterion", LINK]) == 0
    assert main([*argv, "confirmed-defect", "--criterion", DEFECT]) == 0
    capsys.readouterr()
    claims = _claims(run_dir, capsys)
    assert (claims["confirmed_defects"], claims["validated_links"]) == (1, 1)
    assert main([*argv, "validated-link", "--criterion", DEFECT]) == 2  # not HARNESS -> AGENT
    assert main(["review", str(run_dir), "--claim", "validated-link"]) == 2
    with pytest.raises(ReviewError, match="HARNESS -> AGENT"):
        add_reviews(run_dir, [_claim(LOST, "a -> b -> c", "validated-link")])
