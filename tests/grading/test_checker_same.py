"""The grader's fast typed equality and dict walk decide exactly as their plain definitions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness_world.engine.values import typed_equal as _same
from harness_world.grading.rows import walk_dicts as _walk_dicts
from tests.conftest import examples
from tests.strategies import typed_tags

_NAN = float("nan")
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, -1.0, 2.5, _NAN, float("nan"), "", "1", "a", (1,), (1.0,)]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
        | st.dictionaries(st.sampled_from([1, True, 0, "1"]), inner, max_size=2)
    ),
    max_leaves=12,
)


@settings(max_examples=examples(800, 4000), deadline=None)
@given(_VALUES, _VALUES)
def test_same_is_typed_equality(a: Any, b: Any) -> None:
    assert _same(a, b) == (typed_tags(a) == typed_tags(b))
    assert _same(a, a) == (typed_tags(a) == typed_tags(a))


def _reference_walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _reference_walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _reference_walk(item)


@settings(max_examples=examples(400, 2000), deadline=None)
@given(_VALUES)
def test_walk_visits_the_same_dicts_in_the_same_order(value: Any) -> None:
    assert [id(d) for d in _walk_dicts(value)] == [id(d) for d in _reference_walk(value)]


def test_same_keeps_one_one_point_zero_and_true_apart() -> None:
    assert not _same({"n": 1}, {"n": 1.0})
    assert not _same([1], [True])
    assert not _same({"n": [1, {"m": 0}]}, {"n": [1, {"m": False}]})
    assert _same({"n": [1, {"m": 0}]}, {"n": [1, {"m": 0}]})
    assert not _same([1], (1,))
    assert _same({"x": -0.0}, {"x": 0.0})  # equal JSON bytes are not required: -0.0 == 0.0
    assert not _same({"x": [1, 2]}, {"x": [1, 2.0]})
