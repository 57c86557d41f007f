"""How many task files and lines the built-in tasks take, and how alike the files are.

Per world: task files, lines, tasks declared, and each file's line similarity to its nearest
sibling in the same folder (difflib's ratio over lines), averaged and at its highest; now and
at a reference commit (default: the commit before near-copies became files of variants).

    python bench/task_files.py                 # against the commit before the variants
    python bench/task_files.py --ref COMMIT    # against another commit

Lines are not time: no repetitions needed. Last line: one JSON object with every figure.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from harness_world.grading.task import load_tasks

REPO = Path(__file__).resolve().parents[1]
REFERENCE = sys.argv[sys.argv.index("--ref") + 1] if "--ref" in sys.argv else "2086b08"


def _similarity(a: list[str], b: list[str]) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def measure(root: Path) -> dict[str, dict[str, float]]:
    """Per world folder under ``root``: files, lines, tasks, nearest-sibling similarity."""
    out: dict[str, dict[str, float]] = {}
    for world in sorted(p for p in root.iterdir() if p.is_dir()):
        texts = [p.read_text().splitlines() for p in sorted(world.glob("*.toml"))]
        nearest = [
            max((_similarity(a, b) for j, b in enumerate(texts) if j != i), default=0.0)
            for i, a in enumerate(texts)
        ]
        out[world.name] = {
            "files": len(texts),
            "lines": sum(len(t) for t in texts),
            "tasks": len(load_tasks(folder=world)),
            "nearest_mean": round(sum(nearest) / max(len(nearest), 1), 4),
            "nearest_max": round(max(nearest, default=0.0), 4),
        }
    return out


def at_commit(ref: str, into: Path) -> Path:
    """The ``tasks/`` folder of commit ``ref``, written under ``into``."""
    names = subprocess.run(
        ["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", ref, "tasks"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in names:
        blob = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{ref}:{name}"], capture_output=True, check=True
        ).stdout
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        (into / name).write_bytes(blob)
    return into / "tasks"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        figures = {
            "before": measure(at_commit(REFERENCE, Path(tmp))),
            "now": measure(REPO / "tasks"),
        }
    print(f"{'world':<10} {'':>6} {'files':>6} {'lines':>6} {'tasks':>6} {'nearest':>8} {'max':>6}")
    for when in ("before", "now"):
        for world, row in figures[when].items():
            print(
                f"{world:<10} {when:>6} {row['files']:>6} {row['lines']:>6} {row['tasks']:>6} "
                f"{row['nearest_mean']:>8.1%} {row['nearest_max']:>6.1%}"
            )
    for when in ("before", "now"):
        rows = figures[when].values()
        print(
            f"{'all':<10} {when:>6} {sum(r['files'] for r in rows):>6} "
            f"{sum(r['lines'] for r in rows):>6} {sum(r['tasks'] for r in rows):>6}"
        )
    print(json.dumps({"reference": REFERENCE, **figures}))


if __name__ == "__main__":
    main()
