"""Shared helpers for the trust tests: CLI calls, resealing, small run directories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

import harness_world as hw
from harness_world.coverage import ScriptContext, load_oracles
from harness_world.engine.canonical import sha256_hex, to_json
from harness_world.evidence.record import record_digest

TASKS = ("helpdesk.reply_and_solve", "helpdesk.security_count")


def reseal(record: hw.Record) -> hw.Record:
    return msgspec.structs.replace(record, digest=record_digest(record))


def rescheduled(revision: dict[str, Any], **schedule: Any) -> dict[str, Any]:
    """A manifest's revision (as JSON) rebuilt, consistently, for an edited schedule: what a
    forger who recomputes every hash writes."""
    values = {**revision["values"], **schedule}
    components = {name: sha256_hex(to_json(value)) for name, value in sorted(values.items())}
    return {"id": sha256_hex(to_json(components)), "components": components, "values": values}


def tasks(*ids: str) -> list[hw.Task]:
    wanted = ids or TASKS
    return [t for t in hw.load_tasks("helpdesk") if t.id in wanted]


def do_nothing(ctx: ScriptContext) -> str:
    """A wrong answer for every task: no calls, a final message that answers nothing."""
    return "Done."


def oracle_run(out: Path, samples: int = 1) -> Path:
    hw.run(tasks(), hw.oracle_agent("helpdesk"), samples=samples, out=out)
    return out


def failing_run(out: Path, samples: int = 1) -> Path:
    agent = hw.ScriptedAgent(name="lazy", scripts=dict.fromkeys(TASKS, do_nothing))
    hw.run(tasks(), agent, samples=samples, out=out)
    return out


def oracle_script(task_id: str):  # type: ignore[no-untyped-def]
    return load_oracles("helpdesk")[task_id]


def keypair(folder: Path, name: str = "key") -> tuple[Path, Path]:
    """A fresh Ed25519 key pair as PEM files ``<name>.pem`` / ``<name>.pub`` in ``folder``."""
    from harness_world.evidence.signing import write_keypair

    private, public = folder / f"{name}.pem", folder / f"{name}.pub"
    write_keypair(private, public)
    return private, public
