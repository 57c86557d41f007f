"""Verifying paths as a library call: rows and counts, refusals before any replay."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.running.verification import (
    Grading,
    VerifyError,
    VerifyOptions,
    plan_verification,
    verify_paths,
)

TASKS = ["helpdesk.reply_and_solve", "helpdesk.security_count"]


def _tasks() -> list[hw.Task]:
    return [t for t in hw.load_tasks("helpdesk") if t.id in TASKS]


def _builtin() -> Grading:
    return Grading(tasks={t.id: t for t in hw.load_tasks()})


def test_a_run_directory_and_a_loose_file_are_rows_with_their_counts(tmp_path: Path) -> None:
    run = tmp_path / "run"
    hw.run(_tasks(), hw.oracle_agent("helpdesk"), samples=2, out=run)
    loose = tmp_path / "loose"
    loose.mkdir()
    shutil.copy(next(run.rglob("records/*/0.json")), loose / "a.json")
    seen: list[int] = []

    class Counter:
        def advance(self, note: str, row: object) -> None:
            seen.append(1)

    report = verify_paths(
        [run, loose], VerifyOptions(grading=_builtin), progress=lambda total: Counter()
    )
    assert len(report.records) == 5 and len(seen) == 5
    # passed_automated (prose not reviewed) is its own count beside passed
    assert (report.evidence.verified, report.grades.passed + report.grades.pending) == (5, 5)
    assert report.grades.failed == 0
    assert [r.sample for r in report.records[:4]] == [0, 1, 0, 1]
    assert report.records[-1].verdicts and report.records[-1].path.endswith("a.json")


def test_a_run_whose_manifest_is_gone_is_refused_unless_loose(tmp_path: Path) -> None:
    run = tmp_path / "run"
    hw.run(_tasks(), hw.oracle_agent("helpdesk"), out=run)
    (run / "manifest.json").unlink()
    with pytest.raises(VerifyError, match=r"has records/ but no manifest\.json"):
        plan_verification([run])
    assert len(plan_verification([run], loose=True).files) == 2


def test_tasks_are_not_read_when_every_run_is_refused_for_its_provenance(
    tmp_path: Path,
) -> None:
    pytest.importorskip("cryptography", reason="signing needs the extra [sign]")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    run = tmp_path / "run"
    hw.run(_tasks(), hw.oracle_agent("helpdesk"), out=run)
    key = tmp_path / "key.pem"
    public = Ed25519PrivateKey.generate().public_key()
    key.write_bytes(
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )

    def no_tasks() -> Grading:
        raise AssertionError("tasks were read for a refused run")

    report = verify_paths([run], VerifyOptions(grading=no_tasks, trust_key=key))
    assert report.evidence.ungraded == 2
    assert all(r.first_problem.startswith("provenance:") for r in report.records)
