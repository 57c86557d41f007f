"""``run``: every selected task × k samples into a run directory (resumable, revision-pinned)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

import msgspec

from harness_world.cli._output import render_table
from harness_world.cli._progress import run_progress_hook
from harness_world.cli._selection import (
    UsageError,
    add_limit_options,
    add_task_options,
    limit_overrides,
    select,
    task_arguments,
)
from harness_world.cli.crossed import run_crossed_command
from harness_world.engine.plugins import PluginError
from harness_world.engine.world import WorldError, load_world
from harness_world.evidence.signing import SigningError, check_private_key, sign_run
from harness_world.grading.task import Task, TaskError
from harness_world.grading.worlds import WorldChoice
from harness_world.integrations import DEFAULT_SYSTEM_PROMPT
from harness_world.integrations.anthropic import AnthropicAgent, AsyncAnthropicAgent
from harness_world.integrations.openai import AsyncOpenAIAgent, OpenAIAgent
from harness_world.running.agents import Agent
from harness_world.running.executors import Concurrent, Executor, Processes, Ray, Serial
from harness_world.running.lock import RunDirectoryBusy
from harness_world.running.precheck import precheck
from harness_world.running.rayrun import RayTasksLost, RayUnavailable
from harness_world.running.reference_agents import (
    REFERENCE_AGENT_NAMES,
    reference_agent,
    scripted_agent,
)
from harness_world.running.revision import RevisionMismatch
from harness_world.running.run import RunProgress, RunResult, default_out, run, run_summary
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
    _add_scale_options(parser)
    parser.set_defaults(handler=main)


def _add_agent_options(parser: argparse.ArgumentParser) -> None:
    """Which agent runs: --agent, and --script for the scripted one."""
    parser.add_argument(
        "--agent",
        choices=[
            "oracle",
            "naive-retry",
            "give-up",
            "deny-all",  # authority
            "obey-data",  # authority
            "do-nothing",
            "scripted",
            "openai",
            "anthropic",
        ],
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
        "--sign-key",
        type=Path,
        help="Ed25519 private key (PEM) to sign the run's index with (extra: [sign])",
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
    parser.add_argument(  # the Ray executor
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="ray: every attempt a Ray task, this process saving (extra: [ray])",
    )
    parser.add_argument(
        "--address",
        help="with --executor ray: the Ray cluster ('auto': the one `ray start --head` started "
        "here; default: a local Ray for this run)",
    )
    parser.add_argument(  # several attempts per Ray task
        "--ray-batch",
        type=int,
        metavar="N",
        help="with --executor ray: attempts per Ray task (default: about four batches per CPU, "
        "at most 16 attempts)",
    )
    parser.add_argument(
        "--no-group-commit",
        action="store_true",
        help="make each record durable on its own (three fsyncs) instead of in batches",
    )


def _agent(args: argparse.Namespace, choice: WorldChoice | None = None) -> Agent:
    place = (choice.locations.get(_world_name(choice)) if choice else None) or args.world
    if place is None and args.agent in ("oracle", *REFERENCE_AGENT_NAMES):
        raise ValueError(f"--agent {args.agent} needs --world (whose reference solutions)")
    if args.agent in REFERENCE_AGENT_NAMES:  # the oracle and reference policies
        return reference_agent(place, args.agent)
    if args.agent == "scripted":
        if args.script is None or not args.script.is_file():
            raise ValueError("--agent scripted needs --script FILE (a .py defining SCRIPTS)")
        return scripted_agent(args.script)
    if args.agent == "anthropic":  # [integrations] the Anthropic Messages API agent
        return _anthropic_agent(args)
    if importlib.util.find_spec("openai") is None:
        raise ValueError("--agent openai needs the extra: pip install 'harness_world[openai]'")
    if not args.model:
        raise ValueError("--agent openai needs --model")
    prompt = (
        args.system_prompt_file.read_text() if args.system_prompt_file else DEFAULT_SYSTEM_PROMPT
    )
    return OpenAIAgent(
        model=args.model,
        base_url=args.base_url or os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"),
        api_key=os.environ.get(args.api_key_env or "OPENAI_API_KEY", "not-needed"),
        temperature=0.0 if args.temperature is None else args.temperature,
        max_tokens=args.max_tokens,
        timeout_s=args.request_timeout,
        system_prompt=prompt,
        price_in_per_mtok=args.price_in,
        price_out_per_mtok=args.price_out,
        tool_calling=args.tool_calling,
    )


def _anthropic_agent(args: argparse.Namespace) -> Agent:
    if args.tool_calling != "native":
        raise ValueError("--tool-calling text is for --agent openai (the Messages API has tools)")
    if importlib.util.find_spec("anthropic") is None:
        raise ValueError(
            "--agent anthropic needs the extra: pip install 'harness_world[anthropic]'"
        )
    if not args.model:
        raise ValueError("--agent anthropic needs --model")
    prompt = (
        args.system_prompt_file.read_text() if args.system_prompt_file else DEFAULT_SYSTEM_PROMPT
    )
    return AnthropicAgent(
        model=args.model,
        base_url=args.base_url or os.environ.get("ANTHROPIC_BASE_URL"),
        api_key=os.environ.get(args.api_key_env or "ANTHROPIC_API_KEY", "not-needed"),
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        timeout_s=args.request_timeout,
        system_prompt=prompt,
        price_in_per_mtok=args.price_in,
        price_out_per_mtok=args.price_out,
    )


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
        if args.crossed is not None:  # several configurations, interleaved
            return run_crossed_command(args, tasks, _agent, executor)
        world = [str(p) for p in choice.folders().values()] or None
        out = args.out or default_out(
            tasks,
            agent,
            samples=args.samples,
            seed=args.seed,
            size=args.size,
            limits=limit_overrides(args),
            track=track,
            world=world,
        )
        result = run(
            tasks,
            agent,
            samples=args.samples,
            seed=args.seed,
            out=out,
            size=args.size,
            limits=limit_overrides(args),
            retries=args.retries,
            executor=executor,
            track=track,
            group_commit=not args.no_group_commit,
            world=world,
            # live progress on a terminal, the plain counter otherwise
            progress=run_progress_hook(
                _progress(show=not args.json), quiet=args.quiet, enabled=not args.json
            ),
        )
        if args.sign_key:
            sign_run(result.out, result.revision.id, args.sign_key)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (RevisionMismatch, RunDirectoryBusy) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
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
    _summary(result, as_json=args.json, recheck=_recheck_options(args))
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


def _world_name(choice: WorldChoice) -> str:
    """The one world a command was given (empty when none or several)."""
    return next(iter(choice.locations)) if len(choice.locations) == 1 else ""


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
    agent = _for_executor(agent, executor)
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
    for option, value in (("--address", args.address), ("--ray-batch", args.ray_batch)):
        if value is not None and args.executor != "ray":
            raise UsageError(f"{option} needs --executor ray")
    if len(chosen) > 1:
        raise UsageError(
            f"{' and '.join(chosen)}: choose one way to execute (--workers: processes; "
            "--concurrency: attempts in flight in this process; --executor ray: Ray schedules)"
        )
    if args.crossed is not None and not isinstance(track, Fresh):
        raise UsageError(
            f"--crossed runs every configuration on the fresh track, not --track {args.track}"
        )
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


def _for_executor(agent: Agent, executor: Executor) -> Agent:
    """Attempts in flight in this process run the model agents on their SDK's async client.

    Attempts in flight then overlap their waiting on one event loop; settings, hence the
    revision and the records, stay the same.
    """
    # `run` accepts an agent whose `run` is a coroutine function (units.is_async_agent);
    # the Agent protocol spells the synchronous form.
    if isinstance(executor, Concurrent) and executor.attempts > 1:
        if isinstance(agent, OpenAIAgent):
            return cast(Agent, AsyncOpenAIAgent(agent))
        if isinstance(agent, AnthropicAgent):
            return cast(Agent, AsyncAnthropicAgent(agent))
    return agent


def _refused(tasks: list[Task], args: argparse.Namespace, choice: WorldChoice) -> bool:
    limits = limit_overrides(args)
    checked = precheck(tasks, size=args.size, limits=limits, worlds=choice)
    refused = [f for f in checked if f.verdict == "refuse"]
    for f in refused:
        print(f"refused: {f.task_id}: {f.message}", file=sys.stderr)
    if refused:
        print("error: infeasible setup; no attempt was made (see `precheck`)", file=sys.stderr)
    return bool(refused)


def _progress(*, show: bool) -> Callable[[RunProgress], None]:
    def progress(p: RunProgress) -> None:
        if show:
            print(
                f"\r{p.done}/{p.total} attempts: {p.passed} passed, {p.failed} failed, "
                f"{p.ungraded} ungraded",
                end="\n" if p.done == p.total else "",
                file=sys.stderr,
                flush=True,
            )

    return progress


def _summary(result: RunResult, *, as_json: bool, recheck: str = "") -> None:
    summary = run_summary(result)
    if as_json:
        print(json.dumps(msgspec.to_builtins(summary), indent=1))
        return
    print(f"run directory: {result.out}")
    print(f"revision: {result.revision.id[:16]} ({len(result.revision.components)} components)")
    if result.resumed:
        print(f"resumed: {result.resumed} record(s) were already saved and kept")
    keys = ["scheduled", "executed", "valid", "invalid", "retried", "missing", "passed", "failed"]
    counts = msgspec.to_builtins(summary.counts)
    print(render_table(keys, [[str(counts[k]) for k in keys]]))
    for slot, failed in summary.failed.items():  # one short reason per failed criterion
        reasons = [r if len(r) <= 120 else r[:119] + "…" for r in failed]
        print(f"failed {slot}: " + "; ".join(reasons))
    not_reviewed = sum(len(open_) for open_ in summary.not_reviewed.values())
    if not_reviewed:
        print(f"{not_reviewed} prose criteria not reviewed (a person reviews them)")
    for line in summary.invalid:
        print(f"invalid {line}")
    print(f"\nre-check it: python -m harness_world verify {result.out}{recheck}")
