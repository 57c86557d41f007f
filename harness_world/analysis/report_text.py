"""A run as text: ``run``'s closing summary and ``report``'s figures.

`render_run_summary` is what ``run`` prints when it ends (``--json``: its `RunSummary`);
`render_report` is the text of a `RunReport`; `render_reading` is everything ``report``
prints (the report, the policy sheet, trusted completion, the advisories' reach) and
`reading_json` the one JSON object ``report --json`` prints, which holds every figure the text
shows. `pass_k_warnings` says which k of pass^k average fewer tasks than k = 1 does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from harness_world.analysis.diagnosis import report_advice, report_section
from harness_world.analysis.layered import render_layered
from harness_world.analysis.policy_sheet import PolicySummary, policy_lines, policy_summary
from harness_world.analysis.process import PROCESS_METRICS, ProcessSummary
from harness_world.analysis.queue import queue_line, queue_times
from harness_world.analysis.reading import RunReading
from harness_world.analysis.report import OFF_LADDER, RunReport
from harness_world.analysis.tables import interval_text, number_text, render_table
from harness_world.analysis.trusted import render_trusted
from harness_world.running.pending import pending_line
from harness_world.running.run import RunResult, run_summary
from harness_world.stats import PassKSummary

__all__ = [
    "harness_layer_line",
    "pass_k_warnings",
    "reading_json",
    "render_process",
    "render_reading",
    "render_report",
    "render_run_summary",
]

_COUNT_LABELS = {"retried": "re-run attempts"}
"""Column headers that say more than the field's name."""


def _count_lines(report: RunReport) -> list[str]:
    inv = report.counts
    keys = ["scheduled", "executed", "valid", "invalid", "retried", "missing"]
    # `retried` counts attempts executed again, not model requests (see _request_lines)
    headers = [_COUNT_LABELS.get(k, k) for k in keys]
    lines = [
        f"run {report.out}  revision {report.revision[:16]}  agent {report.agent}",
        render_table(headers, [[str(getattr(inv, k)) for k in keys]]),
        f"\npassed {inv.counted_passed} of {inv.valid} valid attempts: pass rate "
        f"{interval_text(report.pass_rate)} (Wilson 95 %, per attempt: no task luck); "
        f"completed but failed: {report.completed_but_failed}; "
        f"completed first try: {report.first_try_completed}, "
        f"eventually: {report.eventually_completed}",
        pending_line(inv),
    ]
    suite = report.suite_mean
    if suite is not None:
        lines.append(
            f"suite mean pass rate over {suite.tasks} tasks: {suite.mean:.3f} "
            f"[{suite.low:.3f}, {suite.high:.3f}] ({suite.confidence * 100:g} %, {suite.method}): "
            "what another draw of tasks like these would give"
            + (f"; {suite.why}" if suite.why else "")
        )
    if not isinstance(weighted := report.weighted_mean, msgspec.UnsetType):
        lines.append(
            f"weighted suite mean pass rate over {weighted.tasks} tasks: {weighted.mean:.3f} "
            f"(the task files' weights; unweighted {weighted.unweighted:.3f})"
        )
    if harness := harness_layer_line(report):
        lines.append(harness)
    if report.not_reviewed_attempts:
        lines.append(
            f"not reviewed: {report.not_reviewed_criteria} prose criteria on "
            f"{report.not_reviewed_attempts} valid attempts stand open until a person reviews "
            "them (`review`)"
        )
    return lines


def harness_layer_line(report: RunReport) -> str:
    """The harness layer in one line, beside the pass rate (empty when nothing was graded)."""
    layer = report.harness
    if not layer.graded:
        return ""
    failures = ", ".join(f"{name} ({n})" for name, n in layer.failed.items())
    return (
        f"harness layer: {layer.clean} of {layer.graded} graded attempts clean"
        + (f"; failed: {failures}" if failures else "")
        + " (beside the pass rate, not in it)"
    )


def _pass_k_interval(p: PassKSummary) -> str:
    """pass^k's two-sided interval over tasks (between its one-sided bounds), or ``-``."""
    if p.lower is None or p.upper is None:
        return "-"
    return f"[{p.lower:.3f}, {p.upper:.3f}]"


