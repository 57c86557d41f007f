"""Hole 6 of issue 11: hostile input ends one call as a typed error or one record as ``lost``.

Never a traceback, never a lost batch: ``verify``, ``report`` and ``compare`` report each bad
record and go on; tool calls with arguments past the limits get ``invalid_arguments``.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import shutil
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.cli import main
from harness_world.evidence.record import RecordError, decode_record, make_record
from harness_world.running.rundir import record_path
from tests.conftest import Cli, examples
from tests.trust._helpers import oracle_run, tasks


@pytest.fixture(scope="module")
def good(small: hw.World) -> hw.Record:
    session = small.open_session()
    session.call("get_ticket", {"ticket_id": "T-1001"})
    return make_record(session, outcome=hw.Outcome(status="completed"))


def _plain(record: hw.Record) -> dict:  # type: ignore[type-arg]
    return msgspec.to_builtins(record)  # type: ignore[no-any-return]


def _deep(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def _deep_json(depth: int) -> bytes:
    return b"[" * depth + b"1" + b"]" * depth


def hostile_files(good: hw.Record) -> dict[str, bytes]:
    """One file per hostile shape, each a record a verifier must not accept."""
    base = _plain(good)
    text = json.dumps(base).encode()
    packed = msgspec.msgpack.encode(base)
    files: dict[str, bytes] = {}
    files["deep.json"] = text.replace(b'"args": {', b'"args": {"x": ' + _deep_json(5000) + b", ", 1)
    files["deep-final.json"] = text.replace(
        b'"final_message": ""', b'"final_message": ' + _deep_json(100_000), 1
    )
    files["surrogate.json"] = text.replace(b'"final_message": ""', b'"final_message": "\\udc80"', 1)
    files["surrogate-key.json"] = text.replace(b'"args": {', b'"args": {"\\ud800": 1, ', 1)
    files["duplicate-key.json"] = text.replace(
        b'"outcome": {', b'"outcome": {"status": "error", ', 1
    )
    files["trailing.json"] = text + b"{}"
    files["nan.json"] = text.replace(b'"seed": 0', b'"seed": NaN', 1)
    files["huge-int.json"] = text.replace(b'"seed": 0', b'"seed": ' + str(10**30).encode(), 1)
    files["wrong-type.json"] = text.replace(b'"seed": 0', b'"seed": "0"', 1)
    files["not-object.json"] = b"[1, 2, 3]"
    files["empty.json"] = b""
    files["binary.json"] = bytes(range(256))
    ext = dict(base, final_message=msgspec.msgpack.Ext(1, b"xx"))
    files["ext.msgpack"] = msgspec.msgpack.encode(ext)
    stamp = dict(base, final_message=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC))
    files["timestamp.msgpack"] = msgspec.msgpack.encode(stamp)
    files["int-key.msgpack"] = msgspec.msgpack.encode(dict(base, usage={1: 2}))
    files["trailing.msgpack"] = packed + b"\x00"
    # One more entry (a repeated key) in the same map: rewrite the map header's count.
    if 0x80 <= packed[0] <= 0x8F:  # fixmap
        count, body = packed[0] - 0x80, packed[1:]
    else:  # map16
        assert packed[0] == 0xDE
        count, body = int.from_bytes(packed[1:3], "big"), packed[3:]
    header = (
        bytes([0x80 + count + 1]) if count + 1 < 16 else b"\xde" + (count + 1).to_bytes(2, "big")
    )
    files["duplicate.msgpack"] = header + body + b"\xa4seed\x00"
    files["deep.msgpack"] = b"\x91" * 5000 + b"\x01"
    return files


def test_each_hostile_record_is_lost_in_verify(good: hw.Record, tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    for name, blob in hostile_files(good).items():
        (folder / name).write_bytes(blob)
    hw.save_record(good, folder / "zz-good.json")
    code, out, _ = cli("verify", "--json", str(folder))
    rows = {Path(r["path"]).name: r for r in json.loads(out)["records"]}
    assert code == 1 and len(rows) == len(hostile_files(good)) + 1
    assert rows.pop("zz-good.json")["evidence"] == "verified"
    for name, row in rows.items():
        assert row["evidence"] == "lost", (name, row)
        assert row["first_problem"], name


def test_json_and_msgpack_mean_the_same_record(good: hw.Record) -> None:
    """A msgpack timestamp in place of a string is refused, not read as something else."""
    stamp = dict(_plain(good), final_message=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC))
    with pytest.raises(RecordError, match="datetime"):
        decode_record(msgspec.msgpack.encode(stamp), "msgpack")
    saved = msgspec.msgpack.Encoder(order="sorted").encode(good)
    assert decode_record(saved, "msgpack") == decode_record(msgspec.json.encode(good), "json")


def test_hostile_records_in_a_run_directory_end_their_slot_only(
    good: hw.Record, tmp_path: Path, cli: Cli
) -> None:
    run = oracle_run(tmp_path / "run")
    twin = tmp_path / "twin"
    shutil.copytree(run, twin)
    (task,) = tasks("helpdesk.security_count")
    record_path(twin, task.id, 0).write_bytes(hostile_files(good)["deep.json"])
    code, out, _ = cli("report", "--json", str(twin))
    assert code in (0, 1) and json.loads(out)
    code, out, _ = cli("verify", "--json", str(twin))
    rows = {r["task"]: r for r in json.loads(out)["records"]}
    assert code == 1 and rows[task.id]["evidence"] == "lost"
    assert rows["helpdesk.reply_and_solve"]["evidence"] == "verified"
    code, _, err = cli("compare", str(run), str(twin))
    assert "Traceback" not in err and code in (0, 1, 2)


def test_arguments_past_the_limits_are_typed_errors(small: hw.World, tmp_path: Path) -> None:
    session = small.open_session()
    cases = [
        {"x": _deep(5000)},
        {"limit": 5, "offset": 10**30},
        {"limit": float("inf")},
        {"ticket_id": "T-1001\udc80"},
        {"\udc80": 1},
        {1: 2},
        {"limit": 2**53 + 1},
    ]
    for args in cases:
        observation = session.call("list_tickets", args)
        assert not observation.ok and observation.error is not None
        assert observation.error.kind == "invalid_arguments", args
    assert session.call("\udc80", {}).error.kind == "unknown_tool"  # type: ignore[union-attr]
    attempt = hw.Attempt(small, tasks("helpdesk.security_count")[0])
    attempt.call("list_tickets", {"limit": 5, "offset": 10**30})
    record = attempt.finish("final \udc80 message")
    for suffix in ("json", "msgpack"):
        path = hw.save_record(record, tmp_path / f"r.{suffix}")
        assert hw.verify(hw.load_record(path), world=small).evidence == "verified"
    sealed = make_record(session, outcome=hw.Outcome(status="completed"))
    assert hw.verify(sealed, world=small).evidence == "verified"


def test_play_survives_surrogates_and_deep_lines(small: hw.World, tmp_path: Path) -> None:
    from harness_world.running.bridge import serve

    lines = [
        '{"tool": "\\udc80", "args": {}}',
        '{"tool": "list_tickets", "args": {"x": ' + _deep_json(5000).decode() + "}}",
        '{"tool": "list_tickets", "args": ' + _deep_json(100_000).decode() + "}",
        '{"tool": "list_tickets", "args": {"limit": 1e400}}',
        '{"finish": "done \\udc80"}',
    ]
    out = io.StringIO()
    attempt = hw.Attempt(small, tasks("helpdesk.security_count")[0])
    serve(attempt, io.StringIO("\n".join(lines) + "\n"), out, tmp_path / "p.json")
    replies = [json.loads(line) for line in out.getvalue().splitlines()[1:]]
    assert all("ok" in r and "seq" in r for r in replies)
    assert replies[-1]["evidence"] == "verified"
    assert "out of range" in replies[3]["error"]["message"]
    assert hw.load_record(tmp_path / "p.json").final_message == "done \\udc80"


def test_a_model_sending_a_surrogate_does_not_end_the_run(tmp_path: Path) -> None:
    def shout(ctx: object) -> str:
        ctx.call("\udc80", {"a": "\udc80"})  # type: ignore[attr-defined]
        return "answer \udc80"

    agent = hw.ScriptedAgent(name="s", scripts={"helpdesk.security_count": shout})
    result = hw.run(tasks("helpdesk.security_count"), agent, out=tmp_path / "r")
    assert result.counts.executed == 1 and result.counts.valid == 1


def test_report_refuses_an_absurd_manifest_quickly(tmp_path: Path, cli: Cli) -> None:
    run = oracle_run(tmp_path / "run")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["samples"] = 10**12
    (run / "manifest.json").write_text(json.dumps(manifest))
    started = time.monotonic()
    code, _, err = cli("report", str(run))
    assert code == 2 and err.startswith("error:") and time.monotonic() - started < 10


def test_compare_refuses_a_fifo(tmp_path: Path, cli: Cli) -> None:
    fifo = tmp_path / "results.csv"
    os.mkfifo(fifo)
    code, _, err = cli("compare", str(fifo), "--baseline", "a", "--candidate", "b")
    assert code == 2 and "not a regular file" in err
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "manifest.json")
    code, _, err = cli("report", str(run))
    assert code == 2 and "regular file" in err


_MUTATIONS = st.sampled_from(
    ["truncate", "flip", "insert-deep", "insert-surrogate", "dup-key", "trailing", "type", "huge"]
)


@pytest.fixture(scope="module")
def twin_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fuzz-runs")
    run = oracle_run(root / "run")
    shutil.copytree(run, root / "twin")
    return run, root / "twin"


@settings(
    max_examples=examples(16, 1000),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(kind=_MUTATIONS, at=st.floats(0, 1), depth=st.integers(1000, 20_000))
def test_fuzz_hostile_records_never_crash_a_command(
    good: hw.Record,
    twin_runs: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    at: float,
    depth: int,
) -> None:
    """Fuzz: a mutated record goes through verify, report and compare: never a traceback,
    each bad record reported, the other records of the batch unaffected."""
    blob = json.dumps(_plain(good)).encode()
    cut = int(len(blob) * at)
    if kind == "truncate":
        blob = blob[: min(cut, len(blob) - 1)]
    elif kind == "flip":
        blob = (
            blob[: min(cut, len(blob) - 1)]
            + bytes([blob[cut % len(blob)] ^ 0x5A])
            + blob[cut + 1 :]
        )
    elif kind == "insert-deep":
        blob = blob.replace(b'"args": {', b'"args": {"d": ' + _deep_json(depth) + b", ", 1)
    elif kind == "insert-surrogate":
        blob = blob.replace(b'"tool": "', b'"tool": "\\udfff', 1)
    elif kind == "dup-key":
        blob = blob.replace(b'"seed": 0', b'"seed": 0, "seed": 0', 1)
    elif kind == "trailing":
        blob = blob + b" x"
    elif kind == "huge":
        blob = blob.replace(b'"final_message": ""', b'"final_message": "' + b"x" * 1_000_001 + b'"')
    else:
        blob = blob.replace(b'"calls": [', b'"calls": [7, ', 1)
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "r.json").write_bytes(blob)
    code = main(["verify", "--json", str(folder / "r.json")])
    assert code in (0, 1)
    if kind != "flip":
        assert code == 1
    run, twin = twin_runs
    slot = record_path(twin, "helpdesk.security_count", 0)
    saved = slot.read_bytes()
    slot.write_bytes(blob)
    try:
        capsys.readouterr()
        assert main(["verify", "--json", str(twin)]) == 1  # a foreign record in the slot
        rows = {r["task"]: r for r in json.loads(capsys.readouterr().out)["records"]}
        assert rows["helpdesk.reply_and_solve"]["evidence"] == "verified"
        assert rows["helpdesk.security_count"]["evidence"] != "verified"
        assert main(["report", "--json", str(twin)]) == 0
        assert json.loads(capsys.readouterr().out)["counts"]["valid"] == 1
        assert main(["compare", str(run), str(twin)]) in (0, 1, 2)
        assert "Traceback" not in capsys.readouterr().err
    finally:
        slot.write_bytes(saved)


def _nested(depth: int) -> list[object]:
    root: list[object] = []
    inner = root
    for _ in range(depth):
        deeper: list[object] = []
        inner.append(deeper)
        inner = deeper
    return root


@pytest.mark.parametrize(
    "args",
    [
        {"a": _nested(100_000)},  # past the encoder's depth: RecursionError
        {"a": {1, 2}},  # not JSON: sets never come out of a decoder
        {"a": 2**80},  # past any JSON reader's integers
    ],
    ids=["deep", "set", "huge-int"],
)
def test_a_hostile_in_memory_record_is_ungraded_never_a_crash(
    good: hw.Record, small: hw.World, args: dict[str, object]
) -> None:
    """`hw.verify` on a record built in memory (never held to the file limits)."""
    first = msgspec.structs.replace(good.calls[0], args=args)
    forged = msgspec.structs.replace(good, calls=[first, *good.calls[1:]])
    result = hw.verify(forged, world=small)
    assert result.evidence == "ungraded"
    assert result.grade is None
