"""Tool calls written as text: recorded model replies, bounds, and a property over any text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world.running.text_tool_calls import (
    MAX_CALLS,
    MAX_TEXT,
    parse_tool_calls,
    rejection_note,
    text_conversation,
    tools_prompt,
)
from tests.conftest import examples

FIXTURES = json.loads((Path(__file__).parent / "data" / "text_replies.json").read_text())
TOOLS: list[str] = FIXTURES["tools"]
REPLIES: list[dict[str, Any]] = FIXTURES["replies"]


@pytest.mark.parametrize("reply", REPLIES, ids=[r["id"] for r in REPLIES])
def test_recorded_replies_parse_as_expected(reply: dict[str, Any]) -> None:
    parsed = parse_tool_calls(reply["text"], TOOLS)
    assert [{"name": c.name, "arguments": c.arguments} for c in parsed.calls] == reply["calls"]
    assert len(parsed.rejected) == len(reply["rejected"]), parsed.rejected
    for reason, expected in zip(parsed.rejected, reply["rejected"], strict=True):
        assert expected in reason


def test_the_fixtures_cover_every_form_the_parser_reads() -> None:
    ids = {r["id"] for r in REPLIES}
    needed = {"tagged_several", "fenced_json", "bare_whole_reply", "malformed_tagged"}
    assert needed | {"unknown_tool_tagged", "prose_with_braces", "final_answer"} <= ids


def test_a_reply_over_the_size_bound_is_not_read() -> None:
    call = '<tool_call>\n{"name": "list_tickets", "arguments": {}}\n</tool_call>'
    text = call + " " * MAX_TEXT
    parsed = parse_tool_calls(text, TOOLS)
    assert parsed.calls == [] and "not read" in parsed.rejected[0]
    assert len(parse_tool_calls(call, TOOLS).calls) == 1


def test_at_most_max_calls_are_taken_from_one_reply() -> None:
    block = '<tool_call>\n{"name": "list_groups", "arguments": {}}\n</tool_call>\n'
    parsed = parse_tool_calls(block * (MAX_CALLS + 3), TOOLS)
    assert len(parsed.calls) == MAX_CALLS and len(parsed.rejected) == 3
    assert all(f"more than {MAX_CALLS} calls" in r for r in parsed.rejected)


def test_rejections_are_bounded_too() -> None:
    block = '<tool_call>\n{"name": "rm", "arguments": {}}\n</tool_call>'
    parsed = parse_tool_calls(block * 100, TOOLS)
    assert len(parsed.rejected) == MAX_CALLS + 1 and parsed.rejected[-1] == "and 84 more not run"


def test_hostile_nesting_and_many_braces_end_quickly_without_calls() -> None:
    deep = "{" + '"a":{' * 5000 + "}" * 5001
    for text in (deep, "{\n" * 20000, '{"a":[\n' * 5000, "<tool_call>" * 5000):
        assert parse_tool_calls(text[:MAX_TEXT], TOOLS).calls == []


def test_tools_are_offered_in_the_prompt_and_results_come_back_as_user_text() -> None:
    schemas = [
        {
            "type": "function",
            "function": {"name": "get_ticket", "description": "Read one.", "parameters": {}},
        }
    ]
    prompt = tools_prompt(schemas)
    assert '"name": "get_ticket"' in prompt and "<tool_call>" in prompt
    call = {"id": "c1", "type": "function", "function": {"name": "get_ticket", "arguments": "{}"}}
    native: list[dict[str, Any]] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "do it"},
        {"role": "assistant", "content": "<tool_call>…</tool_call>", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
        {"role": "user", "content": rejection_note(["unknown tool 'x'"])},
        {"role": "assistant", "content": "", "tool_calls": [call]},  # a fork's replayed prefix
        {"role": "tool", "tool_call_id": "c1", "content": '{"ok": false}'},
    ]
    wire = text_conversation(native)
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert all("tool_calls" not in m for m in wire)
    assert wire[3]["content"] == (
        '<tool_response name="get_ticket">\n{"ok": true}\n</tool_response>\n'
        "Not run: unknown tool 'x'."
    )
    assert parse_tool_calls(wire[4]["content"], ["get_ticket"]).calls[0].name == "get_ticket"


_FRAGMENTS = st.sampled_from(
    [
        "<tool_call>",
        "</tool_call>",
        "```json\n",
        "```\n",
        "```",
        "\n",
        "{",
        "}",
        "[",
        "]",
        '"name": ',
        '"arguments": ',
        '"parameters": ',
        '"get_ticket"',
        '"nope"',
        '{"ticket_id": "T-1"}',
        ", ",
        "NaN",
        '"\\ud800"',
        "1" * 30,
        '{"name": "list_groups", "arguments": {}}',
    ]
)


@settings(max_examples=examples(300, 3000))
@given(
    st.one_of(
        st.text(max_size=400),
        st.lists(st.one_of(_FRAGMENTS, st.text(max_size=8)), max_size=40).map("".join),
    ),
    st.lists(st.sampled_from(TOOLS), unique=True),
)
def test_the_parser_never_raises_and_never_returns_an_unknown_tool(
    text: str, offered: list[str]
) -> None:
    parsed = parse_tool_calls(text, offered)
    assert len(parsed.calls) <= MAX_CALLS
    for call in parsed.calls:
        assert call.name in offered and isinstance(call.arguments, dict)
    assert all(isinstance(r, str) for r in parsed.rejected)
