"""A report bounds pass^k at a ladder of k, gives every k's estimate, and bounds more on request."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness_world as hw
from harness_world import stats
from harness_world.analysis import build_report
from harness_world.analysis.report import OFF_LADDER, interval_ks, parse_pass_k_at
from harness_world.cli import main
from harness_world.coverage import load_oracles
from harness_world.running import run
from tests.conftest import examples

SAMPLES = 12


@pytest.fixture(scope="module")
def twelve(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four helpdesk tasks, twelve samples each: the ladder leaves 6-9 and 11 unbounded."""
    out = tmp_path_factory.mktemp("ladder") / "run"
    tasks = [t for t in hw.load_tasks("helpdesk") if t.authority is None][:4]
    agent = hw.ScriptedAgent(name="oracle", scripts=load_oracles("helpdesk"))
    run(tasks, agent, samples=SAMPLES, out=out)
    return out


def test_the_ladder_keeps_small_k_orders_of_magnitude_and_the_largest() -> None:
    assert interval_ks(3) == {1, 2, 3}
    assert interval_ks(12) == {1, 2, 3, 4, 5, 10, 12}
    assert interval_ks(300) == {1, 2, 3, 4, 5, 10, 20, 50, 100, 200, 300}
    assert interval_ks(300, frozenset({7, 400})) == interval_ks(300) | {7}
    assert interval_ks(8, "all") == set(range(1, 9))


@settings(max_examples=examples(30, 200), deadline=None)
@given(st.integers(1, 5000))
def test_the_ladder_grows_with_the_log_of_the_samples(samples: int) -> None:
    ladder = interval_ks(samples)
    assert {1, samples} <= ladder <= set(range(1, samples + 1))
    assert len(ladder) <= 6 + 3 * len(str(samples))


def test_every_k_has_its_estimate_and_only_the_ladder_an_interval(twelve: Path) -> None:
    report = build_report(twelve)
    assert [p.k for p in report.pass_k] == list(range(1, SAMPLES + 1))
    for p in report.pass_k:
        if p.k in interval_ks(SAMPLES):
            assert p.lower is not None and p.upper is not None and p.bound_note != OFF_LADDER
            # the ladder's bounds are exactly those of the interval at that k alone
            again = stats.pass_k_bounds(
                msgspec.structs.replace(p, lower=None, upper=None, bound_note=""),
                families=report.task_families,
            )
            assert (again.lower, again.upper) == (p.lower, p.upper)
        else:
            assert (p.lower, p.upper, p.bound_note) == (None, None, OFF_LADDER)


def test_asking_bounds_a_k_off_the_ladder_or_every_k(twelve: Path) -> None:
    seven = {p.k: p for p in build_report(twelve, pass_k_at=frozenset({7})).pass_k}
    assert seven[7].lower is not None and seven[8].lower is None
    every = build_report(twelve, pass_k_at="all").pass_k
    assert all(p.lower is not None and p.bound_note != OFF_LADDER for p in every)


def test_the_text_shows_the_ladder_and_says_where_the_rest_is(
    twelve: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(twelve)]) == 0
    text = capsys.readouterr().out
    table = text[text.index("pass^k  95% over tasks") :].split("slots by tries")[0]
    shown = [int(line.split()[0]) for line in table.splitlines()[2:] if line.strip()]
    assert shown == [1, 2, 3, 4, 5, 10, 12]
    assert "pass^k at the 5 other k, without an interval: --json" in text
    assert main(["report", str(twelve), "--pass-k", "7,8"]) == 0
    assert "pass^k at the 3 other k" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["0", "x", "3,,4", "-2", "all,3", "²", "1e3"])
def test_a_bad_pass_k_is_refused_naming_it(
    bad: str, twelve: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match="is not a k"):
        parse_pass_k_at(bad)
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(twelve), "--pass-k", bad])
    assert exit_.value.code == 2
    assert "--pass-k" in capsys.readouterr().err
