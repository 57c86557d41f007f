"""Tool lists in each provider's tool-calling shape, derived from the parameter structs."""

from __future__ import annotations

from typing import Any, Literal, get_args

from harness_world.engine.world import World

__all__ = ["SCHEMA_FORMATS", "SchemaFormat", "tool_schemas"]

SchemaFormat = Literal["openai", "anthropic", "mcp", "json-schema"]
SCHEMA_FORMATS: tuple[str, ...] = get_args(SchemaFormat)
"""Every shape `tool_schemas` produces (for command-line choices)."""


def tool_schemas(world: World, format: SchemaFormat = "json-schema") -> list[dict[str, Any]]:
    """The world's tools as a list a model API accepts.

    Args:
        world: The world whose contract declares the tools.
        format: ``"openai"`` (chat-completions ``tools``: ``{"type": "function", "function":
            {...}}``), ``"anthropic"`` (``{"name", "description", "input_schema"}``) or
            ``"json-schema"`` (``{"name", "description", "kind", "parameters"}``).

    Raises:
        ValueError: for an unknown format.

    """
    out: list[dict[str, Any]] = []
    for tool in world.contract.tools:
        schema = tool.schema()
        if format == "openai":
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": schema,
                    },
                }
            )
        elif format == "anthropic":
            out.append({"name": tool.name, "description": tool.description, "input_schema": schema})
        elif format == "mcp":
            out.append(
                {
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": schema,
                    "annotations": {"readOnlyHint": tool.kind == "read"},
                }
            )
        elif format == "json-schema":
            out.append(
                {
                    "name": tool.name,
                    "description": tool.description,
                    "kind": tool.kind,
                    "parameters": schema,
                }
            )
        else:
            raise ValueError(
                f"unknown tool schema format {format!r}: use openai, anthropic, mcp or json-schema"
            )
    return out
