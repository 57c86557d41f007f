"""The MCP server answers every request, checks its output paths first, and serves HTTP only to
the holder of its token, announced once the socket listens."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import harness_world as hw
from tests.conftest import requires

if TYPE_CHECKING:
    import httpx

pytestmark = [pytest.mark.integrations, requires("mcp", "the MCP server needs the [mcp] extra")]
# Loaded already by its pytest plugin wherever the extra is installed, so free to import here.
anyio = pytest.importorskip("anyio", reason="the MCP server needs the [mcp] extra")

ROOT = Path(__file__).resolve().parents[2]
TASK = "helpdesk.reply_and_solve"
MCP = [sys.executable, "-m", "harness_world", "mcp", "--world", "helpdesk", "--task", TASK]
ENV = {"PYTHONPATH": str(ROOT)}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def _read_line(proc: subprocess.Popen[str], timeout: float = 20.0) -> str:
    """One line of the server's stdout, or fail after ``timeout`` (never hang the suite)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no JSON-RPC reply within {timeout} s"
    return proc.stdout.readline()


class _Stdio:
    """A raw JSON-RPC session with ``mcp`` over stdio, one line each way."""

    def __init__(self, record: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [*MCP, "--record", str(record), *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=ENV,
            cwd=ROOT,
            text=True,
            bufsize=1,
        )
        assert json.loads(self.ask(json.dumps(INITIALIZE)))["id"] == 1
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def ask(self, line: str) -> str:
        self.send(line)
        return _read_line(self.proc)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def _deep_call(request_id: int, depth: int) -> str:
    nested = "[" * depth + "]" * depth
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":'
        f'{{"name":"get_ticket","arguments":{{"ticket_id":{nested}}}}}}}'
    )


@pytest.mark.parametrize("depth", [200, 1_000, 100_000])
def test_a_request_nested_too_deep_gets_a_json_rpc_error_with_its_id(
    tmp_path: Path, depth: int
) -> None:
    from mcp import types

    session = _Stdio(tmp_path / "r.json")
    try:
        reply = json.loads(session.ask(_deep_call(2, depth)))
        assert reply["id"] == 2 and reply["error"]["code"] == types.INVALID_PARAMS
        assert reply["error"]["data"]["kind"] == "invalid_arguments"
        assert "nested deeper than" in reply["error"]["message"]
        # the server goes on: the next request is answered as usual
        follow = json.loads(session.ask(_deep_call(3, 2)))
        assert follow["id"] == 3 and follow["result"]["isError"] is True
    finally:
        session.close()
    record = hw.load_record(tmp_path / "r.json")
    assert len(record.calls) == 1  # the refused request never reached the world


def test_requests_the_sdk_would_drop_are_answered(tmp_path: Path) -> None:
    """Not JSON, a cut-off line, an object that is no JSON-RPC message: each gets an error."""
    from mcp import types

    session = _Stdio(tmp_path / "r.json")
    try:
        garbage = json.loads(session.ask("not json"))
        assert garbage["id"] is None and garbage["error"]["code"] == types.PARSE_ERROR
        cut = json.loads(session.ask(_deep_call(4, 1)[:-3]))
        assert cut["id"] is None and cut["error"]["code"] == types.PARSE_ERROR
        invalid = json.loads(session.ask('{"jsonrpc":"2.0","id":5}'))
        assert invalid["id"] == 5 and invalid["error"]["code"] == types.INVALID_REQUEST
        listed = json.loads(session.ask('{"jsonrpc":"2.0","id":6,"method":"tools/list"}'))
        assert listed["id"] == 6 and "tools" in listed["result"]
    finally:
        session.close()


def test_tool_arguments_nested_150_deep_are_still_a_recorded_tool_error(tmp_path: Path) -> None:
    session = _Stdio(tmp_path / "r.json")
    try:
        reply = json.loads(session.ask(_deep_call(2, 150)))
    finally:
        session.close()
    content = reply["result"]["structuredContent"]
    assert reply["id"] == 2 and content["error"]["kind"] == "invalid_arguments"
    assert content["seq"] == 1


