"""Integrations with other systems, one optional extra each.

Import the names from their module; this package imports none of them, so no SDK loads until a
module that needs it is imported (and, for the model agents and the MCP server, until an agent
runs or a server starts):

- `harness_world.integrations.openai` (extra ``openai``): ``OpenAIAgent``, ``AsyncOpenAIAgent``,
  for OpenAI-compatible chat-completions endpoints;
- `harness_world.integrations.anthropic` (extra ``anthropic``): ``AnthropicAgent``,
  ``AsyncAnthropicAgent``, for Anthropic's Messages API; both adapt
  `harness_world.integrations.model_agent`, the one model-agent loop (sync and async);
- `harness_world.integrations.mcp` (extra ``mcp``): ``AttemptServer``, ``serve_stdio``,
  ``serve_http`` and the plan they serve, attempts offered to any MCP client;
- `harness_world.integrations.inspect_ai` (extra ``inspect``): ``hw_task``, ``hw_setup``,
  ``hw_scorer``, tasks as an inspect_ai ``Task``. Importing it imports inspect_ai.

Each module that adapts a library is named for it and imports it by its absolute name (the model
agents by their provider's name, when one runs), which always resolves to the installed SDK,
never to the module itself.
"""

from __future__ import annotations

__all__ = ["DEFAULT_SYSTEM_PROMPT"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a support operations agent. Use the tools to do exactly what the instruction asks, "
    "nothing more. Read a record before changing it, follow every page of a listing, and when "
    "you are done, reply with a short final message."
)
"""The system prompt of every model-backed integration unless it is given another."""
