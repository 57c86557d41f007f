"""The package's own extensions, registered like a third party's (`harness_world.registry`).

Each line names where a piece lives, as a ``"module:attribute"`` string: registering imports
none of them, so listing the commands or importing the package stays as cheap as the core.
An extension is anything the core can run without: the release protocol (``gate``,
``review``, held-out ``split``), the servers (``play``, ``mcp``), τ²-bench, AgentDojo, forks, model
agents, Ray, the HTML/PNG viewer, and the crossed, ablation, sequential and drift variants.
"""

from __future__ import annotations

from harness_world.registry import Registry

__all__ = ["register"]

_COMMANDS = (
    (
        "gate",
        "gate",
        "decide a release policy (forbidden effects, over-blocking, completion, cost, "
        "latency, critical tasks) on a baseline and a candidate run",
    ),
    (
        "split",
        "split",
        "held-out splits: freeze one, read its candidate ledger, check for paraphrases",
    ),
    (
        "review",
        "review",
        "record a human verdict on one criterion (never changing the automated grade) "
        "and print the original, corrected and accepted scores",
    ),
    ("play", "play", "drive one attempt over JSON lines (stdio bridge for any language)"),
    ("mcp", "mcp", "serve an attempt (or k) to an MCP client over stdio or HTTP"),
    ("tau2", "tau2", "check imported τ²-bench retail tasks, or regrade τ²-bench results"),
    ("agentdojo", "agentdojo", "AgentDojo's suites as worlds: check, regrade, run"),
    ("fork", "fork", "branch a record: replay it under another policy, or edit a call or a result"),
)


def register(registry: Registry) -> None:
    """Register every built-in extension."""
    for name, module, summary in _COMMANDS:
        registry.command(name, f"harness_world.cli.{module}", summary)
    cli = "harness_world.cli"
    registry.add_options("run", "harness_world.integrations.agents:MODEL_OPTIONS")
    registry.add_options("run", f"{cli}.split:RUN_OPTIONS")
    registry.add_options("run", f"{cli}.crossed:RUN_OPTIONS")
    registry.add_options("report", f"{cli}._visual:REPORT_OPTIONS")
    registry.add_options("report", f"{cli}.drift:REPORT_OPTIONS")
    registry.add_options("report", f"{cli}.split:REPORT_OPTIONS")
    registry.add_options("compare", f"{cli}.crossed:COMPARE_OPTIONS")
    registry.add_options("compare", f"{cli}._visual:COMPARE_OPTIONS")
    registry.agent("openai", "harness_world.integrations.agents:openai_agent")
    registry.agent("anthropic", "harness_world.integrations.agents:anthropic_agent")
    registry.run_hook(f"{cli}.split:run_split_hooks")
    registry.executor("ray", "harness_world.running.rayrun:ray_executor")
    registry.verifier("ray", "harness_world.running.rayverify:verify_on_ray")
    registry.track("sequential", "harness_world.running.sequential:Sequential")
    registry.export("Ray", "harness_world.running.rayrun:Ray")
    registry.export("Sequential", "harness_world.running.sequential:Sequential")
    registry.export("fork", "harness_world.running.fork:fork")
