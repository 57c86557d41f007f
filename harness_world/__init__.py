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

from harness_world._calls import CallRecord, FinalRow, Observation, ToolError, WriteImage
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
from harness_world._schemas import tool_schemas
from harness_world._session import Session, ToolContext
from harness_world._world import ABSENT, Absent, Key, World, WorldError, load_world

__all__ = [
    "ABSENT",
    "Absent",
    "CallRecord",
    "Contract",
    "Entity",
    "Field",
    "FinalRow",
    "Key",
    "Observation",
    "Params",
    "Problem",
    "Session",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolFailure",
    "World",
    "WorldError",
    "WriteImage",
    "load_world",
    "tool",
    "tool_schemas",
]
