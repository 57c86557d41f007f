"""Comparing the harnesses of a crossed run, per model profile and in aggregate.

A crossed run (`harness_world.running.crossed`) holds one run directory per configuration
(harness × model profile), every slot paired across configurations by task, sample and seed.
For each profile, the candidate harness's configuration is compared with the baseline's over
the tasks both ran: per task, the mean over paired samples of candidate minus baseline pass
(1/0); over tasks, their mean, with a seeded paired bootstrap interval that resamples task
families. The aggregate pools every (profile, task) difference, families as clusters. The
spread of the per-profile differences is reported beside it, so an interaction (a harness that
helps one model and hurts another) is shown rather than averaged away.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.grading.verifier import SlotResult
from harness_world.running.crossed import CrossedManifest, load_crossed
from harness_world.running.rundir import scan_run
from harness_world.stats import StatsInputError, paired_cluster_bootstrap

__all__ = ["CrossedComparison", "ProfileDifference", "compare_crossed", "render_crossed"]


class ProfileDifference(msgspec.Struct, frozen=True, kw_only=True):
    """Candidate minus baseline harness for one model profile (or ``*`` for all of them).

    Attributes:
        profile: The model profile (``*``: the aggregate).
        tasks: Tasks with at least one paired sample on both sides.
        pairs: Paired samples (slots valid and graded on both sides).
        baseline_rate: The baseline's mean per-task pass rate over those pairs.
        candidate_rate: The candidate's.
        difference: Candidate minus baseline, mean over tasks.
        low: Lower bound of the bootstrap interval (null when it cannot be computed).
        high: Upper bound (null likewise).
        note: Why there is no interval, when there is none.
    """

    profile: str
    tasks: int
    pairs: int
    baseline_rate: float
    candidate_rate: float
    difference: float
    low: float | None = None
    high: float | None = None
    note: str = ""


class CrossedComparison(msgspec.Struct, frozen=True, kw_only=True):
    """The harness comparison of a crossed run.

    Attributes:
        out: The crossed run directory.
        baseline: The baseline harness.
        candidate: The candidate harness.
        profiles: One difference per model profile.
        aggregate: Every profile's pairs pooled.
        spread: Largest minus smallest per-profile difference.
        signs_differ: Whether the candidate helps one profile and hurts another.
        unpaired: Profiles lacking a configuration on one side.
    """

    out: str
    baseline: str
    candidate: str
    profiles: list[ProfileDifference]
    aggregate: ProfileDifference
    spread: float
    signs_differ: bool
    unpaired: list[str] = []


class CrossedCompareError(HarnessWorldError, ValueError):
    """A crossed run that cannot be compared as asked (unknown harness, one harness only)."""


_Item = tuple[str, str, float, float, int]  # profile, family, baseline, candidate, pairs


def _passes(slots: Iterable[SlotResult]) -> dict[tuple[str, int], bool]:
    return {
        (s.task_id, s.sample): bool(s.passed) for s in slots if s.counted and s.passed is not None
    }


def _items(
    profile: str, base: list[SlotResult], cand: list[SlotResult], families: dict[str, str]
) -> list[_Item]:
    left, right = _passes(base), _passes(cand)
    per_task: dict[str, list[tuple[bool, bool]]] = {}
    for key in sorted(left.keys() & right.keys()):
        per_task.setdefault(key[0], []).append((left[key], right[key]))
    return [
        (
            profile,
            families.get(task) or task,
            sum(b for b, _ in pairs) / len(pairs),
            sum(c for _, c in pairs) / len(pairs),
            len(pairs),
        )
        for task, pairs in per_task.items()
    ]


def _difference(profile: str, items: Sequence[_Item], seed: int) -> ProfileDifference:
    if not items:
        return ProfileDifference(
            profile=profile,
            tasks=0,
            pairs=0,
            baseline_rate=0.0,
            candidate_rate=0.0,
            difference=0.0,
            note="no paired samples",
        )
    base = [i[2] for i in items]
    cand = [i[3] for i in items]
    low = high = None
    note = ""
    try:
        interval = paired_cluster_bootstrap(base, cand, [i[1] for i in items], seed=seed)
        low, high = interval.low, interval.high
    except StatsInputError as exc:
        note = f"no interval: {exc}"
    n = len(items)
    return ProfileDifference(
        profile=profile,
        tasks=n,
        pairs=sum(i[4] for i in items),
        baseline_rate=sum(base) / n,
        candidate_rate=sum(cand) / n,
        difference=(sum(cand) - sum(base)) / n,
        low=low,
        high=high,
        note=note,
    )


def _pick(
    manifest: CrossedManifest, baseline: str | None, candidate: str | None
) -> tuple[str, str]:
    harnesses = list(dict.fromkeys(c.harness for c in manifest.configs))
    base = baseline or harnesses[0]
    cand = candidate or next((h for h in harnesses if h != base), "")
    for name in (base, cand):
        if name not in harnesses:
            raise CrossedCompareError(
                f"harness {name!r} is not in the crossed run (harnesses: {', '.join(harnesses)})"
            )
    if base == cand:
        raise CrossedCompareError("baseline and candidate are the same harness")
    return base, cand


def compare_crossed(
    out: str | Path,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    tasks: Iterable[Task] | None = None,
    seed: int = 0,
) -> CrossedComparison:
    """Compare two harnesses of a crossed run per model profile and in aggregate.

    Args:
        out: The crossed run directory.
        baseline: The baseline harness (default: the first configuration's).
        candidate: The candidate harness (default: the next harness named).
        tasks: The tasks to grade against (default: the built-in tasks).
        seed: The bootstrap's seed.

    Raises:
        CrossedError: when ``out`` is not a readable crossed run.
        CrossedCompareError: for an unknown harness or only one.
    """
    root = Path(out)
    manifest = load_crossed(root)
    base, cand = _pick(manifest, baseline, candidate)
    by_key = {(c.harness, c.profile): c.name for c in manifest.configs}
    task_list = list(tasks) if tasks is not None else None
    profiles = list(dict.fromkeys(c.profile for c in manifest.configs))
    unpaired = [p for p in profiles if (base, p) not in by_key or (cand, p) not in by_key]
    scans = {
        name: scan_run(root / name, task_list, write_counts=False)
        for name in {by_key[(h, p)] for p in profiles if p not in unpaired for h in (base, cand)}
    }
    all_items: list[_Item] = []
    differences = []
    for profile in (p for p in profiles if p not in unpaired):
        left, right = scans[by_key[(base, profile)]], scans[by_key[(cand, profile)]]
        items = _items(profile, left.slots, right.slots, left.families)
        all_items += items
        differences.append(_difference(profile, items, seed))
    values = [d.difference for d in differences if d.tasks]
    return CrossedComparison(
        out=str(root),
        baseline=base,
        candidate=cand,
        profiles=differences,
        aggregate=_difference("*", all_items, seed),
        spread=(max(values) - min(values)) if values else 0.0,
        signs_differ=any(v > 0 for v in values) and any(v < 0 for v in values),
        unpaired=unpaired,
    )


def _line(d: ProfileDifference) -> str:
    interval = (
        f"[{d.low * 100:+.1f}, {d.high * 100:+.1f}]"
        if d.low is not None and d.high is not None
        else f"({d.note})"
    )
    return (
        f"  {d.profile:<20} {d.baseline_rate * 100:6.1f}% -> {d.candidate_rate * 100:6.1f}%  "
        f"{d.difference * 100:+6.1f} pts {interval}  ({d.tasks} tasks, {d.pairs} pairs)"
    )


def render_crossed(c: CrossedComparison) -> str:
    """The comparison as text: one line per profile, the aggregate, and the interaction."""
    lines = [
        f"crossed run {c.out}: {c.candidate} vs {c.baseline} (pass rate, paired by task, "
        "sample and seed; 95% paired bootstrap over families)",
        *(_line(d) for d in c.profiles),
        _line(c.aggregate).replace("  *   ", "  all ", 1),
        f"  spread across profiles: {c.spread * 100:.1f} pts"
        + (
            "  INTERACTION: the candidate helps some profiles and hurts others"
            if c.signs_differ
            else ""
        ),
    ]
    if c.unpaired:
        lines.append(f"  not compared (a configuration missing): {', '.join(c.unpaired)}")
    return "\n".join(lines) + "\n"
