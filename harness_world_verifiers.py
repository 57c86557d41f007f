"""The verifiers taskset package of harness_world's worlds (id ``harness-world-verifiers``).

verifiers imports a taskset by an id without dots, so this module only names the one that
`harness_world.integrations.verifiers` defines: ``vf-eval harness-world-verifiers ...``.
"""

from harness_world.integrations.verifiers import WorldEnv, WorldHarness, WorldTaskset

__all__ = ["WorldEnv", "WorldHarness", "WorldTaskset"]
