"""What one `stats.decide` costs: null values tested and CPU time, beside one p-value.

`decide` inverts the gate's bootstrap over a grid of 401 null values and refines each bound
between two of them; every `compare`, `report` headline and calibration simulation pays it.
The bench decides random paired suites (10, 20, 30 and 40 tasks x 5 runs, rates drawn
uniformly, the candidate's moved by a normal step), counts the null values the p-value curve
is evaluated at (a count: it does not wander with the machine's load), and times `decide`
beside `stats.p_values` at one null on the same suites, alternating, in CPU time.

    python bench/decide.py            # 40 suites a round, 3 rounds
    python bench/decide.py --quick    # 8 suites, 1 round

Last line: one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from unittest import mock

from harness_world import stats
from harness_world.stats import Design, decision


def suites(count: int, seed: int) -> list[Design]:
    """``count`` random ``improved`` designs of 10 to 40 tasks x 5 runs a side."""
    rng = random.Random(seed)
    designs = []
    for i in range(count):
        samples: dict[str, list[tuple[bool, bool]]] = {}
        for t in range(10 * (1 + i % 4)):
            p = rng.random()
            q = min(1.0, max(0.0, p + rng.gauss(0, 0.2)))
            samples[f"t{t:02d}"] = [(rng.random() < p, rng.random() < q) for _ in range(5)]
        designs.append(Design(pairs=stats.paired_samples(samples), gate="improved"))
    return designs


def nulls_per_decision(designs: list[Design]) -> float:
    """The mean number of null values `decide`'s p-value curve is evaluated at."""
    seen = 0
    real = decision._curve

    def counting(prepared: object, mu0s: object) -> object:
        nonlocal seen
        seen += len(mu0s)  # type: ignore[arg-type]
        return real(prepared, mu0s)  # type: ignore[arg-type]

    with mock.patch.object(decision, "_curve", counting):
        for d in designs:
            stats.decide(d)
    return seen / len(designs)


def cpu_seconds(work: Callable[[], object], repeats: int) -> float:
    """The CPU time of ``work`` over ``repeats`` calls."""
    start = time.process_time()
    for _ in range(repeats):
        work()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 suites, 1 round (CI)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the suites (default 1)")
    args = parser.parse_args(argv)
    count, rounds = (8, 1) if args.quick else (40, 3)
    designs = suites(count, args.seed)
    stats.decide(designs[0])  # imports numpy and scipy outside the timing
    full, one = 0.0, 0.0
    for _ in range(rounds):  # alternating, so that a change of load touches both
        full += cpu_seconds(lambda: [stats.decide(d) for d in designs], 1)
        one += cpu_seconds(lambda: [stats.p_values(d) for d in designs], 1)
    per_decision = full / (rounds * count)
    per_p_value = one / (rounds * count)
    nulls = nulls_per_decision(designs)
    print(f"{count} suites x {rounds} rounds, CPU time")
    print(f"decide:         {per_decision * 1e3:8.2f} ms, {nulls:.0f} null values tested")
    print(f"p at one null:  {per_p_value * 1e3:8.2f} ms")
    print(f"decide / p:     {per_decision / per_p_value:8.2f}")
    figures = {
        "suites": count,
        "rounds": rounds,
        "decide_ms": round(per_decision * 1e3, 3),
        "p_value_ms": round(per_p_value * 1e3, 3),
        "decide_over_p_value": round(per_decision / per_p_value, 2),
        "nulls_per_decision": round(nulls, 1),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
