"""An agent by name, as ``run`` offers them: reference policies, a script, or a model.

`choose_agent` makes the agent ``run --agent NAME`` names: a world's reference solutions or
failure policies, a scripted file, or a model over the OpenAI-compatible or Anthropic SDK with
the `ModelSettings` given; `for_executor` gives a model agent its SDK's async client when
attempts run concurrently in one process. The SDKs are imported only when such an agent is made.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, Final, Literal, cast

import attrs

from harness_world.engine.spec import WorldLocation
from harness_world.integrations import DEFAULT_SYSTEM_PROMPT
from harness_world.integrations.anthropic import AnthropicAgent, AsyncAnthropicAgent
from harness_world.integrations.openai import AsyncOpenAIAgent, OpenAIAgent
from harness_world.running.agents import Agent
from harness_world.running.executors import Concurrent, Executor
from harness_world.running.reference_agents import (
    REFERENCE_AGENT_NAMES,
    reference_agent,
    scripted_agent,
)

__all__ = ["AGENT_NAMES", "ModelSettings", "choose_agent", "for_executor"]

AGENT_NAMES: Final = (*REFERENCE_AGENT_NAMES, "scripted", "openai", "anthropic")
"""Every agent `choose_agent` makes, in the order ``run --help`` lists them."""


@attrs.frozen(slots=True, kw_only=True)
class ModelSettings:
    """How a model agent calls its model (``--agent openai`` or ``--agent anthropic``).

    Attributes:
        model: The model name (required for a model agent).
        base_url: The endpoint; None for ``$OPENAI_BASE_URL`` (else api.openai.com) or
            ``$ANTHROPIC_BASE_URL`` (else the SDK's default).
        api_key_env: The environment variable holding the key (None: the SDK's usual one).
        temperature: Sampling temperature; None for 0 (OpenAI) or the API's default (Anthropic).
        max_tokens: Completion token cap per request.
        timeout_s: Per-request timeout in seconds.
        system_prompt_file: A file holding the system prompt (None: the default prompt).
        price_in: US dollars per million prompt tokens.
        price_out: US dollars per million completion tokens.
        tool_calling: ``native`` (the API's tool calls) or ``text`` (OpenAI only: calls read
            from the reply's text).
    """

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int = 1024
    timeout_s: float = 60.0
    system_prompt_file: Path | None = None
    price_in: float = 0.0
    price_out: float = 0.0
    tool_calling: Literal["native", "text"] = "native"

    def prompt(self) -> str:
        """The system prompt: the file's text, or the default prompt."""
        if self.system_prompt_file is None:
            return DEFAULT_SYSTEM_PROMPT
        return self.system_prompt_file.read_text()


def choose_agent(
    name: str,
    *,
    world: str | Path | WorldLocation | None = None,
    script: Path | None = None,
    settings: ModelSettings | None = None,
) -> Agent:
    """The agent ``name`` (one of `AGENT_NAMES`).

    Args:
        name: The agent's name.
        world: The world whose reference solutions a reference agent plays.
        script: For ``scripted``: a .py file defining ``SCRIPTS = {task_id: script}``.
        settings: For ``openai`` and ``anthropic``: how to call the model.

    Raises:
        ValueError: What the agent lacks (its world, script, model or SDK extra), in words
            naming the ``run`` option that gives it.
    """
    if name in REFERENCE_AGENT_NAMES:  # the oracle and reference policies
        if world is None:
            raise ValueError(f"--agent {name} needs --world (whose reference solutions)")
        return reference_agent(world, name)
    if name == "scripted":
        if script is None or not script.is_file():
            raise ValueError("--agent scripted needs --script FILE (a .py defining SCRIPTS)")
        return scripted_agent(script)
    provider = "anthropic" if name == "anthropic" else "openai"
    return _model_agent(provider, settings or ModelSettings())


def _model_agent(provider: str, settings: ModelSettings) -> Agent:
    if provider == "anthropic" and settings.tool_calling != "native":
        raise ValueError("--tool-calling text is for --agent openai (the Messages API has tools)")
    if importlib.util.find_spec(provider) is None:
        raise ValueError(
            f"--agent {provider} needs the extra: pip install 'harness_world[{provider}]'"
        )
    if not settings.model:
        raise ValueError(f"--agent {provider} needs --model")
    api_key = os.environ.get(settings.api_key_env or f"{provider.upper()}_API_KEY", "not-needed")
    common: dict[str, Any] = {
        "model": settings.model,
        "api_key": api_key,
        "max_tokens": settings.max_tokens,
        "timeout_s": settings.timeout_s,
        "system_prompt": settings.prompt(),
        "price_in_per_mtok": settings.price_in,
        "price_out_per_mtok": settings.price_out,
    }
    if provider == "anthropic":
        base_url = settings.base_url or os.environ.get("ANTHROPIC_BASE_URL")
        return AnthropicAgent(base_url=base_url, temperature=settings.temperature, **common)
    return OpenAIAgent(
        base_url=settings.base_url
        or os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
        temperature=0.0 if settings.temperature is None else settings.temperature,
        tool_calling=settings.tool_calling,
        **common,
    )


def for_executor(agent: Agent, executor: Executor) -> Agent:
    """The agent as ``executor`` runs it best: on its SDK's async client when concurrent.

    Attempts in flight in one process then overlap their waiting on one event loop; the
    settings, hence the revision and the records, stay the same.
    """
    # `run` accepts an agent whose `run` is a coroutine function (units.is_async_agent);
    # the Agent protocol spells the synchronous form.
    if isinstance(executor, Concurrent) and executor.attempts > 1:
        if isinstance(agent, OpenAIAgent):
            return cast(Agent, AsyncOpenAIAgent(agent))
        if isinstance(agent, AnthropicAgent):
            return cast(Agent, AsyncAnthropicAgent(agent))
    return agent
