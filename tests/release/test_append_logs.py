"""Reviews and the held-out ledger cannot be rolled back, reordered or cut unseen.

Both are chained journals with a head beside them that each signing writer signs
(`harness_world.running.journal`). The attacks, each of which worked on the code before:

- deleting or reordering signed lines of ``reviews.jsonl`` brought a withdrawn overturn back,
  and ``review --trust-key`` printed a forged run's scores without checking the run;
- editing the ledger's last line, or recomputing its chain, made ``gate --split`` say
  "1 candidate"; five tuned scripts under one file name counted as one candidate; a held-out
  task changed after the freeze still printed a clean line.

What stays possible without a key is said in the output ("unsigned: integrity only"), and the
tests show it too: a forger who rewrites an unsigned chain and its head is read at his word.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.cli import main
from harness_world.evidence.signing import sign_run, write_keypair
from harness_world.release import ReviewError, ReviewRequest, add_reviews, review_summary
from harness_world.release.review import REVIEWS
from harness_world.running.heldout import (
    LedgerEntry,
    SplitError,
    candidates_on,
    freeze_split,
    ledger_path,
    parse_ledger,
    read_ledger,
    split_hooks,
)
from harness_world.running.journal import append_chained, head_path
from harness_world.running.reference_agents import reference_agent
from tests.conftest import examples, requires
from tests.release.conftest import forge_chain, forge_reviews, payments_run

PLAIN = "payments.charge_timeout"
HELD = ("payments.note_payout_direct", "payments.note_payout_direct_ok")

pytestmark = requires("cryptography", "signing needs the [sign] extra")


def _request(verdict: str) -> ReviewRequest:
    return ReviewRequest(task=PLAIN, sample=0, criterion="state.required", verdict=verdict)  # type: ignore[arg-type]


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _one_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    """A fresh key pair: (private, public)."""
    key, pub = tmp_path / "key.pem", tmp_path / "key.pub"
    write_keypair(key, pub)
    return key, pub


@pytest.fixture
def withdrawn(tmp_path: Path, keys: tuple[Path, Path]) -> Path:
    """A signed run whose reviewer overturned a criterion, then withdrew it (both signed)."""
    key, _ = keys
    run_dir = payments_run(tmp_path / "run", (PLAIN,), "oracle", samples=2)
    revision = json.loads((run_dir / "manifest.json").read_text())["revision"]["id"]
    sign_run(run_dir, revision, key)
    add_reviews(run_dir, [_request("fail")], key_file=key)  # overturned: 1 of 2 passes
    add_reviews(run_dir, [_request("pass")], key_file=key)  # withdrawn: 2 of 2 again
    return run_dir


def test_deleting_a_signed_withdrawal_is_named_and_never_restores_the_overturn(
    withdrawn: Path, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, pub = keys
    assert review_summary(withdrawn, trust_key=pub).corrected == 2
    overturn, withdrawal = _lines(withdrawn / REVIEWS)
    (withdrawn / REVIEWS).write_bytes(overturn)  # the withdrawal deleted
    with pytest.raises(ReviewError, match="line 2 was cut from the end"):
        review_summary(withdrawn, trust_key=pub)
    assert main(["review", str(withdrawn), "--trust-key", str(pub)]) == 2
    assert "line 2 was cut from the end" in _one_error(capsys.readouterr().err)
    (withdrawn / REVIEWS).write_bytes(withdrawal + overturn)  # reordered: the overturn last
    with pytest.raises(ReviewError, match="line 1 does not follow the run's revision"):
        review_summary(withdrawn, trust_key=pub)
    with pytest.raises(ReviewError, match="line 1 does not follow"):
        review_summary(withdrawn)  # without a key too: the chain is integrity


def test_a_recomputed_review_chain_is_caught_by_the_head_the_trusted_key_signed(
    withdrawn: Path, keys: tuple[Path, Path]
) -> None:
    _, pub = keys
    overturn = json.loads(_lines(withdrawn / REVIEWS)[0])
    # The withdrawal deleted, the chain and the unsigned head rewritten, the signed head kept.
    forge_reviews(withdrawn, [overturn], keep_signed=True)
    with pytest.raises(ReviewError, match=r"covers 2 line\(s\) the journal no longer begins"):
        review_summary(withdrawn, trust_key=pub)
    # The signed head dropped as well: the trusted key's own line now lies past its head.
    forge_reviews(withdrawn, [overturn])
    with pytest.raises(ReviewError, match="signed by the trusted key but lies after the head"):
        review_summary(withdrawn, trust_key=pub)
    # Without a key the forgery is read: the limit the output states.
    unsigned = review_summary(withdrawn)
    assert unsigned.corrected == 1 and unsigned.chain is not None
    assert unsigned.chain.trusted is None


def test_review_trust_key_checks_the_runs_own_signature_first(
    withdrawn: Path, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, pub = keys
    assert main(["review", str(withdrawn), "--trust-key", str(pub)]) == 0
    assert "lines 1-2 signed by the trusted key" in capsys.readouterr().out
    with (withdrawn / "index.jsonl").open("ab") as handle:  # the run's index forged
        handle.write(b"\n")
    assert main(["review", str(withdrawn), "--trust-key", str(pub)]) == 1  # a failed check
    out, err = capsys.readouterr()
    assert out == "" and "provenance: the index changed since it was signed" in _one_error(err)


def test_the_review_command_says_an_unsigned_chain_is_integrity_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = payments_run(tmp_path / "run", (PLAIN,), "oracle", samples=1)
    argv = ["review", str(run_dir), "--task", PLAIN, "--criterion", "state.required"]
    assert main([*argv, "--verdict", "fail"]) == 0
    assert "review file: 1 line(s), head" in (out := capsys.readouterr().out)
    assert "unsigned: integrity only" in out


# -- the held-out ledger ---------------------------------------------------------------------


def _tasks(ids: tuple[str, ...]) -> list[hw.Task]:
    return [t for t in hw.load_tasks("payments") if t.id in ids]


def _split_with_two_candidates(tmp_path: Path, key: Path | None = None) -> Path:
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock, sign_key=key)
    for agent in ("oracle", "deny-all"):
        hw.run(
            _tasks(HELD),
            reference_agent("payments", agent),
            out=tmp_path / agent,
            hooks=split_hooks([lock]),
            sign_key=key,
        )
    return lock


def test_editing_the_ledgers_last_line_is_named_by_gate(
    release_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = _split_with_two_candidates(tmp_path)
    first, last = (json.loads(line) for line in _lines(ledger_path(lock)))
    forged = last | {k: first[k] for k in ("revision", "candidate") if k in first}
    ledger_path(lock).write_bytes(_lines(ledger_path(lock))[0] + json.dumps(forged).encode())
    policy = tmp_path / "p.toml"
    policy.write_text("[latency]\nmax_p95_s = 30\n")
    argv = ["gate", str(policy), str(release_runs["baseline"]), str(release_runs["oracle"])]
    assert main([*argv, "--split", str(lock)]) == 2
    out, err = capsys.readouterr()
    assert "1 candidate" not in out
    assert "line 2 (the last) was edited since it was written" in _one_error(err)


def test_a_recomputed_ledger_chain_is_caught_with_the_trusted_key(
    tmp_path: Path, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    key, pub = keys
    lock = _split_with_two_candidates(tmp_path, key)
    assert main(["split", "ledger", str(lock), "--trust-key", str(pub)]) == 0
    assert "2 candidate(s) in 2 run(s)" in (out := capsys.readouterr().out)
    assert "lines 1-2 signed by the trusted key" in out
    first = json.loads(_lines(ledger_path(lock))[0])
    anchor = lock.read_bytes()
    # The second candidate deleted, every link and the unsigned head recomputed.
    forge_chain(ledger_path(lock), anchor, [first], keep_signed=True)
    argv = ["split", "ledger", str(lock), "--trust-key", str(pub)]
    assert main(argv) == 2
    assert "covers 2 line(s) the journal no longer begins with" in capsys.readouterr().err
    forge_chain(ledger_path(lock), anchor, [first])  # the signed head dropped too
    assert main(argv) == 2
    assert "no head signed by the trusted key" in _one_error(capsys.readouterr().err)
    # Without a key the forgery is read, and the output says what it is worth.
    assert main(["split", "ledger", str(lock)]) == 0
    out = capsys.readouterr().out
    assert "1 candidate(s) in 1 run(s)" in out and "unsigned: integrity only" in out


def test_a_deleted_signed_ledger_is_told_from_one_never_written(
    tmp_path: Path, keys: tuple[Path, Path]
) -> None:
    key, pub = keys
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock, sign_key=key)  # the empty ledger's head, signed
    assert read_ledger(lock, trust_key=pub) == []
    hw.run(
        _tasks(HELD),
        reference_agent("payments", "oracle"),
        out=tmp_path / "a",
        hooks=split_hooks([lock]),
    )
    ledger_path(lock).unlink()
    head_path(ledger_path(lock)).unlink()
    with pytest.raises(SplitError, match="no head signed by the trusted key"):
        read_ledger(lock, trust_key=pub)


GOOD = "from harness_world.coverage import load_oracles\nSCRIPTS = load_oracles('payments')\n"


def test_five_tuned_scripts_with_one_file_name_are_five_candidates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock)
    script = tmp_path / "agent.py"
    argv = ["run", "--world", "payments", "--tasks", *HELD, "--agent", "scripted"]
    argv += ["--script", str(script), "--split", str(lock), "--no-precheck", "--quiet"]
    for version in range(5):  # one file, tuned five times
        script.write_text(f"{GOOD}# tuning {version}\n")
        assert main([*argv, "--out", str(tmp_path / f"v{version}")]) == 0
    assert main([*argv, "--out", str(tmp_path / "again"), "--seed", "7"]) == 0  # one run more
    assert candidates_on(lock) == 5
    capsys.readouterr()
    assert main(["split", "ledger", str(lock)]) == 0
    assert "5 candidate(s) in 6 run(s)" in capsys.readouterr().out


def test_a_held_out_task_changed_after_the_freeze_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock)
    loosened = [msgspec.structs.replace(t, notes=t.notes + " loosened") for t in _tasks(HELD)]
    run = tmp_path / "run"
    hw.run(loosened, reference_agent("payments", "oracle"), out=run, hooks=split_hooks([lock]))
    capsys.readouterr()
    assert main(["report", str(run), "--split", str(lock)]) == 0
    named = f"CHANGED since the freeze: {', '.join(HELD)}"
    assert named in capsys.readouterr().out
    # Named from the run's own revision too, not only from what its ledger line says.
    (line,) = (json.loads(x) for x in _lines(ledger_path(lock)))
    forge_chain(ledger_path(lock), lock.read_bytes(), [line | {"changed": []}])
    assert main(["report", str(run), "--split", str(lock), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["heldout"]["changed"] == sorted(HELD)


# -- the property: no edit of a signed chain survives a reader trusting its key --------------


@pytest.fixture(scope="module")
def module_keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("keys")
    write_keypair(folder / "k.pem", folder / "k.pub")
    return folder / "k.pem", folder / "k.pub"


def _entry(n: int, previous: str) -> LedgerEntry:
    return LedgerEntry(revision=f"r{n}", agent="a", time="t", run="x", covered=1, previous=previous)


MUTATIONS = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 5)),
    st.tuples(st.just("swap"), st.integers(0, 5), st.integers(0, 5)),
    st.tuples(st.just("truncate"), st.integers(0, 5)),
    st.tuples(st.just("edit"), st.integers(0, 5)),
)


def _mutated(lines: list[bytes], mutation: tuple[Any, ...]) -> list[bytes]:
    """The journal's lines (as written) after one edit: every other byte stays as it was."""
    kind, at, *rest = mutation
    out, i = list(lines), at % len(lines)
    if kind == "delete":
        del out[i]
    elif kind == "swap":
        j = rest[0] % len(lines)
        j = j if j != i else (i + 1) % len(lines)  # a line swapped with itself is no edit
        out[i], out[j] = out[j], out[i]
    elif kind == "truncate":
        out = out[:i]
    else:
        edited = json.loads(out[i]) | {"revision": "forged"}
        out[i] = msgspec.json.encode(edited) + b"\n"
    return out


