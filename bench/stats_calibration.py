"""Calibration of the ``compare`` gates: false decisions and power, measured by simulation.

Every simulated comparison is decided by the real gate, `harness_world.stats.assess` (what
``compare`` runs: the Webb-weight wild cluster bootstrap-t, CR2-studentized, skew-corrected),
and, side by side on the same rows, by the candidate methods it was chosen from:

* ``cr1``: the gate before issue 28 (CR1 over families, t with G - 1 df, no skew correction);
* ``cr2``: CR2 standard error, t with Bell-McCaffrey df;
* ``cr2+edge``: the same with Hall's Edgeworth correction for skewness;
* ``rademacher``: the wild cluster bootstrap-t with Rademacher sign flips (skew-corrected);
* ``webb-noskew``: the gate's Webb-weight bootstrap without the skew correction;
* ``band``: the band ``compare`` used before issue 12 (z from 30 tasks, short tasks dropped,
  families ignored, no floor).

Scenarios (5 runs per task and side; nulls hold exactly: under "no change" each task's two
rates are exchangeable, logits ``mu +/- s/2`` with s symmetric; for ``non-inferior`` the true
mean drop is exactly the 10-point margin):

* ``iid-40`` / ``iid-30``: independent tasks, a realistic mix of solid, flaky and broken.
* ``families-8x5``: 8 families of 5 tasks, normal family effects (logit sd 1.2).
* ``families-4x10``: 4 families of 10 with all-or-nothing family effects (logit +/-1.5, the
  sign drawn per family): a family either moves or it does not.
* ``helpdesk-30``: the family sizes helpdesk had when the issue measured them,
  [6,6,6,3,3,2,2,1,1], the same all-or-nothing effects; then one scenario per distinct
  design among the worlds' own task files, read at run time (``helpdesk/inventory-32``:
  [6,6,6,5,3,2,2,1,1]; ``payments-37``: [10,6,6,6,5,4]).
* ``dominant-20``: one dominant family, sizes [16,1,1,1,1].
* ``few-5``: 5 tasks; ``degenerate-12``: rates near 0 or 1; ``partial-40``: 10% of runs
  lost at random (decided with ``--allow-missing``).
* ``skewed-10/20/30/89``: each task drops 90 points with probability 10% (0.95 -> 0.05), else
  gains 10 (mean change exactly 0).
* ``ni-solid-broken-12/40``: each task goes solid -> broken with probability 10%, the others
  do not change (a mean drop of exactly the margin), gate ``non-inferior``.
* ``ni-ceiling-40``: every task 1.0 -> 0.9 (a drop of exactly the margin at the ceiling).

A false decision is ``improved`` or ``non-inferior`` passing, or ``no-regression`` failing,
under its null. Power: a true change of about +/- 15 points (mean over tasks) for
``improved`` / ``no-regression``, no change for ``non-inferior`` (scenarios with a special
null have no power cell). Nominal level: one-sided 2.5% for every gate; margin 10 points.

Beyond the gate (`CHECKS`), each through the function the CLI calls, fed simulated scans in
memory (`compare_crossed` for ``compare CROSSED_RUN``, `track_drift` for ``report SEQ
--fresh FRESH``, `suite_mean` for ``report``'s headline, `stats.assess` for
``--allow-missing``):

* ``crossed-*``: 2 or 3 model profiles, 5 paired samples per task and profile, each
  profile shifting the task's baseline logit; the candidate adds the true difference on the
  probability scale: ``none`` (identical harnesses), ``constant`` (+15 points), ``per-task``
  (each task its own change, the same under every profile) have no interaction, and the
  rate of a printed ``INTERACTION`` is measured against its 5% two-sided family-wise level;
  ``varied`` (profile means -10 / 0 / +10 points) has one (power). Every crossed cell also
  measures the coverage of the per-profile intervals (label ``1 - 0.05/P``), of all P
  together (95%) and of the aggregate (95%), against the population mean.
* ``drift-12x3`` / ``drift-30x5``: both tracks at the same per-task rates: how often the
  regression list is non-empty (at most 5% family-wise; the old list, every task lower on
  the sequential track, beside it), and the coverage of 0 by the 95% drift interval.
* ``headline-*``: one run; coverage of the population mean pass rate by the headline
  interval over tasks and, for reference, by the pooled Wilson interval per attempt;
  ``headline-helpdesk-32x5`` has helpdesk's families, tasks sharing their family's rate.
* ``lost-failures-40``: no true change, every failed candidate run lost with probability
  30% (informative loss, which ``--allow-missing`` assumes away): how often ``improved``
  passes, and whether the tipping point then says the outcome changes.
* ``one-family-20``: every task in one declared family, a family-level shift of the
  candidate: false ``improved`` (no decision possible), and with ``--no-clusters``.
* ``looks-10x5``: no change, the suite grows by 5 tasks between 10 looks, stop at the first
  ``improved``: at 2.5% every look, at `look_level`'s planned levels, and the final look.
* ``candidates-3-40``: three candidates identical to the baseline: some candidate passes
  ``improved`` under Holm (`assess_candidates`) and, beside it, each alone at 2.5%.
* ``per-task-icc*``: identical agents whose runs share a per-task-and-side effect: how often
  the per-task list is non-empty (descriptive: no level is claimed).
* ``end-losses-40``: no change, pass rates declining over the run order on both sides, the
  candidate's last run lost in half the tasks: false ``improved`` with ``--allow-missing``
  and the share of those the end-of-order warning names.
* ``pass-k-38x5``: coverage of the population pass^1, pass^3, pass^5 by `pass_k_bounds`, run
  counts 3 to 10 per task (heavy-tailed), and how many tasks each k averages.

Cells that decide many times a simulation (``looks``, ``candidates``, ``pass-k``) run the
count divided by their cost (at least 20); the JSON states each cell's ``sims``.

    python bench/stats_calibration.py                 # CI-sized (150 per cell, ~4 minutes)
    HW_FULL=1 python bench/stats_calibration.py       # full: 4000 per null/coverage cell
    python bench/stats_calibration.py --sims 1000     # any count (power cells get a quarter)
    python bench/stats_calibration.py --write-docs    # full, and rewrite docs/stats.md's table
    python bench/stats_calibration.py --jobs 2        # cells in two processes
    HW_FULL=1 python bench/stats_calibration.py --gate-only --only skewed  # the gate alone
    python bench/stats_calibration.py --parts          # the options of each part, a line each
    python bench/stats_calibration.py --merge OUT/*.json --write-docs  # parts run apart

``--merge`` reads the JSON lines of earlier ``--only`` / ``--gate-only`` runs of the same seed
and counts (the table in parts, in as many processes or sittings as the machine allows),
prints the gate's column of the scenario table and the check tables, and with
``--write-docs`` writes them to docs/stats.md's full-count block once every cell is there.

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
import time
import types
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

from harness_world import stats
from harness_world.analysis import crossed as crossed_module
from harness_world.analysis import drift as drift_module
from harness_world.analysis.crossed import CrossedComparison, compare_crossed
from harness_world.analysis.drift import DriftReport, track_drift
from harness_world.analysis.report import suite_mean
from harness_world.grading.task import TaskError, load_tasks
from harness_world.grading.verifier import SlotResult
from harness_world.running.crossed import CrossedConfig, CrossedManifest
from harness_world.running.sequential import TaskSequence
from harness_world.stats import Design, Method, RunRow, StatsInputError, p_values
from harness_world.stats.sequential import assess_candidates, look_level

ALPHA = 0.025
MARGIN = 0.10
EFFECT = 0.15
RUNS = 5
PROGRESS_EVERY = 200  # simulations between progress lines on stderr
DOCS = Path(__file__).resolve().parent.parent / "docs" / "stats.md"
BEGIN = "<!-- calibration:begin -->"
END = "<!-- calibration:end -->"
FULL_BEGIN = "<!-- calibration-full:begin -->"
FULL_END = "<!-- calibration-full:end -->"
GATES = ("improved", "no-regression", "non-inferior")
ALTERNATIVES: dict[str, tuple[Method, bool]] = {
    "cr1": ("cr1-t", False),
    "cr2": ("cr2-t", False),
    "cr2+edge": ("cr2-t", True),
    "rademacher": ("sign-flip", True),
    "webb-noskew": ("webb", False),
}
COLUMNS = ("gate", *ALTERNATIVES, "band")


@dataclass(frozen=True)
class Scenario:
    """One simulated suite design.

    Attributes:
        name: Its name in the tables.
        sizes: Family sizes (all 1: independent tasks).
        families: Whether rows carry the families.
        family_effect: ``normal`` (logit sd 1.2), ``two-point`` (logit +/-1.5) or ``none``.
        kind: ``mix``, ``extreme`` (rates near 0 / 1), ``skew``, ``solid-broken``, ``ceiling``.
        missing: Probability that a run is lost.
        gates: The gates measured.
        task_sd: Logit spread of per-task changes around the family's.
    """

    name: str
    sizes: tuple[int, ...]
    families: bool = False
    family_effect: str = "none"
    kind: str = "mix"
    missing: float = 0.0
    gates: tuple[str, ...] = GATES
    task_sd: float = 0.3

    @property
    def tasks(self) -> int:
        return sum(self.sizes)

    @property
    def power(self) -> bool:
        return self.kind in ("mix", "extreme")


def _ones(n: int) -> tuple[int, ...]:
    return (1,) * n


# The worlds' family sizes as their task files give them when they were last measured; read
# again at run time (`world_family_sizes`) so a new task changes the scenario with it.
KNOWN_SIZES = {
    "helpdesk": (6, 6, 6, 5, 3, 2, 2, 1, 1),
    "inventory": (6, 6, 6, 5, 3, 2, 2, 1, 1),
    "payments": (10, 6, 6, 6, 5, 4),
}


def world_family_sizes() -> dict[str, tuple[int, ...]]:
    """Each built-in world's family sizes, largest first (a task without a family: 1)."""
    try:
        tasks = load_tasks()
    except TaskError:
        return dict(KNOWN_SIZES)
    out = {}
    for world, known in KNOWN_SIZES.items():
        counts = Counter(t.family or t.id for t in tasks if t.world == world)
        out[world] = tuple(sorted(counts.values(), reverse=True)) or known
    return out


