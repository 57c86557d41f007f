"""Issue 13's bridge bullet: every reply to a line carries ok and seq; blank lines answered;
``tool`` with ``finish`` is a bad request; ``finish`` must be a string; out-of-range numbers named;
the result line explains failures and lists prose criteria not reviewed."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

import harness_world as hw
from harness_world.running.bridge import RecordNotSaved, serve
from tests.trust._helpers import tasks


def _play(small: hw.World, tmp_path: Path, lines: list[str], task_id: str) -> list[dict[str, Any]]:
    out = io.StringIO()
    attempt = hw.Attempt(small, tasks(task_id)[0])
    serve(attempt, io.StringIO("\n".join(lines) + "\n"), out, tmp_path / "r.json")
    return [json.loads(line) for line in out.getvalue().splitlines()[1:]]


def test_every_reply_carries_ok_and_seq(small: hw.World, tmp_path: Path) -> None:
    lines = [
        "",
        "not json",
        "[1]",
        '{"tool": "get_ticket", "args": {"ticket_id": "T-1001"}, "finish": "both"}',
        '{"finish": null}',
        '{"finish": 3}',
        '{"nothing": 1}',
        '{"tool": "list_tickets", "args": {"limit": 1e400}}',
        '{"tool": "list_tickets", "args": {"limit": 5, "offset": 1000000000000000000000000000000}}',
        '{"tool": "get_ticket", "args": {"ticket_id": "T-1001"}}',
        '{"finish": "There are 15 tickets tagged security."}',
    ]
    replies = _play(small, tmp_path, lines, "helpdesk.security_count")
    assert len(replies) == len(lines)
    assert all("ok" in r and "seq" in r for r in replies), replies
    bad = [r for r in replies[:7]]
    assert all(r["ok"] is False and r["seq"] is None for r in bad)
    assert all(r["error"]["kind"] == "bad_request" for r in bad)
    assert "empty line" in bad[0]["error"]["message"]
    assert "not both" in bad[3]["error"]["message"]
    assert "must be a string" in bad[4]["error"]["message"]
    assert "must be a string" in bad[5]["error"]["message"]
    assert replies[7]["seq"] == 1 and "out of range" in replies[7]["error"]["message"]
    assert replies[8]["seq"] == 2 and "out of range" in replies[8]["error"]["message"]
    assert replies[9] == {**replies[9], "ok": True, "seq": 3}
    assert hw.load_record(tmp_path / "r.json").final_message.startswith("There are 15")


def test_the_result_line_explains_failures(small: hw.World, tmp_path: Path) -> None:
    replies = _play(small, tmp_path, ['{"finish": "Done."}'], "helpdesk.reply_and_solve")
    result = replies[-1]
    assert result["ok"] is True and result["seq"] is None and result["grade"] == "failed"
    assert result["reasons"] and len(result["reasons"]) == len(result["failed"])
    for reason, criterion in zip(result["reasons"], result["failed"], strict=True):
        assert reason.startswith(criterion + ": ") and len(reason) <= 120
    prose = tasks("helpdesk.reply_and_solve")[0].prose
    assert prose and len(result["not_reviewed"]) == len(prose)


def test_a_record_that_cannot_be_saved_is_one_typed_error_and_no_result_line(
    small: hw.World, tmp_path: Path
) -> None:
    out = io.StringIO()
    attempt = hw.Attempt(small, tasks("helpdesk.security_count")[0])
    with pytest.raises(RecordNotSaved, match=re.escape(str(tmp_path))) as raised:
        serve(attempt, io.StringIO('{"finish": "x"}\n'), out, tmp_path)  # a folder: not writable
    assert isinstance(raised.value, hw.HarnessWorldError) and raised.value.path == tmp_path
    assert all("outcome" not in json.loads(line) for line in out.getvalue().splitlines())
