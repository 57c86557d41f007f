"""``run``: every selected task × k samples into a run directory (resumable, revision-pinned)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import msgspec

from harness_world.analysis.listings import render_refusals
from harness_world.analysis.report_text import render_run_summary
from harness_world.cli._selection import (
    UsageError,
    add_limit_options,
    add_ray_options,
    add_task_options,
    check_ray_options,
    limit_overrides,
    select,
    task_arguments,
)
from harness_world.engine.plugins import PluginError
from harness_world.engine.world import WorldError, load_world
from harness_world.errors import HarnessWorldError
from harness_world.evidence.signing import SigningError, check_private_key
from harness_world.grading.task import Task, TaskError
from harness_world.grading.worlds import WorldChoice
from harness_world.registry import registry, resolve
from harness_world.running.agents import Agent
from harness_world.running.executors import (
    AttemptsLost,
    Concurrent,
    Executor,
    Processes,
    Serial,
)
from harness_world.running.live_progress import run_progress
from harness_world.running.precheck import precheck
from harness_world.running.reference_agents import CORE_AGENT_NAMES, named_agent
from harness_world.running.run import RunHook, default_out, run, run_summary
from harness_world.running.tracks import Track, track_named, track_names

__all__ = ["RunSetup", "register"]


@attrs.frozen(slots=True)
class RunSetup:
    """What ``run`` has prepared when an extension's options may take the command over.

    Attributes:
        tasks: The tasks selected.
        make_agent: Makes the agent ``--agent`` names from a namespace of ``run``'s options
            (an extension running several configurations changes some of them).
        executor: The executor the execution flags chose.
        track: The track ``--track`` chose.
    """

    tasks: list[Task]
    make_agent: Callable[[argparse.Namespace], Agent]
    executor: Executor
    track: Track


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
    _add_agent_options(parser)
    _add_run_options(parser)
    add_limit_options(parser)
    parser.add_argument("--json", action="store_true", help="no progress; print one JSON object")
    parser.add_argument(
        "--quiet", action="store_true", help="no progress display (the summary is still printed)"
    )
    parser.add_argument("--progress", action="store_true", help="redraw progress off a tty too")
    _add_scale_options(parser)
    for options in registry().command_options("run"):  # model agents, splits, crossed runs
        options.add_arguments(parser)
    parser.set_defaults(handler=main)


def _add_agent_options(parser: argparse.ArgumentParser) -> None:
    """Which agent runs: --agent, and --script for the scripted one."""
    extensions = list(registry().agents)
    parser.add_argument(
        "--agent",
        choices=[*CORE_AGENT_NAMES, *extensions],
        default="oracle",
        help="oracle: the world's reference solutions; naive-retry / give-up: reference failure "
        "policies a world ships (payments: retry without an idempotency key / stop safely at "
        "the first provider error); deny-all / obey-data: refuse / follow every request found "
        "in data (payments, helpdesk); do-nothing: no tool call; scripted; "
        + "; ".join(extensions),
    )
    parser.add_argument(
        "--script",
        type=Path,
        help="for --agent scripted: a .py file defining SCRIPTS = {task_id: script}",
    )


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """How the run goes: samples, seed, workers, retries, output, precheck and signing."""
    parser.add_argument("--samples", type=int, default=1, help="samples per task (k)")
    parser.add_argument(
        "--seed", type=int, default=0, help="base seed (sample seeds derive from it)"
    )
    parser.add_argument("--workers", type=int, default=1, help="parallel processes")
    parser.add_argument(
        "--retries",
        type=int,
        default=1,
        help="re-executions of an attempt whose infrastructure failed (agent errors count)",
    )
    parser.add_argument("--out", type=Path, help="run directory (default runs/<revision prefix>)")
    parser.add_argument("--no-precheck", action="store_true", help="skip the feasibility precheck")
    parser.add_argument(
        "--sign-key",
        type=Path,
        help="Ed25519 private key (PEM) to sign the run's index with (extra: [sign]); a signed "
        "--out is resumed only with the key that signed it, and signed again at the end",
    )


def _add_scale_options(parser: argparse.ArgumentParser) -> None:
    """--concurrency, --executor and its options, --track and the save mode.

    With --workers they choose one executor and a track, read in one place (`_execution`).
    """
    parser.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="attempts in flight at once in this process (async agents; others in threads)",
    )
    parser.add_argument(
        "--track",
        choices=track_names(),
        default="fresh",
        help="sequential: one agent instance given the tasks one after another (memory kept)",
    )
    add_ray_options(
        parser, "every attempt a Ray task, this process saving (extra: [ray])", "attempts", 16
    )
    parser.add_argument(
        "--no-group-commit",
        action="store_true",
        help="make each record durable on its own (three fsyncs) instead of in batches",
    )


def _agent(args: argparse.Namespace, choice: WorldChoice | None = None) -> Agent:
    """The agent ``--agent`` names: the core's (`named_agent`) or an extension's factory."""
    # the one world given, as the verifier's own location; else --world as typed
    places = list(choice.locations.values()) if choice else []
    place = (places[0] if len(places) == 1 else None) or args.world
    reference = registry().agents.get(args.agent)
    if reference is None:
        return named_agent(args.agent, world=place, script=args.script)
    agent: Agent = resolve(reference)(args, place)
    return agent


def _hooks(args: argparse.Namespace) -> list[RunHook]:
    """What the extensions' options make the run do around its attempts (held-out ledgers)."""
    return [hook for ref in registry().run_hooks for hook in resolve(ref)(args)]