def _pass_k_lines(report: RunReport) -> list[str]:
    if not report.pass_k:
        return []
    shown = [p for p in report.pass_k if p.bound_note != OFF_LADDER]
    rows = [
        [str(p.k), str(p.tasks), f"{p.pass_hat_k:.3f}", _pass_k_interval(p), f"{p.pass_at_k:.3f}"]
        + [str(len(p.excluded))]
        for p in shown
    ]
    headers = ["k", "tasks", "pass^k", "95% over tasks", "pass@k", "excluded (n < k)"]
    first = {p.k: p.pass_hat_k for p in report.first_try_pass_k}
    if first:  # some slot was retried: what an operator sees without retries, beside it
        headers.insert(4, "pass^k first try")
        for row, p in zip(rows, shown, strict=True):
            row.insert(4, number_text(first.get(p.k)))
    weighted = {p.k: p for p in report.weighted_pass_k}
    if weighted:  # the task files' weights, at every k
        headers[4:4] = ["weighted pass^k", "weighted 95%"]
        for row, p in zip(rows, shown, strict=True):
            w = weighted.get(p.k)
            row[4:4] = ["-", "-"] if w is None else [f"{w.pass_hat_k:.3f}", _pass_k_interval(w)]
    tries = ", ".join(f"{n} tr{'y' if n == '1' else 'ies'} {c}" for n, c in report.tries.items())
    hidden = len(report.pass_k) - len(shown)
    return [
        "",
        render_table(headers, rows),
        f"slots by tries: {tries or 'none executed'}",
        *(
            [f"pass^k at the {hidden} other k, without an interval: --json (--pass-k K bounds one)"]
            if hidden
            else []
        ),
    ] + [f"Warning: {line}" for line in pass_k_warnings(report)]


def pass_k_warnings(report: RunReport) -> list[str]:
    """Say which k average fewer tasks than k = 1 does, and which k had no task at all."""
    if not report.pass_k:
        return []
    all_tasks = report.pass_k[0].tasks + len(report.pass_k[0].excluded)
    out = [
        f"pass^{p.k} and pass@{p.k} average {p.tasks} of {all_tasks} tasks: "
        f"{len(p.excluded)} have fewer than {p.k} valid runs "
        f"({', '.join(e.task_id for e in p.excluded[:5])}"
        + (", ..." if len(p.excluded) > 5 else "")
        + "), so the figures of different k describe different task sets"
        for p in report.pass_k
        if p.excluded
    ]
    samples = report.pass_k[-1].k
    notes = sorted({p.bound_note for p in report.pass_k if p.bound_note not in ("", OFF_LADDER)})
    if out and len(out) > 1:
        first = next(p for p in report.pass_k if p.excluded)
        out = [
            out[0],
            f"(and every k above {first.k}: see the excluded column)",
        ]
    return (
        out
        + (
            []
            if samples >= _samples(report)
            else [f"no task has {samples + 1} or more valid runs: pass^k stops at k = {samples}"]
        )
        + [f"pass^k interval over tasks: {note}" for note in notes]
    )


def _samples(report: RunReport) -> int:
    return max((a.sample for a in report.attempts), default=-1) + 1


def _consumption_lines(report: RunReport) -> list[str]:
    per = report.per_attempt
    rows = [
        [
            "valid attempt",
            number_text(per.tool_calls, 1),
            number_text(per.requests, 1),
            number_text(per.tokens, 0),
            number_text(per.cost, 4),
        ],
        [
            "passed attempt",
            number_text(per.tool_calls_per_pass, 1),
            number_text(per.requests_per_pass, 1),
            number_text(per.tokens_per_pass, 0),
            number_text(per.cost_per_pass, 4),
        ],
    ]
    headers = ["per", "tool calls", "requests", "tokens", "cost $"]
    if not isinstance(per.user_turns, msgspec.UnsetType):  # runs with a simulated user
        headers.append("user turns")
        rows[0].append(number_text(per.user_turns, 1))
        rows[1].append("-")
    return [
        "",
        render_table(headers, rows),
        f"\nlatency (context): p50 {number_text(report.latency_p50_s)} s, "
        f"p95 {number_text(report.latency_p95_s)} s",
    ]


