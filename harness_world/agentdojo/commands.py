"""The ``agentdojo`` command's work: each subcommand's text and exit code, for the CLI to print.

Exit codes: 0 when every oracle passes (``check``), every trace's verdicts agree with the
stored ones (``regrade``), or our condition figures count what AgentDojo's verdicts count
(``run``), 1 otherwise; unreadable data raises `DojoDataError` (exit 2).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness_world.agentdojo.check import (
    gate_suite,
    render_check,
    render_equivalents,
    render_regrade,
)
from harness_world.agentdojo.importer import SUPPORTED, suite_spec
from harness_world.agentdojo.live import MODEL_NAME, render_oracle_runs, run_oracle, same_figures
from harness_world.agentdojo.published import render_row_checks, row_checks
from harness_world.agentdojo.regrade import Regrader, trace_files
from harness_world.agentdojo.runs import published_rows, render_runs, write_runs
from harness_world.agentdojo.source import DEFAULT_VERSION, DojoSource
from harness_world.coverage.gate import default_threshold
from harness_world.running.agents import Agent


def check(
    folder: Path, suites: Sequence[str] | None, version: str | None, verbose: bool = False
) -> tuple[str, int]:
    """``agentdojo check``: every imported task graded both ways, and each suite's coverage gate.

    Exit status 1 when a suite's gate fails (an oracle fails, a mutant survives unexplained,
    a criterion no mutant fails, a score under pyproject's ``mutation_score_min``).

    Raises:
        DojoDataError: for an unknown or unimported suite, or unreadable data.
    """
    chosen = [suite_spec(s).name for s in suites or SUPPORTED]
    threshold = default_threshold()
    gates = [gate_suite(folder, s, version or DEFAULT_VERSION, threshold) for s in chosen]
    text = render_check(gates)
    if verbose:
        text += "\n" + render_equivalents(gates)
    return text, 0 if all(g.ok for g in gates) else 1


def regrade(
    folder: Path, traces: Sequence[Path], version: str | None, out: Path | None = None
) -> tuple[str, int]:
    """``agentdojo regrade``: every trace under ``traces`` replayed, graded and compared.

    With ``out``, one run directory per pipeline and suite is written there (`runs`), and
    the condition figures of each, ours and AgentDojo's, follow the agreement; then each
    pipeline's published row per suite (`published`).

    Raises:
        DojoDataError: for an unreadable trace or data folder.
    """
    chosen = version or DEFAULT_VERSION
    if out is None:
        regrader = Regrader(folder, chosen)
        verdicts = [regrader.regrade(p) for p in trace_files(traces)]
        return render_regrade(verdicts), 0 if all(v.agrees for v in verdicts) else 1
    written = write_runs(folder, trace_files(traces), out, chosen)
    verdicts = [v for run in written for v in run.verdicts]
    rows = render_row_checks(row_checks(folder, written, published_rows(folder)))
    text = "\n".join([render_regrade(verdicts), render_runs(written), rows])
    return text, 0 if all(v.agrees for v in verdicts) else 1


def run(
    folder: Path,
    suites: Sequence[str] | None,
    attack: str,
    out: Path,
    version: str | None,
    agent: Agent | None = None,
    model: str = "",
) -> tuple[str, int]:
    """``agentdojo run``: one run directory per suite under ``out``.

    ``agent``: a model agent (None: the oracle); ``model``: its model's name, from which the
    attack text names the model as AgentDojo's does. Exit status 1 when the oracle's
    AgentDojo verdicts (re-stated) and our condition figures differ; a model agent's run
    exits 0 once written (the two grades may part, docs/agentdojo.md says where).

    Raises:
        DojoDataError: for an unknown attack or suite, or unreadable data.
    """
    chosen = version or DEFAULT_VERSION
    named = DojoSource(folder).model_name(model, MODEL_NAME) if model else MODEL_NAME
    runs = [
        run_oracle(folder, s, attack, out, chosen, named, agent) for s in suites or list(SUPPORTED)
    ]
    same = agent is not None or all(same_figures(r) for r in runs)
    return render_oracle_runs(runs), 0 if same else 1


def model_agent(options: Mapping[str, Any]) -> Agent | None:
    """The agent ``--agent`` names: None for the oracle, else the registered model agent.

    The same factory ``run --agent openai|anthropic`` calls, on the same options.

    Raises:
        ValueError: what the agent lacks (its model, its SDK extra), naming the option.
    """
    name = str(options.get("agent") or "oracle")
    if name == "oracle":
        return None
    from harness_world.registry import registry, resolve

    reference = registry().agents.get(name)
    if reference is None:
        raise ValueError(f"--agent {name}: no such agent (oracle, {', '.join(registry().agents)})")
    agent: Agent = resolve(reference)(argparse.Namespace(**options), None)
    return agent


def dispatch(command: str, options: Mapping[str, Any]) -> tuple[str, int]:
    """One ``agentdojo`` subcommand on the parsed options: its text and exit status.

    Raises:
        DojoDataError: for unreadable data or traces, or an unknown attack or suite.
        ValueError: for a model agent lacking its model or SDK extra.
    """
    data, version = Path(options["data"]), options.get("version")
    if command == "check":
        return check(data, options.get("suite"), version, bool(options.get("verbose")))
    if command == "regrade":
        return regrade(data, options["traces"], version, options.get("out"))
    agent = model_agent(options)
    model = str(options.get("model") or "")
    return run(data, options.get("suite"), options["attack"], options["out"], version, agent, model)
