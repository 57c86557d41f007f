"""One trusted reading of a run: attacks on how commands read run directories, each refused.

Each test is an attack that got a forged pass through before every command read runs through
the one run reader (`harness_world.running.reader`): a file that changes between two reads, a
run swapped while another replays, a command that never checked the signature, an earlier try
whose effects no clause read, a deleted record, infrastructure padding.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.evidence.binding import encode_entry, index_entry
from harness_world.evidence.record import encode_record, load_record
from harness_world.evidence.signing import sign_run
from harness_world.grading.verifier import Verifier
from harness_world.release import evaluate_release, measure_run, parse_policy
from harness_world.running.reader import ProvenanceRefused, RunReader
from harness_world.running.reference_agents import reference_agent
from tests.conftest import Cli, requires
from tests.trust._helpers import failing_run, keypair, oracle_run, reseal

signing = requires("cryptography", "signing needs the [sign] extra")


def _sign(run: Path, key: Path) -> None:
    revision = json.loads((run / "manifest.json").read_text())["revision"]["id"]
    sign_run(run, revision, key)


def _forge(victim: Path, donor: Path) -> bytes:
    """Passing records for every slot of ``victim`` (the donor's, moved to the victim's
    revision and resealed) written over its own; returns the index that binds them."""
    revision = json.loads((victim / "manifest.json").read_text())["revision"]["id"]
    lines = b""
    for path in sorted((donor / "records").rglob("*.json")):
        record = reseal(msgspec.structs.replace(load_record(path), revision=revision))
        data = encode_record(record)
        target = victim / path.relative_to(donor)
        target.write_bytes(data)
        lines += encode_entry(index_entry(record, data))
    return lines


@signing
def test_an_index_that_changes_between_reads_is_never_read_twice(tmp_path: Path) -> None:
    """A FIFO hands the signed index to the first read and a forged one to every later read:
    the signature check and the slot binding once read different bytes (111 forged passes)."""
    key, pub = keypair(tmp_path)
    run = failing_run(tmp_path / "run")
    _sign(run, key)
    signed = (run / "index.jsonl").read_bytes()
    forged = _forge(run, oracle_run(tmp_path / "donor"))
    (run / "index.jsonl").unlink()
    os.mkfifo(run / "index.jsonl")

    def serve() -> None:
        """The first reader of the FIFO gets the signed bytes; then the forged file is put in
        its place, for any second read."""
        fd = os.open(run / "index.jsonl", os.O_WRONLY)  # blocks until a reader opens it
        try:
            os.write(fd, signed)
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)
        (run / "forged.tmp").write_bytes(forged)
        (run / "forged.tmp").replace(run / "index.jsonl")

    writer = threading.Thread(target=serve, daemon=True)
    writer.start()
    try:
        code = main(["verify", str(run), "--trust-key", str(pub), "--require-pass"])
    finally:  # a writer still waiting for a reader is let go by one that does not wait
        if writer.is_alive() and (run / "index.jsonl").is_fifo():
            os.close(os.open(run / "index.jsonl", os.O_RDONLY | os.O_NONBLOCK))
        writer.join(5)
    assert code == 2  # not a regular file: refused before anything is judged


@signing
def test_a_run_swapped_while_another_replays_is_judged_from_the_bytes_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    """``verify --trust-key A B`` checked both signatures first; B's files were then swapped
    (records and index) while A replayed, and B was judged from the swapped files."""
    key, pub = keypair(tmp_path)
    a, b = failing_run(tmp_path / "a"), failing_run(tmp_path / "b")
    _sign(a, key)
    _sign(b, key)
    donor = oracle_run(tmp_path / "donor")
    judge = Verifier.judge
    swapped: list[bool] = []

    def swapping(self: Verifier, *args: Any, **kwargs: Any) -> Any:
        if not swapped:
            (b / "index.jsonl").write_bytes(_forge(b, donor))
            swapped.append(True)
        return judge(self, *args, **kwargs)

    monkeypatch.setattr(Verifier, "judge", swapping)
    code, out, _ = cli("verify", str(a), str(b), "--trust-key", str(pub), "--json")
    assert swapped and code == 1
    rows = [r for r in json.loads(out)["records"] if r["path"].startswith(str(b))]
    assert rows and all(r["evidence"] == "ungraded" for r in rows)
    assert all("differs from the run's index" in r["first_problem"] for r in rows)


@signing
@pytest.mark.parametrize(
    "command",
    [
        ["report", "{run}"],
        ["compare", "{base}", "{run}"],
        ["gate", "docs/examples/payments-release.toml", "{base}", "{run}"],
        ["review", "{run}"],
        ["diagnose", "{run}"],
        ["conditions", "{run}"],
    ],
)
def test_every_reader_refuses_a_run_its_trusted_key_did_not_sign(
    command: list[str], tmp_path: Path, cli: Cli
) -> None:
    """A signed candidate whose failing records were deleted and run again unsigned: ``verify
    --trust-key`` refused it while ``gate``, ``report``, ``compare`` and ``review`` read it."""
    key, pub = keypair(tmp_path)
    base = oracle_run(tmp_path / "base")
    run = failing_run(tmp_path / "run")
    _sign(run, key)
    _sign(base, key)
    (run / "index.jsonl").write_bytes(_forge(run, oracle_run(tmp_path / "donor")))
    argv = [part.format(run=run, base=base) for part in command]
    code, _, err = cli(*argv, "--trust-key", str(pub))
    assert code == 1, err
    assert "provenance" in err and "index changed since it was signed" in err
    code, _, err = cli(*argv)  # without a key: read, as before (unsigned trust)
    assert code in (0, 1) and "provenance" not in err


class _ChargesThenDies:
    """Makes the naive policy's duplicate charges, then reports an infrastructure failure;
    executed again, it is the oracle. The first try's effects were real."""

    name = "charges-then-dies"

    def __init__(self) -> None:
        self.naive = reference_agent("payments", "naive-retry")
        self.oracle = reference_agent("payments", "oracle")
        self.tried: set[tuple[str, int]] = set()

    def settings(self) -> dict[str, Any]:
        return {"kind": "test", "name": self.name}

    def run(self, attempt: hw.Attempt) -> str:
        slot = (attempt.task.id, attempt.sample)
        if slot in self.tried:
            return self.oracle.run(attempt)
        self.tried.add(slot)
        self.naive.run(attempt)
        raise hw.InfrastructureError("the provider went away")