def _request_lines(report: RunReport) -> list[str]:
    """Retried and lost model requests, when the run made any model request at all."""
    figures = report.requests
    if not (figures.retried or figures.lost or any(s.requests for s in report.attempts)):
        return []
    line = (
        f"model requests within attempts: {figures.retried} retried, {figures.lost} lost "
        f"(in {figures.attempts} attempt{'' if figures.attempts == 1 else 's'}, failed tries "
        "included)"
    )
    if figures.lost:
        line += (
            f"; lost requests' prompt tokens ≈ {figures.lost_input_tokens_estimate} "
            "(estimated, not in the token figures; their output tokens are unknown)"
        )
    return [line]


def _family_lines(report: RunReport) -> list[str]:
    rows = [
        [f.family, str(f.tasks), str(f.valid), str(f.passed), interval_text(f.interval)]
        for f in report.families
    ]
    headers = ["family", "tasks", "valid", "passed", "pass rate [Wilson 95 %]"]
    return ["", render_table(headers, rows)]


def _failure_lines(report: RunReport) -> list[str]:
    if not report.failed_tasks:
        return []
    rows = [
        [
            t.task_id,
            f"{t.failed}/{t.valid}",
            ", ".join(f"{c} ×{n}" for c, n in t.criteria.items()),
            t.reason,
        ]
        for t in report.failed_tasks
    ]
    headers = ["failed task", "failed", "criteria", "first reason"]
    return ["", render_table(headers, rows, 80)]


_MEANS = {
    "tool_calls": ("tool calls", 1),
    "failed_calls": ("failed calls", 2),
    "tokens": ("tokens", 0),
    "cost": ("cost $", 4),
    "latency_s": ("latency s", 3),
    "refused_calls": ("refused calls", 2),
    "verification_calls": ("verification calls", 2),
}
"""`ProcessSummary.per_attempt` keys: column header and decimals."""


def _process_value(summary: ProcessSummary, field: str) -> tuple[str, str]:
    """A process metric's value (with its interval) and its count over its denominator."""
    value = getattr(summary, field)
    if field == "context_efficiency":
        mean = number_text(summary.context_efficiency_mean)
        return number_text(value), (
            f"{summary.rows_used_bytes}/{summary.rows_read_bytes} row bytes used; mean over "
            f"{summary.context_efficiency_n} attempts {mean}"
        )
    if field == "efficiency_adjusted":
        return number_text(value), f"mean over {summary.efficiency_n} graded attempts with a budget"
    over = next(m.unit for m in PROCESS_METRICS if m.field == field).split(",")[0]
    counted = over.removeprefix("share of ")
    if value is None:
        return "undefined", f"no {counted} (empty denominator)"
    return interval_text(value), f"{value.successes}/{value.trials} {counted}"


def render_process(summary: ProcessSummary) -> list[str]:
    """The process metrics as text lines: each with its value, interval and denominator."""
    rows = []
    for m in PROCESS_METRICS:
        rows.append([m.name, *_process_value(summary, m.field)])
    headers = ["process metric", "value [Wilson 95 %]", "count / denominator"]
    means = [
        [label, *(number_text(figures[k], d) for k, (_, d) in _MEANS.items())]
        for label, figures in (("attempt", summary.per_attempt), ("passed", summary.per_pass))
    ]
    return [
        "",
        f"process over {summary.attempts} attempts ({summary.passed} passed), "
        f"{summary.tool_calls} tool calls, {summary.write_calls} write calls "
        "(docs/metrics.md defines each):",
        render_table(headers, rows, 80),
        render_table(["mean per", *(h for h, _ in _MEANS.values())], means),
    ]


def render_report(report: RunReport, *, full: bool = True) -> str:
    """The report's figures as text, each line ending with a newline.

    In order: the counts and pass rate (with the suite mean, the harness layer and the prose
    left open), pass^k and pass@k, consumption and latency, model requests, the failed tasks;
    ``full`` adds the figures per family, the process metrics and the layered sheets.
    """
    lines = [
        *_count_lines(report),
        *_pass_k_lines(report),
        *_consumption_lines(report),
        *_request_lines(report),
    ]
    if not full:
        return "".join(line + "\n" for line in [*lines, *_failure_lines(report)])
    lines += [
        *_family_lines(report),
        *_failure_lines(report),
        *([] if report.process is None else render_process(report.process)),
    ]
    if report.layered is not None and report.layered.pooled.records:
        lines += render_layered(report.layered)
    return "".join(line + "\n" for line in lines)


