"""The user channel: a simulated user an attempt may carry, and how agents see the world.

Conversational benchmarks put a simulated user on the other side: the agent learns who the
customer is and what they want by talking to them. An `Attempt` with a `UserSimulator`
exposes `Attempt.message_user`: the agent's message goes to the simulator, its answer comes
back, and the exchange is recorded as a `harness_world.evidence.UserTurn` (an input, like a
model's output: covered by the record's digest, never recomputed by replay). A user ends the
conversation by putting `STOP` in an answer.

An `AgentView` changes what the agent is shown, not what happens: the tool schemas it gets
and the text of each observation (a benchmark source may show its own descriptions and result
strings). `WorldView`, the default, shows the world's own schemas and each observation as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

import attrs

from harness_world.engine.calls import Observation
from harness_world.engine.schemas import SchemaFormat, tool_schemas
from harness_world.engine.world import World
from harness_world.evidence.record import UserTurn

__all__ = ["GREETING", "STOP", "AgentView", "UserSimulator", "WorldView"]

STOP = "###STOP###"
"""A user answer containing this ends the conversation (the convention of the public
conversational benchmarks whose users we simulate)."""

GREETING = "Hi! How can I help you today?"
"""The agent's opening line when a user is present."""


class UserSimulator(Protocol):
    """Plays the user: answers each message of the agent.

    Implementations must be deterministic for a given history when used in tests; an LLM user
    is not, which is why user turns are recorded rather than recomputed.
    """

    @property
    def name(self) -> str:
        """A label for reports."""
        ...

    def settings(self) -> dict[str, Any]:
        """What changes the user's behaviour (part of a run's identity)."""
        ...

    def reply(self, history: Sequence[UserTurn], message: str) -> str:
        """The user's answer to the agent's ``message``, given the exchanges so far."""
        ...


class AgentView(Protocol):
    """What an agent is shown of the world: tool schemas and observation texts."""

    def tool_schemas(self, format: SchemaFormat) -> list[dict[str, Any]]:
        """The tools in a provider's shape."""
        ...

    def render(self, observation: Observation) -> str:
        """The text the agent sees for one tool call."""
        ...


@attrs.frozen(slots=True)
class WorldView:
    """The default view: the world's own tool schemas, and each observation as sorted JSON.

    Attributes:
        world: The world shown.
    """

    world: World

    def tool_schemas(self, format: SchemaFormat) -> list[dict[str, Any]]:
        """The world's tools in a provider's shape (see `harness_world.engine.tool_schemas`)."""
        return tool_schemas(self.world, format=format)

    def render(self, observation: Observation) -> str:
        """The observation's message as JSON with sorted keys."""
        return json.dumps(observation.to_message(), sort_keys=True)
