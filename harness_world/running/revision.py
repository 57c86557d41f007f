"""Revision pinning: one id for everything that changes a result, component by component."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from harness_world.engine.canonical import sha256_hex, to_json
from harness_world.engine.paths import build_identity
from harness_world.engine.world import World
from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task

__all__ = [
    "Revision",
    "RevisionMismatch",
    "build_identity",
    "diff_revisions",
    "make_revision",
    "revision_problem",
]


class Revision(msgspec.Struct, frozen=True, kw_only=True):
    """A run's revision: a hash per component and one id over all of them.

    Components: ``world:<name>`` (content, contract and tool code), ``task:<id>`` (each
    selected task's definition), ``tasks`` (which tasks), ``system_prompt``, ``agent`` (model
    and settings), ``budgets``, ``samples``, ``seed`` and ``build`` (this package's code).
    Paths, timestamps, pids and parallelism are context, never part of it.

    Attributes:
        id: SHA-256 over the components.
        components: Component name to its hash.
        values: Component name to a readable value (what was hashed, where short).
    """

    id: str
    components: dict[str, str]
    values: dict[str, Any] = {}


class RevisionMismatch(HarnessWorldError):
    """Two revisions differ; ``components`` names each component that changed."""

    def __init__(self, components: list[str], detail: str) -> None:
        super().__init__(detail)
        self.components = components


def make_revision(
    *,
    worlds: Mapping[str, World],
    tasks: Sequence[Task],
    agent_settings: Mapping[str, Any],
    budgets: Mapping[str, Any],
    samples: int,
    seed: int,
) -> Revision:
    """Pin a run: hash each component, then all of them together."""
    settings = dict(agent_settings)
    prompt = str(settings.pop("system_prompt_sha256", ""))
    values: dict[str, Any] = {
        "tasks": sorted(t.id for t in tasks),
        "system_prompt": prompt,
        "agent": settings,
        "budgets": dict(budgets),
        "samples": samples,
        "seed": seed,
        "build": build_identity(),
    }
    for name, world in sorted(worlds.items()):
        values[f"world:{name}"] = {
            "hash": world.hash,
            "contract": world.contract.hash,
            "size": world.size,
            "code": world.code_hash,
        }
    for task in tasks:
        values[f"task:{task.id}"] = task.hash
    components = {name: sha256_hex(to_json(value)) for name, value in sorted(values.items())}
    return Revision(id=sha256_hex(to_json(components)), components=components, values=values)


def revision_problem(revision: Revision, *, tasks: Sequence[str], samples: int, seed: int) -> str:
    """Why ``revision`` is not the revision of a run of these tasks, samples and seed.

    The id must be the hash of the components, each component the hash of its value, and the
    values of ``tasks``, ``samples`` and ``seed`` must be the ones given (a manifest's own
    fields): a manifest whose schedule was edited under an unchanged revision is refused.
    Empty when it holds.
    """
    if sha256_hex(to_json(revision.components)) != revision.id:
        return "the revision id is not the hash of its components"
    for name, value in revision.values.items():
        if revision.components.get(name) != sha256_hex(to_json(value)):
            return f"component {name!r} does not hash its value"
    schedule = {"tasks": sorted(tasks), "samples": samples, "seed": seed}
    for name, value in schedule.items():
        if name not in revision.values:
            return f"the revision has no value for {name!r}"
        if to_json(revision.values[name]) != to_json(value):
            return f"the schedule's {name} differ from the revision's"
    return ""


def diff_revisions(before: Revision, after: Revision) -> list[str]:
    """Names of the components that differ (added, removed or changed), sorted."""
    names = set(before.components) | set(after.components)
    return sorted(n for n in names if before.components.get(n) != after.components.get(n))


def describe_mismatch(before: Revision, after: Revision) -> str:
    """A message naming each changed component with its old and new value where short."""
    parts = []
    for name in diff_revisions(before, after):
        old, new = before.values.get(name, "absent"), after.values.get(name, "absent")
        parts += _changes(name, old, new)
    return "revision mismatch: changed " + "; ".join(parts)


def _changes(name: str, old: Any, new: Any) -> list[str]:
    """A component's change in words; of settings (a dict), each changed key (``agent.code``).

    Naming the key keeps a long value (the agent's settings) from cutting off what changed.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(k for k in set(old) | set(new) if to_json(old.get(k)) != to_json(new.get(k)))
        return [
            f"{name}.{k} ({_short(old.get(k, 'absent'))} -> {_short(new.get(k, 'absent'))})"
            for k in keys
        ] or [f"{name} ({_short(old)} -> {_short(new)})"]
    return [f"{name} ({_short(old)} -> {_short(new)})"]


def _short(value: Any) -> str:
    text = to_json(value).decode()
    return text if len(text) <= 80 else text[:77] + "..."