def _world_scenarios() -> tuple[Scenario, ...]:
    """One scenario per distinct design among the worlds (worlds sharing sizes share it)."""
    by_sizes: dict[tuple[int, ...], list[str]] = {}
    for world, sizes in world_family_sizes().items():
        by_sizes.setdefault(sizes, []).append(world)
    return tuple(
        Scenario(f"{'/'.join(worlds)}-{sum(sizes)}", sizes, True, "two-point", task_sd=0.2)
        for sizes, worlds in by_sizes.items()
    )


SCENARIOS = (
    Scenario("iid-40", _ones(40)),
    Scenario("iid-30", _ones(30)),
    Scenario("families-8x5", (5,) * 8, True, "normal", task_sd=0.2),
    Scenario("families-4x10", (10,) * 4, True, "two-point", task_sd=0.2),
    Scenario("helpdesk-30", (6, 6, 6, 3, 3, 2, 2, 1, 1), True, "two-point", task_sd=0.2),
    *_world_scenarios(),
    Scenario("dominant-20", (16, 1, 1, 1, 1), True, "two-point", task_sd=0.2),
    Scenario("few-5", _ones(5)),
    Scenario("degenerate-12", _ones(12), kind="extreme", task_sd=0.0),
    Scenario("partial-40", _ones(40), missing=0.10),
    Scenario("skewed-10", _ones(10), kind="skew", gates=GATES[:2]),
    Scenario("skewed-20", _ones(20), kind="skew", gates=GATES[:2]),
    Scenario("skewed-30", _ones(30), kind="skew", gates=GATES[:2]),
    Scenario("skewed-89", _ones(89), kind="skew", gates=GATES[:2]),
    Scenario("ni-solid-broken-12", _ones(12), kind="solid-broken", gates=GATES[2:]),
    Scenario("ni-solid-broken-40", _ones(40), kind="solid-broken", gates=GATES[2:]),
    Scenario("ni-ceiling-40", _ones(40), kind="ceiling", gates=GATES[2:]),
)


def _family_of(sc: Scenario) -> np.ndarray:
    return np.repeat(np.arange(len(sc.sizes)), sc.sizes)


def _centers(sc: Scenario, rng: np.random.Generator) -> np.ndarray:
    n = sc.tasks
    if sc.kind == "extreme":
        return np.where(rng.random(n) < 0.6, 0.97, 0.03)
    kind = rng.random(n)
    return np.where(
        kind < 0.45,
        rng.beta(8, 1, n),
        np.where(kind < 0.7, rng.beta(1, 8, n), rng.uniform(0.2, 0.8, n)),
    )