def main(args: argparse.Namespace) -> int:
    """Precheck, then run, printing progress on stderr and a summary.

    Exit 0 when every attempt is valid, 1 when the precheck refuses or any attempt is invalid
    (infrastructure failure, unverified record), 2 on usage or environment errors.
    """
    try:
        executor, track = _execution(args)
        tasks, agent, choice = _prepare(args, executor)
        if not args.no_precheck and _refused(tasks, args, choice):
            return 1
        setup = RunSetup(tasks, _agent, executor, track)
        for options in registry().command_options("run"):  # several configurations, ...
            code = options.take_over(args, setup)
            if code is not None:
                return code
        world = [str(p) for p in choice.folders().values()] or None
        # what pins the revision, hence the default directory too
        pinned: dict[str, Any] = {"samples": args.samples, "seed": args.seed, "size": args.size}
        pinned.update(limits=limit_overrides(args), track=track, world=world)
        result = run(
            tasks,
            agent,
            out=args.out or default_out(tasks, agent, **pinned),
            retries=args.retries,
            executor=executor,
            group_commit=not args.no_group_commit,
            # live on a terminal (or with --progress), whole lines now and then otherwise
            progress=run_progress(quiet=args.quiet, json=args.json, force=args.progress),
            hooks=_hooks(args),
            sign_key=args.sign_key,  # a signed --out is resumed only with its signer's key
            **pinned,
        )
    except AttemptsLost as exc:  # remote workers died: the rest is committed, resumable
        print(f"{'' if args.json else chr(10)}error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # disk full, read-only run directory, ...: nothing torn, resumable
        newline = "" if args.json else "\n"  # end a progress line left open
        print(
            f"{newline}error: {_os_error(exc)} (records saved so far are kept; run again to "
            "resume)",
            file=sys.stderr,
        )
        return 2
    if args.json:
        print(json.dumps(msgspec.to_builtins(run_summary(result)), indent=1))
    else:
        sys.stdout.write(render_run_summary(result, _recheck_options(args)))
    return 1 if result.counts.invalid else 0


def _recheck_options(args: argparse.Namespace) -> str:
    """The options a verifier of this run gives for a world folder of its own (else none)."""
    if not args.world or "/" not in str(args.world):
        return ""
    folder, _ = task_arguments(args.tasks)
    return f" --world {args.world}" + (f" --tasks {folder}" if folder is not None else "")


def _os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _prepare(args: argparse.Namespace, executor: Executor) -> tuple[list[Task], Agent, WorldChoice]:
    try:
        tasks, choice = select(args)
        agent = _agent(args, choice)
    except (ValueError, TaskError, WorldError, PluginError, OSError) as exc:
        raise UsageError(str(exc)) from None
    if args.samples < 1:
        raise UsageError("--samples must be at least 1")
    if args.sign_key:
        try:
            check_private_key(args.sign_key)
        except SigningError as exc:
            raise UsageError(f"--sign-key: {exc}") from None
    try:  # every world at --size, before any attempt
        for name in {t.world for t in tasks}:
            load_world(choice.source(name), size=args.size)
    except WorldError as exc:
        raise UsageError(f"--size {args.size}: {exc}") from None
    return tasks, agent, choice


def _execution(args: argparse.Namespace) -> tuple[Executor, Track]:
    """The execution flags as one executor and one track; any conflict is one usage error.

    ``--workers N`` is `Processes`, ``--concurrency N`` `Concurrent`, ``--executor NAME`` an
    extension's executor (``ray``, with ``--address``, ``--ray-batch``), none of them `Serial`.
    Flags naming two executors are refused here; the numbers are checked by the executor they
    make, and the executors a track runs with by the track, each quoted after the flag it came
    from.
    """
    track = track_named(args.track)
    chosen = [
        f"{flag} {n}"
        for flag, n in (("--workers", args.workers), ("--concurrency", args.concurrency))
        if n != 1
    ]
    if args.executor != "local":
        chosen.append(f"--executor {args.executor}")
    check_ray_options(args)
    if len(chosen) > 1:
        raise UsageError(
            f"{' and '.join(chosen)}: choose one way to execute (--workers: processes; "
            "--concurrency: attempts in flight in this process; --executor: an extension's)"
        )
    try:
        if args.executor != "local":
            executor: Executor = resolve(registry().executors[args.executor])(args)
        elif args.workers != 1:
            executor = Processes(args.workers)
        else:
            executor = Concurrent(args.concurrency) if args.concurrency != 1 else Serial()
    except (TypeError, ValueError, HarnessWorldError) as exc:
        raise UsageError(f"{chosen[0]}: {exc}") from None
    try:
        track.check(executor)
    except ValueError as exc:
        raise UsageError(f"--track {args.track} with {chosen[0]}: {exc}") from None
    return executor, track


def _refused(tasks: list[Task], args: argparse.Namespace, choice: WorldChoice) -> bool:
    checked = precheck(tasks, size=args.size, limits=limit_overrides(args), worlds=choice)
    sys.stderr.write(render_refusals(checked))
    return any(f.verdict == "refuse" for f in checked)
