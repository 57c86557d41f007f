"""Human review: kept beside the run, never changing the grade or the run's signature."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_world.cli import main
from harness_world.evidence.signing import check_run_signature, sign_run, write_keypair
from harness_world.release import ReviewError, ReviewRequest, add_reviews, review_summary
from harness_world.release.review import REVIEWS, load_reviews
from harness_world.running.reader import ProvenanceRefused
from tests.conftest import requires
from tests.release.conftest import forge_reviews, payments_run, review_lines

PROSE = "payments.note_card_direct_ok"  # one prose criterion: prose.1
PLAIN = "payments.charge_timeout"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return payments_run(tmp_path / "run", (PROSE, PLAIN), "oracle", samples=2)


def _request(task: str, criterion: str, verdict: str, sample: int = 0) -> ReviewRequest:
    return ReviewRequest(task=task, sample=sample, criterion=criterion, verdict=verdict)  # type: ignore[arg-type]


def test_original_corrected_and_accepted_stand_side_by_side(run_dir: Path) -> None:
    before = review_summary(run_dir)
    assert (before.graded, before.original, before.corrected, before.accepted) == (4, 4, 4, 2)
    assert before.pending == 2  # the prose task's two samples
    add_reviews(
        run_dir, [_request(PROSE, "prose.1", "pass"), _request(PLAIN, "state.required", "fail")]
    )
    after = review_summary(run_dir)
    assert (after.original, after.corrected, after.accepted, after.pending) == (4, 3, 2, 1)
    overturned = [s for s in after.slots if s.overturned]
    assert [(s.task, s.overturned, s.original) for s in overturned] == [
        (PLAIN, ["state.required"], True)
    ]
    # A later review of the same criterion stands in for the earlier; both lines stay.
    add_reviews(run_dir, [_request(PLAIN, "state.required", "pass")])
    assert review_summary(run_dir).corrected == 4
    assert len(load_reviews(run_dir)) == 3


def test_a_review_names_a_saved_record(run_dir: Path) -> None:
    with pytest.raises(ReviewError, match="no saved record"):
        add_reviews(run_dir, [_request(PLAIN, "state.required", "pass", sample=7)])
    assert not (run_dir / REVIEWS).exists()  # all or none


def test_stale_and_unmatched_reviews_are_counted_and_ignored(run_dir: Path) -> None:
    add_reviews(run_dir, [_request(PLAIN, "no.such", "fail"), _request(PROSE, "prose.1", "pass")])
    lines = review_lines(run_dir)
    forge_reviews(run_dir, [lines[0], lines[1] | {"record_digest": "0" * 64}])  # another record
    summary = review_summary(run_dir)
    assert (summary.stale, summary.unmatched, summary.accepted, summary.corrected) == (1, 1, 2, 4)


@pytest.fixture
def signed_run(run_dir: Path, tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """The run signed: (run, private key, public key, revision)."""
    key, pub = tmp_path / "key.pem", tmp_path / "key.pub"
    write_keypair(key, pub)
    revision = json.loads((run_dir / "manifest.json").read_text())["revision"]["id"]
    sign_run(run_dir, revision, key)
    return run_dir, key, pub, revision


@requires("cryptography", "signing needs the [sign] extra")
def test_a_signed_run_takes_signed_reviews_and_stays_verifiable(
    signed_run: tuple[Path, Path, Path, str],
) -> None:
    run_dir, key, pub, revision = signed_run
    with pytest.raises(ReviewError, match="sign its reviews too"):
        add_reviews(run_dir, [_request(PROSE, "prose.1", "pass")])
    assert not (run_dir / REVIEWS).exists()
    add_reviews(run_dir, [_request(PROSE, "prose.1", "pass")], key_file=key)
    assert check_run_signature(run_dir, revision, pub) == ""
    assert main(["verify", str(run_dir), "--trust-key", str(pub)]) == 0
    summary = review_summary(run_dir, trust_key=pub)
    assert (summary.reviews, summary.unsigned, summary.accepted) == (1, 0, 3)


@requires("cryptography", "signing needs the [sign] extra")
def test_a_forged_or_edited_review_does_not_count_with_a_trusted_key(
    signed_run: tuple[Path, Path, Path, str], tmp_path: Path
) -> None:
    run_dir, key, pub, _ = signed_run
    add_reviews(run_dir, [_request(PLAIN, "state.required", "pass")], key_file=key)
    assert review_summary(run_dir, trust_key=pub).corrected == 4
    (honest,) = review_lines(run_dir)
    # The verdict of a signed line turned to fail, chain and head rewritten: its signature no
    # longer verifies.
    forge_reviews(run_dir, [honest | {"verdict": "fail"}])
    assert review_summary(run_dir).corrected == 3  # read without a key, the edit counts
    edited = review_summary(run_dir, trust_key=pub)
    assert (edited.unsigned, edited.corrected) == (1, 4)
    # A line signed by a key of the forger's own, and one appended with no signature at all.
    other, other_pub = tmp_path / "other.pem", tmp_path / "other.pub"
    write_keypair(other, other_pub)
    (run_dir / "index.sig.json").rename(tmp_path / "kept.sig.json")
    add_reviews(run_dir, [_request(PLAIN, "state.required", "fail")], key_file=other)
    add_reviews(run_dir, [_request(PLAIN, "state.required", "fail")])
    with pytest.raises(ProvenanceRefused, match=r"no index\.sig\.json"):  # the run itself
        review_summary(run_dir, trust_key=pub)
    (tmp_path / "kept.sig.json").rename(run_dir / "index.sig.json")
    forged = review_summary(run_dir, trust_key=pub)
    assert (forged.reviews, forged.unsigned, forged.corrected) == (3, 3, 4)


@requires("cryptography", "signing needs the [sign] extra")
def test_the_review_command_signs_and_trusts(
    signed_run: tuple[Path, Path, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, key, pub, _ = signed_run
    argv = ["review", str(run_dir), "--task", PLAIN, "--criterion", "state.required"]
    assert main([*argv, "--verdict", "fail"]) == 2  # a signed run: no key, no review
    assert "sign its reviews too" in capsys.readouterr().err
    assert main([*argv, "--verdict", "fail", "--sign-key", str(key)]) == 0
    capsys.readouterr()
    assert main(["review", str(run_dir), "--trust-key", str(pub), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["reviews"], data["unsigned"], data["corrected"]) == (1, 0, 3)


def test_the_review_command_and_its_batch_form(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["review", str(run_dir), "--task", PROSE, "--criterion", "prose.1", "--verdict"]
    assert main([*argv, "pass", "--note", "names the last four", "--reviewer", "ana"]) == 0
    assert "accepted (prose reviewed and passed) 3 of 4" in capsys.readouterr().out
    batch = tmp_path / "batch.toml"
    batch.write_text(
        f'[[review]]\ntask = "{PROSE}"\nsample = 1\ncriterion = "prose.1"\nverdict = "pass"\n'
    )
    assert main(["review", str(run_dir), "--batch", str(batch), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["accepted"], data["pending"], data["reviews"]) == (4, 0, 2)
    assert load_reviews(run_dir)[0].reviewer == "ana"
    assert main(["review", str(run_dir), "--task", PROSE]) == 2
    assert main(["review", str(tmp_path / "absent")]) == 2
