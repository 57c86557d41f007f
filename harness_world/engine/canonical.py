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
    "canonical_struct",
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


def canonical_struct(value: Any) -> Any:
    """Plain values for a struct tree whose encoding does not depend on object identity.

    msgspec's ``omit_defaults`` leaves a field out only when it *is* the default object for
    some types (a nested struct default), so a copy made by pickling encodes differently. Here
    a field is left out when it *equals* its default, which gives the same bytes as a freshly
    built struct, whatever process or pickle made it.
    """
    if isinstance(value, msgspec.Struct):
        config = value.__struct_config__
        fields = _fields(type(value))  # resolved once per type, not per value
        out: dict[str, Any] = {}
        for field in fields:
            item = getattr(value, field.name)
            if config.omit_defaults and _is_default(field, item):
                continue
            out[field.encode_name] = canonical_struct(item)
        return out
    if isinstance(value, list | tuple):
        return [canonical_struct(v) for v in value]
    if isinstance(value, dict):
        return {k: canonical_struct(v) for k, v in value.items()}
    return value


_FIELDS: dict[type, tuple[msgspec.structs.FieldInfo, ...]] = {}


def _fields(kind: type) -> tuple[msgspec.structs.FieldInfo, ...]:
    """A struct type's fields (msgspec resolves the annotations on every call)."""
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = msgspec.structs.fields(kind)
    return found


def _is_default(field: msgspec.structs.FieldInfo, item: Any) -> bool:
    if field.default is not msgspec.NODEFAULT:
        return bool(item == field.default)
    if field.default_factory is not msgspec.NODEFAULT:
        return bool(item == field.default_factory())
    return False
