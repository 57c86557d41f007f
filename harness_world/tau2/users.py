"""Simulated users for τ² tasks, a τ²-faithful agent view, and a conversational oracle.

* `ScriptedUser` (`harness_world.tau2.scripted_user`): deterministic, built from a τ² task's
  ``user_scenario`` and gold calls. It tells its scenario in the first person, a sentence at a
  time when asked, says who it is when asked, confirms only the changes its scenario allows,
  and ends (`STOP`) when nothing is left to tell or after a fixed number of exchanges. Used
  in tests and as a cheap stand-in.
* `OpenAIUser`: a model plays the customer over any OpenAI-compatible endpoint, instructed
  with the scenario (in our words) and τ²'s ``###STOP###`` convention.
* `Tau2View`: what an agent sees in τ² observation mode: τ²'s own tool schemas (read at run
  time from a τ²-bench checkout) and observations as τ² renders them.
* `ConversationalOracle`: the gold calls driven through a conversation with the user (asks
  who they are and authenticates them, acts, lists each write and asks for confirmation
  before it, asks whether anything else is needed until the user ends): the oracle for
  end-to-end runs with a user.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import attrs

from harness_world.engine.calls import Observation
from harness_world.evidence.record import UserTurn
from harness_world.running.attempt import Attempt
from harness_world.running.user import GREETING, STOP
from harness_world.tau2.faithful import Tau2Shape
from harness_world.tau2.gold import ImportedTask
from harness_world.tau2.importer import IDENTIFY
from harness_world.tau2.scripted_user import ScriptedUser, scenario_field

__all__ = [
    "ConversationalOracle",
    "OpenAIUser",
    "ScriptedUser",
    "Tau2View",
    "scenario_text",
]

CLOSING_ROUNDS = 10
"""How many times the oracle asks whether anything else is needed before it ends."""


def scenario_text(scenario: dict[str, Any]) -> str:
    """The user scenario as instructions for a model playing the customer (our words)."""
    parts = [
        "You are a customer contacting an online retail store's support agent. Play the "
        "customer described below, one short message at a time. Do not invent facts you were "
        "not given. When your request is fully handled, or the agent cannot help further, "
        f"answer with {STOP} alone.",
    ]
    for name, label in (
        ("reason_for_call", "Why you are contacting the store"),
        ("known_info", "What you know"),
        ("unknown_info", "What you do not know"),
        ("task_instructions", "How you behave"),
    ):
        text = scenario_field(scenario, name)
        if text:
            parts.append(f"{label}: {text}")
    persona = scenario.get("persona")
    if isinstance(persona, str) and persona.strip():
        parts.append(f"Persona: {persona.strip()}")
    return "\n".join(parts)


@attrs.frozen(slots=True)
class OpenAIUser:
    """A model playing the customer over an OpenAI-compatible chat-completions endpoint.

    Its system message is the scenario (`scenario_text`); the agent's messages are its user
    turns and its own answers its assistant turns. Requests are not metered by the attempt
    (they are the environment's cost, not the agent's).

    Attributes:
        scenario: The τ² ``user_scenario``.
        model: The model name.
        base_url: The endpoint.
        api_key: The key (any string for local servers).
        temperature: Sampling temperature.
        timeout_s: Per-request timeout.
    """

    scenario: dict[str, Any]
    model: str
    base_url: str
    api_key: str = "not-needed"
    temperature: float = 0.0
    timeout_s: float = 60.0

    @property
    def name(self) -> str:
        """``openai``."""
        return "openai"

    def settings(self) -> dict[str, Any]:
        """Model, endpoint, temperature and the hash of the instructions."""
        return {
            "kind": "openai",
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "scenario_sha256": hashlib.sha256(scenario_text(self.scenario).encode()).hexdigest(),
        }

    def reply(self, history: Sequence[UserTurn], message: str) -> str:
        """Ask the model for the customer's next message.

        Raises:
            RuntimeError: when the openai package is missing or the request fails.
        """
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise RuntimeError("the OpenAI user needs `pip install harness_world[openai]`") from exc
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": scenario_text(self.scenario)}
        ]
        for turn in history:
            messages += [
                {"role": "user", "content": turn.agent},
                {"role": "assistant", "content": turn.user},
            ]
        messages.append({"role": "user", "content": message})
        client: Any = openai.OpenAI(
            base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s
        )
        try:
            response = client.chat.completions.create(
                model=self.model,
                messages=messages,
                temperature=self.temperature,
            )
        except openai.OpenAIError as exc:
            raise RuntimeError(f"user model request failed: {exc}") from None
        return response.choices[0].message.content or ""


@attrs.frozen(slots=True)
class Tau2View:
    """τ² observation mode: τ²'s tool schemas and τ²'s rendering of every observation.

    Attributes:
        shape: Renders rows as τ²'s models dump them.
        schemas: τ²'s OpenAI tool schemas (from `harness_world.tau2.source.Tau2Source`).
    """

    shape: Tau2Shape
    schemas: list[dict[str, Any]]

    def tool_schemas(self, format: str) -> list[dict[str, Any]]:
        """τ²'s schemas (OpenAI shape; ``anthropic`` gets the same description and input schema).

        Raises:
            ValueError: for another format.
        """
        if format == "openai":
            return [dict(s) for s in self.schemas]
        if format == "anthropic":
            return [
                {
                    "name": s["function"]["name"],
                    "description": s["function"].get("description", ""),
                    "input_schema": s["function"].get("parameters", {}),
                }
                for s in self.schemas
            ]
        raise ValueError(f"τ² observation mode has no {format!r} tool schemas")

    def render(self, observation: Observation) -> str:
        """The result as τ² shows it, or ``Error: <message>``."""
        return self.shape.observation(observation)


@attrs.frozen(slots=True)
class ConversationalOracle:
    """The gold calls of a τ² task, driven through a conversation with the simulated user.

    Attributes:
        imported: The task and its gold calls.
    """

    imported: ImportedTask

    @property
    def name(self) -> str:
        """``oracle``."""
        return "oracle"

    def settings(self) -> dict[str, Any]:
        """The kind and the task."""
        return {"kind": "tau2-conversational-oracle", "task": self.imported.task.id}

    def run(self, attempt: Attempt) -> str:
        """Greet, authenticate the user, list and confirm each write, run the gold, close."""
        world = attempt.world
        attempt.message_user(GREETING)
        attempt.message_user("Could you give me your email address, or your name and zip code?")
        self._authenticate(attempt)
        for call in self.imported.gold:
            spec = world.contract.tool(call.tool)
            if spec is not None and spec.kind == "write" and not attempt.user_stopped:
                details = json.dumps(call.args, ensure_ascii=False, sort_keys=True)
                attempt.message_user(
                    f"I will now run {call.tool} with {details}. Do you confirm (yes/no)?"
                )
            attempt.call(call.tool, call.args)
        for _ in range(CLOSING_ROUNDS):
            if attempt.user_stopped:
                break
            attempt.message_user("Your request is handled. Is there anything else I can do?")
        return "Thank you for contacting us."

    def _authenticate(self, attempt: Attempt) -> None:
        """Find the customer's user id first, unless the gold starts by doing so.

        By email when the customer knows their email, else by name and zip, as the customer
        gave them.
        """
        gold, customer = self.imported.gold, self.imported.customer
        row = attempt.world.get("users", customer) if customer else None
        if row is None or (gold and gold[0].tool in IDENTIFY):
            return
        known = scenario_field(self.imported.user_scenario, "known_info")
        email, name, address = row.get("email"), row.get("name"), row.get("address")
        if isinstance(email, str) and email in known:
            attempt.call("find_user_id_by_email", {"email": email})
        elif isinstance(name, dict) and isinstance(address, dict):
            attempt.call(
                "find_user_id_by_name_zip",
                {
                    "first_name": name.get("first_name"),
                    "last_name": name.get("last_name"),
                    "zip": address.get("zip"),
                },
            )
