"""Inputs whose figures nobody can verify: a results CSV, or one run on both sides of a gate.

A results CSV is a table anyone can type: no record behind its rows was replayed, bound to a
slot or signed, so figures read from one are labelled *unverifiable* wherever they are shown
(text, JSON and HTML). A run compared with itself (the same directory, or a copy of it: the
same revision and a byte-identical ``index.jsonl``) says nothing of a candidate. A gate
(``compare --gate``, the release ``gate``) refuses either unless told ``--allow-unverified``,
and then says so in its output.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from harness_world.engine.limits import read_regular_file
from harness_world.errors import HarnessWorldError
from harness_world.evidence.binding import INDEX
from harness_world.running.rundir import load_manifest

__all__ = [
    "ALLOW_HELP",
    "ALLOW_OPTION",
    "UnverifiedInput",
    "allowed_label",
    "csv_label",
    "gate_labels",
    "is_label",
    "refuse",
    "same_run",
    "same_run_label",
]

ALLOW_OPTION = "--allow-unverified"
"""The option that lets a gate decide on an input nobody can verify (and say so)."""
ALLOW_HELP = (
    "decide the gate even on figures nobody can verify (a results CSV, or the same run as "
    "both sides); the output says so"
)
"""The option's help, one text for every command that takes it."""

_MAX_INDEX_BYTES = 512 * 1024 * 1024  # the run reader's bound on ``index.jsonl``


class UnverifiedInput(HarnessWorldError, ValueError):
    """A gate was given an input nobody can verify, without ``--allow-unverified``."""


_CSV_WHY = (
    "no record behind its rows was replayed, bound to a slot or signed, so anyone could have "
    "written them"
)


def csv_label(path: str | Path) -> str:
    """The label of figures read from the results CSV at ``path``."""
    return f"UNVERIFIABLE: the figures come from the results CSV {path}: {_CSV_WHY}"


def same_run_label(why: str) -> str:
    """The label of a comparison whose two sides are one run (``why``: `same_run`)."""
    return f"UNVERIFIABLE: {why}: a run compared with itself says nothing of a candidate"


def allowed_label(command: str) -> str:
    """The line a gate prints when it decided on an unverifiable input it was allowed."""
    return (
        f"{ALLOW_OPTION}: {command} was decided on an input nobody can verify (see the "
        "UNVERIFIABLE line): the decision is not evidence"
    )


def refuse(argument: str, why: str, command: str) -> UnverifiedInput:
    """The refusal of an unverifiable input, naming the argument and how to allow it."""
    return UnverifiedInput(
        f"{argument}: {why}; {command} refuses it unless {ALLOW_OPTION} is given"
    )


def same_run(baseline: str | Path, candidate: str | Path) -> str:
    """Why two run directories are one run, in words; empty when they are not.

    One run: the same directory once links are resolved, or two directories with the same
    revision and byte-identical ``index.jsonl`` (its lines hash every record file's bytes,
    context included, so two executions never share it: one is a copy of the other). A side
    that cannot be read is left for the run reader to refuse.
    """
    first, second = Path(baseline), Path(candidate)
    try:
        if first.resolve() == second.resolve():
            return f"both sides are the run directory {first.resolve()}"
        revisions = {load_manifest(p).revision.id for p in (first, second)}
        indexes = {_index_sha256(p) for p in (first, second)}
    except (OSError, ValueError, RuntimeError):
        return ""
    if len(revisions) == 1 and len(indexes) == 1:
        return (
            f"{first} and {second} hold one run (revision {revisions.pop()[:16]} and "
            f"byte-identical {INDEX}: one is a copy of the other)"
        )
    return ""


def is_label(note: str) -> bool:
    """Whether a note is one of this module's labels (``UNVERIFIABLE: ...``, the allowance)."""
    return note.startswith(("UNVERIFIABLE: ", f"{ALLOW_OPTION}: "))


def gate_labels(
    inputs: Sequence[str | Path], *, gate: str, allowed: bool, command: str = "compare --gate"
) -> list[str]:
    """The labels of a comparison's unverifiable inputs; a gate refuses them unless allowed.

    Args:
        inputs: One results CSV, or the baseline and candidate run directories.
        gate: The gate asked for (``none``: no gate, the labels only).
        allowed: Whether ``--allow-unverified`` was given.
        command: How the refusal and the allowance name the command.

    Raises:
        UnverifiedInput: for a gate on a CSV or on one run as both sides, not allowed.
    """
    paths = [Path(p) for p in inputs]
    if len(paths) == 1 and not paths[0].is_dir():
        label, argument = csv_label(paths[0]), str(paths[0])
        why = f"a results CSV: {_CSV_WHY}"
    elif len(paths) == 2 and (one := same_run(*paths)):
        label, argument = same_run_label(one), f"BASELINE {paths[0]} and CANDIDATE {paths[1]}"
        why = label.removeprefix("UNVERIFIABLE: ")
    else:
        return []
    if gate == "none":
        return [label]
    if not allowed:
        raise refuse(argument, why, command)
    return [label, allowed_label(command)]


def _index_sha256(run: Path) -> str:
    """SHA-256 of a run's index bytes (no index: the hash of nothing)."""
    path = run / INDEX
    if not path.exists():
        return hashlib.sha256(b"").hexdigest()
    return hashlib.sha256(read_regular_file(path, _MAX_INDEX_BYTES)).hexdigest()
