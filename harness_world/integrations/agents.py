"""Model agents by name, as ``run --agent openai|anthropic`` makes them (an extension).

`choose_agent` makes any agent ``run --agent NAME`` names: the core's (a world's reference
solutions or failure policies, a scripted file: `harness_world.running.reference_agents`) or
a model over the OpenAI-compatible or Anthropic SDK with the `ModelSettings` given;
`for_executor` gives a model agent its SDK's async client when attempts run concurrently in
one process. ``run`` reaches the model agents through the plug-in registry: `openai_agent`
and `anthropic_agent` are its factories and `MODEL_OPTIONS` adds their options to ``run``.
The SDKs are imported only when such an agent is made.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path
from typing import Any, Final, Literal, cast

import attrs

from harness_world.engine.spec import WorldLocation
from harness_world.integrations import DEFAULT_SYSTEM_PROMPT
from harness_world.integrations.anthropic import AnthropicAgent, AsyncAnthropicAgent
from harness_world.integrations.openai import AsyncOpenAIAgent, OpenAIAgent
from harness_world.registry import Options
from harness_world.running.agents import Agent
from harness_world.running.executors import Concurrent, Executor
from harness_world.running.reference_agents import CORE_AGENT_NAMES, named_agent

__all__ = [
    "AGENT_NAMES",
    "MODEL_OPTIONS",
    "ModelSettings",
    "anthropic_agent",
    "choose_agent",
    "for_executor",
    "openai_agent",
]

AGENT_NAMES: Final = (*CORE_AGENT_NAMES, "openai", "anthropic")
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
    if name in CORE_AGENT_NAMES:
        return named_agent(name, world=world, script=script)
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


def settings_of(args: argparse.Namespace) -> ModelSettings:
    """The `ModelSettings` ``run``'s model options give.

    Raises:
        ValueError: for ``--max-tokens`` below 1 or a ``--request-timeout`` not above 0.
    """
    if args.max_tokens < 1 or not args.request_timeout > 0:
        raise ValueError("--max-tokens must be at least 1 and --request-timeout above 0")
    return ModelSettings(
        model=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        timeout_s=args.request_timeout,
        system_prompt_file=args.system_prompt_file,
        price_in=args.price_in,
        price_out=args.price_out,
        tool_calling=args.tool_calling,
    )


def _from_args(provider: str, args: argparse.Namespace) -> Agent:
    agent = _model_agent(provider, settings_of(args))
    concurrency = getattr(args, "concurrency", 1)
    return for_executor(agent, Concurrent(concurrency)) if concurrency > 1 else agent


def openai_agent(args: argparse.Namespace, world: object = None) -> Agent:
    """``run --agent openai``: a model over an OpenAI-compatible endpoint (registered factory).

    Raises:
        ValueError: what the agent lacks (its model, its SDK extra), naming the option.
    """
    return _from_args("openai", args)


def anthropic_agent(args: argparse.Namespace, world: object = None) -> Agent:
    """``run --agent anthropic``: a model over the Messages API (registered factory).

    Raises:
        ValueError: what the agent lacks (its model, its SDK extra), naming the option.
    """
    return _from_args("anthropic", args)


class ModelOptions(Options):
    """``run``'s options for ``--agent openai`` and ``--agent anthropic``."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The model options, in their own group of ``run --help``."""
        group = parser.add_argument_group(
            "--agent openai (any OpenAI-compatible endpoint) and --agent anthropic (Messages API)"
        )
        group.add_argument("--model", help="model name")
        group.add_argument(
            "--base-url",
            help="endpoint (default: $OPENAI_BASE_URL or https://api.openai.com/v1 for openai; "
            "$ANTHROPIC_BASE_URL or the SDK default for anthropic)",
        )
        group.add_argument(
            "--api-key-env",
            help="environment variable holding the key (default OPENAI_API_KEY or "
            "ANTHROPIC_API_KEY)",
        )
        group.add_argument(
            "--temperature",
            type=float,
            help="sampling temperature (default 0 for openai; the API's default for anthropic)",
        )
        group.add_argument(
            "--max-tokens",
            type=int,
            default=1024,
            help="completion token cap per request (pinned in the revision; default 1024)",
        )
        group.add_argument(
            "--request-timeout",
            type=float,
            default=60.0,
            metavar="SECONDS",
            help="per-request timeout (pinned in the revision when changed; default 60: a cold "
            "local model may need more for its first request)",
        )
        group.add_argument(
            "--tool-calling",
            choices=("native", "text"),
            default="native",
            help="openai only. native: the API's tool calling; text: for a model without it, "
            "the tools are described in the system prompt and calls are read from the reply's "
            "text (<tool_call> blocks, fenced or bare JSON objects), results sent back as a "
            "user message (pinned in the revision when text)",
        )
        group.add_argument(
            "--system-prompt-file", type=Path, help="system prompt text (hashed into the revision)"
        )
        group.add_argument(
            "--price-in", type=float, default=0.0, help="USD per million prompt tokens"
        )
        group.add_argument(
            "--price-out", type=float, default=0.0, help="USD per million completion tokens"
        )


MODEL_OPTIONS = ModelOptions()
"""The model agents' options, added to ``run`` through the plug-in registry."""