def test_the_message_depth_limit_is_within_what_the_sdk_parses() -> None:
    """The gate must refuse a request before the SDK's parser would drop it in silence."""
    from mcp import types

    from harness_world.engine.limits import MCP_MESSAGE_DEPTH

    deepest = _deep_call(2, MCP_MESSAGE_DEPTH - 3)  # object, params, arguments: three levels
    types.jsonrpc_message_adapter.validate_json(deepest, by_name=False)


# -- --record and --out are checked before serving ----------------------------------------------


def _refused(tmp_path: Path, *args: str) -> str:
    done = subprocess.run(
        [*MCP, *args],
        check=False,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=ENV,
        cwd=ROOT,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_a_record_path_that_is_a_folder_is_refused_before_serving(tmp_path: Path) -> None:
    line = _refused(tmp_path, "--record", str(tmp_path))
    assert line == f"error: --record {tmp_path}: is a folder, not a file"


def test_a_record_path_under_a_file_is_refused_before_serving(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    line = _refused(tmp_path, "--record", str(tmp_path / "plain" / "r.json"))
    assert line.startswith(f"error: --record {tmp_path / 'plain' / 'r.json'}: cannot write there")


def test_an_existing_record_is_refused_without_force_and_replaced_with_it(tmp_path: Path) -> None:
    earlier = tmp_path / "r.json"
    earlier.write_text("an earlier attempt's record")
    line = _refused(tmp_path, "--record", str(earlier))
    assert line == f"error: --record {earlier}: a file exists there: give --force to overwrite it"
    assert earlier.read_text() == "an earlier attempt's record"
    session = _Stdio(earlier, "--force")
    try:
        call = {"name": "get_ticket", "arguments": {"ticket_id": "T-1001"}}
        session.ask(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
    finally:
        session.close()
    assert hw.load_record(earlier).outcome.status == "interrupted"


def test_an_out_path_that_is_a_file_is_refused_naming_the_option(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    line = _refused(tmp_path, "--samples", "2", "--out", str(tmp_path / "plain"))
    assert line == f"error: --out {tmp_path / 'plain'}: is a file, not a folder"
    line = _refused(tmp_path, "--samples", "2", "--out", str(tmp_path / "plain" / "run"))
    assert line.startswith(f"error: --out {tmp_path / 'plain' / 'run'}: cannot write there")
    assert (tmp_path / "plain").read_text() == "x"


# -- HTTP: announced once listening, one token per attempt --------------------------------------

_ANNOUNCE_SCRIPT = """
import socket, sys
import anyio
import harness_world as hw
from harness_world.integrations.mcp import AttemptServer, AttemptTarget, serve_http

task = {t.id: t for t in hw.load_tasks()}[sys.argv[1]]
state = AttemptServer(
    world=hw.load_world("helpdesk"), task=task,
    targets=[AttemptTarget(sample=0, seed=0, path=sys.argv[2])],
)

def ready(url):
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        print("connected", flush=True)
    except OSError as exc:
        print(f"refused: {exc}", flush=True)

anyio.run(lambda: serve_http(state, 0, ready, token="t"))
"""


def test_the_url_is_announced_only_once_the_socket_listens(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _ANNOUNCE_SCRIPT, TASK, str(tmp_path / "r.json")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        cwd=ROOT,
        text=True,
    )
    try:
        assert _read_line(proc).strip() == "connected"
    finally:
        _stop(proc)


def _http_server(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    proc = subprocess.Popen(
        [*MCP, "--transport", "http", "--record", str(tmp_path / "r.json"), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=ENV,
        cwd=ROOT,
        text=True,
    )
    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], 30)
    assert ready, "the server announced nothing"
    line = proc.stderr.readline()
    try:
        return proc, json.loads(line)
    except ValueError:
        _stop(proc)
        pytest.fail(f"not the announcement: {line!r}")


def _stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.stderr.read() if proc.stderr is not None else ""


def _post(url: str, headers: dict[str, str]) -> httpx.Response:
    import httpx

    return httpx.post(
        url,
        json=INITIALIZE,
        headers={"Accept": "application/json, text/event-stream", **headers},
        timeout=10,
    )


async def _tool_calls(
    url: str, token: str | None, calls: list[tuple[str, dict[str, Any]]]
) -> list[Any]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = None if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return [await client.call_tool(name, args) for name, args in calls]


def test_http_serves_only_the_holder_of_the_token(tmp_path: Path) -> None:
    proc, announced = _http_server(tmp_path, "--port", "0")
    try:
        url, token = announced["url"], announced["token"]
        assert len(token) >= 32

        async def holder() -> tuple[Any, Any]:
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            headers = {"Authorization": f"Bearer {token}"}
            async with (
                create_mcp_http_client(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                # no connection is attempted before the announcement, and the first is served
                first = await client.call_tool("get_ticket", {"ticket_id": "T-1001"})
                # while the holder's session has the attempt, requests without its token get 401
                for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
                    refused = _post(url, headers)
                    assert refused.status_code == 401, (headers, refused.text)
                    assert refused.headers["www-authenticate"].startswith("Bearer")
                with pytest.raises(Exception):  # another local client cannot end the attempt
                    await _tool_calls(url, None, [("finish", {"message": "hijacked"})])
                return first, await client.call_tool("finish", {"message": "mine"})

        first, done = anyio.run(holder)
        assert not first.is_error and not done.is_error
    finally:
        err = _stop(proc)
    assert token not in err  # printed once, in the announcement
    record = hw.load_record(tmp_path / "r.json")
    assert record.outcome.status == "completed" and record.final_message == "mine"
    assert [c.tool for c in record.calls] == ["get_ticket"]


def test_http_token_given_with_the_option(tmp_path: Path) -> None:
    proc, announced = _http_server(tmp_path, "--token", "a-token-of-my-own-choosing")
    try:
        assert "token" not in announced and announced["auth"] == "bearer"
        assert _post(announced["url"], {}).status_code == 401
        calls = [("get_ticket", {"ticket_id": "T-1001"})]
        answers = anyio.run(_tool_calls, announced["url"], "a-token-of-my-own-choosing", calls)
        assert not answers[0].is_error
    finally:
        err = _stop(proc)
    assert "a-token-of-my-own-choosing" not in err


def test_http_without_auth_only_when_asked_and_it_says_so(tmp_path: Path) -> None:
    proc, announced = _http_server(tmp_path, "--no-auth")
    try:
        assert announced["auth"] == "none" and "token" not in announced
        assert proc.stderr is not None
        warning = proc.stderr.readline()
        assert warning.startswith("warning: --no-auth") and "any local process" in warning
        calls = [("get_ticket", {"ticket_id": "T-1001"})]
        assert not anyio.run(_tool_calls, announced["url"], None, calls)[0].is_error
    finally:
        _stop(proc)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--token", "x", "--no-auth"], "--token and --no-auth"),
        (
            ["--transport", "stdio", "--token", "abc"],
            "--token and --no-auth are for --transport http",
        ),
        (["--transport", "http", "--token", "two words"], "--token"),
    ],
)
def test_token_options_are_checked(tmp_path: Path, args: list[str], message: str) -> None:
    if "--transport" not in args:
        args = ["--transport", "http", *args]
    line = _refused(tmp_path, "--record", str(tmp_path / "r.json"), *args)
    assert message in line


def test_the_help_says_one_attempt_per_token(capsys: pytest.CaptureFixture[str]) -> None:
    from harness_world.cli import main

    with pytest.raises(SystemExit):
        main(["mcp", "--help"])
    text = " ".join(capsys.readouterr().out.split()).lower()
    assert "one attempt per token" in text and "--no-auth" in text
