"""``mcp``: serve attempts to an MCP client over stdio or HTTP (extra ``[mcp]``)."""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from harness_world.cli._selection import (
    UsageError,
    add_limit_options,
    add_one_task_options,
    add_world_data_options,
    limit_overrides,
    served_task,
)
from harness_world.integrations.mcp import (
    announcement,
    attempt_server,
    serve,
    serve_summary,
    token_problem,
    uncounted_budget,
)
from harness_world.running.output_paths import record_path_problem, run_dir_problem

if TYPE_CHECKING:
    from harness_world.integrations.mcp import AttemptServer

__all__ = ["register"]

_DESCRIPTION = (
    "Serve one task's attempt to an MCP client over stdio (or streamable HTTP): the world's "
    "tools, a `finish` tool, the instruction as the server's instructions and prompt `task`; "
    "typed errors are MCP tool errors. The record is saved on `finish` (completed), a budget "
    "hit (budget_limit) or a disconnect (interrupted). --samples k --out RUN serves k attempts "
    "into a run directory (`report RUN` gives pass^k), each to a fresh MCP session in a fresh "
    "world; a session's calls after its attempt are refused. Over stdio a process is one "
    "session: run the client again (same --out) until none remain. Over HTTP each new session "
    "gets the next sample, one in flight at a time (others: busy). A session that called a "
    "tool and ends without `finish` is its sample's one attempt, counted and never served "
    "again. Sessions do not expire; stopping the server seals the attempt in flight. The "
    "server holds the run directory's lock; needs the [mcp] extra; only the protocol goes to "
    "stdout, the summary to stderr. Over HTTP every request carries `Authorization: Bearer "
    "<token>` (generated and printed once on stderr with the URL, or --token; others get "
    "401): one attempt per token, so one server, with its own token, per client under test."
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mcp`` command."""
    parser = sub.add_parser(
        "mcp",
        help="serve an attempt (or k) to an MCP client over stdio or HTTP",
        description=_DESCRIPTION,
    )
    add_one_task_options(parser)
    add_world_data_options(parser)
    parser.add_argument("--seed", type=int, default=0, help="session seed (--samples: base seed)")
    parser.add_argument(
        "--record", type=Path, default=Path("mcp-record.json"), help="one attempt's record file"
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing --record")
    parser.add_argument(
        "--samples",
        type=int,
        help="serve k attempts into the run directory --out, one per MCP session (stdio: one "
        "per server process; run the client again to serve the next)",
    )
    parser.add_argument(
        "--reveal-grade",
        action="store_true",
        help="tell the client its grade and failed criteria in each finish reply (off by "
        "default: a client that learns its grade carries it into the next sample)",
    )
    parser.add_argument("--out", type=Path, help="run directory for --samples (resumable)")
    parser.add_argument(
        "--client-label", default="mcp-client", help="the client's name in manifest and revision"
    )
    _add_transport_options(parser)
    add_limit_options(parser)
    parser.set_defaults(handler=main)


def _add_transport_options(parser: argparse.ArgumentParser) -> None:
    """``--transport``, ``--port`` and how HTTP clients authenticate."""
    parser.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default), or streamable HTTP on 127.0.0.1 (the first line on stderr, "
        'printed once the server listens, is {"url": ..., "auth": "bearer", "token": ...}; '
        "stop the server with SIGTERM or Ctrl-C, which seals the attempt in flight)",
    )
    parser.add_argument("--port", type=int, default=0, help="for --transport http (0: any free)")
    parser.add_argument(
        "--token",
        help="for --transport http: the bearer token clients must send, instead of a generated "
        "one (a command line is visible to other local processes; prefer the generated token)",
    )
    parser.add_argument(
        "--no-auth",
        action="store_true",
        help="for --transport http: accept requests without a token, so that any local process "
        "can call the attempt's tools and finish it (said again on stderr)",
    )


def main(args: argparse.Namespace) -> int:
    """Serve until the client disconnects; print what was saved on stderr as one JSON object."""
    if importlib.util.find_spec("mcp") is None:
        raise UsageError("the mcp command needs the extra: pip install 'harness_world[mcp]'")
    _check_options(args)
    world, task = served_task(args)
    state = attempt_server(
        world,
        task,
        samples=args.samples,
        out=args.out,
        record=args.record,
        seed=args.seed,
        label=args.client_label,
        limits=limit_overrides(args),
        reveal_grade=args.reveal_grade,
    )
    try:
        _serve_until_done(args, state)
    finally:
        state.release()
    _summary(state)
    return 0


def _check_options(args: argparse.Namespace) -> None:
    """Refuse options that cannot be served; the output path is checked (and made) here."""
    if (args.samples is None) != (args.out is None):
        raise UsageError("--samples and --out go together (k attempts into a run directory)")
    if args.samples is not None and args.samples < 1:
        raise UsageError("--samples must be at least 1")
    if problem := uncounted_budget(limit_overrides(args)):
        raise UsageError(problem)
    _check_auth(args)
    # Checked before serving, so that no attempt is played only to be lost when it is saved.
    if args.samples is not None and (problem := run_dir_problem(args.out)):
        raise UsageError(f"--out {args.out}: {problem}")
    if args.samples is None and (problem := record_path_problem(args.record, args.force)):
        raise UsageError(f"--record {args.record}: {problem}")


def _check_auth(args: argparse.Namespace) -> None:
    """Refuse --token and --no-auth where they cannot apply, or a token no header carries."""
    if args.token is None and not args.no_auth:
        return
    if args.transport != "http":
        raise UsageError("--token and --no-auth are for --transport http")
    if args.token is not None and args.no_auth:
        raise UsageError("--token and --no-auth exclude each other")
    if args.token is not None and token_problem(args.token):
        raise UsageError(f"--token {token_problem(args.token)}")


def _serve_until_done(args: argparse.Namespace, state: AttemptServer) -> None:
    """Serve over the chosen transport, then seal what is in flight."""
    token = None if args.no_auth else (args.token or secrets.token_urlsafe(32))
    ready = functools.partial(_announce, token=token, generated=args.token is None)
    try:
        serve(
            state,
            transport=args.transport,
            port=args.port,
            token=token,
            on_ready=ready,
            on_signal=_summary,
        )
    except OSError as exc:
        raise UsageError(f"--port {args.port}: {exc}") from None


def _announce(url: str, *, token: str | None, generated: bool) -> None:
    """The first line on stderr, once the server listens: where, and how to authenticate."""
    print(announcement(url, token, generated=generated), file=sys.stderr, flush=True)
    if token is None:
        print(
            "warning: --no-auth: any local process can call this attempt's tools and finish it",
            file=sys.stderr,
            flush=True,
        )


def _summary(state: AttemptServer) -> None:
    summary = msgspec.to_builtins(serve_summary(state))
    print(json.dumps(summary, sort_keys=True), file=sys.stderr)
