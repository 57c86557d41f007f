"""Hostile input to gate, split and review: each refusal is one line naming what was wrong.

Every case exits 2 with an ``error:`` line that names the file (and the key or line) and what
was expected; none reaches a traceback (`harness_world.cli.main` prints only the deliberate
errors, so anything else fails the test by raising).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.release.inputs import MAX_INPUT_BYTES
from harness_world.running.heldout import freeze_split, ledger_path, split_hooks
from harness_world.running.reference_agents import reference_agent

Case = Callable[[Path, dict[str, Path]], list[str]]


def _file(where: Path, name: str, data: str | bytes) -> str:
    path = where / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def _gate(policy: str | bytes) -> Case:
    def argv(where: Path, runs: dict[str, Path]) -> list[str]:
        path = _file(where, "policy.toml", policy)
        return ["gate", path, str(runs["baseline"]), str(runs["oracle"])]

    return argv


def _huge(where: Path, runs: dict[str, Path]) -> list[str]:
    path = where / "huge.toml"
    with path.open("wb") as handle:  # sparse: the size is checked before anything is read
        handle.truncate(MAX_INPUT_BYTES + 1)
    return ["gate", str(path), str(runs["baseline"]), str(runs["oracle"])]


def _fifo(where: Path, runs: dict[str, Path]) -> list[str]:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(where / "policy.toml")
    return ["gate", str(where / "policy.toml"), str(runs["baseline"]), str(runs["oracle"])]


def _lock(text: str) -> Case:
    def argv(where: Path, runs: dict[str, Path]) -> list[str]:
        lock = _file(where, "heldout.lock", text)
        return [
            "gate",
            _file(where, "p.toml", ""),
            str(runs["baseline"]),
            str(runs["oracle"]),
            "--split",
            lock,
        ]

    return argv


def _ledger(edit: Callable[[bytes], bytes]) -> Case:
    def argv(where: Path, runs: dict[str, Path]) -> list[str]:
        lock = where / "heldout.lock"
        tasks = [t for t in hw.load_tasks("payments") if t.id == "payments.refund_timeout"]
        freeze_split(tasks, lock)
        for agent in ("oracle", "give-up"):
            hw.run(
                tasks,
                reference_agent("payments", agent),
                out=where / agent,
                hooks=split_hooks([lock]),
            )
        ledger = ledger_path(lock)
        ledger.write_bytes(edit(ledger.read_bytes()))
        return ["split", "ledger", str(lock)]

    return argv


def _review(*options: str, reviews: bytes = b"") -> Case:
    def argv(where: Path, runs: dict[str, Path]) -> list[str]:
        run = where / "run"
        shutil.copytree(runs["baseline"], run)
        if reviews:
            (run / "reviews.jsonl").write_bytes(reviews)
        return ["review", str(run), *options]

    return argv


def _batch(text: str) -> Case:
    def argv(where: Path, runs: dict[str, Path]) -> list[str]:
        return [*_review()(where, runs), "--batch", _file(where, "batch.toml", text)]

    return argv


def _threshold(value: str) -> Case:
    def argv(where: Path, runs: dict[str, Path]) -> list[str]:
        return [
            "split",
            "check",
            "--dev",
            "payments",
            "--heldout",
            "helpdesk",
            "--threshold",
            value,
        ]

    return argv


DEEP = "x = " + "[" * 5000 + "]" * 5000 + "\n"
REVIEW = '[[review]]\ntask = "payments.refund_timeout"\nsample = 0\ncriterion = "state.required"\n'
SLOT = ["--task", "payments.refund_timeout", "--sample", "0", "--verdict", "pass"]
HASH = "0" * 64

CASES: dict[str, tuple[Case, str]] = {
    "policy not TOML": (_gate("[completion\n"), "policy.toml: not TOML: Expected ']' at the end"),
    "policy nested too deeply": (
        _gate(DEEP),
        "policy.toml: not TOML that can be read: arrays or tables nest too deeply",
    ),
    "policy with inf": (
        _gate("[latency]\nmax_p95_s = inf\n"),
        "key `latency.max_p95_s`: expected a finite number",
    ),
    "policy key of the wrong type": (
        _gate('[forbidden_effects]\nmax_count = "0"\n'),
        "key `forbidden_effects.max_count`: Expected `int`, got `str`",
    ),
    "policy unknown key": (
        _gate("[cost]\nmax_usd = 1\n"),
        "key `cost.max_usd`: not a release policy key",
    ),
    "policy not UTF-8": (_gate(b"\xff\xfe[x]"), "cannot read the policy: not UTF-8 text (byte 0)"),
    "policy too large": (
        _huge,
        f"cannot read the policy: {MAX_INPUT_BYTES + 1} bytes, over the limit",
    ),
    "policy a FIFO": (_fifo, "cannot read the policy: not a regular file"),
    "policy naming an unknown task": (
        _gate('[critical]\ntasks = ["payments.charge_lost_respons"]\n'),
        "key `critical.tasks`: 'payments.charge_lost_respons' is none of the 101 tasks graded against; did you mean 'payments.charge_lost_response'?",
    ),
    "policy naming an unknown family": (
        _gate('[critical]\nfamilies = ["nope"]\n'),
        "key `critical.families`: 'nope' is none of the",
    ),
    "lock missing": (
        lambda w, r: [
            "gate",
            _file(w, "p.toml", ""),
            str(r["baseline"]),
            str(r["oracle"]),
            "--split",
            str(w / "no.lock"),
        ],
        "no.lock: cannot read the split lock: No such file",
    ),
    "lock not JSON": (
        _lock("tasks = 1"),
        "heldout.lock: not a held-out split lock: JSON is malformed",
    ),
    "lock of another format": (
        _lock(f'{{"format": 2, "frozen_at": "t", "tasks": {{"a.b": "{HASH}"}}}}'),
        "Expected `int` <= 1 - at `$.format`",
    ),
    "lock with an unsafe task id": (
        _lock(f'{{"frozen_at": "t", "tasks": {{"../etc": "{HASH}"}}}}'),
        "not a held-out split lock: Expected `str` matching regex",
    ),
    "lock with a bad hash": (
        _lock('{"frozen_at": "t", "tasks": {"a.b": "abc"}}'),
        "not a held-out split lock: Expected `str` matching regex '^[0-9a-f]{64}$'",
    ),
    "ledger line forged": (
        _ledger(lambda b: b.replace(b"oracle:payments", b"oracle:forged")),
        "heldout.ledger.jsonl: line 2 does not follow the line before it",
    ),
    "ledger line not JSON": (
        _ledger(lambda b: b + b"{not json\n"),
        "heldout.ledger.jsonl: not a held-out ledger: line 3: JSON is malformed",
    ),
    "threshold above 1": (
        _threshold("7"),
        "threshold 7.0: expected a Jaccard similarity in (0, 1]",
    ),
    "threshold nan": (_threshold("nan"), "threshold nan: expected a Jaccard similarity"),
    "freeze an unknown task": (
        lambda w, r: ["split", "freeze", "--tasks", "payments.nope", "--out", str(w / "l.lock")],
        "payments.nope: not a task file, a task folder, a built-in world or a built-in task id",
    ),
    "freeze a task nested too deeply": (
        lambda w, r: [
            "split",
            "freeze",
            "--tasks",
            _file(w, "t.toml", DEEP),
            "--out",
            str(w / "l"),
        ],
        "t.toml: a task file nested too deeply to be read",
    ),
    "review an unknown task": (
        _review("--task", "payments.nope", "--criterion", "prose.1", "--verdict", "pass"),
        "review 1 (payments.nope sample 0): no saved record for that slot",
    ),
    "review an unknown criterion": (
        _review(*SLOT, "--criterion", "prose.9"),
        "names criterion 'prose.9', which payments.refund_timeout has not (state.required,",
    ),
    "review a note too long": (
        _review(*SLOT, "--criterion", "state.required", "--note", "x" * 1_000_001),
        "note: a string of 1000001 characters",
    ),
    "review not a run directory": (
        lambda w, r: ["review", str(w), *SLOT, "--criterion", "state.required"],
        "not a run directory (no manifest.json)",
    ),
    "review file line forged": (
        _review(reviews=b'{"task": 1}\n'),
        "reviews.jsonl: not a review file: line 1: Expected `str`, got `int`",
    ),
    "batch not TOML": (
        _batch("[[review]\n"),
        "batch.toml: not TOML: Expected ']]' at the end of an array declaration (at line 1",
    ),
    "batch nested too deeply": (_batch(DEEP), "batch.toml: not TOML that can be read"),
    "batch of the wrong type": (
        _batch(REVIEW + 'verdict = "maybe"\n'),
        "batch.toml: Invalid enum value 'maybe' - at `$.review[0].verdict`",
    ),
    "batch naming an unknown criterion": (
        _batch(REVIEW.replace("state.required", "nope") + 'verdict = "pass"\n'),
        "names criterion 'nope'",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_input_is_one_clear_error(
    case: str,
    release_runs: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make, expected = CASES[case]
    argv = make(tmp_path, release_runs)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert expected in err
