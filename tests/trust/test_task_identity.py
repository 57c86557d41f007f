"""Stable identities: a task's hash does not depend on object identity, process or pickling."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import harness_world as hw
from tests.conftest import REPO


def test_every_builtin_task_keeps_its_hash_through_pickle_and_a_subprocess() -> None:
    here = {t.id: t.hash for t in hw.load_tasks()}
    assert len(here) >= 20
    for task in hw.load_tasks():
        copy = pickle.loads(pickle.dumps(task))
        assert copy.hash == task.hash, task.id
        assert pickle.loads(pickle.dumps(copy)).hash == task.hash
    code = (
        "import json, harness_world as hw; "
        "print(json.dumps({t.id: t.hash for t in hw.load_tasks()}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == here


def test_world_and_revision_identities_are_stable_in_a_subprocess(small: hw.World) -> None:
    code = (
        "import harness_world as hw; w = hw.load_world('helpdesk'); "
        "print(w.hash, w.contract.hash, w.code_hash)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd="/",
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == [small.hash, small.contract.hash, small.code_hash]
