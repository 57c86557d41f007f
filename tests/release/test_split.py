"""Held-out splits: the lock, the candidate ledger a run appends to, near-duplicate checks."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.cli import main
from harness_world.grading.task import load_task_file
from harness_world.release import heldout_use, near_duplicates, tasks_from
from harness_world.release.split import DEFAULT_THRESHOLD, jaccard, shingles
from harness_world.running.heldout import (
    SplitError,
    candidates_on,
    freeze_split,
    ledger_path,
    load_split,
    read_ledger,
    record_candidate,
    split_hooks,
)
from harness_world.running.journal import BrokenChain, append_chained, read_chained
from harness_world.running.reference_agents import reference_agent
from harness_world.running.rundir import load_manifest
from tests.conftest import REPO
from tests.release.conftest import TASKS

HELD = ("payments.note_payout_direct", "payments.note_payout_direct_ok")


def _tasks(ids: tuple[str, ...]) -> list[hw.Task]:
    return [t for t in hw.load_tasks("payments") if t.id in ids]


def test_a_frozen_split_pins_ids_and_hashes_and_stays_frozen(tmp_path: Path) -> None:
    lock = tmp_path / "heldout.lock"
    split = freeze_split(_tasks(HELD), lock)
    assert load_split(lock) == split
    assert split.tasks == {t.id: t.hash for t in _tasks(HELD)}
    with pytest.raises(SplitError, match="already frozen"):
        freeze_split(_tasks(TASKS), lock)
    assert load_split(lock) == split
    assert ledger_path(lock).name == "heldout.ledger.jsonl"


def test_the_ledger_counts_every_candidate_run_on_the_split(tmp_path: Path) -> None:
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock)
    tasks = _tasks(TASKS)
    for agent in ("oracle", "deny-all"):
        hw.run(
            tasks,
            reference_agent("payments", agent),
            out=tmp_path / agent,
            hooks=split_hooks([lock]),
        )
    hw.run(
        tasks,
        reference_agent("payments", "oracle"),
        out=tmp_path / "oracle",
        hooks=split_hooks([lock]),
    )
    other = _tasks(("payments.refund_timeout",))  # no held-out task: refused, nothing written
    with pytest.raises(SplitError, match="none of the run's 1 task"):
        hw.run(
            other,
            reference_agent("payments", "oracle"),
            out=tmp_path / "dev",
            hooks=split_hooks([lock]),
        )
    assert not (tmp_path / "dev").exists()
    entries = read_ledger(lock)
    assert [e.agent for e in entries] == ["oracle:payments", "deny-all:payments", "oracle:payments"]
    assert all(e.covered == 2 and not e.changed for e in entries)
    assert candidates_on(lock) == 2  # the resumed oracle run is the same candidate
    use = heldout_use(lock, entries[1].revision)
    assert (use.candidates, use.runs, use.tasks, use.candidate_recorded) == (2, 3, 2, True)


def test_a_task_changed_since_the_freeze_is_named(tmp_path: Path) -> None:
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock)
    edited = [msgspec.structs.replace(t, notes=t.notes + " edited") for t in _tasks(HELD)]
    hw.run(
        edited,
        reference_agent("payments", "oracle"),
        out=tmp_path / "run",
        hooks=split_hooks([lock]),
    )
    assert read_ledger(lock)[0].changed == sorted(HELD)


def test_gate_prints_the_candidates_of_the_split(
    release_runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock)
    policy = tmp_path / "p.toml"
    policy.write_text("[latency]\nmax_p95_s = 30\n")
    argv = ["gate", str(policy), str(release_runs["baseline"]), str(release_runs["oracle"])]
    assert main([*argv, "--split", str(lock)]) == 0
    assert "0 candidate(s) evaluated on its 2 tasks (0 run(s)); this candidate is NOT" in (
        capsys.readouterr().out
    )
    assert main([*argv, "--split", str(lock), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["heldout"]["candidates"] == 0


ORIGINAL = next(t for t in hw.load_tasks("payments") if t.id == "payments.charge_lost_response")
PARAPHRASES = [
    "Order O-00031 remains open. Please charge the full amount to the card the customer has on "
    "file, record that payment on the order and send a receipt naming the charge to the customer.",
    "The customer's order O-00031 has not been paid yet: bill its whole amount to the card we "
    "hold for them, note the payment on the order, then mail them a receipt that names the charge.",
]


@pytest.mark.parametrize("text", PARAPHRASES)
def test_a_paraphrase_is_caught_and_a_different_task_is_not(text: str) -> None:
    paraphrase = msgspec.structs.replace(ORIGINAL, id="heldout.paraphrase", instruction=text)
    dev = [t for t in hw.load_tasks("payments") if t.family != "charge"] + [ORIGINAL]
    found = near_duplicates(dev, [paraphrase])
    assert [d.development for d in found] == ["payments.charge_lost_response"]
    assert found[0].similarity >= DEFAULT_THRESHOLD
    refund = next(t for t in hw.load_tasks("payments") if t.id == "payments.refund_timeout")
    assert near_duplicates([ORIGINAL], [refund]) == []


@given(st.text(max_size=80), st.text(max_size=80))
def test_jaccard_is_a_symmetric_similarity(a: str, b: str) -> None:
    x, y = shingles(a), shingles(b)
    assert jaccard(x, y) == jaccard(y, x)
    assert 0.0 <= jaccard(x, y) <= 1.0
    if x:
        assert jaccard(x, x) == 1.0


def test_the_split_command_freezes_lists_and_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "heldout.lock"
    assert main(["split", "freeze", "--tasks", "payments", "--out", str(lock)]) == 0
    assert main(["split", "freeze", "--tasks", "payments", "--out", str(lock)]) == 2
    assert len(load_split(lock).tasks) == len(tasks_from(["payments"]))
    capsys.readouterr()
    assert main(["split", "ledger", str(lock)]) == 0
    assert "0 candidate(s) in 0 run(s)" in capsys.readouterr().out
    # Development: the refund tasks (one file of variants); held out: a copy of a charge task's
    # text.
    held = tmp_path / "held"
    held.mkdir()
    source = REPO / "tasks" / "payments"
    copied = {t.id: t for t in load_task_file(source / "charge.toml")}["payments.charge_timeout"]
    (held / "t.toml").write_text(
        'id = "payments.copy_timeout"\nworld = "payments"\nfamily = "charge"\n'
        f"instruction = {json.dumps(copied.instruction)}\n"
    )
    refunds = source / "refund.toml"
    assert len(tasks_from([refunds])) == 5
    assert main(["split", "check", "--dev", str(refunds), "--heldout", str(held)]) == 0
    assert main(["split", "check", "--dev", "payments", "--heldout", str(held)]) == 1
    assert "payments.copy_timeout  ~  payments.charge_timeout" in capsys.readouterr().out


def _run_on_split(lock: Path, out: Path, agent: str, *tasks: str) -> int:
    argv = ["run", "--world", "payments", "--agent", agent, "--tasks", *tasks]
    return main([*argv, "--split", str(lock), "--out", str(out), "--quiet"])


def test_run_on_a_split_counts_each_candidate_and_refuses_other_tasks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock)
    for agent in ("oracle", "give-up"):
        assert _run_on_split(lock, tmp_path / agent, agent, *HELD) == 0
    assert [e.agent for e in read_ledger(lock)] == ["oracle:payments", "give-up:payments"]
    assert candidates_on(lock) == 2
    capsys.readouterr()
    assert _run_on_split(lock, tmp_path / "dev", "oracle", "payments.refund_timeout") == 2
    err = capsys.readouterr().err
    assert "none of the run's 1 task(s) is in this held-out split" in err
    assert "payments.note_payout_direct" in err and "Traceback" not in err
    assert not (tmp_path / "dev").exists() and len(read_ledger(lock)) == 2
    assert main(["report", str(tmp_path / "give-up"), "--split", str(lock)]) == 0
    assert "2 candidate(s) evaluated on its 2 tasks (2 run(s)); this candidate is in" in (
        capsys.readouterr().out
    )


def test_a_crossed_run_on_a_split_records_every_configuration(tmp_path: Path) -> None:
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock)
    argv = ["run", "--world", "payments", "--tasks", *HELD, "--split", str(lock)]
    argv += ["--ablate", "agent=give-up", "--out", str(tmp_path / "ablation"), "--quiet"]
    assert main(argv) == 0
    assert sorted(e.agent for e in read_ledger(lock)) == ["give-up:payments", "oracle:payments"]


def _two_candidates(tmp_path: Path) -> Path:
    lock = tmp_path / "heldout.lock"
    freeze_split(_tasks(HELD), lock)
    for agent in ("oracle", "deny-all", "give-up"):
        hw.run(
            _tasks(HELD),
            reference_agent("payments", agent),
            out=tmp_path / agent,
            hooks=split_hooks([lock]),
        )
    return lock


def test_an_edited_or_removed_ledger_line_is_named(tmp_path: Path) -> None:
    lock = _two_candidates(tmp_path)
    ledger = ledger_path(lock)
    lines = ledger.read_bytes().splitlines(keepends=True)
    ledger.write_bytes(lines[0].replace(b"oracle:payments", b"oracle:forged") + b"".join(lines[1:]))
    with pytest.raises(SplitError, match="line 2 does not follow the line before it"):
        read_ledger(lock)
    ledger.write_bytes(lines[0] + lines[2])  # the second candidate deleted
    with pytest.raises(SplitError, match="line 2 does not follow"):
        candidates_on(lock)
    ledger.write_bytes(b"".join(lines))
    assert candidates_on(lock) == 3
    ledger.write_bytes(lines[1] + lines[2])  # the first candidate deleted
    with pytest.raises(SplitError, match="line 1 does not follow the lock"):  # before any write
        hw.run(
            _tasks(HELD),
            reference_agent("payments", "oracle"),
            out=tmp_path / "x",
            hooks=split_hooks([lock]),
        )
    assert not (tmp_path / "x").exists()
    with pytest.raises(SplitError, match="not appending"):  # nothing is added to a broken chain
        revision = load_manifest(tmp_path / "oracle").revision
        record_candidate(lock, _tasks(HELD), revision, "a", tmp_path / "x")
    assert ledger.read_bytes() == lines[1] + lines[2]


def test_a_lock_edited_after_a_candidate_ran_is_named(tmp_path: Path) -> None:
    lock = _two_candidates(tmp_path)
    lock.write_text(lock.read_text().replace('frozen_at": "2', 'frozen_at": "1'))
    with pytest.raises(SplitError, match=r"does not follow the lock .* was edited"):
        read_ledger(lock)
    assert main(["split", "ledger", str(lock)]) == 2


def test_a_lock_is_not_frozen_again_over_its_ledger(tmp_path: Path) -> None:
    lock = _two_candidates(tmp_path)
    lock.unlink()
    with pytest.raises(SplitError, match="a ledger is already beside it"):
        freeze_split(_tasks(HELD), lock)


class _Entry(msgspec.Struct, frozen=True, kw_only=True):
    n: int
    previous: str


@given(st.integers(2, 5), st.data())
def test_any_edit_of_a_line_breaks_the_chain_or_its_head(count: int, data: st.DataObject) -> None:
    anchor = (b"anchor", "the anchor")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "j.jsonl"
        for n in range(count):
            append_chained(path, anchor, _Entry, lambda link, n=n: _Entry(n=n, previous=link))
        assert [e.n for e in read_chained(path, anchor, _Entry).items] == list(range(count))
        lines = path.read_bytes().splitlines(keepends=True)
        line = data.draw(st.integers(0, count - 1))
        lines[line] = lines[line].replace(b'"n":', b'"n":9')  # still an entry, another one
        path.write_bytes(b"".join(lines))
        named = (
            f"line {line + 2} does not follow" if line < count - 1 else f"line {count} \\(the last"
        )
        with pytest.raises(BrokenChain, match=named):
            read_chained(path, anchor, _Entry)
        with pytest.raises(BrokenChain, match="line 1 does not follow the anchor"):
            read_chained(path, (b"another", "the anchor"), _Entry)
