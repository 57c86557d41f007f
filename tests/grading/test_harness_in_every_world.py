"""No harness criterion is vacuous in any built-in world, and no oracle breaks one.

Over the records of each world's reference agents and hand mutants (small seed), every
``harness.*`` criterion its grades carry fails at least once; over every oracle route it never
fails. A criterion that no attempt of a world can fail would make that world's harness sheet a
list of free passes.
"""

from __future__ import annotations

import functools

import pytest

import harness_world as hw
from harness_world.coverage import Script, load_mutants, load_routes, run_script
from harness_world.running.reference_agents import REFERENCE_AGENT_NAMES, reference_agent

WORLDS = ("helpdesk", "inventory", "payments")


def _harness_failed(world: hw.World, task: hw.Task, script: Script) -> set[str]:
    record = run_script(world, task, script)
    result = hw.verify(record, world=world, task=task)
    assert result.grade is not None, (task.id, result.evidence)
    return {v.id for v in result.grade.harness if v.status == "failed"}


@functools.cache
def _sheet(world_name: str) -> tuple[frozenset[str], dict[str, set[str]], dict[str, set[str]]]:
    """The harness criteria the world's grades carry, what each agent or mutant failed of
    them (by name), and what each oracle route failed (by task)."""
    world = hw.load_world(world_name)
    tasks = {t.id: t for t in hw.load_tasks(world_name)}
    carried: set[str] = set()
    oracles: dict[str, set[str]] = {}
    for task_id, routes in load_routes(world_name).items():
        for script in routes:
            record = run_script(world, tasks[task_id], script)
            result = hw.verify(record, world=world, task=tasks[task_id])
            assert result.grade is not None
            carried |= {v.id for v in result.grade.harness}
            oracles.setdefault(task_id, set()).update(
                v.id for v in result.grade.harness if v.status == "failed"
            )
    failed: dict[str, set[str]] = {}
    for name in REFERENCE_AGENT_NAMES:
        if name in ("oracle", "do-nothing"):
            continue
        agent = reference_agent(world_name, name)
        assert isinstance(agent, hw.ScriptedAgent)
        for task_id, script in agent.scripts.items():
            failed.setdefault(name, set()).update(_harness_failed(world, tasks[task_id], script))
    for mutant in load_mutants(world_name):
        if "small" in mutant.sizes:
            got = _harness_failed(world, tasks[mutant.task_id], mutant.script)
            failed[f"mutant {mutant.id}"] = got
    return frozenset(carried), failed, oracles


@pytest.mark.parametrize("world", WORLDS)
def test_every_harness_criterion_fails_somewhere_in_each_world(world: str) -> None:
    carried, failed, _ = _sheet(world)
    assert carried, "no harness criterion is graded"
    exercised = set().union(*failed.values())
    assert carried <= exercised, f"never failed in {world}: {sorted(carried - exercised)}"


@pytest.mark.parametrize("world", WORLDS)
def test_no_oracle_route_fails_a_harness_criterion(world: str) -> None:
    _, _, oracles = _sheet(world)
    assert oracles and not {task: got for task, got in oracles.items() if got}


@pytest.mark.parametrize("world", WORLDS)
def test_a_reference_agent_fails_a_harness_criterion_in_each_world(world: str) -> None:
    # The agents the conditions tables compare: some harness criterion fails for one of them.
    _, failed, _ = _sheet(world)
    assert failed["naive-retry"] & {"harness.reconcile_before_retry"}, failed["naive-retry"]


def test_same_key_retry_is_graded_only_where_a_write_takes_a_key() -> None:
    assert "harness.same_key_retry" in _sheet("payments")[0]
    for world in ("helpdesk", "inventory"):
        assert "harness.same_key_retry" not in _sheet(world)[0]