@settings(max_examples=examples(25, 300), deadline=None)
@given(count=st.integers(2, 5), mutation=MUTATIONS, recompute=st.booleans(), keep=st.booleans())
def test_no_edit_of_a_signed_ledger_survives_a_reader_trusting_its_key(
    module_keys: tuple[Path, Path],
    count: int,
    mutation: tuple[Any, ...],
    recompute: bool,
    keep: bool,
) -> None:
    key, pub = module_keys
    lock_bytes = b'{"frozen_at": "t", "tasks": {}}'
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "heldout.ledger.jsonl"
        for n in range(count):
            append_chained(
                path, (lock_bytes, "the lock"), LedgerEntry, lambda p, n=n: _entry(n, p), signer=key
            )
        honest = parse_ledger(
            lock_bytes, path.read_bytes(), head_path(path).read_bytes(), source=path, trust_key=pub
        )
        assert [e.revision for e in honest.entries] == [f"r{n}" for n in range(count)]
        lines = _lines(path)
        changed = _mutated(lines, mutation)
        assert changed != lines  # every mutation changes something (entries differ)
        if recompute:  # the forger rewrites every link and the head, as anyone can
            forge_chain(path, lock_bytes, [json.loads(x) for x in changed], keep_signed=keep)
        else:  # the lines edited, the head as it was
            path.write_bytes(b"".join(changed))
        data, head = path.read_bytes(), head_path(path).read_bytes()
        with pytest.raises(SplitError):
            parse_ledger(lock_bytes, data, head, source=path, trust_key=pub)
        if not recompute:  # an edit alone is caught without any key
            with pytest.raises(SplitError):
                parse_ledger(lock_bytes, data, head, source=path)
