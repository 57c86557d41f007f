"""A provider's reported usage is checked where it enters the attempt; no unreadable record is saved.

Before: an endpoint reporting ``prompt_tokens: -1e9`` made a negative cost that passed the
release gate's cost clause and never tripped ``run --cost``; one reporting 2^60 made ``run``
grade the attempt while every reader called the record ``lost`` (the record limits refuse it),
so the endpoint chose which attempts left the denominators. Now any count that is not an
integer in 0..2^53, or a cost that is not finite and >= 0, is an infrastructure fault of that
request: the attempt ends as ``infrastructure`` (as other provider failures do), the request's
reservation stays as uncertain exposure, and ``run``, ``verify`` and ``report`` say the same.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import msgspec
import pytest

import harness_world as hw
from harness_world.cli import main
from harness_world.engine import Contract, Entity, Field, Params, Tool, ToolContext
from harness_world.evidence.record import (
    RecordError,
    decode_record,
    encode_record,
    load_record,
    record_digest,
    save_record,
    seal_record,
)
from harness_world.release.figures import measure_run
from harness_world.running import drive
from harness_world.running.attempt import AttemptEnded, usage_problem
from harness_world.running.commit import finished
from harness_world.running.rundir import record_path
from tests.conftest import requires
from tests.fake_openai import fake_openai, scripted_brain

TASK = "helpdesk.reply_and_solve"
SOLVE = [
    [("get_ticket", {"ticket_id": "T-1001"})],
    [("add_comment", {"ticket_id": "T-1001", "body": "The outage is fixed.", "public": True})],
    [("update_ticket", {"ticket_id": "T-1001", "status": "solved"})],
    "Replied and solved.",
]
# What an OpenAI-compatible endpoint may put in ``usage``; json.dumps writes NaN and Infinity.
REPORTED: dict[str, dict[str, Any]] = {
    "negative prompt tokens": {"prompt_tokens": -1_000_000_000},
    "negative float prompt tokens": {"prompt_tokens": -1e9},
    "negative completion tokens": {"completion_tokens": -20},
    "2^60 prompt tokens": {"prompt_tokens": 2**60},
    "NaN prompt tokens (NaN cost)": {"prompt_tokens": math.nan},
    "infinite completion tokens (infinite cost)": {"completion_tokens": math.inf},
    "fractional prompt tokens": {"prompt_tokens": 2.5},
}


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, Any]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def _run_openai(tmp_path: Path, usage: dict[str, Any], *extra: str) -> tuple[int, Path]:
    out = tmp_path / "run"
    with fake_openai(scripted_brain(SOLVE), usage=usage) as server:  # type: ignore[arg-type]
        code = main(
            ["run", "--world", "helpdesk", "--tasks", TASK, "--agent", "openai"]
            + ["--model", "fake-1", "--base-url", server["base_url"], "--out", str(out)]
            + ["--price-in", "3", "--price-out", "15", "--retries", "0", "--json", *extra]
        )
    return code, out


def _agree(capsys: pytest.CaptureFixture[str], out: Path) -> dict[str, Any]:
    """What run said, as verify and report read the saved run: one infrastructure slot."""
    said: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert said["counts"]["valid"] == 0 and said["counts"]["invalid"] == 1
    assert said["counts"]["by_outcome"] == {"infrastructure": 1}
    assert "unusable usage" in said["invalid"][0]
    code, verified = _json(capsys, ["verify", str(out), "--json"])
    [row] = verified["records"]
    assert (row["outcome"], row["evidence"]) == ("infrastructure", "verified")
    code, report = _json(capsys, ["report", str(out), "--json"])
    assert code == 0 and report["counts"] == said["counts"]
    return said


@requires("openai", "the OpenAI agent needs the [openai] extra")
@pytest.mark.parametrize("usage", list(REPORTED.values()), ids=list(REPORTED))
def test_an_openai_endpoint_reporting_impossible_usage_is_an_infrastructure_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], usage: dict[str, Any]
) -> None:
    code, out = _run_openai(tmp_path, usage)
    assert code == 1  # an infrastructure fault fails the run, as an unreachable endpoint does
    _agree(capsys, out)
    record = load_record(record_path(out, TASK, 0))
    assert record.outcome.status == "infrastructure" and len(record.calls) == 0
    spent = record.usage
    assert (spent.requests, spent.lost_requests, spent.cost) == (1, 1, 0.0)
    assert spent.uncertain_cost > 0  # the request's reservation: exposure of unknown size
    assert spent.input_tokens == 0 and spent.output_tokens == 0  # nothing raw is stored
    assert decode_record(encode_record(record)) == record  # readable by every reader


@requires("openai", "the OpenAI agent needs the [openai] extra")
def test_a_negative_report_no_longer_lowers_spend_or_escapes_the_cost_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run_openai(tmp_path, {"prompt_tokens": -1_000_000_000}, "--cost", "0.5")
    assert code == 1
    _agree(capsys, out)
    figures = measure_run(out, {t.id: t for t in hw.load_tasks("helpdesk")}).figures
    assert figures.spent_usd > 0  # the reservation, never a negative dollar figure
    honest = tmp_path / "honest"
    with fake_openai(scripted_brain(SOLVE)) as server:  # type: ignore[arg-type]
        main(
            ["run", "--world", "helpdesk", "--tasks", TASK, "--agent", "openai", "--model"]
            + ["fake-1", "--base-url", server["base_url"], "--out", str(honest), "--json"]
            + ["--price-in", "3", "--price-out", "15"]
        )
    capsys.readouterr()
    assert measure_run(honest, {t.id: t for t in hw.load_tasks("helpdesk")}).figures.spent_usd > 0


@requires("anthropic", "the Anthropic agent needs the [anthropic] extra")
@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": -1_000_000_000},
        {"cache_read_input_tokens": -5},  # a negative part may not cancel a positive one
        {"output_tokens": 2**60},
        {"cache_creation_input_tokens": math.nan},
        {"input_tokens": "12"},
    ],
    ids=["negative input", "negative cache read", "2^60 output", "NaN cache", "text"],
)
def test_an_anthropic_endpoint_reporting_impossible_usage_is_an_infrastructure_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], usage: dict[str, Any]
) -> None:
    from tests.integrations.fake_anthropic import fake_anthropic
    from tests.integrations.fake_anthropic import scripted_brain as anthropic_brain

    out = tmp_path / "run"
    with fake_anthropic(anthropic_brain(SOLVE), usage=usage) as server:  # type: ignore[arg-type]
        code = main(
            ["run", "--world", "helpdesk", "--tasks", TASK, "--agent", "anthropic"]
            + ["--model", "fake-claude", "--base-url", server["base_url"], "--out", str(out)]
            + ["--price-in", "3", "--price-out", "15", "--retries", "0", "--json"]
        )
    assert code == 1
    _agree(capsys, out)
    spent = load_record(record_path(out, TASK, 0)).usage
    assert spent.cost == 0.0 and spent.uncertain_cost > 0 and spent.lost_requests == 1


# -- the attempt's own checks, whatever the driver --------------------------------------------


@pytest.mark.parametrize(
    ("cost", "tokens"),
    [(-0.01, 10), (math.nan, 10), (math.inf, 10), (0.01, -1), (0.01, 2**53 + 1), (0.01, True)],
)
def test_settle_refuses_what_no_response_can_cost(
    small: hw.World, cost: float, tokens: int
) -> None:
    attempt = hw.Attempt(small, hw.load_tasks("helpdesk")[0])
    reservation = attempt.reserve(0.05, input_tokens=40)
    with pytest.raises(AttemptEnded, match="unusable usage"):
        attempt.settle(reservation, cost=cost, input_tokens=tokens, output_tokens=1)
    usage = attempt.finish().usage
    assert attempt.outcome is not None and attempt.outcome.status == "infrastructure"
    assert (usage.cost, usage.input_tokens, usage.uncertain_cost) == (0.0, 0, 0.05)
    assert (usage.lost_requests, usage.lost_input_tokens_estimate) == (1, 40)


def test_totals_stay_within_what_a_record_holds(small: hw.World) -> None:
    attempt = hw.Attempt(small, hw.load_tasks("helpdesk")[0])
    attempt.settle(attempt.reserve(0.0), cost=0.0, input_tokens=2**53, output_tokens=0)
    with pytest.raises(AttemptEnded, match="total would be over 2"):
        attempt.settle(attempt.reserve(0.0), cost=0.0, input_tokens=1, output_tokens=0)
    assert usage_problem(
        cost=1e308,
        input_tokens=0,
        output_tokens=0,
        totals={"input_tokens": 0, "output_tokens": 0, "cost": 1e308},
    )


def test_declared_usage_is_checked_and_a_bad_value_is_the_agents_error(small: hw.World) -> None:
    task = hw.load_tasks("helpdesk")[0]
    for bad in ({"cost": -1.0}, {"input_tokens": 2**60}, {"turns": 1.5}, {"models": [1]}):
        attempt = hw.Attempt(small, task)
        with pytest.raises(ValueError, match="usage"):
            attempt.declare_usage(**bad)
    record = drive(_Declares({"cost": -3.0}), hw.Attempt(small, task))
    assert record.outcome.status == "error" and record.usage.cost == 0.0


class _Declares:
    name = "declares"

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields

    def settings(self) -> dict[str, Any]:
        return {"kind": "test-declares"}

    def run(self, attempt: hw.Attempt) -> str:
        attempt.declare_usage(**self.fields)
        return "done"


def test_a_driver_price_must_be_finite_and_not_negative() -> None:
    from harness_world.integrations.openai import OpenAIAgent

    for price in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="price_in_per_mtok must be a finite number"):
            OpenAIAgent(model="m", base_url="http://127.0.0.1:9", price_in_per_mtok=price)


# -- no record is saved that a reader would refuse --------------------------------------------


def test_a_forged_negative_cost_is_refused_by_every_reader(small: hw.World, tmp_path: Path) -> None:
    record = drive(hw.oracle_agent("helpdesk"), hw.Attempt(small, hw.load_tasks("helpdesk")[0]))
    forged = msgspec.structs.replace(record, usage=hw.Usage(cost=-5.0))
    forged = msgspec.structs.replace(forged, digest=record_digest(forged))
    with pytest.raises(RecordError, match="cost"):
        decode_record(encode_record(forged))  # a reader: `lost`, never a negative figure
    with pytest.raises(RecordError, match="would be refused on reading"):
        save_record(forged, tmp_path / "forged.json")  # a writer: nothing saved
    assert not (tmp_path / "forged.json").exists()


class _Count(Params):
    n: int


def _square(ctx: ToolContext, p: _Count) -> Any:
    return {"square": p.n * p.n}  # a world tool whose result outgrows the record limits


def test_the_writer_refuses_what_the_reader_would_and_judges_what_readers_read(
    tmp_path: Path,
) -> None:
    contract = Contract(
        name="squares",
        version="1",
        entities=(Entity(name="things", key="id", fields={"id": Field(type="int")}),),
        tools=(Tool(name="square", description="n*n.", params=_Count, kind="read", run=_square),),
    )
    world = hw.World.from_data(contract, {"things": [{"id": 1}]})
    session = world.open_session()
    session.call("square", {"n": 2**40})
    from harness_world.evidence import make_record

    record = make_record(session, outcome=hw.Outcome(status="completed"), task_id="squares.t")
    judged: list[hw.Record] = []
    with pytest.raises(RecordError, match=r"'squares.t' sample 0 would be refused.*out of range"):
        finished(record, tmp_path / "0.json", judged.append)  # type: ignore[arg-type]
    assert judged == []  # nothing judged, nothing saved: run and readers agree there is none
    with pytest.raises(RecordError):
        save_record(record, tmp_path / "0.json")
    assert not (tmp_path / "0.json").exists()
    fine = make_record(world.open_session(), outcome=hw.Outcome(status="completed"))
    data, readable = seal_record(fine)
    assert readable == decode_record(data) and data == encode_record(fine)
