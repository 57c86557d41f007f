"""``run``: every selected task × k samples into a run directory (resumable, revision-pinned)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

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
from harness_world.cli.crossed import run_crossed_command
from harness_world.engine.plugins import PluginError
from harness_world.engine.world import WorldError, load_world
from harness_world.evidence.signing import SigningError, check_private_key
from harness_world.grading.task import Task, TaskError
from harness_world.grading.worlds import WorldChoice
from harness_world.integrations.agents import (
    AGENT_NAMES,
    ModelSettings,
    choose_agent,
    for_executor,
)
from harness_world.release.ablation import ABLATE_HELP
from harness_world.running.agents import Agent
from harness_world.running.executors import Concurrent, Executor, Processes, Ray, Serial
from harness_world.running.heldout import SPLIT_HELP
from harness_world.running.live_progress import run_progress
from harness_world.running.precheck import precheck
from harness_world.running.rayrun import RayTasksLost, RayUnavailable
from harness_world.running.run import default_out, run, run_summary
from harness_world.running.tracks import Fresh, Track, track_named

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
    _add_agent_options(parser)
    _add_run_options(parser)
    _add_model_options(parser)
    add_limit_options(parser)
    parser.add_argument("--json", action="store_true", help="no progress; print one JSON object")
    parser.add_argument(
        "--quiet", action="store_true", help="no progress display (the summary is still printed)"
    )
    parser.add_argument("--progress", action="store_true", help="redraw progress off a tty too")
    _add_scale_options(parser)
    parser.set_defaults(handler=main)


def _add_agent_options(parser: argparse.ArgumentParser) -> None:
    """Which agent runs: --agent, and --script for the scripted one."""
    parser.add_argument(
        "--agent",
        choices=AGENT_NAMES,
        default="oracle",
        help="oracle: the world's reference solutions; naive-retry / give-up: reference failure "
        "policies a world ships (payments: retry without an idempotency key / stop safely at "
        "the first provider error); deny-all / obey-data: refuse / follow every request found "
        "in data (payments, helpdesk); do-nothing: no tool call; scripted; openai; anthropic",
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
        "--split", type=Path, action="append", default=[], metavar="LOCK", help=SPLIT_HELP
    )
    parser.add_argument(
        "--sign-key",
        type=Path,
        help="Ed25519 private key (PEM) to sign the run's index with (extra: [sign]); a signed "
        "--out is resumed only with the key that signed it, and signed again at the end",
    )


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    """The model agents' options (--agent openai and --agent anthropic)."""
    openai = parser.add_argument_group(
        "--agent openai (any OpenAI-compatible endpoint) and --agent anthropic (Messages API)"
    )
    openai.add_argument("--model", help="model name")
    openai.add_argument(
        "--base-url",
        help="endpoint (default: $OPENAI_BASE_URL or https://api.openai.com/v1 for openai; "
        "$ANTHROPIC_BASE_URL or the SDK default for anthropic)",
    )
    openai.add_argument(
        "--api-key-env",
        help="environment variable holding the key (default OPENAI_API_KEY or ANTHROPIC_API_KEY)",
    )
    openai.add_argument(
        "--temperature",
        type=float,
        help="sampling temperature (default 0 for openai; the API's default for anthropic)",
    )
    openai.add_argument(
        "--max-tokens",
        type=int,
        default=1024,
        help="completion token cap per request (pinned in the revision; default 1024)",
    )
    openai.add_argument(
        "--request-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="per-request timeout (pinned in the revision when changed; default 60: a cold "
        "local model may need more for its first request)",
    )
    openai.add_argument(
        "--tool-calling",
        choices=("native", "text"),
        default="native",
        help="openai only. native: the API's tool calling; text: for a model without it, the "
        "tools are described in the system prompt and calls are read from the reply's text "
        "(<tool_call> blocks, fenced or bare JSON objects), results sent back as a user "
        "message (pinned in the revision when text)",
    )
    openai.add_argument(
        "--system-prompt-file", type=Path, help="system prompt text (hashed into the revision)"
    )
    openai.add_argument("--price-in", type=float, default=0.0, help="USD per million prompt tokens")
    openai.add_argument(
        "--price-out", type=float, default=0.0, help="USD per million completion tokens"
    )


def _add_scale_options(parser: argparse.ArgumentParser) -> None:
    """--concurrency, --executor and its Ray options, --track, --crossed and the save mode.

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
        choices=("fresh", "sequential"),
        default="fresh",
        help="sequential: one agent instance given the tasks one after another (memory kept)",
    )
    parser.add_argument(
        "--crossed",
        type=Path,
        metavar="FILE",
        help="a JSON list of configurations (name, harness, profile, agent, options) run "
        "over the same slots in one seeded interleaved order into --out",
    )
    parser.add_argument("--ablate", nargs="+", metavar="NAME=VALUE", help=ABLATE_HELP)
    add_ray_options(
        parser, "every attempt a Ray task, this process saving (extra: [ray])", "attempts", 16
    )
    parser.add_argument(
        "--no-group-commit",
        action="store_true",
        help="make each record durable on its own (three fsyncs) instead of in batches",
    )


def _agent(args: argparse.Namespace, choice: WorldChoice | None = None) -> Agent:
    """The agent ``--agent`` names, with the model options given (see `choose_agent`)."""
    # the one world given, as the verifier's own location; else --world as typed
    places = list(choice.locations.values()) if choice else []
    place = (places[0] if len(places) == 1 else None) or args.world
    settings = ModelSettings(
        model=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        timeout_s=args.request_timeout,
        system_prompt_file=args.system_prompt_file,
        price_in=args.price_in,
        price_out=args.price_out,
        tool_calling=args.tool_calling,
    )
    return choose_agent(args.agent, world=place, script=args.script, settings=settings)


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
        if args.crossed is not None or args.ablate:  # several configurations, interleaved
            return run_crossed_command(args, tasks, _agent, executor)
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
            splits=args.split,
            sign_key=args.sign_key,  # a signed --out is resumed only with its signer's key
            **pinned,
        )
    except RayTasksLost as exc:  # Ray workers died: the rest is committed, resumable
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
    if args.max_tokens < 1 or not args.request_timeout > 0:
        raise UsageError("--max-tokens must be at least 1 and --request-timeout above 0")
    try:
        tasks, choice = select(args)
        agent = _agent(args, choice)
    except (ValueError, TaskError, WorldError, PluginError, OSError) as exc:
        raise UsageError(str(exc)) from None
    if args.samples < 1:
        raise UsageError("--samples must be at least 1")
    agent = for_executor(agent, executor)
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

    ``--workers N`` is `Processes`, ``--concurrency N`` `Concurrent`, ``--executor ray`` (with
    ``--address``, ``--ray-batch``) `Ray`, none of them `Serial`. Flags naming two executors
    are refused here; the numbers are checked by the executor they make, and the executors a
    track runs with by the track, each quoted after the flag it came from.
    """
    track = track_named(args.track)
    chosen = [
        f"{flag} {n}"
        for flag, n in (("--workers", args.workers), ("--concurrency", args.concurrency))
        if n != 1
    ]
    if args.executor == "ray":
        chosen.append("--executor ray")
    check_ray_options(args)
    if len(chosen) > 1:
        raise UsageError(
            f"{' and '.join(chosen)}: choose one way to execute (--workers: processes; "
            "--concurrency: attempts in flight in this process; --executor ray: Ray schedules)"
        )
    if (args.crossed is not None or args.ablate) and not isinstance(track, Fresh):
        flag = "--ablate" if args.ablate else "--crossed"
        raise UsageError(f"{flag} runs every configuration fresh, not --track {args.track}")
    try:
        if args.executor == "ray":
            executor: Executor = Ray(address=args.address, batch=args.ray_batch)
        elif args.workers != 1:
            executor = Processes(args.workers)
        else:
            executor = Concurrent(args.concurrency) if args.concurrency != 1 else Serial()
    except (TypeError, ValueError, RayUnavailable) as exc:
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
