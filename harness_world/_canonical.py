"""Canonical encodings: the single place that decides how values become bytes.

Everything that is hashed, compared during replay or written to disk goes through these
encoders, so "equal bytes" and "equal meaning" coincide: dict keys are sorted, structs are
encoded field by field in sorted order, and absent fields stay absent (never turned into null).
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

__all__ = [
    "from_json",
    "json_roundtrip",
    "pack",
    "sha256_hex",
    "to_json",
    "unpack",
]

_JSON_ENCODER = msgspec.json.Encoder(order="sorted")
_JSON_DECODER = msgspec.json.Decoder()
_PACK_ENCODER = msgspec.msgpack.Encoder(order="sorted")
_PACK_DECODER = msgspec.msgpack.Decoder()


def to_json(value: Any) -> bytes:
    """Encode ``value`` as canonical JSON (sorted keys, no whitespace)."""
    return _JSON_ENCODER.encode(value)


def from_json(data: bytes | str) -> Any:
    """Decode JSON into plain Python values (dict, list, str, int, float, bool, None)."""
    return _JSON_DECODER.decode(data)


def json_roundtrip(value: Any) -> Any:
    """Return a fresh copy of ``value`` as it would read back from canonical JSON.

    This is how arguments and results are normalised: tuples become lists, structs become
    dicts, non-finite floats become null. Whatever a tool saw is exactly what a record stores.
    """
    return _JSON_DECODER.decode(_JSON_ENCODER.encode(value))


def pack(value: Any) -> bytes:
    """Encode ``value`` as canonical msgpack (sorted keys); the storage form of rows."""
    return _PACK_ENCODER.encode(value)


def unpack(data: bytes) -> Any:
    """Decode msgpack bytes into a fresh, independent Python value."""
    return _PACK_DECODER.decode(data)


def sha256_hex(*parts: bytes) -> str:
    """SHA-256 over length-prefixed parts, so that part boundaries are part of the hash."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()
