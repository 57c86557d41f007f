"""A scan lists each task's folder once: the failed tries it finds are those `failed_tries` finds."""

from __future__ import annotations

from pathlib import Path

from harness_world.running.rundir import failed_tries, failed_tries_by_sample

_NAMES = [
    "0.json",
    "0.failed-1.json",
    "0.failed-0.json",
    "1.json",
    "1.failed-.json",
    "1.failed-json",
    "1.failed-2.json.tmp",
    "12.failed-3.json",
    "2.failed-a.failed-b.json",
    ".0.failed-9.json.tmp",
    "x1.failed-1.json",
    "3.FAILED-1.json",
]


def test_one_listing_finds_what_each_glob_finds(tmp_path: Path) -> None:
    folder = tmp_path / "records" / "task-a"
    folder.mkdir(parents=True)
    for name in _NAMES:
        (folder / name).write_text("{}")
    (folder / "3.failed-dir.json").mkdir()
    listed = failed_tries_by_sample(folder)
    for sample in range(14):
        assert listed.get(str(sample), []) == failed_tries(folder / f"{sample}.json"), sample
    assert [p.name for p in listed["0"]] == ["0.failed-0.json", "0.failed-1.json"]
    assert failed_tries_by_sample(tmp_path / "absent") == {}
