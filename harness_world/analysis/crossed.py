"""Comparing the harnesses of a crossed run, per model profile and in aggregate.

A crossed run (`harness_world.running.crossed`) holds one run directory per configuration
(harness × model profile), every slot paired across configurations by task, sample and seed.
For each profile, the candidate harness's configuration is compared with the baseline's over
the tasks both ran: per task, the mean over paired samples of candidate minus baseline pass
(1/0); over tasks, their mean, with the interval of ``compare``'s gate (Webb-weight
wild cluster bootstrap-t over task families, CR2, skew-corrected, binomial floor), simultaneous over
the profiles (Bonferroni). The aggregate averages each task over the profiles first, so it
counts tasks, not task x profile cells. The interaction (a harness that helps one model and
hurts another) is tested, not read off the signs: per task, each profile's difference minus
the task's mean difference over the profiles (for two profiles, their difference), tested
two-sidedly with the same sign-flip bootstrap over families, Holm-corrected over the profiles.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from harness_world.errors import HarnessWorldError
from harness_world.grading.task import Task
from harness_world.grading.verifier import SlotResult
from harness_world.running.crossed import CrossedManifest, load_crossed
from harness_world.running.reader import RunReader
from harness_world.stats import (
    DEFAULT_SEED,
    Contrast,
    Design,
    PairedTask,
    StatsInputError,
    decide,
    holm_adjust,
    p_values,
    paired_samples,
)
from harness_world.stats.decision import run_variance

_LEVEL = 0.05  # two-sided, simultaneous over the profiles
_Samples = dict[str, list[tuple[bool, bool]]]

__all__ = [
    "CrossedComparison",
    "InteractionTest",
    "ProfileDifference",
    "compare_crossed",
    "difference_line",
    "paired_difference",
    "paired_slots",
    "render_crossed",
]


class ProfileDifference(msgspec.Struct, frozen=True, kw_only=True):
    """Candidate minus baseline harness for one model profile (or ``*`` for all of them).

    Attributes:
        profile: The model profile (``*``: the aggregate).
        tasks: Tasks with at least one paired sample on both sides.
        pairs: Paired samples (slots valid and graded on both sides).
        baseline_rate: The baseline's mean per-task pass rate over those pairs.
        candidate_rate: The candidate's.
        difference: Candidate minus baseline, mean over tasks.
        low: Lower bound of the interval (null when it cannot be computed).
        high: Upper bound (null likewise).
        note: Why there is no interval, when there is none.
        confidence: The interval's two-sided level for this profile (``1 - 0.05 / P`` for P
            profiles, so that all of them hold together at 95%; 95% for the aggregate).
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
    confidence: float = 0.95


