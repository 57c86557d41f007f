"""How long the command line takes to start, side by side with a bare interpreter.

Conditions: every figure is the wall time of a fresh process (``sys.executable``, this tree
first on ``PYTHONPATH``), output thrown away. One round runs each command once, in turn, so
machine noise hits them alike; a figure is the median over the rounds. The claims are the
times of ``--help`` and ``tasks --help`` (at most 0.25 s each on the 2-core development
machine) and that importing the package loads no numpy or scipy; the ratios to
``python -c pass`` are what carries to another machine.

    python bench/startup.py                    # 21 rounds
    python bench/startup.py --quick            # 5 rounds
    python bench/startup.py --against ../old   # also another checkout, alternating (before/after)

Last line: one JSON object with every figure.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
QUICK = "--quick" in sys.argv
ROUNDS = 5 if QUICK else 21
LIMIT_S = 0.25

COMMANDS = {
    "python_pass": ["-c", "pass"],
    "import": ["-c", "import harness_world"],
    "help": ["-m", "harness_world", "--help"],
    "tasks_help": ["-m", "harness_world", "tasks", "--help"],
}

# Run in a fresh interpreter: what one of the commands above leaves in sys.modules.
_LOADED = """
import json, runpy, sys
bare = set(sys.modules)
argv = sys.argv[1:]
if argv:
    sys.argv = ["harness_world", *argv]
    try:
        runpy.run_module("harness_world", run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
else:
    import harness_world
new = [m for m in sys.modules if m not in bare]
tops = {m.split(".")[0] for m in sys.modules}
print(json.dumps({
    "modules": len(new),
    "package_modules": sum(m.split(".")[0] == "harness_world" for m in new),
    "heavy": sorted(tops & {"numpy", "scipy", "matplotlib", "openai", "anthropic", "mcp",
                            "inspect_ai", "ray", "rich", "pydantic", "httpx"}),
}))
"""


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def _time(tree: Path, args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, *args],
        cwd=tree,
        env=_env(tree),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - start


def loaded(tree: Path, *argv: str) -> dict[str, object]:
    """What ``import harness_world`` (no argv) or the command ``argv`` loads."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv],
        cwd=tree,
        env=_env(tree),
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def measure(trees: dict[str, Path]) -> dict[str, float]:
    """Median wall time per (tree, command), every command of every tree once per round."""
    samples: dict[str, list[float]] = {}
    for tree in trees.values():  # warm the file cache and the bytecode of both trees
        for args in COMMANDS.values():
            _time(tree, args)
    for _ in range(ROUNDS):
        for label, tree in trees.items():
            for name, args in COMMANDS.items():
                samples.setdefault(f"{label}{name}_s", []).append(_time(tree, args))
    return {key: round(statistics.median(values), 4) for key, values in samples.items()}


def main() -> None:
    trees = {"": HERE}
    if "--against" in sys.argv:
        trees["before_"] = Path(sys.argv[sys.argv.index("--against") + 1]).resolve()
    figures: dict[str, object] = {"rounds": ROUNDS, "load_average": round(os.getloadavg()[0], 2)}
    times = measure(trees)
    figures.update(times)
    for label, tree in trees.items():
        base = times[f"{label}python_pass_s"]
        for name in ("import", "help", "tasks_help"):
            figures[f"{label}{name}_over_python"] = round(times[f"{label}{name}_s"] / base, 2)
        on_import = loaded(tree)
        figures[f"{label}modules_on_import"] = on_import["package_modules"]
        figures[f"{label}all_modules_on_import"] = on_import["modules"]
        figures[f"{label}numpy_on_import"] = "numpy" in on_import["heavy"]  # type: ignore[operator]
        for name, argv in (("help", ("--help",)), ("tasks_help", ("tasks", "--help"))):
            on_command = loaded(tree, *argv)
            figures[f"{label}modules_on_{name}"] = on_command["package_modules"]
            figures[f"{label}heavy_on_{name}"] = on_command["heavy"]
        print(
            f"{tree}: python -c pass {base:.3f} s; import harness_world "
            f"{times[f'{label}import_s']:.3f} s (x{figures[f'{label}import_over_python']}, "
            f"{on_import['package_modules']} package modules, {on_import['modules']} in all); "
            f"--help {times[f'{label}help_s']:.3f} s (x{figures[f'{label}help_over_python']}); "
            f"tasks --help {times[f'{label}tasks_help_s']:.3f} s "
            f"(x{figures[f'{label}tasks_help_over_python']}); heavy libraries on import "
            f"{on_import['heavy'] or 'none'}, on --help "
            f"{figures[f'{label}heavy_on_help'] or 'none'}"
        )
    if "before_" in trees:
        for name in ("import", "help", "tasks_help"):
            figures[f"{name}_speedup"] = round(times[f"before_{name}_s"] / times[f"{name}_s"], 2)
        print(
            "before / after: "
            + ", ".join(f"{n} x{figures[f'{n}_speedup']}" for n in ("import", "help", "tasks_help"))
        )
    worst = max(times["help_s"], times["tasks_help_s"])
    figures["claim_max_s"] = LIMIT_S
    figures["claim_holds"] = worst <= LIMIT_S and not figures["numpy_on_import"]
    print(f"slowest of --help and tasks --help {worst:.3f} s (claim: <= {LIMIT_S} s)")
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
