"""τ²-bench's own retail code, imported from the shared copy for differential tests.

The code lives in ``../shared/external/tau2-retail/tau2_src`` (MIT licence, © Sierra
Research); nothing of it is copied here. Tests that need it use `tau2_source` and are skipped
with the reason when the copy or its dependencies are absent.
"""

from __future__ import annotations

import importlib.util
from functools import cache

import pytest

from harness_world.tau2.source import Tau2Source
from tests.conftest import TAU2_DATA

TAU2_SRC = TAU2_DATA / "tau2_src"
DEPENDENCIES = ("pydantic", "loguru", "dotenv", "yaml", "toml", "addict", "deepdiff")


def missing() -> str:
    """Why τ²'s code cannot be used here (empty when it can)."""
    if not (TAU2_DATA / "db.json").is_file() or not (TAU2_DATA / "tasks_train.json").is_file():
        return f"τ² retail data (db.json, tasks_train.json) not found in {TAU2_DATA}"
    if not (TAU2_SRC / "tau2" / "domains" / "retail" / "tools.py").is_file():
        return f"τ²'s retail code not found in {TAU2_SRC}"
    absent = [name for name in DEPENDENCIES if importlib.util.find_spec(name) is None]
    if absent:
        return f"τ²'s code needs {', '.join(absent)} (install the tau2 extra)"
    return ""


needs_tau2 = pytest.mark.skipif(bool(missing()), reason=missing() or "available")


@cache
def tau2_source() -> Tau2Source:
    """τ²'s modules, loaded once per test process."""
    return Tau2Source.load(TAU2_SRC, TAU2_DATA)


@cache
def tau2_base_db() -> object:
    """τ²'s RetailDB of the shared data (copy it before running tools on it)."""
    return tau2_source().database(TAU2_DATA / "db.json")


def tau2_env() -> object:
    """A fresh τ² environment over a deep copy of the shared data."""
    return tau2_source().environment(tau2_base_db().model_copy(deep=True))  # type: ignore[attr-defined]
