"""``run``: every selected task × k samples into a run directory (resumable, revision-pinned)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import msgspec

from harness_world.cli import tau2  # tau2: τ² tasks with a simulated user
from harness_world.cli._output import render_table
from harness_world.cli._selection import (
    add_limit_options,
    add_task_options,
    limit_overrides,
    select_tasks,
)
from harness_world.engine.plugins import PluginError, import_path
from harness_world.engine.world import WorldError, load_world
from harness_world.grading.task import TaskError
from harness_world.running.agents import Agent, ScriptedAgent, oracle_agent
from harness_world.running.precheck import precheck
from harness_world.running.revision import RevisionMismatch
from harness_world.running.run import RunProgress, run

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` command."""
    parser = sub.add_parser(
        "run",
        help="run an agent over tasks, k samples each, into a run directory",
        description=(
            "Run every selected task k times, each attempt in a fresh session with its own seed, "
            "and save each record the moment it ends. Running again into the same --out resumes "
            "(kept records are not re-run); a changed revision component refuses, naming it. "
            "The feasibility precheck runs first: an infeasible setup makes no model request."
        ),
    )
    add_task_options(parser, world_required=True)
    parser.add_argument("--agent", choices=["oracle", "scripted", "openai"], default="oracle")
    parser.add_argument(
        "--script",
        type=Path,
        help="for --agent scripted: a .py file defining SCRIPTS = {task_id: script}",
    )
    parser.add_argument("--samples", type=int, default=1, help="samples per task (k)")
    parser.add_argument(
        "--seed", type=int, default=0, help="base seed (sample seeds derive from it)"
    )
    parser.add_argument("--workers", type=int, default=1, help="parallel processes")
    parser.add_argument(
        "--retries", type=int, default=1, help="re-executions of an attempt that ended in error"
    )
    parser.add_argument("--out", type=Path, help="run directory (default runs/<revision prefix>)")
    parser.add_argument("--no-precheck", action="store_true", help="skip the feasibility precheck")
    openai = parser.add_argument_group("--agent openai (any OpenAI-compatible endpoint)")
    openai.add_argument("--model", help="model name")
    openai.add_argument(
        "--base-url", default=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    )
    openai.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key"
    )
    openai.add_argument("--temperature", type=float, default=0.0)
    openai.add_argument(
        "--system-prompt-file", type=Path, help="system prompt text (hashed into the revision)"
    )
    openai.add_argument("--price-in", type=float, default=0.0, help="USD per million prompt tokens")
    openai.add_argument(
        "--price-out", type=float, default=0.0, help="USD per million completion tokens"
    )
    add_limit_options(parser)
    parser.add_argument("--json", action="store_true", help="no progress; print one JSON object")
    tau2.add_run_command_options(parser)  # tau2: --world tau2_retail --data DIR --user …
    parser.set_defaults(handler=tau2.route_run_command(main))  # tau2: else main


def _agent(args: argparse.Namespace) -> Agent:
    if args.agent == "oracle":
        return oracle_agent(args.world)
    if args.agent == "scripted":
        if args.script is None or not args.script.is_file():
            raise ValueError("--agent scripted needs --script FILE (a .py defining SCRIPTS)")
        module = import_path(args.script, "scripts")
        scripts = getattr(module, "SCRIPTS", None)
        if not isinstance(scripts, dict):
            raise ValueError(f"{args.script}: defines no SCRIPTS dict of task id to script")
        return ScriptedAgent(name=f"scripted:{args.script.stem}", scripts=scripts)
    if importlib.util.find_spec("openai") is None:
        raise ValueError("--agent openai needs the extra: pip install 'harness_world[openai]'")
    if not args.model:
        raise ValueError("--agent openai needs --model")
    from harness_world.openai_agent import DEFAULT_SYSTEM_PROMPT, OpenAIAgent

    prompt = (
        args.system_prompt_file.read_text() if args.system_prompt_file else DEFAULT_SYSTEM_PROMPT
    )
    return OpenAIAgent(
        model=args.model,
        base_url=args.base_url,
        api_key=os.environ.get(args.api_key_env, "not-needed"),
        temperature=args.temperature,
        system_prompt=prompt,
        price_in_per_mtok=args.price_in,
        price_out_per_mtok=args.price_out,
    )


def main(args: argparse.Namespace) -> int:
    """Precheck, then run, printing progress on stderr and a summary."""
    try:
        tasks = select_tasks(args)
        agent = _agent(args)
    except (ValueError, TaskError, WorldError, PluginError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.samples < 1 or args.workers < 1:
        print("error: --samples and --workers must be at least 1", file=sys.stderr)
        return 2
    limits = limit_overrides(args)
    try:
        worlds = {w: load_world(w, size=args.size) for w in {t.world for t in tasks}}
    except WorldError as exc:
        print(f"error: --size {args.size}: {exc}", file=sys.stderr)
        return 2
    if not args.no_precheck:
        refused = [
            f for f in precheck(tasks, size=args.size, limits=limits) if f.verdict == "refuse"
        ]
        if refused:
            for f in refused:
                print(f"refused: {f.task_id}: {f.message}", file=sys.stderr)
            print("error: infeasible setup; no attempt was made (see `precheck`)", file=sys.stderr)
            return 1
    out = args.out
    if out is None:
        from harness_world.running.revision import make_revision

        pinned = make_revision(
            worlds=worlds,
            tasks=tasks,
            agent_settings=agent.settings(),
            budgets={k: v for k, v in limits.items() if v is not None},
            samples=args.samples,
            seed=args.seed,
        )
        out = Path("runs") / pinned.id[:12]
    show = not args.json

    def progress(p: RunProgress) -> None:
        if show:
            print(
                f"\r{p.done}/{p.total} attempts: {p.passed} passed, {p.failed} failed, "
                f"{p.ungraded} ungraded",
                end="\n" if p.done == p.total else "",
                file=sys.stderr,
                flush=True,
            )

    try:
        result = run(
            tasks,
            agent,
            samples=args.samples,
            seed=args.seed,
            workers=args.workers,
            out=out,
            size=args.size,
            limits=limits,
            retries=args.retries,
            progress=progress,
        )
    except RevisionMismatch as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = msgspec.to_builtins(result.counts)
    if args.json:
        payload: dict[str, Any] = {
            "out": str(result.out),
            "revision": result.revision.id,
            "resumed": result.resumed,
            "counts": counts,
        }
        print(json.dumps(payload, indent=1))
        return 0
    print(f"run directory: {result.out}")
    print(f"revision: {result.revision.id[:16]} ({len(result.revision.components)} components)")
    if result.resumed:
        print(f"resumed: {result.resumed} record(s) were already saved and kept")
    keys = ["scheduled", "executed", "valid", "invalid", "retried", "missing", "passed", "failed"]
    print(render_table(keys, [[str(counts[k]) for k in keys]]))
    print(f"\nre-check it: python -m harness_world verify {result.out}")
    return 0
