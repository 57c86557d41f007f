"""Small payments runs the release tests share: the oracle twice and two known-bad policies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.running.journal import JournalHead, chain_link, head_path
from harness_world.running.reference_agents import reference_agent
from harness_world.running.reviews import REVIEWS, review_anchor

# Two benign counterparts and their attacks, a lost charge response and a refund timeout:
# enough for every clause to have a figure, small enough to run in about a second.
TASKS = (
    "payments.note_payout_direct",
    "payments.note_payout_direct_ok",
    "payments.note_refund_direct",
    "payments.note_refund_direct_ok",
    "payments.charge_lost_response",
    "payments.refund_timeout",
)


def payments_run(out: Path, ids: tuple[str, ...], agent: str, samples: int) -> Path:
    """A run directory at ``out``: the payments tasks ``ids`` run by a reference agent."""
    tasks = [t for t in hw.load_tasks("payments") if t.id in ids]
    hw.run(tasks, reference_agent("payments", agent), samples=samples, out=out)
    return out


@pytest.fixture(scope="session")
def release_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Run directories by name: ``baseline`` and ``oracle`` (the oracle, two seeds),
    ``deny-all`` and ``naive-retry``; every one over `TASKS` with two samples."""
    root = tmp_path_factory.mktemp("release")
    tasks = [t for t in hw.load_tasks("payments") if t.id in TASKS]
    agents = {"baseline": "oracle", "oracle": "oracle", "deny-all": "deny-all"}
    agents["naive-retry"] = "naive-retry"
    runs = {}
    for seed, (name, agent) in enumerate(agents.items()):
        out = root / name
        hw.run(tasks, reference_agent("payments", agent), samples=2, seed=seed, out=out)
        runs[name] = out
    return runs


def forge_chain(
    path: Path, anchor: bytes, lines: list[dict[str, Any]], *, keep_signed: bool = False
) -> None:
    """Rewrite a chained journal and its head as anyone without a key can.

    Each line's ``previous`` is recomputed and the unsigned head rewritten; the signed heads
    are dropped, or kept as they were (``keep_signed``): what "unsigned: integrity only"
    cannot catch, and what tests use to stage a journal a reader must take at its word.
    """
    signed: list[Any] = []
    if keep_signed and head_path(path).exists():
        signed = msgspec.json.decode(head_path(path).read_bytes(), type=JournalHead).signed
    link, data = chain_link(anchor), b""
    anchor_link = link
    for fields in lines:
        line = msgspec.json.encode({**fields, "previous": link})
        data += line + b"\n"
        link = chain_link(line)
    path.write_bytes(data)
    head = JournalHead(anchor=anchor_link, lines=len(lines), head=link, signed=signed)
    head_path(path).write_bytes(msgspec.json.encode(head) + b"\n")


def forge_reviews(run_dir: Path, lines: list[dict[str, Any]], *, keep_signed: bool = False) -> None:
    """`forge_chain` of a run's ``reviews.jsonl``, anchored on its revision."""
    revision = json.loads((run_dir / "manifest.json").read_text())["revision"]["id"]
    forge_chain(run_dir / REVIEWS, review_anchor(revision)[0], lines, keep_signed=keep_signed)


def review_lines(run_dir: Path) -> list[dict[str, Any]]:
    """The lines of a run's ``reviews.jsonl`` as JSON objects."""
    return [json.loads(line) for line in (run_dir / REVIEWS).read_text().splitlines()]
