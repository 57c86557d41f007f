"""One model-agent loop: every provider, sync and async clients, the same requests and records."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.integrations.anthropic import AnthropicAgent, AsyncAnthropicAgent
from harness_world.integrations.model_agent import AsyncModelAgent, ModelAgent
from harness_world.integrations.openai import AsyncOpenAIAgent, OpenAIAgent
from harness_world.running import drive
from harness_world.running.units import drive_async
from tests.conftest import REPO, examples, requires
from tests.fake_openai import fake_openai, scripted_brain, text_brain
from tests.integrations.fake_anthropic import fake_anthropic
from tests.integrations.fake_anthropic import scripted_brain as anthropic_brain

pytestmark = pytest.mark.integrations

TASK = "helpdesk.reply_and_solve"
Step = list[tuple[str, dict[str, Any]]] | str

# A reply is some tool calls (a ticket that exists, one that does not, a wrong type) or the
# final text.
_CALL = st.tuples(
    st.just("get_ticket"),
    st.fixed_dictionaries({"ticket_id": st.sampled_from(["T-1001", "T-1002", "T-9999", 5])}),
)
_STEPS = st.lists(st.lists(_CALL, min_size=1, max_size=2), max_size=3).map(
    lambda calls: [*calls, "Done."]
)


def _as_text(step: Step) -> str:
    """A step as a model without tool calling writes it."""
    if isinstance(step, str):
        return step
    blocks = [json.dumps({"name": name, "arguments": args}) for name, args in step]
    return "\n".join(f"<tool_call>\n{block}\n</tool_call>" for block in blocks)


# Per provider: its fake server, the brain playing a script, the agent, its async form.
PROVIDERS: dict[
    str,
    tuple[Any, Callable[[list[Step]], Any], Callable[[str], ModelAgent], type[AsyncModelAgent]],
] = {
    "openai": (
        fake_openai,
        scripted_brain,
        lambda url: OpenAIAgent(model="m", base_url=url, price_in_per_mtok=2.0),
        AsyncOpenAIAgent,
    ),
    "openai-text": (
        fake_openai,
        lambda steps: text_brain([_as_text(s) for s in steps]),
        lambda url: OpenAIAgent(model="m", base_url=url, tool_calling="text"),
        AsyncOpenAIAgent,
    ),
    "anthropic": (
        fake_anthropic,
        anthropic_brain,
        lambda url: AnthropicAgent(model="m", base_url=url, price_out_per_mtok=3.0),
        AsyncAnthropicAgent,
    ),
}


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, tuple[dict[str, Any], dict[str, Any]]]]:
    """One fake server per provider for every example; ``brain`` holds the current script."""
    out = {}
    with ExitStack() as stack:
        for provider, (serve, _, _, _) in PROVIDERS.items():
            if importlib.util.find_spec(provider.split("-")[0]) is None:
                continue
            current: dict[str, Any] = {}
            fake = stack.enter_context(serve(lambda messages, c=current: c["brain"](messages)))
            out[provider] = (fake, current)
        yield out


def _evidence(record: hw.Record) -> bytes:
    return msgspec.json.encode(msgspec.structs.replace(record, context=hw.evidence.RecordContext()))


@pytest.mark.parametrize(
    "provider",
    [
        pytest.param("openai", marks=requires("openai", "needs the [openai] extra")),
        pytest.param("openai-text", marks=requires("openai", "needs the [openai] extra")),
        pytest.param("anthropic", marks=requires("anthropic", "needs the [anthropic] extra")),
    ],
)
@settings(
    max_examples=examples(6, 100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=_STEPS)
def test_sync_and_async_clients_send_and_record_the_same(
    provider: str, steps: list[Step], small: hw.World, servers: dict[str, Any]
) -> None:
    task = {t.id: t for t in hw.load_tasks("helpdesk")}[TASK]
    fake, current = servers[provider]
    _, brain, make, wrap = PROVIDERS[provider]
    current["brain"] = brain(steps)
    agent = make(fake["base_url"])
    before = len(fake["requests"])
    sync_record = drive(agent, hw.Attempt(small, task))
    middle = len(fake["requests"])
    async_record = asyncio.run(drive_async(wrap(agent), hw.Attempt(small, task)))
    sync_sent, async_sent = fake["requests"][before:middle], fake["requests"][middle:]
    assert sync_sent == async_sent and len(sync_sent) == len(steps)
    assert _evidence(sync_record) == _evidence(async_record)


@requires("openai", "needs the [openai] extra")
def test_the_sync_agent_runs_inside_a_running_event_loop(small: hw.World) -> None:
    """A notebook or an async host may call ``run``: the sync client needs no loop of its own."""
    task = {t.id: t for t in hw.load_tasks("helpdesk")}[TASK]

    async def host() -> hw.Record:
        with fake_openai(scripted_brain([[("get_ticket", {"ticket_id": "T-1001"})], "ok"])) as s:
            return drive(OpenAIAgent(model="m", base_url=s["base_url"]), hw.Attempt(small, task))

    record = asyncio.run(host())
    assert record.outcome.status == "completed"
    assert [c.tool for c in record.calls] == ["get_ticket"]


def test_the_request_loop_is_written_once() -> None:
    """Provider modules adapt an API; none has a loop, a client or a metered request of its own."""
    integrations = REPO / "harness_world" / "integrations"
    for module in ("openai", "anthropic"):
        tree = ast.parse((integrations / f"{module}.py").read_text())
        defined = {
            node.name
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        assert not defined & {"run", "_converse", "_request", "_client", "_settle"}, module
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        assert not {n for n in names if n.startswith("metered_request")}, module
