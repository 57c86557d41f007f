"""Canonical encodings: the single place that decides how values become bytes.

Rows are stored, arguments and results normalised, and records compared as canonical JSON;
records may also be saved as msgpack (see ``_record``).

Everything that is hashed, compared during replay or written to disk goes through these
encoders, so "equal bytes" and "equal meaning" coincide: dict keys are sorted, structs are
encoded field by field in sorted order, and absent fields stay absent (never turned into null).

A struct's bytes do not depend on how it travelled (built, decoded, copied, pickled into a
worker process and back): `normalised` runs before every encoding. msgspec's ``omit_defaults``
leaves a field out only when its value *is* the default object (a string, a float or a struct
default is compared by identity), and a float field built with an ``int`` encodes as ``1``
where a decoded copy says ``1.0``; `normalised` makes both facts independent of identity.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import msgspec.inspect as mi

__all__ = [
    "canonical_struct",
    "from_json",
    "normalised",
    "sha256_hex",
    "struct_fields",
    "to_json",
]

_JSON_ENCODER = msgspec.json.Encoder(order="sorted")
_JSON_DECODER = msgspec.json.Decoder()


def to_json(value: Any) -> bytes:
    """Encode ``value`` as canonical JSON (sorted keys, no whitespace; structs `normalised`)."""
    kind = type(value)
    if kind is dict or kind is str:  # a row, arguments, a key: most calls, nothing to walk
        return _JSON_ENCODER.encode(value)
    if kind is list or kind is tuple:
        for item in value:  # a loop: short lists of plain values are the common case
            if type(item) not in _PLAIN:
                return _JSON_ENCODER.encode(normalised(value))
        return _JSON_ENCODER.encode(value)
    return _JSON_ENCODER.encode(normalised(value))


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
        fields = struct_fields(type(value))  # resolved once per type, not per value
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


def struct_fields(kind: type) -> tuple[msgspec.structs.FieldInfo, ...]:
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


# -- identity-free struct encoding ---------------------------------------------------------

# One step of a struct type's plan: the field's attribute name, the default it is left out at
# (``NODEFAULT``: never left out), whether it is declared ``float``, whether its declared type
# may hold a struct that has steps of its own, and the field's default object (a default
# struct is canonical as built, so a field still holding it is not descended into).
_Step = tuple[str, Any, bool, bool, Any]
_PLANS: dict[type, tuple[_Step, ...]] = {}
_NUMBERS = (int, float)
# Values `normalised` never walks: plain JSON scalars, and objects (whose values are JSON).
_PLAIN: frozenset[type] = frozenset({dict, str, int, float, bool, type(None), bytes})
# Types whose values are known to need no walk (True) or to need one (False), as found.
_SETTLED: dict[type, bool] = {kind: True for kind in _PLAIN}


def _shared(default: Any) -> bool:
    """Whether every value equal to ``default`` is ``default`` itself, however it was made.

    True for singletons and for what CPython keeps one copy of (small integers, the empty
    string): decoding and unpickling return that copy, so msgspec's identity test holds.
    """
    if default is None or default is True or default is False or default is msgspec.UNSET:
        return True
    if type(default) is int:
        return -5 <= default <= 256
    return type(default) is str and not default


def normalised(value: Any) -> Any:
    """``value`` with every struct in it made independent of how it was built or carried.

    In each struct (found through its declared field types, or at the top of ``value`` or of a
    list or tuple there) a field that equals its ``omit_defaults`` default holds the default
    object itself, and an ``int`` in a field declared ``float`` becomes a float: a decoded or
    unpickled copy then encodes byte for byte like a freshly built struct. Structs already in
    that form are returned as they are (no copy); fields declared ``Any`` hold plain JSON
    values and are not walked.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, msgspec.Struct):
        return _normal_struct(value)
    if (kind is list or kind is tuple) and not all(map(_settled, set(map(type, value)))):
        return [normalised(v) for v in value]
    return value


