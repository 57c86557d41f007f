"""Calibration of the ``compare`` gates: false-alarm rate and power, measured by simulation.

Every simulated comparison is decided by the real gate, `harness_world.stats.assess` (what
``compare`` runs), and, side by side in the same run, by the gate ``compare`` used before
issue 12 (the band of `compare_results` with its defaults: z from 30 tasks, short tasks
dropped, families ignored, no variance floor). Scenarios:

* ``iid-40`` / ``iid-30``: independent tasks (a realistic mix of solid, flaky and broken),
  5 runs per task and side; each task's true change differs a little around the mean.
* ``families-8x5``: 8 families of 5 tasks; the true change moves by family (family effects
  average 0 under the null), and the rows carry the family.
* ``few-5``: 5 tasks, 5 runs.
* ``degenerate-12``: 12 tasks whose rates sit near 0 or 1, so most differences are 0.
* ``partial-40``: as ``iid-40`` with each run lost with probability 10% at random; the new
  gate decides with ``--allow-missing`` (without it, it fails on any missing run by design).

Null scenarios (no true change in the mean for ``improved`` / ``no-regression``, a true drop of
exactly the margin for ``non-inferior``) give false-alarm rates: ``improved`` or
``non-inferior`` passing, ``no-regression`` failing. Effect scenarios give power: a true change
of +/- 15 points (mean over tasks) for ``improved`` / ``no-regression``, no change for
``non-inferior``. Nominal level: one-sided 2.5% for every gate; margin 10 points.

Null scenarios are built so the true mean change is exact: under "no change" each task's two
rates are exchangeable (logits ``mu +/- s/2`` with s symmetric), and under "drop of exactly
the margin" the candidate's rate is the baseline's minus the margin plus symmetric noise, with
rates chosen so nothing is clipped.

    python bench/stats_calibration.py                 # CI-sized (300 simulations per cell)
    HW_FULL=1 python bench/stats_calibration.py       # full (4000 per cell)
    python bench/stats_calibration.py --sims 1000     # any count
    python bench/stats_calibration.py --write-docs    # full, and rewrite the table in docs/stats.md

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness_world import stats
from harness_world.stats import RunRow, StatsInputError

ALPHA = 0.025
MARGIN = 0.10
EFFECT = 0.15
RUNS = 5
DOCS = Path(__file__).resolve().parent.parent / "docs" / "stats.md"
BEGIN = "<!-- calibration:begin -->"
END = "<!-- calibration:end -->"
GATES = ("improved", "no-regression", "non-inferior")


@dataclass(frozen=True)
class Scenario:
    name: str
    tasks: int
    families: int  # 0: no families
    family_sd: float  # spread of family effects (logit for nulls, points/100 for NI)
    task_sd: float
    centers: str  # "mix" or "extreme"
    missing: float  # probability a run is lost


SCENARIOS = (
    Scenario("iid-40", 40, 0, 0.0, 0.3, "mix", 0.0),
    Scenario("iid-30", 30, 0, 0.0, 0.3, "mix", 0.0),
    Scenario("families-8x5", 40, 8, 1.2, 0.2, "mix", 0.0),
    Scenario("few-5", 5, 0, 0.0, 0.3, "mix", 0.0),
    Scenario("degenerate-12", 12, 0, 0.0, 0.0, "extreme", 0.0),
    Scenario("partial-40", 40, 0, 0.0, 0.3, "mix", 0.10),
)


def _centers(sc: Scenario, rng: np.random.Generator) -> np.ndarray:
    if sc.centers == "extreme":
        return np.where(rng.random(sc.tasks) < 0.6, 0.97, 0.03)
    kind = rng.random(sc.tasks)
    return np.where(
        kind < 0.45,
        rng.beta(8, 1, sc.tasks),
        np.where(kind < 0.7, rng.beta(1, 8, sc.tasks), rng.uniform(0.2, 0.8, sc.tasks)),
    )


def _family_of(sc: Scenario) -> np.ndarray:
    if not sc.families:
        return np.arange(sc.tasks)
    return np.arange(sc.tasks) % sc.families


def rates(sc: Scenario, mode: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """True (baseline, candidate) pass rate per task.

    mode: ``null`` (mean change exactly 0), ``ni-null`` (exactly -MARGIN), ``up`` / ``down``
    (a true change of about +/- EFFECT), ``zero`` (no change on any task).
    """
    center = np.clip(_centers(sc, rng), 1e-3, 1 - 1e-3)
    fam = _family_of(sc)
    fam_shift = rng.normal(0, sc.family_sd, max(sc.families, 1))[fam] if sc.families else 0.0
    if mode == "ni-null":
        # Probability scale, no clipping: p_c = p_b - MARGIN + symmetric noise within +/- w.
        w = 0.06 if sc.families or sc.task_sd else 0.0
        f = rng.uniform(-w / 2, w / 2, max(sc.families, 1))[fam] if sc.families else 0.0
        t = rng.uniform(-w / 2, w / 2, sc.tasks) if sc.task_sd else 0.0
        p_b = np.clip(center, MARGIN + w, 1 - w)
        return p_b, p_b - MARGIN + f + t
    logit = np.log(center / (1 - center))
    shift = fam_shift + rng.normal(0, sc.task_sd, sc.tasks) * (sc.task_sd > 0)
    if mode == "zero":
        shift = shift * 0
    sign = rng.choice([-1.0, 1.0], sc.tasks)
    if sc.families:
        sign = rng.choice([-1.0, 1.0], sc.families)[fam]
    s = shift * sign
    lb, lc = logit - s / 2, logit + s / 2
    p_b, p_c = 1 / (1 + np.exp(-lb)), 1 / (1 + np.exp(-lc))
    if mode in ("up", "down"):
        # Move every task by EFFECT on the probability scale where room allows, then report
        # the realised mean change (it is within a point of EFFECT).
        step = EFFECT if mode == "up" else -EFFECT
        p_c = np.clip(p_b + step + (p_c - p_b), 0.0, 1.0)
    return p_b, p_c


def simulate_rows(
    sc: Scenario, p_b: np.ndarray, p_c: np.ndarray, rng: np.random.Generator
) -> list[RunRow]:
    fam = _family_of(sc)
    rows: list[RunRow] = []
    for config, p in (("main", p_b), ("pr", p_c)):
        outcomes = rng.random((sc.tasks, RUNS)) < p[:, None]
        kept = rng.random((sc.tasks, RUNS)) >= sc.missing
        for i in range(sc.tasks):
            family = f"f{fam[i]}" if sc.families else ""
            for r in range(RUNS):
                if kept[i, r]:
                    rows.append(
                        RunRow(
                            task_id=f"t{i:03d}",
                            run_index=r,
                            config=config,
                            passed=bool(outcomes[i, r]),
                            family=family,
                        )
                    )
    return rows


def new_gate(rows: list[RunRow], gate: str, sc: Scenario) -> bool | None:
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


def old_gate(rows: list[RunRow], gate: str) -> bool | None:
    if gate == "non-inferior":
        return None  # the old compare had no such gate
    try:
        comparison = stats.compare_results(rows, "main", "pr", min_runs=RUNS)
    except StatsInputError:
        return None
    verdict = comparison.band.verdict
    return verdict == "above" if gate == "improved" else verdict != "below"


def _rate(hits: int, total: int) -> float | None:
    return None if total == 0 else hits / total


def run_cell(
    sc: Scenario, gate: str, kind: str, sims: int, seed: int
) -> dict[str, float | int | None]:
    """One (scenario, gate, null|effect) cell: the rate of the outcome that counts."""
    if kind == "null":
        mode = "ni-null" if gate == "non-inferior" else "null"
    else:
        mode = {"improved": "up", "no-regression": "down", "non-inferior": "zero"}[gate]
    # What counts: a false alarm in a null cell, a detection in an effect cell. For
    # no-regression that is a failed gate; for the others a passed one.
    flip = gate == "no-regression"

    def counts(passed: bool) -> bool:
        return passed != flip

    rng = np.random.default_rng([seed, SCENARIOS.index(sc), GATES.index(gate), kind == "null"])
    new_hits = new_total = old_hits = old_total = 0
    true_changes: list[float] = []
    for _ in range(sims):
        p_b, p_c = rates(sc, mode, rng)
        true_changes.append(float(np.mean(p_c - p_b)))
        rows = simulate_rows(sc, p_b, p_c, rng)
        got = new_gate(rows, gate, sc)
        if got is not None:
            new_total += 1
            new_hits += counts(got)
        old = old_gate(rows, gate)
        if old is not None:
            old_total += 1
            old_hits += counts(old)
    return {
        "new": _rate(new_hits, new_total),
        "old": _rate(old_hits, old_total),
        "decided": new_total,
        "true_change": float(np.mean(true_changes)),
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f}%"


def table(results: dict[str, dict[str, dict[str, dict[str, float | int | None]]]]) -> str:
    head = (
        "| scenario | gate | false alarms (new) | false alarms (old) | power (new) | "
        "power (old) | true change under effect |\n"
        "| --- | --- | --- | --- | --- | --- | --- |"
    )
    lines = [head]
    for sc in SCENARIOS:
        for gate in GATES:
            cell = results[sc.name][gate]
            null, eff = cell["null"], cell["effect"]
            change = eff["true_change"]
            assert isinstance(change, float)
            lines.append(
                f"| {sc.name} | {gate} | {_pct(null['new'])} | {_pct(null['old'])} | "
                f"{_pct(eff['new'])} | {_pct(eff['old'])} | {change * 100:+.1f} pts |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=None, help="simulations per cell")
    parser.add_argument("--seed", type=int, default=12, help="base seed (default 12)")
    parser.add_argument(
        "--write-docs", action="store_true", help="full counts; rewrite the table in docs/stats.md"
    )
    args = parser.parse_args(argv)
    full = os.environ.get("HW_FULL") == "1" or args.write_docs
    sims = args.sims if args.sims is not None else (4000 if full else 300)
    if sims < 1:
        parser.error("--sims must be at least 1")
    started = time.perf_counter()
    results: dict[str, dict[str, dict[str, dict[str, float | int | None]]]] = {}
    worst_excess = 0.0
    worst_gap = 0.0
    for sc in SCENARIOS:
        results[sc.name] = {}
        for gate in GATES:
            null = run_cell(sc, gate, "null", sims, args.seed)
            effect = run_cell(sc, gate, "effect", sims, args.seed)
            results[sc.name][gate] = {"null": null, "effect": effect}
            rate = null["new"]
            if isinstance(rate, float):
                worst_excess = max(worst_excess, rate - ALPHA)
                worst_gap = max(worst_gap, abs(rate - ALPHA))
    elapsed = time.perf_counter() - started
    text = table(results)
    se = math.sqrt(ALPHA * (1 - ALPHA) / sims)
    summary = (
        f"{sims} simulations per cell, seed {args.seed}, nominal one-sided level "
        f"{ALPHA * 100:g}% for every gate (Monte Carlo standard error of a rate near it: "
        f"{se * 100:.2f} points). Largest distance of a new gate's false-alarm rate from the "
        f"nominal level: {worst_gap * 100:.2f} points (largest excess {worst_excess * 100:.2f})."
    )
    print(text)
    print()
    print(summary)
    if args.write_docs:
        doc = DOCS.read_text(encoding="utf-8")
        if BEGIN not in doc or END not in doc:
            print(f"error: {DOCS} has no {BEGIN} ... {END} markers", file=sys.stderr)
            return 2
        before, rest = doc.split(BEGIN, 1)
        _, after = rest.split(END, 1)
        block = (
            f"{BEGIN}\n<!-- generated by: python bench/stats_calibration.py --write-docs -->\n\n"
            f"{text}\n\n{summary}\n{END}"
        )
        DOCS.write_text(before + block + after, encoding="utf-8")
    print(
        json.dumps(
            {
                "sims": sims,
                "seed": args.seed,
                "alpha": ALPHA,
                "margin": MARGIN,
                "effect": EFFECT,
                "max_abs_gap_from_nominal": worst_gap,
                "max_excess_over_nominal": worst_excess,
                "seconds": round(elapsed, 1),
                "results": results,
            },
            sort_keys=True,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
