"""harness_world: simulated business worlds for tool-calling agents, graded so anyone can re-check.

The public API is re-exported here; the modules behind it are private.

Example:
    >>> import harness_world as hw
    >>> world = hw.load_world("helpdesk")
    >>> session = world.open_session(seed=0)
    >>> obs = session.call("get_ticket", {"ticket_id": "T-1000"})
    >>> obs.ok
    True

"""

from harness_world._agents import Agent, OracleAgent, ScriptedAgent, drive
from harness_world._attempt import Attempt, AttemptEnded, AttemptLimits, Reservation
from harness_world._calls import CallRecord, FinalRow, Observation, ToolError, WriteImage
from harness_world._checker import grade
from harness_world._contract import (
    Contract,
    Entity,
    Field,
    Params,
    Problem,
    Tool,
    ToolFailure,
    tool,
)
from harness_world._gold import (
    DatabaseHasher,
    ExternalRun,
    GoldCall,
    GoldReport,
    ImportedTask,
    RegradeResult,
    check_gold,
    exact_effects,
    read_targets,
    regrade,
)
from harness_world._grade import Grade, Verdict
from harness_world._plugins import load_mutants, load_oracles
from harness_world._precheck import Feasibility, precheck
from harness_world._record import (
    Outcome,
    Record,
    RecordContext,
    RecordError,
    Usage,
    WorldRef,
    load_record,
    make_record,
    save_record,
)
from harness_world._replay import Mismatch, Verification, replay, verify, verify_file
from harness_world._run import Inventory, RunResult, run
from harness_world._schemas import tool_schemas
from harness_world._scripted import (
    Mutant,
    Script,
    ScriptContext,
    exceed_tool_calls,
    exceed_turns,
    follow_pages,
    run_calls,
    run_script,
)
from harness_world._session import Session, ToolContext
from harness_world._task import Task, TaskError, load_task, load_tasks, select_targets
from harness_world._world import ABSENT, Absent, Key, World, WorldError, load_world

__all__ = [
    "ABSENT",
    "Absent",
    "Agent",
    "Attempt",
    "AttemptEnded",
    "AttemptLimits",
    "CallRecord",
    "Contract",
    "DatabaseHasher",
    "Entity",
    "ExternalRun",
    "Feasibility",
    "Field",
    "FinalRow",
    "GoldCall",
    "GoldReport",
    "Grade",
    "ImportedTask",
    "Inventory",
    "Key",
    "Mismatch",
    "Mutant",
    "Observation",
    "OracleAgent",
    "Outcome",
    "Params",
    "Problem",
    "Record",
    "RecordContext",
    "RecordError",
    "RegradeResult",
    "Reservation",
    "RunResult",
    "Script",
    "ScriptContext",
    "ScriptedAgent",
    "Session",
    "Task",
    "TaskError",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolFailure",
    "Usage",
    "Verdict",
    "Verification",
    "World",
    "WorldError",
    "WorldRef",
    "WriteImage",
    "check_gold",
    "drive",
    "exact_effects",
    "exceed_tool_calls",
    "exceed_turns",
    "follow_pages",
    "grade",
    "load_mutants",
    "load_oracles",
    "load_record",
    "load_task",
    "load_tasks",
    "load_world",
    "make_record",
    "precheck",
    "read_targets",
    "regrade",
    "replay",
    "run",
    "run_calls",
    "run_script",
    "save_record",
    "select_targets",
    "tool",
    "tool_schemas",
    "verify",
    "verify_file",
]
