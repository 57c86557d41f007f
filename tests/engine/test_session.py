"""Sessions and tools: isolation, determinism, absent vs null, errors, pagination, diff."""

from __future__ import annotations

import os
import subprocess
import sys

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.engine import ABSENT, WriteImage
from tests import strategies as hs
from tests.conftest import REPO, examples

LOG_SCRIPT = """
import hashlib, random, msgspec, harness_world as hw
from tests import strategies
world = hw.load_world('helpdesk')
rng = random.Random(11)
s = world.open_session(seed=3)
for i in range(60):
    tid = f"T-{rng.randint(1000, 1700)}"
    choice = rng.randint(0, 5)
    if choice == 0: s.call('get_ticket', {'ticket_id': tid})
    elif choice == 1:
        s.call('update_ticket', {'ticket_id': tid, 'status': rng.choice(strategies.STATUSES)})
    elif choice == 2: s.call('add_comment', {'ticket_id': tid, 'body': 'note', 'public': False})
    elif choice == 3: s.call('create_ticket', {'subject': 's', 'requester_id': 'U-0050'})
    elif choice == 4: s.call('list_tickets', {'status': 'open', 'offset': rng.randint(0, 200)})
    else: s.call('assign_ticket', {'ticket_id': tid, 'owner_id': None})
print(hashlib.sha256(msgspec.json.encode(list(s.log), order='sorted')).hexdigest())
"""


def run(session: hw.Session, calls: list[tuple[str, dict[str, object]]]) -> None:
    for tool, args in calls:
        session.call(tool, args)


def log_bytes(session: hw.Session) -> bytes:
    return msgspec.json.encode(list(session.log), order="sorted")


@given(hs.call_sequences)
def test_sessions_never_change_the_world_or_each_other(
    small: hw.World, calls: list[tuple[str, dict[str, object]]]
) -> None:
    before_hash = small.hash
    other = small.open_session()
    other.call("update_ticket", {"ticket_id": "T-1001", "priority": "urgent"})
    other_view = other.get("tickets", "T-1001")
    session = small.open_session()
    run(session, calls)
    assert small.hash == before_hash
    assert (
        hw.World.from_data(small.contract, {e: list(small.rows(e)) for e in small.entities()}).hash
        == before_hash
    )
    assert other.get("tickets", "T-1001") == other_view
    assert small.open_session().diff() == []


@given(hs.call_sequences)
def test_same_calls_give_byte_identical_logs(
    small: hw.World, calls: list[tuple[str, dict[str, object]]]
) -> None:
    a, b = small.open_session(seed=1), small.open_session(seed=1)
    run(a, calls)
    run(b, calls)
    assert log_bytes(a) == log_bytes(b)
    assert a.diff() == b.diff()


