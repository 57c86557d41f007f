"""The engine, for world authors: contracts, immutable worlds, copy-on-write sessions.

A world declares a `Contract` (entities with their `Field` s, and tools taking `Params`);
`load_world` validates and indexes its rows once; `World.open_session` gives each attempt a
private `Session` whose tools run through a `ToolContext`. The engine knows no particular
world: worlds plug in through their contract.
"""

from harness_world.engine.calls import CallRecord, FinalRow, Observation, ToolError, WriteImage
from harness_world.engine.contract import (
    Contract,
    Derived,
    Entity,
    Field,
    Params,
    Problem,
    Tool,
    ToolFailure,
    tool,
)
from harness_world.engine.schemas import SchemaFormat, tool_schemas
from harness_world.engine.session import Session, ToolContext, ToolFunction
from harness_world.engine.values import ABSENT, Absent, Key
from harness_world.engine.world import World, WorldError, load_world

__all__ = [
    "ABSENT",
    "Absent",
    "CallRecord",
    "Contract",
    "Derived",
    "Entity",
    "Field",
    "FinalRow",
    "Key",
    "Observation",
    "Params",
    "Problem",
    "SchemaFormat",
    "Session",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolFailure",
    "ToolFunction",
    "World",
    "WorldError",
    "WriteImage",
    "load_world",
    "tool",
    "tool_schemas",
]