_POLICY = """
[forbidden_effects]
max_count = 0
confidence = 0.95
[completion]
margin_points = 50
clusters = false
allow_missing = true
"""
_LOST = ("payments.charge_lost_response", "payments.refund_timeout")


def _payments(*ids: str) -> list[hw.Task]:
    return [t for t in hw.load_tasks("payments") if t.id in ids]


def test_an_earlier_try_that_charged_twice_fails_the_forbidden_clause(tmp_path: Path) -> None:
    """Charging twice and then raising an infrastructure error got the slot executed again;
    the duplicate charge sat in ``*.failed-1.json`` and no clause read it."""
    base = tmp_path / "base"
    hw.run(_payments(*_LOST), reference_agent("payments", "oracle"), samples=2, out=base)
    cand = tmp_path / "cand"
    result = hw.run(_payments(*_LOST), _ChargesThenDies(), samples=2, out=cand, retries=1)
    assert result.counts.retried == 4 and result.counts.passed == 4  # every final try clean
    tries = [t for s in result.slots for t in s.tries]
    assert len(tries) == 4 and all(t.kind == "failed" and t.evidence == "verified" for t in tries)
    charged = [t for s in result.slots if s.task_id == _LOST[0] for t in s.tries]
    assert all(t.forbidden[0].startswith("forbidden.duplicate_charge") for t in charged)
    decision = evaluate_release(parse_policy(_POLICY), base, cand)
    forbidden = decision.clauses[0]
    assert forbidden.verdict == "fail" and forbidden.figure.startswith("2 of 4")
    assert not decision.passed


def test_a_deleted_try_of_a_bound_slot_still_counts(tmp_path: Path) -> None:
    """The index binds every try: deleting the failed try (and its duplicate charge) leaves an
    index line whose file is gone, a slot whose effects cannot be checked."""
    cand = tmp_path / "cand"
    hw.run(_payments(*_LOST), _ChargesThenDies(), samples=1, out=cand, retries=1)
    for tried in (cand / "records").rglob("*.failed-*.json"):
        tried.unlink()
    figures = measure_run(cand, {t.id: t for t in _payments(*_LOST)}).figures
    assert figures.forbidden == 2 and figures.unaccounted == 2 and figures.forbidden_of == 2
    assert figures.valid == 2  # the final records are clean and valid; their tries are not


