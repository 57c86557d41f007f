"""`gate_options`: the compare gate's options checked together, in `assess`'s units."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_world.stats import DEFAULT_ALPHA, StatsInputError, gate_options


@given(st.floats(min_value=0.001, max_value=100))
def test_points_become_fractions(points: float) -> None:
    options = gate_options("non-inferior", margin=points)
    assert options.margin == pytest.approx(points / 100)
    assert options.alpha == DEFAULT_ALPHA


def test_z_is_the_normal_tail() -> None:
    assert gate_options("none", z=1.96).alpha == pytest.approx(0.025, abs=1e-4)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"gate": "non-inferior"}, "--gate non-inferior needs --margin"),
        ({"gate": "improved", "margin": 2.0}, "--margin only applies"),
        ({"gate": "non-inferior", "margin": 0.0}, "--margin must be in (0, 100]"),
        ({"gate": "non-inferior", "margin": math.nan}, "--margin must be in (0, 100]"),
        ({"gate": "none", "alpha": 0.5}, "--alpha must be strictly between"),
        ({"gate": "none", "alpha": 0.05, "z": 1.6}, "give --alpha or --z"),
        ({"gate": "none", "z": -1.0}, "--z must be a positive number"),
        ({"gate": "none", "plan": True}, "--plan needs --mde"),
        ({"gate": "none", "mde": 5.0}, "--mde only applies with --plan"),
        ({"gate": "none", "plan": True, "mde": 101.0}, "--mde must be in (0, 100]"),
        ({"gate": "none", "min_runs": 0}, "--min-runs must be at least 1"),
    ],
)
def test_each_bad_option_is_named(kwargs: dict[str, object], says: str) -> None:
    with pytest.raises(StatsInputError, match=None) as caught:
        gate_options(**kwargs)  # type: ignore[arg-type]
    assert says in str(caught.value)
