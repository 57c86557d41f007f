"""A plug-in file declares one typed object; what it names that does not exist is named back.

Each test edits the scaffold's world (the smallest complete one) the way a person would get it
wrong, and expects one error or one gate problem that names the file, the key and what exists.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_world.cli import main
from harness_world.coverage import check_world, load_mutants, read_equivalents
from harness_world.engine import WorldError, load_world
from harness_world.engine.plugins import PluginError
from harness_world.running.oracles import declared_oracles
from harness_world.running.reference_agents import reference_agent
from harness_world.scaffold import write_scaffold


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_scaffold("library", tmp_path)
    return tmp_path


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_an_unknown_worldspec_key_is_one_error_naming_it_and_the_keys(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = project / "worlds/library"
    _replace(
        world / "world.py",
        "WORLD = WorldSpec(contract=CONTRACT,",
        "WORLD = WorldSpec(\n    contract=CONTRACT, oracle='x',",
    )
    with pytest.raises(WorldError) as caught:
        load_world(world)
    message = str(caught.value)
    assert "world.py:" in message and "WorldSpec has no 'oracle'" in message
    assert "(it takes: contract, generate, sizes, tasks, oracles, mutants" in message
    assert main(["tasks", "--world", str(world)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "WorldSpec has no 'oracle'" in err[0]


def test_oracles_of_the_old_form_are_refused_with_the_new_one_shown(project: Path) -> None:
    oracles = project / "oracles/library/oracles.py"
    _replace(oracles, "ORACLES = Oracles(routes={", "ORACLES = dict({")
    with pytest.raises(PluginError) as caught:
        declared_oracles("library", oracles.parent)
    assert str(caught.value) == (
        f"{oracles}: ORACLES must be a harness_world.coverage.Oracles (found dict); an "
        "oracles.py declares ORACLES = Oracles(routes={task_id: [script, ...]}, ...)"
    )


def test_an_unknown_reference_agent_is_named_where_it_is_declared(project: Path) -> None:
    oracles = project / "oracles/library/oracles.py"
    _append(
        oracles, "ORACLES = Oracles(routes=ORACLES.routes, reference_agents={'naive_retry': {}})\n"
    )
    with pytest.raises(PluginError) as caught:
        declared_oracles("library", oracles.parent)
    message = str(caught.value)
    assert message.startswith(f"{oracles}:") and "no agent 'naive_retry'" in message
    assert "known: naive-retry, give-up, deny-all, obey-data" in message
    with pytest.raises(ValueError, match="no agent 'naive_retry'"):
        reference_agent(project / "worlds/library", "give-up")


def test_a_mistyped_task_id_among_the_oracles_is_a_gate_problem(project: Path) -> None:
    oracles = project / "oracles/library/oracles.py"
    _append(
        oracles,
        "ORACLES = Oracles(routes={**ORACLES.routes, 'library.lend_dnue': [lend_by_search]},"
        " reference_agents={'give-up': {'library.lend_dune_': lend_by_search}})\n",
    )
    report = check_world(project / "worlds/library", automatic=False)
    assert not report.ok
    assert report.problems == [
        "oracles: ORACLES routes names no task of the world: 'library.lend_dnue'",
        "oracles: ORACLES reference_agents['give-up'] names no task of the world: "
        "'library.lend_dune_'",
    ]


def test_a_stale_equivalence_mark_fails_the_gate_naming_it(project: Path) -> None:
    marks = project / "mutants/library/equivalent.toml"
    marks.write_text(
        '[[equivalent]]\ntask = "library.lend_dune"\nmutant = "drop_write@2"\n'
        'reason = "was equivalent once"\n\n'
        '[[equivalent]]\ntask = "library.lend_dnue"\noperator = "duplicate_write"\n'
        'reason = "a typo"\n\n'
        '[[equivalent]]\ntask = "*"\noperator = "swap_rows"\nreason = "no such operator"\n'
    )
    report = check_world(project / "worlds/library")
    assert report.auto_survived == 0 and not report.ok
    assert report.problems == [
        f"{marks}: stale entry (task '*', operator 'swap_rows'): names no mutation operator "
        "('swap_rows'; known: drop_write, duplicate_write, redirect_write, change_value, "
        "truncate_after_page, insert_unrequested_write, guess_next_id, memorised_write, drop_read)",
        f"{marks}: stale entry (task 'library.lend_dnue', operator 'duplicate_write'): names "
        "no task of the world ('library.lend_dnue')",
        f"{marks}: stale entry (task 'library.lend_dune', mutant 'drop_write@2'): explains no "
        "surviving automatic mutant",
    ]


def test_an_unknown_key_in_an_equivalence_entry_is_named(tmp_path: Path) -> None:
    marks = tmp_path / "equivalent.toml"
    marks.write_text('[[equivalent]]\ntask = "*"\noperator = "drop_read"\nreasons = "typo"\n')
    with pytest.raises(PluginError, match=r"has no key 'reasons' \(its keys: task, mutant, "):
        read_equivalents(marks)
    marks.write_text('[[equivalent]]\ntask = "*"\nmutant = "a@1"\noperator = "drop_read"\n')
    marks.write_text(marks.read_text() + 'reason = "both"\n')
    with pytest.raises(PluginError, match="needs `mutant` or `operator` \\(one\\)"):
        read_equivalents(marks)
    marks.write_text('[[equivalents]]\ntask = "*"\n')
    with pytest.raises(PluginError, match="unknown table 'equivalents'"):
        read_equivalents(marks)


def test_a_demo_id_or_a_repeated_id_among_the_mutants_is_named(project: Path) -> None:
    mutants = project / "mutants/library/mutants.py"
    original = mutants.read_text()
    _replace(
        mutants,
        'Mutants(world="library")',
        'Mutants(world="library", demo={"lend_dune.frist_hit"})',
    )
    with pytest.raises(
        PluginError, match=r"mutants.py: MUTANTS.demo names no mutant lend_dune.frist_hit"
    ):
        load_mutants("library", mutants.parent)
    mutants.write_text(original.replace('name="twice"', 'name="first_hit"'))
    with pytest.raises(
        PluginError, match=r"mutants.py:\d+: duplicate mutant id 'lend_dune.first_hit'"
    ):
        load_mutants("library", mutants.parent)
    mutants.write_text(original + "MUTANTS = MUTANTS.mutants\n")
    with pytest.raises(
        PluginError, match=r"MUTANTS must be a harness_world.coverage.Mutants \(found list\)"
    ):
        load_mutants("library", mutants.parent)


def test_a_world_reads_outside_data_only_through_its_spec(project: Path) -> None:
    from harness_world.grading.worlds import load_world_data, reads_outside_data

    world = project / "worlds/library"
    assert not reads_outside_data(world)
    with pytest.raises(WorldError, match="its WorldSpec has no load_data"):
        load_world_data(world, project)
    _replace(
        world / "world.py",
        "WORLD = WorldSpec(contract=CONTRACT,",
        "WORLD = WorldSpec(\n    load_data=lambda folder, tasks: None, contract=CONTRACT,",
    )
    assert reads_outside_data(world)
    with pytest.raises(WorldError, match="its load_data returned no WorldData"):
        load_world_data(world, project)
