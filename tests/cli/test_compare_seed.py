"""``compare --seed``: the bootstrap's seed is an option, reported, and touches only the bootstrap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness_world.cli import main
from harness_world.stats.wild import DEFAULT_SEED
from tests.cli.test_compare_cli import GOLDEN_ARGV

ARGV = GOLDEN_ARGV
# What the random weight patterns move: the bootstrap's bounds and p-values, and the sentences
# and band built from them. Everything else is a function of the rows alone.
BOOTSTRAPPED = {"lower", "upper", "p_increase", "p_decrease", "band_low", "band_high"}


def _json(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    assert main([*ARGV, "--json", *extra]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _deterministic(value: Any) -> Any:
    """``value`` without the bootstrapped figures, the seed, and the texts that quote them."""
    if isinstance(value, dict):
        return {
            k: _deterministic(v)
            for k, v in value.items()
            if k not in BOOTSTRAPPED | {"seed", "method", "reason"}
        }
    if isinstance(value, list):
        return [_deterministic(v) for v in value]
    return value


def test_the_default_seed_is_the_fixed_one_and_is_reported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = _json(capsys)
    assert report["seed"] == DEFAULT_SEED
    assert report["decision"]["observed"]["seed"] == DEFAULT_SEED  # 9 tasks: patterns drawn
    assert main(ARGV) == 0
    assert f"patterns, seed {DEFAULT_SEED})" in capsys.readouterr().out


def test_a_seed_given_is_honoured_in_json_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    report = _json(capsys, "--seed", "7")
    assert report["seed"] == 7
    assert report["decision"]["observed"]["seed"] == 7
    assert report["decision"]["worst_case"]["seed"] == 7
    assert main([*ARGV, "--seed", "7"]) == 0
    decision = next(line for line in capsys.readouterr().out.splitlines() if "Decision:" in line)
    assert "2000 patterns, seed 7)" in decision
    assert _json(capsys, "--seed", "7") == report  # the same seed, the same report


def test_the_seed_moves_only_the_bootstrap(capsys: pytest.CaptureFixture[str]) -> None:
    default, other = _json(capsys), _json(capsys, "--seed", "7")
    observed = default["decision"]["observed"], other["decision"]["observed"]
    assert observed[0]["p_increase"] != observed[1]["p_increase"]  # the seed is used
    assert _deterministic(default) == _deterministic(other)
    for field in ("mean", "standard_error", "df", "t_quantile", "skewness"):
        assert observed[0][field] == observed[1][field]


def test_a_crossed_run_is_compared_with_the_seed_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import harness_world.cli.crossed as crossed

    (tmp_path / crossed.CROSSED).write_text("{}")
    seen: list[int] = []

    def compare_crossed(out: object, **kwargs: Any) -> dict[str, int]:
        seen.append(kwargs["seed"])
        return {"seed": kwargs["seed"]}

    monkeypatch.setattr(crossed, "compare_crossed", compare_crossed)
    for extra, seed in (([], DEFAULT_SEED), (["--seed", "11"], 11)):
        assert main(["compare", str(tmp_path), "--json", *extra]) == 0
        assert json.loads(capsys.readouterr().out) == {"seed": seed}
    assert seen == [DEFAULT_SEED, 11]