class InteractionTest(msgspec.Struct, frozen=True, kw_only=True):
    """The profile x harness interaction, tested.

    Attributes:
        tasks: Tasks paired under every compared profile.
        profiles: The profiles tested (one contrast for two profiles).
        p_values: Two-sided p-value per profile's contrast (deviation from the task's mean
            over the profiles), Holm-adjusted over the profiles; for two profiles one value
            under the key ``a - b``.
        level: Two-sided family-wise level (0.05).
        detected: Whether any adjusted p-value is at most the level.
        note: Why there is no test, when there is none.
    """

    tasks: int
    profiles: list[str]
    p_values: dict[str, float]
    level: float
    detected: bool
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
        signs_differ: Whether the candidate's point estimates help one profile and hurt
            another (descriptive; `interaction` is the test).
        unpaired: Profiles lacking a configuration on one side.
        interaction: The interaction test (null with fewer than two compared profiles).
        seed: Seed of the bootstrap's random sign patterns (used above 12 clusters).
    """

    out: str
    baseline: str
    candidate: str
    profiles: list[ProfileDifference]
    aggregate: ProfileDifference
    spread: float
    signs_differ: bool
    unpaired: list[str] = []
    interaction: InteractionTest | None = None
    seed: int = DEFAULT_SEED


class CrossedCompareError(HarnessWorldError, ValueError):
    """A crossed run that cannot be compared as asked (unknown harness, one harness only)."""


def paired_slots(
    baseline: Iterable[SlotResult], candidate: Iterable[SlotResult]
) -> dict[str, list[tuple[int, bool, bool]]]:
    """Task -> ``(sample, baseline passed, candidate passed)`` for slots graded on both sides.

    Slots pair by (task, sample); only counted, graded slots take part. Sorted by task, then
    sample.
    """
    left, right = _graded(baseline), _graded(candidate)
    out: dict[str, list[tuple[int, bool, bool]]] = {}
    for task_id, sample in sorted(left.keys() & right.keys()):
        out.setdefault(task_id, []).append((sample, left[task_id, sample], right[task_id, sample]))
    return out


def _graded(slots: Iterable[SlotResult]) -> dict[tuple[str, int], bool]:
    return {
        (s.task_id, s.sample): bool(s.passed) for s in slots if s.counted and s.passed is not None
    }


def _samples(baseline: list[SlotResult], candidate: list[SlotResult]) -> _Samples:
    """Task -> (baseline passed, candidate passed) per sample both sides judged."""
    return {t: [(b, c) for _, b, c in v] for t, v in paired_slots(baseline, candidate).items()}


def _difference(
    profile: str,
    paired: Sequence[PairedTask],
    families: dict[str, str],
    seed: int,
    confidence: float = 1 - _LEVEL,
) -> ProfileDifference:
    if not paired:
        return ProfileDifference(
            profile=profile,
            tasks=0,
            pairs=0,
            baseline_rate=0.0,
            candidate_rate=0.0,
            difference=0.0,
            note="no paired samples",
            confidence=confidence,
        )
    low = high = None
    note = ""
    try:
        design = Design(
            pairs=list(paired),
            families={t: f for t, f in families.items() if f},
            alpha=(1 - confidence) / 2,
            seed=seed,
        )
        d = decide(design)
        low, high = d.lower, d.upper
    except StatsInputError as exc:
        note = f"no interval: {exc}"
    n = len(paired)
    base = sum(p.baseline.passes / p.baseline.runs for p in paired)
    cand = sum(p.candidate.passes / p.candidate.runs for p in paired)
    return ProfileDifference(
        profile=profile,
        tasks=n,
        pairs=sum(p.baseline.runs for p in paired),
        baseline_rate=base / n,
        candidate_rate=cand / n,
        difference=(cand - base) / n,
        low=low,
        high=high,
        note=note,
        confidence=confidence,
    )


def paired_difference(
    label: str,
    baseline: list[SlotResult],
    candidate: list[SlotResult],
    families: dict[str, str],
    *,
    seed: int = DEFAULT_SEED,
    confidence: float = 1 - _LEVEL,
) -> ProfileDifference:
    """Candidate minus baseline over the slots both judged, with the crossed interval.

    Args:
        label: What the difference is of (its ``profile`` field).
        baseline: The baseline's judged slots.
        candidate: The candidate's, paired with the baseline's by (task, sample).
        families: Task id -> family (the bootstrap's clusters; a task without one is its own).
        seed: Seed of the bootstrap's random sign patterns (used above 12 clusters).
        confidence: The interval's two-sided level.
    """
    paired = paired_samples(_samples(baseline, candidate))
    return _difference(label, paired, families, seed, confidence)


def _cell_variance(p: PairedTask) -> float:
    """Run-to-run variance of one (task, profile) difference, from its pooled passes."""
    return (run_variance(p, shrink=False) or run_variance(p, shrink=True)) * 2 / p.baseline.runs


def _contrasts(
    cells: dict[str, dict[str, PairedTask]], common: list[str]
) -> dict[str, list[Contrast]]:
    """Per contrast: each task's value and variance (for two profiles one, ``a - b``)."""
    names = list(cells)
    diff = {
        p: {
            t: cells[p][t].candidate.passes / cells[p][t].candidate.runs
            - cells[p][t].baseline.passes / cells[p][t].baseline.runs
            for t in common
        }
        for p in names
    }
    var = {p: {t: _cell_variance(cells[p][t]) for t in common} for p in names}
    if len(names) == 2:
        a, b = names
        return {
            f"{a} - {b}": [
                Contrast(task_id=t, value=diff[a][t] - diff[b][t], variance=var[a][t] + var[b][t])
                for t in common
            ]
        }
    k = len(names)
    return {
        p: [
            Contrast(
                task_id=t,
                value=diff[p][t] - sum(diff[q][t] for q in names) / k,
                variance=var[p][t] * (1 - 1 / k) ** 2
                + sum(var[q][t] for q in names if q != p) / k**2,
            )
            for t in common
        ]
        for p in names
    }


def _interaction(
    by_profile: dict[str, dict[str, PairedTask]], families: dict[str, str], seed: int
) -> InteractionTest | None:
    cells = {p: by_task for p, by_task in by_profile.items() if by_task}
    names = list(cells)
    if len(names) < 2:
        return None
    common = sorted(set.intersection(*(set(c) for c in cells.values())))
    clusters = {t: families.get(t) or t for t in common}
    if len(set(clusters.values())) < 2:
        return InteractionTest(
            tasks=len(common),
            profiles=names,
            p_values={},
            level=_LEVEL,
            detected=False,
            note="fewer than 2 tasks or families under every profile: no test",
        )
    raw = {}
    for name, contrasts in _contrasts(cells, common).items():
        design = Design(
            contrasts=contrasts,
            families={t: f for t, f in families.items() if f and t in clusters},
            seed=seed,
            method="sign-flip",
        )
        up, down = p_values(design, 0.0)
        raw[name] = min(1.0, 2 * min(up, down))
    adjusted = dict(zip(raw, holm_adjust(list(raw.values())), strict=True))
    return InteractionTest(
        tasks=len(common),
        profiles=names,
        p_values=adjusted,
        level=_LEVEL,
        detected=any(p <= _LEVEL for p in adjusted.values()),
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


def _read_profile(reader: RunReader, base: Path, cand: Path) -> tuple[_Samples, dict[str, str]]:
    """One profile's paired samples and its baseline run's task families."""
    left, right = reader.read(base), reader.read(cand)
    return _samples(left.slots, right.slots), left.families


def _pooled(
    read: Iterable[tuple[_Samples, dict[str, str]]],
) -> tuple[_Samples, dict[str, str]]:
    """Every profile's samples per task, and the tasks' families (the aggregate's design)."""
    pooled: _Samples = {}
    families: dict[str, str] = {}
    for samples, known in read:
        for task_id, pairs in samples.items():
            pooled.setdefault(task_id, []).extend(pairs)
        families.update((t, f) for t, f in known.items() if f)
    return pooled, families


def compare_crossed(
    out: str | Path,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    tasks: Iterable[Task] | None = None,
    seed: int = DEFAULT_SEED,
    reader: RunReader | None = None,
) -> CrossedComparison:
    """Compare two harnesses of a crossed run per model profile and in aggregate.

    Args:
        out: The crossed run directory.
        baseline: The baseline harness (default: the first configuration's).
        candidate: The candidate harness (default: the next harness named).
        tasks: The tasks to grade against (default: the built-in tasks).
        reader: How its runs are read (replaces ``tasks``; with a trusted key, a run it does
            not sign is refused).
        seed: Seed of the bootstrap's random sign patterns (used above 12 clusters).

    Raises:
        CrossedError: when ``out`` is not a readable crossed run.
        CrossedCompareError: for an unknown harness or only one.
    """
    root = Path(out)
    manifest = load_crossed(root)
    base, cand = _pick(manifest, baseline, candidate)
    by_key = {(c.harness, c.profile): c.name for c in manifest.configs}
    reader = reader or RunReader.of(tasks)
    profiles = list(dict.fromkeys(c.profile for c in manifest.configs))
    unpaired = [p for p in profiles if (base, p) not in by_key or (cand, p) not in by_key]
    compared = [p for p in profiles if p not in unpaired]
    confidence = 1 - _LEVEL / max(1, len(compared))
    read = {
        p: _read_profile(reader, root / by_key[(base, p)], root / by_key[(cand, p)])
        for p in compared
    }
    pooled, families = _pooled(read.values())
    paired = {p: paired_samples(samples) for p, (samples, _) in read.items()}
    differences = [_difference(p, paired[p], read[p][1], seed, confidence) for p in compared]
    by_profile = {p: {x.task_id: x for x in paired[p]} for p in compared}
    values = [d.difference for d in differences if d.tasks] or [0.0]
    return CrossedComparison(
        out=str(root),
        baseline=base,
        candidate=cand,
        profiles=differences,
        aggregate=_difference("*", paired_samples(pooled), families, seed),
        spread=max(values) - min(values),
        signs_differ=max(values) > 0 > min(values),
        unpaired=unpaired,
        interaction=_interaction(by_profile, families, seed),
        seed=seed,
    )


def difference_line(d: ProfileDifference) -> str:
    """One difference as a line: both rates, the difference in points, its interval, counts."""
    interval = (
        f"[{d.low * 100:+.1f}, {d.high * 100:+.1f}]"
        if d.low is not None and d.high is not None
        else f"({d.note})"
    )
    return (
        f"  {d.profile:<20} {d.baseline_rate * 100:6.1f}% -> {d.candidate_rate * 100:6.1f}%  "
        f"{d.difference * 100:+6.1f} pts {interval}  ({d.tasks} tasks, {d.pairs} pairs)"
    )


def _interaction_line(c: CrossedComparison) -> str:
    test = c.interaction
    if test is None:
        return ""
    if not test.p_values:
        return f"  interaction: {test.note}"
    ps = ", ".join(f"{name} p = {p:.3f}" for name, p in test.p_values.items())
    what = (
        "INTERACTION: the harness effect differs between profiles"
        if test.detected
        else "no interaction detected"
    )
    return (
        f"  {what} (two-sided sign-flip test over families, {test.tasks} tasks, Holm over "
        f"{len(test.profiles)} profiles, family-wise {test.level * 100:g}%: {ps})"
    )


def render_crossed(c: CrossedComparison) -> str:
    """The comparison as text: one line per profile, the aggregate, and the interaction test."""
    each = c.profiles[0].confidence * 100 if c.profiles else 95.0
    lines = [
        f"crossed run {c.out}: {c.candidate} vs {c.baseline} (pass rate, paired by task, "
        f"sample and seed; per profile {each:.4g}% intervals, 95% over all profiles together, "
        f"from compare's wild bootstrap over families; random patterns' seed {c.seed})",
        *(difference_line(d) for d in c.profiles),
        difference_line(c.aggregate).replace("  *   ", "  all ", 1),
        f"  spread across profiles: {c.spread * 100:.1f} pts",
        _interaction_line(c),
    ]
    if c.unpaired:
        lines.append(f"  not compared (a configuration missing): {', '.join(c.unpaired)}")
    return "\n".join(line for line in lines if line) + "\n"
