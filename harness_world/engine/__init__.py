"""The engine, for world authors: world specs, contracts, immutable worlds, sessions.

A world folder's ``world.py`` declares ``WORLD = WorldSpec(contract=..., ...)``. The contract's
entities come from ``TypedDict`` rows (`entity`) and its tools from typed functions (`tool`);
the toolkit (`require`, `given`, `search`, `exactly_one_of`, `at_least_one_of`, `seeded`,
`seed_timestamp`, and `ToolContext.page`) holds what every world needs. `load_world` validates
and indexes the rows once; `World.open_session` gives each attempt a private `Session`. The
engine knows no particular world: worlds plug in through their spec.
"""

from harness_world.engine.calls import CallRecord, FinalRow, Observation, ToolError, WriteImage
from harness_world.engine.contract import (
    Contract,
    Derived,
    Entity,
    Field,
    Lookup,
    Params,
    Problem,
    Tool,
    ToolFailure,
)
from harness_world.engine.hints import DeclarationError, entity, literal_values, tool
from harness_world.engine.schemas import SchemaFormat, tool_schemas
from harness_world.engine.session import Session, ToolContext, ToolFunction
from harness_world.engine.spec import WorldLocation, WorldSpec, WorldSpecError
from harness_world.engine.toolkit import (
    at_least_one_of,
    exactly_one_of,
    given,
    require,
    search,
    seed_timestamp,
    seeded,
)
from harness_world.engine.values import ABSENT, Absent, Key
from harness_world.engine.world import World, WorldError, load_world, locate_world

__all__ = [
    "ABSENT",
    "Absent",
    "CallRecord",
    "Contract",
    "DeclarationError",
    "Derived",
    "Entity",
    "Field",
    "FinalRow",
    "Key",
    "Lookup",
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
    "WorldLocation",
    "WorldSpec",
    "WorldSpecError",
    "WriteImage",
    "at_least_one_of",
    "entity",
    "exactly_one_of",
    "given",
    "literal_values",
    "load_world",
    "locate_world",
    "require",
    "search",
    "seed_timestamp",
    "seeded",
    "tool",
    "tool_schemas",
]
