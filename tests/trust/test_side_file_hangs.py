"""A run's side files as FIFOs or devices: one ``error:`` line and exit 2, never a hang.

A FIFO as ``reviews.jsonl``, as a held-out ledger or as ``index.sig.json`` blocked ``report``,
``review``, ``split ledger``, ``run --split``, ``report --split`` and ``verify --trust-key`` for
ever, and a ledger linked to ``/dev/zero`` read until a ``MemoryError``. Every read of them now
goes through `harness_world.engine.limits.read_regular_file`, and so do the reads this change
adds (the heads beside the logs; the signature read by ``review --trust-key`` and by a resuming
``run``). Each case runs the CLI in its own
process, with a timeout (a hang fails the test instead of stalling the suite) and a bound on
its address space (reading a device fails at the bound instead of exhausting the machine).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import harness_world as hw
from harness_world.release import ReviewRequest, add_reviews
from harness_world.running.heldout import freeze_split, ledger_path, split_hooks
from harness_world.running.journal import head_path
from tests.conftest import Cli, requires
from tests.trust._helpers import TASKS, keypair, tasks

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform"),
    requires("cryptography", "signing needs the [sign] extra"),
]

TIMEOUT = 120  # seconds: far above a second's work, so only a hang reaches it
MEMORY = 3 * 1024**3  # bytes of address space: room for the CLI, not for reading /dev/zero


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A signed run with a signed review, and a split its run was recorded on."""
    folder = tmp_path_factory.mktemp("side")
    private, _ = keypair(folder, "key")
    lock = folder / "heldout.lock"
    freeze_split(tasks(), lock, sign_key=private)
    hw.run(
        tasks(),
        hw.oracle_agent("helpdesk"),
        out=folder / "run",
        hooks=split_hooks([lock]),
        sign_key=private,
    )
    review = ReviewRequest(task=TASKS[0], sample=0, criterion="state.required", verdict="pass")
    add_reviews(folder / "run", [review], key_file=private)
    return folder


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


Case = tuple[Callable[[Path], Path], Callable[[Path], None], Callable[[Path], list[str]]]
RUN = ["run", "--world", "helpdesk", "--tasks", *TASKS, "--no-precheck", "--quiet"]


def _reviews(f: Path) -> Path:
    return f / "run" / "reviews.jsonl"


def _signature(f: Path) -> Path:
    return f / "run" / "index.sig.json"


def _ledger(f: Path) -> Path:
    return ledger_path(f / "heldout.lock")


CASES: dict[str, Case] = {
    "report, reviews FIFO": (_reviews, _fifo, lambda f: ["report", str(f / "run")]),
    "review, reviews FIFO": (_reviews, _fifo, lambda f: ["review", str(f / "run")]),
    "review, reviews head FIFO": (
        lambda f: head_path(_reviews(f)),
        _fifo,
        lambda f: ["review", str(f / "run")],
    ),
    "split ledger, ledger FIFO": (
        _ledger,
        _fifo,
        lambda f: ["split", "ledger", str(f / "heldout.lock")],
    ),
    "split ledger, ledger head FIFO": (
        lambda f: head_path(_ledger(f)),
        _fifo,
        lambda f: ["split", "ledger", str(f / "heldout.lock")],
    ),
    "split ledger, ledger -> /dev/zero": (
        _ledger,
        _zero,
        lambda f: ["split", "ledger", str(f / "heldout.lock")],
    ),
    "run --split, ledger FIFO": (
        _ledger,
        _fifo,
        lambda f: [*RUN, "--out", str(f / "other"), "--split", str(f / "heldout.lock")],
    ),
    "report --split, ledger FIFO": (
        _ledger,
        _fifo,
        lambda f: ["report", str(f / "run"), "--split", str(f / "heldout.lock")],
    ),
    "verify --trust-key, signature FIFO": (
        _signature,
        _fifo,
        lambda f: ["verify", str(f / "run"), "--trust-key", str(f / "key.pub")],
    ),
    "review --trust-key, signature FIFO": (
        _signature,
        _fifo,
        lambda f: ["review", str(f / "run"), "--trust-key", str(f / "key.pub")],
    ),
    "run resuming, signature FIFO": (
        _signature,
        _fifo,
        lambda f: [*RUN, "--out", str(f / "run"), "--sign-key", str(f / "key.pem")],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_side_file_that_is_no_regular_file_is_one_error_and_no_hang(
    case: str, made: Path, tmp_path: Path, cli: Cli
) -> None:
    where, make, argv = CASES[case]
    folder = tmp_path / "copy"
    shutil.copytree(made, folder, symlinks=True)
    make(where(folder))
    done = cli.process(*argv(folder), timeout=TIMEOUT, address_space=MEMORY)
    lines = [line for line in done.err.splitlines() if line.strip()]
    assert done.code == 2, done.err
    assert len(lines) == 1 and lines[0].startswith("error: "), done.err
    assert "not a regular file" in lines[0] and where(folder).name in lines[0], lines[0]
