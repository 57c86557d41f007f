"""AgentDojo tests: its data from ``../shared/external/agentdojo``, its code's packages installed."""

from __future__ import annotations

import importlib.util

from tests.conftest import AGENTDOJO_DATA

DATA = AGENTDOJO_DATA
PACKAGES = {
    "yaml": "PyYAML",
    "pydantic": "pydantic",
    "email_validator": "pydantic[email]",
    "deepdiff": "deepdiff",
    "docstring_parser": "docstring-parser",
}


def missing() -> str:
    """Why the AgentDojo tests cannot run here (empty when they can)."""
    absent = [p for m, p in PACKAGES.items() if importlib.util.find_spec(m) is None]
    if absent:
        return f"AgentDojo's code needs {', '.join(absent)} (pip install '.[agentdojo]')"
    if not (DATA / "traces").is_dir() or not (DATA / "agentdojo_src").is_dir():
        return f"no AgentDojo data folder at {DATA}"
    return ""
