"""The state criteria's judgement of each atom of delta, as a reader of a record sees it.

`net_effects` is what the HTML viewer shows beside a task's expected effects; `state.allowed`
fails on exactly its ``unauthorized`` atoms and `missing_required` lists what ``state.required``
counts, so the page and the grade cannot tell two stories.
"""

from __future__ import annotations

import pytest

import harness_world as hw
from harness_world.coverage import load_mutants, load_oracles, run_script
from harness_world.grading.checker import grade
from harness_world.grading.rules.state import missing_required, net_effects
from harness_world.grading.trace import trace_view


def _count(detail: str) -> int:
    """N of ``unauthorized N: ...`` / ``missing N: ...`` (0 when the criterion passed)."""
    head = detail.split(":", 1)[0].split()
    return int(head[1]) if len(head) == 2 and head[1].isdigit() else 0


@pytest.mark.parametrize("world_name", ["helpdesk", "payments"])
def test_state_allowed_fails_on_exactly_the_unauthorized_effects(world_name: str) -> None:
    world = hw.load_world(world_name)
    tasks = {t.id: t for t in hw.load_tasks(world_name)}
    # each attempt with the state criteria it must fail: a mutant's predicted ones, none for
    # an oracle (an expectation declared apart from the code under test)
    attempts = [
        (m.task_id, m.script, m.predicted & {"state.allowed", "state.required"})
        for m in load_mutants(world_name)
        if "small" in m.sizes
    ]
    attempts += [(t, s, frozenset()) for t, s in load_oracles(world_name).items()]
    judged = 0
    for task_id, script, predicted in attempts:
        task = tasks[task_id]
        record = run_script(world, task, script)
        view = trace_view(record, task, world)
        verdicts = {v.id: v for v in grade(record, task, world).verdicts}
        effects = net_effects(view)
        bad = [e.label for e in effects if e.verdict == "unauthorized"]
        allowed = verdicts["state.allowed"]
        assert bool(bad) == ("state.allowed" in predicted), (task_id, bad)
        assert (allowed.status == "failed") == bool(bad), (task_id, allowed.detail, bad)
        assert _count(allowed.detail) == len(bad)
        for label in bad[:3]:  # the detail names the first ones whole
            assert label in allowed.detail
        # every changed field of delta is judged once, and nothing outside delta
        atoms = {(c.entity, c.key) for c in view.changes}
        assert {(e.entity, e.key) for e in effects} == atoms
        if "state.required" in verdicts:
            missing = missing_required(view)
            assert bool(missing) == ("state.required" in predicted), (task_id, missing)
            assert _count(verdicts["state.required"].detail) == len(missing)
            judged += bool(missing) + bool(bad)
    assert judged >= 5  # mutants that miss a required effect or make an unauthorized one
