"""τ²-bench's own code, loaded at run time from a checkout the user points to.

Nothing of τ²'s code or text is part of this package. `Tau2Source.load` imports the retail
domain from ``<checkout>/tau2`` (a full τ²-bench checkout, or the subset kept beside the test
data) without τ²'s package ``__init__`` (which pulls in LLM clients), so that:

* tool descriptions and parameter schemas shown to an agent in τ² observation mode are τ²'s
  own (`Tau2Source.tool_schemas`);
* the differential tests and the benchmark can run τ²'s tools and its grading path beside ours
  (`Tau2Source.environment`).

τ²'s modules need pydantic, loguru, python-dotenv, PyYAML, toml, addict and deepdiff (the
``tau2`` extra). τ² reads its data from ``$TAU2_DATA_DIR/tau2/domains/retail``; `load` builds
such a folder of links to the given data folder when asked to.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import attrs

from harness_world.errors import HarnessWorldError

__all__ = ["Tau2Source", "Tau2SourceError"]


class Tau2SourceError(HarnessWorldError, ValueError):
    """The τ² checkout cannot be used; the message names the path and what is missing."""


def _data_dir(data: Path) -> Path:
    """A folder laid out as τ² expects (``tau2/domains/retail/{db.json,policy.md}``)."""
    if (data / "tau2" / "domains" / "retail" / "db.json").is_file():
        return data
    root = Path(tempfile.mkdtemp(prefix="hw-tau2-data-"))
    retail = root / "tau2" / "domains" / "retail"
    retail.mkdir(parents=True)
    for name in ("db.json", "policy.md"):
        if (data / name).is_file():
            (retail / name).symlink_to((data / name).resolve())
    if not (retail / "policy.md").exists():
        (retail / "policy.md").write_text("", encoding="utf-8")
    return root


@attrs.define(slots=True, eq=False)
class Tau2Source:
    """τ²'s retail modules, imported from a checkout.

    Attributes:
        path: The checkout (the folder holding the ``tau2`` package).
        environment_module: ``tau2.domains.retail.environment``.
        data_model: ``tau2.domains.retail.data_model``.
        message: ``tau2.data_model.message``.
    """

    path: Path
    environment_module: Any
    data_model: Any
    message: Any

    @classmethod
    def load(cls, path: str | Path, data: str | Path | None = None) -> Tau2Source:
        """Import τ²'s retail domain from ``path``; its data from ``data`` when given.

        A second load in one process returns modules of the first (Python imports once).

        Raises:
            Tau2SourceError: when ``path`` holds no τ² retail code or its imports fail.
        """
        root = Path(path)
        if not (root / "tau2" / "domains" / "retail" / "tools.py").is_file():
            raise Tau2SourceError(f"{root}: no τ² retail code (tau2/domains/retail/tools.py)")
        if data is not None and "TAU2_DATA_DIR" not in os.environ:
            os.environ["TAU2_DATA_DIR"] = str(_data_dir(Path(data)))
        if "tau2" not in sys.modules:
            package = types.ModuleType("tau2")
            package.__path__ = [str(root / "tau2")]
            sys.modules["tau2"] = package
        try:
            environment = importlib.import_module("tau2.domains.retail.environment")
            data_model = importlib.import_module("tau2.domains.retail.data_model")
            message = importlib.import_module("tau2.data_model.message")
            logger = importlib.import_module("loguru").logger
        except ImportError as exc:
            raise Tau2SourceError(
                f"{root}: cannot import τ²'s code ({exc}); install the tau2 extra"
            ) from None
        logger.disable("tau2")
        return cls(root, environment, data_model, message)

    def database(self, db_file: str | Path) -> Any:
        """τ²'s ``RetailDB`` loaded from a ``db.json``."""
        return self.data_model.RetailDB.load(str(db_file))

    def environment(self, db: Any) -> Any:
        """A τ² retail ``Environment`` over ``db`` (used as is: pass a copy to keep one)."""
        return self.environment_module.get_environment(db=db)

    def call(self, env: Any, tool: str, args: Any, call_id: str = "0") -> Any:
        """Run one tool call in a τ² environment; τ²'s ``ToolMessage`` (content, error)."""
        call = self.message.ToolCall(id=call_id, name=tool, arguments=args)
        return env.get_response(call)

    def tool_schemas(self, env: Any) -> list[dict[str, Any]]:
        """τ²'s own OpenAI tool schemas (names, descriptions, parameters), in its order."""
        return [tool.openai_schema for tool in env.get_tools()]
