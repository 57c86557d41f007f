"""Bounded context: old tool results become notices in what is sent, never in the record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness_world as hw
from harness_world.integrations.openai import OpenAIAgent
from harness_world.running import (
    ContextPolicy,
    bound_messages,
    drive,
    estimate_tokens,
    load_manifest,
)
from tests.fake_openai import fake_openai, tool_call


def conversation(results: list[str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
    ]
    for i, text in enumerate(results):
        call = tool_call(i, "list_tickets", {})
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    return messages


def test_without_a_policy_or_under_budget_nothing_changes() -> None:
    messages = conversation(["x" * 400] * 3)
    assert bound_messages(messages, None) == messages
    assert bound_messages(messages, ContextPolicy(max_tokens=10_000)) == messages


def test_oldest_results_become_notices_and_the_newest_stay_whole() -> None:
    messages = conversation(["a" * 4000, "b" * 4000, "c" * 4000, "d" * 4000])
    sent = bound_messages(messages, ContextPolicy(max_tokens=2500, keep_recent=1))
    tools = [m["content"] for m in sent if m["role"] == "tool"]
    assert tools[0].startswith("[older tool result elided") and "4000 characters" in tools[0]
    assert tools[3] == "d" * 4000  # the newest is kept whole
    assert estimate_tokens(sent) <= 2500 or all(t.startswith("[") for t in tools[:3])
    assert [m.get("tool_call_id") for m in sent] == [m.get("tool_call_id") for m in messages]
    assert messages[2 + 1]["content"] == "a" * 4000  # the input is not changed


def test_a_bad_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        ContextPolicy(max_tokens=0)


@given(
    st.lists(st.text(max_size=300), max_size=8),
    st.integers(1, 2000),
    st.integers(0, 3),
)
def test_bounding_only_shortens_old_tool_results(
    results: list[str], budget: int, keep: int
) -> None:
    messages = conversation(results)
    sent = bound_messages(messages, ContextPolicy(max_tokens=budget, keep_recent=keep))
    assert len(sent) == len(messages)
    assert estimate_tokens(sent) <= estimate_tokens(messages)
    tool_positions = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    protected = set(tool_positions[len(tool_positions) - keep :]) if keep else set()
    for i, (before, after) in enumerate(zip(messages, sent, strict=True)):
        if before["role"] != "tool" or i in protected:
            assert before == after
        else:
            assert after["content"] == before["content"] or after["content"].startswith("[older")


def test_the_openai_agent_sends_bounded_prompts_and_records_everything(tmp_path: Path) -> None:
    task = next(t for t in hw.load_tasks("helpdesk") if t.id == "helpdesk.vip_two_statuses")
    world = hw.load_world("helpdesk")
    steps = [
        ("list_tickets", {"status": s, "tag": "vip", "limit": 100}) for s in ("new", "pending")
    ]
    sizes: list[int] = []

    def brain(messages: list[dict[str, Any]]) -> dict[str, Any]:
        sizes.append(len(json.dumps(messages)))
        done = sum(1 for m in messages if m["role"] == "tool")
        if done < len(steps):
            return {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call(done, *steps[done])],
            }
        return {"role": "assistant", "content": "Listed."}

    policy = ContextPolicy(max_tokens=200, keep_recent=0)
    with fake_openai(brain) as server:
        plain = OpenAIAgent(model="fake-1", base_url=server["base_url"])
        bounded = OpenAIAgent(model="fake-1", base_url=server["base_url"], context=policy)
        full = hw.Attempt(world, task)
        record_plain = drive(plain, full)
        unbounded_sizes, sizes[:] = list(sizes), []
        short = hw.Attempt(world, task)
        record_bounded = drive(bounded, short)
    assert sizes[-1] < unbounded_sizes[-1]  # the last request resent less
    assert record_bounded.calls == record_plain.calls  # the record keeps every full result
    assert record_bounded.usage.input_tokens < record_plain.usage.input_tokens
    # the policy is a setting, hence part of the revision
    assert "context" in bounded.settings() and "context" not in plain.settings()
    with fake_openai(brain) as server:
        agent = OpenAIAgent(model="fake-1", base_url=server["base_url"], context=policy)
        hw.run([task], agent, out=tmp_path / "run")
    assert load_manifest(tmp_path / "run").revision.values["agent"]["context"] == {
        "max_tokens": 200,
        "keep_recent": 0,
    }
