"""Forging round 10: a forger who writes files beside a signed run, read by a key-trusting reader.

The forger can write anything in a run directory (and the review files, ledgers and labels the
commands read) but holds no key. Each test performs one attack through the CLI on a small run
made in ``tmp_path`` and asserts the forger gains nothing the trusted key did not sign.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.analysis.report import build_report
from harness_world.release import ReviewRequest, add_reviews
from harness_world.running.heldout import candidate_hash, freeze_split, ledger_path, split_hooks
from harness_world.running.journal import JournalHead, chain_link, head_path
from harness_world.running.reader import RunReader
from harness_world.running.reference_agents import reference_agent
from harness_world.running.reviews import review_anchor
from harness_world.running.revision import Revision
from tests.conftest import Cli, requires
from tests.release.conftest import forge_reviews
from tests.trust._helpers import TASKS, do_nothing, keypair, tasks

signing = requires("cryptography", "signing needs the [sign] extra")

LOST = "payments.charge_lost_response"  # naive-retry: a failed harness criterion, two links
DEFECT = "harness.reconcile_before_retry"
LINK = f"{DEFECT} -> forbidden.duplicate_charge"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated seeds and judgements of these tests kept in a folder of their own."""
    monkeypatch.setenv("HARNESS_WORLD_CACHE", str(tmp_path / "cache"))


