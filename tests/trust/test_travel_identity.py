"""Canonical bytes do not depend on how a value travelled.

A struct built in place, decoded from its bytes, copied, or pickled into another process and
back encodes to the same bytes, so a record's digest and file are the same whichever executor
made it. msgspec's ``omit_defaults`` compares string, float and struct defaults by identity,
and a float field built with an ``int`` encodes without its ``.0``: both used to leak into the
bytes (``run --workers 2`` made 17 of 37 payments records unverifiable).
"""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world.engine.canonical import normalised, sha256_hex, to_json
from harness_world.engine.faults import BEHAVIOURS, FaultEvent, FaultLog, FaultSpec
from harness_world.evidence.record import (
    RecordContext,
    TranscriptMessage,
    decode_record,
    encode_record,
    make_record,
    record_digest,
)
from harness_world.running.attempt import AttemptLimits
from tests.conftest import REPO, examples

WORLD = hw.load_world("helpdesk")


def _fresh(text: str) -> str:
    """An equal string that is not the same object (as one decoded or unpickled)."""
    return "".join(list(text))


def _travels(value: Any) -> list[Any]:
    """``value`` as it arrives by every route: pickled, deep-copied, decoded from JSON."""
    kind = type(value)
    return [
        pickle.loads(pickle.dumps(value)),
        copy.deepcopy(value),
        copy.copy(value),
        msgspec.json.decode(msgspec.json.encode(value), type=kind),
        msgspec.msgpack.decode(msgspec.msgpack.encode(value), type=kind),
        msgspec.convert(msgspec.to_builtins(value), type=kind),
    ]


specs = st.builds(
    FaultSpec,
    id=st.sampled_from(["a", "first_charge"]).map(_fresh),
    tool=st.sampled_from(["create_charge", "refund_charge"]).map(_fresh),
    behaviour=st.sampled_from(BEHAVIOURS),
    occurrence=st.integers(1, 3),
    times=st.integers(1, 3),
    repeat=st.sampled_from(["return_original_if_same_key", "create_again"]).map(_fresh),
    retry_after=st.sampled_from([1, 2, 3, 2**40]),
    chance=st.sampled_from([1.0, 0.5, 1, 0]).map(lambda x: x + 0 * x),  # new objects
)
contexts = st.builds(
    RecordContext,
    host=st.sampled_from(["", "h"]).map(_fresh),
    latency_s=st.sampled_from([0.0, 0, 1.5]).map(lambda x: x * 1),
    queue_s=st.floats(0, 10).map(lambda x: round(x, 6)),
    workers=st.sampled_from([0, 2, 2**40]),
)
messages = st.builds(
    TranscriptMessage,
    role=st.sampled_from(["user", "tool"]).map(_fresh),
    content=st.sampled_from(["", "hi"]).map(_fresh),
    tool_call_id=st.sampled_from(["", "call_1"]).map(_fresh),
    after_call=st.sampled_from([0, 3, 2**40]),
)
limits = st.builds(
    AttemptLimits,
    turns=st.sampled_from([None, 3]),
    cost=st.sampled_from([None, 1, 0.5]),
    wall_time=st.sampled_from([None, 2, 2.5]),
)


@settings(max_examples=examples(200, 2000))
@given(value=st.one_of(specs, contexts, messages, limits))
def test_a_struct_encodes_alike_however_it_travelled(value: Any) -> None:
    built = to_json(value)
    for arrived in _travels(value):
        assert to_json(arrived) == built
        assert msgspec.msgpack.encode(normalised(arrived)) == msgspec.msgpack.encode(
            normalised(value)
        )


@settings(max_examples=examples(100, 1000))
@given(schedule=st.lists(specs, max_size=3), cost=st.sampled_from([0, 1, 0.25]))
def test_a_record_digest_and_file_do_not_depend_on_how_its_parts_travelled(
    schedule: list[FaultSpec], cost: float
) -> None:
    session = WORLD.open_session(seed=3)
    session.call("get_ticket", {"ticket_id": "T-1001"})
    record = make_record(
        session,
        outcome=hw.Outcome(status="completed"),
        task_id="t",
        usage=hw.Usage(turns=1, cost=cost),
        transcript=[TranscriptMessage(role=_fresh("user"), content=_fresh(""))],
    )
    fired = [FaultEvent(fault_id=_fresh("a"), seq=1, occurrence=1, behaviour=_fresh("held"))]
    log = FaultLog(schedule=schedule, seed=7, fired=fired)
    record = msgspec.structs.replace(record, faults=log)
    record = msgspec.structs.replace(record, digest=record_digest(record))
    data = encode_record(record)
    for arrived in (pickle.loads(pickle.dumps(record)), copy.deepcopy(record)):
        assert record_digest(arrived) == record.digest
        assert encode_record(arrived) == data
        assert encode_record(arrived, "msgpack") == encode_record(record, "msgpack")
    decoded = decode_record(data)
    assert record_digest(decoded) == record.digest and encode_record(decoded) == data


def test_a_float_field_built_with_an_int_encodes_as_its_decoded_copy() -> None:
    usage = hw.Usage(cost=2, uncertain_cost=0)
    assert to_json(usage) == to_json(msgspec.json.decode(to_json(usage), type=hw.Usage))
    assert b'"cost":2.0' in to_json(usage)


def test_a_fault_schedule_hashes_alike_in_a_worker_process() -> None:
    """The exact route of ``run --workers N``: a task pickled into another interpreter."""
    task = next(t for t in hw.load_tasks("payments") if t.faults)
    here = sha256_hex(to_json(task.faults))
    code = (
        "import pickle, sys; from harness_world.engine.canonical import sha256_hex, to_json; "
        "task = pickle.loads(sys.stdin.buffer.read()); print(sha256_hex(to_json(task.faults)))"
    )
    there = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        input=pickle.dumps(task),
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert there.strip() == here