def test_logs_are_byte_identical_across_processes_and_hash_seeds() -> None:
    digests = set()
    for seed in ("0", "123", "98765"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        out = subprocess.run(
            [sys.executable, "-c", LOG_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1


@given(hs.call_sequences)
def test_editing_returned_values_changes_nothing(
    small: hw.World, calls: list[tuple[str, dict[str, object]]]
) -> None:
    session = small.open_session()
    for tool, args in calls:
        obs = session.call(tool, args)
        snapshot = log_bytes(session)
        state = session.diff()
        if isinstance(obs.result, dict):
            obs.result.clear()
            obs.result["owned"] = True
        args.clear()
        for image in state:
            if image.after is not None:
                image.after["status"] = "tampered"
        assert log_bytes(session) == snapshot
        assert session.diff() == [img for img in session.diff()]
        assert all(
            img.after is None or img.after.get("status") != "tampered" for img in session.diff()
        )


def test_absent_and_null_survive_read_write_diff_and_serialization(small: hw.World) -> None:
    absent_key = small.lookup("tickets", "owner_id", ABSENT)[0]
    null_key = small.lookup("tickets", "owner_id", None)[0]
    session = small.open_session()
    absent_row = session.call("get_ticket", {"ticket_id": absent_key}).result
    null_row = session.call("get_ticket", {"ticket_id": null_key}).result
    assert "owner_id" not in absent_row and null_row["owner_id"] is None
    session.call("update_ticket", {"ticket_id": absent_key, "priority": "urgent"})
    session.call("update_ticket", {"ticket_id": null_key, "priority": "urgent"})
    changes = {c.key: c for c in session.diff()}
    assert (
        "owner_id" not in changes[absent_key].after and "owner_id" not in changes[absent_key].before
    )
    assert changes[null_key].after["owner_id"] is None
    decoded = msgspec.json.decode(msgspec.json.encode(session.diff()), type=list[WriteImage])
    assert decoded == session.diff()
    assert (
        len(session.call("list_tickets", {"owner_missing": True, "limit": 100}).result["tickets"])
        == 19
    )
    assert session.call("list_tickets", {"owner_id": None, "limit": 100}).result["total"] == 22
    # assigning then unassigning turns absent into null: a real change, visible in the diff
    session.call("assign_ticket", {"ticket_id": absent_key, "owner_id": None})
    assert {c.key: c for c in session.diff()}[absent_key].after["owner_id"] is None
    assert session.call("list_tickets", {"owner_missing": True, "limit": 100}).result["total"] == 18


def test_diff_omits_keys_restored_to_their_start(small: hw.World) -> None:
    session = small.open_session()
    start = small.get("tickets", "T-1003")
    assert start is not None
    session.call(
        "update_ticket",
        {"ticket_id": "T-1003", "priority": "urgent" if start["priority"] != "urgent" else "low"},
    )
    session.call("update_ticket", {"ticket_id": "T-1003", "priority": start["priority"]})
    assert [c.key for c in session.diff()] == ["T-1003"]  # updated_at moved on: a real change
    assert len(session.log[0].writes) == 1 and session.log[1].clock_after == 2


def test_logical_clock_and_ids_are_deterministic(small: hw.World) -> None:
    session = small.open_session(seed=99)
    first = session.call("create_ticket", {"subject": "a", "requester_id": "U-0050"}).result
    second = session.call(
        "add_comment", {"ticket_id": first["id"], "body": "b", "public": True}
    ).result
    assert first["id"] == "T-N1" and first["created_at"] == "2026-01-01T00:00:01Z"
    assert second["id"] == "C-N1" and second["created_at"] == "2026-01-01T00:00:02Z"
    assert session.clock == 3  # ticket, comment, ticket touched again
    assert (
        session.call("list_tickets", {"status": "new", "limit": 100, "offset": 0}).result["total"]
        == len(small.lookup("tickets", "status", "new") or ()) + 1
    )


def test_failed_call_rolls_back_every_write(small: hw.World) -> None:
    session = small.open_session()
    closed = small.lookup("tickets", "status", "closed")[0]
    obs = session.call("add_comment", {"ticket_id": closed, "body": "x", "public": True})
    assert not obs.ok and obs.error.kind == "conflict"
    assert session.diff() == [] and session.clock == 0 and session.log[0].writes == []
    nxt = session.call("create_ticket", {"subject": "s", "requester_id": "U-0050"}).result
    assert nxt["id"] == "T-N1"


def test_typed_errors_name_the_field(small: hw.World) -> None:
    session = small.open_session()
    cases = [
        ("get_ticket", {"ticket_id": 5}, "invalid_arguments", "$.ticket_id"),
        ("get_ticket", {}, "invalid_arguments", "ticket_id"),
        ("get_ticket", {"ticket_id": "T-1", "x": 1}, "invalid_arguments", "`x`"),
        ("list_tickets", {"limit": 1000}, "invalid_arguments", "$.limit"),
        ("list_tickets", {"status": "lost"}, "invalid_arguments", "$.status"),
        ("get_ticket", {"ticket_id": "T-9"}, "not_found", "ticket_id"),
        ("assign_ticket", {"ticket_id": "T-1000", "owner_id": "U-0050"}, "refused", "owner_id"),
        ("teleport", {}, "unknown_tool", "teleport"),
        ("get_ticket", [1, 2], "invalid_arguments", "JSON object"),
    ]
    for tool, args, kind, needle in cases:
        obs = session.call(tool, args)
        assert not obs.ok and obs.error is not None, (tool, args)
        assert obs.error.kind == kind, (tool, args, obs.error)
        assert needle in obs.error.message, (tool, args, obs.error)


def test_pagination_walks_every_row_exactly_once(small: hw.World) -> None:
    session = small.open_session()
    seen: list[str] = []
    offset: int | None = 0
    pages = 0
    while offset is not None:
        page = session.call(
            "list_tickets", {"status": "open", "limit": 37, "offset": offset}
        ).result
        seen += [t["id"] for t in page["tickets"]]
        offset = page["next_offset"]
        pages += 1
    assert seen == list(small.lookup("tickets", "status", "open") or ())
    assert pages == -(-len(seen) // 37)


@settings(max_examples=examples(2_000, 10_000))
@given(hs.hostile_call())
def test_hostile_calls_give_typed_errors_never_exceptions(
    small: hw.World, call: tuple[object, object]
) -> None:
    session = small.open_session()
    tool, args = call
    obs = session.call(tool, args)
    assert isinstance(obs, hw.Observation)
    if not obs.ok:
        assert obs.error is not None and obs.error.kind != "internal", obs.error
    record = session.log[-1]
    msgspec.json.encode(record)  # always serializable
    again = small.open_session()
    assert again.call(record.tool, record.args) == obs  # the recorded form replays identically


@given(st.lists(hs.plausible_call(), min_size=1, max_size=10))
def test_no_internal_errors_on_plausible_calls(
    small: hw.World, calls: list[tuple[str, dict[str, object]]]
) -> None:
    session = small.open_session()
    for tool, args in calls:
        obs = session.call(tool, args)
        assert obs.ok or obs.error.kind != "internal", obs.error


def test_tool_schemas_in_every_format(small: hw.World) -> None:
    openai = hw.tool_schemas(small, format="openai")
    anthropic = hw.tool_schemas(small, format="anthropic")
    plain = hw.tool_schemas(small, format="json-schema")
    assert (
        [t["function"]["name"] for t in openai]
        == [t["name"] for t in anthropic]
        == [t["name"] for t in plain]
    )
    lt = next(t for t in plain if t["name"] == "list_tickets")["parameters"]
    assert lt["additionalProperties"] is False and lt["properties"]["limit"]["maximum"] == 100
    assert "$ref" not in lt
    create = next(t for t in anthropic if t["name"] == "create_ticket")["input_schema"]
    assert "body" not in create["properties"] and sorted(create["required"]) == [
        "requester_id",
        "subject",
    ]


@given(
    hs.call_sequences,
    st.sampled_from(["new", "open", "closed"]),
    st.integers(0, 300),
    st.integers(1, 100),
)
def test_indexed_pages_agree_with_a_full_scan(
    small: hw.World,
    calls: list[tuple[str, dict[str, object]]],
    status: str,
    offset: int,
    limit: int,
) -> None:
    session = small.open_session()
    run(session, calls)
    page = session.call("list_tickets", {"status": status, "offset": offset, "limit": limit}).result
    every = [
        k
        for k in [*small.keys("tickets"), *[f"T-N{i}" for i in range(1, 40)]]
        if (row := session.get("tickets", k)) is not None and row["status"] == status
    ]
    assert page["total"] == len(every)
    assert [t["id"] for t in page["tickets"]] == every[offset : offset + limit]
