"""Bounded context for model-backed agents: old tool results beyond a budget become notices.

A turn cap does not bound request size: every request resends the whole conversation, and large
listings dominate it. `bound_messages` keeps the conversation's shape (every assistant tool call
keeps its tool message, so the chat API accepts it) but replaces the content of the oldest tool
results with a short notice until the estimated prompt fits the budget; the newest results are
always kept whole. Only what is sent to the model shrinks: the attempt's record keeps every call
and every full result, so the evidence and the grade are unchanged.

The policy is part of an agent's settings, hence of the run's revision: runs with and without it
are not compared as if they were the same configuration.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec

from harness_world.engine.calls import CallRecord

__all__ = ["ContextPolicy", "bound_messages", "estimate_tokens", "replayed_prompt_tokens"]

_CHARS_PER_TOKEN = 4
"""The estimate used throughout: about four characters of JSON per token."""


class ContextPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """How much of the conversation's tool results a request may carry.

    Attributes:
        max_tokens: Estimated prompt tokens per request above which old tool results are
            replaced by notices (oldest first).
        keep_recent: The newest tool results that are always sent whole.
    """

    max_tokens: int
    keep_recent: int = 2

    def __post_init__(self) -> None:
        if self.max_tokens < 1 or self.keep_recent < 0:
            raise ValueError("context policy: max_tokens must be >= 1 and keep_recent >= 0")


def estimate_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """Estimated prompt tokens of a message list (JSON characters / 4, rounded up)."""
    return -(-len(json.dumps(list(messages), sort_keys=True)) // _CHARS_PER_TOKEN)


def _notice(content: str) -> str:
    return (
        f"[older tool result elided to bound the context: {len(content)} characters; "
        "call the tool again if you need it]"
    )


def bound_messages(
    messages: Sequence[dict[str, Any]], policy: ContextPolicy | None
) -> list[dict[str, Any]]:
    """The messages to send under ``policy`` (a new list; ``messages`` is not changed).

    Without a policy, or when the estimate already fits, the messages are returned as they are.
    Otherwise tool messages other than the newest ``keep_recent`` get a short notice instead of
    their content, oldest first, until the estimate fits or none is left to shorten.
    """
    out = [dict(m) for m in messages]
    if policy is None:
        return out
    total = estimate_tokens(out)
    tools = [i for i, m in enumerate(out) if m.get("role") == "tool"]
    movable = tools[: max(0, len(tools) - policy.keep_recent)]
    for index in movable:
        if total <= policy.max_tokens:
            break
        content = str(out[index].get("content", ""))
        notice = _notice(content)
        if len(notice) >= len(content):
            continue
        total -= (len(json.dumps(content)) - len(json.dumps(notice))) // _CHARS_PER_TOKEN
        out[index]["content"] = notice
    return out


def replayed_prompt_tokens(
    instruction: str, calls: Sequence[CallRecord], policy: ContextPolicy | None
) -> int:
    """Estimated prompt tokens a one-call-per-turn agent would have sent for ``calls``.

    The conversation is rebuilt from the record (the instruction, then per call the assistant's
    tool call and the tool's observation; system prompt and tool schemas left out, as they are
    the same with and without a policy) and every request, the final one included, is bounded
    by ``policy`` before it is counted. A replay fork uses it to measure a context policy
    without calling a model.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": instruction}]
    total = estimate_tokens(bound_messages(messages, policy))
    for call in calls:
        call_id = f"call_{call.seq}"
        function = {"name": call.tool, "arguments": json.dumps(call.args, sort_keys=True)}
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        shown = (
            {"ok": True, "result": call.result}
            if call.ok
            else {"ok": False, "error": msgspec.to_builtins(call.error)}
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(shown, sort_keys=True)}
        )
        total += estimate_tokens(bound_messages(messages, policy))
    return total