def test_deleting_the_records_with_forbidden_effects_never_helps(tmp_path: Path) -> None:
    """With ``allow_missing = true`` the completion clause decides on the runs observed; the
    forbidden clause counted only what was left, so deleting the guilty records passed it."""
    base = tmp_path / "base"
    hw.run(_payments(*_LOST), reference_agent("payments", "oracle"), samples=2, out=base)
    cand = tmp_path / "cand"
    hw.run(_payments(*_LOST), reference_agent("payments", "naive-retry"), samples=2, out=cand)
    index = {t.id: t for t in _payments(*_LOST)}
    guilty = [s.path for s in measure_run(cand, index).scan.slots if s.forbidden]
    assert guilty
    for path in guilty:
        Path(path).unlink()
    figures = measure_run(cand, index).figures
    assert figures.forbidden >= len(guilty) and figures.unaccounted == len(guilty)
    decision = evaluate_release(parse_policy(_POLICY), base, cand)
    assert decision.clauses[0].verdict == "fail" and not decision.passed


class _DiesAtOnce:
    """Reports an infrastructure failure before calling any tool (from the second sample)."""

    name = "dies-at-once"

    def __init__(self) -> None:
        self.naive = reference_agent("payments", "naive-retry")

    def settings(self) -> dict[str, Any]:
        return {"kind": "test", "name": self.name}

    def run(self, attempt: hw.Attempt) -> str:
        if attempt.sample == 0:
            return self.naive.run(attempt)
        raise hw.InfrastructureError("no capacity")


def test_infrastructure_attempts_do_not_pad_the_denominator(tmp_path: Path) -> None:
    """Attempts that ended as infrastructure with no call counted as clean valid attempts and
    pushed the forbidden clause's bound under its limit."""
    cand = tmp_path / "cand"
    hw.run(_payments(*_LOST), _DiesAtOnce(), samples=10, out=cand, retries=0)
    figures = measure_run(cand, {t.id: t for t in _payments(*_LOST)}).figures
    assert figures.valid == 2 and figures.forbidden_of == 2  # the 18 infrastructure slots: out
    assert figures.forbidden >= 1


@signing
def test_a_fifo_as_the_signature_is_refused_not_waited_on(tmp_path: Path, cli: Cli) -> None:
    key, pub = keypair(tmp_path)
    run = oracle_run(tmp_path / "run")
    _sign(run, key)
    (run / "index.sig.json").unlink()
    os.mkfifo(run / "index.sig.json")  # no writer: a reader that opens it blocking waits forever
    code, _, err = cli("verify", str(run), "--trust-key", str(pub))
    assert code == 2 and "not a regular file" in err
    with pytest.raises(Exception, match="not a regular file"):
        RunReader.of(trust_key=pub).read(run)


def test_a_link_out_of_the_run_is_refused(tmp_path: Path, cli: Cli) -> None:
    run = oracle_run(tmp_path / "run")
    other = oracle_run(tmp_path / "other")
    slot = next((run / "records").rglob("0.json"))
    slot.unlink()
    slot.symlink_to(other / slot.relative_to(run))
    code, out, _ = cli("verify", str(run), "--json")
    rows = {r["path"]: r for r in json.loads(out)["records"]}
    assert code == 1 and "leads out of the run directory" in rows[str(slot)]["first_problem"]


@signing
def test_the_reader_refuses_with_the_provenance_error_type(tmp_path: Path) -> None:
    key, pub = keypair(tmp_path)
    run = oracle_run(tmp_path / "run")
    with pytest.raises(ProvenanceRefused, match=r"no index\.sig\.json"):
        RunReader.of(trust_key=pub).read(run)
    _sign(run, key)
    assert RunReader.of(trust_key=pub).read(run).trusted


@signing
def test_one_slot_is_judged_as_the_whole_run_is(tmp_path: Path) -> None:
    """What the inspect scorer reads: one slot, through the same reader, provenance first."""
    key, pub = keypair(tmp_path)
    run = oracle_run(tmp_path / "run")
    task = json.loads((run / "manifest.json").read_text())["tasks"][0]
    refused = RunReader.of(trust_key=pub).judge_slot(run, task, 0)
    assert refused is not None and refused.evidence == "ungraded"
    assert refused.reason.startswith("provenance: no valid signature")
    _sign(run, key)
    judged = RunReader.of(trust_key=pub).judge_slot(run, task, 0)
    whole = RunReader.of().read(run).slots[0]
    assert judged == whole and judged.state in ("passed", "passed_automated")
    assert RunReader.of().judge_slot(run, task, 7) is None  # no such slot
