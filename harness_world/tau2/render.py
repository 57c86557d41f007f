"""The text of the ``tau2`` commands ``check``, ``regrade`` and ``run``: tables and summaries.

The reports are `harness_world.tau2.check` (`CheckReport`, `RegradeReport`) and
`harness_world.tau2.conversation` (`ConversationReport`); ``--json`` prints them as they are.
"""

from __future__ import annotations

import json

import msgspec

from harness_world.analysis.policy_sheet import PolicySummary, policy_lines
from harness_world.analysis.tables import render_table
from harness_world.tau2.check import CheckReport, CheckSummary, RegradeReport, graded_runs
from harness_world.tau2.conversation import ConversationReport
from harness_world.tau2.gold import GoldReport, RegradeResult

__all__ = ["check_json", "render_check", "render_conversations", "render_regrade"]


def _oracle_cell(report: GoldReport) -> str:
    if report.oracle_passed:
        return "passed"
    return "FAILED " + "; ".join(report.oracle_failed)


def _check_table(reports: list[GoldReport]) -> list[str]:
    rows = [
        [
            r.task_id,
            str(r.rows_changed),
            _oracle_cell(r),
            ",".join(e.id for e in r.gold_errors) or "-",
            "passed" if r.oracle_passed else "failed",
            "match" if r.reference_match else "differs",
            "yes" if r.agrees else ("explained" if r.explanation else "NO"),
            f"{r.killed}/{r.equivalent}/{r.survived}",
            ",".join(c.split(".", 1)[1] for c in r.criteria if c.startswith("trace.")) or "-",
        ]
        for r in reports
    ]
    headers = [
        "task",
        "rows",
        "oracle",
        "gold errors",
        "ours",
        "τ² DB",
        "agree",
        "mutants k/e/s",
        "trace criteria",
    ]
    return [render_table(headers, rows)]


def _gold_error_lines(reports: list[GoldReport]) -> list[str]:
    erroring = [(r.task_id, e) for r in reports for e in r.gold_errors]
    if not erroring:
        return []
    lines = ["", "gold calls that return an error (τ² skips them; the oracle keeps them):"]
    lines += [
        f"  {task}  {e.id}  {e.tool}: {e.message} ({e.kind})"
        + ("  [a write: the gold end state is without it, in τ² as here]" if e.write else "")
        for task, e in erroring
    ]
    return lines


def _do_nothing_line(r: GoldReport) -> str:
    d = r.do_nothing
    db = "τ² DB: match" if d.reference_match else "τ² DB: differs"
    prose = "; ".join(d.prose) or "none"
    head = f"  {r.task_id}: "
    if not d.state_passed:
        return f"{head}FAILS the state criteria ({db}); prose: {prose}"
    if d.passed and d.prose:
        return (
            f"{head}passes the state criteria ({db}) and every automated criterion; "
            f"only prose stands between it and a pass (not reviewed): {prose}"
        )
    if d.passed:
        return (
            f"{head}passes the state criteria ({db}) and every automated criterion; "
            "nothing stands between it and a pass: the task has no prose criterion"
        )
    return (
        f"{head}passes the state criteria ({db}); standing between it and a pass: "
        f"{', '.join(d.standing)}; prose (not reviewed): {prose}"
    )


def _read_only_lines(reports: list[GoldReport]) -> list[str]:
    read_only = [r for r in reports if r.rows_changed == 0]
    if not read_only:
        return []
    return [
        "",
        "tasks whose gold actions write nothing (a do-nothing attempt):",
        *(_do_nothing_line(r) for r in read_only),
    ]


def _summary_lines(s: CheckSummary) -> list[str]:
    lines = ["", "automatic mutants by operator (killed / equivalent / survived):"]
    for op, counts in s.by_operator.items():
        lines.append(
            f"  {op:<26} {counts.get('killed', 0):>4} / {counts.get('equivalent', 0):>4}"
            f" / {counts.get('survived', 0):>4}"
        )
    lines += [
        "",
        f"{s.imported} task(s) imported; oracle passed {s.oracle_passed}, failed "
        f"{s.oracle_failed}; {s.gold_errors} gold call(s) error in "
        f"{s.tasks_with_gold_errors} task(s); verdicts agree with τ² on "
        f"{s.verdicts_agree}/{s.imported} oracle trajectories "
        f"({s.verdicts_disagree_explained} explained, "
        f"{s.verdicts_disagree_unexplained} unexplained disagreements); "
        f"{s.read_only_tasks} read-only task(s), a do-nothing attempt passes "
        f"{s.do_nothing_passes} of them",
        f"mutation score: {s.mutation_score:.3f} ({s.killed} killed of "
        f"{s.killed + s.survived} non-equivalent mutants; {s.equivalent} equivalent, "
        f"each leaving the gold's database; {s.kill_rate_all:.3f} of all {s.mutants} "
        "killed)",
    ]
    return lines