def _settled(kind: type) -> bool:
    """Whether every value of type ``kind`` is already in canonical form (nothing to walk)."""
    known = _SETTLED.get(kind)
    if known is not None:
        return known
    if not issubclass(kind, msgspec.Struct):
        return False  # a list, a tuple: walked
    steps = _PLANS.get(kind)
    _SETTLED[kind] = settled = not (steps if steps is not None else _plan(kind))
    return settled


def _normal_struct(value: msgspec.Struct) -> msgspec.Struct:
    steps = _PLANS.get(type(value))
    if steps is None:
        steps = _plan(type(value))
    if not steps:
        return value
    changes: dict[str, Any] = {}
    for name, default, is_float, descend, built in steps:
        item = getattr(value, name)
        if item is built:
            continue
        new = item
        if default is not msgspec.NODEFAULT and _equal(item, default):
            new = default
        elif is_float and type(item) is int:
            new = float(item)
        elif descend:
            new = _normal_typed(item)
        if new is not item:
            changes[name] = new
    return msgspec.structs.replace(value, **changes) if changes else value


def _normal_typed(item: Any) -> Any:
    """A value of a declared field type that may hold structs: its structs normalised."""
    if isinstance(item, msgspec.Struct):
        return _normal_struct(item)
    kind = type(item)
    if kind is list or kind is tuple:
        out: list[Any] | None = None
        for i, v in enumerate(item):
            new = _normal_typed(v)
            if new is not v:
                out = list(item) if out is None else out
                out[i] = new
        return item if out is None else out
    if kind is dict:
        pairs = {k: _normal_typed(v) for k, v in item.items()}
        return item if all(pairs[k] is v for k, v in item.items()) else pairs
    return item


def _equal(item: Any, default: Any) -> bool:
    """Whether ``item`` equals ``default`` as JSON sees it (``1 == 1.0``; ``True != 1``)."""
    if type(item) is type(default):
        return bool(item == default)
    return type(item) in _NUMBERS and type(default) in _NUMBERS and bool(item == default)


def _plan(kind: type, visiting: frozenset[type] = frozenset()) -> tuple[_Step, ...]:
    """The steps normalising a struct type (empty: its values are always in canonical form).

    Only a finished plan is kept (another thread never sees half of one); a field whose type
    contains the type being planned is descended into, to be safe.
    """
    omit = kind.__struct_config__.omit_defaults  # type: ignore[attr-defined]
    inside = visiting | {kind}
    steps = []
    info = mi.type_info(kind)
    assert isinstance(info, mi.StructType)
    for field in info.fields:
        built = field.default
        default = built if omit and not _shared(built) else msgspec.NODEFAULT
        is_float = _is_float(field.type)
        descend = _holds_steps(field.type, inside)
        if default is not msgspec.NODEFAULT or is_float or descend:
            steps.append((field.name, default, is_float, descend, built))
    plan = tuple(steps)
    if not visiting:
        _PLANS[kind] = plan
    return plan


def _is_float(info: mi.Type) -> bool:
    if isinstance(info, mi.UnionType):
        return any(isinstance(t, mi.FloatType) for t in info.types)
    return isinstance(info, mi.FloatType)


def _holds_steps(info: mi.Type, visiting: frozenset[type]) -> bool:
    """Whether a declared type may hold a struct with steps (``Any`` holds plain JSON)."""
    if isinstance(info, mi.StructType):
        if info.cls in visiting:
            return True
        found = _PLANS.get(info.cls)
        return bool(found if found is not None else _plan(info.cls, visiting))
    if isinstance(info, mi.UnionType):
        return any(_holds_steps(t, visiting) for t in info.types)
    if isinstance(info, mi.TupleType):
        return any(_holds_steps(t, visiting) for t in info.item_types)
    if isinstance(info, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return _holds_steps(info.item_type, visiting)
    if isinstance(info, mi.DictType):
        return _holds_steps(info.value_type, visiting)
    return False
