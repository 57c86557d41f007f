"""``bench/stats_calibration.py --merge``: parts run apart make one table, or are refused."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("stats_calibration")


def _part(folder: Path, name: str, results: dict, checks: dict | None = None, **top) -> str:
    """A file holding what a ``--only`` run prints: a table, then its JSON line."""
    data = {"sims": 4000, "seed": 12, "results": results, "checks": checks or {}, **top}
    path = folder / f"{name}.json"
    path.write_text("| a table |\n\n" + json.dumps(data) + "\n", encoding="utf-8")
    return str(path)


def _cell(rate: float | None) -> dict:
    return {"null": {"gate": rate}}


def test_parts_merge_and_a_part_run_again_replaces_its_cells(bench, tmp_path, capsys) -> None:
    first = _part(tmp_path, "a", {"iid-40": {"improved": _cell(0.03)}})
    second = _part(tmp_path, "b", {"iid-30": {"improved": _cell(0.02)}})
    again = _part(tmp_path, "c", {"iid-40": {"improved": _cell(0.025)}})
    results, checks, seed, sims, revisions = bench.merge([first, second, again])
    assert (seed, sims, checks) == (12, 4000, {})
    assert revisions == {"not recorded": 3}
    assert results["iid-40"]["improved"]["null"]["gate"] == 0.025
    assert results["iid-30"]["improved"]["null"]["gate"] == 0.02
    assert f"iid-40:improved:null from {again} replaces {first}" in capsys.readouterr().err
    table = bench.gate_table(results)
    assert "| iid-40 | improved | 2.50% | — | — |" in table
    missing = bench.missing_parts(results, checks)
    assert "iid-40:improved:effect" in missing and "looks-10x5" in missing
    assert "iid-40:improved:null" not in missing


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("not json at all", "not the JSON line of a run"),
        ("", "not the JSON line of a run"),
        ('{"sims": 4000}', "not the JSON line of a run"),
        ('{"sims": 4000, "seed": 12, "results": [1]}', "not the JSON line of a run"),
        ('{"sims": 4000.5, "seed": 12}', "seed and sims must be integers"),
    ],
)
def test_a_file_that_is_not_a_run_is_refused_by_name(bench, tmp_path, content, says) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SystemExit, match=f"--merge {path}: {says}"):
        bench.merge([str(path)])


def test_parts_of_another_seed_or_count_or_an_unknown_cell_are_refused(bench, tmp_path) -> None:
    first = _part(tmp_path, "a", {"iid-40": {"improved": _cell(0.03)}})
    other = _part(tmp_path, "b", {"iid-30": {"improved": _cell(0.02)}}, seed=13)
    with pytest.raises(SystemExit, match="seed 13, 4000 simulations; the files before it"):
        bench.merge([first, other])
    stale = _part(tmp_path, "c", {"iid-41": {"improved": _cell(0.02)}})
    with pytest.raises(SystemExit, match="not in this bench: iid-41:improved"):
        bench.merge([first, stale])
    wrong_gate = _part(tmp_path, "d", {"skewed-10": {"non-inferior": _cell(0.02)}})
    with pytest.raises(SystemExit, match="not in this bench: skewed-10:non-inferior"):
        bench.merge([wrong_gate])
    check = _part(tmp_path, "e", {}, {"looks-99": {"planned": 0.02}})
    with pytest.raises(SystemExit, match="not in this bench: looks-99"):
        bench.merge([check])


def test_writing_the_docs_needs_every_cell(bench, tmp_path, capsys) -> None:
    part = _part(tmp_path, "a", {"iid-40": {"improved": _cell(0.03)}})
    assert bench.main(["--merge", part, "--write-docs"]) == 2
    err = capsys.readouterr().err
    assert "--write-docs needs every cell and check" in err and "missing" in err


def test_each_part_selects_itself_alone_and_the_parts_cover_the_table(bench) -> None:
    """`--parts`' ``--only`` texts, read by `measure`'s rule (the text is contained in the
    name), pick one scenario's gates or one check each, and together every cell."""
    cells = {(sc.name, gate) for sc in bench.SCENARIOS for gate in sc.gates}
    covered: set[tuple[str, str]] = set()
    checks: set[str] = set()
    for part in bench.parts():
        only = part[part.index("--only") + 1]
        picked = {(n, g) for n, g in cells if only in f"{n}:{g}"}
        picked_checks = {c.name for c in bench.CHECKS if only in c.name}
        if "--gate-only" in part:
            name = only.removesuffix(":")
            assert picked == {(n, g) for n, g in cells if n == name}, part
        else:
            assert picked == set() and picked_checks == {only}, part
            checks |= picked_checks
        covered |= picked
    assert covered == cells and checks == {c.name for c in bench.CHECKS}


def test_the_revisions_the_parts_ran_on_are_counted_and_named(bench, tmp_path, capsys) -> None:
    one = _part(tmp_path, "a", {"iid-40": {"improved": _cell(0.03)}}, revision="abc1234")
    two = _part(tmp_path, "b", {"iid-30": {"improved": _cell(0.02)}}, revision="def5678-dirty")
    *_, revisions = bench.merge([one, two])
    assert revisions == {"abc1234": 1, "def5678-dirty": 1}
    assert "several revisions" in capsys.readouterr().err
    assert bench.revision() is None or bench.revision().startswith(tuple("0123456789abcdef"))
