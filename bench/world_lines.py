"""How many lines a world's contract and tools take, now and at a reference commit.

"Contract and tools" is a world.py from its first line to the end of its ``CONTRACT =
Contract(...)`` statement: rows, parameter declarations, helpers and tools, without the seeded
generator and its data. Also counted: ``Params`` subclasses (one per tool before tools were
declared from type hints) and ``Field(`` declarations (rows declared a second time beside their
``Literal`` types). The scaffold's world (``python -m harness_world new``) is measured as
written.

    python bench/world_lines.py                 # against the commit before the rewrite
    python bench/world_lines.py --ref COMMIT    # against another commit

Lines are not time: no repetitions needed. Last line: one JSON object with every figure.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from harness_world.scaffold import write_scaffold

REPO = Path(__file__).resolve().parents[1]
WORLDS = ("helpdesk", "payments", "inventory", "tau2_retail")
REFERENCE = sys.argv[sys.argv.index("--ref") + 1] if "--ref" in sys.argv else "633287a"


def measure(source: str) -> dict[str, int]:
    """Lines up to the end of ``CONTRACT = ...``, Params subclasses, Field declarations."""
    tree = ast.parse(source)
    end = next(
        node.end_lineno or 0
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "CONTRACT" for t in node.targets)
    )
    params = sum(
        isinstance(node, ast.ClassDef)
        and any(isinstance(b, ast.Name) and b.id == "Params" for b in node.bases)
        for node in tree.body
    )
    fields = sum(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Field"
        for node in ast.walk(tree)
    )
    return {
        "contract_and_tools": end,
        "file": len(source.splitlines()),
        "params": params,
        "fields": fields,
    }


def at_reference(world: str) -> dict[str, int] | None:
    try:
        source = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{REFERENCE}:worlds/{world}/world.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None  # not a git checkout, or the commit is unknown: report only today's
    return measure(source)


def main() -> None:
    figures: dict[str, object] = {"reference": REFERENCE}
    print(
        f"{'world':<12} {'contract+tools':>15} {'at ' + REFERENCE:>12} {'ratio':>6} "
        f"{'Params':>7} {'Field(':>7}"
    )
    for world in WORLDS:
        now = measure((REPO / "worlds" / world / "world.py").read_text())
        before = at_reference(world)
        ratio = now["contract_and_tools"] / before["contract_and_tools"] if before else None
        shown = before["contract_and_tools"] if before else "-"
        print(
            f"{world:<12} {now['contract_and_tools']:>15} {shown:>12} "
            f"{ratio if ratio is None else round(ratio, 2)!s:>6} "
            f"{now['params']:>3}/{before['params'] if before else '-'!s:<3} "
            f"{now['fields']:>3}/{before['fields'] if before else '-'!s:<3}"
        )
        figures[world] = {"now": now, "before": before, "ratio": ratio}
    with tempfile.TemporaryDirectory() as folder:
        write_scaffold("library", folder)
        scaffold = measure((Path(folder) / "worlds" / "library" / "world.py").read_text())
    print(f"{'scaffold':<12} {scaffold['contract_and_tools']:>15} (2 entities, 2 tools)")
    figures["scaffold"] = scaffold
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
