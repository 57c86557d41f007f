"""The run reader lists each task's folder once and sorts every file it holds.

A file is a slot's final record (``<sample>.json``), an earlier try of a scheduled slot
(``<sample>.failed-<n>.json``, ``<sample>.interrupted-<n>.json``, n from 1), a hidden
temporary file of a save in progress, or a stray: nothing a reader may ignore.
"""

from __future__ import annotations

from pathlib import Path

from harness_world.running.reader import open_run, plan_slots
from tests.trust._helpers import oracle_run

_TRIES = ["0.failed-1.json", "0.failed-2.json", "0.interrupted-1.json", "1.failed-3.json"]
_STRAYS = [
    "0.failed-0.json",  # tries are numbered from 1
    "1.failed-.json",
    "1.failed-json",
    "12.failed-3.json",  # a try of no scheduled sample
    "2.failed-a.failed-b.json",
    "x1.failed-1.json",
    "3.FAILED-1.json",
    "01.failed-1.json",  # not the sample's own name
    "1.failed-2.json.tmp",
]


def test_one_listing_sorts_tries_from_strays(tmp_path: Path) -> None:
    run = oracle_run(tmp_path / "run", samples=2)
    manifest = open_run(run).manifest
    folder = run / "records" / manifest.tasks[0]
    record = (folder / "0.json").read_bytes()
    for name in [*_TRIES, *_STRAYS, ".0.failed-9.json.tmp"]:
        (folder / name).write_bytes(record)
    opened = open_run(run)
    slots = {(s.task_id, s.sample): s for s in plan_slots(opened)}
    first = slots[(manifest.tasks[0], 0)]
    assert [(t.kind, t.number) for t in first.tries] == [
        ("failed", 1),
        ("failed", 2),
        ("interrupted", 1),
    ]
    assert [(t.kind, t.number) for t in slots[(manifest.tasks[0], 1)].tries] == [("failed", 3)]
    assert all(t.entry is None for s in slots.values() for t in s.tries)  # never indexed
    assert sorted(Path(p).name for p in opened.strays) == sorted(_STRAYS)