def render_check(report: CheckReport) -> str:
    """``tau2 check`` as text: the table of tasks, gold errors, read-only tasks, mutants."""
    lines = [f"data: {report.data_notice}", ""]
    lines += _check_table(report.tasks)
    lines += _gold_error_lines(report.tasks)
    lines += _read_only_lines(report.tasks)
    lines += _summary_lines(report.summary)
    problems = report.problems
    if problems:
        lines += ["", f"{len(problems)} problem(s):"] + [f"  {p}" for p in problems]
    return "\n".join(lines)


def _ours(r: RegradeResult) -> str:
    """Our grade in the regrade table: an automated pass with prose open is pending."""
    if r.passed is None:
        return "-"
    if r.passed and r.prose:
        return "passed_automated"
    return "passed" if r.passed else "failed"


def render_regrade(report: RegradeReport) -> str:
    """``tau2 regrade`` as text: our outcome, evidence and grade beside τ²'s, per run."""
    results = report.runs

    def reward(r: RegradeResult) -> str:
        return "-" if r.recorded_reward is None else f"{r.recorded_reward:g}"

    rows = [
        [
            r.source_task,
            str(r.trial),
            str(r.calls),
            r.outcome,
            r.evidence,
            _ours(r),
            "-" if r.reference_match is None else ("match" if r.reference_match else "differs"),
            reward(r),
            _sheet_cell(r),
            r.problem or "; ".join(r.failed) or "-",
        ]
        for r in results
    ]
    headers = [
        "τ² task",
        "trial",
        "calls",
        "outcome",
        "evidence",
        "ours",
        "τ² DB (recomputed)",
        "τ² reward",
        "policy sheet",
        "why",
    ]
    # Only outcomes that count as attempts enter the pass figures (as in `report`).
    graded = graded_runs(results)
    lines = [f"data: {report.data_notice}", "", render_table(headers, rows), ""]
    coerced = [f"  {r.source_task}/{r.trial}: {line}" for r in results for line in r.coerced]
    if coerced:
        lines += ["calls coerced the way τ² treats them (--arguments tau2):", *coerced, ""]
    lines.append(
        f"{len(results)} run(s): {sum(r.evidence == 'verified' for r in results)} verified, "
        f"{len(graded)} graded attempts; "
        f"ours passed {sum(bool(r.passed) for r in graded)} on the automated criteria (of "
        f"which {sum(bool(r.passed and r.prose) for r in graded)} passed_automated: prose "
        f"pending review, not a pass in report or gate), failed "
        f"{sum(r.passed is False for r in graded)}; τ² recorded reward 1 on "
        f"{sum(r.recorded_reward == 1 for r in results)}; prose criteria are not reviewed"
    )
    return "\n".join(lines + _sheet_lines(report.policy))


def _sheet_cell(result: RegradeResult) -> str:
    if not result.policy:
        return "-"
    broken = [v.id.removeprefix("policy.") for v in result.policy if v.status == "failed"]
    return "broke " + ", ".join(broken) if broken else "kept"


def _sheet_lines(summary: PolicySummary | None) -> list[str]:
    if summary is None:
        return []
    return ["", *policy_lines(summary, beside="τ²'s reward", unit="runs", passed="rewarded")]


def render_conversations(report: ConversationReport) -> str:
    """The attempts of ``tau2 run``: a table of attempts and a summary line."""
    results = report.runs
    rows = [
        [
            r.task_id,
            str(r.sample),
            str(r.user_turns),
            "yes" if r.user_stopped else "no",
            str(r.calls),
            r.outcome,
            r.evidence,
            "-" if r.passed is None else ("passed" if r.passed else "failed"),
            "; ".join(r.failed) or "-",
        ]
        for r in results
    ]
    headers = [
        "task",
        "sample",
        "user turns",
        "user stopped",
        "calls",
        "outcome",
        "evidence",
        "ours",
        "failed",
    ]
    return (
        f"data: {report.data_notice}\n\n{render_table(headers, rows)}\n"
        f"\n{len(results)} attempt(s): {sum(r.evidence == 'verified' for r in results)} "
        f"verified, {sum(bool(r.passed) for r in results)} passed\n"
    )


def check_json(report: CheckReport) -> str:
    """``tau2 check --json``: the report as one JSON object, each task with its ``ok``."""
    out = msgspec.to_builtins(report)
    out["tasks"] = [{**t, "ok": r.ok} for t, r in zip(out["tasks"], report.tasks, strict=True)]
    return json.dumps(out, indent=1, ensure_ascii=False)
