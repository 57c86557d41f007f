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
* ``helpdesk-30``: helpdesk's (and inventory's) family sizes [6,6,6,3,3,2,2,1,1], the same
  all-or-nothing effects; ``payments-37``: payments' sizes [10,6,6,6,5,4].
* ``dominant-20``: one dominant family, sizes [16,1,1,1,1].
* ``few-5``: 5 tasks; ``degenerate-12``: rates near 0 or 1; ``partial-40``: 10% of runs
  lost at random (decided with ``--allow-missing``).
* ``skewed-10/30/89``: each task drops 90 points with probability 10% (0.95 -> 0.05), else
  gains 10 (mean change exactly 0).
* ``ni-solid-broken-12/40``: each task goes solid -> broken with probability 10%, the others
  do not change (a mean drop of exactly the margin), gate ``non-inferior``.
* ``ni-ceiling-40``: every task 1.0 -> 0.9 (a drop of exactly the margin at the ceiling).

A false decision is ``improved`` or ``non-inferior`` passing, or ``no-regression`` failing,
under its null. Power: a true change of about +/- 15 points (mean over tasks) for
``improved`` / ``no-regression``, no change for ``non-inferior`` (scenarios with a special
null have no power cell). Nominal level: one-sided 2.5% for every gate; margin 10 points.

    python bench/stats_calibration.py                 # CI-sized (150 simulations per cell)
    HW_FULL=1 python bench/stats_calibration.py       # full: 4000 per null cell, 1000 power
    python bench/stats_calibration.py --sims 1000     # any count (power cells get a quarter)
    python bench/stats_calibration.py --write-docs    # full, and rewrite docs/stats.md's table
    python bench/stats_calibration.py --jobs 2        # cells in two processes

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness_world import stats
from harness_world.stats import RunRow, StatsInputError
from harness_world.stats.gate import Method, p_value

ALPHA = 0.025
MARGIN = 0.10
EFFECT = 0.15
RUNS = 5
DOCS = Path(__file__).resolve().parent.parent / "docs" / "stats.md"
BEGIN = "<!-- calibration:begin -->"
END = "<!-- calibration:end -->"
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


HELPDESK = (6, 6, 6, 3, 3, 2, 2, 1, 1)
PAYMENTS = (10, 6, 6, 6, 5, 4)
SCENARIOS = (
    Scenario("iid-40", _ones(40)),
    Scenario("iid-30", _ones(30)),
    Scenario("families-8x5", (5,) * 8, True, "normal", task_sd=0.2),
    Scenario("families-4x10", (10,) * 4, True, "two-point", task_sd=0.2),
    Scenario("helpdesk-30", HELPDESK, True, "two-point", task_sd=0.2),
    Scenario("payments-37", PAYMENTS, True, "two-point", task_sd=0.2),
    Scenario("dominant-20", (16, 1, 1, 1, 1), True, "two-point", task_sd=0.2),
    Scenario("few-5", _ones(5)),
    Scenario("degenerate-12", _ones(12), kind="extreme", task_sd=0.0),
    Scenario("partial-40", _ones(40), missing=0.10),
    Scenario("skewed-10", _ones(10), kind="skew", gates=GATES[:2]),
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
        families = stats.task_families(rows)
        mu0 = -MARGIN if gate == "non-inferior" else 0.0
        p = p_value(
            paired,
            mu0,
            direction="decrease" if gate == "no-regression" else "increase",
            alpha=ALPHA,
            families=families,
            method=method,
            skew_correction=skew,
        )
    except StatsInputError:
        return None
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
    sc: Scenario, gate: str, kind: str, sims: int, seed: int
) -> dict[str, float | int | None]:
    """One (scenario, gate, null|effect) cell: each method's rate of the outcome that counts.

    Null cells measure every method; effect cells the gate, ``rademacher``, ``cr1`` and the
    band.
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
    true_changes: list[float] = []
    for _ in range(sims):
        p_b, p_c = rates(sc, mode, rng)
        true_changes.append(float(np.mean(p_c - p_b)))
        rows = simulate_rows(sc, p_b, p_c, rng)
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
    out: dict[str, float | int | None] = {
        c: (hits[c] / totals[c] if totals[c] else None) for c in measured
    }
    out["decided"] = totals["gate"]
    out["sims"] = sims
    out["true_change"] = float(np.mean(true_changes))
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
        for gate in sc.gates:
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


def _cell_job(
    args: tuple[int, str, str, int, int],
) -> tuple[str, str, str, dict[str, float | int | None]]:
    index, gate, kind, sims, seed = args
    sc = SCENARIOS[index]
    return sc.name, gate, kind, run_cell(sc, gate, kind, sims, seed)


def measure(sims: int, power_sims: int, seed: int, jobs: int) -> Results:
    """Every cell, in ``jobs`` processes (each cell has its own seed: same figures at any jobs)."""
    work = [
        (i, gate, kind, sims if kind == "null" else power_sims, seed)
        for i, sc in enumerate(SCENARIOS)
        for gate in sc.gates
        for kind in (("null", "effect") if sc.power else ("null",))
    ]
    results: Results = {sc.name: {g: {} for g in sc.gates} for sc in SCENARIOS}
    if jobs <= 1:
        done = map(_cell_job, work)
        for name, gate, kind, cell in done:
            results[name][gate][kind] = cell
        return results
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for name, gate, kind, cell in pool.map(_cell_job, work):
            results[name][gate][kind] = cell
    return results


def figures(results: Results, sims: int) -> dict[str, float]:
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
        out[f"{column}_cells"] = len(gaps)
    out["mc_se_points"] = round(math.sqrt(ALPHA * (1 - ALPHA) / sims) * 100, 3)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=None, help="simulations per null cell")
    parser.add_argument("--seed", type=int, default=12, help="base seed (default 12)")
    parser.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    parser.add_argument(
        "--write-docs", action="store_true", help="full counts; rewrite the table in docs/stats.md"
    )
    args = parser.parse_args(argv)
    full = os.environ.get("HW_FULL") == "1" or args.write_docs
    sims = args.sims if args.sims is not None else (4000 if full else 150)
    if sims < 1:
        parser.error("--sims must be at least 1")
    power_sims = max(1, sims // 4)
    started = time.perf_counter()
    results = measure(sims, power_sims, args.seed, args.jobs)
    elapsed = time.perf_counter() - started
    text = table(results)
    named = figures(results, sims)
    summary = (
        f"{sims} simulations per null cell ({power_sims} per power cell), seed {args.seed}, "
        f"nominal one-sided level {ALPHA * 100:g}% for every gate (Monte Carlo standard error "
        f"of a rate near it: {named['mc_se_points']:.2f} points). Largest distance of the "
        f"gate's false-decision rate from the nominal level: "
        f"{named['gate_max_abs_gap_points']:.2f} points (largest excess "
        f"{named['gate_max_excess_points']:.2f}); cells within 1 point: "
        f"{named['gate_cells_within_1_point']} of {named['gate_cells']} (CR1 t, the gate "
        f"before: {named['cr1_cells_within_1_point']}, largest excess "
        f"{named['cr1_max_excess_points']:.2f})."
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
                "power_sims": power_sims,
                "seed": args.seed,
                "alpha": ALPHA,
                "margin": MARGIN,
                "effect": EFFECT,
                **named,
                "seconds": round(elapsed, 1),
                "results": results,
            },
            sort_keys=True,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
