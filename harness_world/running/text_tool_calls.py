"""Tool calls written as text, for models served without native tool calling.

Some models (or servers) have no tool-calling API: given the tools in their prompt, they write
a call as JSON in the message text instead. `parse_tool_calls` reads such a reply strictly:

- ``<tool_call> … </tool_call>`` blocks (the Hermes/Qwen convention). When the reply has any
  ``<tool_call>`` tag, only the blocks are read, and each block must hold one call object (or
  a JSON list of them): anything else in a block is rejected with a reason.
- Otherwise, fenced code blocks (```` ``` ```` or ```` ```json ````) holding a call object or a
  list of them, and bare call objects that start a line and end one (the rest of the line
  blank), outside any fence. JSON there that is not call-shaped is data or prose, and is
  ignored, as are fences in another language.

A call object is ``{"name": <tool>, "arguments": {…}}`` (``"parameters"`` is accepted for
``"arguments"``) and nothing else: the name must be one of the tools offered and the arguments
a JSON object. The arguments are not checked further here: the session validates them as it
validates a native call, and records a typed error when they are wrong. A reply with no
acceptable call is the model's final message.

Parsing is bounded: a reply over `MAX_TEXT` characters is not read for calls, at most
`MAX_CANDIDATES` bare objects are decoded, at most `MAX_CALLS` calls are taken from a reply,
and malformed, duplicate-keyed or non-finite JSON is refused. It never raises.

`tools_prompt` describes the tools for the system prompt, and `text_conversation` turns the
agent's conversation (kept in the chat API's native shape, so bounded context and forks work
the same in both modes) into plain text turns: each assistant turn as the text it wrote, and
the results of its calls as one user message of ``<tool_response name="…">`` blocks, in call
order, followed by any notes on rejected calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

import msgspec

from harness_world.errors import HarnessWorldError

__all__ = [
    "MAX_CALLS",
    "MAX_CANDIDATES",
    "MAX_TEXT",
    "ParsedReply",
    "TextCall",
    "ToolCallMode",
    "parse_tool_calls",
    "rejection_note",
    "text_conversation",
    "tools_prompt",
]

ToolCallMode = Literal["native", "text"]
"""How a model agent calls tools: the API's tool calling, or calls written in its text."""

MAX_TEXT = 65_536
"""Longest reply, in characters, that is read for calls (a longer one is a final message)."""
MAX_CALLS = 16
"""Most calls taken from one reply; further calls are rejected."""
MAX_CANDIDATES = 64
"""Most bare JSON objects decoded in one reply (each decode reads up to the end of the text)."""

_TAG_OPEN = "<tool_call>"
_TAG_CLOSE = "</tool_call>"
_FENCED = re.compile(r"```([\w+.-]*)[ \t]*\n(.*?)```", re.DOTALL)
_CALL_FENCES = ("", "json")  # fences in any other language hold code, not calls
_LINE_START_BRACE = re.compile(r"^[ \t]*\{", re.MULTILINE)
_ARGUMENT_KEYS = ("arguments", "parameters")


class TextCall(msgspec.Struct, frozen=True, kw_only=True):
    """One tool call read from a reply's text.

    Attributes:
        name: The tool, one of those offered.
        arguments: Its arguments (a JSON object, not yet validated against the schema).
    """

    name: str
    arguments: dict[str, Any]


class ParsedReply(msgspec.Struct, frozen=True, kw_only=True):
    """What a reply's text holds.

    Attributes:
        calls: The calls to execute, in the order written (empty: a final message).
        rejected: Why call-like pieces of the text were not taken, one line each (at most
            `MAX_CALLS`, then one line counting the rest).
    """

    calls: list[TextCall]
    rejected: list[str]


