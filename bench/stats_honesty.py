"""Whether `stats.decide`'s verdict, p-values and bounds agree, and whether more passes help.

Every figure comes from the real verb, `harness_world.stats.decide`, with the gate's defaults
(Webb-weight wild cluster bootstrap-t, one-sided 2.5 %):

* ``enumerate-3x5``: every suite of 3 tasks x 5 runs a side up to task order (8,436): how many
  verdicts disagree with the printed p-value (``lower > 0`` against ``p_increase <= alpha``,
  and the mirror), how many pass ``improved``, and how many one-pass increases of the
  candidate turn an ``improved`` or ``no-regression`` pass into a fail (dominance).
* ``sample-3x10``: random 3 x 10 suites with the candidate never below the baseline: passes.
* ``sample-4x5`` / ``-5x5`` / ``-6x5`` / ``-8x5``: random suites with a true +30-point change;
  of the passes, how many one-pass increases of one task's candidate turn them into a fail, how
  many decisions were not coherent (a side's accepted null values not one interval), and how
  many verdicts disagree with the printed p-value; each beside ``-cr2-t``, the studentized t
  (Bell-McCaffrey df) on the same suites.

    python bench/stats_honesty.py              # CI-sized samples (the enumeration is whole)
    python bench/stats_honesty.py --sims 1000  # larger samples

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np

from harness_world.stats import Design, Method, PairedTask, TaskTally, decide

ALPHA = 0.025


def _pairs(suite: tuple[tuple[int, int], ...], runs: int) -> list[PairedTask]:
    return [
        PairedTask(
            task_id=f"t{i}",
            baseline=TaskTally(task_id=f"t{i}", runs=runs, passes=b),
            candidate=TaskTally(task_id=f"t{i}", runs=runs, passes=c),
            difference=(c - b) / runs,
        )
        for i, (b, c) in enumerate(suite)
    ]


def _up(suite: tuple[tuple[int, int], ...], runs: int) -> list[tuple[tuple[int, int], ...]]:
    return [
        tuple(sorted(suite[:i] + ((b, c + 1),) + suite[i + 1 :]))
        for i, (b, c) in enumerate(suite)
        if c < runs
    ]


def enumerate_3x5() -> dict[str, int]:
    """Every 3 x 5 suite: disagreements, passes and dominance violations."""
    runs = 5
    cells = [(b, c) for b in range(runs + 1) for c in range(runs + 1)]
    verdicts: dict[tuple[tuple[int, int], ...], tuple[bool, bool]] = {}
    disagree = undecidable = 0
    for suite in itertools.combinations_with_replacement(cells, 3):
        d = decide(Design(pairs=_pairs(suite, runs), alpha=ALPHA))
        disagree += (d.lower > 0) != (d.p_increase <= ALPHA)
        disagree += (d.upper < 0) != (d.p_decrease <= ALPHA)
        undecidable += not d.decidable
        verdicts[suite] = (d.lower > 0, not d.upper < 0)
    violations = 0
    for suite, (improved, no_regression) in verdicts.items():
        for better in _up(suite, runs):
            up_improved, up_no_regression = verdicts[better]
            violations += (improved and not up_improved) + (no_regression and not up_no_regression)
    return {
        "suites": len(verdicts),
        "disagreements": disagree,
        "improved_passes": sum(i for i, _ in verdicts.values()),
        "no_regression_fails": sum(not n for _, n in verdicts.values()),
        "dominance_violations": violations,
        "undecidable": undecidable,
    }


def sample_3x10(sims: int, rng: np.random.Generator) -> dict[str, int]:
    """Random 3 x 10 suites, the candidate never below the baseline: how many pass."""
    runs, passes = 10, 0
    for _ in range(sims):
        b = rng.integers(0, runs + 1, 3)
        c = np.minimum(runs, b + rng.integers(0, runs + 1, 3))
        suite = tuple((int(x), int(y)) for x, y in zip(b, c, strict=True))
        passes += decide(Design(pairs=_pairs(suite, runs), gate="improved")).passed
    return {"suites": sims, "improved_passes": passes}


def sample_dominance(
    tasks: int, sims: int, rng: np.random.Generator, method: Method = "webb"
) -> dict[str, int]:
    """Random suites with a +30-point change: passes, one-step violations, incoherent tests.

    ``method``: ``webb`` (the gate) or ``cr2-t``, the studentized t on the same suites (a
    t statistic is not monotone in the data either: a pass above the mean can widen the
    standard error more than it moves the mean). ``disagreements``: verdicts that contradict
    the printed p-value (0 by construction).
    """
    runs = 5
    passes = bumped = violations = incoherent = disagreements = 0

    def improved(suite: tuple[tuple[int, int], ...]) -> bool:
        nonlocal disagreements
        d = decide(Design(pairs=_pairs(suite, runs), gate="improved", method=method))
        disagreements += (d.lower > 0) != (d.p_increase <= ALPHA)
        return d.passed

    for _ in range(sims):
        rate = rng.beta(0.6, 0.6, size=tasks)
        b = rng.binomial(runs, rate)
        c = rng.binomial(runs, np.clip(rate + 0.3, 0, 1))
        suite = tuple((int(x), int(y)) for x, y in zip(b, c, strict=True))
        d = decide(Design(pairs=_pairs(suite, runs), gate="improved", method=method))
        incoherent += not d.coherent
        disagreements += (d.lower > 0) != (d.p_increase <= ALPHA)
        if not d.passed:
            continue
        passes += 1
        for better in _up(suite, runs):
            bumped += 1
            violations += not improved(better)
    return {
        "suites": sims,
        "improved_passes": passes,
        "bumped": bumped,
        "violations": violations,
        "incoherent": incoherent,
        "disagreements": disagreements,
    }


def main() -> None:
    """Measure and print every figure, then one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=150, help="suites per sampled cell")
    parser.add_argument("--seed", type=int, default=48)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    figures = {
        "enumerate-3x5": enumerate_3x5(),
        "sample-3x10": sample_3x10(args.sims * 4, rng),
    }
    # Each sampled cell from its own seed: the same suites for the gate and the t.
    methods: tuple[Method, ...] = ("webb", "cr2-t")
    for tasks in (4, 5, 6, 8):
        for method in methods:
            cell_rng = np.random.default_rng([args.seed, tasks])
            name = f"sample-{tasks}x5" + ("" if method == "webb" else f"-{method}")
            figures[name] = sample_dominance(tasks, args.sims, cell_rng, method)
    for name, cell in figures.items():
        print(name + ": " + ", ".join(f"{k} {v}" for k, v in cell.items()))
    e = figures["enumerate-3x5"]
    print(
        f"3x5: disagreements {e['disagreements']}/{2 * e['suites']}, "
        f"dominance violations {e['dominance_violations']}; "
        f"{time.perf_counter() - start:.0f} s"
    )
    print(json.dumps({"sims": args.sims, "seed": args.seed, **figures}, sort_keys=True))


if __name__ == "__main__":
    main()