def _exchangeable(
    sc: Scenario, rng: np.random.Generator, logit: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rates with a mean change of exactly 0: logits ``mu -/+ s/2``, s symmetric."""
    fam = _family_of(sc)
    groups = len(sc.sizes)
    task = rng.normal(0, sc.task_sd, sc.tasks) if sc.task_sd else np.zeros(sc.tasks)
    if sc.family_effect == "normal":
        shift = rng.normal(0, 1.2, groups)[fam] + task
    elif sc.family_effect == "two-point":
        shift = 1.5 + task
    else:
        shift = task
    sign = (
        rng.choice([-1.0, 1.0], groups)[fam] if sc.families else rng.choice([-1.0, 1.0], sc.tasks)
    )
    s = shift * sign
    return 1 / (1 + np.exp(-(logit - s / 2))), 1 / (1 + np.exp(-(logit + s / 2)))


def rates(sc: Scenario, mode: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """True (baseline, candidate) pass rate per task.

    mode: ``null`` (the scenario's null: mean change exactly 0, or exactly -MARGIN for the
    ``non-inferior`` gate), ``ni-null`` (exactly -MARGIN for the standard kinds), ``up`` /
    ``down`` (about +/- EFFECT), ``zero`` (no change on any task).
    """
    n = sc.tasks
    if sc.kind == "skew":
        drop = rng.random(n) < 0.1
        base = rng.uniform(0.2, 0.8, n)
        return np.where(drop, 0.95, base), np.where(drop, 0.05, base + 0.1)
    if sc.kind == "ceiling":
        return np.ones(n), np.full(n, 1 - MARGIN)
    center = np.clip(_centers(sc, rng), 1e-3, 1 - 1e-3)
    logit = np.log(center / (1 - center))
    if sc.kind == "solid-broken":
        drop = rng.random(n) < MARGIN
        p_b, p_c = _exchangeable(sc, rng, logit)
        return np.where(drop, 1.0, p_b), np.where(drop, 0.0, p_c)
    fam = _family_of(sc)
    if mode == "ni-null":
        # Probability scale, no clipping: p_c = p_b - MARGIN + symmetric noise within +/- w.
        w = 0.06 if sc.families or sc.task_sd else 0.0
        groups = len(sc.sizes)
        if sc.family_effect == "two-point":
            f = (w / 2) * rng.choice([-1.0, 1.0], groups)[fam]
        elif sc.families:
            f = rng.uniform(-w / 2, w / 2, groups)[fam]
        else:
            f = np.zeros(n)
        t = rng.uniform(-w / 2, w / 2, n) if sc.task_sd and not sc.families else np.zeros(n)
        p_b = np.clip(center, MARGIN + w, 1 - w)
        return p_b, p_b - MARGIN + f + t
    p_b, p_c = _exchangeable(sc, rng, logit)
    if mode == "zero":
        return p_b, p_b.copy()
    if mode in ("up", "down"):
        step = EFFECT if mode == "up" else -EFFECT
        p_c = np.clip(p_b + step + (p_c - p_b), 0.0, 1.0)
    return p_b, p_c


def simulate_rows(
    sc: Scenario, p_b: np.ndarray, p_c: np.ndarray, rng: np.random.Generator
) -> list[RunRow]:
    """Runs of every task on both sides (some lost in ``partial`` scenarios)."""
    fam = _family_of(sc)
    rows: list[RunRow] = []
    for config, p in (("main", p_b), ("pr", p_c)):
        outcomes = rng.random((sc.tasks, RUNS)) < p[:, None]
        kept = rng.random((sc.tasks, RUNS)) >= sc.missing
        for i in range(sc.tasks):
            family = f"f{fam[i]}" if sc.families else ""
            rows.extend(
                RunRow(
                    task_id=f"t{i:03d}",
                    run_index=r,
                    config=config,
                    passed=bool(outcomes[i, r]),
                    family=family,
                )
                for r in range(RUNS)
                if kept[i, r]
            )
    return rows


def gate_decision(rows: list[RunRow], gate: str, sc: Scenario) -> bool | None:
    """What ``compare --gate`` decides (None when the input is refused)."""
    try:
        _, res = stats.assess(
            rows,
            "main",
            "pr",
            gate=gate,  # type: ignore[arg-type]
            alpha=ALPHA,
            margin=MARGIN,
            min_runs=RUNS,
            allow_missing=sc.missing > 0,
        )
    except StatsInputError:
        return None
    return res.passed


def alternative_decision(rows: list[RunRow], gate: str, method: Method, skew: bool) -> bool | None:
    """One candidate method's decision on the observed paired tasks (as ``--allow-missing``)."""
    try:
        paired, _ = stats.pair_tallies(stats.tally_runs(rows, "main"), stats.tally_runs(rows, "pr"))
        design = Design(
            pairs=paired,
            families=stats.task_families(rows),
            alpha=ALPHA,
            method=method,
            skew_correction=skew,
        )
        up, down = p_values(design, -MARGIN if gate == "non-inferior" else 0.0)
    except StatsInputError:
        return None
    p = down if gate == "no-regression" else up
    rejected = p <= ALPHA
    return not rejected if gate == "no-regression" else rejected


def band_decision(rows: list[RunRow], gate: str) -> bool | None:
    """The band ``compare`` used before issue 12 (no non-inferiority gate)."""
    if gate == "non-inferior":
        return None
    try:
        comparison = stats.compare_results(rows, "main", "pr", min_runs=RUNS)
    except StatsInputError:
        return None
    verdict = comparison.band.verdict
    return verdict == "above" if gate == "improved" else verdict != "below"


def run_cell(
    sc: Scenario, gate: str, kind: str, sims: int, seed: int, gate_only: bool = False
) -> dict[str, float | int | None]:
    """One (scenario, gate, null|effect) cell: each method's rate of the outcome that counts.

    Null cells measure every method; effect cells the gate, ``rademacher``, ``cr1`` and the
    band; ``gate_only``: the gate alone (the same draws, so the gate's figure is the same).
    """
    if kind == "null":
        mode = "ni-null" if gate == "non-inferior" and sc.power else "null"
    else:
        mode = {"improved": "up", "no-regression": "down", "non-inferior": "zero"}[gate]
    # What counts: a false decision in a null cell, a detection in an effect cell. For
    # no-regression that is a failed gate; for the others a passed one.
    flip = gate == "no-regression"
    rng = np.random.default_rng([seed, SCENARIOS.index(sc), GATES.index(gate), kind == "null"])
    hits = dict.fromkeys(COLUMNS, 0)
    totals = dict.fromkeys(COLUMNS, 0)
    measured = COLUMNS if kind == "null" else ("gate", "rademacher", "cr1", "band")
    if gate_only:
        measured = ("gate",)
    true_changes: list[float] = []
    # Scenarios with a rare class of tasks (a 90- or 100-point drop): the gate's false
    # decisions split by whether the suite holds any of them. Where it holds none, its runs are
    # distributed as under the rare class's absence, so no statistic can tell the two apart.
    rare_kind = sc.kind in ("skew", "solid-broken")
    without_rare = without_rare_hits = 0
    for done in range(sims):
        if done and done % PROGRESS_EVERY == 0:  # a long run killed early still says where it was
            print(
                f"progress: {sc.name} {gate} {kind} {done}/{sims}: gate "
                f"{hits['gate'] / max(totals['gate'], 1) * 100:.2f}% of {totals['gate']} decided",
                file=sys.stderr,
                flush=True,
            )
        p_b, p_c = rates(sc, mode, rng)
        true_changes.append(float(np.mean(p_c - p_b)))
        rows = simulate_rows(sc, p_b, p_c, rng)
        none_rare = rare_kind and not bool(np.any(p_b - p_c > 0.85))
        without_rare += none_rare
        for column in measured:
            if column == "gate":
                got = gate_decision(rows, gate, sc)
            elif column == "band":
                got = band_decision(rows, gate)
            else:
                method, skew = ALTERNATIVES[column]
                got = alternative_decision(rows, gate, method, skew)
            if got is not None:
                totals[column] += 1
                hits[column] += got != flip
                if column == "gate" and none_rare:
                    without_rare_hits += got != flip
    out: dict[str, float | int | None] = {
        c: (hits[c] / totals[c] if totals[c] and c in measured else None) for c in COLUMNS
    }
    if rare_kind:
        decided = max(totals["gate"], 1)
        out["without_rare_share"] = without_rare / sims
        out["gate_from_without_rare"] = without_rare_hits / decided
        out["gate_from_with_rare"] = (hits["gate"] - without_rare_hits) / decided
    out["decided"] = totals["gate"]
    out["sims"] = sims
    out["true_change"] = float(np.mean(true_changes))
    return out


# ------------------------------------------------------------------------------------------
# Crossed runs, drift, the report's headline and informative losses: each decided by the
# function the CLI calls (`compare_crossed`, `track_drift`, `suite_mean`, `stats.assess`),
# fed simulated run scans in memory instead of run directories on disk.


@dataclass(frozen=True)
class Check:
    """One scenario outside the gate table: a rate (of a printed finding) or a coverage.

    Attributes:
        name: Its name in the tables.
        kind: ``crossed`` (interaction rate and interval coverage of `compare_crossed`),
            ``drift`` (`track_drift`), ``headline`` (`suite_mean` and the pooled Wilson) or
            ``lost-failures`` (`stats.assess` with ``allow_missing`` when failed candidate
            runs are lost).
        tasks: Tasks.
        runs: Runs (samples) per task, side and profile.
        profiles: Model profiles of a crossed run.
        effect: Crossed runs: ``none`` (candidate identical), ``constant`` (+15 points on
            every task and profile), ``per-task`` (+10 points on average, each task its own
            change within +/-10, the same under every profile: still no interaction),
            ``varied`` (profile means -10 / 0 / +10 points, task and task x profile spread:
            an interaction, for power and coverage).
        sizes: Family sizes (empty: independent tasks); for ``headline``, each task's rate
            is 0.7 of its family's draw and 0.3 of its own.
        loss: ``lost-failures``: probability that a failed candidate run is lost.
    """

    name: str
    kind: str
    tasks: int
    runs: int = RUNS
    profiles: int = 0
    effect: str = "none"
    sizes: tuple[int, ...] = ()
    loss: float = 0.0
    icc: float = 0.0
    looks: int = 0
    candidates: int = 0
    cost: int = 1


CHECKS = (
    Check("crossed-3p-none-20", "crossed", 20, profiles=3),
    Check("crossed-2p-none-20", "crossed", 20, profiles=2),
    Check("crossed-3p-constant-20", "crossed", 20, profiles=3, effect="constant"),
    Check("crossed-2p-constant-20", "crossed", 20, profiles=2, effect="constant"),
    Check("crossed-3p-per-task-20", "crossed", 20, profiles=3, effect="per-task"),
    Check("crossed-3p-varied-10", "crossed", 10, profiles=3, effect="varied"),
    Check("crossed-3p-varied-20", "crossed", 20, profiles=3, effect="varied"),
    Check("drift-12x3", "drift", 12, runs=3),
    Check("drift-30x5", "drift", 30, runs=5),
    Check("headline-30x3", "headline", 30, runs=3),
    Check("headline-30x10", "headline", 30, runs=10),
    Check("headline-89x5", "headline", 89, runs=5),
    Check("headline-helpdesk-32x5", "headline", 32, sizes=KNOWN_SIZES["helpdesk"]),
    Check("lost-failures-40", "lost-failures", 40, loss=0.3),
    Check("one-family-20", "one-family", 20, sizes=(20,)),
    Check("looks-10x5", "looks", 50, looks=10, cost=3),
    Check("candidates-3-40", "candidates", 40, candidates=3, cost=4),
    Check("per-task-icc0.1-40x10", "per-task-icc", 40, runs=10, icc=0.1),
    Check("per-task-icc0.3-40x10", "per-task-icc", 40, runs=10, icc=0.3),
    Check("end-losses-40", "end-losses", 40, loss=0.5),
    Check("pass-k-38x5", "pass-k", 38, cost=3),
)
CROSSED_LEVEL = 0.05  # the interaction test's two-sided family-wise level, and the intervals'
PROFILE_LOGITS = (-0.8, 0.0, 0.8)
VARIED_MEANS = (-0.10, 0.0, 0.10)


class _Scan:
    """What `compare_crossed` and `track_drift` read of a run scan: slots, families, manifest."""

    __slots__ = ("families", "manifest", "slots")

    def __init__(
        self, slots: list[SlotResult], families: dict[str, str], manifest: object = None
    ) -> None:
        self.slots = slots
        self.families = families
        self.manifest = manifest


def _slots(passed: np.ndarray) -> list[SlotResult]:
    """Graded, valid slots of a (tasks x samples) pass matrix."""
    return [
        SlotResult(
            task_id=f"t{i:03d}",
            sample=r,
            path="",
            outcome="completed",
            evidence="verified",
            passed=bool(passed[i, r]),
        )
        for i in range(passed.shape[0])
        for r in range(passed.shape[1])
    ]


class _InMemoryReader:
    """A run reader that gives simulated scans by run folder name instead of reading disk."""

    def __init__(self, scans: dict[str, _Scan]) -> None:
        self.scans = scans

    def read(self, out: object, **_: object) -> _Scan:
        return self.scans[Path(str(out)).name]


@contextlib.contextmanager
def _in_memory(module: object, **extra: object) -> Iterator[None]:
    """Let ``module``'s ``extra`` names (its manifest loaders) give simulated values."""
    with contextlib.ExitStack() as stack:
        for name, value in extra.items():
            stack.enter_context(mock.patch.object(module, name, value))
        yield


def _family_labels(check: Check) -> dict[str, str]:
    if not check.sizes:
        return {}
    fam = np.repeat(np.arange(len(check.sizes)), check.sizes)
    return {f"t{i:03d}": f"f{fam[i]}" for i in range(check.tasks)}


def _crossed_truth(check: Check, rng: np.random.Generator) -> np.ndarray:
    """True candidate-minus-baseline rate per (task, profile)."""
    shape = (check.tasks, check.profiles)
    if check.effect == "none":
        return np.zeros(shape)
    if check.effect == "constant":
        return np.full(shape, EFFECT)
    if check.effect == "per-task":
        return np.repeat(0.1 + rng.uniform(-0.1, 0.1, (check.tasks, 1)), check.profiles, axis=1)
    means = np.array(VARIED_MEANS[: check.profiles])
    return (
        means[None, :] + rng.uniform(-0.1, 0.1, (check.tasks, 1)) + rng.uniform(-0.05, 0.05, shape)
    )


def crossed_once(check: Check, rng: np.random.Generator) -> tuple[CrossedComparison, np.ndarray]:
    """One simulated crossed run, compared by `compare_crossed`; and each profile's true mean.

    The truth is the mean over the population of tasks (what the intervals, which count task
    luck, are about): 0, +15, +10 or the profile's mean in ``VARIED_MEANS``.

    Every profile shifts the task's baseline logit; the candidate adds exactly the true
    difference on the probability scale (the baseline is kept where that stays in [0, 1]).
    """
    delta = _crossed_truth(check, rng)
    center = np.clip(_centers(Scenario("", _ones(check.tasks)), rng), 0.02, 0.98)
    logit = np.log(center / (1 - center))[:, None] + np.array(PROFILE_LOGITS[: check.profiles])
    base = np.clip(1 / (1 + np.exp(-logit)), np.maximum(0.0, -delta), np.minimum(1.0, 1 - delta))
    scans: dict[str, _Scan] = {}
    configs = []
    families = _family_labels(check)
    for p in range(check.profiles):
        for harness, rate in (("main", base[:, p]), ("pr", base[:, p] + delta[:, p])):
            name = f"{harness}-m{p}"
            configs.append(CrossedConfig(name=name, harness=harness, profile=f"m{p}"))
            outcomes = rng.random((check.tasks, check.runs)) < rate[:, None]
            scans[name] = _Scan(_slots(outcomes), families)
    manifest = CrossedManifest(
        configs=configs, tasks=[], samples=check.runs, seed=0, order_seed=0, order=[]
    )
    with _in_memory(crossed_module, load_crossed=lambda _: manifest):
        reader: Any = _InMemoryReader(scans)
        result = compare_crossed("crossed", baseline="main", candidate="pr", reader=reader)
    return result, _population_means(check)


def _population_means(check: Check) -> np.ndarray:
    if check.effect == "varied":
        return np.array(VARIED_MEANS[: check.profiles])
    mean = {"none": 0.0, "constant": EFFECT, "per-task": 0.1}[check.effect]
    return np.full(check.profiles, mean)


def _covers(low: float | None, high: float | None, truth: float) -> bool:
    return low is not None and high is not None and low <= truth <= high


def crossed_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """Interaction printed; per-profile, simultaneous and aggregate interval coverage."""
    detected = each = together = aggregate = 0
    for _ in range(sims):
        result, truth = crossed_once(check, rng)
        detected += result.interaction is not None and result.interaction.detected
        hits = [_covers(d.low, d.high, t) for d, t in zip(result.profiles, truth, strict=True)]
        each += sum(hits)
        together += all(hits)
        aggregate += _covers(result.aggregate.low, result.aggregate.high, float(truth.mean()))
    return {
        "interaction": detected / sims,
        "profile_coverage": each / (sims * check.profiles),
        "profile_label": 1 - CROSSED_LEVEL / check.profiles,
        "simultaneous_coverage": together / sims,
        "aggregate_coverage": aggregate / sims,
    }


def drift_once(check: Check, rng: np.random.Generator) -> DriftReport:
    """One fresh and one sequential track with no drift, compared by `track_drift`."""
    rate = _centers(Scenario("", _ones(check.tasks)), rng)
    ids = [f"t{i:03d}" for i in range(check.tasks)]
    scans = {}
    for track in ("fresh", "sequential"):
        outcomes = rng.random((check.tasks, check.runs)) < rate[:, None]
        manifest = types.SimpleNamespace(track=track, tasks=ids, samples=check.runs, seed=0)
        scans[track] = _Scan(_slots(outcomes), {}, manifest)
    sequence = TaskSequence(seed=0, passes=[ids] * check.runs)
    with _in_memory(drift_module, load_sequence=lambda _: sequence):
        reader: Any = _InMemoryReader(scans)
        return track_drift("fresh", "sequential", reader=reader)


def drift_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """Regression list non-empty (and the old every-lower list), interval coverage of 0."""
    listed = lower = covered = 0
    for _ in range(sims):
        report = drift_once(check, rng)
        listed += bool(report.regressions)
        lower += bool(report.lower_on_sequential)
        covered += _covers(report.low, report.high, 0.0)
    return {"listed": listed / sims, "lower_listed": lower / sims, "coverage": covered / sims}


MIX_MEAN = 0.45 * 8 / 9 + 0.25 * 1 / 9 + 0.30 * 0.5  # E[p] of `_centers`'s mix


def headline_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """Coverage of the suite's population mean pass rate: `suite_mean` and pooled Wilson."""
    covered = wilson = 0
    families = _family_labels(check)
    for _ in range(sims):
        rate = _centers(Scenario("", _ones(check.tasks)), rng)
        if check.sizes:
            groups = _centers(Scenario("", _ones(len(check.sizes))), rng)
            rate = 0.7 * np.repeat(groups, check.sizes) + 0.3 * rate
        outcomes = rng.random((check.tasks, check.runs)) < rate[:, None]
        rows = [
            RunRow(task_id=f"t{i:03d}", run_index=r, config="run", passed=bool(outcomes[i, r]))
            for i in range(check.tasks)
            for r in range(check.runs)
        ]
        mean = suite_mean(rows, families)  # what `report` prints as its headline
        covered += mean is not None and mean.low <= MIX_MEAN <= mean.high
        pooled = stats.wilson_interval(int(outcomes.sum()), outcomes.size)
        wilson += pooled.low <= MIX_MEAN <= pooled.high
    return {"coverage": covered / sims, "wilson_coverage": wilson / sims}


def lost_failures_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """No true change; failed candidate runs lost with ``check.loss``; gate ``improved``."""
    sc = Scenario("", _ones(check.tasks))
    passed = flagged = 0
    ratios: list[float] = []
    for _ in range(sims):
        p_b, p_c = rates(sc, "null", rng)
        rows = [
            r
            for r in simulate_rows(sc, p_b, p_c, rng)
            if r.config == "main" or r.passed or rng.random() >= check.loss
        ]
        _, res = stats.assess(
            rows, "main", "pr", gate="improved", alpha=ALPHA, min_runs=RUNS, allow_missing=True
        )
        if res.passed:
            passed += 1
            flagged += res.tipping_point is not None
            if res.tipping_point is not None and res.lost_runs:
                ratios.append(res.tipping_point / res.lost_runs)
    return {
        "improved": passed / sims,
        "flagged_share": flagged / passed if passed else 1.0,
        "tipping_share_median": float(np.median(ratios)) if ratios else 0.0,
    }


def _null_pairs(tasks: int, runs: int, rng: np.random.Generator) -> list[stats.PairedTask]:
    """Identical agents: each task's rate from `_centers`, the same on both sides."""
    rate = _centers(Scenario("", _ones(tasks)), rng)
    outcomes = rng.random((tasks, runs, 2)) < rate[:, None, None]
    return stats.paired_samples(
        {
            f"t{i:03d}": [(bool(outcomes[i, r, 0]), bool(outcomes[i, r, 1])) for r in range(runs)]
            for i in range(tasks)
        }
    )


def one_family_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """Every task in one declared family, a family-level shift of the candidate (logit sd 1.2
    drawn once per suite, mean 0): how often ``improved`` passes, and with --no-clusters."""
    sc = Scenario("", _ones(check.tasks))
    passed = independent = 0
    for _ in range(sims):
        base = _centers(sc, rng)
        logit = np.log(base / (1 - base)) + rng.normal(0, 1.2)
        cand = 1 / (1 + np.exp(-logit))
        rows = [
            RunRow(
                task_id=f"t{i:03d}",
                run_index=r,
                config=config,
                passed=bool(rng.random() < rate[i]),
                family="one",
            )
            for config, rate in (("main", base), ("pr", cand))
            for i in range(check.tasks)
            for r in range(check.runs)
        ]
        _, res = stats.assess(rows, "main", "pr", gate="improved", alpha=ALPHA, min_runs=RUNS)
        passed += res.passed
        _, free = stats.assess(
            rows, "main", "pr", gate="improved", alpha=ALPHA, min_runs=RUNS, use_clusters=False
        )
        independent += free.passed
    return {"improved": passed / sims, "no_clusters_improved": independent / sims}


def looks_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """No change; the suite grows by tasks / looks tasks between looks; stop at the first
    ``improved``: at ``alpha`` every look (unplanned), and at `look_level`'s (planned)."""
    step = check.tasks // check.looks
    levels = [look_level(j, check.looks, ALPHA).nominal_alpha for j in range(1, check.looks + 1)]
    unplanned = planned = once = 0
    for _ in range(sims):
        pairs = _null_pairs(check.tasks, check.runs, rng)
        # The gate's p-value at 0 (its verdict's, where it is monotone: above 4 clusters).
        p = [p_values(Design(pairs=pairs[: step * j]))[0] for j in range(1, check.looks + 1)]
        unplanned += any(x <= ALPHA for x in p)
        planned += any(x <= level for x, level in zip(p, levels, strict=True))
        once += p[-1] <= ALPHA
    return {
        "unplanned": unplanned / sims,
        "planned": planned / sims,
        "final_only": once / sims,
    }


def candidates_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """No candidate differs from the baseline: how often some candidate passes ``improved``,
    with Holm (`assess_candidates`) and each decided alone at ``alpha``."""
    sc = Scenario("", _ones(check.tasks))
    holm = alone = 0
    names = [f"c{j}" for j in range(check.candidates)]
    for _ in range(sims):
        rate = _centers(sc, rng)
        rows = [
            RunRow(
                task_id=f"t{i:03d}", run_index=r, config=config, passed=bool(rng.random() < rate[i])
            )
            for config in ("main", *names)
            for i in range(check.tasks)
            for r in range(check.runs)
        ]
        result = assess_candidates(rows, "main", names, gate="improved", alpha=ALPHA, min_runs=RUNS)
        holm += any(c.passed for c in result.candidates)
        alone += any(c.p_value <= ALPHA for c in result.candidates)
    return {"holm": holm / sims, "alone": alone / sims}


def per_task_icc_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """Identical agents whose runs share a per-task-and-side effect (intra-class correlation
    ``icc``: each side's rate drawn from a beta around the task's): how often the Holm-tested
    per-task list is non-empty (`task_changes`)."""
    sc = Scenario("", _ones(check.tasks))
    listed = 0
    for _ in range(sims):
        mean = np.clip(_centers(sc, rng), 0.02, 0.98)
        a, b = mean * (1 - check.icc) / check.icc, (1 - mean) * (1 - check.icc) / check.icc
        sides = rng.beta(a[:, None], b[:, None], size=(check.tasks, 2))
        outcomes = rng.random((check.tasks, check.runs, 2)) < sides[:, None, :]
        pairs = stats.paired_samples(
            {
                f"t{i:03d}": [
                    (bool(outcomes[i, r, 0]), bool(outcomes[i, r, 1])) for r in range(check.runs)
                ]
                for i in range(check.tasks)
            }
        )
        listed += any(c.significant for c in stats.task_changes(pairs, ALPHA))
    return {"listed": listed / sims}


def end_losses_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """No change; pass rates decline over the run order (-8 points a run index, the same on
    both sides); the candidate's run is cut off: each task loses its last run with chance
    ``loss``. How often ``improved`` passes with --allow-missing, and how often the end-of-
    order warning is printed then (and overall)."""
    sc = Scenario("", _ones(check.tasks))
    passed = warned_pass = warned = 0
    for _ in range(sims):
        rate = _centers(sc, rng)
        rows = []
        for config in ("main", "pr"):
            for i in range(check.tasks):
                for r in range(check.runs):
                    if config == "pr" and r == check.runs - 1 and rng.random() < check.loss:
                        continue
                    p = np.clip(rate[i] - 0.08 * r, 0.0, 1.0)
                    rows.append(
                        RunRow(
                            task_id=f"t{i:03d}",
                            run_index=r,
                            config=config,
                            passed=bool(rng.random() < p),
                        )
                    )
        _, res = stats.assess(
            rows, "main", "pr", gate="improved", alpha=ALPHA, min_runs=RUNS, allow_missing=True
        )
        flag = any("end of the run order" in w for w in res.warnings)
        passed += res.passed
        warned_pass += res.passed and flag
        warned += flag
    return {
        "improved": passed / sims,
        "warned_share": warned_pass / passed if passed else 1.0,
        "warned": warned / sims,
    }


PASS_K = (1, 3, 5)


def pass_k_cell(check: Check, sims: int, rng: np.random.Generator) -> dict[str, float]:
    """Coverage of the population pass^k by `pass_k_bounds`' interval: task rates from
    Beta(2, 1) (population pass^k ``2 / (k + 2)``), run counts 3 to 10 per task (heavy
    tailed: a quarter of tasks have 10), so pass^5 averages the tasks with 5 or more."""
    covered = dict.fromkeys(PASS_K, 0)
    averaged = dict.fromkeys(PASS_K, 0.0)
    for _ in range(sims):
        rates = rng.beta(2.0, 1.0, size=check.tasks)
        runs = np.where(rng.random(check.tasks) < 0.25, 10, rng.integers(3, 8, size=check.tasks))
        tallies = [
            stats.TaskTally(task_id=f"t{i:03d}", runs=int(n), passes=int(rng.binomial(n, rates[i])))
            for i, n in enumerate(runs)
        ]
        for k in PASS_K:
            s = stats.pass_k_bounds(stats.pass_k_summary(tallies, k))
            covered[k] += (
                (s.lower or 0.0) <= 2 / (k + 2) <= (s.upper if s.upper is not None else 1.0)
            )
            averaged[k] += s.tasks / sims
    return {f"coverage_{k}": covered[k] / sims for k in PASS_K} | {
        f"tasks_{k}": averaged[k] for k in PASS_K
    }


CHECK_CELLS = {
    "crossed": crossed_cell,
    "drift": drift_cell,
    "headline": headline_cell,
    "lost-failures": lost_failures_cell,
    "one-family": one_family_cell,
    "looks": looks_cell,
    "candidates": candidates_cell,
    "per-task-icc": per_task_icc_cell,
    "end-losses": end_losses_cell,
    "pass-k": pass_k_cell,
}


def run_check(check: Check, sims: int, seed: int) -> dict[str, float]:
    """One check's figures over ``sims`` simulations (its own seed: same at any ``--jobs``)."""
    rng = np.random.default_rng([seed, 1000 + CHECKS.index(check)])
    # A cell deciding many times a simulation runs fewer, but at least 20; a smaller ``--sims``
    # (the tests' smoke run of the bench) is taken as asked.
    sims = max(min(20, sims), sims // check.cost)
    out = CHECK_CELLS[check.kind](check, sims, rng)
    out["sims"] = sims
    return out


def _pct(x: float | int | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f}%"


Results = dict[str, dict[str, dict[str, dict[str, float | int | None]]]]


def table(results: Results) -> str:
    """The Markdown table of false decisions (every method) and power (gate, CR1)."""
    names = {
        "gate": "**gate**",
        "cr1": "CR1 t (before)",
        "cr2": "CR2 t",
        "cr2+edge": "CR2 t + Edgeworth",
        "rademacher": "Rademacher",
        "webb-noskew": "Webb, no skew corr.",
        "band": "old band",
    }
    head = (
        "| scenario | gate | "
        + " | ".join(f"false: {names[c]}" for c in COLUMNS)
        + " | power: gate | power: Rademacher | power: CR1 t | true change (power cell) |\n"
        + "| --- | --- | "
        + " | ".join("---" for _ in COLUMNS)
        + " | --- | --- | --- | --- |"
    )
    lines = [head]
    for sc in SCENARIOS:
        if sc.name not in results:
            continue
        for gate in results[sc.name]:
            cell = results[sc.name][gate]
            null, eff = cell["null"], cell.get("effect")
            false = " | ".join(_pct(null.get(c)) for c in COLUMNS)
            if eff is None:
                power = "— | — | — | —"
            else:
                change = eff["true_change"]
                assert isinstance(change, float)
                power = (
                    f"{_pct(eff['gate'])} | {_pct(eff['rademacher'])} | {_pct(eff['cr1'])} | "
                    f"{change * 100:+.1f} pts"
                )
            lines.append(f"| {sc.name} | {gate} | {false} | {power} |")
    return "\n".join(lines)


def rare_table(results: Results) -> str:
    """Where a rare class drives the false decisions: from suites without it and with it."""
    lines = [
        "| scenario | gate | suites holding no rare task | false: **gate** | "
        "of it, from suites holding none | from suites holding some |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for sc in SCENARIOS:
        if sc.name not in results:
            continue
        for gate in results[sc.name]:
            null = results[sc.name][gate]["null"]
            if "without_rare_share" not in null:
                continue
            lines.append(
                f"| {sc.name} | {gate} | {_pct(null['without_rare_share'])} | "
                f"{_pct(null['gate'])} | {_pct(null['gate_from_without_rare'])} | "
                f"{_pct(null['gate_from_with_rare'])} |"
            )
    return "\n".join(lines)


Checks = dict[str, dict[str, float]]
_Job = tuple[str, int, str, str, int, int, bool]


def _cell_job(args: _Job) -> tuple[str, str, str, dict[str, float | int | None]]:
    what, index, gate, kind, sims, seed, gate_only = args
    if what == "check":
        check = CHECKS[index]
        return check.name, "", "check", dict(run_check(check, sims, seed))
    sc = SCENARIOS[index]
    return sc.name, gate, kind, run_cell(sc, gate, kind, sims, seed, gate_only)


def measure(
    sims: int, power_sims: int, seed: int, jobs: int, only: str = "", gate_only: bool = False
) -> tuple[Results, Checks]:
    """Every cell, in ``jobs`` processes (each cell has its own seed: same figures at any jobs).

    ``only``: measure just the checks whose names contain it and the scenarios whose
    ``name:gate`` does (``skewed-20:improved``: that one gate); ``gate_only``:
    the gate's column of the scenarios alone (no checks, no other method).
    """
    work: list[_Job] = [
        ("check", i, "", "check", sims, seed, False)
        for i, c in enumerate(CHECKS)
        if only in c.name and not gate_only
    ] + [
        ("gate", i, gate, kind, sims if kind == "null" else power_sims, seed, gate_only)
        for i, sc in enumerate(SCENARIOS)
        for gate in sc.gates
        if only in f"{sc.name}:{gate}"
        for kind in (("null", "effect") if sc.power else ("null",))
    ]
    results: Results = {}
    for what, i, gate, *_ in work:
        if what == "gate":
            results.setdefault(SCENARIOS[i].name, {})[gate] = {}
    checks: Checks = {}
    with contextlib.ExitStack() as stack:
        if jobs > 1:
            done = stack.enter_context(ProcessPoolExecutor(max_workers=jobs)).map(_cell_job, work)
        else:
            done = map(_cell_job, work)
        for name, gate, kind, cell in done:
            if kind == "check":
                checks[name] = {k: float(v) for k, v in cell.items() if v is not None}
            else:
                results[name][gate][kind] = cell
    return results, checks


def _row(name: str, what: str, label: float | str, measured: float) -> str:
    nominal = label if isinstance(label, str) else _pct(label)
    return f"| {name} | {what} | {nominal} | {_pct(measured)} |"


def coverage_rows(checks: Checks) -> list[tuple[str, str, float, float]]:
    """(scenario, interval, label, measured coverage) for every interval measured."""
    rows: list[tuple[str, str, float, float]] = []
    for check in CHECKS:
        got = checks[check.name]
        if check.kind == "crossed":
            p = check.profiles
            rows += [
                (check.name, "per profile", got["profile_label"], got["profile_coverage"]),
                (check.name, f"all {p} profiles together", 0.95, got["simultaneous_coverage"]),
                (
                    check.name,
                    "aggregate (tasks averaged over profiles)",
                    0.95,
                    got["aggregate_coverage"],
                ),
            ]
        elif check.kind == "drift":
            rows.append((check.name, "mean drift", 0.95, got["coverage"]))
        elif check.kind == "headline":
            rows.append((check.name, "suite mean (headline, over tasks)", 0.95, got["coverage"]))
        elif check.kind == "pass-k":
            rows += [
                (
                    check.name,
                    f"pass^{k} over tasks (averages {got[f'tasks_{k}']:.1f})",
                    0.95,
                    got[f"coverage_{k}"],
                )
                for k in PASS_K
            ]
    return rows


def rate_rows(checks: Checks) -> list[tuple[str, str, float | str, float, bool]]:
    """(scenario, finding, level, measured rate, whether it is a null the level is held to)."""
    rows: list[tuple[str, str, float | str, float, bool]] = []
    for check in CHECKS:
        got = checks[check.name]
        if check.kind == "crossed":
            null = check.effect != "varied"
            level: float | str = CROSSED_LEVEL if null else "power (a true interaction)"
            rows.append((check.name, "`INTERACTION` printed", level, got["interaction"], null))
        elif check.kind == "drift":
            rows += [
                (check.name, "regression list non-empty", "at most 5%", got["listed"], True),
                (
                    check.name,
                    "old list (every task lower) non-empty",
                    "—",
                    got["lower_listed"],
                    False,
                ),
            ]
        elif check.kind == "lost-failures":
            rows += [
                (check.name, "false `improved` (`--allow-missing`)", ALPHA, got["improved"], False),
                (
                    check.name,
                    "of those, tipping point printed (outcome changes)",
                    "—",
                    got["flagged_share"],
                    False,
                ),
                (
                    check.name,
                    "median tipping point / lost runs, when printed",
                    "—",
                    got["tipping_share_median"],
                    False,
                ),
            ]
    return rows + honesty_rows(checks)


def honesty_rows(checks: Checks) -> list[tuple[str, str, float | str, float, bool]]:
    """The rows of one-family suites, looks, candidates, correlated runs and end losses."""
    rows: list[tuple[str, str, float | str, float, bool]] = []
    for check in CHECKS:
        got = checks.get(check.name)
        if got is None:
            continue
        if check.kind == "one-family":
            rows += [
                (
                    check.name,
                    "false `improved` (no decision possible)",
                    ALPHA,
                    got["improved"],
                    True,
                ),
                (
                    check.name,
                    "false `improved` with --no-clusters",
                    "—",
                    got["no_clusters_improved"],
                    False,
                ),
            ]
        elif check.kind == "looks":
            rows += [
                (
                    check.name,
                    f"false `improved` at any of {check.looks} planned looks",
                    ALPHA,
                    got["planned"],
                    True,
                ),
                (
                    check.name,
                    f"the same, {check.looks} unplanned looks at 2.5%",
                    "—",
                    got["unplanned"],
                    False,
                ),
                (check.name, "the final look alone", ALPHA, got["final_only"], True),
            ]
        elif check.kind == "candidates":
            rows += [
                (
                    check.name,
                    f"some of {check.candidates} candidates passes `improved` (Holm)",
                    ALPHA,
                    got["holm"],
                    True,
                ),
                (check.name, "the same, each alone at 2.5%", "—", got["alone"], False),
            ]
        elif check.kind == "per-task-icc":
            rows.append(
                (
                    check.name,
                    f"per-task list non-empty (ICC {check.icc:g}; descriptive)",
                    "—",
                    got["listed"],
                    False,
                )
            )
        elif check.kind == "end-losses":
            rows += [
                (
                    check.name,
                    "false `improved` (`--allow-missing`, cut off under drift)",
                    "—",
                    got["improved"],
                    False,
                ),
                (
                    check.name,
                    "of those, end-of-order warning printed",
                    "—",
                    got["warned_share"],
                    False,
                ),
            ]
    return rows


def check_tables(checks: Checks) -> str:
    """The Markdown tables of interval coverage and of the rates of printed findings."""
    cover = ["| scenario | interval | label | coverage |", "| --- | --- | --- | --- |"]
    cover += [_row(*r) for r in coverage_rows(checks)]
    cover += [
        _row(
            c.name,
            "pooled Wilson (per attempt, for reference)",
            0.95,
            checks[c.name]["wilson_coverage"],
        )
        for c in CHECKS
        if c.kind == "headline"
    ]
    rate = ["| scenario | finding | level | rate |", "| --- | --- | --- | --- |"]
    rate += [_row(*r[:4]) for r in rate_rows(checks)]
    return "\n".join(cover) + "\n\n" + "\n".join(rate)


def figures(results: Results, checks: Checks, sims: int) -> dict[str, float]:
    """Named summary figures: each method's largest distance from the nominal level."""
    out: dict[str, float] = {}
    for column in COLUMNS:
        gaps = [
            float(cell["null"][column]) - ALPHA  # type: ignore[arg-type]
            for by_gate in results.values()
            for cell in by_gate.values()
            if cell["null"].get(column) is not None
        ]
        out[f"{column}_max_excess_points"] = round(max(gaps) * 100, 2)
        out[f"{column}_max_abs_gap_points"] = round(max(abs(g) for g in gaps) * 100, 2)
        out[f"{column}_cells_within_1_point"] = sum(abs(g) <= 0.01 for g in gaps)
        out[f"{column}_cells_at_most_1_point_over"] = sum(g <= 0.01 for g in gaps)
        out[f"{column}_cells"] = len(gaps)
    out["mc_se_points"] = round(math.sqrt(ALPHA * (1 - ALPHA) / sims) * 100, 3)
    cover = [m - label for _, _, label, m in coverage_rows(checks)]
    out["coverage_min_gap_points"] = round(min(cover) * 100, 2)
    out["coverage_max_abs_gap_points"] = round(max(abs(g) for g in cover) * 100, 2)
    out["coverage_cells_within_1.5_points"] = sum(abs(g) <= 0.015 for g in cover)
    out["coverage_cells"] = len(cover)
    interaction = [
        m - float(level)
        for _, what, level, m, null in rate_rows(checks)
        if null and "INTERACTION" in what
    ]
    out["interaction_max_abs_gap_points"] = round(max(abs(g) for g in interaction) * 100, 2)
    out["interaction_max_excess_points"] = round(max(interaction) * 100, 2)
    drift = [checks[c.name] for c in CHECKS if c.kind == "drift"]
    out["drift_false_list_rate_max"] = max(d["listed"] for d in drift)
    out["drift_coverage_min"] = min(d["coverage"] for d in drift)
    headline = [checks[c.name] for c in CHECKS if c.kind == "headline"]
    out["headline_coverage_min"] = min(h["coverage"] for h in headline)
    out["wilson_coverage_min"] = min(h["wilson_coverage"] for h in headline)
    lost = checks["lost-failures-40"]
    out["lost_failures_improved_rate"] = lost["improved"]
    out["lost_failures_flagged_share"] = lost["flagged_share"]
    out["coverage_mc_se_points"] = round(math.sqrt(0.95 * 0.05 / sims) * 100, 3)
    return out


def summary_line(named: dict[str, float], sims: int, power_sims: int, seed: int) -> str:
    """The sentence under the tables: counts, and each target against its measured figure."""
    return (
        f"{sims} simulations per null and coverage cell ({power_sims} per power cell), seed "
        f"{seed}, nominal one-sided level {ALPHA * 100:g}% for every gate (Monte Carlo standard "
        f"error of a rate near it: {named['mc_se_points']:.2f} points; of a coverage near 95%: "
        f"{named['coverage_mc_se_points']:.2f}). Largest distance of the gate's false-decision "
        f"rate from the nominal level: {named['gate_max_abs_gap_points']:.2f} points (largest "
        f"excess {named['gate_max_excess_points']:.2f}); cells at most 1 point above it: "
        f"{named['gate_cells_at_most_1_point_over']} of {named['gate_cells']}, within 1 point "
        f"either side: {named['gate_cells_within_1_point']} (CR1 t, the gate before: "
        f"{named['cr1_cells_at_most_1_point_over']} and {named['cr1_cells_within_1_point']}, "
        f"largest excess {named['cr1_max_excess_points']:.2f}). Interaction test with no "
        f"interaction: largest distance from its 5% level "
        f"{named['interaction_max_abs_gap_points']:.2f} points. "
        f"Interval coverage: largest distance from the label "
        f"{named['coverage_max_abs_gap_points']:.2f} points (lowest coverage minus label "
        f"{named['coverage_min_gap_points']:+.2f}); cells within 1.5 points: "
        f"{named['coverage_cells_within_1.5_points']} of {named['coverage_cells']}."
    )


def gate_table(results: Results) -> str:
    """The Markdown table of the gate's false decisions and power, without other methods."""
    lines = [
        "| scenario | gate | false: **gate** | power: gate | true change (power cell) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for sc in SCENARIOS:
        for gate in results.get(sc.name, {}):
            cell = results[sc.name][gate]
            eff = cell.get("effect")
            power = "— | —"
            if eff is not None:
                change = eff["true_change"]
                assert isinstance(change, float)
                power = f"{_pct(eff['gate'])} | {change * 100:+.1f} pts"
            null = cell["null"]["gate"]
            rate = "n/a" if null is None else f"{float(null) * 100:.2f}%"  # MC SE 0.25 at 4,000
            lines.append(f"| {sc.name} | {gate} | {rate} | {power} |")
    return "\n".join(lines)


def missing_parts(results: Results, checks: Checks) -> list[str]:
    """The cells (``NAME:GATE:KIND``) and checks a whole table has and these results lack."""
    missing = [c.name for c in CHECKS if c.name not in checks]
    for sc in SCENARIOS:
        for gate in sc.gates:
            for kind in ("null", "effect") if sc.power else ("null",):
                if kind not in results.get(sc.name, {}).get(gate, {}):
                    missing.append(f"{sc.name}:{gate}:{kind}")
    return missing


def _level(level: float | str) -> float | None:
    """A rate row's level as a number (``at most 5%`` is 0.05), or None when it has none."""
    if isinstance(level, float):
        return level
    if level.startswith("at most ") and level.endswith("%"):
        return float(level[len("at most ") : -1]) / 100
    return None


def _known_cells(results: Results) -> list[tuple[str, str, dict[str, float | int | None]]]:
    """(scenario, gate, null cell) for every cell of the table these results hold."""
    return [
        (sc.name, gate, results[sc.name][gate]["null"])
        for sc in SCENARIOS
        for gate in sc.gates
        if "null" in results.get(sc.name, {}).get(gate, {})
    ]


def gate_summary(results: Results, checks: Checks, sims: int, power_sims: int, seed: int) -> str:
    """The sentence under the full-count tables: the gate's cells and the held check rows."""
    rates = [cell["gate"] for _, _, cell in _known_cells(results)]
    gaps = [float(r) - ALPHA for r in rates if r is not None]
    held = [
        measured - level
        for _, _, label, measured, null in rate_rows(checks)
        if null and (level := _level(label)) is not None
    ]
    cover = [m - label for _, _, label, m in coverage_rows(checks)]
    fewer = ", ".join(
        f"{c.name} {int(checks[c.name]['sims']):,}"
        for c in CHECKS
        if "sims" in checks.get(c.name, {}) and int(checks[c.name]["sims"]) != sims
    )
    se = math.sqrt(ALPHA * (1 - ALPHA) / sims) * 100
    return (
        f"{sims} simulations per null, coverage and check cell ({power_sims} per power cell"
        + (f"; checks that decide many times a simulation run fewer: {fewer}" if fewer else "")
        + f"), seed {seed}, nominal one-sided level {ALPHA * 100:g}% for every gate (Monte "
        f"Carlo standard error of a rate near it: {se:.2f} points). The gate's false-decision "
        f"rate: {sum(g <= 0.01 for g in gaps)} of {len(gaps)} cells at most 1 point above the "
        f"nominal level (largest excess {max(gaps) * 100:+.2f} points), "
        f"{sum(abs(g) <= 0.01 for g in gaps)} within 1 point either side"
        + (f", {len(rates) - len(gaps)} deciding nothing" if len(gaps) < len(rates) else "")
        + f". Check rows held to a level: {sum(g <= 0.01 for g in held)} of {len(held)} at "
        f"most 1 point above it (largest excess {max(held) * 100:+.2f} points). Interval "
        f"coverage: {sum(abs(g) <= 0.015 for g in cover)} of {len(cover)} within 1.5 points "
        f"of the label (lowest coverage minus label {min(cover) * 100:+.2f} points)."
    )


def merge(paths: list[str]) -> tuple[Results, Checks, int, int, Counter[str]]:
    """The results and checks of earlier runs' JSON lines, their seed, count and revisions.

    A cell or check in more than one file is taken from the later file on the command line
    (a part run again), with a note; files of another seed or count, and cells or checks
    this bench does not have (a stale file), are refused, naming the file.
    """
    known_checks = {c.name for c in CHECKS}
    known_cells = {(sc.name, gate) for sc in SCENARIOS for gate in sc.gates}
    results: Results = {}
    checks: Checks = {}
    seen: tuple[int, int] | None = None
    origin: dict[str, str] = {}
    revisions: Counter[str] = Counter()
    for path in paths:
        try:
            lines = Path(path).read_text(encoding="utf-8").strip().splitlines()
            data = json.loads(lines[-1])
            key = (data["seed"], data["sims"])
            parts = [
                (name, gate, kind, dict(cell))
                for name, by_gate in dict(data.get("results", {})).items()
                for gate, cells in dict(by_gate).items()
                for kind, cell in dict(cells).items()
            ]
            found = {name: dict(cell) for name, cell in dict(data.get("checks", {})).items()}
        except (OSError, IndexError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SystemExit(f"error: --merge {path}: not the JSON line of a run ({exc})") from exc
        if not all(isinstance(k, int) and not isinstance(k, bool) for k in key):
            raise SystemExit(f"error: --merge {path}: seed and sims must be integers, got {key}")
        if seen is not None and key != seen:
            raise SystemExit(
                f"error: --merge {path}: seed {key[0]}, {key[1]} simulations; the files "
                f"before it have seed {seen[0]}, {seen[1]}"
            )
        seen = key
        revisions[str(data.get("revision") or "not recorded")] += 1
        stale = [f"{n}:{g}" for n, g, _, _ in parts if (n, g) not in known_cells]
        stale += [n for n in found if n not in known_checks]
        if stale:
            raise SystemExit(f"error: --merge {path}: not in this bench: {', '.join(stale)}")
        for name, gate, kind, cell in parts:
            where = f"{name}:{gate}:{kind}"
            if where in origin:
                print(f"note: {where} from {path} replaces {origin[where]}", file=sys.stderr)
            origin[where] = path
            results.setdefault(name, {}).setdefault(gate, {})[kind] = cell
        for name, cell in found.items():
            if name in origin:
                print(f"note: {name} from {path} replaces {origin[name]}", file=sys.stderr)
            origin[name] = path
            checks[name] = cell
    if seen is None:
        raise SystemExit("error: --merge needs at least one file")
    if len(revisions) > 1:
        print(f"note: the parts ran on several revisions: {dict(revisions)}", file=sys.stderr)
    return results, checks, seen[0], seen[1], revisions


def revision() -> str | None:
    """The commit the bench runs on (``-dirty`` when the package or bench differ from it)."""
    root = DOCS.parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "harness_world", "bench"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if changed else "")


def parts() -> list[tuple[str, ...]]:
    """The options of each part of the full table: a scenario's gate column, or one check.

    Each part's ``--only`` text selects that part alone (`tests/analysis`), so running every
    part and merging them gives every cell a whole run gives, from the same seeds.
    """
    return [("--gate-only", "--only", f"{sc.name}:") for sc in SCENARIOS] + [
        ("--only", c.name) for c in CHECKS
    ]


def _main_merge(paths: list[str], write: bool) -> int:
    """``--merge``: the gate's column and the checks from parts run apart."""
    results, checks, seed, sims, revisions = merge(paths)
    missing = missing_parts(results, checks)
    power_sims = max(1, sims // 4)
    text = f"{gate_table(results)}\n\n{rare_table(results)}\n"
    if not missing:
        text += f"\n{check_tables(checks)}\n\n"
        text += gate_summary(results, checks, sims, power_sims, seed)
        ran = ", ".join(f"{r} ({n} {'file' if n == 1 else 'files'})" for r, n in revisions.items())
        text += f" The parts' revisions, as their files say: {ran}.\n"
    print(text)
    if missing:
        print(f"missing {len(missing)}: {', '.join(missing)}", file=sys.stderr)
    if write:
        if missing:
            print("error: --write-docs needs every cell and check", file=sys.stderr)
            return 2
        command = "python bench/stats_calibration.py --merge ... --write-docs"
        if not write_docs(text, FULL_BEGIN, FULL_END, command):
            print(f"error: {DOCS} has no {FULL_BEGIN} ... {FULL_END} markers", file=sys.stderr)
            return 2
    gate_rates = {
        f"{name}:{gate}": cell["null"]["gate"]
        for name, by_gate in results.items()
        for gate, cell in by_gate.items()
    }
    print(
        json.dumps(
            {
                "sims": sims,
                "seed": seed,
                "revisions": dict(revisions),
                "missing": missing,
                "gate": gate_rates,
            }
        )
    )
    return 0


def write_docs(
    text: str,
    begin: str = BEGIN,
    end: str = END,
    command: str = "python bench/stats_calibration.py --write-docs",
) -> bool:
    """Replace a generated block of docs/stats.md with ``text``; False without its markers."""
    doc = DOCS.read_text(encoding="utf-8")
    if begin not in doc or end not in doc:
        return False
    before, rest = doc.split(begin, 1)
    _, after = rest.split(end, 1)
    block = f"{begin}\n<!-- generated by: {command} -->\n\n{text}\n{end}"
    DOCS.write_text(before + block + after, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=None, help="simulations per null cell")
    parser.add_argument("--seed", type=int, default=12, help="base seed (default 12)")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument(
        "--write-docs", action="store_true", help="full counts; rewrite the table in docs/stats.md"
    )
    parser.add_argument(
        "--gate-only",
        action="store_true",
        help="the gate's column of the scenario table alone (no checks; with --only)",
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="TEXT",
        help="measure only the checks whose names and the scenarios whose NAME:GATE contain TEXT",
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        default=None,
        metavar="FILE",
        help="combine the JSON output of earlier --only/--gate-only runs (same seed and "
        "count); with --write-docs, write docs/stats.md's full-count block",
    )
    parser.add_argument(
        "--parts",
        action="store_true",
        help="print the options of each part of the full table, one part a line (the gate's "
        "column of one scenario, or one check), for runs apart and --merge",
    )
    args = parser.parse_args(argv)
    if args.parts:
        print("\n".join(" ".join(p) for p in parts()))
        return 0
    if args.merge is not None:
        return _main_merge(args.merge, args.write_docs)
    if (args.only or args.gate_only) and args.write_docs:
        parser.error("--only and --gate-only measure part of the table; --write-docs needs all")
    full = os.environ.get("HW_FULL") == "1" or args.write_docs
    sims = args.sims if args.sims is not None else (4000 if full else 150)
    if sims < 1:
        parser.error("--sims must be at least 1")
    power_sims = max(1, sims // 4)
    started = time.perf_counter()
    results, checks = measure(sims, power_sims, args.seed, args.jobs, args.only, args.gate_only)
    elapsed = time.perf_counter() - started
    if not results and not checks:
        parser.error(f"--only {args.only!r} matches no scenario or check")
    if args.only or args.gate_only:
        text = f"{table(results)}\n\n{rare_table(results)}\n"
        print(text)
        print(
            json.dumps(
                {
                    "sims": sims,
                    "seed": args.seed,
                    "revision": revision(),
                    "seconds": round(elapsed, 1),
                    "results": results,
                    "checks": checks,
                }
            )
        )
        return 0
    named = figures(results, checks, sims)
    text = f"{table(results)}\n\n{rare_table(results)}\n\n{check_tables(checks)}\n\n"
    text += summary_line(named, sims, power_sims, args.seed) + "\n"
    print(text)
    if args.write_docs and not write_docs(text):
        print(f"error: {DOCS} has no {BEGIN} ... {END} markers", file=sys.stderr)
        return 2
    print(
        json.dumps(
            {
                "sims": sims,
                "power_sims": power_sims,
                "seed": args.seed,
                "revision": revision(),
                "alpha": ALPHA,
                "margin": MARGIN,
                "effect": EFFECT,
                **named,
                "seconds": round(elapsed, 1),
                "results": results,
                "checks": checks,
            },
            sort_keys=True,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
