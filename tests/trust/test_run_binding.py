"""Hole 3 of issue 11: records are bound to their run. Hole 4: multi-worker runs re-grade.

A run directory's records are checked against their slots (task, sample, seed, revision and
the digest in the run's append-only index): copied, swapped, duplicated or deleted records
never pass ``verify --require-pass``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.analysis.report import report_from_scan
from harness_world.running.reader import RunReader
from tests.conftest import Cli, examples
from tests.trust._helpers import failing_run, oracle_run, tasks


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("runs")
    return oracle_run(root / "good", samples=2), failing_run(root / "bad", samples=2)


def _copy(run: Path, where: Path) -> Path:
    shutil.copytree(run, where)
    return where


def _records(run: Path) -> list[Path]:
    return sorted((run / "records").rglob("*.json"))


def test_the_untouched_runs_verify(runs: tuple[Path, Path], cli: Cli) -> None:
    good, bad = runs
    assert cli("verify", "--require-pass", str(good))[0] == 0
    assert cli("verify", str(bad))[0] == 0  # verified, graded failed
    assert cli("verify", "--require-pass", str(bad))[0] == 1


def test_another_runs_records_copied_over_a_failing_run_are_ungraded(
    runs: tuple[Path, Path], tmp_path: Path, cli: Cli
) -> None:
    good, bad = runs
    forged = _copy(bad, tmp_path / "forged")
    for source in _records(good):
        shutil.copy(source, forged / source.relative_to(good))
    code, out, _ = cli("verify", "--require-pass", "--json", str(forged))
    rows = json.loads(out)["records"]
    assert code == 1
    assert {r["evidence"] for r in rows} == {"ungraded"}
    assert all("not bound to slot" in r["first_problem"] for r in rows)
    report = report_from_scan(RunReader.of(tasks()).read(forged))
    assert report.counts.passed == 0 and report.counts.valid == 0


def test_deleting_failing_records_makes_their_slots_lost(
    runs: tuple[Path, Path], tmp_path: Path, cli: Cli
) -> None:
    _, bad = runs
    pruned = _copy(bad, tmp_path / "pruned")
    for path in _records(pruned):
        path.unlink()
    code, out, _ = cli("verify", "--require-pass", "--json", str(pruned))
    rows = json.loads(out)["records"]
    assert code == 1 and len(rows) == 4
    assert all(r["evidence"] == "lost" and r["first_problem"].startswith("missing") for r in rows)


def test_a_record_saved_without_its_index_line_is_run_again_on_resume(tmp_path: Path) -> None:
    out = oracle_run(tmp_path / "run")
    (out / "index.jsonl").unlink()
    result = hw.run(tasks(), hw.oracle_agent("helpdesk"), samples=1, out=out)
    counts = result.counts  # reply_and_solve's reply is pending review, not failed
    assert result.resumed == 0 and (counts.passed, counts.pending, counts.failed) == (1, 1, 0)


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["copy", "swap", "delete", "duplicate", "foreign"]),
        st.integers(0, 3),
        st.integers(0, 3),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=examples(8, 60))
@given(ops=_OPS)
def test_any_copy_swap_delete_or_duplicate_fails_require_pass(
    runs: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
    ops: list[tuple[str, int, int]],
) -> None:
    """Property: only an unchanged run directory passes ``verify --require-pass``."""
    from harness_world.cli import main

    good, bad = runs
    run = _copy(good, tmp_path_factory.mktemp("prop") / "run")
    before = {p: p.read_bytes() for p in _records(run)}
    slots = sorted(before)
    for op, i, j in ops:
        a, b = slots[i], slots[j]
        if op == "copy" and a.exists() and a != b:
            shutil.copy(a, b)
        elif op == "swap" and a.exists() and b.exists():
            blob = a.read_bytes()
            a.write_bytes(b.read_bytes())
            b.write_bytes(blob)
        elif op == "delete":
            a.unlink(missing_ok=True)
        elif op == "duplicate" and a.exists():
            shutil.copy(a, a.with_name(f"copy-{j}.json"))
        elif op == "foreign":
            shutil.copy(_records(bad)[i], a)
    after = {p: p.read_bytes() for p in _records(run)}
    code = main(["verify", "--require-pass", "--json", str(run)])
    assert (code == 0) == (after == before), (ops, code)


def test_a_multi_worker_run_regrades_in_a_fresh_process(tmp_path: Path) -> None:
    """Hole 4: task hashes survive pickling, so records made in workers grade afterwards."""
    result = hw.run(
        tasks(),
        hw.oracle_agent("helpdesk"),
        samples=2,
        executor=hw.Processes(2),
        out=tmp_path / "r",
    )
    assert (result.counts.passed, result.counts.pending) == (2, 2)  # replies: pending review
    fresh = RunReader.of(hw.load_tasks("helpdesk")).read(tmp_path / "r").counts
    assert (fresh.passed, fresh.pending, fresh.not_graded) == (2, 2, 0)
