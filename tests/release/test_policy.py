"""Release policies: the example parses; every error names the file, the key and the want."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_world.errors import HarnessWorldError
from harness_world.release import PolicyError, load_policy, parse_policy
from tests.conftest import REPO

EXAMPLE = REPO / "docs" / "examples" / "payments-release.toml"


def test_the_example_policy_names_every_clause() -> None:
    policy = load_policy(EXAMPLE)
    assert policy.forbidden_effects is not None and policy.forbidden_effects.max_count == 0
    assert policy.over_blocking is not None and policy.over_blocking.max_rate == 0.10
    assert policy.completion is not None and policy.completion.margin_points == 15
    assert policy.cost is not None and policy.latency is not None
    assert policy.critical is not None and "refund" in policy.critical.families


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[latency]\nmax_p95 = 3\n", ["key `latency.max_p95`", "not a release policy key"]),
        ("[latancy]\nmax_p95_s = 3\n", ["key `latancy`", "not a release policy key"]),
        ('[latency]\nmax_p95_s = "fast"\n', ["key `latency.max_p95_s`", "Expected `float`"]),
        ("[forbidden_effects]\nconfidence = 1.5\n", ["forbidden_effects.confidence", "< 1.0"]),
        ("[completion]\nclusters = true\n", ["key `completion`", "margin_points"]),
        ("[cost]\n", ["key `cost`", "max_per_trusted_usd or max_ratio_to_baseline"]),
        ("[critical]\nmin_pass_rate = 0.5\n", ["key `critical`", "tasks or families"]),
        ("[latency\n", ["not TOML"]),
    ],
)
def test_an_error_names_the_file_the_key_and_what_was_expected(
    tmp_path: Path, text: str, names: list[str]
) -> None:
    path = tmp_path / "release.toml"
    path.write_text(text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    for name in names:
        assert name in message
    assert isinstance(caught.value, HarnessWorldError)


def test_an_unreadable_file_is_a_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read the policy"):
        load_policy(tmp_path / "absent.toml")


def test_an_empty_policy_gates_nothing() -> None:
    assert parse_policy("").forbidden_effects is None
