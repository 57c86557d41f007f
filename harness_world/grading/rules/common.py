"""What the criterion families share: a verdict that names what it found, cut to a few items."""

from __future__ import annotations

from typing import Any

from harness_world.grading.grade import CriterionKind, CriterionVerdict
from harness_world.grading.rows import MISSING
from harness_world.grading.taxonomy import Dimension, Taxon

__all__ = ["SHOWN", "findings", "fmt", "show", "taxon"]

SHOWN = 6
"""How many items a verdict's detail names before it says how many more."""


def show(items: list[str] | tuple[str, ...]) -> str:
    """The first `SHOWN` items, comma-separated, and how many more."""
    head = ", ".join(items[:SHOWN])
    return head + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def fmt(value: Any) -> str:
    """A field value for a verdict's detail (``absent`` for a missing field)."""
    return "absent" if value is MISSING else repr(value)


def findings(
    id_: str, kind: CriterionKind, found: list[str], prefix: str, clean: str
) -> CriterionVerdict:
    """A verdict that fails when anything was found, naming what (or saying ``clean``)."""
    return CriterionVerdict(
        id=id_,
        kind=kind,
        status="failed" if found else "passed",
        detail=f"{prefix}{show(found)}" if found else clean,
    )


def taxon(dimension: Dimension, subdimension: str = "") -> Taxon:
    """A taxon, briefly."""
    return Taxon(dimension=dimension, subdimension=subdimension)
