"""Verification: replay a record first, then, only if it verifies, grade it against its task."""

from __future__ import annotations

from pathlib import Path

import msgspec

from harness_world.engine.world import World, WorldError, load_trusted_world
from harness_world.evidence.record import Record, RecordError, load_record
from harness_world.evidence.replay import Evidence, Mismatch, replay
from harness_world.grading.checker import grade
from harness_world.grading.grade import Grade
from harness_world.grading.task import Task

__all__ = [
    "Verification",
    "offered_mismatch",
    "replayed_verification",
    "resolve_world",
    "task_mismatch",
    "verify",
    "verify_file",
]


class Verification(msgspec.Struct, frozen=True, kw_only=True):
    """The result of checking a record.

    Attributes:
        evidence: ``verified`` (replayed with no difference), ``ungraded`` (anything differs,
            or the world's hash does not match), or ``lost`` (record or world unreadable).
        mismatches: Every difference found (capped at 200), first one first.
        grade: The checker's grade; present only for verified evidence graded against a task.
        reason: Why the evidence is not verified, in words.
        not_graded: Why a verified record carries no grade although a task was given (the
            task is not the one the record was made for); empty otherwise.
    """

    evidence: Evidence
    mismatches: list[Mismatch] = []
    grade: Grade | None = None
    reason: str = ""
    not_graded: str = ""


def task_mismatch(record: Record, task: Task) -> str:
    """Why ``task`` is not the task ``record`` was made for (empty when it is).

    A record is graded only against the task with its id, its hash and its world: a task edited
    since the record was made is a different task, and grading old evidence against new
    criteria would silently change results.
    """
    if task.id != record.task_id:
        return f"the record is for task {record.task_id!r}, not {task.id!r}"
    if task.world != record.world.name:
        return f"task {task.id!r} is of world {task.world!r}, the record of {record.world.name!r}"
    if task.hash != record.task_hash:
        return f"task {task.id!r} has changed since the record was made (hash differs)"
    return ""


def resolve_world(record: Record) -> World:
    """Load the world a record names: a built-in world at a size it declares.

    The record's name and size are looked up, never used as a path or import target (see
    `load_trusted_world`); a user's own world is passed by the verifier as ``world=``.

    Raises:
        WorldError: when the name is not a built-in world or the size is not declared.
    """
    return load_trusted_world(record.world.name, record.world.size)


# What encoding a hostile in-memory record can raise (nesting past the encoder's depth,
# non-JSON objects, out-of-range numbers): records read from files are held to the limits
# on loading and never get here.
_UNENCODABLE = (RecursionError, TypeError, ValueError, OverflowError, msgspec.EncodeError)


def verify(
    record: Record,
    world: World | None = None,
    task: Task | None = None,
    *,
    work_limit: int | None = None,
) -> Verification:
    """Replay a record and, if it verifies and a task is given, grade it.

    Args:
        record: The record to check.
        world: The world to replay against; by default the built-in world the record names.
        task: The task to grade against. Grading happens only for verified evidence, so an
            ungraded record never has a grade, and only when ``task`` is the task the record
            was made for (same id, world and hash); otherwise ``not_graded`` says why.
        work_limit: The most rows replay may examine (None: no bound; see `replay`).

    Raises:
        ReplayBound: when replay examines more than ``work_limit`` rows.
    """
    if record.synthetic:  # a fork's invented observation is not evidence
        seqs = ", ".join(str(x.seq) for x in record.synthetic)
        return Verification(
            evidence="ungraded",
            reason=f"synthetic: a counterfactual fork showed invented results (calls {seqs}); "
            "not evidence of an attempt",
        )
    if world is None:
        try:
            world = resolve_world(record)
        except (WorldError, OSError) as exc:
            return Verification(evidence="lost", reason=f"world cannot be loaded: {exc}")
    try:
        _, mismatches = replay(record, world, work_limit=work_limit)
    except _UNENCODABLE as exc:  # an in-memory record never loaded under the file limits
        return Verification(
            evidence="ungraded",
            reason="the record holds values no JSON encoding carries "
            f"({type(exc).__name__}: {str(exc)[:200]})",
        )
    if mismatches:
        first = mismatches[0]
        reason = (
            "world hash differs"
            if first.path == "world.hash"
            else f"{len(mismatches)} difference(s); first: {first}"
        )
        return Verification(evidence="ungraded", mismatches=mismatches, reason=reason)
    return replayed_verification(record, world, task)


def replayed_verification(record: Record, world: World, task: Task | None) -> Verification:
    """The verification of a record whose replay found no difference: graded when it may be.

    What `verify` returns after a clean replay; a caller that knows the record's bytes
    replayed cleanly (its own authenticated judgement of the same bytes, world and build)
    may ask for it without replaying them again.
    """
    if task is None:
        return Verification(evidence="verified")
    wrong_task = task_mismatch(record, task)
    if wrong_task:
        return Verification(evidence="verified", not_graded=wrong_task)
    offered = offered_mismatch(record, task)
    if offered:
        return Verification(evidence="ungraded", reason=offered)
    return Verification(evidence="verified", grade=grade(record, task, world))


def offered_mismatch(record: Record, task: Task) -> str:
    """Why the tools ``record`` says it offered are not ``task``'s allow-list (empty: they are).

    Replay refuses calls under the allow-list the record states, so a record that drops or
    widens it would replay a refused call as a success; its task (same id and hash) says
    which tools the attempt had to be held to.
    """
    stated = None if isinstance(record.tools, msgspec.UnsetType) else sorted(record.tools)
    wanted = None if task.tools is None else sorted(task.tools)
    if stated == wanted:
        return ""
    every = "every tool"
    return (
        f"the record offered {every if stated is None else stated}, but task {task.id!r} "
        f"offers {every if wanted is None else wanted}"
    )


def verify_file(
    path: str | Path, world: World | None = None, task: Task | None = None
) -> tuple[Record | None, Verification]:
    """Load and verify one record file; an unreadable file is ``lost`` evidence, never a crash."""
    try:
        record = load_record(path)
    except RecordError as exc:
        return None, Verification(evidence="lost", reason=str(exc))
    return record, verify(record, world, task)
