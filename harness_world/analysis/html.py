"""Self-contained HTML reports of a run and of a comparison, and their plots as PNG.

One file, no network: styles and the small script are inline (`harness_world.analysis.html_page`),
plots are inline SVG (`harness_world.analysis.plots`). A run's page opens with its summary (the
headline pass rate, the layers, the failed tasks with their criteria and advisories), then the
heatmap whose every cell links to its attempt, the sortable list of attempts
(`harness_world.analysis.html_attempts`), every count and rate folded below, then the traces,
each task's under what it expects (`harness_world.analysis.html_traces`,
`harness_world.analysis.html_expected`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

import msgspec

from harness_world.analysis.html_attempts import AttemptRow, attempts_table
from harness_world.analysis.html_page import page
from harness_world.analysis.html_summary import summary_section
from harness_world.analysis.html_traces import HTML_BUDGET, INLINE_CHARS, traces_section
from harness_world.analysis.plots import (
    COLORS,
    Plot,
    band_plot,
    heatmap_plot,
    pareto_plot,
    pass_k_plot,
    process_plot,
    vector_plot,
)
from harness_world.analysis.process import ProcessSummary
from harness_world.analysis.reading import RunReading
from harness_world.analysis.report import OFF_LADDER, RunReport
from harness_world.analysis.run_view import RunView, load_run_view
from harness_world.analysis.tables import interval_text, number_text
from harness_world.analysis.trace_html import attempt_state
from harness_world.grading.verifier import SlotResult
from harness_world.stats import Comparison, ProportionInterval, TaskTally, classify, wilson_interval
from harness_world.stats.gate import ComparisonOutcome

__all__ = [
    "HTML_BUDGET",
    "RunView",
    "compare_html",
    "compare_plots",
    "load_run_view",
    "run_html",
    "run_plots",
    "write_compare_visuals",
    "write_pngs",
    "write_run_visuals",
]

_SYMBOLS = {
    "passed": "✓",
    "pending": "◐",
    "failed": "✗",
    "ungraded": "?",
    "lost": "!",
    "invalid": "∅",
    "missing": "·",
}


# --------------------------------------------------------------------------------------------
# Figures


def _rate_rows(report: RunReport) -> list[tuple[str, ProportionInterval]]:
    counts = report.counts
    rows: list[tuple[str, ProportionInterval]] = []
    if counts.scheduled:
        rows.append(("executed / scheduled", wilson_interval(counts.executed, counts.scheduled)))
    if counts.executed:
        rows.append(("valid / executed", wilson_interval(counts.valid, counts.executed)))
        for outcome, n in sorted(counts.by_outcome.items()):
            rows.append((f"outcome {outcome} / executed", wilson_interval(n, counts.executed)))
        for evidence, n in sorted(counts.by_evidence.items()):
            rows.append((f"evidence {evidence} / executed", wilson_interval(n, counts.executed)))
    graded = counts.passed + counts.failed + counts.pending  # pending review: not passed
    if graded:
        rows.append(("passed / graded", wilson_interval(counts.passed, graded)))
    if counts.valid:
        rows.append(("not graded / valid", wilson_interval(counts.not_graded, counts.valid)))
    return rows


def _task_class(task_id: str, slots: Sequence[SlotResult]) -> str:
    valid = [s for s in slots if s.counted and s.passed is not None]
    if not valid:
        return "—"
    return classify(
        TaskTally(task_id=task_id, runs=len(valid), passes=sum(1 for s in valid if s.passed))
    )


def _heat_rows(view: RunView) -> list[tuple[str, list[str]]]:
    """Rows of the PNG heatmap: ``family: task (class)`` and the states, families together."""
    slots: dict[str, list[SlotResult]] = {}
    for slot in view.report.attempts:
        slots.setdefault(slot.task_id, []).append(slot)
    return [
        (
            f"{_family(view, t) or '?'}: {t} ({_task_class(t, slots[t])})",
            [attempt_state(s) for s in slots[t]],
        )
        for t in sorted(slots, key=lambda t: (_family(view, t), t))
    ]


def _family(view: RunView, task_id: str) -> str:
    task = view.tasks.get(task_id)
    return task.family if task is not None else ""


def _cost_axis(views: Sequence[RunView]) -> tuple[str, list[float]]:
    costs = [v.report.per_attempt.cost or 0.0 for v in views]
    if any(costs):
        return "cost per valid attempt (USD)", costs
    calls = [v.report.per_attempt.tool_calls or 0.0 for v in views]
    return "tool calls per valid attempt (no cost recorded)", calls


def _pareto_points(
    views: Sequence[RunView],
) -> tuple[str, list[tuple[str, float, float, float, bool]]]:
    label, costs = _cost_axis(views)
    raw = []
    for view, cost in zip(views, costs, strict=True):
        rate = view.report.pass_rate.estimate if view.report.pass_rate else 0.0
        top = view.report.pass_k[-1].pass_hat_k if view.report.pass_k else 0.0
        raw.append((view.name, cost, rate, top))

    def dominated(p: tuple[str, float, float, float]) -> bool:
        return any(
            q is not p and q[1] <= p[1] and q[2] >= p[2] and q[3] >= p[3] and q[1:] != p[1:]
            for q in raw
        )

    return label, [(n, c, s, k, dominated((n, c, s, k))) for n, c, s, k in raw]


def run_plots(view: RunView, *, heatmap: bool = True) -> list[Plot]:
    """The plots of one run: rate vector, pass^k curves, process rates, heatmap (PNG use)."""
    plots = []
    rates = _rate_rows(view.report)
    if rates:
        plots.append(vector_plot(rates))
    if view.report.pass_k:
        plots.append(pass_k_plot({view.name: view.report.pass_k}))
    plots.append(process_plot({view.name: _process_rates(view.summary)}))
    label, points = _pareto_points([view])
    plots.append(pareto_plot(points, label))
    if heatmap:
        plots.append(heatmap_plot(_heat_rows(view)))
    return plots


def _process_rates(summary: ProcessSummary) -> dict[str, ProportionInterval | None]:
    return {
        "backtrack": summary.backtrack_rate,
        "verification": summary.verification_rate,
        "irreversible": summary.irreversible_rate,
    }


def compare_plots(
    comparison: Comparison, outcome: ComparisonOutcome, views: Sequence[RunView]
) -> list[Plot]:
    """The plots of a comparison: the band, and with run directories pass^k, process, Pareto.

    The band and verdict are the outcome's (the gate's decision), as in the text report.
    """
    plots = [
        band_plot(
            [(p.task_id, p.difference) for p in comparison.paired],
            outcome.change,
            (outcome.band_low, outcome.band_high),
            outcome.verdict,
        )
    ]
    if views:
        plots.append(pass_k_plot({v.name: v.report.pass_k for v in views if v.report.pass_k}))
        plots.append(process_plot({v.name: _process_rates(v.summary) for v in views}))
        label, points = _pareto_points(views)
        plots.append(pareto_plot(points, label))
    return plots


def write_pngs(plots: Iterable[Plot], folder: str | Path) -> list[Path]:
    """Write each plot as ``<folder>/<name>.png``; returns the paths."""
    paths = []
    for plot in plots:
        paths.append(plot.png(Path(folder)))
        plot.close()
    return paths


# --------------------------------------------------------------------------------------------
# HTML pieces


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]], caption: str = "") -> str:
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    ths = "".join(f'<th scope="col">{escape(h)}</th>' for h in head)
    trs = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f'<table class="num">{cap}<thead><tr>{ths}</tr></thead><tbody>{trs}</tbody></table>'


def _figure(plot: Plot | None) -> str:
    if plot is None:
        return ""
    svg = plot.svg()
    plot.close()
    return (
        f"<figure>{svg}<figcaption>{escape(plot.title)}: {escape(plot.alt)}</figcaption></figure>"
    )


def _vector_section(view: RunView, plot: Plot | None) -> str:
    c = view.report.counts
    keys = [
        "scheduled",
        "executed",
        "valid",
        "invalid",
        "retried",
        "missing",
        "passed",
        "failed",
        "not_graded",
    ]
    rates = [
        (name, interval_text(p), f"{p.successes}/{p.trials}") for name, p in _rate_rows(view.report)
    ]
    headers = ["re-run attempts" if k == "retried" else k for k in keys]  # not requests
    return (
        "<h2>Denominators and the result vector</h2>"
        + _table(headers, [[getattr(c, k) for k in keys]], "every scheduled attempt, once")
        + _table(["rate", "estimate [Wilson 95 %]", "of"], rates)
        + _suite_mean(view.report)
        + f"<p>pass rate {interval_text(view.report.pass_rate)} (Wilson 95 %, per attempt: no "
        "task luck); completed but failed "
        f"{view.report.completed_but_failed}; completed first try "
        f"{view.report.first_try_completed}, eventually {view.report.eventually_completed}</p>"
        + _figure(plot)
    )


def _suite_mean(report: RunReport) -> str:
    suite = report.suite_mean
    if suite is None:
        return ""
    return (
        f"<p><b>suite mean pass rate over {suite.tasks} tasks: {suite.mean:.3f} "
        f"[{suite.low:.3f}, {suite.high:.3f}]</b> ({suite.confidence * 100:g} %, "
        f"{suite.method}: what another draw of tasks like these would give)</p>"
    )


def _pass_k_section(view: RunView, plot: Plot | None) -> str:
    rows = [
        [p.k, p.tasks, f"{p.pass_hat_k:.3f}"]
        + ["-" if p.lower is None else f"[{p.lower:.3f}, {p.upper:.3f}]"]
        + [f"{p.pass_at_k:.3f}", len(p.excluded)]
        for p in view.report.pass_k
        if p.bound_note != OFF_LADDER  # the text's rows: every k's estimate is in the plot
    ]
    headers = ["k", "tasks", "pass^k", "95% over tasks", "pass@k", "excluded (n < k)"]
    return "<h2>pass^k and pass@k</h2>" + _table(headers, rows) + _figure(plot)


def _process_table(views: Sequence[RunView]) -> str:
    rows: list[list[str]] = []
    names = ["tool_calls", "failed_calls", "tokens", "cost", "latency_s"]
    for view in views:
        s = view.summary
        for label, source in (("per attempt", s.per_attempt), ("per passed attempt", s.per_pass)):
            rows.append([view.name, label, *(number_text(source.get(n), 3) for n in names)])
    rates = [
        [
            v.name,
            v.summary.write_calls,
            interval_text(v.summary.backtrack_rate),
            interval_text(v.summary.verification_rate),
            interval_text(v.summary.irreversible_rate),
        ]
        for v in views
    ]
    return _table(
        ["config", "", "tool calls", "failed calls", "tokens", "cost $", "latency s"],
        rows,
        "over valid attempts; per passed attempt = all attempts' total / passes",
    ) + _table(
        [
            "config",
            "write calls",
            "backtrack rate",
            "verification rate",
            "irreversible-action rate",
        ],
        rates,
        "of write calls, Wilson 95 % (pooled)",
    )


def _heatmap(view: RunView, prefix: str) -> str:
    index = {id(slot): i for i, slot in enumerate(view.report.attempts)}
    by_task: dict[str, list[Any]] = {}
    for slot in view.report.attempts:
        by_task.setdefault(slot.task_id, []).append(slot)
    samples = max((len(v) for v in by_task.values()), default=0)
    head = "".join(f'<th scope="col">{i}</th>' for i in range(samples))
    rows = []
    family = None
    for task_id in sorted(by_task, key=lambda t: (_family(view, t), t)):
        if _family(view, task_id) != family:
            family = _family(view, task_id)
            rows.append(
                f'<tr class="fam"><th colspan="{samples + 2}">family '
                f"{escape(family or '(unknown)')}</th></tr>"
            )
        slots = by_task[task_id]
        label = _task_class(task_id, slots)
        cells = "".join(
            f'<td><a class="c {attempt_state(s)}" href="#{prefix}-{index[id(s)]}" '
            f'aria-label="{escape(task_id)} sample {s.sample}: {attempt_state(s)}" '
            f'title="sample {s.sample}: {attempt_state(s)}">'
            f"{_SYMBOLS[attempt_state(s)]}</a></td>"
            for s in slots
        )
        rows.append(
            f'<tr data-task="{escape(task_id)}"><th scope="row">{escape(task_id)}</th>'
            f'<td><span class="k {label}">{label}</span></td>{cells}</tr>'
        )
    legend = " ".join(f'<span class="st {s}">{_SYMBOLS[s]} {s}</span>' for s in COLORS)
    return (
        f"<p>{legend}. Task class over valid graded attempts: solid (all passed), flaky, "
        f'broken (none passed). Each cell links to its trace.</p><table class="heat" '
        f'aria-label="task by sample results of {escape(view.name)}"><thead><tr><th>task</th>'
        f"<th>class</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _plot_or_none(plots: Sequence[Plot], name: str) -> Plot | None:
    return next((p for p in plots if p.name == name), None)


def _figures(view: RunView, plots: Sequence[Plot]) -> str:
    """Every count and rate, folded: the denominators, pass^k, process metrics, cost."""
    return (
        '<details class="figures" id="figures"><summary><b>Denominators, the result vector, '
        "pass^k, process metrics and cost</b> (every count and rate with its denominator)"
        "</summary>"
        + _vector_section(view, _plot_or_none(plots, "vector"))
        + _pass_k_section(view, _plot_or_none(plots, "pass_k"))
        + "<h2>Process metrics</h2>"
        + _process_table([view])
        + _figure(_plot_or_none(plots, "process"))
        + "<h2>Cost and success</h2><p>One configuration: compare two run directories for the "
        "Pareto frontier.</p>" + _figure(_plot_or_none(plots, "pareto")) + "</details>"
    )


def _by_index(rows: list[AttemptRow]) -> list[AttemptRow]:
    """The attempts list in report order (the traces read them task by task)."""
    return sorted(rows, key=lambda r: r.index)


def run_html(view: RunView, *, inline_chars: int = INLINE_CHARS) -> str:
    """The HTML report of one run: summary, heatmap, the figures folded, then every trace.

    Args:
        view: The run (`load_run_view`).
        inline_chars: Transcripts above this many characters in all are embedded compressed
            and rendered when opened (`harness_world.analysis.html_traces.INLINE_CHARS`).
    """
    report = view.report
    plots = run_plots(view, heatmap=False)
    advisories = [m.advisories for m in view.marks] or [[] for _ in report.attempts]
    rows: list[AttemptRow] = []
    traces = traces_section(view, "a", inline_chars=inline_chars, rows=rows)
    body = (
        f"<h1>Run report: {escape(view.name)}</h1><p class=meta>run directory "
        f"<code>{escape(report.out)}</code> · revision <code>{escape(report.revision[:16])}"
        f"</code> · agent {escape(report.agent)} · generated "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}</p>"
        + summary_section(report, advisories, view.trusted, "a")
        + "<h2>Task × sample</h2>"
        + _heatmap(view, "a")
        + attempts_table(_by_index(rows), "a", compressed=view.compact)
        + _figures(view, plots)
        + '<h2 id="traces">Traces</h2>'
        + traces
    )
    return page(f"harness_world report: {view.name}", body)


_KNOWN_COMPARISON_FIELDS = frozenset(
    {
        "baseline",
        "candidate",
        "min_runs",
        "paired",
        "excluded",
        "baseline_mean",
        "candidate_mean",
        "baseline_classes",
        "candidate_classes",
        "band",
        "flips",
        "regressions",
        "mcnemar",
        "small_sample",
    }
)


def _other_fields(comparison: Comparison) -> str:
    """Fields a newer `Comparison` carries that this page has no special view for, as JSON."""
    extra = {
        f: msgspec.to_builtins(getattr(comparison, f))
        for f in comparison.__struct_fields__
        if f not in _KNOWN_COMPARISON_FIELDS
    }
    if not extra:
        return ""
    text = msgspec.json.format(msgspec.json.encode(extra), indent=1).decode()
    return f"<h2>Further figures</h2><pre>{escape(text)}</pre>"


def _band_text(o: ComparisonOutcome) -> str:
    if abs(o.band_low + o.band_high) < 5e-4:
        return f"±{o.band_high * 100:.1f}"
    return f"−{-o.band_low * 100:.1f}/+{o.band_high * 100:.1f}"


def _holm_section(c: Comparison, o: ComparisonOutcome) -> str:
    """The per-task changes that survive the Holm correction: the list the text prints."""
    rows = [
        [
            t.task_id,
            f"{t.baseline.passes}/{t.baseline.runs}",
            f"{t.candidate.passes}/{t.candidate.runs}",
            "regression" if t.difference < 0 else "improvement",
            f"{t.p_adjusted:.4f}",
        ]
        for t in o.significant_changes
    ]
    return (
        "<h3>Per-task changes significant after Holm correction "
        f"({len(rows)})</h3><p class=meta>two-sided Fisher exact per task, family-wise "
        f"{2 * o.alpha * 100:g} % if a task's runs are independent (descriptive when they share "
        "a per-task effect); the other {len(c.paired) - len(rows)} task(s) are within "
        "noise</p>"
        + (
            _table(["task", "baseline", "candidate", "change", "adjusted p"], rows)
            if rows
            else "<p>none</p>"
        )
    )


def _summary_table(c: Comparison) -> str:
    return _table(
        ["config", "mean pass rate", "solid", "flaky", "broken"],
        [
            [
                c.baseline,
                f"{c.baseline_mean:.3f}",
                c.baseline_classes.solid,
                c.baseline_classes.flaky,
                c.baseline_classes.broken,
            ],
            [
                c.candidate,
                f"{c.candidate_mean:.3f}",
                c.candidate_classes.solid,
                c.candidate_classes.flaky,
                c.candidate_classes.broken,
            ],
        ],
        f"{len(c.paired)} paired tasks, at least {c.min_runs} run(s) each side",
    )


def _comparison_section(c: Comparison, o: ComparisonOutcome, notes: Sequence[str]) -> str:
    summary = _summary_table(c)
    flips = _table(
        ["task", "baseline", "candidate"],
        [
            [
                f.task_id,
                f"{f.baseline_class} {f.baseline.passes}/{f.baseline.runs}",
                f"{f.candidate_class} {f.candidate.passes}/{f.candidate.runs}",
            ]
            for f in o.flips
        ],
    )
    by_id = {p.task_id: p for p in c.paired}
    regressions = _table(
        ["task", "baseline", "candidate"],
        [
            [
                t,
                f"{by_id[t].baseline.passes}/{by_id[t].baseline.runs}",
                f"{by_id[t].candidate.passes}/{by_id[t].candidate.runs}",
            ]
            for t in c.regressions
        ],
    )
    gate = (
        ""
        if o.gate == "none"
        else f"<p>Gate {escape(o.gate)}: {'PASSED' if o.gate_passed else 'FAILED'} "
        f"({escape(o.reason)})</p>"
    )
    return (
        f'<p class="verdict">Change {o.change * 100:+.1f} points, band {_band_text(o)} '
        f"points: {o.verdict.upper()} the band</p>"
        f"<p class=meta>one-sided {o.alpha * 100:g} % bounds of the change "
        f"{o.lower * 100:+.1f} .. {o.upper * 100:+.1f} points; {escape(o.method)}</p>"
        + gate
        + "".join(f"<p class=meta>Warning: {escape(w)}</p>" for w in o.warnings)
        + "".join(f"<p class=meta>{escape(n)}</p>" for n in notes)
        + summary
        + f"<h3>Flips, solid ↔ broken ({len(o.flips)})</h3>{flips}"
        + _holm_section(c, o)
        + f"<h3>Solid in baseline only ({len(c.regressions)}; descriptive, not corrected, "
        f"not a finding)</h3>{regressions}"
        + _table(["excluded task", "reason"], [[e.task_id, e.reason] for e in c.excluded])
    )


def _outcome_data(outcome: ComparisonOutcome) -> str:
    """The outcome as JSON inside the page, the very object the text and ``--json`` show."""
    text = msgspec.json.encode(outcome).decode().replace("</", "<\\/")
    return f'<script type="application/json" id="outcome">{text}</script>'


def compare_html(
    comparison: Comparison,
    outcome: ComparisonOutcome,
    views: Sequence[RunView] = (),
    notes: Sequence[str] = (),
) -> str:
    """The HTML report of a comparison; with the two runs' views, their heatmaps and traces too.

    Args:
        comparison: The comparison (fields added by later versions are shown as JSON).
        outcome: The verdict, band, flips and Holm list (`harness_world.stats.outcome_of`),
            the same object the text report and ``--json`` render.
        views: The baseline's and the candidate's run views (empty for a results CSV).
        notes: Lines about the inputs (revisions, components that differ).
    """
    plots = compare_plots(comparison, outcome, views)
    body = (
        f"<h1>Comparison: {escape(comparison.baseline)} → {escape(comparison.candidate)}</h1>"
        + _outcome_data(outcome)
        + _comparison_section(comparison, outcome, notes)
        + "<h2>Per-task differences and the noise band</h2>"
        + _figure(_plot_or_none(plots, "band"))
        + _other_fields(comparison)
    )
    if views:
        body += (
            "<h2>pass^k and pass@k</h2>"
            + _figure(_plot_or_none(plots, "pass_k"))
            + "<h2>Process metrics</h2>"
            + _process_table(views)
            + _figure(_plot_or_none(plots, "process"))
            + "<h2>Cost and success (Pareto)</h2>"
            + _figure(_plot_or_none(plots, "pareto"))
        )
        for i, view in enumerate(views):
            prefix = f"c{i}"
            rows: list[AttemptRow] = []
            traces = traces_section(view, prefix, 1 / len(views), rows=rows)
            body += (
                f"<h2>{escape(view.name)}: task × sample</h2>"
                + _heatmap(view, prefix)
                + attempts_table(_by_index(rows), prefix, compressed=view.compact)
                + f"<h2>{escape(view.name)}: traces</h2>"
                + traces
            )
    return page(f"harness_world compare: {comparison.baseline} vs {comparison.candidate}", body)


def _view(reading: RunReading, name: str) -> RunView:
    """A run's page data from the report's own scan: its tasks, advisories and trusted figures."""
    return load_run_view(
        reading.report,
        name,
        reading.tasks.values(),
        advised=reading.advised,
        trusted=reading.trusted,
        run=reading.run,
    )


def write_run_visuals(
    reading: RunReading, name: str, *, html: Path | None = None, png: Path | None = None
) -> None:
    """Write a run's HTML report to ``html`` and its plots as PNG files into ``png``.

    The page takes the advisories and trusted-completion figures from ``reading`` (the
    report's own scan, `harness_world.analysis.reading.read_run`), so that it names what the
    text report names without a second search.

    Raises:
        HarnessWorldError: A record of the run cannot be read for its trace.
        OSError: A file cannot be written.
    """
    view = _view(reading, name)
    if html is not None:
        html.write_text(run_html(view), encoding="utf-8")
    if png is not None:
        write_pngs(run_plots(view), png)


def write_compare_visuals(
    comparison: Comparison,
    outcome: ComparisonOutcome,
    runs: Sequence[RunReading] = (),
    notes: Sequence[str] = (),
    *,
    html: Path | None = None,
    png: Path | None = None,
) -> None:
    """Write a comparison's HTML report to ``html`` and its plots as PNG files into ``png``.

    With ``runs`` (the readings of the baseline's and the candidate's run directories, by the
    reader's worlds and tasks) the page shows both runs' heatmaps and traces too; it shows
    ``outcome``, the verdict, band and lists the text and JSON show.

    Raises:
        HarnessWorldError: A run or one of its records cannot be read.
        OSError: A file cannot be written.
        ValueError: A run directory cannot be reported.
    """
    names = (comparison.baseline, comparison.candidate)
    views = [_view(run, name) for run, name in zip(runs, names[: len(runs)], strict=True)]
    if html is not None:
        html.write_text(compare_html(comparison, outcome, views, notes), encoding="utf-8")
    if png is not None:
        write_pngs(compare_plots(comparison, outcome, views), png)
