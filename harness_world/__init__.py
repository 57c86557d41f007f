"""harness_world: simulated business worlds for tool-calling agents, graded so anyone can re-check.

This module names what an agent driver and an evaluator need. Other audiences have their own:
world authors `harness_world.engine`, oracle and mutant authors `harness_world.coverage`,
statisticians `harness_world.stats`, τ²-bench users `harness_world.tau2`, and whoever works
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

import importlib
import warnings
from typing import Any

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
from harness_world.running.fork import fork  # diagnose: counterfactual forks (D-diagnose-4)
from harness_world.running.run import RunResult, run
from harness_world.running.rundir import RunCounts

__all__ = [
    "Agent",
    "Attempt",
    "AttemptEnded",
    "AttemptLimits",
    "CriterionVerdict",
    "Grade",
    "HarnessWorldError",
    "InfrastructureError",
    "Observation",
    "Outcome",
    "Record",
    "RunCounts",
    "RunResult",
    "ScriptedAgent",
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

# Names this module exported before the package was split by audience. They still resolve,
# with a DeprecationWarning naming the new home, for one release.
_MOVED: dict[str, tuple[str, str]] = {
    "ABSENT": ("harness_world.engine", "ABSENT"),
    "Absent": ("harness_world.engine", "Absent"),
    "CallRecord": ("harness_world.engine", "CallRecord"),
    "Contract": ("harness_world.engine", "Contract"),
    "Entity": ("harness_world.engine", "Entity"),
    "Field": ("harness_world.engine", "Field"),
    "FinalRow": ("harness_world.engine", "FinalRow"),
    "Key": ("harness_world.engine", "Key"),
    "Params": ("harness_world.engine", "Params"),
    "Problem": ("harness_world.engine", "Problem"),
    "Tool": ("harness_world.engine", "Tool"),
    "ToolContext": ("harness_world.engine", "ToolContext"),
    "ToolFailure": ("harness_world.engine", "ToolFailure"),
    "WorldError": ("harness_world.engine", "WorldError"),
    "WriteImage": ("harness_world.engine", "WriteImage"),
    "tool": ("harness_world.engine", "tool"),
    "Mismatch": ("harness_world.evidence", "Mismatch"),
    "RecordContext": ("harness_world.evidence", "RecordContext"),
    "RecordError": ("harness_world.evidence", "RecordError"),
    "WorldRef": ("harness_world.evidence", "WorldRef"),
    "make_record": ("harness_world.evidence", "make_record"),
    "replay": ("harness_world.evidence", "replay"),
    "TaskError": ("harness_world.grading", "TaskError"),
    "Verdict": ("harness_world.grading", "CriterionVerdict"),
    "grade": ("harness_world.grading", "grade"),
    "select_targets": ("harness_world.grading", "select_targets"),
    "verify_file": ("harness_world.grading", "verify_file"),
    "Feasibility": ("harness_world.running", "Feasibility"),
    "Inventory": ("harness_world.running", "RunCounts"),
    "OracleAgent": ("harness_world.running", "oracle_agent"),
    "Reservation": ("harness_world.running", "Reservation"),
    "drive": ("harness_world.running", "drive"),
    "precheck": ("harness_world.running", "precheck"),
    "Mutant": ("harness_world.coverage", "Mutant"),
    "Script": ("harness_world.coverage", "Script"),
    "ScriptContext": ("harness_world.coverage", "ScriptContext"),
    "exceed_tool_calls": ("harness_world.coverage", "exceed_tool_calls"),
    "exceed_turns": ("harness_world.coverage", "exceed_turns"),
    "follow_pages": ("harness_world.coverage", "follow_pages"),
    "load_mutants": ("harness_world.coverage", "load_mutants"),
    "load_oracles": ("harness_world.coverage", "load_oracles"),
    "run_calls": ("harness_world.coverage", "record_calls"),
    "run_script": ("harness_world.coverage", "run_script"),
    "DatabaseHasher": ("harness_world.tau2", "DatabaseHasher"),
    "ExternalRun": ("harness_world.tau2", "ExternalRun"),
    "GoldCall": ("harness_world.tau2", "GoldCall"),
    "GoldReport": ("harness_world.tau2", "GoldReport"),
    "ImportedTask": ("harness_world.tau2", "ImportedTask"),
    "RegradeResult": ("harness_world.tau2", "RegradeResult"),
    "check_gold": ("harness_world.tau2", "check_gold"),
    "exact_effects": ("harness_world.tau2", "exact_effects"),
    "read_targets": ("harness_world.tau2", "read_targets"),
    "regrade": ("harness_world.tau2", "regrade"),
}


def __getattr__(name: str) -> Any:
    """Resolve a name moved to an audience module, warning once per use."""
    moved = _MOVED.get(name)
    if moved is None:
        raise AttributeError(f"module 'harness_world' has no attribute {name!r}")
    module, attribute = moved
    warnings.warn(
        f"harness_world.{name} is deprecated: use {module}.{attribute}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(module), attribute)
