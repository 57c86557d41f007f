"""Ablations: one setting changed at a time, each arm paired with the baseline and compared."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness_world.cli import main
from harness_world.integrations.anthropic import AnthropicAgent
from harness_world.integrations.openai import OpenAIAgent
from harness_world.release.ablation import (
    AblationError,
    compare_ablation,
    design_ablation,
    parse_factors,
    render_ablation,
)
from harness_world.running.agents import Agent
from harness_world.running.reference_agents import reference_agent
from tests.release.conftest import TASKS

RUN = ["run", "--world", "payments", "--tasks", *TASKS, "--samples", "2", "--quiet"]


@pytest.fixture(scope="module")
def ablation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oracle, and two arms: the failure policies give-up and naive-retry."""
    out = tmp_path_factory.mktemp("ablation") / "run"
    assert main([*RUN, "--ablate", "agent=give-up", "agent=naive-retry", "--out", str(out)]) == 0
    return out


def test_two_factors_give_two_differences_with_intervals(ablation: Path) -> None:
    result = compare_ablation(ablation)
    assert result.baseline_agent == "oracle:payments"
    assert [d.profile for d in result.factors] == ["agent=give-up", "agent=naive-retry"]
    for d in result.factors:
        assert (d.tasks, d.pairs, d.baseline_rate) == (len(TASKS), 2 * len(TASKS), 1.0)
        assert d.difference < 0  # each policy fails the lost response and the timeout
        assert d.low is not None and d.high is not None and d.low <= d.difference <= d.high
        assert d.confidence == pytest.approx(0.975)  # 95% over both factors together
    text = render_ablation(result)
    assert "agent=give-up" in text and "97.5% intervals" in text


def test_compare_reads_an_ablation(ablation: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(ablation), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["profile"] for d in data["factors"]] == ["agent=give-up", "agent=naive-retry"]


def test_an_ablation_is_resumed_but_not_redesigned(
    ablation: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*RUN, "--out", str(ablation), "--ablate"]
    assert main([*argv, "agent=give-up", "agent=naive-retry"]) == 0
    assert main([*argv, "agent=give-up"]) == 2
    assert "holds an ablation of other factors" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("factor", "expected"),
    [
        ("temprature=0.5", "--ablate temprature=0.5: unknown setting 'temprature' (settings:"),
        ("max-tokens=many", "--ablate max-tokens=many: max-tokens expects an integer >= 1"),
        ("temperature=inf", "temperature expects a finite number >= 0, got 'inf'"),
        ("agent=nobody", "--ablate agent=nobody: agent expects one of oracle, naive-retry"),
        ("agent", "--ablate agent: expected NAME=VALUE"),
        ("script=/no/such.py", "script expects an existing .py file"),
    ],
)
def test_a_bad_name_or_value_is_refused_naming_it(
    factor: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(AblationError) as caught:
        parse_factors([factor])
    assert expected in str(caught.value)
    assert main([*RUN, "--ablate", factor, "--out", str(tmp_path / "x")]) == 2
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_an_arm_equal_to_the_baseline_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*RUN, "--out", str(tmp_path / "x"), "--ablate"]
    assert main([*argv, "temperature=0.5"]) == 2  # the oracle uses no temperature
    assert "changes none of agent 'oracle:payments''s settings" in capsys.readouterr().err
    assert main([*argv, "max-retries=0"]) == 2
    assert "has no max-retries setting" in capsys.readouterr().err
    assert main([*argv, "agent=oracle"]) == 2
    assert main([*argv, "agent=give-up", "agent=give-up"]) == 2
    assert "given twice" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def _maker(baseline: Agent) -> Any:
    def make(options: Mapping[str, Any]) -> Agent:
        if "agent" in options:
            return reference_agent("payments", options["agent"])
        return baseline

    return make


def test_the_model_agents_settings_are_ablated_on_the_agent() -> None:
    baseline = OpenAIAgent(model="m", base_url="http://127.0.0.1:9")
    factors = parse_factors(["max-retries=0", "context-bound=2000", "agent=give-up"])
    manifest, configs = design_ablation(factors, _maker(baseline))
    assert [c.harness for c, _ in configs] == ["baseline", *(f.text for f in factors)]
    assert list(manifest.arms.values()) == factors
    settings = [agent.settings() for _, agent in configs]
    assert settings[0]["max_retries"] == 2 and "context" not in settings[0]
    assert settings[1]["max_retries"] == 0
    assert settings[2]["context"] == {"max_tokens": 2000, "keep_recent": 2}
    assert settings[3]["kind"] == "scripted"
    with pytest.raises(AblationError, match="has no context-bound setting"):
        design_ablation(parse_factors(["context-bound=10"]), _maker(AnthropicAgent(model="m")))
    with pytest.raises(AblationError, match="changes none of agent 'openai'"):
        design_ablation(parse_factors(["max-retries=2"]), _maker(baseline))
    with pytest.raises(
        AblationError, match="max-retries=00: the same arm as --ablate max-retries=0"
    ):
        design_ablation(parse_factors(["max-retries=0", "max-retries=00"]), _maker(baseline))