def _policy(reading: RunReading) -> PolicySummary | None:
    """The policy sheet over the run's valid graded attempts (None: no task has one)."""
    return policy_summary(
        (bool(slot.passed), slot.policy)
        for slot in reading.scan.slots
        if slot.counted and slot.passed is not None
    )


SHORT_END = (
    "more: --full adds the figures per family, process metrics, layered sheets, queue times, "
    "trusted completion and conditions; --json has every figure"
)
"""The closing line of the short report, naming what ``--full`` adds."""


def render_reading(reading: RunReading, reader_options: str = "", *, full: bool = True) -> str:
    """What ``report`` prints: the report, policy sheet, trusted completion and advice.

    The policy sheet is shown when a task has one, beside the pass rate, on the short page
    too (`harness_world.analysis.policy_sheet`); the advice is the advisories' reach.

    ``reader_options`` are the reader's ``--world``/``--tasks``, repeated in the closing
    ``diagnose`` command. Without ``full``, the short page: the report's first sections, the
    advisories' reach, and a closing line naming what ``--full`` adds.
    """
    out = render_report(reading.report, full=full)
    sheet = _policy(reading)
    if sheet is not None:
        out += "".join(line + "\n" for line in ["", *policy_lines(sheet)])
    if not full:
        out += "\n" + SHORT_END + "\n"
    else:
        out += queue_line(reading.report.attempts)
        if reading.trusted is not None:
            out += "\n" + render_trusted(reading.trusted) + "\n"
    advice = report_advice(
        reading.scan, reading.tasks, reading.advised, reading.kept, reader_options
    )
    return out + "".join(line + "\n" for line in report_section(advice))


def reading_json(
    reading: RunReading, reader_options: str = "", extra: Mapping[str, Any] | None = None
) -> str:
    """The one JSON object ``report --json`` prints: every figure `render_reading` shows.

    The report's fields, then ``warnings`` (pass^k's), ``queue`` (queue-time percentiles, null
    when no record measured them), ``policy`` (the policy sheet, when a task has one),
    ``trusted`` (when measured), ``advice`` (the advisories' reach and attribution counts)
    and the caller's ``extra`` fields (e.g. a held-out split's use, which the command line
    reads).
    """
    out: dict[str, Any] = msgspec.to_builtins(reading.report)
    out["warnings"] = pass_k_warnings(reading.report)
    out["queue"] = msgspec.to_builtins(queue_times(reading.report.attempts))
    sheet = _policy(reading)
    if sheet is not None:
        out["policy"] = msgspec.to_builtins(sheet)
    if reading.trusted is not None:
        out["trusted"] = msgspec.to_builtins(reading.trusted)
    advice = report_advice(
        reading.scan, reading.tasks, reading.advised, reading.kept, reader_options
    )
    out["advice"] = msgspec.to_builtins(advice)
    out.update(extra or {})
    return msgspec.json.format(msgspec.json.encode(out), indent=1).decode()


def render_run_summary(result: RunResult, recheck: str = "") -> str:
    """What ``run`` prints when it ends: where, the counts, failures, and how to re-check.

    ``recheck`` are the options a verifier gives for the run's own world folder (or none).
    """
    summary = run_summary(result)
    lines = [
        f"run directory: {result.out}",
        f"revision: {result.revision.id[:16]} ({len(result.revision.components)} components)",
    ]
    if result.resumed:
        lines.append(f"resumed: {result.resumed} record(s) were already saved and kept")
    keys = ["scheduled", "executed", "valid", "invalid", "retried", "missing", "passed"]
    keys += ["pending", "failed"]  # pending: automated criteria passed, prose not reviewed
    counts = msgspec.to_builtins(summary.counts)
    lines.append(render_table(keys, [[str(counts[k]) for k in keys]]))
    for slot, failed in summary.failed.items():  # one short reason per failed criterion
        reasons = [r if len(r) <= 120 else r[:119] + "…" for r in failed]
        lines.append(f"failed {slot}: " + "; ".join(reasons))
    not_reviewed = sum(len(open_) for open_ in summary.not_reviewed.values())
    if not_reviewed:
        lines.append(
            f"{not_reviewed} prose criteria not reviewed (a person reviews them; until then "
            "an attempt they hold open is pending, not passed)"
        )
    lines += [f"invalid {line}" for line in summary.invalid]
    lines.append(f"\nre-check it: python -m harness_world verify {result.out}{recheck}")
    return "".join(line + "\n" for line in lines)
