"""The ``mutants`` gate's text: every line a report can hold, pinned."""

from __future__ import annotations

from harness_world.coverage.gate import CoverageReport, GateAttempt
from harness_world.coverage.render import render_coverage


def _attempt(kind: str, id: str, ok: bool, **more: object) -> GateAttempt:
    fields: dict[str, object] = {
        "task_id": "helpdesk.t",
        "size": "small",
        "outcome": "completed",
        "evidence": "verified",
        "passed": ok,
        "failed": [],
        **more,
    }
    return GateAttempt(kind=kind, id=id, ok=ok, **fields)  # type: ignore[arg-type]


REPORT = CoverageReport(
    world="helpdesk",
    results=[
        _attempt("oracle", "helpdesk.t", True, route="primary", note="the route"),
        _attempt("oracle", "helpdesk.t", False, size="large", route="other", note="x"),
        _attempt("hand", "t.skip_read", True, failed=["state.required"], note="skips a read"),
        _attempt("auto", "t.auto1", True, note="drop call 2"),
    ],
    uncovered=[],
    killed_by={
        "helpdesk.t: state.required": ["t.skip_read"],
        "helpdesk.t: trace.answer": [],
        "helpdesk.u: trace.budget": [],
    },
    auto_killed=3,
    auto_survived=1,
    auto_equivalent=2,
    score=0.75,
    threshold=0.8,
    problems=["an oracle failed"],
    ok=False,
    routes={"helpdesk.t": 2, "helpdesk.u": 1},
    auto_killed_by={"helpdesk.t: trace.answer": ["t.auto1", "t.auto2"]},
    unchecked={"helpdesk.u: trace.budget": ["u.over_budget"]},
)

EXPECTED = """
== helpdesk
oracles: 1/2 route runs pass (seeds: large, small)
routes per task: 3 passing over 2 tasks, fewest 1 (at least 2 required)
  t 2, u 1
hand mutants: 1/1 fail exactly as predicted
automatic mutants: 3 killed, 1 survived, 2 equivalent; score 0.750 (threshold 0.80)
criteria and the hand mutants that kill them (else the automatic ones):
  helpdesk.t: state.required <- 1; trace.answer <- auto 2
  helpdesk.u: trace.budget <- not run (seeds of its mutants not chosen)
"""
VERBOSE = """\
  ok  oracle small helpdesk.t [primary]: failed - the route
  BAD oracle large helpdesk.t [other]: failed - x
  ok  hand   small t.skip_read: failed ['state.required'] skips a read
  ok  auto   small t.auto1: failed - drop call 2
"""
TAIL = """\
  NOT CHECKED on these seeds: helpdesk.u: trace.budget (failed only by u.over_budget)
  PROBLEM: an oracle failed
"""


def test_the_gate_text_shows_every_part_of_the_report() -> None:
    assert render_coverage(REPORT) == EXPECTED + TAIL
    assert render_coverage(REPORT, verbose=True) == EXPECTED + VERBOSE + TAIL


def test_a_criterion_no_mutant_kills_reads_none() -> None:
    report = CoverageReport(
        **{**{f: getattr(REPORT, f) for f in REPORT.__struct_fields__}, "unchecked": {}}
    )
    assert "helpdesk.u: trace.budget <- NONE" in render_coverage(report)
