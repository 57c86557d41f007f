"""The canonical fast path of `decode_record` accepts exactly what the strict path accepts."""

from __future__ import annotations

import msgspec
import pytest

import harness_world as hw
from harness_world.coverage import load_oracles, run_script
from harness_world.evidence import record as record_module
from harness_world.evidence.record import RecordError, decode_record, encode_record


@pytest.fixture(scope="module")
def records() -> list[hw.Record]:
    world = hw.load_world("payments")
    oracles = load_oracles("payments")
    return [run_script(world, t, oracles[t.id]) for t in hw.load_tasks("payments")[:12]]


def _strict_only(data: bytes) -> hw.Record:
    saved = record_module._decode_canonical
    record_module._decode_canonical = lambda _data: None  # type: ignore[assignment]
    try:
        return decode_record(data)
    finally:
        record_module._decode_canonical = saved


def test_canonical_files_take_the_fast_path_and_decode_alike(records: list[hw.Record]) -> None:
    fast_paths = 0
    for record in records:
        data = encode_record(record)
        fast = record_module._decode_canonical(data)
        if fast is None:  # a full card number (16 digits) sends a record the exact way
            assert b"0" * 16 in data.translate(bytes.maketrans(b"123456789", b"0" * 9))
        else:
            fast_paths += 1
            assert encode_record(fast) == data
        assert encode_record(decode_record(data)) == encode_record(_strict_only(data)) == data
    assert fast_paths >= len(records) - 2


def _with_args(record: hw.Record, args: object) -> bytes:
    first = msgspec.structs.replace(record.calls[0], args=args)
    return encode_record(msgspec.structs.replace(record, calls=[first, *record.calls[1:]]))


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        ({"n": 2**60}, "integer out of range"),
        ({"n": -(2**53) - 1}, "integer out of range"),
        ({"deep": _nested(80)}, "nested deeper than"),
    ],
    ids=["big-int", "small-int", "deep"],
)
def test_a_canonical_file_breaking_a_limit_is_refused_as_before(
    records: list[hw.Record], args: object, refusal: str
) -> None:
    data = _with_args(records[0], args)
    assert record_module._decode_canonical(data) is None
    with pytest.raises(RecordError, match=refusal):
        decode_record(data)


def test_limits_at_the_edge_are_accepted_by_both_paths(records: list[hw.Record]) -> None:
    """2^53 exactly, a 16-digit id inside a string, depth 60: accepted (maybe slowly)."""
    data = _with_args(records[0], {"n": 2**53, "id": "1234567890123456", "d": _nested(60)})
    assert encode_record(decode_record(data)) == data


def test_a_duplicate_key_in_canonical_layout_is_refused(records: list[hw.Record]) -> None:
    data = encode_record(records[0])
    marker = b'\n "task_id": '
    assert marker in data
    # The same key twice, laid out exactly as the encoder lays out keys.
    forged = data.replace(marker, b'\n "task_id": "x",' + marker, 1)
    assert record_module._decode_canonical(forged) is None
    with pytest.raises(RecordError, match="duplicate key"):
        decode_record(forged)


def test_a_lone_surrogate_escape_in_canonical_layout_is_refused(records: list[hw.Record]) -> None:
    data = _with_args(records[0], {"s": "PLACEHOLDER"}).replace(b"PLACEHOLDER", b"\\ud800")
    assert record_module._decode_canonical(data) is None
    with pytest.raises(RecordError, match="surrogate"):
        decode_record(data)
