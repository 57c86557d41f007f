"""Run directories for attempts driven from outside `harness_world.run` (MCP clients, inspect_ai).

The layout and the revision are those of `harness_world.run` (``manifest.json``,
``records/<task>/<sample>.json``, ``inventory.json``), so ``verify``, ``report`` and ``compare``
read these runs like any other. Only the agent component differs: the driver names the client
(``{"kind": "mcp" | "inspect", "name": label}``), because the model behind it is not ours to see.
"""

from __future__ import annotations

import os
import platform
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from harness_world._revision import Revision, make_revision
from harness_world._run import (
    MANIFEST,
    RunContext,
    RunManifest,
    _write_json,
    check_resumable,
    load_manifest,
)
from harness_world._task import Task
from harness_world._world import World

__all__ = ["open_run_dir"]


def open_run_dir(
    out: str | Path,
    *,
    worlds: Mapping[str, World],
    tasks: Sequence[Task],
    kind: str,
    label: str,
    samples: int,
    seed: int,
    overrides: Mapping[str, int | float],
) -> Revision:
    """Create (or resume) a run directory and write its manifest; return the pinned revision.

    Args:
        out: The run directory.
        worlds: The worlds by name (their seed sizes go into the manifest).
        tasks: The tasks served.
        kind: The driver: ``mcp`` or ``inspect``.
        label: The client's name (manifest ``agent``; part of the revision).
        samples: Samples per task (k).
        seed: The base seed.
        overrides: Budget overrides (part of the revision).

    Raises:
        harness_world.RevisionMismatch: when ``out`` holds a run of another revision.
    """
    revision = make_revision(
        worlds=worlds,
        tasks=tasks,
        agent_settings={"kind": kind, "name": label},
        budgets=dict(overrides),
        samples=samples,
        seed=seed,
    )
    root = Path(out)
    context = RunContext(
        out=str(out),
        started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        host=socket.gethostname(),
        pid=os.getpid(),
        workers=1,
        python=platform.python_version(),
    )
    if (root / MANIFEST).is_file():
        check_resumable(root, revision)
        previous = load_manifest(root)
        manifest = msgspec.structs.replace(previous, contexts=[*previous.contexts, context])
    else:
        root.mkdir(parents=True, exist_ok=True)
        manifest = RunManifest(
            revision=revision,
            agent=label,
            tasks=sorted(t.id for t in tasks),
            samples=samples,
            seed=seed,
            sizes={name: world.size for name, world in worlds.items()},
            limits=dict(overrides),
            contexts=[context],
        )
    _write_json(root / MANIFEST, manifest)
    return revision
