"""The MCP answers the docs show are the server's own: each documented exchange is replayed
against a real stdio server with the SDK's client and compared byte for byte."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, requires

pytestmark = [pytest.mark.integrations, requires("mcp", "the MCP server needs the [mcp] extra")]
anyio = pytest.importorskip("anyio", reason="the MCP server needs the [mcp] extra")

MARKER = "<!-- mcp-answers:"
SERVED = ["--world", "helpdesk", "--task", "helpdesk.reply_and_solve", "--record", "out.json"]
_BLOCK = re.compile(re.escape(MARKER) + r"[^\n]*\n```text\n(.*?)```", re.S)
_CALL = re.compile(r"→ (\w+) (\{.*\})")
_FLAG = re.compile(r"← isError (true|false)")


def documented() -> list[tuple[str, str]]:
    """Every documented exchange: (where, block text), README's and the docs' pages."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return [
        (page.name, block)
        for page in pages
        for block in _BLOCK.findall(page.read_text(encoding="utf-8"))
    ]


def exchanges(block: str) -> list[tuple[str, dict[str, Any], bool, str]]:
    """(tool, arguments, isError, answer text) per call of a block; a malformed block fails."""
    lines = block.strip("\n").split("\n")
    assert len(lines) % 3 == 0, block
    out = []
    for call, flag, text in zip(lines[::3], lines[1::3], lines[2::3], strict=True):
        named, said = _CALL.fullmatch(call), _FLAG.fullmatch(flag)
        assert named is not None and said is not None, (call, flag)
        out.append((named[1], json.loads(named[2]), said[1] == "true", text))
    return out


def test_the_readme_and_the_docs_each_show_the_answer_shape() -> None:
    where = {name for name, _ in documented()}
    assert "README.md" in where and where - {"README.md"}, where


@pytest.mark.parametrize(("page", "block"), documented(), ids=lambda v: str(v)[:20])
def test_a_documented_exchange_is_what_the_server_answers(
    page: str, block: str, tmp_path: Path
) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "harness_world", "mcp", *SERVED],
        env={"PYTHONPATH": str(REPO)},
        cwd=str(tmp_path),  # so the record is `out.json`, as the page shows it
    )
    calls = exchanges(block)

    async def session() -> list[tuple[bool, str, Any]]:
        async with Client(params) as client:
            answers = []
            for tool, arguments, _, _ in calls:
                result = await client.call_tool(tool, arguments)
                answers.append((result.is_error, result.content[0].text, result.structured_content))
            return answers

    for (tool, _, is_error, text), (got_error, got_text, structured) in zip(
        calls, anyio.run(session), strict=True
    ):
        assert (got_error, got_text) == (is_error, text), f"{page}: {tool}"
        assert structured == json.loads(text)
