"""harness_world: simulated business worlds for tool-calling agents, graded so anyone can re-check.

This module names what an agent driver and an evaluator need. Other audiences have their own:
world authors `harness_world.engine`, oracle and mutant authors `harness_world.coverage`,
statisticians `harness_world.stats`, users of an imported benchmark its own subpackage, and
whoever works
with records directly `harness_world.evidence`. Every deliberate error derives from
`HarnessWorldError`.

Example:
    >>> import harness_world as hw
    >>> world = hw.load_world("helpdesk")
    >>> session = world.open_session(seed=0)
    >>> obs = session.call("get_ticket", {"ticket_id": "T-1000"})
    >>> obs.ok
    True

"""

from __future__ import annotations

from harness_world.engine.calls import Observation, ToolError
from harness_world.engine.schemas import tool_schemas
from harness_world.engine.session import Session
from harness_world.engine.world import World, load_world
from harness_world.errors import HarnessWorldError
from harness_world.evidence.record import Outcome, Record, Usage, load_record, save_record
from harness_world.grading.grade import CriterionVerdict, Grade
from harness_world.grading.task import Task, load_task, load_tasks
from harness_world.grading.verify import Verification, verify
from harness_world.running.agents import Agent, ScriptedAgent, oracle_agent
from harness_world.running.attempt import (
    Attempt,
    AttemptEnded,
    AttemptLimits,
    InfrastructureError,
)
from harness_world.running.executors import Concurrent, Processes, Ray, Serial
from harness_world.running.fork import fork  # counterfactual forks (D-diagnose-4)
from harness_world.running.run import RunResult, run
from harness_world.running.rundir import RunCounts
from harness_world.running.tracks import Fresh, Sequential

__all__ = [
    "Agent",
    "Attempt",
    "AttemptEnded",
    "AttemptLimits",
    "Concurrent",
    "CriterionVerdict",
    "Fresh",
    "Grade",
    "HarnessWorldError",
    "InfrastructureError",
    "Observation",
    "Outcome",
    "Processes",
    "Ray",
    "Record",
    "RunCounts",
    "RunResult",
    "ScriptedAgent",
    "Sequential",
    "Serial",
    "Session",
    "Task",
    "ToolError",
    "Usage",
    "Verification",
    "World",
    "fork",
    "load_record",
    "load_task",
    "load_tasks",
    "load_world",
    "oracle_agent",
    "run",
    "save_record",
    "tool_schemas",
    "verify",
]
