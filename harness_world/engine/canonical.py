"""Canonical encodings: the single place that decides how values become bytes.

Rows are stored, arguments and results normalised, and records compared as canonical JSON;
records may also be saved as msgpack (see ``_record``).

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
    "sha256_hex",
    "to_json",
]

_JSON_ENCODER = msgspec.json.Encoder(order="sorted")
_JSON_DECODER = msgspec.json.Decoder()


def to_json(value: Any) -> bytes:
    """Encode ``value`` as canonical JSON (sorted keys, no whitespace)."""
    return _JSON_ENCODER.encode(value)


def from_json(data: bytes | str) -> Any:
    """Decode JSON into plain Python values (dict, list, str, int, float, bool, None)."""
    return _JSON_DECODER.decode(data)


def sha256_hex(*parts: bytes) -> str:
    """SHA-256 over length-prefixed parts, so that part boundaries are part of the hash."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()
