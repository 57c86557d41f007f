"""The comparison ``compare`` prints: two run directories paired, the report, its text.

`pair_runs` reads two run directories into results rows with the notes that say how their
revisions differ; `compare_report` gathers the descriptive comparison, the gate's decision and
the one `ComparisonOutcome` into the `CompareReport` that ``--json`` prints; `render_text` is
the terminal report, built from the same outcome so that text, JSON and HTML agree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
import msgspec

from harness_world.analysis.report import rows_of
from harness_world.analysis.trusted import TrustedComparison, TrustedObserver, compare_trusted
from harness_world.analysis.unverified import is_label
from harness_world.grading.task import Task
from harness_world.running.pending import pending_line, settle
from harness_world.running.reader import RunReader
from harness_world.running.revision import diff_revisions
from harness_world.running.rundir import RunScan
from harness_world.stats import (
    SMALL_SAMPLE_TASKS,
    Comparison,
    ComparisonOutcome,
    Decision,
    GateName,
    GateResult,
    Plan,
    PlanRow,
    RunRow,
    TaskTally,
    outcome_of,
)

__all__ = [
    "CompareReport",
    "RunPair",
    "compare_json",
    "compare_report",
    "compare_warnings",
    "pair_runs",
    "render_text",
    "trusted_pair",
]


class CompareReport(msgspec.Struct, frozen=True, kw_only=True):
    """What ``compare --json`` prints: the comparison, the decision and the gate outcome.

    Attributes:
        gate: The gate applied (``none`` when there was no gate).
        gate_passed: Whether the gate passed (always true for ``none``).
        alpha: One-sided level of every bound and gate.
        sidedness: ``one-sided`` (each gate tests one direction at ``alpha``).
        seed: Seed of the bootstrap's random weight patterns (``--seed``); the decision
            names it too when patterns were drawn (null there when every pattern was used).
        warnings: Human-readable warnings and notes (few tasks, few families, revisions of run
            directories).
        outcome: The verdict, band, flips and Holm list, exactly as the text and the HTML
            show them.
        comparison: The descriptive comparison (its band is the plain paired t band; the
            verdict is the outcome's, from the gate's decision).
        decision: The gate's decision: missing tasks, observed and worst-case tests,
            significant per-task changes, flips, plan.
        verifiable: Whether every figure comes from records a reader replays (false for a
            results CSV, or one run on both sides).
        unverified: What the figures rest on that nobody can verify, and whether the gate
            was allowed to decide on it anyway (empty when ``verifiable``).
        pending: Valid attempts pending review (``passed_automated``) by config, for run
            directories (empty for a results CSV, whose rows say what their writer counted).
        count_pending: Whether those were counted as passed (``--count-pending``).

    """

    gate: GateName
    gate_passed: bool
    alpha: float
    sidedness: str
    seed: int
    warnings: list[str]
    outcome: ComparisonOutcome
    comparison: Comparison
    decision: GateResult
    verifiable: bool = True
    unverified: list[str] = []
    pending: dict[str, int] = {}
    count_pending: bool = False


@attrs.frozen(slots=True)
class RunPair:
    """Two run directories read as results rows, with what a reader should know of them.

    Attributes:
        rows: Both runs' graded, valid slots as rows (configs ``baseline`` and ``candidate``).
        baseline: The baseline's config name.
        candidate: The candidate's config name.
        notes: Each run's revision, the components that differ, and a warning when more than
            one factor changed at once.
        scheduled: Every task either run scheduled, sorted.
        samples: The larger of the two runs' scheduled samples per task.
        scans: Both runs as their reader judged them (baseline, candidate).
    """

    rows: list[RunRow]
    baseline: str
    candidate: str
    notes: list[str]
    scheduled: list[str]
    samples: int
    scans: tuple[RunScan, RunScan]


def pair_runs(
    paths: Sequence[Path],
    names: tuple[str, str],
    watch: tuple[TrustedObserver, TrustedObserver],
    reader: RunReader,
    *,
    count_pending: bool = False,
) -> RunPair:
    """Read two run directories, baseline then candidate, for `harness_world.stats.assess`.

    Each run's pending attempts are decided by its review records and otherwise counted as
    not passed, unless ``count_pending`` (`harness_world.running.pending.settle`); the notes
    say how many there were on each side.

    Args:
        paths: The two run directories.
        names: Their config names; two equal names become ``baseline`` and ``candidate``.
        watch: Observers of each run's scan (baseline, candidate), for the trusted pairing.
        reader: How both runs are read (the reader's tasks, worlds and trusted key).
        count_pending: Count attempts still pending review as passed.

    Raises:
        harness_world.running.reader.RunReadError: A run directory cannot be read.
        harness_world.running.reader.ProvenanceRefused: The reader's key refuses a run.
        WorldError: A record's world cannot be loaded.
        harness_world.running.reviews.ReviewError: A run with pending attempts has a review
            file that cannot be read.
    """
    if names[0] == names[1]:
        names = ("baseline", "candidate")
    scans = tuple(
        settle(
            reader.read(path, measure=[seen]),
            count_pending=count_pending,
            trust_key=reader.trust_key,
        )
        for path, seen in zip(paths, watch, strict=True)
    )
    base_rows, base = rows_of(scans[0], names[0]), scans[0].manifest
    cand_rows, cand = rows_of(scans[1], names[1]), scans[1].manifest
    changed = diff_revisions(base.revision, cand.revision)
    notes = [
        f"baseline revision {base.revision.id[:16]} ({paths[0]})",
        f"candidate revision {cand.revision.id[:16]} ({paths[1]})",
        f"components that differ: {', '.join(changed) or 'none'}",
    ]
    notes += [pending_line(scan.counts, name) for scan, name in zip(scans, names, strict=True)]
    factors = [c for c in changed if not c.startswith("task:") and c not in ("samples", "seed")]
    if len(factors) > 1:
        notes.append(
            f"WARNING: {len(factors)} factors changed at once ({', '.join(factors)}): the "
            "difference cannot be attributed to any one of them"
        )
    return RunPair(
        rows=base_rows + cand_rows,
        baseline=names[0],
        candidate=names[1],
        notes=notes,
        scheduled=sorted(set(base.tasks) | set(cand.tasks)),
        samples=max(base.samples, cand.samples),
        scans=(scans[0], scans[1]),
    )


def trusted_pair(
    pair: RunPair | None,
    index: Mapping[str, Task],
    watched: tuple[TrustedObserver, TrustedObserver],
) -> TrustedComparison | None:
    """Paired trusted-completion vectors of two run directories (None otherwise).

    Built from what the observers saw while `pair_runs` read the runs (nothing is read
    again); None without a pair of runs, or when they hold nothing trusted completion applies
    to.
    """
    if pair is None:
        return None
    base, cand = pair.scans
    return compare_trusted(
        base.out, cand.out, tasks=dict(index), observed=((watched[0], base), (watched[1], cand))
    )


def compare_report(
    comparison: Comparison,
    result: GateResult,
    notes: Sequence[str] = (),
    *,
    seed: int,
    pair: RunPair | None = None,
) -> CompareReport:
    """The `CompareReport` of one assessed comparison; ``notes`` join its warnings.

    With ``pair`` (two run directories) it also says how many attempts of each were pending.
    """
    outcome = outcome_of(comparison, result, compare_warnings(comparison))
    unverified = [n for n in notes if is_label(n)]
    return CompareReport(
        verifiable=not unverified,
        unverified=unverified,
        gate=result.gate,
        gate_passed=result.passed,
        alpha=result.alpha,
        sidedness=result.sidedness,
        seed=seed,
        warnings=[*outcome.warnings, *notes],
        outcome=outcome,
        comparison=comparison,
        decision=result,
        pending={}
        if pair is None
        else {
            n: s.counts.pending
            for n, s in zip((pair.baseline, pair.candidate), pair.scans, strict=True)
        },
        count_pending=pair is not None and pair.scans[1].counts.pending_counted,
    )


def compare_json(report: CompareReport, trusted: TrustedComparison | None) -> str:
    """``compare --json``: the report as one JSON object, with ``trusted`` when present."""
    data = msgspec.to_builtins(report)
    if trusted is not None:
        data["trusted"] = msgspec.to_builtins(trusted)
    return msgspec.json.encode(data).decode() + "\n"


def compare_warnings(comparison: Comparison) -> list[str]:
    """The warning of a comparison over fewer tasks than the bounds need (else none)."""
    n = len(comparison.paired)
    if n >= SMALL_SAMPLE_TASKS:
        return []
    return [
        f"only {n} paired tasks (fewer than 30): the bounds are wide and few changes will "
        "clear them; see --plan --mde for what it would take"
    ]


def _pct(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"


def _points(fraction: float) -> str:
    return f"{abs(fraction) * 100:.1f}"


def _signed_points(fraction: float) -> str:
    text = f"{fraction * 100:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def _runs(tally: TaskTally) -> str:
    return f"{tally.passes}/{tally.runs}"


def _level(alpha: float) -> str:
    return f"{alpha * 100:g}%"


_VERDICTS = {
    "above": "ABOVE the band: the improvement is larger than this eval's noise",
    "below": "BELOW the band: the drop is larger than this eval's noise",
    "inside": "INSIDE the band: no detectable change (this eval cannot tell it from noise)",
}


def _band(o: ComparisonOutcome) -> str:
    low, high = -o.band_low, o.band_high
    if abs(low - high) < 5e-4:
        return f"+/-{_points(high)}"
    return f"-{_points(low)}/+{_points(high)}"


def _decision_lines(d: Decision, outcome: ComparisonOutcome, indent: str = "  ") -> list[str]:
    floor = "applied" if d.floor_applied else "not applied"
    spread = "CR2 over families" if d.clusters is not None else "paired"
    return [
        f"Decision: {outcome.method}, one-sided alpha {_level(d.alpha)} per direction",
        (
            f"{indent}Standard error {_points(d.standard_error)} points (from the spread, "
            f"{spread}: {_points(d.empirical_standard_error)}; binomial variance floor "
            f"{_points(d.floor_standard_error)}, {floor}); reference t({d.df:.1f}) = "
            f"{d.t_quantile:.3f}" + (f"; skewness {d.skewness:+.3f}" if d.skew_corrected else "")
        ),
        (
            f"{indent}One-sided {100 - d.alpha * 100:g}% bounds of the change: lower "
            f"{_signed_points(d.lower)}, upper {_signed_points(d.upper)} points "
            f"(p increase {d.p_increase:.4f}, p decrease {d.p_decrease:.4f})"
        ),
    ]


def render_text(
    comparison: Comparison, result: GateResult, outcome: ComparisonOutcome | None = None
) -> str:
    """Render the human-readable report ``compare`` prints (ASCII only, ends with a newline).

    ``outcome`` is the one `outcome_of` computed (computed here when not given), so the text
    shows the same verdict, band and lists as ``--json`` and ``--html``.
    """
    if outcome is None:
        outcome = outcome_of(comparison, result, compare_warnings(comparison))
    lines = _summary_lines(comparison, result, outcome)
    lines += _missing_lines(result)
    if comparison.mcnemar is not None:
        m = comparison.mcnemar
        lines.append(
            f"McNemar mid-p (one run per task, two-sided): {m.p_value:.4f} "
            f"(baseline-only passes {m.baseline_only}, "
            f"candidate-only passes {m.candidate_only})"
        )
    lines += _task_change_lines(comparison, outcome)
    lines.extend(f"Warning: {w}" for w in outcome.warnings)
    if result.plan is not None:
        lines += _plan_lines(result.plan)
    if result.gate != "none":
        r = result
        what = f"{r.gate} --margin {r.margin * 100:g}" if r.margin is not None else r.gate
        lines.append(
            f"Gate {what}: {'PASSED' if r.passed else 'FAILED'} "
            f"(one-sided {_level(r.alpha)}; {r.reason})"
        )
    return "\n".join(lines) + "\n"


def _summary_lines(c: Comparison, r: GateResult, o: ComparisonOutcome) -> list[str]:
    """Paired tasks, each side's mean, the change, its noise band, the decision and verdict."""
    d = r.observed
    names = max(len(c.baseline), len(c.candidate))
    return [
        f"Paired tasks: {len(c.paired)} (every task with at least one run on each side)",
        (
            f"Baseline  {c.baseline:<{names}}  mean pass rate {_pct(c.baseline_mean):>6}  "
            f"(solid {c.baseline_classes.solid}, flaky {c.baseline_classes.flaky}, "
            f"broken {c.baseline_classes.broken})"
        ),
        (
            f"Candidate {c.candidate:<{names}}  mean pass rate {_pct(c.candidate_mean):>6}  "
            f"(solid {c.candidate_classes.solid}, flaky {c.candidate_classes.flaky}, "
            f"broken {c.candidate_classes.broken})"
        ),
        f"Change: {_signed_points(o.change)} points",
        (
            f"Noise band: {_band(o)} points (one-sided {_level(o.alpha)} each side, the "
            f"decision's; plain paired t band +/-{_points(c.band.half_width)}, sd of per-task "
            f"differences {_points(c.band.sd)} points)"
        ),
        *_decision_lines(d, o),
        f"  Families: {r.cluster_note}",
        f"Verdict: {_VERDICTS[o.verdict]}",
    ]


def _missing_lines(r: GateResult) -> list[str]:
    """The missing data, each task with its reason, and the worst case beside the observed."""
    if not r.missing:
        return ["Missing data: none (every task has its expected runs on both sides)"]
    lines = [
        f"Missing data: {len(r.missing)} task(s) short of runs or absent on one side, "
        f"{r.expected_runs} run(s) expected per side at least"
        + (
            " (allowed by --allow-missing: decided on the observed runs)"
            if r.allow_missing
            else " (any gate fails unless --allow-missing)"
        )
    ]
    lines.extend(f"  {m.task_id}: {m.reason}" for m in r.missing)
    worst = r.worst_case
    assert worst is not None
    lines.append(
        "Worst case (candidate's missing runs counted as failures, baseline's as passes): "
        f"change {_signed_points(worst.mean)} points, one-sided bounds "
        f"{_signed_points(worst.lower)} .. {_signed_points(worst.upper)}"
        + (
            ""
            if r.gate == "none"
            else f"; gate {r.gate} would {'PASS' if r.worst_case_passed else 'FAIL'}"
        )
    )
    if r.gate != "none":
        lines.append(
            f"Tipping point: {r.tipping_point} of the {r.lost_runs} lost run(s), counted "
            "adversely (the candidate's as failures, the baseline's as passes, those that move "
            "the mean change most first), change the gate's outcome"
            if r.tipping_point is not None
            else f"Tipping point: none; even all {r.lost_runs} lost run(s) counted adversely "
            "leave the gate's outcome as it is"
        )
    return lines


def _task_change_lines(c: Comparison, o: ComparisonOutcome) -> list[str]:
    """Flipped tasks, then the per-task changes significant after the Holm correction."""
    lines = [f"Flipped tasks (solid <-> broken, listed for reading): {len(o.flips)}"]
    lines.extend(
        f"  {f.task_id}: {f.baseline_class} -> {f.candidate_class} "
        f"({_runs(f.baseline)} -> {_runs(f.candidate)})"
        for f in o.flips
    )
    changes = o.significant_changes
    lines.append(
        "Per-task changes significant after Holm correction (two-sided Fisher exact per task, "
        f"family-wise {_level(2 * o.alpha)} if a task's runs are independent; descriptive when "
        f"they share a per-task effect, see docs/stats.md): {len(changes)}"
    )
    lines.extend(
        f"  {t.task_id}: {_runs(t.baseline)} -> {_runs(t.candidate)} "
        f"({'regression' if t.difference < 0 else 'improvement'}, adjusted p {t.p_adjusted:.4f})"
        for t in changes
    )
    rest = len(c.paired) - len(changes)
    lines.append(f"  the other {rest} task(s): within noise")
    return lines


def _plan_lines(p: Plan) -> list[str]:
    """The power now and the tasks needed at each number of runs (``--plan``)."""
    lines = [
        f"Plan: power to detect a change of {p.mde * 100:g} points at one-sided "
        f"{_level(p.alpha)} with {p.tasks_now} tasks x {p.runs_now} runs: "
        f"{p.power_now * 100:.0f}%"
        + (
            f" (the gate's bootstrap on {p.simulations} simulated suites; the t approximation: "
            f"{p.power_t * 100:.0f}%)"
            if p.power_method == "simulated"
            else ""
        ),
        f"  with the gate's df {p.df:.1f} (effective clusters {p.effective_clusters:.1f}) "
        f"and design effect {p.design_effect:.2f}",
        f"  tasks needed for {p.power_target * 100:g}% power (between-task sd "
        f"{math.sqrt(p.between_task_variance) * 100:.1f} points; df and design effect grow "
        "with the suite as now):",
    ]
    lines.extend(f"  {row.runs:>3} run(s) per task per side: {_plan_row(p, row)}" for row in p.rows)
    return lines


def _plan_row(p: Plan, row: PlanRow) -> str:
    """One row of tasks needed, with how it was found when the plan simulated the gate."""
    if row.tasks is None:
        return "not reachable with 10 million tasks"
    text = f"{row.tasks} tasks ({row.total_runs} runs in all)"
    if row.method == "simulated" and row.power is not None:
        short = "" if row.power >= p.power_target else ", short of the target"
        return text + f"; the gate's power there on simulated suites: {row.power * 100:.0f}%{short}"
    if p.power_method == "simulated":
        return text + "; by the t approximation (too many tasks to simulate)"
    return text
