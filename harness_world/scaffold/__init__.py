"""A new world to edit: ``python -m harness_world new NAME [--out DIR]``.

`write_scaffold` lays out the usual project folders (``worlds/``, ``tasks/``, ``oracles/``,
``mutants/``) for a minimal world that runs at once: two entities (TypedDict rows), a read tool
and a write tool on the engine's toolkit, a committed seed, one task with required and allowed
effects and trace criteria, two oracle routes and two hand mutants. It passes the coverage
gate, the condition matrix and an oracle run as written; docs/world-authoring.md walks
through it.
"""

from harness_world.scaffold.writer import ScaffoldError, template_files, write_scaffold

__all__ = ["ScaffoldError", "template_files", "write_scaffold"]
