"""A shown result as AgentDojo's formatter writes it, and the form two of its runs agree on.

Needs PyYAML only (no data folder): AgentDojo's side is built here as its formatter is given it
(Pydantic's dump: date-times as ``datetime`` objects, an event attached to two e-mails sharing
its date-time objects), and dumped as its formatter dumps it.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from harness_world.agentdojo import workspace
from harness_world.agentdojo.regrade import stable
from harness_world.agentdojo.render import render

pytestmark = pytest.mark.agentdojo
yaml = pytest.importorskip("yaml")

FIELDS = frozenset({"start_time", "end_time", "timestamp"})


def _event(start: Any, end: Any) -> dict[str, Any]:
    return {"id_": "1", "title": "Sync", "start_time": start, "end_time": end,
            "participants": ["b@x.com", "a@x.com"]}  # fmt: skip


def test_an_event_attached_twice_shows_its_datetimes_as_yaml_aliases() -> None:
    """Nested date-times are date-times, and a repeated record shares them (``&id001``)."""
    start, end = datetime.datetime(2024, 5, 20, 10), datetime.datetime(2024, 5, 20, 11)
    theirs = yaml.safe_dump(
        [
            {
                "id_": "9",
                "timestamp": datetime.datetime(2024, 5, 1, 9),
                "attachments": [_event(start, end)],
            },
            {
                "id_": "10",
                "timestamp": datetime.datetime(2024, 5, 2, 9),
                "attachments": [_event(start, end)],
            },
        ]
    ).strip()
    ours = [
        {"id_": "9", "timestamp": "2024-05-01T09:00", "attachments": [_event(
            "2024-05-20T10:00", "2024-05-20 11:00:00")]},
        {"id_": "10", "timestamp": "2024-05-02T09:00", "attachments": [_event(
            "2024-05-20T10:00", "2024-05-20 11:00:00")]},
    ]  # fmt: skip
    assert "*id001" in theirs
    assert render("search_emails", ours, (), None, FIELDS) == theirs


def test_two_runs_agree_without_their_own_stamps_and_set_order() -> None:
    """A run's own stamp (2025 on) and a set's order are set aside; a 2024 stamp is not."""
    one = "id_: '5'\nparticipants:\n- b@x.com\n- a@x.com\ntimestamp: 2026-01-01 00:00:03"
    two = "id_: '5'\nparticipants:\n- a@x.com\n- b@x.com\ntimestamp: 2025-12-05 14:20:00.123"
    assert stable(workspace.SPEC, one) == stable(workspace.SPEC, two)
    old = "id_: '5'\ntimestamp: 2024-05-01 09:00:00"
    assert stable(workspace.SPEC, old) != stable(workspace.SPEC, old.replace("09:00", "09:01"))
