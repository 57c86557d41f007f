"""Shared fixtures and hypothesis profiles.

``HW_FULL=1`` selects the ``full`` profile: the long fuzzing counts the issues ask for
(10,000 agent calls, 10,000 record edits). CI runs the reduced ``ci`` profile.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import harness_world as hw

FULL = os.environ.get("HW_FULL") == "1"
REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
TAU2_DATA = SHARED / "external" / "tau2-retail"

settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "full", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("full" if FULL else "ci")


def examples(ci: int, full: int) -> int:
    """The example count for a property: ``ci`` normally, ``full`` under HW_FULL=1."""
    return full if FULL else ci


@pytest.fixture(scope="session")
def small() -> hw.World:
    return hw.load_world("helpdesk")


@pytest.fixture(scope="session")
def large() -> hw.World:
    return hw.load_world("helpdesk", size="large")