def _signed_naive_retry(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A signed payments run whose lost charge response the naive agent retried: (run, key,
    public key)."""
    key, pub = keypair(tmp_path)
    payments = [t for t in hw.load_tasks("payments") if t.id == LOST]
    run = tmp_path / "run"
    hw.run(payments, reference_agent("payments", "naive-retry"), out=run, sign_key=key)
    return run, key, pub


def _claim_line(run: Path, claim: str, criterion: str) -> dict[str, Any]:
    """A review line as anyone can write it: unsigned, bound to the slot's current record."""
    digest = json.loads((run / "index.jsonl").read_text().splitlines()[-1])["digest"]
    return {
        "task": LOST,
        "sample": 0,
        "criterion": criterion,
        "verdict": "pass",
        "note": "",
        "reviewer": "someone",
        "time": "2026-01-01T00:00:00+00:00",
        "record_digest": digest,
        "claim": claim,
    }


def _claims(cli: Cli, *argv: str | Path) -> dict[str, int]:
    done = cli("report", *argv, "--json")
    assert done.code == 0, done.err
    claims: dict[str, int] = json.loads(done.out)["layered"]["pooled"]["claims"]
    return claims


@signing
def test_a_forged_claim_beside_a_signed_run_is_not_confirmed_for_its_trusted_key(
    tmp_path: Path, cli: Cli
) -> None:
    """An unsigned confirmed-defect and validated-link claim appended to a signed run's
    review file (chain and head recomputed, as anyone can): ``report --trust-key`` and
    ``conditions --trust-key`` counted both as confirmed although verdicts beside the same
    run count only when the key signed them."""
    run, key, pub = _signed_naive_retry(tmp_path)
    lines = [_claim_line(run, "confirmed-defect", DEFECT), _claim_line(run, "validated-link", LINK)]
    forge_reviews(run, lines)
    trusted = _claims(cli, run, "--trust-key", pub)
    assert trusted["activated_links"] == 2  # the record was read and its links found
    assert (trusted["confirmed_defects"], trusted["validated_links"]) == (0, 0)
    done = cli("conditions", run, "--trust-key", pub, "--json")
    assert done.code == 0, done.err
    pooled = json.loads(done.out)["runs"][0]["dimensions"]["pooled"]["claims"]
    assert (pooled["confirmed_defects"], pooled["validated_links"]) == (0, 0)
    # The library's report reads claims through the same key.
    read = build_report(run, RunReader.of(trust_key=pub)).layered.pooled.claims
    assert (read.confirmed_defects, read.validated_links) == (0, 0)
    # Without a key the file is read as it is (unsigned: integrity only), as before.
    assert _claims(cli, run)["confirmed_defects"] == 1
    # The same claim signed by the trusted key stands: the key is what vouches.
    (run / "reviews.jsonl").unlink()
    (run / "reviews.head.json").unlink()
    request = ReviewRequest(
        task=LOST, sample=0, criterion=DEFECT, verdict="pass", claim="confirmed-defect"
    )
    add_reviews(run, [request], key_file=key)
    assert _claims(cli, run, "--trust-key", pub)["confirmed_defects"] == 1


def _signed_failing_run(tmp_path: Path) -> tuple[Path, Path]:
    """A signed helpdesk run whose agent answers nothing: (run, public key)."""
    key, pub = keypair(tmp_path)
    agent = hw.ScriptedAgent(name="lazy", scripts=dict.fromkeys(TASKS, do_nothing))
    run = tmp_path / "run"
    hw.run(tasks(), agent, out=run, sign_key=key)
    return run, pub


def _blame_the_harness(run: Path) -> None:
    labels = [
        {"task_id": t, "sample": 0, "source": "harness", "why": "the harness lost it"}
        for t in TASKS
    ]
    (run / "attributions.json").write_text(json.dumps({"format": 1, "labels": labels}))


@signing
def test_forged_attribution_labels_beside_a_signed_run_are_not_reviewed_for_its_trusted_key(
    tmp_path: Path, cli: Cli
) -> None:
    """``attributions.json`` written by hand beside a signed run: ``diagnose --trust-key``
    attributed the agent's two failures to the harness as *reviewed* labels (and ``report``
    counted them so), though nothing signs a label."""
    run, pub = _signed_failing_run(tmp_path)
    _blame_the_harness(run)
    done = cli("diagnose", run, "--trust-key", pub, "--json")
    assert done.code == 0, done.err
    attribution = json.loads(done.out)["attribution"]
    assert [a["reviewed"] for a in attribution["attributions"]] == [False, False]
    assert {a["source"] for a in attribution["attributions"]} == {"agent"}
    assert attribution["unsigned_labels"] == 2
    text = cli("diagnose", run, "--trust-key", pub)
    assert "2 reviewed label(s) of attributions.json not taken" in text.out
    report = cli("report", run, "--trust-key", pub)
    assert report.code == 0, report.err
    assert "(1 reviewed)" not in report.out and "(2 reviewed)" not in report.out
    # Without a key the labels are read (a run read without a key is read as its files are).
    plain = json.loads(cli("diagnose", run, "--json").out)["attribution"]
    assert [a["reviewed"] for a in plain["attributions"]] == [True, True]


def test_an_attributions_file_that_leads_out_of_the_run_is_refused(
    tmp_path: Path, cli: Cli
) -> None:
    """``attributions.json`` a link to another run's labels (or any file elsewhere): read
    as this run's reviewed labels. Now refused as every side file leading out of a run is."""
    agent = hw.ScriptedAgent(name="lazy", scripts=dict.fromkeys(TASKS, do_nothing))
    run = tmp_path / "run"
    hw.run(tasks(), agent, out=run)
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    _blame_the_harness(elsewhere)
    (run / "attributions.json").symlink_to(elsewhere / "attributions.json")
    done = cli.process("diagnose", run)
    assert done.code == 2, done.out
    lines = [line for line in done.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.err
    assert "leads out of the run directory" in lines[0]


HELD = ("payments.note_payout_direct", "payments.note_payout_direct_ok")


def _append_unsigned(ledger: Path, fields: dict[str, Any]) -> None:
    """One line appended to a chained journal and its unsigned head moved on, as anyone can:
    the heads signed before are kept as they were."""
    data = ledger.read_bytes()
    line = msgspec.json.encode({**fields, "previous": chain_link(data.splitlines()[-1])})
    ledger.write_bytes(data + line + b"\n")
    head = msgspec.json.decode(head_path(ledger).read_bytes(), type=JournalHead)
    moved = msgspec.structs.replace(head, lines=head.lines + 1, head=chain_link(line))
    head_path(ledger).write_bytes(msgspec.json.encode(moved) + b"\n")


@signing
def test_a_ledger_line_the_split_key_did_not_sign_records_no_candidate(
    tmp_path: Path, cli: Cli
) -> None:
    """A candidate run on held-out tasks without ``--split`` (never recorded), and a line
    naming its revision appended to the signed ledger with the unsigned head moved on:
    ``report --split --split-key`` said "this candidate is in its ledger"."""
    key, pub = keypair(tmp_path)
    held = [t for t in hw.load_tasks("payments") if t.id in HELD]
    lock = tmp_path / "heldout.lock"
    freeze_split(held, lock, sign_key=key)
    honest = tmp_path / "honest"
    oracle = reference_agent("payments", "oracle")
    hw.run(held, oracle, out=honest, hooks=split_hooks([lock]), sign_key=key)
    sneak = tmp_path / "sneak"
    hw.run(held, reference_agent("payments", "deny-all"), out=sneak)  # no --split
    argv = ["--split", lock, "--split-key", pub]
    before = cli("report", sneak, *argv)
    assert before.code == 0, before.err
    assert "this candidate is NOT in its ledger\n" in before.out
    revision = json.loads((sneak / "manifest.json").read_text())["revision"]
    line = json.loads(ledger_path(lock).read_text().splitlines()[0])
    line.pop("previous")
    line |= {"revision": revision["id"], "agent": "deny-all", "run": str(sneak)}
    line["candidate"] = candidate_hash(msgspec.convert(revision, Revision))
    _append_unsigned(ledger_path(lock), line)
    done = cli("report", sneak, *argv)
    assert done.code == 0, done.err
    assert "this candidate is NOT in its ledger (named only in lines the trusted key" in done.out
    assert "the 1 after them are not" in done.out
    # Without a key the ledger is read as its files are (integrity only), as before.
    assert "this candidate is in its ledger" in cli("report", sneak, "--split", lock).out


DEEP = "[" * 200_000 + "]" * 200_000  # past msgspec's stack: it raises RecursionError


def _deep_review_line(run: Path) -> None:
    """A review line chained as it must be, with a field nested 200,000 levels deep."""
    revision = json.loads((run / "manifest.json").read_text())["revision"]["id"]
    previous = chain_link(review_anchor(revision)[0])
    fields = {"task": TASKS[0], "sample": 0, "criterion": "state.required", "verdict": "pass"}
    fields |= {"note": "", "reviewer": "", "time": "t", "record_digest": "d"}
    line = msgspec.json.encode({**fields, "previous": previous})[:-1] + f',"x":{DEEP}}}'.encode()
    (run / "reviews.jsonl").write_bytes(line + b"\n")
    head = JournalHead(anchor=previous, lines=1, head=chain_link(line))
    head_path(run / "reviews.jsonl").write_bytes(msgspec.json.encode(head) + b"\n")


def _deep_ledger_line(lock: Path) -> None:
    data = ledger_path(lock).read_bytes()
    line = data.splitlines()[-1][:-1] + f',"x":{DEEP}}}'.encode()
    ledger_path(lock).write_bytes(data.replace(data.splitlines()[-1], line))


def _deep_labels(run: Path) -> None:
    (run / "attributions.json").write_text(f'{{"format": 1, "labels": [], "x": {DEEP}}}')


@pytest.mark.parametrize(
    ("where", "command"),
    [
        ("review line", "report"),
        ("review line", "review"),
        ("ledger line", "split"),
        ("labels", "diagnose"),
    ],
)
def test_side_files_nested_too_deep_are_one_error_line(
    tmp_path: Path, cli: Cli, where: str, command: str
) -> None:
    """A line of ``reviews.jsonl`` or of a held-out ledger, or ``attributions.json``, nested 200,000 levels deep ended in a ``RecursionError``
    traceback (exit 1) in ``report``, ``review``, ``split ledger`` and ``diagnose``."""
    agent = hw.ScriptedAgent(name="lazy", scripts=dict.fromkeys(TASKS, do_nothing))
    lock = tmp_path / "heldout.lock"
    freeze_split(tasks(), lock)
    run = tmp_path / "run"
    hw.run(tasks(), agent, out=run, hooks=split_hooks([lock]))
    edits = {
        "review line": lambda: _deep_review_line(run),
        "ledger line": lambda: _deep_ledger_line(lock),
        "labels": lambda: _deep_labels(run),
    }
    edits[where]()
    argv = {"split": ["split", "ledger", lock]}.get(command, [command, run])
    done = cli.process(*argv, timeout=60)
    assert done.code == 2 and "Traceback" not in done.err, done.err
    lines = [line for line in done.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.err
    assert "recursion depth" in lines[0]
