"""Trace criteria: what the call log shows about how the work was done (a task lists them).

Each reads the trace view's shared facets: rows returned before they were written
(`TraceView.blind_writes`), pages left behind (`TraceView.pages_left_behind`), target rows
never returned (`TraceView.unread_targets`), each row's chain of write images
(`CallLog.rewritten`). An advisory or metric about the same behaviour reads the same facet.
"""

from __future__ import annotations

from collections.abc import Callable

from harness_world.engine.values import typed_equal
from harness_world.grading.criteria import Check
from harness_world.grading.grade import CriterionVerdict
from harness_world.grading.rows import MISSING
from harness_world.grading.rules.common import findings, show, taxon
from harness_world.grading.taxonomy import Taxon
from harness_world.grading.trace import TraceView

__all__ = ["ENTRIES", "reverted"]


def _read_before_write(view: TraceView) -> CriterionVerdict:
    """Every target row the agent addressed was returned by a tool before a call wrote it.

    Rows a tool writes as a declared consequence (`harness_world.engine.Derived`, e.g. a
    transfer's destination stock row) are not addressed by the agent and are skipped here; the
    state criteria still see their changes.
    """
    targets = view.target_atoms
    blind = [
        f"{w.entity}:{w.key} (call {w.seq})"
        for w in view.blind_writes
        if (w.entity, w.key) in targets
    ]
    return findings(
        "trace.read_before_write",
        "trace",
        blind,
        "written before any tool returned it: ",
        "every written target was read first",
    )


def _pages_followed(view: TraceView) -> CriterionVerdict:
    unread = list(view.unread_targets)
    unfollowed = [
        f"call {p.seq} ({p.tool}, next_offset {p.next_offset})" for p in view.pages_left_behind
    ]
    failed = bool(unfollowed and unread)
    detail = "no page left behind while targets were unread"
    if failed:
        detail = f"unfollowed: {show(unfollowed)}; targets never read: {show(unread)}"
    return CriterionVerdict(
        id="trace.pages_followed",
        kind="trace",
        status="failed" if failed else "passed",
        detail=detail,
    )


def _targets_read(view: TraceView) -> CriterionVerdict:
    """Every target row was returned whole by at least one successful call."""
    return findings(
        "trace.targets_read",
        "trace",
        list(view.unread_targets),
        "never returned by a tool: ",
        "every target row was read",
    )


def _no_refused(view: TraceView) -> CriterionVerdict:
    refused = [
        f"call {c.seq} ({c.tool})"
        for c in view.log.calls
        if c.error is not None and c.error.kind == "refused"
    ]
    return findings("trace.no_refused_calls", "trace", refused, "refused: ", "no call was refused")


def _no_repeated(view: TraceView) -> CriterionVerdict:
    """An identical successful write (same tool, same arguments) issued twice: a blind retry."""
    contract = view.world.contract
    arguments = view.log.arguments
    seen: dict[tuple[str, bytes], int] = {}
    repeated: list[str] = []
    for index, call in enumerate(view.log.calls):
        spec = contract.tool(call.tool)
        if not (call.ok and spec is not None and spec.kind == "write"):
            continue
        fingerprint = (call.tool, arguments[index])
        if fingerprint in seen:
            repeated.append(f"call {call.seq} repeats call {seen[fingerprint]} ({call.tool})")
        else:
            seen[fingerprint] = call.seq
    return findings("trace.no_repeated_writes", "trace", repeated, "", "no write was issued twice")


def reverted(view: TraceView) -> list[str]:
    """Fields changed by a write and back at their start value at the end (undone writes).

    A row written once cannot have been restored: its one image goes from the start row to
    the final row (the images of a session chain, a rolled-back call leaves none), so only
    rows written two or more times (`CallLog.rewritten`) are looked at.
    """
    rewritten = view.log.rewritten
    if not rewritten:
        return []
    final = {(f.entity, f.key): f.row for f in view.record.final}
    found: list[str] = []
    for atom, chain in rewritten.items():
        start = view.world.get(*atom)
        end = final.get(atom)
        created = any(w.image.before is None and w.image.after is not None for w in chain)
        if start is None and end is None and created:
            found.append(f"{atom[0]}:{atom[1]} created then deleted")
            continue
        if start is None or end is None:
            continue
        fields = sorted({f for w in chain for f in w.fields})
        for field in fields:
            if typed_equal(start.get(field, MISSING), end.get(field, MISSING)):
                found.append(f"{atom[0]}:{atom[1]}.{field}")
    return found


def _no_reverted(view: TraceView) -> CriterionVerdict:
    """A field changed by a write and back at its start value at the end (an undone write)."""
    return findings(
        "trace.no_reverted_writes",
        "trace",
        view.once(reverted),
        "changed, then restored to the start value: ",
        "no write was undone",
    )


def _trace(
    name: str, check: Callable[[TraceView], CriterionVerdict], text: str, of: Taxon
) -> Check[TraceView]:
    return Check(
        name=f"trace.{name}",
        verdict="trace",
        layer="agent",
        definition=text,
        run=lambda view: [check(view)],
        taxon=of,
        task_name=name,
    )


ENTRIES = (
    _trace(
        "read_before_write",
        _read_before_write,
        "a target row the agent addressed was written before any tool result contained "
        "that whole row (rows a tool writes as a declared consequence are exempt)",
        taxon("Verification", "read_before_write"),
    ),
    _trace(
        "pages_followed",
        _pages_followed,
        "a listing's `next_offset` was never fetched, its `total` not stated in the final "
        "message, while some target was never returned",
        taxon("Tools", "paging"),
    ),
    _trace(
        "no_refused_calls",
        _no_refused,
        "a call ended with a `refused` error",
        taxon("Tools", "tool_refusal"),
    ),
    _trace(
        "no_reverted_writes",
        _no_reverted,
        "a field was changed and later restored to its start value (or a row created then deleted)",
        taxon("Execution", "backtracking"),
    ),
    _trace(
        "no_repeated_writes",
        _no_repeated,
        "the same successful write (same tool and arguments) was issued twice",
        taxon("Execution", "idempotency"),
    ),
    _trace(
        "targets_read",
        _targets_read,
        "some target row was never returned whole by a successful call (read-only tasks)",
        taxon("Context", "completeness"),
    ),
)
"""The trace criteria a task asks for by name, in the order the docs list them."""
