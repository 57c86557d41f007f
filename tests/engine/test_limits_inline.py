"""The fast pass of `check_json_value` decides exactly as a plain recursive reading of the limits."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world.engine.limits import _clean, _clean_scalar, check_json_value, text_problem
from tests.conftest import examples

_ODD = st.sampled_from(["\ud800", "a\udfff", "x" * 1_000_001, b"x", 1j, 2**53 + 1, -(2**53) - 1])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(),
    st.text(max_size=5),
    _ODD,
)
_KEYS = st.one_of(st.text(max_size=3), st.sampled_from(["\ud800", "é\udc00", 1, None]))
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_KEYS, inner, max_size=4)
    ),
    max_leaves=30,
)


def _reference(value: Any, max_depth: int, depth: int = 1) -> bool:
    if type(value) not in (dict, list, tuple):
        return _clean_scalar(value)
    if depth > max_depth:
        return False
    if type(value) is dict:
        keys_ok = all(type(k) is str and (k.isascii() or not text_problem(k)) for k in value)
        if not keys_ok:
            return False
        value = list(value.values())
    return all(_reference(child, max_depth, depth + 1) for child in value)


@settings(max_examples=examples(800, 3000), deadline=None)
@given(_VALUES, st.integers(1, 6))
def test_fast_pass_decides_as_the_reference(value: Any, max_depth: int) -> None:
    assert _clean(value, max_depth) == _reference(value, max_depth)
    assert (check_json_value(value, max_depth) == "") == _reference(value, max_depth)


def test_each_scalar_limit_is_enforced_inside_containers() -> None:
    for bad in ("\ud800", "x" * 1_000_001, 2**53 + 1, float("nan"), 1j, b"x"):
        assert not _clean([1, {"a": [bad]}], 8), bad
        assert check_json_value({"k": [bad]}, 8).startswith("$.k[0]: "), bad
    assert not _clean({"\ud800": 1}, 8)
    assert _clean([True, None, 2**53, -(2**53), 1.5, "é", ("t",)], 8)
