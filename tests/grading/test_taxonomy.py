"""Every task and every criterion names a valid place in the seven-dimension taxonomy."""

from __future__ import annotations

from pathlib import Path

import pytest

import harness_world as hw
from harness_world.grading.checker import CRITERIA
from harness_world.grading.criteria import Check
from harness_world.grading.harness import HARNESS_CRITERIA, HARNESS_TAXA
from harness_world.grading.task import TaskError, load_task
from harness_world.grading.taxonomy import (
    DIMENSIONS,
    SUBDIMENSIONS,
    Taxon,
    taxon_problem,
    taxonomy_markdown,
)

DOCS = Path(__file__).parents[2] / "docs"
TASK = """id = "toy.x"
world = "toy"
family = "f"
instruction = "do nothing"
{extra}
"""


def test_the_seven_dimensions() -> None:
    assert DIMENSIONS == (
        "Context",
        "Execution",
        "Governance",
        "Lifecycle",
        "Observability",
        "Tools",
        "Verification",
    )
    assert set(SUBDIMENSIONS) == set(DIMENSIONS)


def test_every_built_in_task_has_a_valid_dimension() -> None:
    tasks = hw.load_tasks()
    assert len(tasks) > 90
    for task in tasks:
        assert task.dimension is not None, task.id
        assert task.subdimension, task.id
        assert not taxon_problem(task.dimension, task.subdimension), task.id


def test_a_benign_counterpart_shares_its_twins_dimension() -> None:
    by_id = {t.id: t for t in hw.load_tasks()}
    for task in by_id.values():
        if task.authority is not None:
            twin = by_id[task.authority.counterpart]
            assert task.taxon == twin.taxon, task.id


def test_every_registered_criterion_and_member_has_a_valid_taxon() -> None:
    for criterion in CRITERIA:
        assert not taxon_problem(criterion.taxon.dimension, criterion.taxon.subdimension)
        for taxon in criterion.member_taxa.values():
            assert not taxon_problem(taxon.dimension, taxon.subdimension)
    for name in HARNESS_CRITERIA:
        assert CRITERIA.taxon_of(name) == HARNESS_TAXA[name]
    assert CRITERIA.taxon_of("budget.context_tokens") == Taxon(
        dimension="Context", subdimension="bounding"
    )
    assert CRITERIA.taxon_of("budget.turns") == Taxon(dimension="Lifecycle", subdimension="budget")
    assert CRITERIA.taxon_of("receipts.refund_reported") == Taxon(
        dimension="Observability", subdimension="receipt"
    )
    assert CRITERIA.taxon_of("forbidden.duplicate_charge") == Taxon(
        dimension="Governance", subdimension="forbidden_effect"
    )
    assert CRITERIA.taxon_of("nobody.owns_this") is None


@pytest.mark.parametrize("world_name", ["helpdesk", "inventory", "payments"])
def test_every_verdict_a_task_can_give_has_a_taxon(world_name: str) -> None:
    for task in hw.load_tasks(world_name):
        ids = [c.name for c in CRITERIA.for_task(task)]
        ids += [f"forbidden.{f.id}" for f in task.forbid] + [
            f"receipts.{r.id}" for r in task.receipts
        ]
        for verdict_id in ids:
            assert CRITERIA.taxon_of(verdict_id) is not None, (task.id, verdict_id)


def test_an_unknown_dimension_names_the_file_the_task_and_the_values(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text(TASK.format(extra='dimension = "Safety"'))
    with pytest.raises(TaskError) as caught:
        load_task(path)
    message = str(caught.value)
    assert str(path) in message and "'toy.x'" in message and "'Safety'" in message
    assert ", ".join(DIMENSIONS) in message


def test_an_unknown_subdimension_lists_the_dimensions_own(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text(TASK.format(extra='dimension = "Tools"\nsubdimension = "reconcile"'))
    with pytest.raises(TaskError, match=r"'reconcile' is not one of Tools's: filter_limits, "):
        load_task(path)


def test_a_subdimension_needs_a_dimension(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text(TASK.format(extra='subdimension = "paging"'))
    with pytest.raises(TaskError, match="dimension None is not one of"):
        load_task(path)


def test_a_task_without_a_dimension_loads_and_labelling_keeps_its_hash(tmp_path: Path) -> None:
    bare, named = tmp_path / "a.toml", tmp_path / "b.toml"
    bare.write_text(TASK.format(extra=""))
    named.write_text(TASK.format(extra='dimension = "Tools"\nsubdimension = "paging"'))
    plain = load_task(bare)
    assert plain.dimension is None and plain.taxon is None
    assert load_task(named).taxon == Taxon(dimension="Tools", subdimension="paging")
    # a label decides no verdict: records made before it was given stay graded
    assert load_task(named).hash == plain.hash


def test_a_family_member_taxon_must_be_a_member() -> None:
    with pytest.raises(ValueError, match="member_taxa name no verdict"):
        Check(
            name="x.*",
            verdict="trace",
            layer="agent",
            definition="d",
            run=lambda ctx: [],
            taxon=Taxon(dimension="Tools"),
            member_taxa={"y.z": Taxon(dimension="Context")},
        )


def test_an_invalid_taxon_is_refused() -> None:
    with pytest.raises(ValueError, match="not one of Lifecycle's"):
        Taxon(dimension="Lifecycle", subdimension="paging")


def test_the_docs_tables_are_the_code() -> None:
    text = (DOCS / "task-format.md").read_text()
    assert taxonomy_markdown() in text
    assert CRITERIA.markdown() in text