class _Refused(HarnessWorldError, ValueError):
    """JSON the parser does not accept (duplicate keys, NaN or Infinity)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Refused("duplicate key")
    return out


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def _decode(text: str) -> tuple[bool, Any]:
    """``(True, value)`` for one whole JSON value, else ``(False, None)``."""
    try:
        return True, _DECODER.decode(text)
    except (ValueError, RecursionError):  # malformed, refused, too deep or too long a number
        return False, None


def _decode_at(text: str, start: int) -> tuple[int, Any] | None:
    """The JSON value starting at ``start`` and where it ends, if the rest of its line is blank."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    line_end = text.find("\n", end)
    rest = text[end:] if line_end < 0 else text[end:line_end]
    return (end, value) if not rest.strip() else None


def _blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces (line breaks kept, so positions hold)."""
    out = list(text)
    for start, end in spans:
        for i in range(start, end):
            if out[i] != "\n":
                out[i] = " "
    return "".join(out)


def _tagged(text: str) -> tuple[list[tuple[str, Any]], list[str]]:
    """The ``<tool_call>`` blocks of a reply, decoded (one scan: no block is searched twice)."""
    pieces: list[tuple[str, Any]] = []
    rejected: list[str] = []
    position = number = 0
    while (start := text.find(_TAG_OPEN, position)) >= 0:
        number += 1
        end = text.find(_TAG_CLOSE, start + len(_TAG_OPEN))
        if end < 0:
            rejected.append(f"<tool_call> block {number} has no closing {_TAG_CLOSE}")
            break
        ok, value = _decode(text[start + len(_TAG_OPEN) : end].strip())
        if ok:
            pieces.append(("tagged", value))
        else:
            rejected.append(f"<tool_call> block {number}: not valid JSON")
        position = end + len(_TAG_CLOSE)
    return pieces, rejected


def _pieces(text: str) -> tuple[list[tuple[str, Any]], list[str]]:
    """The decoded JSON pieces of a reply, each with its origin, in text order; and rejections.

    The origin is ``"tagged"`` for a ``<tool_call>`` block (every piece must be a call) or
    ``"loose"`` for a fenced block or a bare object (only call-shaped pieces are calls).
    """
    if _TAG_OPEN in text:
        return _tagged(text)
    found: list[tuple[int, Any]] = []
    fences = list(_FENCED.finditer(text))
    for fence in fences:
        if fence.group(1).lower() not in _CALL_FENCES:
            continue
        ok, value = _decode(fence.group(2).strip())
        if ok:
            found.append((fence.start(), value))
    outside = _blank(text, [fence.span() for fence in fences])
    position, tried = 0, 0
    while tried < MAX_CANDIDATES:
        match = _LINE_START_BRACE.search(outside, position)
        if match is None:
            break
        tried += 1
        start = match.end() - 1
        decoded = _decode_at(outside, start)
        if decoded is None:
            position = match.end()
            continue
        position, value = decoded
        found.append((start, value))
    found.sort(key=lambda item: item[0])
    return [("loose", value) for _, value in found], []


def _call(item: Any, origin: str, tools: frozenset[str]) -> TextCall | str | None:
    """A call, the reason a call-like item is refused, or None for JSON that is not a call."""
    shaped = isinstance(item, dict) and "name" in item and any(k in item for k in _ARGUMENT_KEYS)
    if not shaped:
        return "not a tool call object (name and arguments)" if origin == "tagged" else None
    extra = sorted(set(item) - {"name", *_ARGUMENT_KEYS})
    if extra or all(k in item for k in _ARGUMENT_KEYS):
        return "a call holds only name and arguments" + (f" (not {extra[0]!r})" if extra else "")
    name = item["name"]
    if not isinstance(name, str) or name not in tools:
        return f"unknown tool {str(name)[:60]!r}"
    arguments = item.get("arguments", item.get("parameters"))
    if not isinstance(arguments, dict):
        return f"{name}: arguments must be a JSON object"
    return TextCall(name=name, arguments=arguments)


def parse_tool_calls(text: str, tools: Collection[str]) -> ParsedReply:
    """Read the tool calls a model wrote in its reply (see the module's docstring).

    Args:
        text: The reply's text.
        tools: The names of the tools offered; a call to any other name is rejected.

    Returns:
        The calls in the order written, and why call-like pieces were not taken. Never raises.
    """
    if not isinstance(text, str) or not text:
        return ParsedReply(calls=[], rejected=[])
    if len(text) > MAX_TEXT:
        return ParsedReply(calls=[], rejected=[f"reply over {MAX_TEXT} characters: not read"])
    offered = frozenset(t for t in tools if isinstance(t, str))
    pieces, rejected = _pieces(text)
    calls: list[TextCall] = []
    for origin, value in pieces:
        items = value if isinstance(value, list) else [value]
        for item in items:
            found = _call(item, origin, offered)
            if isinstance(found, str):
                rejected.append(found)
            elif found is not None and len(calls) >= MAX_CALLS:
                rejected.append(f"more than {MAX_CALLS} calls in one reply: {found.name} not run")
            elif found is not None:
                calls.append(found)
    if len(rejected) > MAX_CALLS:  # the note goes back to the model: keep it short
        rejected[MAX_CALLS:] = [f"and {len(rejected) - MAX_CALLS} more not run"]
    return ParsedReply(calls=calls, rejected=rejected)


def tools_prompt(schemas: Sequence[Mapping[str, Any]]) -> str:
    """The system-prompt section that offers the tools and says how to call them in text.

    Args:
        schemas: The tools in the chat-completions shape (``{"type": "function", "function":
            {"name", "description", "parameters"}}``).
    """
    lines = []
    for schema in schemas:
        function = schema.get("function", schema)
        entry = {
            "name": function.get("name"),
            "description": function.get("description", ""),
            "parameters": function.get("parameters", {}),
        }
        lines.append(json.dumps(entry, sort_keys=True))
    return (
        "# Tools\n\n"
        "You can call the tools below. Each line is one tool: its name, what it does, and the "
        "JSON schema of its arguments.\n"
        "<tools>\n" + "\n".join(lines) + "\n</tools>\n\n"
        "To call a tool, write a block like this in your reply (one block per call; several "
        "blocks run in the order written):\n"
        "<tool_call>\n"
        '{"name": "<tool name>", "arguments": {"<argument>": "<value>"}}\n'
        "</tool_call>\n"
        'The results come back in the next user message, one <tool_response name="..."> block '
        "per call, in the same order. A reply without a tool call is your final answer."
    )


def rejection_note(rejected: Sequence[str]) -> str:
    """The note that tells a model which of its written calls were not run, and why."""
    return "Not run: " + "; ".join(rejected) + "."


def _calls_text(calls: Sequence[Mapping[str, Any]]) -> str:
    """Native tool calls written as ``<tool_call>`` blocks (a prefix a fork replays)."""
    blocks = []
    for call in calls:
        function = call.get("function", {})
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (ValueError, RecursionError):
            arguments = function.get("arguments")
        body = json.dumps({"name": function.get("name"), "arguments": arguments}, sort_keys=True)
        blocks.append(f"{_TAG_OPEN}\n{body}\n{_TAG_CLOSE}")
    return "\n".join(blocks)


def _response_block(name: str, content: Any) -> str:
    return f'<tool_response name="{name}">\n{content}\n</tool_response>'


def text_conversation(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A native-shaped conversation as plain text turns, for a model without tool calling.

    Assistant turns keep their text (native tool calls without text are written as
    ``<tool_call>`` blocks); each run of tool results, with any user message right after it
    (the notes on rejected calls), becomes one user message, so roles still alternate.
    """
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    pending: list[str] = []

    def flush() -> None:
        if pending:
            out.append({"role": "user", "content": "\n".join(pending)})
            pending.clear()

    for message in messages:
        role = message.get("role")
        if role == "tool":
            name = names.get(str(message.get("tool_call_id", "")), "")
            pending.append(_response_block(name, message.get("content", "")))
            continue
        if role == "user" and pending:
            pending.append(str(message.get("content", "")))
            continue
        flush()
        if role == "assistant":
            calls = message.get("tool_calls") or []
            for call in calls:
                names[str(call.get("id", ""))] = str(call.get("function", {}).get("name", ""))
            text = message.get("content") or _calls_text(calls)
            out.append({"role": "assistant", "content": text})
        else:
            out.append(dict(message))
    flush()
    return out
