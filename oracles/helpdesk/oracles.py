"""Scripted correct solutions for the helpdesk tasks, one per task.

Oracles find their targets through the tools, as an agent must: they list, follow every page,
read what they write, and never use an id the instruction does not give. Each passes on the small
and the large seed, which is what shows the targets are derived, not hard-coded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness_world.coverage import ScriptContext, follow_pages

PAGE = 100


def rows(
    ctx: ScriptContext, tool: str, args: dict[str, Any], field: str
) -> Iterator[dict[str, Any]]:
    """Every row of a paginated listing, following ``next_offset`` to the end (pages of 100)."""
    return follow_pages(ctx, tool, args, field, PAGE)


def tickets(ctx: ScriptContext, **filters: Any) -> list[dict[str, Any]]:
    """Every ticket matching the filters (one value per filter, as the tool allows)."""
    return list(rows(ctx, "list_tickets", filters, "tickets"))


def must(ctx: ScriptContext, tool: str, args: dict[str, Any]) -> Any:
    """Call a tool that has to succeed."""
    obs = ctx.call(tool, args)
    if not obs.ok:
        raise RuntimeError(f"{tool}({args}) failed: {obs.error}")
    return obs.result


def user_by_email(ctx: ScriptContext, name: str, email: str) -> dict[str, Any]:
    """The user with exactly this email among the matches of a name search."""
    for user in rows(ctx, "find_users", {"query": name}, "users"):
        if user["email"] == email:
            return user
    raise RuntimeError(f"no user {email}")


def escalate_outage(ctx: ScriptContext) -> str:
    for t in tickets(ctx, status="open", tag="outage"):
        if t["priority"] != "urgent":
            must(ctx, "update_ticket", {"ticket_id": t["id"], "priority": "urgent"})
    return "Every open outage ticket is urgent now."


def vip_two_statuses(ctx: ScriptContext) -> str:
    for status in ("new", "pending"):
        for t in tickets(ctx, status=status, tag="vip"):
            if t["priority"] != "high":
                must(ctx, "update_ticket", {"ticket_id": t["id"], "priority": "high"})
    return "New and pending VIP tickets are high priority."


def billing_review_tag(ctx: ScriptContext) -> str:
    for t in tickets(ctx, status="open", group_id="G-1"):
        if "billing-review" not in t["tags"]:
            must(
                ctx, "update_ticket", {"ticket_id": t["id"], "tags": [*t["tags"], "billing-review"]}
            )
    return "Tagged."


def assign_on_hold_unowned(ctx: ScriptContext) -> str:
    unowned = tickets(ctx, owner_id=None) + tickets(ctx, owner_missing=True)
    for t in unowned:
        if t["status"] == "on_hold":
            must(ctx, "assign_ticket", {"ticket_id": t["id"], "owner_id": "U-0005"})
    return "Assigned."


def reassign_departed(ctx: ScriptContext) -> str:
    for t in tickets(ctx, status="open", owner_id="U-0004"):
        must(ctx, "assign_ticket", {"ticket_id": t["id"], "owner_id": "U-0007"})
    return "Reassigned."


def reply_and_solve(ctx: ScriptContext) -> str:
    must(ctx, "get_ticket", {"ticket_id": "T-1001"})
    must(
        ctx, "add_comment", {"ticket_id": "T-1001", "body": "The outage is fixed.", "public": True}
    )
    must(ctx, "update_ticket", {"ticket_id": "T-1001", "status": "solved"})
    return "Replied and solved."


def create_for_john(ctx: ScriptContext) -> str:
    john = user_by_email(ctx, "smith", "john.smith1@mail.example")
    args = {"subject": "Export to CSV fails", "requester_id": john["id"], "priority": "high"}
    ticket = must(ctx, "create_ticket", args)
    return f"Opened {ticket['id']}."


def security_count(ctx: ScriptContext) -> str:
    first = must(ctx, "list_tickets", {"status": "open", "tag": "security", "limit": PAGE})
    count = len(tickets(ctx, status="open", tag="security"))
    assert count == first["total"]
    return f"{count}"


def note_urgent_new(ctx: ScriptContext) -> str:
    for t in tickets(ctx, status="new", priority="urgent"):
        must(ctx, "add_comment", {"ticket_id": t["id"], "body": "Triaged: urgent", "public": False})
    return "Noted."


def close_solved_duplicates(ctx: ScriptContext) -> str:
    for t in tickets(ctx, status="solved", tag="duplicate"):
        must(ctx, "update_ticket", {"ticket_id": t["id"], "status": "closed"})
    return "Closed."


def untag_pending_mobile(ctx: ScriptContext) -> str:
    for t in tickets(ctx, status="pending", tag="mobile"):
        kept = [tag for tag in t["tags"] if tag != "mobile"]
        must(ctx, "update_ticket", {"ticket_id": t["id"], "tags": kept})
    return "Untagged."


def anna_lopez_replies(ctx: ScriptContext) -> str:
    anna = next(
        u for u in rows(ctx, "find_users", {"query": "lopez"}, "users") if u["name"] == "Anna Lopez"
    )
    body = "Sorry for the wait - we are on it."
    for t in tickets(ctx, requester_id=anna["id"]):
        if t["status"] in ("new", "open", "pending"):
            must(ctx, "add_comment", {"ticket_id": t["id"], "body": body, "public": True})
    return "Replied."


ORACLES = {
    f"helpdesk.{fn.__name__}": fn
    for fn in (
        escalate_outage,
        vip_two_statuses,
        billing_review_tag,
        assign_on_hold_unowned,
        reassign_departed,
        reply_and_solve,
        create_for_john,
        security_count,
        note_urgent_new,
        close_solved_duplicates,
        untag_pending_mobile,
        anna_lopez_replies,
    )
}
