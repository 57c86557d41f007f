"""Authority conditions in the helpdesk world: requests planted in customer comments (issue 15).

What every world's planted requests must hold (twins, matrix, reference agents) is checked in
``tests/test_authority_worlds.py``; these check the helpdesk data and how its gate fails.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

import harness_world as hw
from harness_world.coverage import load_routes
from harness_world.coverage.matrix import coverage_matrix
from harness_world.engine.canonical import to_json
from harness_world.engine.world import world_module

REPO = Path(__file__).resolve().parents[2]
TASKS = hw.load_tasks("helpdesk")
BY_ID = {t.id: t for t in TASKS}
COMMENT_TASKS = sorted(t.id for t in TASKS if t.authority is not None)
PLANTED = world_module("helpdesk").PLANTED_COMMENTS


def test_planted_requests_are_seeded_comments_in_three_phrasings(
    small: hw.World, large: hw.World
) -> None:
    attacks = [BY_ID[t] for t in COMMENT_TASKS if BY_ID[t].authority.role == "attack"]  # type: ignore[union-attr]
    assert len(attacks) == 9 and len(COMMENT_TASKS) == 18 and len(PLANTED) == 18
    kinds = {(t.authority.attack, t.authority.phrasing) for t in attacks}  # type: ignore[union-attr]
    assert len(kinds) == 9  # three attack kinds x three phrasings
    for task in (BY_ID[t] for t in COMMENT_TASKS):
        assert task.authority is not None
        entity, key, field = task.authority.source.split(".")
        row = small.get(entity, key)
        assert row is not None and row[field], task.id  # the request is in the world's data
        assert key in task.instruction and row["ticket_id"] in task.instruction
        ticket = small.get("tickets", row["ticket_id"])
        assert ticket is not None and row["author_id"] == ticket["requester_id"]  # the customer
        role, kind, phrasing, _, _ = PLANTED[key]
        assert (role, kind, phrasing) == (
            task.authority.role,
            task.authority.attack,
            task.authority.phrasing,
        )
        assert large.get(entity, key) == row  # the large seed keeps them unchanged


# sha256 of the committed small seed's canonical JSON before the planted comments (main at
# 7708b48): every existing row is unchanged, so no existing task's targets or answers move.
ROWS_BEFORE = "8d44c43c6fdea03cf6afeb99e8bdbcec563d77f1b0dba98b76a9216372b1e9ad"


def test_planted_comments_are_appended_and_change_no_existing_row(small: hw.World) -> None:
    data = msgspec.json.decode((REPO / "worlds/helpdesk/seeds/small.json").read_bytes())
    planted = [c for c in data["comments"] if c["id"] in PLANTED]
    assert data["comments"][-len(PLANTED) :] == planted  # appended last
    assert len(data["tickets"]) == 641 and len(data["comments"]) == 913 + len(PLANTED)
    before = {**data, "comments": data["comments"][: -len(PLANTED)]}
    assert hashlib.sha256(to_json(before)).hexdigest() == ROWS_BEFORE
    assert small.count("comments") == len(data["comments"])


def test_matrix_gate_fails_on_helpdesk_without_a_twin_or_an_oracle() -> None:
    without_benign = [t for t in TASKS if not (t.authority and t.authority.role == "benign")]
    matrix = coverage_matrix("helpdesk", without_benign)
    assert not matrix.ok
    assert sum("no benign counterpart" in p for p in matrix.problems) == 9
    routes = load_routes("helpdesk")
    del routes["helpdesk.comment_close_direct_ok"]
    orphan = coverage_matrix("helpdesk", TASKS, routes)
    assert orphan.problems == [
        "attack:close_unrelated_tickets/direct: helpdesk.comment_close_direct_ok has no oracle"
    ]
    attack = BY_ID["helpdesk.comment_assign_direct"]
    assert attack.authority is not None
    wrong = msgspec.structs.replace(
        attack,
        authority=msgspec.structs.replace(
            attack.authority, counterpart="helpdesk.comment_assign_authority_ok"
        ),
    )
    swapped = [wrong if t.id == attack.id else t for t in TASKS]
    problems = coverage_matrix("helpdesk", swapped).problems
    assert any("another attack kind or phrasing" in p for p in problems)
    assert any(
        "comment_assign_direct_ok: a benign task no attack task names" in p for p in problems
    )
